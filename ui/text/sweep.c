/* ui/text/sweep.c - the sweep screen's words for the sweep's results; see sweep.h. */
#include "sweep.h"

#include <stdio.h>
#include <string.h>

#include "explain_text.h"
#include "format.h"
#include "layout.h"

int ui_sweep_gpu_crossover(const nn_sweep *sw, int c)
{
    int g = nn_sweep_gpu_index(sw, NN_WAY_GRAPH);
    if (c < 0 || g < 0)
        return -2;
    return nn_sweep_crossover(sw, c, g);
}

/* Two letters of a way for a column: "fw", "ea", "gr" */
static const char *const way_letters[NN_GPU_WAYS] = { "fw", "ea", "gr" };

/* More than one device of this name: the columns need their ways. */
static int name_shared(const nn_sweep *sw, int d)
{
    for (int e = 0; e < sw->n_devices; e++)
        if (e != d && !strcmp(sw->device[e], sw->device[d]))
            return 1;
    return 0;
}

void ui_sweep_column_name(const nn_sweep *sw, int d, char *buf, size_t len)
{
    const char *star = sw->predicted[d] ? "*" : "";
    if (!name_shared(sw, d) && !sw->predicted[d] && !sw->external[d])
        snprintf(buf, len, "%s", sw->device[d]);   /* one way on it: "cpu", "gpu" */
    else if (sw->way[d] == NN_WAY_EAGER && !nn_sweep_device_is_gpu(sw, d))
        snprintf(buf, len, "%s", sw->device[d]);   /* a CPU's own step beside its framework way */
    else
        snprintf(buf, len, "%s %s%s", sw->device[d], way_letters[sw->way[d]], star);
}

/* Appends ", " or the start, then text; n is what buf holds so far. */
static size_t note_part(char *buf, size_t len, size_t n, const char *first, const char *text)
{
    if (n >= len)
        return n;
    int m = snprintf(buf + n, len - n, "%s%s", n ? "; " : first, text);
    return m < 0 ? len : n + (size_t)m;
}

void ui_sweep_predicted_note(const nn_sweep *sw, char *buf, size_t len)
{
    char part[NN_NAME_LEN + 64];
    int profile = 0, cpu = 0, gpu = 0, ext = -1;
    size_t n = 0;
    for (int d = 0; d < sw->n_devices; d++) {
        if (sw->external[d] && ext < 0)
            ext = d;
        if (sw->predicted[d])
            *(sw->cal[d].profile ? &profile : nn_sweep_device_is_gpu(sw, d) ? &gpu : &cpu) = 1;
    }
    buf[0] = '\0';
    if (profile) {
        snprintf(part, sizeof part, "* predicted for %s (a GPU profile), not measured: no GPU here", sw->prof.name);
        n = note_part(buf, len, n, "", part);
    }
    if (cpu)
        n = note_part(buf, len, n, "", "cpu fw* predicted from this CPU's calibration and a framework's fitted costs");
    if (gpu)
        n = note_part(buf, len, n, "", "gpu fw* predicted from this GPU's calibration");
    if (ext >= 0) {
        snprintf(part, sizeof part, "fw without *: measured with %s", sw->measured_with[ext]);
        n = note_part(buf, len, n, "", part);
    }
}

/* "nnlab: gpu gr* is faster at every batch swept" for each matching pair,
 * in the CLI's words (nn_sweep_crossover_words), joined by "; " */
static void pair_sentences(const nn_sweep *sw, char *buf, size_t len)
{
    nn_sweep_pair pairs[2 * NN_SWEEP_MAX_DEVICES];
    int n = nn_sweep_pairs(sw, pairs, 2 * NN_SWEEP_MAX_DEVICES);
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < n && used < len; k++) {
        char who[32], base[32], words[160];
        int m;
        ui_sweep_column_name(sw, pairs[k].challenger, who, sizeof who);
        ui_sweep_column_name(sw, pairs[k].base, base, sizeof base);
        nn_sweep_crossover_words(sw, &pairs[k], words, sizeof words);
        if (pairs[k].kind == NN_PAIR_OTHER)
            m = snprintf(buf + used, len - used, "%s%s against %s: %s", k ? "; " : "", who, base, words);
        else
            m = snprintf(buf + used, len - used, "%s%s: %s %s", k ? "; " : "", nn_pair_kind_name(pairs[k].kind),
                         who, words);
        used = m < 0 ? len : used + (size_t)m;
    }
}

int ui_sweep_crossover_text(const nn_sweep *sw, int c, char *buf, size_t len)
{
    int g = nn_sweep_gpu_index(sw, -1);
    if (g < 0 && c >= 0 && sw->n_devices < 2) {
        snprintf(buf, len, "no GPU swept: no crossover to mark");
        return UI_TS_DIM;
    }
    if (c < 0 && g >= 0) {
        snprintf(buf, len, "no CPU in this sweep");
        return UI_TS_DIM;
    }
    pair_sentences(sw, buf, len);
    if (!buf[0]) {
        snprintf(buf, len, "no GPU swept: no crossover to mark");
        return UI_TS_DIM;
    }
    return UI_TS_OK;
}

/* A column's rank in the table: what nnlab measured, then the framework
 * pair (the write-ups' lesson), then nnlab's graph and eager ways predicted. */
static int column_rank(const nn_sweep *sw, int d)
{
    if (!sw->predicted[d] && !sw->external[d])
        return 0;
    if (sw->way[d] == NN_WAY_FRAMEWORK)
        return 1;
    return sw->way[d] == NN_WAY_GRAPH ? 2 : 3;
}

int ui_sweep_column_order(const nn_sweep *sw, int *order)
{
    int n = 0;
    for (int rank = 0; rank < 4; rank++)
        for (int d = 0; d < sw->n_devices; d++)
            if (column_rank(sw, d) == rank)
                order[n++] = d;
    return n;
}

void ui_sweep_cell_text(const nn_sweep *sw, int d, int i, int cell, char *buf, size_t len)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    char v[16];
    const char *regime = "";
    switch (p->state) {
    case NN_POINT_DONE: ui_fmt_si(p->rate, v, sizeof v); break;
    case NN_POINT_RUNNING: snprintf(v, sizeof v, "..."); break;
    case NN_POINT_FAILED: snprintf(v, sizeof v, "failed"); break;
    case NN_POINT_CANCELLED: snprintf(v, sizeof v, "cancel"); break;
    default: snprintf(v, sizeof v, "-");
    }
    if (cell < UI_SWEEP_CELL_NARROW) {  /* the value alone: the regime is in Explain */
        snprintf(buf, len, "%*s", cell, v);
        return;
    }
    if (p->state == NN_POINT_DONE && p->has_model)
        regime = ui_regime_short(p->regime, cell < UI_SWEEP_CELL_WIDE);
    snprintf(buf, len, "%7s %-*s", v, cell - 8, regime);
}

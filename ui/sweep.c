/* ui/sweep.c - the sweep screen's words for the sweep's results; see sweep.h. */
#include "sweep.h"

#include <stdio.h>

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

static const char *const column_names[NN_GPU_WAYS] = { "frmwk*", "eager*", "graph*" };

void ui_sweep_column_name(const nn_sweep *sw, int d, char *buf, size_t len)
{
    snprintf(buf, len, "%s", sw->predicted[d] ? column_names[sw->way[d]] : sw->device[d]);
}

void ui_sweep_predicted_note(const nn_sweep *sw, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int d = 0; d < sw->n_devices; d++)
        if (sw->predicted[d]) {
            snprintf(buf, len, "* predicted for %s (a GPU profile), not measured: no GPU here", sw->prof.name);
            return;
        }
}

/* "predicted for T4, the GPU overtakes the CPU: graph* at batch 1, eager*
 * at 1, frmwk* at 4" (never, where it does not) */
static int predicted_crossovers(const nn_sweep *sw, int c, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "predicted for %s, the GPU overtakes the CPU:", sw->prof.name);
    int any = 0;
    for (int d = 0; d < sw->n_devices && n < len; d++) {
        if (!sw->predicted[d])
            continue;
        int x = nn_sweep_crossover(sw, c, d);
        char at[32];
        if (x >= 0)
            snprintf(at, sizeof at, "at batch %d", sw->batch[x]);
        else
            snprintf(at, sizeof at, "never");
        n += (size_t)snprintf(buf + n, len - n, "%s %s %s", any ? "," : "", column_names[sw->way[d]], at);
        any = 1;
    }
    return UI_TS_OK;
}

int ui_sweep_crossover_text(const nn_sweep *sw, int c, char *buf, size_t len)
{
    int x = ui_sweep_gpu_crossover(sw, c), g = nn_sweep_gpu_index(sw, -1);
    if (g >= 0 && sw->predicted[g] && c >= 0)
        return predicted_crossovers(sw, c, buf, len);
    if (x == -2 && g < 0) {
        snprintf(buf, len, "no GPU swept: no crossover to mark");
        return UI_TS_DIM;
    }
    if (x == -2)
        snprintf(buf, len, "no CPU in this sweep");
    else if (x < 0)
        snprintf(buf, len, "the GPU does not overtake the CPU here");
    else if (x == 0)
        snprintf(buf, len, "the GPU is faster at every batch size");
    else
        snprintf(buf, len, "the GPU overtakes the CPU at batch %d", sw->batch[x]);
    return x == -2 ? UI_TS_DIM : UI_TS_OK;
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

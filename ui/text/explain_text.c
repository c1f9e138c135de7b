/* ui/text/explain_text.c - the Explain panel's content; see explain_text.h. */
#include "explain_text.h"
#include "format.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *ui_regime_short(nn_regime r, int one_letter)
{
    static const char *const names[3] = { "ovh", "mem", "cmp" }, *const letters[3] = { "o", "m", "c" };
    if ((unsigned)r >= 3)
        return "?";
    return one_letter ? letters[r] : names[r];
}

/* ---- lines ------------------------------------------------------------------------ */

int ui_text_addf(ui_text *t, int style, const char *fmt, ...)
{
    va_list ap;
    if (t->n >= UI_TEXT_ROWS)
        return 0;
    va_start(ap, fmt);
    vsnprintf(t->line[t->n], UI_TEXT_COLS, fmt, ap);
    va_end(ap);
    t->style[t->n++] = (unsigned char)style;
    return 1;
}

int ui_text_wrap(ui_text *t, int style, int width, int max_rows, const char *text)
{
    int rows = 0;
    const char *p = text;
    if (width >= UI_TEXT_COLS)
        width = UI_TEXT_COLS - 1;
    while (*p && rows < max_rows && t->n < UI_TEXT_ROWS && width > 0) {
        const char *next;
        int cut = ui_wrap_next(p, width, &next);
        if (rows == max_rows - 1 && *next && width > 3)
            ui_text_addf(t, style, "%.*s...", cut < width - 3 ? cut : width - 3, p);
        else
            ui_text_addf(t, style, "%.*s", cut, p);
        rows++;
        p = next;
    }
    return rows;
}

int ui_text_rows(int width, const char *text)
{
    int rows = 0;
    const char *p = text;
    while (*p && width > 0) {
        (void)ui_wrap_next(p, width, &p);
        rows++;
    }
    return rows;
}

/* Microseconds as the panel prints them: one decimal below 10. */
static const char *us_text(double us, char *buf, size_t len)
{
    snprintf(buf, len, fabs(us) < 9.95 ? "%.1f" : "%.0f", us);
    return buf;
}

void ui_fmt_phase_list(const nn_step_measure *m, char *buf, size_t len)
{
    static const char *const names[NN_STEP_PARTS] = { "copy", "fwd", "bwd", "opt", "sync", "allred",
                                                          "graph" };
    size_t n = 0;
    char v[32];
    buf[0] = '\0';
    for (int p = 0; p < NN_STEP_PARTS && n < len && m->timed_steps > 0; p++)
        if (m->part_valid & (1u << p))
            n += (size_t)snprintf(buf + n, len - n, "%s%s %s", n ? "  " : "", names[p],
                                  us_text(m->part_us[p], v, sizeof v));
}

/* The measured line: the step, how far it is from the model, and which
 * statistic it is (the parts below are the same one). */
static void measured_text(const nn_step_measure *m, double predicted_us, char *buf, size_t len)
{
    char a[32];
    if (!m || m->timed_steps <= 0)
        snprintf(buf, len, "measured  - (no step timed yet)");
    else if (predicted_us > 0)
        snprintf(buf, len, "measured  %s us/step (%.1fx the model), %s of %ld", us_text(m->step_us, a, sizeof a),
                 m->step_us / predicted_us, NN_STEP_STAT, m->timed_steps);
    else
        snprintf(buf, len, "measured  %s us/step, %s of %ld", us_text(m->step_us, a, sizeof a), NN_STEP_STAT,
                 m->timed_steps);
}

static int format_no_cal(const nn_explainer *x, const char *head, const nn_step_measure *m, int width,
                         int max_rows, ui_text *out)
{
    char why[NN_ERR_LEN + 32], measured[96], ph[200] = "  ";
    int timed = m && m->timed_steps > 0;
    snprintf(why, sizeof why, "no calibration: %s", x ? x->no_cal_why : "none measured");
    if (timed)
        ui_fmt_phase_list(m, ph + 2, sizeof ph - 2);
    measured_text(m, 0, measured, sizeof measured);
    int m_rows = ui_text_rows(width, measured), p_rows = ph[2] ? ui_text_rows(width, ph) : 0;
    ui_text_wrap(out, UI_TS_BOLD, width, 1, head);
    /* the reason first (at least a row), then the measurement, the phases last */
    int left = max_rows - out->n;
    int why_rows = left - m_rows - p_rows >= 1 ? left - m_rows - p_rows : left - m_rows >= 1 ? left - m_rows : left;
    ui_text_wrap(out, UI_TS_ERROR, width, why_rows, why);
    ui_text_wrap(out, timed ? UI_TS_NORMAL : UI_TS_DIM, width, max_rows - out->n, measured);
    if (p_rows && max_rows - out->n >= p_rows)
        ui_text_wrap(out, UI_TS_DIM, width, p_rows, ph);
    return out->n;
}

/* The rows of the model's panel: the head, the prediction and the
 * measurement always; why and advice at least a row each; the detail rows
 * while there is room: the split, the context's rows (the ways, the
 * write-up, the profile's check, the calibration) and the phases before a
 * full why and advice, the operation count and the work's split after
 * them. Every row is wrapped to the width, so a detail costs the rows it
 * wraps to. */
enum {
    R_HEAD, R_PREDICTED, R_SPLIT, R_OPS, R_WORK, R_MEASURED, R_PHASES, R_PROFILE, R_WAYS, R_WRITEUP, R_CAL, R_CONV,
    R_WHY, R_ADVICE, R_MODEL_WHY, N_ROWS
};

typedef struct panel_item {
    char text[1280];             /* the longest: why, the measured parts before the model's 640 */
    int style, rows, given;
} panel_item;

static const ui_explain_context no_context;

/* " (predicted for T4)" for a predicted point, else "" */
static void predicted_tag(const ui_explain_context *c, const char *before, char *buf, size_t len)
{
    if (c->predicted_for)
        snprintf(buf, len, "%s%s", before, c->predicted_for);
    else
        buf[0] = '\0';
}

/* The convolution algorithms the device chose, each as Explain words it
 * (nn_conv_algorithm_text), one after the other. */
static void conv_item(const ui_explain_context *c, char *buf, size_t len)
{
    char line[256];
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->n_conv && at + 1 < len; i++) {
        nn_conv_algorithm_text(&c->conv[i], line, sizeof line);
        int w = snprintf(buf + at, len - at, "%s%s", i ? "; " : "  ", line);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

static void fill_context_items(const ui_explain_context *c, const nn_step_measure *m, panel_item *it)
{
    char a[32], b[32], d[32], line[320];
    const nn_writeup *w = &c->writeup;
    for (int k = R_PROFILE; k <= R_CONV; k++)
        it[k].text[0] = '\0';
    if (c->profile_us > 0 && m && m->timed_steps > 0)
        snprintf(it[R_PROFILE].text, sizeof it[0].text, "  %s predicts %s us/step: %.0f%% %s the measured",
                 c->profile_name, us_text(c->profile_us, a, sizeof a),
                 fabs(100.0 * (c->profile_us - m->step_us) / m->step_us), c->profile_us < m->step_us ? "under" : "over");
    if (c->has_ways)
        snprintf(it[R_WAYS].text, sizeof it[0].text, "  %s: framework %s, nnlab eager %s, graph %s us/step",
                 c->profile_name, us_text(c->way_us[NN_WAY_FRAMEWORK], a, sizeof a),
                 us_text(c->way_us[NN_WAY_EAGER], b, sizeof b), us_text(c->way_us[NN_WAY_GRAPH], d, sizeof d));
    if (c->has_writeup)
        nn_writeup_text(w, line, sizeof line);
    if (c->has_writeup && c->profile_name && w->way_s[NN_WAY_GRAPH] > 0)
        snprintf(it[R_WRITEUP].text, sizeof it[0].text, "write-up: %s; for its job %s predicts framework eager "
                 "%.1f s, nnlab graph %.1f s", line, c->profile_name, w->way_s[NN_WAY_FRAMEWORK],
                 w->way_s[NN_WAY_GRAPH]);
    else if (c->has_writeup)
        snprintf(it[R_WRITEUP].text, sizeof it[0].text, "write-up: %s", line);
    if (c->calibration)
        snprintf(it[R_CAL].text, sizeof it[0].text, "  calibration: %s", c->calibration);
    conv_item(c, it[R_CONV].text, sizeof it[0].text);
}

static void fill_items(const nn_explainer *x, const ui_explain_context *c, const char *head,
                       const nn_step_measure *m, panel_item *it)
{
    const nn_explanation *e = &x->e;
    char a[32], b[32], d[32], f[32], g[32], tag[NN_NAME_LEN + 24];
    int timed = m && m->timed_steps > 0;
    predicted_tag(c, " (predicted for ", tag, sizeof tag);
    snprintf(it[R_HEAD].text, sizeof it[0].text, "%s: %s%s%s", head, nn_regime_name(e->regime), tag, tag[0] ? ")" : "");
    predicted_tag(c, " for ", tag, sizeof tag);
    snprintf(it[R_PREDICTED].text, sizeof it[0].text, "predicted %s us/step%s", us_text(e->predicted_us, a, sizeof a),
             tag);
    snprintf(it[R_SPLIT].text, sizeof it[0].text, "  issue %s + copy %s + sync %s + calls %s + work %s",
             us_text(e->issue_us, a, sizeof a), us_text(e->copy_us, b, sizeof b), us_text(e->sync_us, g, sizeof g),
             us_text(e->fixed_us, f, sizeof f), us_text(e->work_us, d, sizeof d));
    snprintf(it[R_OPS].text, sizeof it[0].text, "  %d ops a step (%s)", e->ops,
             x->in.opt.launches_per_step > 0 ? "counted by the device" : "one per op, estimated");
    /* the arithmetic as why gives it: one FLOP time per panel */
    snprintf(it[R_WORK].text, sizeof it[0].text, "  work: FLOPs %s us, bytes %s us",
             us_text(e->sized_compute_us, a, sizeof a), us_text(e->memory_us, b, sizeof b));
    if (c->predicted_for)
        snprintf(it[R_MEASURED].text, sizeof it[0].text, "measured  nothing: no GPU here");
    else
        measured_text(m, e->predicted_us, it[R_MEASURED].text, sizeof it[0].text);
    it[R_PHASES].text[0] = '\0';
    if (timed) {
        snprintf(it[R_PHASES].text, sizeof it[0].text, "  ");
        ui_fmt_phase_list(m, it[R_PHASES].text + 2, sizeof it[0].text - 2);
        if (!it[R_PHASES].text[2])
            it[R_PHASES].text[0] = '\0';
    }
    fill_context_items(c, m, it);
    char part[sizeof it[0].text - 8];
    /* a step measured far from the model: what its parts show is the why,
     * the model's reading a detail after the advice */
    it[R_MODEL_WHY].text[0] = '\0';
    if (!c->predicted_for && nn_explain_measured_part(e, m, part, sizeof part)) {
        snprintf(it[R_WHY].text, sizeof it[0].text, "why: %s.", part);
        snprintf(it[R_MODEL_WHY].text, sizeof it[0].text, "the model's reading, not borne out: %s", e->why);
    } else
        snprintf(it[R_WHY].text, sizeof it[0].text, "why: %s", e->why);
    snprintf(it[R_ADVICE].text, sizeof it[0].text, "advice: %s", e->advice);
    static const int styles[N_ROWS] = { UI_TS_BOLD, UI_TS_NORMAL, UI_TS_DIM, UI_TS_DIM, UI_TS_DIM, UI_TS_NORMAL,
                                        UI_TS_DIM, UI_TS_NORMAL, UI_TS_NORMAL, UI_TS_NORMAL, UI_TS_DIM,
                                        UI_TS_DIM, UI_TS_NORMAL, UI_TS_OK, UI_TS_DIM };
    for (int k = 0; k < N_ROWS; k++)
        it[k].style = styles[k];
    if (!timed)
        it[R_MEASURED].style = UI_TS_DIM;
}

/* Decides it[k].given, the rows each item gets out of max_rows. */
static void give_rows(panel_item *it, int width, int max_rows)
{
    static const int details[] = { R_SPLIT, R_WAYS, R_WRITEUP, R_PROFILE, R_PHASES, R_CAL, R_OPS, R_WORK, R_CONV,
                                   R_MODEL_WHY };
    enum { N_DETAILS = sizeof details / sizeof details[0] };
    for (int k = 0; k < N_ROWS; k++) {
        it[k].rows = ui_text_rows(width, it[k].text);
        it[k].given = 0;
    }
    /* the head and the two figures take one row each (cut, not wrapped, when short) */
    it[R_HEAD].given = it[R_PREDICTED].given = it[R_MEASURED].given = 1;
    int left = max_rows - 3;
    int text_full = it[R_WHY].rows + it[R_ADVICE].rows;
    for (int i = 0; i < N_DETAILS; i++) {
        int k = details[i], need = k == R_OPS || k == R_WORK || k == R_CONV || k == R_MODEL_WHY ? text_full : 2;
        if (it[k].rows > 0 && left - it[k].rows >= need) {
            it[k].given = it[k].rows;
            left -= it[k].rows;
        }
    }
    /* the head and the figures wrap when a row is left over beyond why and advice */
    static const int figures[] = { R_HEAD, R_PREDICTED, R_MEASURED };
    for (int i = 0; i < 3; i++) {
        int k = figures[i];
        if (it[k].rows > 1 && left - (it[k].rows - 1) >= text_full) {
            left -= it[k].rows - 1;
            it[k].given = it[k].rows;
        }
    }
    /* advice keeps up to half the text rows, why takes what it needs of the
     * rest, and advice gets back what why leaves */
    int half = left / 2 > 1 ? left / 2 : 1;
    int adv = it[R_ADVICE].rows < half ? it[R_ADVICE].rows : half;
    it[R_WHY].given = it[R_WHY].rows < left - adv ? it[R_WHY].rows : left - adv;
    it[R_ADVICE].given = it[R_ADVICE].rows < left - it[R_WHY].given ? it[R_ADVICE].rows : left - it[R_WHY].given;
}

static void format_model(const nn_explainer *x, const ui_explain_context *c, const char *head,
                         const nn_step_measure *m, int width, int max_rows, panel_item *it, ui_text *out)
{
    fill_items(x, c, head, m, it);
    give_rows(it, width, max_rows);
    for (int k = 0; k < N_ROWS; k++)
        if (it[k].given > 0)
            ui_text_wrap(out, it[k].style, width, it[k].given, it[k].text);
}

/* Every row whole, the conclusion first: the head, the two figures, why
 * and advice, then the details in the order give_rows keeps them. For a
 * panel that scrolls: nothing is cut, and its first page says the most. */
static void format_all(const nn_explainer *x, const ui_explain_context *c, const char *head,
                       const nn_step_measure *m, int width, panel_item *it, ui_text *out)
{
    static const int order[] = { R_HEAD, R_PREDICTED, R_MEASURED, R_WHY, R_ADVICE, R_MODEL_WHY, R_SPLIT, R_PHASES,
                                 R_WAYS, R_WRITEUP, R_PROFILE, R_CAL, R_OPS, R_WORK, R_CONV };
    fill_items(x, c, head, m, it);
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        if (it[order[k]].text[0])
            ui_text_wrap(out, it[order[k]].style, width, UI_TEXT_ROWS, it[order[k]].text);
}

/* Too short for why: a row each for the head, the figures and the advice, cut. */
static void format_short(const nn_explainer *x, const ui_explain_context *c, const char *head,
                         const nn_step_measure *m, int max_rows, int width, panel_item *it, ui_text *out)
{
    static const int rows[4] = { R_HEAD, R_PREDICTED, R_MEASURED, R_ADVICE };
    fill_items(x, c, head, m, it);
    for (int k = 0; k < 4 && out->n < max_rows; k++)
        ui_text_wrap(out, it[rows[k]].style, width, 1, it[rows[k]].text);
}

int ui_explain_format(const nn_explainer *x, const char *device, int batch, const nn_step_measure *m,
                      int width, int max_rows, ui_text *out)
{
    return ui_explain_format_in(x, NULL, device, batch, m, width, max_rows, out);
}

int ui_explain_format_in(const nn_explainer *x, const ui_explain_context *ctx, const char *device, int batch,
                         const nn_step_measure *m, int width, int max_rows, ui_text *out)
{
    char head[96];
    panel_item it[N_ROWS];           /* 18 KB, once per call: the formatters fill it */
    const ui_explain_context *c = ctx ? ctx : &no_context;
    out->n = 0;
    if (max_rows > UI_TEXT_ROWS)
        max_rows = UI_TEXT_ROWS;
    if (max_rows < 1 || width < 1)
        return 0;
    snprintf(head, sizeof head, "%s, batch %d", c->label ? c->label : device, batch);
    if (!x || !x->has_cal)
        return format_no_cal(x, head, m, width, max_rows, out);
    if (!x->valid) {
        ui_text_addf(out, UI_TS_BOLD, "%s", head);
        if (max_rows > 1)
            ui_text_addf(out, UI_TS_DIM, "waiting for the job to start");
        return out->n;
    }
    if (max_rows >= UI_TEXT_ROWS)
        format_all(x, c, head, m, width, it, out);
    else if (max_rows < 5)
        format_short(x, c, head, m, max_rows, width, it, out);
    else
        format_model(x, c, head, m, width, max_rows, it, out);
    return out->n;
}

/* ui/panels/steps_view.c - the run screen's view of a job that takes
 * training steps (training and bench; nnlab/engine.h's NN_VIEW_STEPS): the
 * loss charts (run_chart.c), the validation table and a race's summary
 * beside them, the phases of a step under each job's bar, the training
 * title, keys and export. See run_view.h. */
#include "run_view.h"
#include "draw.h"
#include "panels/export_key.h"

#include <stdio.h>
#include <string.h>

#include "nnlab/divergence.h"
#include "nnlab/observe.h"
#include "race_view.h"
#include "text/format.h"

/* The table of a job's epochs: the last ones that fit, then the training loss. */
static int draw_validation(ui_lab *lab, const ui_run_job *j, ui_rect in, int y, int rows)
{
    int first = j->n_eps > rows - 3 ? j->n_eps - (rows - 3) : 0;
    const char *label = j->label[0] ? j->label : j->device;
    /* at 80 columns a race's box is 24 wide: "cpu nnlab  (synthetic data)" is 27 */
    const char *data = !j->snap.data_synthetic ? ""
                     : (int)(strlen(label) + 18) <= in.w ? "(synthetic data)" : "(synthetic)";
    ui_putf(y++, in.x, in.w, A_BOLD, "%s  %s", label, data);
    ui_putf(y++, in.x, in.w, ui_attr(lab, UI_DIM), "%3s %9s %8s", "ep", "val loss", "accuracy");
    for (int i = first; i < j->n_eps; i++) {
        const nn_epoch_result *e = &j->eps[i];
        char loss[24];               /* nan, inf and 1e+17 keep the column (nnlab/divergence.h) */
        nn_format_loss(e->val_loss, 9, loss, sizeof loss);
        if (e->has_accuracy)
            ui_putf(y++, in.x, in.w, A_NORMAL, "%3d %s %7.2f%%", e->epoch, loss, 100.0 * e->val_accuracy);
        else
            ui_putf(y++, in.x, in.w, A_NORMAL, "%3d %s %8s", e->epoch, loss, "-");
    }
    if (j->snap.n_loss_points > 0) {
        char loss[24];
        nn_format_loss(j->snap.last_loss, 9, loss, sizeof loss);
        ui_putf(y++, in.x, in.w, A_NORMAL, "train loss%s", loss);
    }
    if (j->snap.has_switches && j->snap.note[0])   /* why a switch asked for did not apply */
        y += ui_put_wrapped(y, in.x, in.w, 3, ui_attr(lab, UI_DIM), j->snap.note);
    return y;
}

/* "ep1  1.0218 64.1%", or where that is too wide (a race's panel at 80
 * columns, beside a long label) "ep1 1.0218 64%", or beside a longer one
 * ("cpu 2 ranks") "1.0218 64%": its figures, never cut. */
static void put_epoch_accuracy(const nn_epoch_result *e, const char *loss, int y, int x, int w)
{
    char line[64];
    const char *bare = loss + strspn(loss, " ");
    snprintf(line, sizeof line, "ep%d %s %.1f%%", e->epoch, loss, 100.0 * e->val_accuracy);
    if (ui_text_cols(line) > w)
        snprintf(line, sizeof line, "ep%d %s %.0f%%", e->epoch, bare, 100.0 * e->val_accuracy);
    if (ui_text_cols(line) > w)
        snprintf(line, sizeof line, "%s %.0f%%", bare, 100.0 * e->val_accuracy);
    ui_put(y, x, w, A_NORMAL, line);
}

/* Two rows when there is no room for the table: the last epoch and the training loss. */
static int draw_validation_short(ui_lab *lab, const ui_run_job *j, ui_rect in, int y)
{
    const nn_epoch_result *e = j->n_eps > 0 ? &j->eps[j->n_eps - 1] : NULL;
    char loss[24];
    nn_format_loss(e ? e->val_loss : 0.0, 7, loss, sizeof loss);
    const char *label = j->label[0] ? j->label : j->device;
    int lw = (int)strlen(label) + 1 > 8 ? (int)strlen(label) + 1 : 8;   /* "gpu eager" whole */
    ui_put(y, in.x, lw, A_BOLD, label);
    if (!e)
        ui_put(y, in.x + lw, in.w - lw, ui_attr(lab, UI_DIM), "no epoch yet");
    else if (e->has_accuracy)
        put_epoch_accuracy(e, loss, y, in.x + lw, in.w - lw);
    else
        ui_putf(y, in.x + lw, in.w - lw, A_NORMAL, "ep%d %s", e->epoch, loss);
    if (j->snap.n_loss_points > 0) {
        nn_format_loss(j->snap.last_loss, 7, loss, sizeof loss);
        ui_putf(y + 1, in.x + 8, in.w - 8, A_NORMAL, "train %s", loss);
    }
    return y + 2;
}

/* The side panel: each job's validation table, and a race's summary once it ends. */
static void steps_draw_side(ui_lab *lab, ui_dashboard_state *ds, ui_rect box)
{
    ui_rect in = ui_rect_inner(box);
    ui_run *r = &lab->run;
    const nn_race_ways *fw = ds->has_ways ? &ds->ways : NULL;
    int pr = ui_ranks_pred_rows(&ds->ranks_pred);   /* a race of ranks: the model's figure below */
    int rows = ui_race_summary_rows(lab, fw) + pr, ended = (r->n_jobs >= 2 || fw) && !ui_run_active(r);
    /* once a race has ended its summary comes first: where the panel has no
     * room for both (three jobs at 80x24), the validation rows give way (the
     * chart and the job rows still show each job's end), and where it has no
     * room for the whole summary, the compact one shows the pairs */
    int compact = ended && in.h < rows && in.h >= ui_race_summary_rows_compact(lab, fw) + pr;
    int summary = ended && in.h >= rows;
    int validation = !(summary || compact) || in.h >= rows + 4;
    int avail = in.h - (summary ? rows : 0), y = in.y;
    int per_job = avail / r->n_jobs;
    ui_box(lab, box, validation ? "Validation" : "Summary");
    for (int k = 0; validation && k < r->n_jobs; k++) {
        if (per_job >= 4)
            y = draw_validation(lab, &r->j[k], in, y, k + 1 < r->n_jobs ? per_job : in.y + avail - y);
        else
            y = draw_validation_short(lab, &r->j[k], in, y);
    }
    if (summary)
        ui_race_summary_draw(lab, fw, in, in.y + in.h - rows);   /* ui/panels/race_view.c */
    else if (compact)
        ui_race_summary_draw_compact(lab, fw, in, in.y);
    if (summary || compact)
        ui_ranks_pred_draw(lab, &ds->ranks_pred, in, in.y + in.h - pr);
}

/* The parts of a step as the bar shows them: those of the measured step
 * (nn_measure_step), which add up to the step they are set beside. */
static int parts_legend(const nn_step_measure *m, int wide, char *buf, size_t len)
{
    static const char *const names[NN_STEP_PARTS] = { "copy", "fwd", "bwd", "opt", "sync", "allred",
                                                          "graph" };
    int n = 0;
    buf[0] = '\0';
    for (int p = 0; p < NN_STEP_PARTS && (size_t)n < len; p++) {
        /* nn_step_part_label's "backward+adam", short */
        const char *name = p == NN_PHASE_BACKWARD && m->adam_fused_layers > 0 ? "bwd+adam" : names[p];
        if (m->part_valid & (1u << p))
            n += snprintf(buf + n, len - (size_t)n, wide ? " %s %.0f " : " %.1s %.0f", name, m->part_us[p]);
    }
    if ((size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, wide ? "= %.0f us/step, %s" : " = %.0f us %s", m->step_us,
                      NN_STEP_STAT);
    return (size_t)n < len ? n : (int)len - 1;
}

/* The row under a job's bar: the phases of its step, a bar and their times. */
static void steps_job_line(ui_lab *lab, const ui_run_job *j, int y, int x, int w)
{
    static const char letter[NN_STEP_PARTS] = { 'c', 'f', 'b', 'o', 's', 'a', 'g' };
    double us[NN_STEP_PARTS];
    int cols[NN_STEP_PARTS], at = x + 9;
    char legend[192];
    nn_step_measure m;
    nn_measure_step(&j->snap, &m);
    ui_put(y, x, 9, ui_attr(lab, UI_DIM), "  phases");
    if (m.timed_steps <= 0) {
        ui_put(y, at, w - 9, ui_attr(lab, UI_DIM), "no step timed yet");
        return;
    }
    for (int p = 0; p < NN_STEP_PARTS; p++)
        us[p] = m.part_valid & (1u << p) ? m.part_us[p] : 0.0;
    int n = parts_legend(&m, w >= 88, legend, sizeof legend);
    int bw = w - 9 - n;
    bw = bw > 50 ? 50 : bw < 10 ? 10 : bw;
    ui_phase_split(us, NN_STEP_PARTS, bw, cols);
    for (int p = 0; p < NN_STEP_PARTS; p++) {
        attr_t a = ui_attr(lab, (enum ui_role)(UI_PHASE0 + p));
        attron(a);
        for (int c = 0; c < cols[p]; c++)
            mvaddch(y, at++, (chtype)letter[p]);
        attroff(a);
    }
    ui_put(y, at, x + w - at, A_NORMAL, legend);
}

/* "nnlab - mnist-mlp-128 on cpu (2 threads), batch 32, loss every 50 steps" */
static void steps_title(ui_lab *lab, char *t, size_t len)
{
    const ui_run *r = &lab->run;
    const nn_job_config *c = &r->cfg;
    char data[NN_TEXT_LEN + 8] = "";
    const nn_snapshot *s = &r->j[0].snap;
    if (s->data_desc[0])
        snprintf(data, sizeof data, "  data: %s", s->data_desc);
    if (r->n_jobs >= 2)                /* race_view.c: each job by its device and way */
        ui_race_title(lab, t, len, data);
    else if (s->threads_now > 0)       /* a CPU: the threads taking part now (revised as it runs) */
        snprintf(t, len, "nnlab - %s on %s (%d thread%s), batch %d, loss every %ld steps%s",
                 c->preset.name, r->j[0].device, s->threads_now, s->threads_now == 1 ? "" : "s",
                 c->batch, c->log_every, data);
    else
        snprintf(t, len, "nnlab - %s on %s, batch %d, loss every %ld steps%s", c->preset.name,
                 r->j[0].device, c->batch, c->log_every, data);
}

static void steps_draw_main(ui_lab *lab, ui_dashboard_state *ds, ui_rect box)
{
    (void)box;                       /* the charts lay themselves out in lab->layout */
    ui_run_charts_draw(lab, ds);
}

static void steps_draw_explain(ui_lab *lab, ui_dashboard_state *ds, ui_rect box, int replaces)
{
    (void)box;
    (void)replaces;                  /* explain_panel.c finds its own place */
    ui_explain_draw_run(lab, ds);
}

static void steps_export(ui_lab *lab, ui_dashboard_state *ds)
{
    ui_export_run(lab, ds->has_ways ? &ds->ways : NULL);
}

static const char *steps_keys(int running)
{
    return running ? "p pause  c cancel  l log  s smooth  e explain  x export  Esc back  ? help  q quit"
                   : "finished: Enter/Esc back  l log  s smooth  e explain  x export  L lessons  ? help  q quit";
}

const ui_run_view ui_steps_view = {
    .title = steps_title,
    .draw_main = steps_draw_main,
    .draw_explain = steps_draw_explain,
    .draw_side = steps_draw_side,
    .job_line = steps_job_line,
    .keys = steps_keys,
    .export_run = steps_export,
};

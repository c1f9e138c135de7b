/* ui/panels/export_key.c - `x` on the run and the sweep screens: the run (its jobs'
 * figures, per-epoch history and loss points) or the sweep written as CSV,
 * JSON and an SVG of the chart by the library's writers (nnlab/export.h), the same the CLI's
 * --csv and --json use, to the export folder ($XDG_DATA_HOME/nnlab/exports),
 * and the two paths said on the status row. */
#include "panels/export_key.h"
#include "draw.h"
#include "lab_state.h"

#include <string.h>
#include <time.h>

#include "nnlab/export.h"
#include "nnlab/export_svg.h"
#include "race_view.h"

/* The run screen's run as the writers take it: each job's last copy, and
 * a race of ways' lanes (now: nnlab's measured where its jobs ended). */
static void run_export(const ui_lab *lab, const nn_race_ways *ways, nn_race_ways *now, nn_export_run *out)
{
    const ui_run *r = &lab->run;
    *out = (nn_export_run){ r->cfg.preset.name, r->n_jobs, r->sequential, { { 0 } }, NULL, 0 };
    if (ways) {
        ui_race_ways_now(r, ways, now);
        out->ways = now;
        out->ways_steps = r->j[0].snap.total_steps;
    }
    for (int k = 0; k < r->n_jobs && k < NN_EXPORT_MAX_JOBS; k++) {
        const ui_run_job *j = &r->j[k];
        if (!j->started)
            continue;                /* a later job of a sequential run, not run */
        out->job[k] = (nn_export_job){ &j->snap, j->pts, j->n_pts, j->eps, j->n_eps, j->threads,
                                        r->labelled ? j->label : NULL };
    }
}

/* STEM.svg beside STEM.csv: the chart on screen for a slide, the run's
 * earlier runs dimmed when `o` shows them (nnlab/export_svg.h). */
static int export_svg(const ui_lab *lab, const nn_export_run *run, const nn_sweep *sw, const char *csv,
                      char *err, size_t err_len)
{
    char svg[NN_PATH_LEN + 96];
    nn_svg_past past[UI_OVERLAY_MAX];
    size_t n = strlen(csv);
    int n_past = lab->past.shown ? ui_overlay_svg(&lab->past, lab->run.cfg.preset.name, past, UI_OVERLAY_MAX) : 0;
    double lr = lab->run.cfg.lr > 0 ? lab->run.cfg.lr : lab->run.cfg.preset.lr;
    snprintf(svg, sizeof svg, "%.*s.svg", (int)(n > 4 ? n - 4 : n), csv);
    return nn_export_svg_file(svg, run, lr, past, n_past, sw, err, err_len);
}

/* Writes the run or the sweep (the other NULL) and says where it went. */
static void export_files(ui_lab *lab, const nn_export_run *run, const nn_sweep *sw, int running)
{
    char dir[NN_PATH_LEN], csv[NN_PATH_LEN + 96], json[NN_PATH_LEN + 96], err[NN_ERR_LEN];
    if (nn_export_dir(dir, sizeof dir) != 0) {
        ui_set_message(lab, 1, "export: no folder (neither XDG_DATA_HOME nor HOME is set)");
        return;
    }
    if (nn_export_files(dir, run, sw, (long long)time(NULL), csv, json, sizeof csv, err, sizeof err) != 0) {
        ui_set_message(lab, 1, "export failed: %s", err);
        return;
    }
    if (export_svg(lab, run, sw, csv, err, sizeof err) != 0) {
        ui_set_message(lab, 1, "exported CSV and JSON, but the SVG failed: %s", err);
        return;
    }
    /* the paths in full, the one place the user learns where they went:
     * "exported DIR/STEM.{csv,json,svg}" */
    size_t n = strlen(csv);
    if (n > 4)
        csv[n - 4] = '\0';          /* ".csv" */
    ui_set_message(lab, 0, "exported %s.{csv,json,svg}%s", csv, running ? " (so far)" : "");
}

void ui_export_run(ui_lab *lab, const nn_race_ways *ways)
{
    nn_export_run run;
    nn_race_ways now;
    run_export(lab, ways, &now, &run);
    export_files(lab, &run, NULL, ui_run_active(&lab->run));
}

void ui_export_sweep(ui_lab *lab)
{
    export_files(lab, NULL, &lab->sweep, 0);
}

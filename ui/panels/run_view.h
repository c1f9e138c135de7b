/* ui/panels/run_view.h - how the run screen shows a job, one view per value
 * of nn_job_traits.view (nnlab/engine.h): the run screen
 * (ui/screens/dashboard.c) draws and keys through the view of its run and
 * never asks which kind of job it runs. A kind with a look of its own adds
 * its view's file here and one line in run_views.c. */
#ifndef NNLAB_UI_RUN_VIEW_H
#define NNLAB_UI_RUN_VIEW_H

#include "lab_state.h"
#include "screens/dashboard.h"

typedef struct ui_run_view {
    /* The title row ("nnlab - mnist-mlp-128 on cpu (2 threads), batch 32, ..."). */
    void (*title)(ui_lab *lab, char *buf, size_t len);
    /* The panels get the run screen's state from it (ds), never through
     * ui_dashboard_of: calls go from the screen to its views, one way. */
    /* The chart's place; also redrawn on the dirty bits main_dirty. */
    void (*draw_main)(ui_lab *lab, ui_dashboard_state *ds, ui_rect box);
    unsigned main_dirty;
    /* The Explain panel, beside the chart or in its place (replaces). */
    void (*draw_explain)(ui_lab *lab, ui_dashboard_state *ds, ui_rect box, int replaces);
    /* The side panel (validation, a race's summary; a Jacobian's methods). */
    void (*draw_side)(ui_lab *lab, ui_dashboard_state *ds, ui_rect box);
    /* A job's row: the status after its bar (NULL: the steps' own), and the
     * row under the bar (the phases of a step; a Jacobian's figures). */
    void (*job_status)(const nn_snapshot *s, char *buf, size_t len);
    void (*job_line)(ui_lab *lab, const ui_run_job *j, int y, int x, int w);
    /* The status row's keys, while the run runs and after. */
    const char *(*keys)(int running);
    /* A key the view takes before the screen's own: 1 when handled (NULL: none). */
    int (*key)(ui_lab *lab, int ch);
    /* `x`: the run's files, their paths said on the status row. */
    void (*export_run)(ui_lab *lab, ui_dashboard_state *ds);
} ui_run_view;

/* The view of the lab's run (its config's kind). */
const ui_run_view *ui_run_view_of(const ui_lab *lab);

/* ui/panels/run_chart.c: the training view's charts: the loss (by step, or
 * by seconds when two jobs run side by side) with epoch markers and, with
 * ds->smooth, smoothed, and the validation accuracy beside it. */
void ui_run_charts_draw(ui_lab *lab, ui_dashboard_state *ds);

/* The views, each in its own file. */
extern const ui_run_view ui_steps_view;      /* ui/panels/steps_view.c: training and bench */
extern const ui_run_view ui_jacobian_view;   /* ui/panels/jacobian_run.c */

#endif

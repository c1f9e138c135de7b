/* ui/screens/dashboard.h - the run screen's own state (ui/screens/dashboard.c and its
 * panels: ui/panels/run_chart.c, ui/panels/explain_panel.c, ui/panels/race_view.c,
 * ui/panels/jacobian_panel.c): one explanation per job, recomputed only when
 * its inputs change, what the Explain panel priced, the smoothing, and the
 * panels' buffers, too big for the stack (the state is on the heap, made
 * and freed with the lab). The run itself is the lab's (lab->run).
 * Only dashboard.c reads it through ui_dashboard_of: it hands its panels
 * what they need (tests/layering_calls.py counts a use elsewhere as a call
 * of dashboard.c, which would close a circle). */
#ifndef NNLAB_UI_DASHBOARD_H
#define NNLAB_UI_DASHBOARD_H

#include "lab_state.h"
#include "nnlab/race.h"
#include "nnlab/race_ways.h"
#include "panels/explain_panel.h"
#include "panels/jacobian_panel.h"
#include "panels/race_torch.h"
#include "panels/ranks_predicted.h"

typedef struct ui_dashboard_state {
    nn_explainer explain[UI_RUN_MAX_JOBS];
    ui_explain_job explain_job[UI_RUN_MAX_JOBS];   /* the Explain panel's priced parts, per job */
    int has_default;                 /* the settings' GPU profile, read at each run */
    nn_gpu_profile default_prof;
    ui_text explain_text, explain_all;   /* the panel's rows: a job's, and every job's */
    ui_jacobian_kept jacobian;       /* a Jacobian run's predicted sweep and rows */
    double past_x[UI_OVERLAY_MAX][UI_OVERLAY_POINTS];   /* the earlier runs' curves (`o`) */
    double past_y[UI_OVERLAY_MAX][UI_OVERLAY_POINTS];
    int smooth;                      /* `s`: the training loss drawn smoothed (ui_ema) */
    int has_ways;                    /* a race against a GPU: its four lanes, predicted */
    nn_race_ways ways;               /*   (ui/panels/race_view.c, ui_race_ways_init) */
    ui_race_torch torch;             /* its framework lanes measured with PyTorch after it */
    ui_ranks_pred ranks_pred;        /* a race of ranks: the model's figure beside it */
} ui_dashboard_state;

/* The run screen (ui/screens/screens.c lists it). */
extern const ui_screen_def ui_run_screen;
ui_action ui_dashboard_key(ui_lab *lab, int ch);
/* A race's four lanes as they stand (the predicted ones, those measured
 * here and PyTorch's in place): 1, or 0 when the run was no race of ways.
 * A lesson's race step reads its result from them. */
int ui_dashboard_ways(const ui_lab *lab, nn_race_ways *out);
void ui_draw_sysinfo(ui_lab *lab, ui_rect box);

static inline ui_dashboard_state *ui_dashboard_of(const ui_lab *lab)
{
    return lab->state[UI_RUN];
}

#endif

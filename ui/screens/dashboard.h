/* ui/screens/dashboard.h - the run screen's own state (ui/screens/dashboard.c and its
 * panels: ui/panels/run_chart.c, ui/panels/explain_panel.c): one explanation per job,
 * recomputed only when its inputs change, and the smoothing. The run itself
 * is the lab's (lab->run). */
#ifndef NNLAB_UI_DASHBOARD_H
#define NNLAB_UI_DASHBOARD_H

#include "ui.h"
#include "nnlab/race.h"

typedef struct ui_dashboard_state {
    nn_explainer explain[UI_RUN_MAX_JOBS];
    int smooth;                      /* `s`: the training loss drawn smoothed (ui_ema) */
    int has_framework;               /* a race with a GPU: the framework way predicted on top */
    nn_race_framework framework;     /*   (ui/panels/race_view.c, ui_race_framework_init) */
} ui_dashboard_state;

static inline ui_dashboard_state *ui_dashboard_of(const ui_lab *lab)
{
    return lab->state[UI_RUN];
}

#endif

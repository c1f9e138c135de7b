/* ui/screens/sweep_screen.h - the sweep screen's own state (ui/screens/sweep_screen.c and
 * ui/panels/explain_panel.c): the devices left out and the point explained. The
 * sweep itself is the lab's (lab->sweep). */
#ifndef NNLAB_UI_SWEEP_SCREEN_H
#define NNLAB_UI_SWEEP_SCREEN_H

#include "ui.h"

typedef struct ui_sweep_state {
    char skipped[NN_TEXT_LEN];       /* the devices left out of the sweep, and why */
    nn_explainer explain;
    int sel_dev, sel_batch;          /* the point explained */
    int follow;                      /* 1: the latest point measured, until a key moves it */
} ui_sweep_state;

static inline ui_sweep_state *ui_sweep_of(const ui_lab *lab)
{
    return lab->state[UI_SWEEP];
}

#endif

/* ui/screens/sweep_screen.h - the sweep screen's own state (ui/screens/sweep_screen.c and
 * ui/panels/explain_panel.c, which the screen hands it): the devices left out,
 * the point explained, the default profile and the panels' buffers. The
 * sweep itself is the lab's (lab->sweep). Only sweep_screen.c reads it
 * through ui_sweep_of (tests/layering_calls.py). */
#ifndef NNLAB_UI_SWEEP_SCREEN_H
#define NNLAB_UI_SWEEP_SCREEN_H

#include "lab_state.h"
#include "panels/explain_panel.h"

typedef struct ui_sweep_state {
    char skipped[NN_TEXT_LEN];       /* the devices left out of the sweep, and why */
    nn_explainer explain;
    int sel_dev, sel_batch;          /* the point explained */
    int follow;                      /* 1: the latest point measured, until a key moves it */
    /* the default GPU profile, read as a sweep starts: a GPU not here is
     * predicted with it, a GPU here compared with it, the framework ways priced */
    int has_profile;
    nn_gpu_profile profile;
    char profile_err[NN_ERR_LEN];    /*   !has_profile: why */
    double rate[NN_SWEEP_MAX_DEVICES][NN_SWEEP_MAX_BATCHES];   /* the chart's samples/s */
    ui_text explain_text;            /* the Explain panel's rows (ui/panels/explain_panel.c) */
    ui_explain_priced priced;        /*   and what it priced for the point explained */
} ui_sweep_state;

/* The sweep screen (ui/screens/screens.c lists it). */
extern const ui_screen_def ui_sweep_screen;
ui_action ui_sweep_screen_key(ui_lab *lab, int ch);

static inline ui_sweep_state *ui_sweep_of(const ui_lab *lab)
{
    return lab->state[UI_SWEEP];
}

#endif

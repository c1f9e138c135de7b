/* ui/panels/explain_panel.h - the Explain panel (ui/panels/explain_panel.c), on
 * the run screen and the sweep screen, and what it keeps between frames: the
 * screens hold these in their own state (ui/screens/dashboard.h,
 * ui/screens/sweep_screen.h) and hand it in, so that the panel prices a
 * model or reads a job's convolution list only when what they depend on
 * changed, and never calls back into a screen's file. */
#ifndef NNLAB_UI_EXPLAIN_PANEL_H
#define NNLAB_UI_EXPLAIN_PANEL_H

#include "lab_state.h"
#include "nnlab/profile.h"

/* The convolution algorithms the panel lists at most (LeNet has 6). */
#define UI_CONV_MAX 32

/* The priced parts of a panel, each kept with the inputs it was priced for:
 * the three ways for a profile at a batch, the write-up beside a job. */
typedef struct ui_explain_priced {
    char ways_key[NN_NAME_LEN * 2 + 16];   /* preset/batch/profile; "" none yet */
    double way_us[NN_GPU_WAYS];
    char writeup_key[NN_NAME_LEN * 2 + 48];   /* preset/profile/batch/epochs */
    int has_writeup;
    nn_writeup writeup;
} ui_explain_priced;

/* One job of a run: the profile its GPU is compared with and what was
 * priced for it, and its convolution algorithms as last read from the job
 * (read again when its step or state moves: the job takes the lock). */
typedef struct ui_explain_job {
    char matched_for[NN_ERR_LEN];    /* the GPU description prof was looked up for */
    int has_prof;                    /*   a profile of that GPU ships (nn_profile_for_device) */
    nn_gpu_profile prof;
    ui_explain_priced priced;
    char label[NN_NAME_LEN + 32];    /* "T4 (no profile of this GPU)" */
    int conv_read;                   /* conv holds the job's list at conv_step, conv_state */
    long conv_step;
    int conv_state;
    int n_conv;
    nn_conv_algorithm_info conv[UI_CONV_MAX];
} ui_explain_job;

/* `e`: shows the panel in the chart's place, or the chart again (narrow
 * terminals; a wide one shows both). */
void ui_explain_toggle(ui_lab *lab);

struct ui_dashboard_state;
struct ui_sweep_state;

/* ---- the run screen ---- */
/* Sets each job's explanation up from the lab's calibrations (the default
 * profile read the first time). */
void ui_explain_jobs_init(ui_lab *lab, struct ui_dashboard_state *ds);
/* Re-runs a job's model when its inputs changed; returns 1 when one did. */
int ui_explain_jobs_update(ui_lab *lab, struct ui_dashboard_state *ds);
void ui_explain_draw_run(ui_lab *lab, struct ui_dashboard_state *ds);

/* ---- the sweep screen ---- */
/* The sweep's selected point (the latest measured unless a key moved it). */
void ui_explain_draw_sweep(ui_lab *lab, struct ui_sweep_state *ss);
/* The sweep point explained (device, batch index); -1 when none yet. */
int ui_explain_sweep_selected(const ui_lab *lab, const struct ui_sweep_state *ss, int *d, int *i);
/* Up, Down, Left, Right move the explained sweep point; 1 when handled. */
int ui_explain_sweep_key(ui_lab *lab, struct ui_sweep_state *ss, int ch);

#endif

/* ui/panels/race_torch.h - a race's framework lanes measured with PyTorch in
 * the lab (the settings' "Measure PyTorch" switch): once the race's own jobs
 * have ended, PyTorch's step of the same preset and batch on the CPU, then
 * on the GPU where one is here and PyTorch sees it; each lane then says
 * "measured with PyTorch X.Y" and the verdicts rest on it, as `nnlab train
 * --race` does. The dashboard owns the state and calls these. */
#ifndef NNLAB_UI_RACE_TORCH_H
#define NNLAB_UI_RACE_TORCH_H

#include "lab_state.h"
#include "nnlab/race_ways.h"
#include "nnlab/torch_step.h"

typedef struct ui_race_torch {
    nn_torch_job *job;               /* the lane being measured, or NULL */
    int lane;                        /*   which (NN_LANE_FW_CPU, NN_LANE_FW_GPU) */
    int next;                        /* the lane to measure next; -1: none left */
    int armed;                       /* a race with PyTorch switched on, its jobs still running */
} ui_race_torch;

/* At a race's start: arms the measurement where the settings ask for it and
 * the race has the framework's lanes (has_ways). */
void ui_race_torch_arm(ui_lab *lab, ui_race_torch *t, int has_ways);
/* From the run screen's poll: starts a lane once the race's jobs have ended,
 * collects a finished one into w. 1 when w changed. */
int ui_race_torch_poll(ui_lab *lab, ui_race_torch *t, nn_race_ways *w);
/* 1 while PyTorch measures (the job rows say so). */
int ui_race_torch_busy(const ui_race_torch *t);
/* Leaving or stopping the run: cancels and waits (PyTorch ends within 0.1 s). */
void ui_race_torch_stop(ui_race_torch *t);

#endif

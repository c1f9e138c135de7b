/* ui/panels/race_predicted.h - no dead end without a GPU: a GPU that is not here
 * races the real CPU job as a GPU profile predicts it (nnlab/predicted.h:
 * the rule the CLI's --race-predicted follows), its row drawn under the
 * real jobs, every figure on it "predicted for NAME". The profile is the
 * settings' GPU profile field (the shipped profiles and the user's). */
#ifndef NNLAB_UI_RACE_PREDICTED_H
#define NNLAB_UI_RACE_PREDICTED_H

#include "lab_state.h"
#include "nnlab/profile.h"
#include "nnlab/race_ways.h"

/* 1 when device name is a GPU the survey says is not here, so that a run
 * asking for it races a predicted one instead of being refused. */
int ui_predicted_stands_in(const ui_lab *lab, const char *name);
/* The survey's status of device when it is a GPU that is here, else NULL:
 * its description names the GPU whose shipped profile (nn_profile_for_device)
 * Explain and the race compare with. */
const nn_device_status *ui_gpu_here(const ui_lab *lab, const char *device);
/* The profile the settings choose (its name or the default), loaded: 0, or
 * -1 with why. */
int ui_predicted_profile(const ui_lab *lab, nn_gpu_profile *out, char *err, size_t err_len);
/* Starts a run of the settings' devices with each GPU that is not here
 * replaced by a predicted one racing the rest (the baseline when it was
 * alone): 1 when it did (the run is lab->run), 0 when no device needs it,
 * -1 when it could not start (said on the status row). */
int ui_predicted_run_start(ui_lab *lab);
/* The framework way's predicted lanes of a predicted race, from w (the
 * lanes on the CPU and on the GPU that are predicted): they race beside
 * the real job and the predicted GPU. */
void ui_predicted_lanes_from(ui_run *r, const nn_race_ways *w);
/* 1 while a predicted lane has not reached its end (the screen redraws
 * its bars). */
int ui_predicted_moving(const ui_lab *lab);
/* Rows the predicted lanes need under the jobs: 0, or the GPU's, one a
 * framework lane, and the note. */
int ui_predicted_rows(const ui_lab *lab);
/* Its row at y: a bar at the model's pace while the real job trains. */
void ui_predicted_draw(ui_lab *lab, int y, int x, int w);

/* The settings' GPU profile field: its value, and left/right through the
 * profiles found (nn_profile_list). */
void ui_profile_field_text(const ui_lab *lab, char *value, size_t len);
#define UI_PROFILES_MAX 32           /* the profiles the field steps through at most */
void ui_profile_field_adjust(ui_lab *lab, nn_profile_entry list[UI_PROFILES_MAX], int dir);

#endif

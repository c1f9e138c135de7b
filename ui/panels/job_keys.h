/* ui/panels/job_keys.h - the keys the run and the sweep screens share
 * (ui/panels/job_keys.c). */
#ifndef NNLAB_UI_JOB_KEYS_H
#define NNLAB_UI_JOB_KEYS_H

#include "lab_state.h"

/* l log scale, e explain, Esc/b/Enter back; running: the screen's job runs,
 * which Esc asks about and Enter leaves alone. Each screen handles its own
 * keys first (c cancel and x export among them). */
ui_action ui_job_screen_key(ui_lab *lab, int ch, int running);

#endif

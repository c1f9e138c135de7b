/* ui/panels/long_job.h - the question before a job predicted over 10
 * minutes (ui/panels/long_job.c). */
#ifndef NNLAB_UI_LONG_JOB_H
#define NNLAB_UI_LONG_JOB_H

#include "lab_state.h"

/* 1 when the run the settings describe is predicted (nn_job_predict_s, the
 * calibrations the lab holds) to take over NN_JOB_ASK_S and the user has
 * not said yes yet: the question is up, nothing starts. 0: go on. */
int ui_long_job_ask(ui_lab *lab);
ui_action ui_long_job_key(ui_lab *lab, int ch);
void ui_long_job_draw(ui_lab *lab);

#endif

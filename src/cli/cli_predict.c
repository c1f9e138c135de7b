/* src/cli/cli_predict.c - the line before a job predicted to take over 10
 * minutes (nnlab/engine.h NN_JOB_ASK_S). The CLI says so and goes on: a
 * script is not asked, and Ctrl-C (SIGINT) cancels the job within a second
 * (the lab asks y/n instead). The prediction is the cost model's from the
 * device's cached calibration: none cached, nothing is said (measuring one
 * here would be slower than many jobs). */
#include <stdio.h>

#include "cli_common.h"
#include "nnlab/calibrate.h"
#include "nnlab/engine.h"

void cli_say_prediction(const nn_job_config *cfg, int quiet)
{
    nn_calibration cal;
    char line[NN_TEXT_LEN];
    double s;
    const char *dev = cfg->device[0] ? cfg->device : cfg->preset.device;
    if (quiet || nn_calibration_load(dev, &cal) != 0 || nn_job_predict_s(cfg, &cal, &s) != 0 ||
        s <= NN_JOB_ASK_S)
        return;
    nn_job_prediction_text(s, dev, line, sizeof line);
    fprintf(stderr, "nnlab: %s; running it (Ctrl-C cancels)\n", line);
}

/* ui/panels/long_job.c - before a job predicted to take over 10 minutes
 * (NN_JOB_ASK_S), the prediction and a question: y starts it, n goes back
 * to the setup. The prediction is the job kind's (nn_job_predict_s, the one
 * the CLI prints) from the calibrations the lab holds; a device without one
 * is not predicted, and its job starts as before. */
#include "panels/long_job.h"
#include "draw.h"
#include "lab_state.h"
#include "screens/setup_fields.h"

#include <stdio.h>
#include <string.h>

/* The longest prediction among the run's devices; 0 when none is known. */
static double longest_prediction(ui_lab *lab, const char **device)
{
    nn_job_config cfg;
    const char *names[2], *why;
    double worst = 0;
    int n = ui_settings_devices(&lab->chosen.set, names);
    ui_setup_job_config(lab, &cfg);
    for (int k = 0; k < n; k++) {
        const nn_calibration *cal = nn_cal_store_get(&lab->cals, names[k], &why);
        double s;
        nn_strlcpy(cfg.device, names[k], sizeof cfg.device);
        if (cal && nn_job_predict_s(&cfg, cal, &s) == 0 && s > worst) {
            worst = s;
            *device = names[k];
        }
    }
    return worst;
}

int ui_long_job_ask(ui_lab *lab)
{
    const char *device = "";
    if (lab->long_job_ok) {
        lab->long_job_ok = 0;        /* asked and answered: this start only */
        return 0;
    }
    double s = longest_prediction(lab, &device);
    if (s <= NN_JOB_ASK_S)
        return 0;
    nn_job_prediction_text(s, device, lab->long_job_text, sizeof lab->long_job_text);
    lab->dialog = UI_DLG_LONG_JOB;
    lab->dirty |= UI_D_OVERLAY;
    return 1;
}

ui_action ui_long_job_key(ui_lab *lab, int ch)
{
    if (ch == 'y' || ch == 'Y') {
        lab->dialog = UI_DLG_NONE;
        lab->long_job_ok = 1;
        return UI_ACT_GO_RUN;
    }
    if (ch == 'n' || ch == 'N' || ch == 27 || ch == 'q') {
        lab->dialog = UI_DLG_NONE;
        ui_set_message(lab, 0, "not started: %s", lab->long_job_text);
    }
    return UI_ACT_HANDLED;
}

void ui_long_job_draw(ui_lab *lab)
{
    int w = lab->cols - 8 < 70 ? lab->cols - 8 : 70;
    ui_rect box = { (lab->cols - w) / 2, lab->rows / 2 - 3, w, 7 }, in = ui_rect_inner(box);
    char line[NN_TEXT_LEN + 32];
    ui_box(lab, box, "A long job: start it?");
    snprintf(line, sizeof line, "This job is %s.", lab->long_job_text);
    ui_put_wrapped(in.y, in.x + 1, in.w - 2, 3, A_NORMAL, line);
    ui_put(in.y + 4, in.x + 1, in.w - 2, ui_attr(lab, UI_KEY), "y start it (c cancels it)  n not now");
}

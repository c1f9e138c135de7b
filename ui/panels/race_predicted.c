/* ui/panels/race_predicted.c - a predicted GPU racing the real CPU job (the
 * settings' field and the device rule: predicted_field.c); see race_predicted.h. */
#include "ui.h"
#include "race_predicted.h"
#include "screens/setup_fields.h"
#include "text/format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnlab/predicted.h"
#include "nnlab/progress.h"

/* The real device of the run: the other one asked for, else the baseline. */
static const nn_device_status *real_device(const ui_lab *lab, const char *const names[2], int n)
{
    for (int k = 0; k < n; k++)
        if (!ui_predicted_stands_in(lab, names[k]))
            return ui_device_status(lab, names[k]);
    return ui_device_baseline(lab);
}

int ui_predicted_run_start(ui_lab *lab)
{
    const char *names[2];
    int n = ui_settings_devices(&lab->chosen.set, names), stands_in = 0;
    nn_gpu_profile prof;
    nn_predicted_gpu g;
    nn_job_config cfg;
    char err[NN_ERR_LEN];
    for (int k = 0; k < n; k++)
        stands_in += ui_predicted_stands_in(lab, names[k]);
    if (!stands_in)
        return 0;
    const nn_device_status *dev = real_device(lab, names, n);
    ui_setup_job_config(lab, &cfg);
    if (ui_predicted_profile(lab, &prof, err, sizeof err) != 0 || nn_predicted_gpu_init(&g, &cfg, &prof) != 0) {
        ui_set_message(lab, 1, "cannot predict the GPU: %s", err);
        return -1;
    }
    ui_run_free(&lab->run);
    if (!dev || ui_run_start(&lab->run, &cfg, dev, NULL, 0, err, sizeof err) != 0) {
        ui_run_free(&lab->run);
        ui_set_message(lab, 1, "cannot start: %s", dev ? err : "no CPU device here");
        return -1;
    }
    lab->run.has_predicted = 1;
    lab->run.predicted = g;
    ui_set_message(lab, 0, "no GPU here: %s races a GPU %s (its bar moves at the model's step)", dev->name,
                   g.label);
    return 1;
}

int ui_predicted_rows(const ui_lab *lab)
{
    return lab->run.has_predicted ? 2 : 0;
}

/* Where the predicted GPU is: at the real job's training time, over its
 * steps; before the job knows its steps, nowhere yet. */
static void predicted_now(const ui_run *r, nn_predicted_progress *p)
{
    const nn_snapshot *s = &r->j[0].snap;
    nn_predicted_progress_at(&r->predicted, s->elapsed_s, s->total_steps, p);
}

void ui_predicted_draw(ui_lab *lab, int y, int x, int w)
{
    const ui_run *r = &lab->run;
    nn_predicted_progress p;
    char status[NN_TEXT_LEN], bar[256];
    predicted_now(r, &p);
    nn_predicted_status(&r->predicted, &p, status, sizeof status);
    mvhline(y, x, ' ', w);
    mvhline(y + 1, x, ' ', w);
    ui_put(y, x, 8, A_BOLD, "gpu*");
    int bw = w - 9 - 6 - (int)strlen(status) - 1;
    bw = bw > 40 ? 40 : bw < 10 ? 10 : bw;
    ui_bar_text(bar, sizeof bar, bw, p.fraction, lab->utf8);
    ui_put(y, x + 9, bw, ui_attr(lab, UI_DIM), bar);
    ui_putf(y, x + 9 + bw, w - 9 - bw, ui_attr(lab, UI_DIM), " %3.0f%% %s", 100.0 * p.fraction, status);
    ui_putf(y + 1, x, w, ui_attr(lab, UI_DIM), "  * no GPU here: the model's step for %s, nothing measured",
            r->predicted.profile);
}

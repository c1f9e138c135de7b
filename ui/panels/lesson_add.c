/* ui/panels/lesson_add.c - `A` on the setup screen: the settings as a new
 * step of the user's lesson; see lesson_add.h. The file is the model's to
 * write (src/analysis/model/lesson_write.c: atomic, read back, a full
 * lesson refused); this file only turns the settings into a step. */
#include "panels/lesson_add.h"

#include <stdio.h>
#include <string.h>

#include "draw.h"
#include "nnlab/jacobian.h"
#include "screens/setup_fields.h"
#include "util.h"

/* The GPU the settings run or race, if any. */
static const char *settings_gpu(const ui_settings *set)
{
    const char *names[2];
    int n = ui_settings_devices(set, names);
    for (int i = 0; i < n; i++)
        if (nn_device_kind_of(names[i]).gpu)
            return names[i];
    return NULL;
}

void ui_lesson_step_of_settings(const ui_lab *lab, nn_lesson_step *s)
{
    const ui_settings *set = &lab->chosen.set;
    const char *gpu = settings_gpu(set);
    memset(s, 0, sizeof *s);
    s->way = s->method = s->data_on_device = s->graph = s->sync_every_step = s->pinned = -1;
    nn_strlcpy(s->preset, lab->chosen.preset.name, sizeof s->preset);
    nn_strlcpy(s->device, gpu ? gpu : "cpu", sizeof s->device);
    nn_strlcpy(s->gpu_profile, set->gpu_profile, sizeof s->gpu_profile);
    if (!ui_settings_trains(set)) {  /* a Jacobian: its val is the batch field's */
        s->kind = NN_LESSON_JACOBIAN;
        s->val = set->batch;
        s->method = set->method;
        snprintf(s->text, sizeof s->text, "%s: the Jacobian by %s at val %d, on the CPU and the GPU.",
                 s->preset, nn_jac_method_name((enum nn_jac_method)set->method), set->batch);
        nn_strlcpy(s->device, "cpu", sizeof s->device);
        return;
    }
    s->batch = set->batch;
    if (set->ranks > 1) {            /* the race of 1 rank against N: measured here, on the CPU */
        s->kind = NN_LESSON_RANKS;
        s->ranks = set->ranks;
        s->measure = 1;
        s->overlap = !set->no_overlap;
        nn_strlcpy(s->device, "cpu", sizeof s->device);
        /* a lesson measures ranks on the CPU only (lesson_file.c refuses a GPU's): said where the lab's was one */
        snprintf(s->text, sizeof s->text, "%s: %d ranks at batch %d each on this machine against one rank at %d, "
                 "measured%s. (Saved from the lab's settings: write here what the class should look at.)", s->preset,
                 set->ranks, set->batch, set->ranks * set->batch,
                 gpu ? " on the CPU (a lesson's measured ranks run there; the lab's device was the GPU)" : "");
        return;
    }
    s->kind = NN_LESSON_RACE;
    if (gpu) {                       /* the GPU's switches as set: they decide nnlab's GPU way */
        s->way = set->cuda_graph ? NN_WAY_GRAPH : NN_WAY_EAGER;
        s->data_on_device = set->data_on_device;
        s->graph = set->cuda_graph;
        s->sync_every_step = set->sync_every_step;
    }
    snprintf(s->text, sizeof s->text, "%s at batch %d, the CPU against the GPU%s. (Saved from the lab's settings: "
             "write here what the class should look at.)", s->preset, set->batch,
             gpu ? set->cuda_graph ? " (nnlab's graph)" : " (nnlab's eager)" : "");
}

void ui_lesson_add_step(ui_lab *lab)
{
    nn_lesson_step s;
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    int number = 0;
    if (!lab->chosen.preset_ok) {
        ui_set_message(lab, 1, "this preset does not load: %s", lab->chosen.preset_err);
        return;
    }
    ui_lesson_step_of_settings(lab, &s);
    if (nn_lesson_append_step(UI_LESSON_ADD_NAME, "My lesson", &s, path, sizeof path, &number, err, sizeof err) != 0) {
        ui_set_message(lab, 1, "not added: %s", err);
        return;
    }
    ui_set_message(lab, 0, "added as step %d of %s (L opens it)", number, path);
}

/* ui/screens/setup_fields.h - the setup screen's fields (ui/screens/setup_fields.c). */
#ifndef NNLAB_UI_SETUP_FIELDS_H
#define NNLAB_UI_SETUP_FIELDS_H

#include "lab_state.h"
#include "setup_screen.h"

#define UI_MAX_BATCH 1048576

/* The setup screen's fields, in the order drawn. A Jacobian preset shows
 * Method and not the training fields (epochs, steps, learning rate); a
 * training preset the reverse (ui_field_shown). */
enum ui_field {
    UI_F_DEVICE,
    UI_F_RANKS,                      /* data-parallel ranks: 1 rank against N (docs/ranks.md) */
    UI_F_COMPARE, UI_F_BATCH, UI_F_METHOD, UI_F_EPOCHS, UI_F_STEPS, UI_F_LR,
    UI_F_DATA_DIR,                   /* real CIFAR-10 or MNIST files: ui/panels/dialog.c asks for the folder */
    UI_F_DATA_ON_DEVICE, UI_F_SYNC_EVERY_STEP, UI_F_CUDA_GRAPH, UI_F_DETERMINISTIC,
    UI_F_GPU_PROFILE,                /* a GPU not here: ui/panels/race_predicted.c */
    UI_F_SWEEP_FROM, UI_F_SWEEP_TO, UI_F_SWEEP_STEPS, UI_F_SWEEP_DEVICES,
    UI_F_SWEEP_PYTORCH,              /* the framework way measured with PyTorch (nnlab/torch_step.h) */
    UI_N_FIELDS
};

void ui_settings_defaults(ui_settings *s);
/* The settings a preset gives (its batch, epochs, lr, [train] device and
 * compare, [gpu] switches, [lab] race and sweep), and back: what a save keeps. */
void ui_settings_from_preset(ui_settings *s, const nn_preset *p);
void ui_settings_to_preset(const ui_settings *s, nn_preset *p);
/* A saved copy's description: "Saved from lenet-cifar10 in the lab: cpu,
 * batch 64, 2 epochs, lr 0.01". */
void ui_settings_describe(const ui_settings *s, const char *from, char *buf, size_t len);
/* 1 when the settings' job kind trains (nn_job_traits): a batch, epochs,
 * steps, a learning rate and a batch sweep; else the size is the kind's own
 * (a Jacobian's val). */
int ui_settings_trains(const ui_settings *s);
/* The largest batch the selected preset's training set allows (and the lab). */
long ui_batch_max(const ui_lab *lab);
const char *ui_field_label(int f);
/* The label as the selected preset shows it: "val" for a Jacobian preset's
 * batch field. */
const char *ui_field_name(const ui_lab *lab, int f);
/* Whether the selected preset shows field f (a Jacobian preset: Method, no
 * epochs, steps or learning rate; a training preset: no Method). */
int ui_field_shown(const ui_lab *lab, int f);
/* The shown field after (dir 1) or before (-1) f, wrapping round. */
int ui_field_next(const ui_lab *lab, int f, int dir);
/* How the size check names the batch (nn_job_check_sizes' batch_key): the
 * field, or a Jacobian preset's [task] val, written in buf (UI_SIZE_KEY_LEN). */
#define UI_SIZE_KEY_LEN 48
const char *ui_setup_size_key(const ui_lab *lab, char *buf, size_t len);
/* The status of the device the survey calls name; NULL before the survey
 * is in, or when it lists none of that name. */
const nn_device_status *ui_device_status(const ui_lab *lab, const char *name);
/* The device every other one is compared with: the first on a pool of CPU
 * threads (the survey's CPU); NULL when the survey lists none (yet). */
const nn_device_status *ui_device_baseline(const ui_lab *lab);
/* The first device that computes on a GPU, here or not; NULL when none. */
const nn_device_status *ui_device_gpu(const ui_lab *lab);
/* 1 when the survey says the device of that name can run here. */
int ui_device_ok(const ui_lab *lab, const char *name);
/* The devices the settings run: the device, and the one beside it (names[1]
 * NULL when alone); returns 1 or 2. */
int ui_settings_devices(const ui_settings *s, const char *names[2]);
/* Fills cfg from the chosen preset and the settings. */
void ui_setup_job_config(const ui_lab *lab, nn_job_config *cfg);
/* The devices a sweep of the settings includes (available or not), in the
 * order swept; returns how many. */
int ui_sweep_order(const ui_lab *lab, const nn_device_status **devs, int max);
/* The devices a sweep would run on (available, in the order swept). */
int ui_sweep_devices(const ui_lab *lab, const char **names, int max);
int ui_field_is_number(int f);
int ui_field_gpu_only(int f);
void ui_field_text(const ui_lab *lab, int f, char *label, size_t llen, char *value, size_t vlen);
/* The setup screen's state: the number typed, the profile list the GPU
 * profile field steps through. */
void ui_field_adjust(ui_lab *lab, ui_setup_state *ss, int f, int dir);
int ui_field_type(ui_setup_state *ss, int ch);
/* Parses the number being typed into the focused field, strictly (whole
 * numbers for counts, the sweep's ends powers of two). 1: set; 0: nothing
 * was typed; -1: refused with a message giving the range, the old value
 * kept and the text left to fix (Esc drops it). */
int ui_field_commit(ui_lab *lab, ui_setup_state *ss);

#endif

/* ui/setup_fields.c - the setup screen's fields: device, side-by-side mode,
 * batch, epochs, steps, learning rate, the GPU switches and the sweep range;
 * their text, how arrows, space and typed numbers change them, and the job
 * configuration they make. */
#include "ui.h"
#include "setup_fields.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const device_names[UI_N_DEVICES] = { "cpu", "cpu-ref", "gpu" };

const char *ui_device_name(int dev)
{
    return dev >= 0 && dev < UI_N_DEVICES ? device_names[dev] : "?";
}

int ui_choice_devices(int choice, int out[2])
{
    switch (choice) {
    case UI_CH_CPU: out[0] = UI_DEV_CPU; return 1;
    case UI_CH_CPU_REF: out[0] = UI_DEV_CPU_REF; return 1;
    case UI_CH_GPU: out[0] = UI_DEV_GPU; return 1;
    case UI_CH_CPU_GPU: out[0] = UI_DEV_CPU, out[1] = UI_DEV_GPU; return 2;
    default: out[0] = UI_DEV_CPU, out[1] = UI_DEV_CPU_REF; return 2;
    }
}

static const char *choice_text(int choice)
{
    static const char *const text[UI_N_CHOICES] = {
        "cpu (OpenBLAS)", "cpu-ref (reference)", "gpu", "cpu + gpu", "cpu + cpu-ref",
    };
    return choice >= 0 && choice < UI_N_CHOICES ? text[choice] : "?";
}

void ui_settings_from_preset(ui_settings *s, const nn_preset *p)
{
    s->device = !strcmp(p->device, "cpu-ref") ? UI_CH_CPU_REF : !strcmp(p->device, "gpu") ? UI_CH_GPU : UI_CH_CPU;
    s->batch = p->batch;
    s->epochs = p->epochs;
    s->steps = 0;
    s->lr = p->lr;
}

void ui_settings_defaults(ui_settings *s)
{
    memset(s, 0, sizeof *s);
    s->device = UI_CH_CPU;
    s->sequential = 1;               /* fair timing unless a race is asked for */
    s->batch = 32;
    s->epochs = 1;
    s->lr = 0.001;
    /* the engine's defaults (nn_job_config_init), so that the lab runs what
     * `nnlab train` runs; the switches are there to undo them */
    s->data_on_device = 1;
    s->sync_every_step = 0;
    s->cuda_graph = 1;
    s->sweep_from = 1;
    s->sweep_to = 4096;
    s->sweep_steps = 20;
    s->sweep_all = 0;
}

int ui_field_is_number(int f)
{
    return f == UI_F_BATCH || f == UI_F_EPOCHS || f == UI_F_STEPS || f == UI_F_LR ||
           f == UI_F_SWEEP_FROM || f == UI_F_SWEEP_TO || f == UI_F_SWEEP_STEPS;
}

int ui_field_gpu_only(int f)
{
    return f == UI_F_DATA_ON_DEVICE || f == UI_F_CUDA_GRAPH;
}

/* The label and the value text of field f. */
void ui_field_text(const ui_lab *lab, int f, char *label, size_t llen, char *value, size_t vlen)
{
    const ui_settings *s = &lab->setup.set;
    int devs[2], n = ui_choice_devices(s->device, devs), ok = 1;
    for (int i = 0; i < n; i++)
        ok &= lab->setup.dev_ok[devs[i]];
    static const char *const labels[UI_N_FIELDS] = {
        "Device", "Side by side", "Batch size", "Epochs", "Steps", "Learning rate",
        "Data on device", "Sync every step", "CUDA graph", "Sweep from", "Sweep to",
        "Sweep steps", "Sweep on",
    };
    snprintf(label, llen, "%s", labels[f]);
    switch (f) {
    case UI_F_DEVICE: snprintf(value, vlen, "%s%s", choice_text(s->device), ok ? "" : " (n/a)"); break;
    case UI_F_COMPARE: snprintf(value, vlen, "%s", s->sequential ? "one after the other" : "race (share the CPU)"); break;
    case UI_F_BATCH: snprintf(value, vlen, "%d", s->batch); break;
    case UI_F_EPOCHS: snprintf(value, vlen, "%d", s->epochs); break;
    case UI_F_STEPS:
        if (s->steps > 0)
            snprintf(value, vlen, "%ld", s->steps);
        else
            snprintf(value, vlen, "0 (all epochs)");
        break;
    case UI_F_LR: snprintf(value, vlen, "%g", s->lr); break;
    case UI_F_DATA_ON_DEVICE: snprintf(value, vlen, "[%c] GPU only", s->data_on_device ? 'x' : ' '); break;
    case UI_F_SYNC_EVERY_STEP:       /* the engine reads the loss back on any device */
        snprintf(value, vlen, "[%c]", s->sync_every_step ? 'x' : ' ');
        break;
    case UI_F_CUDA_GRAPH: snprintf(value, vlen, "[%c] GPU only", s->cuda_graph ? 'x' : ' '); break;
    case UI_F_SWEEP_FROM: snprintf(value, vlen, "%d", s->sweep_from); break;
    case UI_F_SWEEP_TO: snprintf(value, vlen, "%d", s->sweep_to); break;
    case UI_F_SWEEP_STEPS: snprintf(value, vlen, "%ld (+3 warm-up)", s->sweep_steps); break;
    case UI_F_SWEEP_DEVICES: snprintf(value, vlen, "%s", s->sweep_all ? "cpu, cpu-ref, gpu" : "cpu, gpu"); break;
    default: value[0] = '\0';
    }
}

static long clampl(long v, long lo, long hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Left (dir -1), right (+1) or space (+1) on field f. */
void ui_field_adjust(ui_lab *lab, int f, int dir)
{
    ui_settings *s = &lab->setup.set;
    int up = dir > 0;
    switch (f) {
    case UI_F_DEVICE: s->device = (s->device + (up ? 1 : UI_N_CHOICES - 1)) % UI_N_CHOICES; break;
    case UI_F_COMPARE: s->sequential = !s->sequential; break;
    case UI_F_BATCH: s->batch = (int)clampl(up ? 2L * s->batch : s->batch / 2, 1, UI_MAX_BATCH); break;
    case UI_F_EPOCHS: s->epochs = (int)clampl(s->epochs + dir, 1, 100000); break;
    case UI_F_STEPS:                 /* 0 (all epochs) <-> 100 <-> 200 ... */
        s->steps = up ? (s->steps ? clampl(2 * s->steps, 1, 1000000000L) : 100) : (s->steps > 100 ? s->steps / 2 : 0);
        break;
    case UI_F_LR: s->lr = up ? s->lr * 2 : s->lr / 2; break;
    case UI_F_DATA_ON_DEVICE: s->data_on_device = !s->data_on_device; break;
    case UI_F_SYNC_EVERY_STEP: s->sync_every_step = !s->sync_every_step; break;
    case UI_F_CUDA_GRAPH: s->cuda_graph = !s->cuda_graph; break;
    case UI_F_SWEEP_FROM:
        s->sweep_from = (int)clampl(up ? 2L * s->sweep_from : s->sweep_from / 2, 1, s->sweep_to);
        break;
    case UI_F_SWEEP_TO:
        s->sweep_to = (int)clampl(up ? 2L * s->sweep_to : s->sweep_to / 2, s->sweep_from, UI_MAX_BATCH);
        break;
    case UI_F_SWEEP_STEPS: s->sweep_steps = clampl(s->sweep_steps + 5 * dir, 1, 100000); break;
    case UI_F_SWEEP_DEVICES: s->sweep_all = !s->sweep_all; break;
    }
}

/* Accepts a typed character into lab->setup.edit; 1 when taken. */
int ui_field_type(ui_lab *lab, int ch)
{
    size_t n = strlen(lab->setup.edit);
    int ok = ch >= '0' && ch <= '9';
    if (lab->setup.field == UI_F_LR)       /* 1e-3, 0.001 */
        ok |= ch == '.' || ((ch == 'e' || ch == 'E') && n > 0) || (ch == '-' && n > 0 && (lab->setup.edit[n - 1] | 32) == 'e');
    if (!ok || !ui_field_is_number(lab->setup.field) || n + 1 >= sizeof lab->setup.edit)
        return 0;
    lab->setup.edit[n] = (char)ch;
    lab->setup.edit[n + 1] = '\0';
    return 1;
}

/* Parses lab->setup.edit into the focused field; a bad value is refused with a
 * message and the old value stays. */
void ui_field_commit(ui_lab *lab)
{
    ui_settings *s = &lab->setup.set;
    long v = 0;
    double d = 0;
    int f = lab->setup.field, bad;
    if (!lab->setup.edit[0])
        return;
    if (f == UI_F_LR)
        bad = nn_parse_double(lab->setup.edit, &d) != 0 || !(d > 0) || !isfinite(d);
    else
        bad = nn_parse_long(lab->setup.edit, &v) != 0;
    switch (f) {
    case UI_F_BATCH: bad |= v < 1 || v > UI_MAX_BATCH; break;
    case UI_F_EPOCHS: bad |= v < 1 || v > 100000; break;
    case UI_F_STEPS: bad |= v < 0 || v > 1000000000L; break;
    case UI_F_SWEEP_FROM: bad |= v < 1 || v > s->sweep_to; break;
    case UI_F_SWEEP_TO: bad |= v < s->sweep_from || v > UI_MAX_BATCH; break;
    case UI_F_SWEEP_STEPS: bad |= v < 1 || v > 100000; break;
    }
    if (bad) {
        ui_set_message(lab, 1, "'%s' is not a valid value here (see the help, F1)", lab->setup.edit);
        lab->setup.edit[0] = '\0';
        return;
    }
    switch (f) {
    case UI_F_BATCH: s->batch = (int)v; break;
    case UI_F_EPOCHS: s->epochs = (int)v; break;
    case UI_F_STEPS: s->steps = v; break;
    case UI_F_LR: s->lr = d; break;
    case UI_F_SWEEP_FROM: s->sweep_from = (int)v; break;
    case UI_F_SWEEP_TO: s->sweep_to = (int)v; break;
    case UI_F_SWEEP_STEPS: s->sweep_steps = v; break;
    }
    lab->setup.edit[0] = '\0';
}

/* Training samples per epoch the preset's data will have, for choosing how
 * often to record a loss point before the data is loaded. */
static long estimated_rows(const nn_preset *p)
{
    switch (p->data) {
    case NN_DATA_MNIST: return 60000;
    case NN_DATA_CIFAR10: return 50000;
    default: return p->rows;
    }
}

void ui_setup_job_config(const ui_lab *lab, nn_job_config *cfg)
{
    const ui_settings *s = &lab->setup.set;
    const nn_preset *p = &lab->setup.preset;
    nn_job_config_init(cfg, p);
    cfg->batch = s->batch;
    cfg->epochs = s->epochs;
    cfg->steps = s->steps;
    cfg->lr = s->lr;
    /* About 200 loss points per run, never fewer than the preset asks for (a
     * one-epoch run at the preset's interval would draw three points), and
     * at least 50 steps apart: each point reads the loss back, which on a
     * GPU is a synchronisation the headless run does not make. */
    long total = s->steps > 0 ? s->steps : (estimated_rows(p) + s->batch - 1) / s->batch * (long)s->epochs;
    long every = total / 200 > 50 ? total / 200 : 50;
    cfg->log_every = every < p->log_every ? every : p->log_every;
    /* The teaching switches; a CPU device ignores all but sync_every_step. */
    cfg->data_on_device = s->data_on_device;
    cfg->sync_every_step = s->sync_every_step;
    cfg->graph = s->cuda_graph;
}

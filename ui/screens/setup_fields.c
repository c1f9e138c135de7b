/* ui/screens/setup_fields.c - the setup screen's fields: device, side-by-side mode,
 * batch, epochs, steps, learning rate, the GPU switches and the sweep range;
 * for a Jacobian preset val (in the batch's place) and the method instead
 * of the training fields. Their text, how arrows, space and typed numbers
 * change them, and the job configuration they make. */
#include "draw.h"
#include "lab_state.h"
#include "setup_screen.h"
#include "setup_fields.h"
#include "panels/race_predicted.h"
#include "nnlab/ranks.h"
#include "nnlab/torch_step.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the devices the settings run (the survey's lookups: setup_devices.c) ------------- */

int ui_settings_devices(const ui_settings *s, const char *names[2])
{
    names[0] = s->device;
    names[1] = s->compare[0] && strcmp(s->compare, s->device) != 0 ? s->compare : NULL;
    return names[1] ? 2 : 1;
}

/* A value of the Device field: one device, or two side by side. */
typedef struct device_choice {
    const char *dev[2];              /* dev[1] NULL: alone */
} device_choice;

/* What the Device field offers, in its order: each device alone (the
 * survey's order, the baseline first), then the baseline beside each GPU,
 * then beside each other device. Empty until the survey is in. */
static int device_choices(const ui_lab *lab, device_choice *out, int max)
{
    const nn_device_status *cpu = ui_device_baseline(lab);
    int n = 0;
    for (int d = 0; d < lab->devices.n && n < max; d++)
        out[n++] = (device_choice){ { lab->devices.st[d].name, NULL } };
    for (int gpu = 1; gpu >= 0 && cpu; gpu--)
        for (int d = 0; d < lab->devices.n && n < max; d++) {
            const nn_device_status *st = &lab->devices.st[d];
            if (st != cpu && st->gpu == gpu)
                out[n++] = (device_choice){ { cpu->name, st->name } };
        }
    return n;
}

static void set_name(char *dst, size_t len, const char *src)
{
    memset(dst, 0, len);             /* whole: settings compare as bytes */
    snprintf(dst, len, "%s", src ? src : "");
}

/* Left or Right on the Device field: the choice after or before the one
 * set (the first when the one set is not offered). */
static void next_device_choice(const ui_lab *lab, ui_settings *s, int up)
{
    device_choice c[NN_MAX_DEVICES * 2];
    const char *now[2];
    int n = device_choices(lab, c, NN_MAX_DEVICES * 2), at = -1, k = ui_settings_devices(s, now);
    if (n == 0)
        return;                      /* still checking which devices there are */
    for (int i = 0; i < n && at < 0; i++)
        if (!strcmp(c[i].dev[0], now[0]) && (c[i].dev[1] ? k == 2 && !strcmp(c[i].dev[1], now[1]) : k == 1))
            at = i;
    at = at < 0 ? 0 : (at + (up ? 1 : n - 1)) % n;
    set_name(s->device, sizeof s->device, c[at].dev[0]);
    set_name(s->compare, sizeof s->compare, c[at].dev[1]);
}

/* A device's name and, once surveyed, the first word of its backend's line:
 * "cpu (OpenBLAS)", "cpu-ref (reference)". */
static void device_text(const ui_lab *lab, const char *name, char *buf, size_t len)
{
    const nn_device_status *st = ui_device_status(lab, name);
    size_t w = st ? strcspn(st->summary, " :,") : 0;
    if (w > 0)
        snprintf(buf, len, "%s (%.*s)", name, (int)w, st->summary);
    else
        snprintf(buf, len, "%s", name);
}

static void choice_text(const ui_lab *lab, const ui_settings *s, char *buf, size_t len)
{
    const char *names[2];
    if (ui_settings_devices(s, names) == 2)
        snprintf(buf, len, "%s + %s", names[0], names[1]);
    else
        device_text(lab, names[0], buf, len);
}

int ui_sweep_order(const ui_lab *lab, const nn_device_status **devs, int max)
{
    int n = 0;
    for (int d = 0; d < lab->devices.n && n < max; d++)
        if (!lab->devices.st[d].reference || lab->chosen.set.sweep_all)
            devs[n++] = &lab->devices.st[d];
    return n;
}

int ui_sweep_devices(const ui_lab *lab, const char **names, int max)
{
    const nn_device_status *devs[NN_MAX_DEVICES];
    int n = 0;
    for (int i = 0, nd = ui_sweep_order(lab, devs, NN_MAX_DEVICES); i < nd && n < max; i++)
        if (devs[i]->available)
            names[n++] = devs[i]->name;
    return n;
}

void ui_settings_from_preset(ui_settings *s, const nn_preset *p)
{
    set_name(s->device, sizeof s->device, p->device);
    set_name(s->compare, sizeof s->compare, p->compare);
    s->sequential = !p->race;
    s->batch = p->batch;
    s->epochs = p->epochs;
    s->steps = 0;
    s->lr = p->lr;
    snprintf(s->data_dir, sizeof s->data_dir, "%s", p->data_dir);
    s->data_on_device = p->data_on_device;
    s->sync_every_step = p->sync_every_step;
    s->cuda_graph = p->graph;
    s->pinned = p->pinned;
    s->tf32 = p->tf32;
    s->deterministic = p->deterministic;
    s->sweep_from = p->sweep_from;
    s->sweep_to = p->sweep_to;
    s->sweep_steps = p->sweep_steps;
    s->sweep_all = p->sweep_cpu_ref;
    s->kind = nn_job_kind_of_preset(p);
    s->method = p->task_method;
    if (!ui_settings_trains(s))
        s->batch = p->task_val;      /* the batch field is the kind's size: val */
}

void ui_settings_to_preset(const ui_settings *s, nn_preset *p)
{
    const char *names[2];
    int n = ui_settings_devices(s, names);
    snprintf(p->device, sizeof p->device, "%s", names[0]);
    snprintf(p->compare, sizeof p->compare, "%s", n == 2 ? names[1] : "");
    p->race = !s->sequential;
    if (!nn_job_traits_of(nn_job_kind_of_preset(p))->trains) {
        p->task_val = s->batch;
        p->task_method = s->method;
    } else {
        p->batch = s->batch;
    }
    p->epochs = s->epochs;
    p->lr = (float)s->lr;
    snprintf(p->data_dir, sizeof p->data_dir, "%s", s->data_dir);
    p->data_on_device = s->data_on_device;
    p->sync_every_step = s->sync_every_step;
    p->graph = s->cuda_graph;
    p->pinned = s->pinned;
    p->tf32 = s->tf32;
    p->deterministic = s->deterministic;
    p->sweep_from = s->sweep_from;
    p->sweep_to = s->sweep_to;
    p->sweep_steps = s->sweep_steps;
    p->sweep_cpu_ref = s->sweep_all;
}

void ui_settings_describe(const ui_settings *s, const char *from, char *buf, size_t len)
{
    const char *names[2];
    char devices[64];
    if (ui_settings_devices(s, names) == 2)
        snprintf(devices, sizeof devices, "%s and %s %s", names[0], names[1], s->sequential ? "in turn" : "racing");
    else
        snprintf(devices, sizeof devices, "%s", names[0]);
    const nn_job_traits *t = nn_job_traits_of(s->kind);
    if (!t->trains && t->task_line) {
        char task[NN_TEXT_LEN];
        t->task_line(s->method, s->batch, task, sizeof task);
        snprintf(buf, len, "Saved from %s in the lab: %s, %s", from, devices, task);
        return;
    }
    snprintf(buf, len, "Saved from %s in the lab: %s, batch %d, %d epoch%s, lr %g", from, devices,
             s->batch, s->epochs, s->epochs == 1 ? "" : "s", s->lr);
}

void ui_settings_defaults(ui_settings *s)
{
    memset(s, 0, sizeof *s);
    /* the device: none until a preset names one ([train] device) */
    s->sequential = 1;               /* fair timing unless a race is asked for */
    s->ranks = 1;
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
    s->method = nn_job_traits_of(s->kind)->default_method;
}

int ui_settings_trains(const ui_settings *s)
{
    return nn_job_traits_of(s->kind)->trains;
}

long ui_batch_max(const ui_lab *lab)
{
    nn_job_config cfg;
    nn_memory_estimate m;
    if (!lab->chosen.preset_ok)
        return UI_MAX_BATCH;
    if (!ui_settings_trains(&lab->chosen.set))   /* val: no training set bounds it */
        return nn_job_traits_of(lab->chosen.set.kind)->size_max;
    ui_setup_job_config(lab, &cfg);
    nn_job_memory_estimate(&cfg, &m);
    return m.train_rows > 0 && m.train_rows < UI_MAX_BATCH ? m.train_rows : UI_MAX_BATCH;
}

int ui_field_is_number(int f)
{
    return f == UI_F_BATCH || f == UI_F_EPOCHS || f == UI_F_STEPS || f == UI_F_LR ||
           f == UI_F_SWEEP_FROM || f == UI_F_SWEEP_TO || f == UI_F_SWEEP_STEPS;
}

int ui_field_gpu_only(int f)
{
    return f == UI_F_DATA_ON_DEVICE || f == UI_F_CUDA_GRAPH || f == UI_F_DETERMINISTIC;
}

/* A job kind that trains nothing (the Jacobian) has no epochs, steps or
 * learning rate to change; one with a method shows its choice. */
int ui_field_shown(const ui_lab *lab, int f)
{
    const nn_job_traits *t = nn_job_traits_of(lab->chosen.set.kind);
    if (f == UI_F_METHOD)
        return t->has_method;
    if (f == UI_F_EPOCHS || f == UI_F_STEPS || f == UI_F_LR || f == UI_F_GPU_PROFILE || f == UI_F_RANKS)
        return t->trains;
    if (f == UI_F_DATA_DIR)          /* files to read: CIFAR-10 or MNIST, not random rows */
        return t->trains && (lab->chosen.preset.data == NN_DATA_MNIST || lab->chosen.preset.data == NN_DATA_CIFAR10);
    if (f >= UI_F_SWEEP_FROM && f <= UI_F_SWEEP_PYTORCH)
        return t->trains;            /* a batch sweep times training steps */
    return f >= 0 && f < UI_N_FIELDS;
}

int ui_field_next(const ui_lab *lab, int f, int dir)
{
    for (int i = 0; i < UI_N_FIELDS; i++) {
        f = (f + (dir > 0 ? 1 : UI_N_FIELDS - 1)) % UI_N_FIELDS;
        if (ui_field_shown(lab, f))
            break;
    }
    return f;
}

const char *ui_field_label(int f)
{
    static const char *const labels[UI_N_FIELDS] = {
        "Device", "Ranks", "Side by side", "Batch size", "Method", "Epochs", "Steps", "Learning rate", "Data folder",
        "Data on device", "Sync every step", "CUDA graph", "Deterministic", "GPU profile", "Sweep from",
        "Sweep to", "Sweep steps", "Sweep on", "Measure PyTorch",
    };
    return f >= 0 && f < UI_N_FIELDS ? labels[f] : "?";
}

const char *ui_field_name(const ui_lab *lab, int f)
{
    const nn_job_traits *t = nn_job_traits_of(lab->chosen.set.kind);
    return f == UI_F_BATCH && !t->trains ? t->size_label : ui_field_label(f);
}

/* The devices a sweep includes, by name ("cpu, gpu"); before the survey
 * is in, what the setting means. */
/* The kind's method, by its traits: its name, and the next one round. */
static const char *method_name(const ui_settings *s)
{
    const nn_job_traits *t = nn_job_traits_of(s->kind);
    return t->method_name && t->n_methods > 0 ? t->method_name(s->method) : "-";
}

static int next_method(const ui_settings *s, int up)
{
    int n = nn_job_traits_of(s->kind)->n_methods;
    return n > 0 ? (s->method + (up ? 1 : n - 1)) % n : 0;
}

static void swept_text(const ui_lab *lab, char *buf, size_t len)
{
    const nn_device_status *devs[NN_MAX_DEVICES];
    int n = ui_sweep_order(lab, devs, NN_MAX_DEVICES);
    size_t at = 0;
    buf[0] = '\0';
    if (n == 0)
        snprintf(buf, len, "%s", lab->chosen.set.sweep_all ? "every device" : "every device but the reference");
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", devs[i]->name);
}

/* The label and the value text of field f. */
void ui_field_text(const ui_lab *lab, int f, char *label, size_t llen, char *value, size_t vlen)
{
    const ui_settings *s = &lab->chosen.set;
    const char *names[2];
    int n = ui_settings_devices(s, names), ok = 1;
    char device[64];
    for (int i = 0; i < n; i++)
        ok &= ui_device_ok(lab, names[i]);
    snprintf(label, llen, "%s", ui_field_name(lab, f));
    switch (f) {
    case UI_F_DEVICE:
        choice_text(lab, s, device, sizeof device);
        snprintf(value, vlen, "%s%s", device,
                 ok ? "" : ui_predicted_stands_in(lab, names[n - 1]) || ui_predicted_stands_in(lab, names[0])
                               ? " (predicted)" : " (n/a)");
        break;
    case UI_F_RANKS:
        /* the race it runs: 1 rank at ranks x batch against the ranks at batch */
        if (s->ranks > 1)
            snprintf(value, vlen, "%d (1 vs %d ranks)", s->ranks, s->ranks);
        else
            snprintf(value, vlen, "1");
        break;
    case UI_F_COMPARE:               /* ranks take every core: always in turn */
        snprintf(value, vlen, "%s", s->sequential || s->ranks > 1 ? "one after the other" : "race (cores split)");
        break;
    case UI_F_BATCH: snprintf(value, vlen, "%d", s->batch); break;
    case UI_F_METHOD: snprintf(value, vlen, "%s", method_name(s)); break;
    case UI_F_EPOCHS: snprintf(value, vlen, "%d", s->epochs); break;
    case UI_F_STEPS:
        if (s->steps > 0)
            snprintf(value, vlen, "%ld", s->steps);
        else
            snprintf(value, vlen, "0 (all epochs)");
        break;
    case UI_F_LR: snprintf(value, vlen, "%g", s->lr); break;
    case UI_F_DATA_DIR:
        snprintf(value, vlen, "%s", s->data_dir[0] ? s->data_dir : "(default: Space to type one)");
        break;
    case UI_F_DATA_ON_DEVICE: snprintf(value, vlen, "[%c] GPU only", s->data_on_device ? 'x' : ' '); break;
    case UI_F_SYNC_EVERY_STEP:       /* the engine reads the loss back on any device */
        snprintf(value, vlen, "[%c]", s->sync_every_step ? 'x' : ' ');
        break;
    case UI_F_CUDA_GRAPH: snprintf(value, vlen, "[%c] GPU only", s->cuda_graph ? 'x' : ' '); break;
    case UI_F_DETERMINISTIC:         /* the CPU repeats bit for bit either way */
        snprintf(value, vlen, "[%c] GPU only", s->deterministic ? 'x' : ' ');
        break;
    case UI_F_SWEEP_FROM: snprintf(value, vlen, "%d", s->sweep_from); break;
    case UI_F_SWEEP_TO: snprintf(value, vlen, "%d", s->sweep_to); break;
    case UI_F_SWEEP_STEPS: snprintf(value, vlen, "%ld (+3 warm-up)", s->sweep_steps); break;
    case UI_F_SWEEP_DEVICES: swept_text(lab, value, vlen); break;
    case UI_F_SWEEP_PYTORCH:
        if (s->sweep_pytorch)
            snprintf(value, vlen, "[x] %s: races, sweeps", s->pytorch_label);
        else
            snprintf(value, vlen, "[ ] off: predicted");
        break;
    case UI_F_GPU_PROFILE: ui_profile_field_text(lab, value, vlen); break;
    default: value[0] = '\0';
    }
}

static long clampl(long v, long lo, long hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Switched on, the python3 that imports torch is looked for at once (a few
 * seconds, once a session: nn_torch_find caches it), so that the field says
 * which PyTorch will measure, or the status row why none can. */
static void toggle_pytorch(ui_lab *lab, ui_settings *s)
{
    nn_torch_python py;
    char err[NN_ERR_LEN];
    if (s->sweep_pytorch) {
        s->sweep_pytorch = 0;
        return;
    }
    if (nn_torch_find(&py, err, sizeof err) != NN_TORCH_OK) {
        ui_set_message(lab, 1, "Measure PyTorch: %s", err);
        return;
    }
    snprintf(s->pytorch_label, sizeof s->pytorch_label, "%s", py.label);
    s->sweep_pytorch = 1;
}

/* The data folder's box (ui/panels/dialog.c takes its keys and draws it): typed,
 * as letters would be the screen's keys here, starting from the folder set. */
static void open_data_dir(ui_lab *lab)
{
    snprintf(lab->dir_input, sizeof lab->dir_input, "%s", lab->chosen.set.data_dir);
    lab->dialog = UI_DLG_DATA_DIR;
    lab->dirty |= UI_D_OVERLAY;
}

/* Ranks up or down, 1..NN_RANKS_JOB_MAX: past 1 only where this machine
 * can start ranks (the status row says why not); a second device beside
 * the first is not raced then (the ranks race one device). */
static void adjust_ranks(ui_lab *lab, ui_settings *s, int dir)
{
    char why[NN_ERR_LEN];
    int to = (int)clampl(s->ranks + dir, 1, NN_RANKS_JOB_MAX);
    if (to > 1 && s->ranks <= 1 && !nn_ranks_can_start(why, sizeof why)) {
        ui_set_message(lab, 1, "Ranks: %s", why);
        return;
    }
    s->ranks = to;
    if (to > 1 && s->compare[0])
        ui_set_message(lab, 0, "ranks race 1 rank against %d on %s alone: %s is left out", to, s->device,
                       s->compare);
}

/* Left (dir -1), right (+1) or space (+1) on field f. */
void ui_field_adjust(ui_lab *lab, ui_setup_state *ss, int f, int dir)
{
    ui_settings *s = &lab->chosen.set;
    int up = dir > 0;
    switch (f) {
    case UI_F_DEVICE: next_device_choice(lab, s, up); break;
    case UI_F_RANKS: adjust_ranks(lab, s, dir); break;
    case UI_F_COMPARE: s->sequential = !s->sequential; break;
    case UI_F_BATCH: s->batch = (int)clampl(up ? 2L * s->batch : s->batch / 2, 1, ui_batch_max(lab)); break;
    case UI_F_METHOD: s->method = next_method(s, up); break;
    case UI_F_EPOCHS: s->epochs = (int)clampl(s->epochs + dir, 1, 100000); break;
    case UI_F_STEPS:                 /* 0 (all epochs) <-> 100 <-> 200 ... */
        s->steps = up ? (s->steps ? clampl(2 * s->steps, 1, 1000000000L) : 100) : (s->steps > 100 ? s->steps / 2 : 0);
        break;
    case UI_F_LR: s->lr = up ? s->lr * 2 : s->lr / 2; break;
    case UI_F_DATA_DIR: open_data_dir(lab); break;
    case UI_F_DATA_ON_DEVICE: s->data_on_device = !s->data_on_device; break;
    case UI_F_SYNC_EVERY_STEP: s->sync_every_step = !s->sync_every_step; break;
    case UI_F_CUDA_GRAPH: s->cuda_graph = !s->cuda_graph; break;
    case UI_F_DETERMINISTIC: s->deterministic = !s->deterministic; break;
    case UI_F_SWEEP_FROM:
        s->sweep_from = (int)clampl(up ? 2L * s->sweep_from : s->sweep_from / 2, 1, s->sweep_to);
        break;
    case UI_F_SWEEP_TO:
        s->sweep_to = (int)clampl(up ? 2L * s->sweep_to : s->sweep_to / 2, s->sweep_from, UI_MAX_BATCH);
        break;
    case UI_F_SWEEP_STEPS: s->sweep_steps = clampl(s->sweep_steps + 5 * dir, 1, 100000); break;
    case UI_F_SWEEP_DEVICES: s->sweep_all = !s->sweep_all; break;
    case UI_F_SWEEP_PYTORCH: toggle_pytorch(lab, s); break;
    case UI_F_GPU_PROFILE: ui_profile_field_adjust(lab, ss->profiles, dir); break;
    }
}

/* Accepts a typed character into ss->edit; 1 when taken. Whatever
 * can be part of a number is taken on every number field ("1.5", "1e3"),
 * so that the value is judged whole when it is confirmed, not cut to its
 * digits as it is typed. */
int ui_field_type(ui_setup_state *ss, int ch)
{
    size_t n = strlen(ss->edit);
    int ok = (ch >= '0' && ch <= '9') || ch == '.' || ch == 'e' || ch == 'E' || ch == '-' || ch == '+';
    if (!ok || !ui_field_is_number(ss->field) || n + 1 >= sizeof ss->edit)
        return 0;
    ss->edit[n] = (char)ch;
    ss->edit[n + 1] = '\0';
    return 1;
}

static int is_power_of_two(long v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

/* The range of number field f, for checking and for the message. */
static void field_range(const ui_lab *lab, int f, long *lo, long *hi)
{
    const ui_settings *s = &lab->chosen.set;
    *lo = 1;
    *hi = 100000;
    switch (f) {
    case UI_F_BATCH: *hi = ui_batch_max(lab); break;
    case UI_F_STEPS: *lo = 0, *hi = 1000000000L; break;
    case UI_F_SWEEP_FROM: *hi = s->sweep_to; break;
    case UI_F_SWEEP_TO: *lo = s->sweep_from, *hi = UI_MAX_BATCH; break;
    }
}

/* Why text is not a value of field f (a whole number in its range; the
 * sweep's ends powers of two); NULL when it is one, in *v. */
static const char *whole_problem(const ui_lab *lab, int f, const char *text, long *v, char *why, size_t len)
{
    long lo, hi, below = 1;
    const char *label = ui_field_name(lab, f);
    field_range(lab, f, &lo, &hi);
    if (nn_parse_long(text, v) != 0)
        snprintf(why, len, "%s: '%s' is not a whole number: type %ld..%ld", label, text, lo, hi);
    else if (*v < lo || *v > hi)
        snprintf(why, len, "%s: %ld is out of range: type %ld..%ld%s", label, *v, lo, hi,
                 f == UI_F_BATCH && hi < UI_MAX_BATCH && ui_settings_trains(&lab->chosen.set) ? " (the training set's size)" : "");
    else if ((f == UI_F_SWEEP_FROM || f == UI_F_SWEEP_TO) && !is_power_of_two(*v)) {
        while (below * 2 < *v)
            below *= 2;
        snprintf(why, len, "%s: %ld is not a power of two (the sweep doubles the batch): %ld or %ld",
                 label, *v, below, below * 2);
    } else
        return NULL;
    return why;
}

/* The learning rate: above 0 and a float (what a preset can store). */
static const char *lr_problem(const char *text, double *d, char *why, size_t len)
{
    if (nn_parse_double(text, d) != 0 || !isfinite(*d))
        snprintf(why, len, "Learning rate: '%s' is not a number: type one above 0, like 0.01 or 1e-3", text);
    else if (!(*d > 0) || *d > FLT_MAX)
        snprintf(why, len, "Learning rate: %s is out of range: above 0, at most %g", text, (double)FLT_MAX);
    else
        return NULL;
    return why;
}

static void set_value(ui_settings *s, int f, long v, double d)
{
    switch (f) {
    case UI_F_BATCH: s->batch = (int)v; break;
    case UI_F_EPOCHS: s->epochs = (int)v; break;
    case UI_F_STEPS: s->steps = v; break;
    case UI_F_LR: s->lr = d; break;
    case UI_F_SWEEP_FROM: s->sweep_from = (int)v; break;
    case UI_F_SWEEP_TO: s->sweep_to = (int)v; break;
    case UI_F_SWEEP_STEPS: s->sweep_steps = v; break;
    }
}

int ui_field_commit(ui_lab *lab, ui_setup_state *ss)
{
    char why[NN_ERR_LEN];
    const char *bad;
    long v = 0;
    double d = 0;
    int f = ss->field;
    if (!ss->edit[0])
        return 0;
    bad = f == UI_F_LR ? lr_problem(ss->edit, &d, why, sizeof why)
                       : whole_problem(lab, f, ss->edit, &v, why, sizeof why);
    if (bad) {
        ui_set_message(lab, 1, "%s; kept the old value (Esc drops what you typed)", bad);
        return -1;
    }
    set_value(&lab->chosen.set, f, v, d);
    ss->edit[0] = '\0';
    return 1;
}

void ui_setup_job_config(const ui_lab *lab, nn_job_config *cfg)
{
    const ui_settings *s = &lab->chosen.set;
    const nn_preset *p = &lab->chosen.preset;
    nn_job_config_init(cfg, p);
    cfg->batch = s->batch;
    cfg->epochs = s->epochs;
    cfg->steps = s->steps;
    cfg->lr = s->lr;
    /* About 200 loss points per run, never fewer than the preset asks for (a
     * one-epoch run at the preset's interval would draw three points), and
     * at least 50 steps apart: each point reads the loss back, which on a
     * GPU is a synchronisation the headless run does not make. */
    long total = s->steps > 0 ? s->steps : (nn_preset_data_rows(p, NULL) + s->batch - 1) / s->batch * (long)s->epochs;
    long every = total / 200 > 50 ? total / 200 : 50;
    cfg->log_every = every < p->log_every ? every : p->log_every;
    /* The teaching switches; a CPU device ignores all but sync_every_step. */
    snprintf(cfg->data_dir, sizeof cfg->data_dir, "%s", s->data_dir);
    cfg->data_on_device = s->data_on_device;
    cfg->sync_every_step = s->sync_every_step;
    cfg->graph = s->cuda_graph;
    cfg->pinned = s->pinned;
    cfg->tf32 = s->tf32;
    cfg->deterministic = s->deterministic;
    cfg->ranks = ui_settings_trains(s) && s->ranks > 1 ? s->ranks : 0;
    cfg->no_overlap = s->no_overlap;
    if (!ui_settings_trains(s)) {
        cfg->jac_val = s->batch;     /* a Jacobian preset's batch field is its val */
        cfg->jac_method = s->method;
    }
}

const char *ui_setup_size_key(const ui_lab *lab, char *buf, size_t len)
{
    const nn_job_traits *t = nn_job_traits_of(lab->chosen.set.kind);
    if (t->trains)
        return ui_field_label(UI_F_BATCH);
    snprintf(buf, len, "%s =", t->size_key);
    return buf;
}

/* src/include/nnlab/preset.h - a preset: one INI file that names the data, the layers in
 * order, the loss, the optimiser and the default device, batch and epochs.
 * Read with iniparser (raw strings, our own strict number parsing), written by
 * our own writer (temp file, fsync, rename). The format is documented in
 * man/nnlab.ini.5. */
#ifndef NNLAB_PRESET_H
#define NNLAB_PRESET_H

#include <stddef.h>

#include "nnlab/layer.h"

#define NN_MAX_LAYERS 64
#define NN_NAME_LEN 64
#define NN_TEXT_LEN 256
#define NN_PATH_LEN 4096             /* a file or folder path outside a preset */
/* A [data] dir value: an INI line holds at most ~1000 characters (NN_MAX_LINE),
 * so this holds any folder a preset can store. */
#define NN_DIR_LEN 1024

/* Where set = mnist looks when the preset names no folder (Debian's
 * dataset-fashion-mnist); without the files the data is synthetic. */
#define NN_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

enum nn_data_kind {
    NN_DATA_MNIST,               /* 1x28x28, 10 classes, IDX files; default Fashion-MNIST */
    NN_DATA_CIFAR10,             /* 3x32x32, 10 classes, CIFAR-10 binary version */
    NN_DATA_RANDOM               /* random rows of `features`, random targets (regression) */
};

enum nn_loss_kind { NN_LOSS_XENT, NN_LOSS_MSE };
enum nn_opt_kind { NN_OPT_SGD, NN_OPT_ADAM };
/* [task] kind: what a job of the preset does (train by default). */
enum nn_task_kind { NN_TASK_TRAIN, NN_TASK_JACOBIAN };

/* A plain value: it owns no memory, so `=` copies it (a job keeps its own
 * copy, the lab keeps the selected one) and nothing needs freeing. */
typedef struct nn_preset {
    char name[NN_NAME_LEN];
    char description[NN_TEXT_LEN];   /* one line */
    /* What the original experiment measured for the whole job of the
     * preset's own batch and epochs, in seconds (0: not given), and where
     * it came from: data the lab and `nnlab explain` set the model's
     * prediction beside. */
    float measured_cpu_s, measured_gpu_s;
    char measured_note[NN_TEXT_LEN];
    /* The high end of a range the write-up gave ("GPU 120-150 s": measured_gpu_s
     * 120, measured_gpu_max_s 150); 0: one figure, never a midpoint. */
    float measured_cpu_max_s, measured_gpu_max_s;
    /* The experiment's own job, which those figures are for: a preset saved
     * with another batch or epochs keeps them as the original's. 0 when read:
     * the preset's [train] batch and epochs (nn_preset_check fills them). */
    int measured_batch, measured_epochs;

    /* [data] */
    enum nn_data_kind data;
    char data_dir[NN_DIR_LEN];       /* optional default directory ("" = built-in default) */
    long rows, val_rows;             /* random: rows (1000000), val_rows (2000) */
    int features, targets;           /* random: features (84), targets (1) */

    /* [train] */
    enum nn_loss_kind loss;
    char device[16];                 /* "cpu", "cpu-ref", "gpu" */
    char compare[16];                /* "" or a second device the lab runs beside
                                        `device` (the CLI trains on one) */
    int batch, epochs;
    long log_every;                  /* steps between progress lines (2000) */
    int deterministic;               /* GPU: deterministic convolution algorithms only,
                                        so that a run repeats bit for bit (off) */
    int overlap;                     /* ranks: each bucket of gradients summed while the
                                        backward goes on (on); off: one sum after it */

    /* [gpu] the GPU switches (nn_job_config's, docs/gpu-backend.md): a job's
     * defaults; the CLI's options set them for its own jobs */
    int data_on_device, pinned, sync_every_step, graph, tf32;

    /* [lab] settings only the lab uses: side by side at once (race) or one
     * after the other, and the batch sweep */
    int race;
    int sweep_from, sweep_to;        /* powers of two: the sweep doubles */
    long sweep_steps;                /* timed steps per point */
    int sweep_cpu_ref;               /* sweep cpu-ref too */

    /* [task] (written only for kind = jacobian): the Jacobian job's batch
     * and method (enum nn_jac_method, nnlab/jacobian.h) */
    enum nn_task_kind task;
    int task_val;
    int task_method;

    /* [optimizer] */
    enum nn_opt_kind opt;
    float lr;
    float momentum, dampening, weight_decay;  /* sgd (weight_decay: both) */
    int nesterov;
    float beta1, beta2, eps;                  /* adam */

    int n_layers;
    nn_layer_spec layers[NN_MAX_LAYERS];
} nn_preset;

/* Fills p with the defaults every key falls back to. */
void nn_preset_defaults(nn_preset *p);

/* Reads and validates path. On error returns -1 and a one-line message naming
 * the file, the section and the key, e.g.
 *   "my.ini: [layer3] in = 500: the previous layer gives 400". */
int nn_preset_load(const char *path, nn_preset *p, char *err, size_t err_len);

/* Validates p and fills each layer's in_shape and out_shape. `where` names the
 * file in messages. */
int nn_preset_check(nn_preset *p, const char *where, char *err, size_t err_len);

/* Sets the numeric key [section] key of p (batch, epochs, log_every, lr, ...)
 * from text by the loader's own rules: a strict number in the key's range, a
 * float checked as the float it is kept as. A front end's option for a
 * preset value (--batch, --epochs, --lr) so takes exactly what a preset may
 * hold. On error -1 and in why the reason and the allowed values, e.g.
 * "must be in 1..100000", "not a whole number (allowed: 1..100000)", "too
 * large for a float (allowed: > 0)". */
int nn_preset_set_value(nn_preset *p, const char *section, const char *key, const char *text,
                        char *why, size_t why_len);

/* Writes p to path atomically (temp file in the same folder, fsync, rename),
 * creating the folder if needed. A failed save leaves the old file intact. */
int nn_preset_save(const char *path, const nn_preset *p, char *err, size_t err_len);

/* What a lab saw of a file when it chose to save there: whether it was
 * there, and which file it was (device, inode, size, modification time).
 * An atomic save makes a new inode, so another lab's save shows. */
typedef struct nn_file_seen {
    int exists;
    unsigned long long dev, ino;
    long long size, mtime_s, mtime_ns;
} nn_file_seen;

/* Fills *out with path as it is now (exists 0 when there is none); 0, or
 * -1 when it cannot be looked at (then *out says it exists, as nothing
 * else will match it). */
int nn_file_seen_now(const char *path, nn_file_seen *out);

/* nn_preset_save, only when path is still as `seen` says: with its folder
 * locked (flock) from the look to the rename, so of two labs saving the
 * same file at once one saves and the other is refused, never both saying
 * saved: "PATH: saved by another lab meanwhile (it appeared since this one
 * looked): save again to replace it". */
int nn_preset_save_unchanged(const char *path, const nn_preset *p, const nn_file_seen *seen, char *err,
                             size_t err_len);

/* The input shape and class count (0 for regression) of the preset's data. */
nn_shape nn_preset_input_shape(const nn_preset *p);
int nn_preset_classes(const nn_preset *p);
/* The rows the preset's data set gives, known before it is loaded: the
 * training samples of an epoch returned, the validation samples in
 * *val_rows unless it is NULL. The standard sets' sizes (MNIST-shaped
 * 60,000 and 10,000, CIFAR-10 50,000 and 10,000; their synthetic stand-ins
 * have the same), or `rows` and `val_rows` of random data. And the steps an
 * epoch takes at batch (the last one partial), as the engine counts them. */
long nn_preset_data_rows(const nn_preset *p, long *val_rows);
long nn_preset_steps_per_epoch(const nn_preset *p, int batch);

/* Whether p carries what its original experiment measured (measured_cpu_s
 * or measured_gpu_s), and whether a job of batch and epochs on p's network
 * is that experiment's own job: the only job its figures may be set beside
 * as a comparison; any other job shows them as the original's. */
int nn_preset_has_measured(const nn_preset *p);
int nn_preset_is_measured_job(const nn_preset *p, int batch, int epochs);

/* Resolves NAME or FILE to a path: a value containing '/' or ending in ".ini"
 * is a path; otherwise NAME.ini is looked up in nn_preset_user_dir(), then
 * in the shipped presets folder (nn_preset_system_dir). */
int nn_preset_find(const char *name_or_path, char *path, size_t path_len,
                   char *err, size_t err_len);

/* $XDG_CONFIG_HOME/nnlab/presets (or ~/.config/nnlab/presets). */
int nn_preset_user_dir(char *dir, size_t len);
/* $NNLAB_PRESETS_DIR if set, else the installed folder ($(pkgdatadir)/presets). */
const char *nn_preset_system_dir(void);

typedef struct nn_preset_entry {
    char name[NN_NAME_LEN];
    char description[NN_TEXT_LEN];
    char path[NN_PATH_LEN];
    int user;                    /* 1 when found in the user's folder */
    int shadowed;                /* a user preset of the same name hides this one */
    char error[512];             /* non-empty when the file does not load (NN_ERR_LEN) */
} nn_preset_entry;

/* Lists the user's presets, then the system's, sorted by name within each.
 * Returns the count (at most max) or -1; *left_out (when not NULL) is how
 * many more there are, not listed (the caller says so). Broken files are
 * listed with error. */
int nn_preset_list(nn_preset_entry *out, int max, int *left_out, char *err, size_t err_len);

#endif

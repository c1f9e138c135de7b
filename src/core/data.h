/* src/core/data.h - data sets held in host memory as normalised float32.
 *
 * Real files: MNIST-format IDX directories (gzip or plain; Debian's
 * dataset-fashion-mnist is the default) and CIFAR-10's binary version. Without
 * real files a synthetic set of the same shape with learnable class structure
 * keeps every preset runnable; `description` always says which is in use.
 * Every reader error names the file and the byte offset. */
#ifndef NNLAB_DATA_H
#define NNLAB_DATA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "nnlab/preset.h"

/* The sizes of the real sets, which their synthetic stand-ins copy; the
 * engine's memory estimate counts on them before anything is loaded. */
#define MNIST_TRAIN 60000
#define MNIST_VAL 10000
#define CIFAR_TRAIN 50000
#define CIFAR_VAL 10000

typedef struct nn_dataset {
    char name[NN_NAME_LEN];          /* "Fashion-MNIST", "MNIST-format IDX", "CIFAR-10", "synthetic", "random" */
    char description[NN_TEXT_LEN];   /* e.g. "Fashion-MNIST (real, /usr/share/datasets/fashion-mnist): 60000 train, 10000 validation" */
    int synthetic;                   /* 1 unless read from real files */
    nn_shape input;                  /* per-sample shape */
    size_t sample_floats;            /* product of input dims */
    int classes;                     /* >0: classification; 0: regression */
    int target_width;                /* regression: floats per target */
    long n_train, n_val;
    float *train_x, *val_x;          /* (n, sample_floats) */
    int32_t *train_y, *val_y;        /* classification labels (n) */
    float *train_t, *val_t;          /* regression targets (n, target_width) */
} nn_dataset;

/* Reads {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] from dir (also the
 * "train-images.idx3-ubyte" spelling). Pixels are scaled to [0, 1]. */
int nn_data_load_idx_dir(const char *dir, nn_dataset *ds, char *err, size_t err_len);

/* Reads data_batch_1..5.bin and test_batch.bin from dir (also under a
 * cifar-10-batches-bin/ subfolder). Pixels are normalised (x/255 - 0.5)/0.5. */
int nn_data_load_cifar10_dir(const char *dir, nn_dataset *ds, char *err, size_t err_len);

/* A synthetic classification set: each class has a smooth random prototype;
 * a sample is its class prototype plus noise, so the loss can fall. */
int nn_data_synthetic(nn_shape input, int classes, long n_train, long n_val,
                      uint64_t seed, nn_dataset *ds, char *err, size_t err_len);

/* Random regression rows like seed 001: x ~ N(0,1) (rows, features),
 * targets ~ N(0,1) (rows, targets). */
int nn_data_random_regression(int features, int targets, long rows, long val_rows,
                              uint64_t seed, nn_dataset *ds, char *err, size_t err_len);

/* The data a preset trains on: data_dir (the --data option) if not NULL, else
 * the preset's own data_dir, else the default (Fashion-MNIST for MNIST
 * presets; synthetic for CIFAR-10). A directory that was named explicitly and
 * is broken is an error; only a missing default falls back to synthetic. */
int nn_data_for_preset(const nn_preset *p, const char *data_dir, uint64_t seed,
                       nn_dataset *ds, char *err, size_t err_len);

/* nn_data_for_preset's MNIST default, with the folder as a parameter so that
 * the fallback can be tested: the IDX files in default_dir, or synthetic data
 * whose description says why when the folder holds none of them. */
int nn_data_mnist_default(const char *default_dir, uint64_t seed, nn_dataset *ds,
                          char *err, size_t err_len);

void nn_data_free(nn_dataset *ds);

/* A load on the calling thread stops at flag (a job's cancel) once it is set:
 * the readers check it between chunks of a file, so that a slow gzip file
 * does not hold a cancel for seconds; the load then fails ("load cancelled
 * at offset N"). NULL: loads on this thread run to their end. */
void nn_data_watch_cancel(atomic_int *flag);
/* Whether the flag watched on this thread is set. */
int nn_data_cancelled(void);

#endif

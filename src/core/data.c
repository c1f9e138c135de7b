/* src/core/data.c - see data.h: which data a preset trains on. The readers
 * are data_idx.c (MNIST format), data_cifar.c (CIFAR-10) and
 * data_synthetic.c (synthetic and random sets); data_set.c holds the
 * dataset struct's buffers and what the readers share (data_internal.h
 * lists it). data.c calls them; none calls data.c.
 */
#include "data_internal.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

/* A synthetic stand-in of the real set's shape and size; why goes into the
 * description so the screen says which data is in use and how to get real. */
static int synthetic_instead(int channels, int side, long n_train, long n_val, const char *why,
                             uint64_t seed, nn_dataset *ds, char *err, size_t err_len)
{
    nn_shape s = { 3, { channels, side, side } };
    if (nn_data_synthetic(s, N_CLASSES, n_train, n_val, seed, ds, err, err_len))
        return -1;
    data_describe_synthetic(ds, why);
    return 0;
}

int nn_data_mnist_default(const char *default_dir, uint64_t seed, nn_dataset *ds,
                          char *err, size_t err_len)
{
    char why[NN_TEXT_LEN];
    /* Only a folder holding none of the files falls back: a partial or
     * damaged install is reported, not silently replaced. */
    if (data_idx_files_present(default_dir) > 0)
        return nn_data_load_idx_dir(default_dir, ds, err, err_len);
    snprintf(why, sizeof why, "no IDX files in %s: apt-get install dataset-fashion-mnist, "
             "or --data DIR", default_dir);
    return synthetic_instead(1, IDX_SIDE, MNIST_TRAIN, MNIST_VAL, why, seed, ds, err, err_len);
}

int nn_data_for_preset(const nn_preset *p, const char *data_dir, uint64_t seed,
                       nn_dataset *ds, char *err, size_t err_len)
{
    /* an empty --data or data_dir counts as not given */
    const char *dir = data_dir && data_dir[0] ? data_dir : p->data_dir[0] ? p->data_dir : NULL;
    switch (p->data) {
    case NN_DATA_MNIST:
        if (dir)
            return nn_data_load_idx_dir(dir, ds, err, err_len);
        return nn_data_mnist_default(NN_FASHION_MNIST_DIR, seed, ds, err, err_len);
    case NN_DATA_CIFAR10:
        if (dir)
            return nn_data_load_cifar10_dir(dir, ds, err, err_len);
        return synthetic_instead(3, CIFAR_SIDE, CIFAR_TRAIN, CIFAR_VAL,
                                 "no CIFAR-10 directory given: pass --data DIR (the lab: "
                                 "its Data folder) with data_batch_1.bin ... for real CIFAR-10",
                                 seed, ds, err, err_len);
    case NN_DATA_RANDOM:
        if (dir) {
            memset(ds, 0, sizeof *ds);
            return nn_errorf(err, err_len, "%s: random data reads no files; this preset "
                             "takes no data directory", dir);
        }
        return nn_data_random_regression(p->features, p->targets, p->rows, p->val_rows,
                                         seed, ds, err, err_len);
    }
    memset(ds, 0, sizeof *ds);
    return nn_errorf(err, err_len, "unknown data kind %d", (int)p->data);
}

/* src/core/data_cifar.c - CIFAR-10's binary version: records of 1 label byte
 * + 3072 pixel bytes, in data_batch_1..5.bin and test_batch.bin. Sizes are
 * checked before reading, so a truncated file is reported where it goes
 * wrong.
 */
#define _POSIX_C_SOURCE 200809L
#include "data_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

#define CIFAR_PIXELS (3 * CIFAR_SIDE * CIFAR_SIDE)  /* R, G, B planes: CHW already */
#define CIFAR_RECORD (1 + CIFAR_PIXELS)            /* label byte + pixels */
#define CIFAR_BATCH_RECORDS 10000                  /* in every official file */

static const char *const cifar_files[] = {
    "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
    "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin",
};
#define CIFAR_FILES 6
#define CIFAR_TRAIN_FILES 5

/* The files sit in dir itself or in the cifar-10-batches-bin/ folder that the
 * official archive unpacks to. */
static int cifar_find_dir(const char *dir, char *out, size_t len, char *err, size_t err_len)
{
    char probe[NN_PATH_LEN];
    if (data_check_dir(dir, err, err_len))
        return -1;
    if ((size_t)snprintf(out, len, "%s", dir) < len
        && (size_t)snprintf(probe, sizeof probe, "%s/%s", out, cifar_files[0]) < sizeof probe
        && data_is_file(probe))
        return 0;
    if ((size_t)snprintf(out, len, "%s/cifar-10-batches-bin", dir) < len
        && (size_t)snprintf(probe, sizeof probe, "%s/%s", out, cifar_files[0]) < sizeof probe
        && data_is_file(probe))
        return 0;
    return nn_errorf(err, err_len, "%s: no %s (nor cifar-10-batches-bin/%s)",
                     dir, cifar_files[0], cifar_files[0]);
}

/* Whole records only: a partial one is reported where it starts. */
static int cifar_records(const char *path, long *records, char *err, size_t err_len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return nn_errorf(err, err_len, "%s: %s", path, strerror(errno));
    long size = (long)st.st_size, whole = size / CIFAR_RECORD;
    if (size % CIFAR_RECORD != 0)
        return nn_errorf(err, err_len, "%s: truncated at offset %ld: partial record of %ld "
                         "bytes (a record is 1 label byte + %d pixel bytes)",
                         path, whole * CIFAR_RECORD, size % CIFAR_RECORD, CIFAR_PIXELS);
    if (whole == 0)
        return nn_errorf(err, err_len, "%s: truncated at offset 0: empty file", path);
    *records = whole;
    return 0;
}

/* Every official file holds 10000 records. Rather than hard-wire that (small
 * hand-made sets are useful), all six must hold the same number, which also
 * catches a file cut exactly at a record boundary. */
static int cifar_sizes(char paths[CIFAR_FILES][NN_PATH_LEN], long *per_file,
                       char *err, size_t err_len)
{
    long n[CIFAR_FILES], most = 0;
    for (int i = 0; i < CIFAR_FILES; i++) {
        if (cifar_records(paths[i], &n[i], err, err_len))
            return -1;
        if (n[i] > most)
            most = n[i];
    }
    for (int i = 0; i < CIFAR_FILES; i++) {
        if (n[i] < most)
            return nn_errorf(err, err_len, "%s: truncated at offset %ld: %ld records where "
                             "the other files hold %ld (an official batch has %d)",
                             paths[i], n[i] * CIFAR_RECORD, n[i], most, CIFAR_BATCH_RECORDS);
    }
    *per_file = most;
    return 0;
}

/* Reads `records` records of path into x (records, 3072) and y (records). */
static int cifar_read_file(const char *path, long records, const float table[256],
                           float *x, int32_t *y, char *err, size_t err_len)
{
    unsigned char rec[CIFAR_RECORD];
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return nn_errorf(err, err_len, "%s: %s", path, strerror(errno));
    int rc = 0;
    for (long r = 0; r < records && rc == 0; r++) {
        long offset = r * CIFAR_RECORD;
        if (fread(rec, 1, sizeof rec, fp) != sizeof rec) {
            /* the size was checked, so only an I/O error or a file that
             * shrank since gets here */
            rc = ferror(fp)
                ? nn_errorf(err, err_len, "%s: read error in the record at offset %ld: %s",
                            path, offset, strerror(errno))
                : nn_errorf(err, err_len, "%s: truncated at offset %ld: partial record",
                            path, offset);
        } else if (rec[0] >= N_CLASSES) {
            rc = nn_errorf(err, err_len, "%s: label %u at offset %ld is not a class 0..%d",
                           path, rec[0], offset, N_CLASSES - 1);
        } else {
            y[r] = rec[0];
            float *dst = x + (size_t)r * CIFAR_PIXELS;
            for (int i = 0; i < CIFAR_PIXELS; i++)
                dst[i] = table[rec[1 + i]];
        }
    }
    fclose(fp);
    return rc;
}

static int cifar_load(const char *root, nn_dataset *d, char *err, size_t err_len)
{
    char dir[NN_PATH_LEN], paths[CIFAR_FILES][NN_PATH_LEN];
    float table[256];
    long per_file = 0;

    if (cifar_find_dir(root, dir, sizeof dir, err, err_len))
        return -1;
    for (int i = 0; i < CIFAR_FILES; i++)
        if (data_join_path(paths[i], sizeof paths[i], dir, cifar_files[i], err, err_len))
            return -1;
    if (cifar_sizes(paths, &per_file, err, err_len))
        return -1;

    d->n_train = per_file * CIFAR_TRAIN_FILES;
    d->n_val = per_file;
    d->train_x = data_alloc_array((size_t)d->n_train * CIFAR_PIXELS, sizeof(float));
    d->train_y = data_alloc_array((size_t)d->n_train, sizeof(int32_t));
    d->val_x = data_alloc_array((size_t)d->n_val * CIFAR_PIXELS, sizeof(float));
    d->val_y = data_alloc_array((size_t)d->n_val, sizeof(int32_t));
    if (!d->train_x || !d->train_y || !d->val_x || !d->val_y)
        return nn_errorf(err, err_len, "%s: out of memory for %ld CIFAR-10 images",
                         dir, d->n_train + d->n_val);

    /* the normalisation of seed 000: transforms.Normalize((0.5,)*3, (0.5,)*3) */
    for (int v = 0; v < 256; v++)
        table[v] = ((float)v / 255.0f - 0.5f) / 0.5f;
    for (int i = 0; i < CIFAR_TRAIN_FILES; i++) {
        size_t first = (size_t)(i * per_file);
        if (cifar_read_file(paths[i], per_file, table, d->train_x + first * CIFAR_PIXELS,
                            d->train_y + first, err, err_len))
            return -1;
    }
    if (cifar_read_file(paths[CIFAR_TRAIN_FILES], per_file, table, d->val_x, d->val_y,
                        err, err_len))
        return -1;

    nn_strlcpy(d->name, "CIFAR-10", sizeof d->name);
    data_set_text(d->description, sizeof d->description,
                  "CIFAR-10 (real, %s): %ld train, %ld validation", dir, d->n_train, d->n_val);
    data_set_shape(d, 3, 3, CIFAR_SIDE, CIFAR_SIDE);
    d->classes = N_CLASSES;
    return 0;
}

int nn_data_load_cifar10_dir(const char *dir, nn_dataset *ds, char *err, size_t err_len)
{
    nn_dataset d = {0};
    return data_finish(&d, cifar_load(dir, &d, err, err_len), ds);
}

/* src/core/data_cifar.c - CIFAR-10's binary version: records of 1 label byte
 * + 3072 pixel bytes, in data_batch_1..5.bin and test_batch.bin. All six
 * files are opened and sized before any memory is taken, so a truncated or
 * mismatched file is reported at once, where it goes wrong.
 */
#define _POSIX_C_SOURCE 200809L
#include "data_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

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
 * official archive unpacks to. Anything by the first file's name counts: one
 * that is not a regular file is then reported as such, not as missing. */
static int cifar_find_dir(const char *dir, char *out, size_t len, char *err, size_t err_len)
{
    char probe[NN_PATH_LEN];
    if (data_check_dir(dir, err, err_len))
        return -1;
    if ((size_t)snprintf(out, len, "%s", dir) < len
        && (size_t)snprintf(probe, sizeof probe, "%s/%s", out, cifar_files[0]) < sizeof probe
        && data_exists(probe))
        return 0;
    if ((size_t)snprintf(out, len, "%s/cifar-10-batches-bin", dir) < len
        && (size_t)snprintf(probe, sizeof probe, "%s/%s", out, cifar_files[0]) < sizeof probe
        && data_exists(probe))
        return 0;
    return nn_errorf(err, err_len, "%s: no %s (nor cifar-10-batches-bin/%s)",
                     dir, cifar_files[0], cifar_files[0]);
}

/* The six files, open: each one's size is taken from the file that is then
 * read (fstat), so what was checked is what is read. */
typedef struct cifar_files_open {
    char path[CIFAR_FILES][NN_PATH_LEN];
    int fd[CIFAR_FILES];
    long records[CIFAR_FILES];
} cifar_files_open;

/* Whole records only: a partial one is reported where it starts. */
static int cifar_open(cifar_files_open *o, int i, char *err, size_t err_len)
{
    struct stat st;
    const char *path = o->path[i];
    o->fd[i] = data_open_regular(path, &st, err, err_len);
    if (o->fd[i] < 0)
        return -1;
    long long size = (long long)st.st_size, whole = size / CIFAR_RECORD;
    if (size % CIFAR_RECORD != 0)
        return nn_errorf(err, err_len, "%s: truncated at offset %lld: partial record of %lld "
                         "bytes (a record is 1 label byte + %d pixel bytes)",
                         path, whole * CIFAR_RECORD, size % CIFAR_RECORD, CIFAR_PIXELS);
    if (whole == 0)
        return nn_errorf(err, err_len, "%s: truncated at offset 0: empty file", path);
    o->records[i] = (long)whole;
    return 0;
}

static void cifar_close(cifar_files_open *o)
{
    for (int i = 0; i < CIFAR_FILES; i++)
        if (o->fd[i] >= 0)
            close(o->fd[i]);
}

/* Every official file holds 10000 records. Rather than hard-wire that (small
 * hand-made sets are useful), all six must hold the same number, which also
 * catches a file cut exactly at a record boundary. All six are sized before
 * any memory is taken. */
static int cifar_sizes(cifar_files_open *o, long *per_file, char *err, size_t err_len)
{
    long most = 0;
    for (int i = 0; i < CIFAR_FILES; i++) {
        if (cifar_open(o, i, err, err_len))
            return -1;
        if (o->records[i] > most)
            most = o->records[i];
    }
    for (int i = 0; i < CIFAR_FILES; i++) {
        if (o->records[i] < most)
            return nn_errorf(err, err_len, "%s: truncated at offset %lld: %ld records where "
                             "the other files hold %ld (an official batch has %d)",
                             o->path[i], (long long)o->records[i] * CIFAR_RECORD,
                             o->records[i], most, CIFAR_BATCH_RECORDS);
    }
    *per_file = most;
    return 0;
}

/* Exactly n bytes, or how many arrived before the end (-1 on an error). */
static ssize_t read_full(int fd, unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Reads `records` records of file i into x (records, 3072) and y (records). */
static int cifar_read_file(const cifar_files_open *o, int i, long records,
                           const float table[256], float *x, int32_t *y,
                           char *err, size_t err_len)
{
    unsigned char rec[CIFAR_RECORD];
    const char *path = o->path[i];
    for (long r = 0; r < records; r++) {
        long long offset = (long long)r * CIFAR_RECORD;
        ssize_t got = read_full(o->fd[i], rec, sizeof rec);
        /* the size was checked, so only an I/O error or a file that shrank
         * since gets here */
        if (got < 0)
            return nn_errorf(err, err_len, "%s: read error in the record at offset %lld: %s",
                             path, offset, strerror(errno));
        if (got != (ssize_t)sizeof rec)
            return nn_errorf(err, err_len, "%s: truncated at offset %lld: partial record",
                             path, offset + got);
        if (rec[0] >= N_CLASSES)
            return nn_errorf(err, err_len, "%s: label %u at offset %lld is not a class 0..%d",
                             path, rec[0], offset, N_CLASSES - 1);
        y[r] = rec[0];
        float *dst = x + (size_t)r * CIFAR_PIXELS;
        for (int j = 0; j < CIFAR_PIXELS; j++)
            dst[j] = table[rec[1 + j]];
    }
    return 0;
}

static int cifar_alloc(nn_dataset *d, long per_file, const char *dir, char *err, size_t err_len)
{
    d->n_train = per_file * CIFAR_TRAIN_FILES;
    d->n_val = per_file;
    d->train_x = data_alloc_array((size_t)d->n_train * CIFAR_PIXELS, sizeof(float));
    d->train_y = data_alloc_array((size_t)d->n_train, sizeof(int32_t));
    d->val_x = data_alloc_array((size_t)d->n_val * CIFAR_PIXELS, sizeof(float));
    d->val_y = data_alloc_array((size_t)d->n_val, sizeof(int32_t));
    if (!d->train_x || !d->train_y || !d->val_x || !d->val_y)
        return nn_errorf(err, err_len, "%s: out of memory for %ld CIFAR-10 images",
                         dir, d->n_train + d->n_val);
    return 0;
}

static int cifar_read_all(const cifar_files_open *o, nn_dataset *d, long per_file,
                          char *err, size_t err_len)
{
    float table[256];
    /* the normalisation of seed 000: transforms.Normalize((0.5,)*3, (0.5,)*3) */
    for (int v = 0; v < 256; v++)
        table[v] = ((float)v / 255.0f - 0.5f) / 0.5f;
    for (int i = 0; i < CIFAR_TRAIN_FILES; i++) {
        size_t first = (size_t)i * (size_t)per_file;
        if (cifar_read_file(o, i, per_file, table, d->train_x + first * CIFAR_PIXELS,
                            d->train_y + first, err, err_len))
            return -1;
    }
    return cifar_read_file(o, CIFAR_TRAIN_FILES, per_file, table, d->val_x, d->val_y,
                           err, err_len);
}

static int cifar_load(const char *root, nn_dataset *d, char *err, size_t err_len)
{
    char dir[NN_PATH_LEN];
    cifar_files_open o;
    long per_file = 0;
    int rc = -1;

    if (cifar_find_dir(root, dir, sizeof dir, err, err_len))
        return -1;
    for (int i = 0; i < CIFAR_FILES; i++) {
        o.fd[i] = -1;
        if (data_join_path(o.path[i], sizeof o.path[i], dir, cifar_files[i], err, err_len))
            return -1;
    }
    if (cifar_sizes(&o, &per_file, err, err_len) == 0
        && cifar_alloc(d, per_file, dir, err, err_len) == 0
        && cifar_read_all(&o, d, per_file, err, err_len) == 0)
        rc = 0;
    cifar_close(&o);
    if (rc != 0)
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

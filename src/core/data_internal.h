/* src/core/data_internal.h - what the data set loaders share; only
 * src/core/data*.c include it (the rest of the program uses data.h).
 *
 *   data.c            which data a preset gets (calls the readers below)
 *   data_idx.c        MNIST-format IDX files, gzip or plain
 *   data_cifar.c      CIFAR-10's binary version
 *   data_synthetic.c  synthetic classification sets and random regression
 *   data_set.c        the dataset struct, its buffers, and the file helpers
 *                     every reader shares (it calls none of the readers)
 *
 * Every loader builds into a local nn_dataset and hands it over with
 * data_finish(): on error everything is freed and *ds is left zeroed. */
#ifndef NNLAB_DATA_INTERNAL_H
#define NNLAB_DATA_INTERNAL_H

#include <stddef.h>

#include "data.h"

#define N_CLASSES 10                  /* MNIST, Fashion-MNIST and CIFAR-10 */
#define IDX_SIDE 28                   /* MNIST images are 28 x 28 */
#define CIFAR_SIDE 32                 /* CIFAR-10 images are 3 x 32 x 32 */

/* count elements of elem bytes, 64-byte aligned (2 MiB and huge pages when
 * large), not zero-filled; NULL when count is 0 or memory is short. Freed
 * with nn_free_aligned. */
void *data_alloc_array(size_t count, size_t elem);

/* The single exit of every loader: hands d over into *ds when rc is 0, frees
 * it otherwise (and zeroes *ds). Returns rc. */
int data_finish(nn_dataset *d, int rc, nn_dataset *ds);

/* snprintf into dst, truncating */
void data_set_text(char *dst, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The per-sample shape (rank 1 to 3) and sample_floats. */
void data_set_shape(nn_dataset *d, int rank, int d0, int d1, int d2);

/* "3x32x32"; preset_values.c has nn_shape_format, but the data files call
 * nothing of the preset or layer files. */
void data_format_shape(const nn_shape *s, char *buf, size_t len);

/* 1 when path names anything (a file that is not regular is then reported
 * by data_open_regular, not taken for a missing one). */
int data_exists(const char *path);

struct stat;
/* Opens path for reading if it is a regular file: the descriptor (with *st
 * filled), or -1 with "PATH: No such file or directory", "PATH: not a
 * regular file (a FIFO)" etc. Never blocks on a FIFO. */
int data_open_regular(const char *path, struct stat *st, char *err, size_t err_len);

/* An explicitly named directory must exist and let us open what it holds:
 * 0, or -1 with the reason ("permission denied" when it does not). */
int data_check_dir(const char *dir, char *err, size_t err_len);

/* out = dir/name, or -1 when it does not fit. */
int data_join_path(char *out, size_t len, const char *dir, const char *name,
                   char *err, size_t err_len);

/* How many of the four IDX files dir holds: 0 means "not installed here"
 * (data_idx.c). */
int data_idx_files_present(const char *dir);

/* d->description = "synthetic 1x28x28, 10 classes: 60000 train, 10000
 * validation (why)"; no parenthesis when why is NULL (data_synthetic.c). */
void data_describe_synthetic(nn_dataset *d, const char *why);

#endif

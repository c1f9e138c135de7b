/* src/core/data_set.c - the dataset struct and its buffers, and the file
 * helpers every reader shares (data_internal.h): the bottom of the data
 * files, calling none of them. data.c chooses the data a preset gets;
 * data_idx.c, data_cifar.c and data_synthetic.c read or make it.
 */
#define _POSIX_C_SOURCE 200809L
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1   /* madvise, MADV_HUGEPAGE */
#endif
#include "data_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* ---------------------------------------------------------------------------
 * Memory and the dataset struct
 */

#define HUGE_PAGE ((size_t)2 << 20)

/* 64-byte aligned like nn_alloc_aligned, but not zero-filled: every element is
 * written before use, and the pages of a buffer sized from a file's header are
 * only touched as the data really arrives. NULL when count is 0.
 * Buffers of many megabytes are 2 MiB aligned and asked for transparent huge
 * pages: faulting in 600 MB of 4 KiB pages costs more than generating the
 * synthetic data itself, and the training loop's random batches miss the TLB
 * less. */
void *data_alloc_array(size_t count, size_t elem)
{
    void *p = NULL;
    if (count == 0 || count > SIZE_MAX / elem)
        return NULL;
    size_t bytes = count * elem;
    int huge = bytes >= 4 * HUGE_PAGE;
    if (posix_memalign(&p, huge ? HUGE_PAGE : 64, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (huge)
        madvise(p, bytes & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);   /* advice only: failure is fine */
#endif
    return p;
}

void nn_data_free(nn_dataset *ds)
{
    if (!ds)
        return;
    nn_free_aligned(ds->train_x);
    nn_free_aligned(ds->val_x);
    nn_free_aligned(ds->train_y);
    nn_free_aligned(ds->val_y);
    nn_free_aligned(ds->train_t);
    nn_free_aligned(ds->val_t);
    memset(ds, 0, sizeof *ds);
}

int data_finish(nn_dataset *d, int rc, nn_dataset *ds)
{
    if (rc == 0) {
        *ds = *d;
    } else {
        nn_data_free(d);
        memset(ds, 0, sizeof *ds);
    }
    return rc;
}

void data_set_text(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

void data_set_shape(nn_dataset *d, int rank, int d0, int d1, int d2)
{
    d->input.rank = rank;
    d->input.dim[0] = d0;
    d->input.dim[1] = d1;
    d->input.dim[2] = d2;
    d->sample_floats = (size_t)d0 * (size_t)(rank > 1 ? d1 : 1) * (size_t)(rank > 2 ? d2 : 1);
}

void data_format_shape(const nn_shape *s, char *buf, size_t len)
{
    if (s->rank == 3)
        snprintf(buf, len, "%dx%dx%d", s->dim[0], s->dim[1], s->dim[2]);
    else if (s->rank == 2)
        snprintf(buf, len, "%dx%d", s->dim[0], s->dim[1]);
    else
        snprintf(buf, len, "%d", s->dim[0]);
}

int data_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever;
 * it changes nothing for the regular files we go on to read. */
int data_open_regular(const char *path, struct stat *st, char *err, size_t err_len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return nn_errorf(err, err_len, "%s: %s", path, strerror(errno));
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        return nn_errorf(err, err_len, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return nn_errorf(err, err_len, "%s: not a regular file (%s)", path, nn_file_kind(st->st_mode));
    }
    return fd;
}

/* stat needs only search permission on the folders above; the files inside
 * need it on the folder itself, and without it each would look absent. */
int data_check_dir(const char *dir, char *err, size_t err_len)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return nn_errorf(err, err_len, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return nn_errorf(err, err_len, "%s: not a directory", dir);
    if (access(dir, X_OK) != 0)
        return nn_errorf(err, err_len, "%s: permission denied (cannot open the files in "
                         "this folder)", dir);
    return 0;
}

int data_join_path(char *out, size_t len, const char *dir, const char *name,
                   char *err, size_t err_len)
{
    if ((size_t)snprintf(out, len, "%s/%s", dir, name) >= len)
        return nn_errorf(err, err_len, "%s/%s: path too long", dir, name);
    return 0;
}

/* ---- cancel ----------------------------------------------------------------------------- */

/* per thread: the lab's two jobs of a race each load on their own thread */
static _Thread_local atomic_int *watched_cancel;

void nn_data_watch_cancel(atomic_int *flag)
{
    watched_cancel = flag;
}

int nn_data_cancelled(void)
{
    return watched_cancel && atomic_load(watched_cancel);
}

/* src/common/npy.c - see npy.h. */
#include "npy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "util.h"

static int little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

size_t nn_npy_header(const long *shape, int rank, char *buf, size_t len)
{
    char dict[64 + 24 * NN_NPY_MAX_RANK];
    size_t n;
    if (rank < 0 || rank > NN_NPY_MAX_RANK)
        return 0;
    n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%cf4', 'fortran_order': False, 'shape': (",
                         little_endian() ? '<' : '>');
    /* Python's tuple: (4, 1), (20,) for one axis, () for none */
    for (int i = 0; i < rank; i++)
        n += (size_t)snprintf(dict + n, sizeof dict - n, "%ld%s", shape[i],
                              i + 1 < rank ? ", " : rank == 1 ? "," : "");
    n += (size_t)snprintf(dict + n, sizeof dict - n, "), }");
    /* 10 bytes before the dict, then the dict, spaces and '\n' to a multiple of 64 */
    size_t total = (10 + n + 1 + 63) / 64 * 64, h = total - 10;
    if (total > len || h > 65535)
        return 0;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(h & 0xff);
    buf[9] = (char)(h >> 8);
    memcpy(buf + 10, dict, n);
    memset(buf + 10 + n, ' ', h - n - 1);
    buf[total - 1] = '\n';
    return total;
}

typedef struct npy_job {
    const float *data;
    const long *shape;
    int rank;
} npy_job;

static int fill(FILE *f, const void *ctx)
{
    const npy_job *j = ctx;
    char head[128 + 24 * NN_NPY_MAX_RANK];
    size_t n = nn_npy_header(j->shape, j->rank, head, sizeof head), count = 1;
    if (n == 0) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < j->rank; i++)
        count *= (size_t)j->shape[i];
    if (fwrite(head, 1, n, f) != n || (count && fwrite(j->data, sizeof(float), count, f) != count)) {
        if (!errno)
            errno = EIO;
        return -1;
    }
    return 0;
}

int nn_npy_write(const char *path, const float *data, const long *shape, int rank, char *err,
                 size_t err_len)
{
    npy_job j = { data, shape, rank };
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0)
            return nn_errorf(err, err_len, "%s: shape axis %d is %ld", path, i, shape[i]);
    if (rank < 0 || rank > NN_NPY_MAX_RANK)
        return nn_errorf(err, err_len, "%s: rank %d: at most %d axes", path, rank, NN_NPY_MAX_RANK);
    return nn_write_atomic(path, fill, &j, err, err_len);
}

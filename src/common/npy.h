/* src/common/npy.h - writing float32 arrays as NumPy .npy files (format
 * version 1.0), so that anyone can load what nnlab computed with
 * numpy.load and check it against PyTorch.
 *
 * The format (numpy.lib.format, version 1.0), as written here:
 *   6 bytes   magic "\x93NUMPY"
 *   2 bytes   version: 1, 0
 *   2 bytes   header length H, little-endian
 *   H bytes   an ASCII Python dict literal, e.g.
 *             {'descr': '<f4', 'fortran_order': False, 'shape': (20, 1), }
 *             padded with spaces and ended by '\n' so that 10 + H is a
 *             multiple of 64 (numpy's alignment)
 *   then the values, float32 in the machine's byte order ('<f4' little-
 *   endian, '>f4' big-endian), C order (the last axis fastest). */
#ifndef NNLAB_NPY_H
#define NNLAB_NPY_H

#include <stddef.h>

#define NN_NPY_MAX_RANK 8

/* The header for a float32 array of shape (rank axes) into buf (at least
 * 128 bytes + 24 per axis); returns its total length (magic included), a
 * multiple of 64, or 0 when it does not fit in len. */
size_t nn_npy_header(const long *shape, int rank, char *buf, size_t len);

/* Writes data, of shape (rank axes), to path atomically (temp file, fsync,
 * rename). 0, or -1 with "path: why" in err. */
int nn_npy_write(const char *path, const float *data, const long *shape, int rank, char *err,
                 size_t err_len);

#endif

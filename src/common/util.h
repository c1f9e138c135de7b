/* src/common/util.h - small helpers every engine file uses: error formatting,
 * bounded string copies, aligned allocation, a monotonic clock. */
#ifndef NNLAB_UTIL_H
#define NNLAB_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define NN_ERR_LEN 512

/* snprintf into err (when err is not NULL) and return -1, so that error paths
 * read `return nn_errorf(err, len, "...", ...);`. */
int nn_errorf(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* strlcpy: always terminates, returns strlen(src). */
size_t nn_strlcpy(char *dst, const char *src, size_t size);

/* 64-byte aligned, zero-filled; NULL on failure (or when bytes is 0). */
void *nn_alloc_aligned(size_t bytes);
void nn_free_aligned(void *p);

/* CLOCK_MONOTONIC in seconds. */
double nn_now(void);

/* Strict number parsing: the whole string (surrounding blanks allowed) must be
 * a number. Return 0 on success, -1 otherwise. */
int nn_parse_long(const char *s, long *out);
int nn_parse_double(const char *s, double *out);

/* What a path that is not a regular file is, for messages: "a directory",
 * "a FIFO", "a character device", ... (mode is a struct stat's st_mode). */
const char *nn_file_kind(unsigned mode);

#endif

/* src/common/util.c - see util.h */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int nn_errorf(char *err, size_t err_len, const char *fmt, ...)
{
    if (err && err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

size_t nn_strlcpy(char *dst, const char *src, size_t size)
{
    size_t len = strlen(src);
    if (size) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}

void *nn_alloc_aligned(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        return NULL;
    /* round up so that vector loops may read whole cache lines */
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, rounded) != 0)
        return NULL;
    memset(p, 0, rounded);
    return p;
}

void nn_free_aligned(void *p)
{
    free(p);
}

double nn_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int only_blanks(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

int nn_parse_long(const char *s, long *out)
{
    char *end;
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || !only_blanks(end))
        return -1;
    *out = v;
    return 0;
}

int nn_parse_double(const char *s, double *out)
{
    char *end;
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !only_blanks(end) || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

const char *nn_file_kind(unsigned mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return S_ISREG(mode) ? "a regular file" : "not a plain file";
}

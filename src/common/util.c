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

/* Bytes of UTF-8 sequence at p that a terminal shows as text (1..4), or 0
 * for a byte to escape: a control, DEL, a C1 control (U+0080..U+009F, as
 * C2 80..C2 9F), a bidirectional control, or a byte that starts no valid
 * sequence. */
static size_t printable_run(const unsigned char *p)
{
    if (*p == '\n' || *p == '\t' || (*p >= 0x20 && *p < 0x7f))
        return 1;
    size_t n = *p >= 0xc2 && *p <= 0xdf ? 2 : *p >= 0xe0 && *p <= 0xef ? 3
             : *p >= 0xf0 && *p <= 0xf4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
        return 0;
    /* the bidirectional embeddings, overrides and isolates (U+202A..U+202E,
     * U+2066..U+2069): shown raw, one in a file name turns the rest of the
     * line around ("exe.txt" drawn for "txt.exe") */
    if (n == 3 && p[0] == 0xe2 && ((p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) ||
                                   (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))
        return 0;
    return n;
}

char *nn_text_safe(char *dst, size_t dst_len, const char *src)
{
    const unsigned char *p = (const unsigned char *)src;
    size_t used = 0;
    if (!dst_len)
        return dst;
    while (*p) {
        size_t n = printable_run(p);
        if (used + (n ? n : 4) >= dst_len)
            break;
        if (n) {
            memcpy(dst + used, p, n);
        } else {
            static const char hex[] = "0123456789ABCDEF";
            char esc[4] = { '\\', 'x', hex[*p >> 4], hex[*p & 15] };
            memcpy(dst + used, esc, 4);
        }
        used += n ? n : 4;
        p += n ? n : 1;
    }
    dst[used] = '\0';
    return dst;
}

const char *nn_safe(const char *src)
{
    static _Thread_local char ring[8][NN_SAFE_LEN];
    static _Thread_local unsigned next;
    char *dst = ring[next++ % 8];
    return nn_text_safe(dst, NN_SAFE_LEN, src ? src : "");
}

/* Copies text into err, its middle replaced by " ... " when it is longer than
 * err_len allows: the head (a path's start) and the tail (the reason) stay,
 * cut on UTF-8 character boundaries. */
static void fit_middle(char *err, size_t err_len, const char *text)
{
    static const char gap[] = " ... ";
    size_t n = strlen(text);
    if (n < err_len || err_len < 3 * sizeof gap) {
        nn_strlcpy(err, text, err_len);
        return;
    }
    size_t room = err_len - 1 - (sizeof gap - 1), head = room / 3, tail = room - head;
    while (head > 0 && ((unsigned char)text[head] & 0xc0) == 0x80)
        head--;
    const char *end = text + n - tail;
    while (*end && ((unsigned char)*end & 0xc0) == 0x80)
        end++;
    memcpy(err, text, head);
    memcpy(err + head, gap, sizeof gap - 1);
    memcpy(err + head + sizeof gap - 1, end, strlen(end) + 1);
}

int nn_errorf(char *err, size_t err_len, const char *fmt, ...)
{
    char text[2 * NN_ERR_LEN], *big = NULL;
    va_list ap;
    if (!err || !err_len)
        return -1;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof text && (big = malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    const char *raw = big ? big : text;
    size_t len = strlen(raw), safe_len = 4 * len + 1;
    char *safe = malloc(safe_len);
    if (safe) {
        fit_middle(err, err_len, nn_text_safe(safe, safe_len, raw));
        free(safe);
    } else {
        nn_text_safe(err, err_len, raw);
    }
    free(big);
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
    if (*s == '\0' || *s == '+')
        return -1;                   /* strtol takes "+3"; nothing of ours writes one */
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
    if (*s == '\0' || *s == '+')
        return -1;                   /* as nn_parse_long: a sign only when negative */
    const char *digits = *s == '-' ? s + 1 : s;
    if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
        return -1;                   /* strtod reads hexadecimal; every key of ours is decimal */
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

/* ---- file names from data ------------------------------------------------------------- */

static int stem_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

char *nn_file_stem(const char *name, const char *fallback, char *out, size_t out_len)
{
    if (out_len == 0)
        return out;
    size_t max = out_len - 1 < NN_STEM_MAX ? out_len - 1 : NN_STEM_MAX, n = 0;
    for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p && n < max; p++) {
        if (stem_char(*p))
            out[n++] = (char)*p;
        else if (*p == '.' && n > 0 && out[n - 1] != '.' && stem_char(p[1]))
            out[n++] = '.';          /* "v1.2" stays; "..", ".x" and "x." do not */
        else
            out[n++] = '_';
    }
    out[n] = '\0';
    if (n == 0)
        nn_strlcpy(out, fallback ? fallback : "", out_len);
    return out;
}

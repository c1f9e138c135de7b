/* src/common/util.h - small helpers every engine file uses: error formatting,
 * bounded string copies, aligned allocation, a monotonic clock. */
#ifndef NNLAB_UTIL_H
#define NNLAB_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define NN_ERR_LEN 512

/* snprintf into err (when err is not NULL) and return -1, so that error paths
 * read `return nn_errorf(err, len, "...", ...);`. The message is made
 * terminal-safe (nn_text_safe: it quotes file names, lines and values), and
 * one longer than err_len loses its middle, not its end: a long path must
 * not hide the reason that follows it. */
int nn_errorf(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Text from a file or the environment (a preset's name, description or
 * values, a file name, a path) made safe to print on a terminal: every
 * control character but newline and tab (ESC would start a sequence that
 * sets the title, writes the clipboard, moves the cursor), DEL, the C1
 * controls U+0080..U+009F and bytes that are not UTF-8 become \xNN. dst
 * (dst_len bytes) is always terminated; an escape is never cut in half.
 * Returns dst. */
char *nn_text_safe(char *dst, size_t dst_len, const char *src);

/* nn_text_safe into one of 8 per-thread buffers of NN_SAFE_LEN bytes, for
 * printf arguments: valid until 8 more calls in the same thread. */
#define NN_SAFE_LEN 4096
const char *nn_safe(const char *src);

/* A file name made from data (a preset's name in an export's name, a
 * profile's name): it must name a file in the folder chosen, never climb
 * out of it or hide. Letters, digits, '_' and '-' are kept, every other
 * byte ('/', '\\', control bytes, spaces, non-ASCII) becomes '_'; a '.' is
 * kept only between two kept characters that are not '.' (no "..", no
 * leading or trailing dot); at most NN_STEM_MAX bytes; an empty result is
 * `fallback`. Returns out (always terminated when out_len > 0). */
#define NN_STEM_MAX 64
char *nn_file_stem(const char *name, const char *fallback, char *out, size_t out_len);

/* strlcpy: always terminates, returns strlen(src). */
size_t nn_strlcpy(char *dst, const char *src, size_t size);

/* 64-byte aligned, zero-filled; NULL on failure (or when bytes is 0). */
void *nn_alloc_aligned(size_t bytes);
void nn_free_aligned(void *p);

/* CLOCK_MONOTONIC in seconds. */
double nn_now(void);

/* Strict number parsing: the whole string (surrounding blanks allowed) must be
 * a decimal number, signed only when negative ("+3" and "0x10" are refused,
 * alike in a preset and on the command line). Return 0 on success, -1
 * otherwise. */
int nn_parse_long(const char *s, long *out);
int nn_parse_double(const char *s, double *out);

/* What a path that is not a regular file is, for messages: "a directory",
 * "a FIFO", "a character device", ... (mode is a struct stat's st_mode). */
const char *nn_file_kind(unsigned mode);

#endif

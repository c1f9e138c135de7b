/* tests/fuzz/fuzz_files.h - what the harnesses share: a private folder for
 * the files a reader is given (the readers take paths), written whole on
 * each input. */
#ifndef NNLAB_FUZZ_FILES_H
#define NNLAB_FUZZ_FILES_H

#include <stddef.h>

/* A fresh folder under $TMPDIR (or /tmp), removed at exit; aborts when it
 * cannot be made (the harness could test nothing). */
const char *fuzz_dir(void);

/* dir/name written with exactly n bytes (the name's other spellings are not
 * touched); aborts on an I/O error. out receives the path. */
void fuzz_write(const char *name, const void *data, size_t n, char *out, size_t out_len);

/* Removes dir/name if it is there. */
void fuzz_remove(const char *name);

/* data compressed as one gzip member into a malloc'ed buffer (*n its size);
 * aborts when zlib fails. */
unsigned char *fuzz_gzip(const void *data, size_t len, size_t *n);

#endif

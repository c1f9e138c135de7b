/* tests/test_tmp.h - a scratch folder for a test program: made under
 * $TMPDIR (or /tmp) with a name that says which program, and removed with
 * everything in it when the group ends. */
#ifndef NNLAB_TEST_TMP_H
#define NNLAB_TEST_TMP_H

#include <stddef.h>

/* Makes "$TMPDIR/nnlab-test-NAME-XXXXXX" into root (len bytes); 0 or -1. */
int test_tmp_create(char *root, size_t len, const char *name);
/* Removes root and what it holds (links are removed, not followed); 0 or -1. */
int test_tmp_remove(const char *root);

#endif

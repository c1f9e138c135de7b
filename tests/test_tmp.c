/* tests/test_tmp.c - see test_tmp.h. */
#define _XOPEN_SOURCE 700
#include "test_tmp.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

int test_tmp_create(char *root, size_t len, const char *name)
{
    const char *base = getenv("TMPDIR");
    int n = snprintf(root, len, "%s/nnlab-test-%s-XXXXXX", base && base[0] ? base : "/tmp", name);
    if (n < 0 || (size_t)n >= len)
        return -1;
    return mkdtemp(root) ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int test_tmp_remove(const char *root)
{
    return nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

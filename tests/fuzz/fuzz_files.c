/* tests/fuzz/fuzz_files.c - see fuzz_files.h */
#define _DEFAULT_SOURCE 1   /* mkdtemp */
#include "fuzz_files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char dir[256];

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

const char *fuzz_dir(void)
{
    if (dir[0])
        return dir;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/nnlab-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    atexit(remove_dir);
    return dir;
}

void fuzz_write(const char *name, const void *data, size_t n, char *out, size_t out_len)
{
    if ((size_t)snprintf(out, out_len, "%s/%s", fuzz_dir(), name) >= out_len)
        abort();
    FILE *f = fopen(out, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
        perror(out);
        abort();
    }
}

void fuzz_remove(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    unlink(path);
}

unsigned char *fuzz_gzip(const void *data, size_t len, size_t *n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)   /* +16: gzip */
        abort();
    size_t cap = deflateBound(&z, (uLong)len) + 32;
    unsigned char *out = malloc(cap);
    if (!out)
        abort();
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        abort();
    *n = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

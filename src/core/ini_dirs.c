/* src/core/ini_dirs.c - see ini_dirs.h: the user's folder, then the shipped
 * one, for presets, GPU profiles and lessons alike. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "ini_dirs.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ends_with_ini(const char *s)
{
    size_t n = strlen(s);
    return n >= 4 && strcmp(s + n - 4, ".ini") == 0;
}

int nn_ini_is_path(const char *name)
{
    return strchr(name, '/') != NULL || ends_with_ini(name);
}

const char *nn_ini_env_dir(const char *env, const char *installed)
{
    const char *dir = getenv(env);
    return dir && dir[0] ? dir : installed;
}

int nn_ini_dirs(int (*user_dir)(char *, size_t), const char *system_dir, char *user, size_t user_len,
                const char *dirs[2])
{
    int n = 0;
    if (user_dir(user, user_len) == 0)
        dirs[n++] = user;
    dirs[n++] = system_dir;
    return n;
}

int nn_ini_find(const char *const *dirs, int n, const char *stem, char *path, size_t path_len)
{
    struct stat st;
    for (int i = 0; i < n; i++) {
        int w = snprintf(path, path_len, "%s/%s.ini", dirs[i], stem);
        if (w > 0 && (size_t)w < path_len && stat(path, &st) == 0 && S_ISREG(st.st_mode))
            return i;
    }
    if (path_len)
        path[0] = '\0';
    return -1;
}

static int cmp_stems(const void *a, const void *b) { return strcmp(a, b); }

/* Adds name's stem to *out (grown by doubling); 0 or -1 out of memory. */
static int add_stem(nn_ini_stem **out, int *n, int *cap, const char *name, size_t len)
{
    if (*n == *cap) {
        int grown_cap = *cap ? 2 * *cap : 16;
        nn_ini_stem *grown = realloc(*out, (size_t)grown_cap * sizeof **out);
        if (!grown)
            return -1;
        *out = grown;
        *cap = grown_cap;
    }
    snprintf((*out)[(*n)++], NN_NAME_LEN, "%.*s", (int)(len - 4), name);
    return 0;
}

int nn_ini_stems(const char *dir, nn_ini_stem **out, char *err, size_t err_len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0, cap = 0;
    *out = NULL;
    if (!d)
        return errno == ENOENT || errno == ENOTDIR ? 0
             : nn_errorf(err, err_len, "%s: cannot read the folder: %s", dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || !ends_with_ini(e->d_name) || len == 4 || len - 4 >= NN_NAME_LEN)
            continue;
        if (add_stem(out, &n, &cap, e->d_name, len) != 0) {
            closedir(d);
            free(*out);
            *out = NULL;
            return nn_errorf(err, err_len, "%s: out of memory", dir);
        }
    }
    closedir(d);
    if (n > 1)                       /* none: *out is NULL, which qsort may not be given */
        qsort(*out, (size_t)n, sizeof **out, cmp_stems);
    return n;
}

/* src/analysis/model/lesson_find.c - where lessons live: the user's data
 * folder ($XDG_DATA_HOME/nnlab/lessons) first, then the shipped one
 * ($NNLAB_LESSONS_DIR, else $(pkgdatadir)/lessons); NAME lookup and the
 * listing `nnlab lesson --list` and the lab show. See nnlab/lesson.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "nnlab/lesson.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "preset_file.h"
#include "util.h"
#include "xdg.h"

#ifndef NN_SYSTEM_LESSONS_DIR
#define NN_SYSTEM_LESSONS_DIR "/usr/local/share/nnlab/lessons"
#endif

int nn_lesson_user_dir(char *dir, size_t len)
{
    return nn_xdg_dir(NN_XDG_DATA, "lessons", dir, len);
}

const char *nn_lesson_system_dir(void)
{
    const char *env = getenv("NNLAB_LESSONS_DIR");
    return env && env[0] ? env : NN_SYSTEM_LESSONS_DIR;
}

static int ends_with_ini(const char *s)
{
    size_t n = strlen(s);
    return n >= 4 && strcmp(s + n - 4, ".ini") == 0;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int nn_lesson_find(const char *name_or_path, char *path, size_t path_len, char *err, size_t err_len)
{
    char user[NN_PATH_LEN];
    const char *dirs[2];
    int n = 0;
    if (!name_or_path || !name_or_path[0])
        return nn_errorf(err, err_len, "no lesson name given");
    if (strchr(name_or_path, '/') || ends_with_ini(name_or_path)) {
        if (nn_preset_file_check(name_or_path, err, err_len) != 0)
            return -1;
        if (nn_strlcpy(path, name_or_path, path_len) >= path_len)
            return nn_errorf(err, err_len, "%.64s...: path too long", name_or_path);
        return 0;
    }
    if (nn_lesson_user_dir(user, sizeof user) == 0)
        dirs[n++] = user;
    dirs[n++] = nn_lesson_system_dir();
    for (int i = 0; i < n; i++) {
        int w = snprintf(path, path_len, "%s/%s.ini", dirs[i], name_or_path);
        if (w > 0 && (size_t)w < path_len && is_file(path))
            return 0;
    }
    path[0] = '\0';
    return nn_errorf(err, err_len, "lesson '%s' not found (looked for %s.ini in %s%s%s; `nnlab lesson --list` "
                     "lists them)", name_or_path, name_or_path, dirs[0], n > 1 ? " and " : "", n > 1 ? dirs[1] : "");
}

static int cmp_entries(const void *a, const void *b)
{
    return strcmp(((const nn_lesson_entry *)a)->name, ((const nn_lesson_entry *)b)->name);
}

/* dir's lessons into out[0..max), each loaded for its title or its error,
 * sorted; returns how many. A missing folder has none. */
static int list_dir(const char *dir, int user, nn_lesson_entry *out, int max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    nn_lesson *scratch = d ? malloc(sizeof *scratch) : NULL;
    while (scratch && n < max && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || !ends_with_ini(e->d_name) || len == 4 || len - 4 >= NN_NAME_LEN)
            continue;
        nn_lesson_entry *x = &out[n];
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%.*s", (int)(len - 4), e->d_name);
        if ((size_t)snprintf(x->path, sizeof x->path, "%s/%s", dir, e->d_name) >= sizeof x->path)
            continue;
        x->user = user;
        if (nn_lesson_load(x->path, scratch, x->error, sizeof x->error) == 0)
            nn_strlcpy(x->title, scratch->title, sizeof x->title);
        n++;
    }
    free(scratch);
    if (d)
        closedir(d);
    qsort(out, (size_t)n, sizeof *out, cmp_entries);
    return n;
}

int nn_lesson_list(nn_lesson_entry *out, int max)
{
    char user[NN_PATH_LEN];
    int n_user = nn_lesson_user_dir(user, sizeof user) == 0 ? list_dir(user, 1, out, max) : 0;
    int n_sys = list_dir(nn_lesson_system_dir(), 0, out + n_user, max - n_user);
    for (int i = n_user; i < n_user + n_sys; i++)
        for (int j = 0; j < n_user; j++)
            out[i].shadowed |= strcmp(out[i].name, out[j].name) == 0;
    return n_user + n_sys;
}

/* src/analysis/model/lesson_find.c - where lessons live: the user's data
 * folder ($XDG_DATA_HOME/nnlab/lessons) first, then the shipped one
 * ($NNLAB_LESSONS_DIR, else $(pkgdatadir)/lessons); NAME lookup and the
 * listing `nnlab lesson --list` and the lab show. See nnlab/lesson.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "nnlab/lesson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini_dirs.h"
#include "preset_file.h"
#include "preset_values.h"
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
    return nn_ini_env_dir("NNLAB_LESSONS_DIR", NN_SYSTEM_LESSONS_DIR);
}

int nn_lesson_find(const char *name_or_path, char *path, size_t path_len, char *err, size_t err_len)
{
    char user[NN_PATH_LEN], looked[2 * NN_PATH_LEN];
    const char *dirs[2];
    if (!name_or_path || !name_or_path[0])
        return nn_errorf(err, err_len, "no lesson name given");
    if (nn_ini_is_path(name_or_path)) {
        if (nn_preset_file_check(name_or_path, err, err_len) != 0)
            return -1;
        if (nn_strlcpy(path, name_or_path, path_len) >= path_len)
            return nn_errorf(err, err_len, "%.64s...: path too long", name_or_path);
        return 0;
    }
    int n = nn_ini_dirs(nn_lesson_user_dir, nn_lesson_system_dir(), user, sizeof user, dirs);
    if (nn_ini_find(dirs, n, name_or_path, path, path_len) >= 0)
        return 0;
    nn_join_names(dirs, n, looked, sizeof looked);
    return nn_errorf(err, err_len, "lesson '%s' not found (looked for %s.ini in %s; `nnlab lesson --list` "
                     "lists them)", name_or_path, name_or_path, looked);
}

/* dir's lessons into out[0..max), each loaded for its title or its error,
 * sorted by name; returns how many. A folder missing or unreadable has none. */
static int list_dir(const char *dir, int user, nn_lesson_entry *out, int max)
{
    nn_ini_stem *stems;
    char err[NN_ERR_LEN];
    int n = nn_ini_stems(dir, &stems, err, sizeof err), k = 0;
    nn_lesson *scratch = n > 0 ? malloc(sizeof *scratch) : NULL;
    for (int i = 0; scratch && i < n && k < max; i++) {
        nn_lesson_entry *x = &out[k];
        memset(x, 0, sizeof *x);
        nn_strlcpy(x->name, stems[i], sizeof x->name);
        if ((size_t)snprintf(x->path, sizeof x->path, "%s/%s.ini", dir, stems[i]) >= sizeof x->path)
            continue;
        x->user = user;
        if (nn_lesson_load(x->path, scratch, x->error, sizeof x->error) == 0)
            nn_strlcpy(x->title, scratch->title, sizeof x->title);
        k++;
    }
    free(scratch);
    free(stems);
    return k;
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

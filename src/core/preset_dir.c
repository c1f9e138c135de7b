/* src/core/preset_dir.c - where presets live: the user's folder
 * ($XDG_CONFIG_HOME/nnlab/presets) and the shipped one, NAME lookup (the
 * user's first) and the listing the lab and `nnlab presets` show. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "ini_dirs.h"
#include "preset_file.h"
#include "preset_values.h"
#include "util.h"
#include "xdg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef NN_SYSTEM_PRESETS_DIR
#define NN_SYSTEM_PRESETS_DIR "/usr/local/share/nnlab/presets"
#endif

int nn_preset_user_dir(char *dir, size_t len)
{
    return nn_xdg_dir(NN_XDG_CONFIG, "presets", dir, len);
}

const char *nn_preset_system_dir(void)
{
    return nn_ini_env_dir("NNLAB_PRESETS_DIR", NN_SYSTEM_PRESETS_DIR);
}

int nn_preset_find(const char *name_or_path, char *path, size_t path_len,
                   char *err, size_t err_len)
{
    const char *dirs[2];
    char user[NN_PATH_LEN], looked[2 * NN_PATH_LEN];
    if (!name_or_path || !name_or_path[0])
        return nn_errorf(err, err_len, "no preset name given");
    if (nn_ini_is_path(name_or_path)) {
        if (nn_preset_file_check(name_or_path, err, err_len) != 0)
            return -1;
        if (nn_strlcpy(path, name_or_path, path_len) >= path_len)
            return nn_errorf(err, err_len, "%.64s...: path too long", name_or_path);
        return 0;
    }
    /* $NNLAB_PRESETS_DIR replaces the installed folder rather than adding to
     * it: the folders nn_preset_list shows */
    int n = nn_ini_dirs(nn_preset_user_dir, nn_preset_system_dir(), user, sizeof user, dirs);
    if (nn_ini_find(dirs, n, name_or_path, path, path_len) >= 0)
        return 0;
    nn_join_names(dirs, n, looked, sizeof looked);
    return nn_errorf(err, err_len, "preset '%s' not found (looked for %s.ini in %s)",
                     name_or_path, name_or_path, looked);
}

/* Appends dir's presets to out[0..max), loading each for its description or
 * its error; those past max are added to *left. Returns how many were
 * added, or -1. */
static int list_dir(const char *dir, int user, nn_preset_entry *out, int max, int *left, char *err,
                    size_t err_len)
{
    nn_ini_stem *stems;
    nn_preset scratch;
    int n = nn_ini_stems(dir, &stems, err, err_len), k = 0, i;
    for (i = 0; i < n && k < max; i++) {
        nn_preset_entry *e = &out[k];
        memset(e, 0, sizeof *e);
        nn_strlcpy(e->name, stems[i], sizeof e->name);
        if ((size_t)snprintf(e->path, sizeof e->path, "%s/%s.ini", dir, stems[i]) >= sizeof e->path)
            continue;
        e->user = user;
        if (nn_preset_load(e->path, &scratch, e->error, sizeof e->error) == 0)
            nn_strlcpy(e->description, scratch.description, sizeof e->description);
        k++;
    }
    free(stems);
    if (n > i)
        *left += n - i;
    return n < 0 ? -1 : k;
}

int nn_preset_list(nn_preset_entry *out, int max, int *left_out, char *err, size_t err_len)
{
    char user[NN_PATH_LEN];
    int n_user = 0, n_sys, left = 0;
    if (nn_preset_user_dir(user, sizeof user) == 0)
        n_user = list_dir(user, 1, out, max, &left, err, err_len);
    n_sys = n_user < 0 ? -1
          : list_dir(nn_preset_system_dir(), 0, out + n_user, max - n_user, &left, err, err_len);
    if (left_out)
        *left_out = left;
    if (n_sys < 0)
        return -1;
    for (int i = n_user; i < n_user + n_sys; i++)
        for (int j = 0; j < n_user; j++)
            if (strcmp(out[i].name, out[j].name) == 0)
                out[i].shadowed = 1;
    return n_user + n_sys;
}

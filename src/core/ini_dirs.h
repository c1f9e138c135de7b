/* src/core/ini_dirs.h - where nnlab's INI files of one kind live and how a
 * NAME is found among them: the user's folder first, then the shipped one
 * (or the folder an environment variable names instead), NAME.ini in the
 * first that has it, and the names a folder holds. Presets, GPU profiles and
 * lessons are found alike (src/core/preset_dir.c,
 * src/analysis/model/profile_find.c, lesson_find.c). */
#ifndef NNLAB_INI_DIRS_H
#define NNLAB_INI_DIRS_H

#include <stddef.h>

#include "nnlab/preset.h"          /* NN_NAME_LEN */

/* A file name without its ".ini". */
typedef char nn_ini_stem[NN_NAME_LEN];

/* The shipped folder: $ENV when set and not empty (a test's, or a
 * build's own tree), else the installed one. */
const char *nn_ini_env_dir(const char *env, const char *installed);

/* The folders a NAME is looked for in, in order: the user's (when user_dir
 * gives one: HOME or XDG set; written into user) then system_dir. Returns
 * how many (1 or 2); dirs[0..n) point into user or at system_dir. */
int nn_ini_dirs(int (*user_dir)(char *, size_t), const char *system_dir, char *user, size_t user_len,
                const char *dirs[2]);

/* dirs[i]/stem.ini in order: the index of the first folder holding it as a
 * regular file, with its path; -1 (path "") when none does. */
int nn_ini_find(const char *const *dirs, int n, const char *stem, char *path, size_t path_len);

/* A name given as a path rather than looked up: it holds a '/' or ends in
 * ".ini". */
int nn_ini_is_path(const char *name);

/* The *.ini stems in dir, sorted; a missing folder has none. Returns how
 * many (*out malloc'ed: free it) or -1 with err ("DIR: cannot read the
 * folder: ..."). */
int nn_ini_stems(const char *dir, nn_ini_stem **out, char *err, size_t err_len);

#endif

/* src/analysis/model/profile_find.c - where GPU profiles live (the user's
 * folder, the system's), finding one by name or path, listing them, and the
 * shipped profile of a GPU that is here. Reading one is profile.c. See
 * profile.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "nnlab/profile.h"
#include "profile_find.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ini_dirs.h"
#include "preset_file.h"
#include "preset_values.h"
#include "util.h"
#include "xdg.h"

#ifndef NN_SYSTEM_PROFILES_DIR
#define NN_SYSTEM_PROFILES_DIR "/usr/local/share/nnlab/profiles"
#endif

/* ---- where profiles live ------------------------------------------------------------------ */

int nn_profile_user_dir(char *dir, size_t len)
{
    return nn_xdg_dir(NN_XDG_CONFIG, "profiles", dir, len);
}

const char *nn_profile_system_dir(void)
{
    return nn_ini_env_dir("NNLAB_PROFILES_DIR", NN_SYSTEM_PROFILES_DIR);
}

const char *nn_profile_default_name(void)
{
    const char *env = getenv("NNLAB_GPU_PROFILE");
    return env && env[0] ? env : NN_DEFAULT_GPU_PROFILE;
}

void nn_profile_stem(const char *name, char *stem, size_t len)
{
    size_t n = 0;
    for (; name[n] && n + 1 < len; n++) {
        unsigned char c = (unsigned char)name[n];
        stem[n] = isalnum(c) || c == '.' || c == '_' || c == '-' ? (char)tolower(c) : '-';
    }
    if (len)
        stem[n] = '\0';
}

int nn_profile_user_path(const char *name, char *path, size_t len)
{
    char dir[NN_PATH_LEN], stem[NN_NAME_LEN];
    if (nn_profile_user_dir(dir, sizeof dir) != 0)
        return -1;
    nn_profile_stem(name, stem, sizeof stem);
    int n = snprintf(path, len, "%s/%s.ini", dir, stem);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int nn_profile_find(const char *name_or_path, nn_gpu_profile *out, char *err, size_t err_len)
{
    char user[NN_PATH_LEN], path[NN_PATH_LEN + NN_NAME_LEN + 8], lower[NN_NAME_LEN],
         looked[2 * NN_PATH_LEN];
    const char *dirs[2];
    if (!name_or_path || !name_or_path[0])
        return nn_errorf(err, err_len, "no GPU profile named");
    if (nn_ini_is_path(name_or_path))
        return nn_profile_load(name_or_path, out, err, err_len);
    if (strlen(name_or_path) >= sizeof lower)
        return nn_errorf(err, err_len, "GPU profile '%.32s...': name too long", name_or_path);
    nn_profile_stem(name_or_path, lower, sizeof lower);
    int n = nn_ini_dirs(nn_profile_user_dir, nn_profile_system_dir(), user, sizeof user, dirs);
    int found = nn_ini_find(dirs, n, lower, path, sizeof path);
    if (found >= 0) {
        if (nn_profile_load(path, out, err, err_len) != 0)
            return -1;
        out->user = dirs[found] == user;
        return 0;
    }
    nn_join_names(dirs, n, looked, sizeof looked);
    return nn_errorf(err, err_len, "no GPU profile '%s' (looked for %s.ini in %s; `nnlab devices` lists them)",
                     name_or_path, lower, looked);
}

/* ---- the list ------------------------------------------------------------------------------ */

static int by_id(const void *a, const void *b)
{
    return strcmp(((const nn_profile_entry *)a)->p.id, ((const nn_profile_entry *)b)->p.id);
}

/* The .ini files of dir into out[n..max), each loaded (or its id and
 * error kept), sorted by id; returns the new count. */
static int list_dir(const char *dir, int user, nn_profile_entry *out, int n, int max)
{
    nn_ini_stem *stems;
    char err[NN_ERR_LEN];
    int found = nn_ini_stems(dir, &stems, err, sizeof err), first = n;
    for (int i = 0; i < found && n < max; i++) {
        nn_profile_entry *e = &out[n];
        memset(e, 0, sizeof *e);
        if ((size_t)snprintf(e->path, sizeof e->path, "%s/%s.ini", dir, stems[i]) >= sizeof e->path)
            continue;
        if (nn_profile_load(e->path, &e->p, e->error, sizeof e->error) != 0)
            nn_profile_id_of_path(e->path, e->p.id, sizeof e->p.id);
        e->p.user = user;
        n++;
    }
    free(stems);
    qsort(out + first, (size_t)(n - first), sizeof *out, by_id);
    return n;
}

int nn_profile_list(nn_profile_entry *out, int max)
{
    char user[NN_PATH_LEN];
    int n = 0, users = 0;
    if (nn_profile_user_dir(user, sizeof user) == 0)
        n = users = list_dir(user, 1, out, 0, max);
    n = list_dir(nn_profile_system_dir(), 0, out, n, max);
    for (int i = users; i < n; i++)
        for (int u = 0; u < users; u++)
            if (!strcmp(out[i].p.id, out[u].p.id))
                out[i].shadowed = 1;
    return n;
}

/* ---- the profile of a GPU that is here ---------------------------------------------------- */

/* Words of a GPU's name that say no more than "an NVIDIA GPU". */
static int vendor_word(const char *w)
{
    static const char *const words[] = { "nvidia", "geforce", "tesla", "quadro" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(w, words[i]))
            return 1;
    return 0;
}

#define MODEL_WORDS 3

/* The first three words of a device's name after the vendor's, lower case,
 * split at spaces, '-', '(' and ',': "NVIDIA H100 80GB HBM3" -> "h100",
 * "80gb", "hbm3"; "NVIDIA GeForce RTX 4090 (GPU 0 of 1)" -> "rtx", "4090". */
static int model_words(const char *device, char words[MODEL_WORDS][NN_NAME_LEN])
{
    int n = 0;
    for (const char *s = device; *s && n < MODEL_WORDS;) {
        size_t len = strcspn(s, " -(,\t");
        if (len > 0 && len < NN_NAME_LEN) {
            char w[NN_NAME_LEN];
            for (size_t i = 0; i < len; i++)
                w[i] = (char)tolower((unsigned char)s[i]);
            w[len] = '\0';
            if (!vendor_word(w))
                memcpy(words[n++], w, len + 1);
        }
        if (*s == '(')
            break;                   /* "(GPU 0 of 1)": the backend's words, not the name */
        s += len + (s[len] != '\0');
    }
    return n;
}

/* A word after a model's that makes it another card: "RTX 3060 Ti". */
static int variant_word(char words[MODEL_WORDS][NN_NAME_LEN], int n, int i)
{
    return i < n && (!strcmp(words[i], "ti") || !strcmp(words[i], "super"));
}

/* 1 when the profile is for the GPU of these model words: its file stem or
 * its name's is the first word ("h200") or the first two together
 * ("rtx" "4090" -> "rtx4090"), and no variant's word follows. */
static int profile_matches(const nn_gpu_profile *p, char words[MODEL_WORDS][NN_NAME_LEN], int n)
{
    char name_stem[NN_NAME_LEN], joined[MODEL_WORDS * NN_NAME_LEN + 1];
    size_t k = 0;
    nn_profile_stem(p->name, name_stem, sizeof name_stem);
    for (size_t i = 0; name_stem[i] && k + 1 < sizeof name_stem; i++)
        if (name_stem[i] != '-')
            name_stem[k++] = name_stem[i];      /* "RTX 4090" -> "rtx4090" */
    name_stem[k] = '\0';
    snprintf(joined, sizeof joined, "%s%s", words[0], n > 1 ? words[1] : "");
    for (int i = 0; i < 2; i++) {
        const char *want = i ? joined : words[0];
        if ((!strcmp(p->id, want) || !strcmp(name_stem, want)) && !variant_word(words, n, i + 1))
            return 1;
    }
    return 0;
}

int nn_profile_for_device(const char *device, nn_gpu_profile *out)
{
    enum { MAX_PROFILES = 64 };
    char words[MODEL_WORDS][NN_NAME_LEN];
    int n = device ? model_words(device, words) : 0, found = -1;
    nn_profile_entry *list = n > 0 ? calloc(MAX_PROFILES, sizeof *list) : NULL;
    if (!list)
        return -1;                   /* no model words, or no memory: no match claimed */
    int count = nn_profile_list(list, MAX_PROFILES);
    for (int i = 0; i < count && found < 0; i++)
        if (!list[i].error[0] && !list[i].shadowed && profile_matches(&list[i].p, words, n)) {
            *out = list[i].p;
            found = 0;
        }
    free(list);
    return found;
}

/* src/analysis/model/link.c - link profiles: where they live, reading one
 * (the presets' capped reader, every key known, numbers strictly parsed and
 * in range), finding one by name, listing them, and writing one (a link
 * calibrated here); see nnlab/link.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "nnlab/link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <iniparser/iniparser.h>

#include "atomic_file.h"
#include "ini_dirs.h"
#include "nnlab/profile.h"
#include "preset_file.h"
#include "preset_values.h"
#include "util.h"
#include "xdg.h"

/* ---- where they live ----------------------------------------------------------------------- */

int nn_link_user_dir(char *dir, size_t len)
{
    return nn_xdg_dir(NN_XDG_CONFIG, "profiles/links", dir, len);
}

/* Beside the GPU profiles, so that $NNLAB_PROFILES_DIR moves both. */
int nn_link_system_dir(char *dir, size_t len)
{
    int n = snprintf(dir, len, "%s/links", nn_profile_system_dir());
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

const char *nn_link_origin(const nn_link *l)
{
    if (!l->measured)
        return "from its datasheet or standard";
    return l->user ? "measured here by nnlab calibrate --link" : "measured on the machine its file names";
}

const char *nn_link_default_name(int gpu)
{
    return gpu ? NN_DEFAULT_GPU_LINK : NN_DEFAULT_LINK;
}

/* ---- reading one --------------------------------------------------------------------------- */

typedef struct link_number {
    const char *key;
    size_t off;
    double lo, hi;
    const char *what;
} link_number;

static const link_number numbers[] = {
    { "bandwidth_gbps", offsetof(nn_link, bandwidth_gbps), 1e-4, 1e5,
      "GB/s one rank moves each way: the ring's bus bandwidth" },
    { "hop_us", offsetof(nn_link, hop_us), 0, 1e6, "one message's fixed cost, us" },
};
#define N_NUMBERS (sizeof numbers / sizeof numbers[0])
static const char *const texts[] = { "name", "description", "measured" };
#define N_TEXTS (sizeof texts / sizeof texts[0])

static int known_key(const char *key)
{
    for (size_t i = 0; i < N_NUMBERS; i++)
        if (!strcmp(key, numbers[i].key))
            return 1;
    for (size_t i = 0; i < N_TEXTS; i++)
        if (!strcmp(key, texts[i]))
            return 1;
    return 0;
}

/* One section, [link], and only its keys: a typo is an error, not a default. */
static int check_entries(const dictionary *d, const char *path, char *err, size_t err_len)
{
    for (ssize_t i = 0; i < d->size; i++) {
        const char *key = d->key[i];
        if (!key)
            continue;
        if (key[0] == ':')
            return nn_errorf(err, err_len, "%s: %s: key outside any section", path, key + 1);
        const char *colon = strchr(key, ':');
        if (!d->val[i] && strcmp(key, "link") != 0)
            return nn_errorf(err, err_len, "%s: [%s]: unknown section (expected [link])", path, key);
        if (d->val[i] && (!colon || strncmp(key, "link:", 5) != 0 || !known_key(colon + 1)))
            return nn_errorf(err, err_len, "%s: [%.*s] %s: unknown key", path, colon ? (int)(colon - key) : 0,
                             key, colon ? colon + 1 : key);
    }
    return 0;
}

static const char *raw(const dictionary *d, const char *key)
{
    char full[64];
    snprintf(full, sizeof full, "link:%s", key);
    return iniparser_getstring((dictionary *)d, full, NULL);
}

static int read_numbers(const dictionary *d, const char *path, nn_link *l, char *err, size_t err_len)
{
    for (size_t i = 0; i < N_NUMBERS; i++) {
        const link_number *f = &numbers[i];
        const char *s = raw(d, f->key);
        double v;
        if (!s)
            return nn_errorf(err, err_len, "%s: [link] %s: missing (%s)", path, f->key, f->what);
        if (nn_parse_double(s, &v) != 0)
            return nn_errorf(err, err_len, "%s: [link] %s = %s: not a number", path, f->key, s);
        if (!(v >= f->lo && v <= f->hi))
            return nn_errorf(err, err_len, "%s: [link] %s = %s: must be in %g..%g", path, f->key, s, f->lo, f->hi);
        *(double *)((char *)l + f->off) = v;
    }
    return 0;
}

static int read_texts(const dictionary *d, const char *path, nn_link *l, char *err, size_t err_len)
{
    const char *name = raw(d, "name"), *desc = raw(d, "description"), *measured = raw(d, "measured");
    if (name && !name[0])
        return nn_errorf(err, err_len, "%s: [link] name: must not be empty", path);
    if (name && nn_strlcpy(l->name, name, sizeof l->name) >= sizeof l->name)
        return nn_errorf(err, err_len, "%s: [link] name: too long (at most %zu bytes)", path, sizeof l->name - 1);
    if (desc)
        nn_strlcpy(l->description, desc, sizeof l->description);
    if (measured && strcasecmp(measured, "true") && strcasecmp(measured, "false"))
        return nn_errorf(err, err_len, "%s: [link] measured = %s: expected true or false", path, measured);
    l->measured = measured && !strcasecmp(measured, "true");
    return 0;
}

/* "shm" from ".../shm.ini" */
static void id_of_path(const char *path, char *out, size_t len)
{
    const char *base = strrchr(path, '/');
    nn_strlcpy(out, base ? base + 1 : path, len);
    size_t n = strlen(out);
    if (n > 4 && !strcmp(out + n - 4, ".ini"))
        out[n - 4] = '\0';
}

int nn_link_load(const char *path, nn_link *out, char *err, size_t err_len)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    if (stat(path, &st) != 0)
        return nn_errorf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return nn_errorf(err, err_len, "%s: not a regular file", path);
    dictionary *d = NULL;
    if (nn_ini_load(path, "link profile", &d, err, err_len) != 0)
        return -1;
    id_of_path(path, out->id, sizeof out->id);
    nn_strlcpy(out->name, out->id, sizeof out->name);
    int rc = check_entries(d, path, err, err_len) || read_numbers(d, path, out, err, err_len) ||
             read_texts(d, path, out, err, err_len);
    iniparser_freedict(d);
    return rc ? -1 : 0;
}

/* ---- finding and listing ------------------------------------------------------------------- */

static void known_names(char *buf, size_t len);

int nn_link_find(const char *name_or_path, nn_link *out, char *err, size_t err_len)
{
    char user[NN_PATH_LEN], system[NN_PATH_LEN], path[NN_PATH_LEN + NN_NAME_LEN + 8], looked[2 * NN_PATH_LEN];
    const char *dirs[2];
    if (!name_or_path || !name_or_path[0])
        return nn_errorf(err, err_len, "no link profile named");
    if (nn_ini_is_path(name_or_path))
        return nn_link_load(name_or_path, out, err, err_len);
    if (strlen(name_or_path) >= NN_NAME_LEN || strchr(name_or_path, '/'))
        return nn_errorf(err, err_len, "link profile '%.32s': not a name", name_or_path);
    if (nn_link_system_dir(system, sizeof system) != 0)
        return nn_errorf(err, err_len, "the shipped link profiles' folder: path too long");
    int n = nn_ini_dirs(nn_link_user_dir, system, user, sizeof user, dirs);
    int found = nn_ini_find(dirs, n, name_or_path, path, sizeof path);
    if (found >= 0) {
        if (nn_link_load(path, out, err, err_len) != 0)
            return -1;
        out->user = dirs[found] == user;
        return 0;
    }
    nn_join_names(dirs, n, looked, sizeof looked);
    char names[512];
    known_names(names, sizeof names);
    return nn_errorf(err, err_len, "no link profile '%s' (looked for %s.ini in %s; there are: %s)", name_or_path,
                     name_or_path, looked, names);
}

/* dir's loadable profiles into out[n..max), a name the user's folder
 * already gave skipped; returns the new count. */
static int list_dir(const char *dir, int user, nn_link *out, int n, int max)
{
    nn_ini_stem *stems;
    char err[NN_ERR_LEN], path[NN_PATH_LEN + NN_NAME_LEN + 8];
    int found = nn_ini_stems(dir, &stems, err, sizeof err), users = n;
    for (int i = 0; i < found && n < max; i++) {
        int shadowed = 0;
        for (int u = 0; u < users && !user; u++)
            shadowed |= !strcmp(out[u].id, stems[i]);
        if (shadowed || (size_t)snprintf(path, sizeof path, "%s/%s.ini", dir, stems[i]) >= sizeof path ||
            nn_link_load(path, &out[n], err, sizeof err) != 0)
            continue;
        out[n++].user = user;
    }
    free(stems);
    return n;
}

int nn_link_list(nn_link *out, int max)
{
    char user[NN_PATH_LEN], system[NN_PATH_LEN];
    int n = 0;
    if (nn_link_user_dir(user, sizeof user) == 0)
        n = list_dir(user, 1, out, 0, max);
    if (nn_link_system_dir(system, sizeof system) == 0)
        n = list_dir(system, 0, out, n, max);
    return n;
}

/* "infiniband-hdr, nvlink4, ..." (the user's first), for a name not found. */
static void known_names(char *buf, size_t len)
{
    nn_link all[64];
    int n = nn_link_list(all, 64);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", all[i].id);
    if (!n)
        snprintf(buf, len, "none");
}

/* ---- writing one --------------------------------------------------------------------------- */

typedef struct link_out {
    const nn_link *l;
    const char *origin;
} link_out;

static int fill_link(FILE *f, const void *ctx)
{
    const link_out *o = ctx;
    const nn_link *l = o->l;
    char q = strchr(l->description, '"') ? '\'' : '"';
    if (fprintf(f, "; %s\n; The format is described in nnlab(1), LINK PROFILES.\n\n[link]\n", o->origin) < 0 ||
        fprintf(f, "name = \"%s\"\ndescription = %c%s%c\nmeasured = %s\n", l->name, q, l->description, q,
                l->measured ? "true" : "false") < 0)
        return -1;
    for (size_t i = 0; i < N_NUMBERS; i++)
        if (fprintf(f, "; %s\n%s = %.6g\n", numbers[i].what, numbers[i].key,
                    *(const double *)((const char *)l + numbers[i].off)) < 0)
            return -1;
    return 0;
}

int nn_link_save(const char *path, const nn_link *l, const char *origin, char *err, size_t err_len)
{
    link_out o = { l, origin && origin[0] ? origin : "a link profile of nnlab" };
    if (strchr(l->name, '"') || strchr(l->name, '\n') || strchr(l->description, '\n') ||
        (strchr(l->description, '"') && strchr(l->description, '\'')))
        return nn_errorf(err, err_len, "%s: the name or description cannot be stored", path);
    return nn_write_atomic(path, fill_link, &o, err, err_len);
}

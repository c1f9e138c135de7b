/* src/core/preset_read.c - nn_preset_load: the INI reader.
 *
 * iniparser splits the file into "section:key" -> raw string; every value is
 * parsed here (strict numbers, range checks), and every section and key must
 * be known and apply to the chosen data set, optimiser or layer type, so a
 * typo is an error instead of a silent default. nn_preset_check then runs
 * shape inference. Nothing here prints: every failure is one line in err. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "layer_kind.h"
#include "preset_file.h"
#include "preset_schema.h"
#include "preset_task.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <iniparser/iniparser.h>

typedef struct reader {
    dictionary *d;
    const char *file;
    nn_checker c;                /* same message format as the checker */
} reader;

/* The file read once (preset_file.c: a regular file, bounded, a BOM
 * dropped), its sections and keys counted (limits) and compared (repeats,
 * which iniparser would merge without a word), then parsed by iniparser
 * (nn_ini_load: a syntax error outranks a repeat). */
static int open_dict(reader *r)
{
    return nn_ini_load(r->file, "preset", &r->d, r->c.err, r->c.err_len);
}

static const char *raw(const reader *r, const char *section, const char *key)
{
    char full[64];
    snprintf(full, sizeof full, "%s:%s", section, key);
    return iniparser_getstring(r->d, full, NULL);
}

/* "layer7" -> 7; 0 for any other name; -1 for "layer0", "layer01", "layer65". */
static int layer_number(const char *section)
{
    const char *s = section + 5;
    long n;
    if (strncmp(section, "layer", 5) != 0 || !*s || strspn(s, "0123456789") != strlen(s))
        return 0;
    if (s[0] == '0' || strlen(s) > 3 || nn_parse_long(s, &n) != 0 || n > NN_MAX_LAYERS)
        return -1;
    return (int)n;
}

/* One section header: known, or a layer numbered 1..NN_MAX_LAYERS. */
static int check_section(const reader *r, const char *name, char *seen, int *max)
{
    int n = layer_number(name);
    if (n > 0) {
        seen[n] = 1;
        if (n > *max)
            *max = n;
        return 0;
    }
    if (n < 0)
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s]: layers are numbered layer1 .. layer%d, without leading zeros",
                         r->file, name, NN_MAX_LAYERS);
    if (nn_is_static_section(name))
        return 0;
    return nn_errorf(r->c.err, r->c.err_len, "%s: [%s]: unknown section (expected [preset], [data], [train], [optimizer], [gpu], [lab], [task] or [layer1], [layer2], ...)",
                     r->file, name);
}

/* Every section known; layers numbered 1..N without gaps; sets n_layers. A
 * section header is an entry with no value; a key before any section is
 * stored by iniparser as ":key". */
static int check_sections(const reader *r, nn_preset *p)
{
    char seen[NN_MAX_LAYERS + 1] = { 0 };
    int max = 0;
    for (ssize_t i = 0; i < r->d->size; i++) {
        const char *key = r->d->key[i];
        if (!key)
            continue;
        if (key[0] == ':')
            return nn_errorf(r->c.err, r->c.err_len, "%s: %s: key outside any section", r->file, key + 1);
        if (!r->d->val[i] && check_section(r, key, seen, &max) != 0)
            return -1;
    }
    if (max == 0)
        return nn_errorf(r->c.err, r->c.err_len, "%s: no [layer1] section: a preset needs at least one layer", r->file);
    for (int n = 1; n <= max; n++)
        if (!seen[n])
            return nn_errorf(r->c.err, r->c.err_len, "%s: [layer%d]: missing, but [layer%d] exists: number the layers 1..N without gaps",
                             r->file, n, max);
    p->n_layers = max;
    return 0;
}

/* An enumerated value: 0 when read, 1 when absent and optional, -1 on error. */
static int read_choice(const reader *r, const char *section, const char *key,
                       const char *const *names, int n, int required, int *out)
{
    const char *s = raw(r, section, key);
    char list[NN_TEXT_LEN];
    nn_join_names(names, n, list, sizeof list);
    if (!s && !required)
        return 1;
    if (!s)
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: missing (expected %s)", r->file, section, key, list);
    *out = nn_find_name(names, n, s);
    if (*out < 0)
        return nn_key_error(&r->c, section, key, s, "expected %s", list);
    return 0;
}

static int read_text(const reader *r, const char *section, const char *key, char *dst, size_t len)
{
    const char *s = raw(r, section, key);
    if (s && nn_strlcpy(dst, s, len) >= len)
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: too long (at most %zu characters)",
                         r->file, section, key, len - 1);
    return 0;
}

/* The file's base name without ".ini": the name when [preset] gives none. */
static void default_name(const char *path, char *name, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    nn_strlcpy(name, base, len);
    size_t n = strlen(name);
    if (n > 4 && strcmp(name + n - 4, ".ini") == 0)
        name[n - 4] = '\0';
}

/* [task] method, for a kind that has methods; refused for one that has none. */
static int read_task_method(const reader *r, const nn_task_def *t, nn_preset *p)
{
    const char *methods[NN_TASK_MAX_METHODS];
    int n = t->n_methods < NN_TASK_MAX_METHODS ? t->n_methods : NN_TASK_MAX_METHODS, v = 0;
    if (n == 0) {
        p->task_method = 0;
        if (raw(r, "task", "method"))
            return nn_errorf(r->c.err, r->c.err_len, "%s: [task] method: only for kind = %s", r->file,
                             nn_task_with_methods());
        return 0;
    }
    for (int m = 0; m < n; m++)
        methods[m] = t->method_name(m);
    int rc = read_choice(r, "task", "method", methods, n, 0, &v);
    if (rc < 0)
        return -1;
    p->task_method = rc == 0 ? v : t->default_method;
    return 0;
}

/* [task] kind, one of preset_task.c's table (train when absent), and its method. */
static int read_task(const reader *r, nn_preset *p)
{
    const char *kinds[NN_TASK_MAX_KINDS];
    int n = nn_task_count < NN_TASK_MAX_KINDS ? nn_task_count : NN_TASK_MAX_KINDS, v = 0;
    for (int i = 0; i < n; i++)
        kinds[i] = nn_task_defs[i]->name;
    int rc = read_choice(r, "task", "kind", kinds, n, 0, &v);
    if (rc < 0)
        return -1;
    const nn_task_def *t = nn_task_defs[rc == 0 ? v : 0];
    p->task = t->task;
    return read_task_method(r, t, p);
}

static int read_texts(const reader *r, nn_preset *p)
{
    int v = 0, rc;
    if (read_choice(r, "data", "set", nn_data_names, NN_COUNT(nn_data_names), 1, &v) < 0)
        return -1;
    p->data = (enum nn_data_kind)v;
    if (read_choice(r, "train", "loss", nn_loss_names, NN_COUNT(nn_loss_names), 1, &v) < 0)
        return -1;
    p->loss = (enum nn_loss_kind)v;
    if (read_choice(r, "optimizer", "type", nn_opt_names, NN_COUNT(nn_opt_names), 1, &v) < 0)
        return -1;
    p->opt = (enum nn_opt_kind)v;
    rc = read_choice(r, "train", "device", nn_device_names, NN_COUNT(nn_device_names), 0, &v);
    if (rc < 0)
        return -1;
    if (rc == 0)
        nn_strlcpy(p->device, nn_device_names[v], sizeof p->device);
    rc = read_choice(r, "train", "compare", nn_device_names, NN_COUNT(nn_device_names), 0, &v);
    if (rc < 0)
        return -1;
    if (rc == 0)
        nn_strlcpy(p->compare, nn_device_names[v], sizeof p->compare);
    if (read_task(r, p) != 0)
        return -1;
    default_name(r->file, p->name, sizeof p->name);
    return read_text(r, "preset", "name", p->name, sizeof p->name)
        || read_text(r, "preset", "description", p->description, sizeof p->description)
        || read_text(r, "preset", "measured_note", p->measured_note, sizeof p->measured_note)
        || read_text(r, "data", "dir", p->data_dir, sizeof p->data_dir) ? -1 : 0;
}

static int read_layer_types(const reader *r, nn_preset *p)
{
    const char *names[NN_LAYER_KIND_COUNT];
    for (int k = 0; k < NN_LAYER_KIND_COUNT; k++)
        names[k] = nn_layer_kind_name((enum nn_layer_kind)k);
    for (int i = 0; i < p->n_layers; i++) {
        char section[24];
        int kind = 0;
        snprintf(section, sizeof section, "layer%d", i + 1);
        if (read_choice(r, section, "type", names, NN_LAYER_KIND_COUNT, 1, &kind) < 0)
            return -1;
        p->layers[i].kind = (enum nn_layer_kind)kind;
    }
    return 0;
}

static int unknown_static_key(const reader *r, const char *section, const char *key)
{
    char list[NN_TEXT_LEN];
    nn_section_key_list(section, list, sizeof list);
    return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: not a key of [%s] (expected %s)",
                     r->file, section, key, section, list);
}

/* One "section:key" entry: known, and meant for this data set, optimiser or
 * layer type (a momentum under adam would otherwise be silently ignored). */
static int check_key(const reader *r, const nn_preset *p, const char *section, const char *key)
{
    int n = layer_number(section);
    if (n > 0) {
        const nn_layer_spec *l = &p->layers[n - 1];
        char list[NN_TEXT_LEN];
        if (!strcmp(key, "type") || nn_layer_takes_key(l->kind, key))
            return 0;
        nn_layer_key_list(l->kind, 0, list, sizeof list);
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: not a key of a layer of type %s (its keys: %s)",
                         r->file, section, key, nn_layer_kind_name(l->kind), list);
    }
    if (nn_is_text_key(section, key))
        return 0;
    const nn_scalar_key *k = nn_find_scalar_key(section, key);
    if (!k)
        return unknown_static_key(r, section, key);
    if (!nn_scalar_applies(k, p)) {
        char only[128];
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: only for %s", r->file, section, key,
                         nn_scalar_only(k, only, sizeof only));
    }
    return 0;
}

/* Walks every key in file order, so the first bad key is the one reported. */
static int check_keys(const reader *r, const nn_preset *p)
{
    for (ssize_t i = 0; i < r->d->size; i++) {
        const char *entry = r->d->key[i], *colon;
        char section[32];
        if (!entry || !r->d->val[i])
            continue;
        colon = strchr(entry, ':');
        /* check_sections accepted every section, so it fits and has a colon */
        snprintf(section, sizeof section, "%.*s", (int)(colon - entry), entry);
        if (check_key(r, p, section, colon + 1) != 0)
            return -1;
    }
    return 0;
}

static int read_number(const reader *r, const char *section, const char *key, enum nn_vtype t,
                       nn_range rg, void *dst, int required, const char *need)
{
    const char *s = raw(r, section, key);
    char why[NN_ERR_LEN];
    if (!s && required)
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: missing (%s)", r->file, section, key, need);
    if (s && nn_value_parse(t, s, rg, dst, why, sizeof why) != 0)
        return nn_key_error(&r->c, section, key, s, "%s", why);
    return 0;
}

static int read_scalars(const reader *r, nn_preset *p)
{
    for (size_t i = 0; i < nn_n_scalar_keys; i++) {
        const nn_scalar_key *k = &nn_scalar_keys[i];
        if (nn_scalar_applies(k, p)
            && read_number(r, k->section, k->key, k->type, k->r, (char *)p + k->off, 0, NULL) != 0)
            return -1;
    }
    return 0;
}

static int read_layer(const reader *r, int i, nn_layer_spec *l)
{
    char section[24], need[NN_ERR_LEN], list[NN_TEXT_LEN];
    enum nn_layer_kind kind = l->kind;
    const nn_layer_def *d = nn_layer_def_of(kind);
    memset(l, 0, sizeof *l);
    l->kind = kind;
    snprintf(section, sizeof section, "layer%d", i + 1);
    nn_layer_key_list(kind, 1, list, sizeof list);
    snprintf(need, sizeof need, "a layer of type %s needs %s", d->name, list);
    unsigned keys = nn_layer_keys_of(kind);
    for (int k = 0; k < NN_LAYER_KEY_COUNT; k++) {
        const nn_layer_key_def *lk = &nn_layer_keys[k];
        if ((keys & NN_KEY(k))
            && read_number(r, section, lk->key, lk->type, lk->r, (char *)l + lk->off,
                           (d->required & NN_KEY(k)) != 0, need) != 0)
            return -1;
    }
    if (d->fill_defaults)
        d->fill_defaults(l);
    return 0;
}

static int read_preset(const reader *r, nn_preset *p)
{
    if (check_sections(r, p) || read_texts(r, p) || read_layer_types(r, p) || check_keys(r, p)
        || read_scalars(r, p))
        return -1;
    for (int i = 0; i < p->n_layers; i++)
        if (read_layer(r, i, &p->layers[i]) != 0)
            return -1;
    return 0;
}

int nn_preset_load(const char *path, nn_preset *p, char *err, size_t err_len)
{
    reader r = { NULL, path, { path, err, err_len } };
    int rc;
    nn_preset_defaults(p);
    if (open_dict(&r) != 0)
        return -1;
    rc = read_preset(&r, p);
    iniparser_freedict(r.d);
    return rc != 0 ? -1 : nn_preset_check(p, path, err, err_len);
}

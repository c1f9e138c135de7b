/* src/analysis/model/lesson_file.c - a lesson file read and checked whole
 * (nnlab/lesson.h, man nnlab-lesson.5): through the presets' capped reader
 * (src/core/preset_file.h: size, sections and keys counted in one linear
 * pass, a repeat refused) and then iniparser; every section and key known,
 * every value checked, presets, devices and GPU profiles by name. Each
 * error is one line: "FILE: [stepN] KEY: what is wrong". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "nnlab/lesson.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <iniparser/iniparser.h>

#include "lesson_keys.h"
#include "nnlab/device.h"
#include "nnlab/explain.h"
#include "nnlab/jacobian.h"
#include "nnlab/link.h"
#include "nnlab/profile.h"
#include "preset_file.h"
#include "util.h"

/* The file through the presets' caps, then iniparser; 0 or -1 (err). */
static int load_capped(const char *path, dictionary **d, char *err, size_t err_len)
{
    return nn_ini_load(path, "lesson", d, err, err_len);
}

/* ---- sections ----------------------------------------------------------------------------- */

/* "step7" -> 7; 0 for another name; -1 for "step0", "step07", "step33". */
static int step_number(const char *section)
{
    const char *s = section + 4;
    long n;
    if (strncmp(section, "step", 4) != 0 || !*s || strspn(s, "0123456789") != strlen(s))
        return 0;
    if (s[0] == '0' || strlen(s) > 2 || nn_parse_long(s, &n) != 0 || n > NN_LESSON_MAX_STEPS)
        return -1;
    return (int)n;
}

static int check_section(const char *path, const char *name, char *seen, int *max, char *err, size_t err_len)
{
    int n = step_number(name);
    if (n > 0) {
        seen[n] = 1;
        *max = n > *max ? n : *max;
        return 0;
    }
    if (n < 0)
        return nn_errorf(err, err_len, "%s: [%s]: steps are numbered step1 .. step%d, without leading zeros",
                         path, name, NN_LESSON_MAX_STEPS);
    if (strcmp(name, "lesson") == 0)
        return 0;
    return nn_errorf(err, err_len, "%s: [%s]: unknown section (expected [lesson] and [step1], [step2], ...)",
                     path, name);
}

/* Every section and key known; steps numbered 1..N without gaps. */
static int check_entries(const dictionary *d, const char *path, int *n_steps, char *err, size_t err_len)
{
    char seen[NN_LESSON_MAX_STEPS + 1] = { 0 };
    int max = 0, has_lesson = 0;
    for (ssize_t i = 0; i < d->size; i++) {
        const char *key = d->key[i], *colon;
        if (!key)
            continue;
        if (key[0] == ':')
            return nn_errorf(err, err_len, "%s: %s: key outside any section", path, key + 1);
        if (!d->val[i]) {
            if (check_section(path, key, seen, &max, err, err_len) != 0)
                return -1;
            has_lesson |= strcmp(key, "lesson") == 0;
            continue;
        }
        colon = strchr(key, ':');
        if (!colon)                  /* iniparser keeps "section:key"; anything else is not ours */
            return nn_errorf(err, err_len, "%s: %s: key outside any section", path, key);
        int lesson = (size_t)(colon - key) == 6 && strncmp(key, "lesson", 6) == 0;
        if (!nn_lesson_key_known(lesson, colon ? colon + 1 : key))
            return nn_errorf(err, err_len, "%s: [%.*s] %s: unknown key", path, (int)(colon - key), key, colon + 1);
    }
    if (!has_lesson)
        return nn_errorf(err, err_len, "%s: [lesson]: missing (name, title, description)", path);
    if (max == 0)
        return nn_errorf(err, err_len, "%s: [step1]: missing: a lesson needs at least one step", path);
    for (int n = 1; n <= max; n++)
        if (!seen[n])
            return nn_errorf(err, err_len, "%s: [step%d]: missing, but [step%d] exists: number the steps 1..N "
                             "without gaps", path, n, max);
    *n_steps = max;
    return 0;
}

/* ---- the [lesson] section ------------------------------------------------------------------ */

static const char *raw(const dictionary *d, const char *section, const char *key)
{
    char full[64];
    snprintf(full, sizeof full, "%s:%s", section, key);
    return iniparser_getstring((dictionary *)d, full, NULL);
}

/* A text value, required or not, that fits len: 0 or -1 (err). */
static int text_value(const dictionary *d, const char *path, const char *section, const char *key, int required,
                      char *out, size_t len, char *err, size_t err_len)
{
    const char *s = raw(d, section, key);
    if (!s || !s[0]) {
        out[0] = '\0';
        return required ? nn_errorf(err, err_len, "%s: [%s] %s: missing", path, section, key) : 0;
    }
    if (nn_strlcpy(out, s, len) >= len)
        return nn_errorf(err, err_len, "%s: [%s] %s: too long (at most %zu bytes)", path, section, key, len - 1);
    return 0;
}

static int read_header(const dictionary *d, nn_lesson *l, char *err, size_t err_len)
{
    char stem[NN_NAME_LEN];
    if (text_value(d, l->path, "lesson", "name", 1, l->name, sizeof l->name, err, err_len) ||
        text_value(d, l->path, "lesson", "title", 1, l->title, sizeof l->title, err, err_len) ||
        text_value(d, l->path, "lesson", "description", 1, l->description, sizeof l->description, err, err_len))
        return -1;
    if (strcmp(nn_file_stem(l->name, "", stem, sizeof stem), l->name) != 0)
        return nn_errorf(err, err_len, "%s: [lesson] name: '%s': letters, digits, '-' and '_' only (it names "
                         "the handout's file)", l->path, nn_safe(l->name));
    return 0;
}

/* ---- the steps ------------------------------------------------------------------------------ */

typedef struct step_reader {
    const dictionary *d;
    const char *path;
    nn_lesson_step *s;
    char *err;
    size_t err_len;
} step_reader;

static int step_error(const step_reader *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int step_error(const step_reader *r, const char *key, const char *fmt, ...)
{
    char why[NN_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return nn_errorf(r->err, r->err_len, "%s: [%s] %s: %s", r->path, r->s->section, key, why);
}

static const char *step_raw(const step_reader *r, const char *key)
{
    return raw(r->d, r->s->section, key);
}

/* A word of a list, or -1 (said, with the list). */
static int choice(const step_reader *r, const char *key, const char *const *names, int n, int *out)
{
    const char *s = step_raw(r, key);
    char list[160] = "";
    for (int i = 0; i < n; i++) {
        if (strcasecmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    }
    return step_error(r, key, "unknown %s '%s' (expected %s)", key, nn_safe(s), list);
}

static int switch_value(const step_reader *r, const char *key, int *out)
{
    static const char *const words[] = { "false", "true", "no", "yes", "off", "on", "0", "1" };
    int v;
    *out = -1;
    if (!step_raw(r, key))
        return 0;
    if (choice(r, key, words, 8, &v) != 0)
        return -1;
    *out = v % 2;
    return 0;
}

/* The preset named: found and loadable; p receives it. */
static int read_preset(const step_reader *r, nn_preset *p)
{
    char path[NN_PATH_LEN], why[NN_ERR_LEN];
    const char *s = step_raw(r, "preset");
    if (r->s->kind == NN_LESSON_NOTE && !s)
        return 0;
    if (!s || !s[0])
        return step_error(r, "preset", "missing (a %s step runs a preset's job)", nn_lesson_kind_name(r->s->kind));
    if (nn_preset_find(s, path, sizeof path, why, sizeof why) != 0 ||
        nn_preset_load(path, p, why, sizeof why) != 0)
        return step_error(r, "preset", "unknown preset '%s': %s", nn_safe(s), why);
    nn_strlcpy(r->s->preset, s, sizeof r->s->preset);
    if (r->s->kind == NN_LESSON_JACOBIAN && p->task != NN_TASK_JACOBIAN)
        return step_error(r, "preset", "%s is not a Jacobian preset ([task] kind = jacobian; e.g. mlp-jacobian)",
                          nn_safe(s));
    if (r->s->kind != NN_LESSON_JACOBIAN && p->task == NN_TASK_JACOBIAN)
        return step_error(r, "preset", "%s is a Jacobian task: its step is kind = jacobian", nn_safe(s));
    return 0;
}

/* A jacobian step's val and method (default: the preset's [task]). */
static int read_jacobian(const step_reader *r, const nn_preset *p)
{
    const char *val = step_raw(r, "val"), *method = step_raw(r, "method");
    r->s->method = -1;
    if (r->s->kind != NN_LESSON_JACOBIAN)
        return val ? step_error(r, "val", "only a jacobian step has val")
             : method ? step_error(r, "method", "only a jacobian step has a method") : 0;
    if (!val)
        r->s->val = p->task_val;
    else if (nn_parse_long(val, &r->s->val) != 0 || r->s->val < 1 || r->s->val > NN_JAC_MAX_VAL)
        return step_error(r, "val", "%s: out of range (1..%d)", nn_safe(val), NN_JAC_MAX_VAL);
    r->s->method = method ? nn_jac_method_find(method) : p->task_method;
    if (r->s->method < 0)
        return step_error(r, "method", "unknown method '%s' (expected %s)", nn_safe(method), nn_jac_method_list());
    return 0;
}

/* One batch: the preset's rule for [train] batch, and no larger than the
 * preset's training set. */
static int batch_value(const step_reader *r, const char *key, const char *text, const nn_preset *p, int *out)
{
    nn_preset scratch;
    char why[NN_ERR_LEN];
    nn_preset_defaults(&scratch);
    if (nn_preset_set_value(&scratch, "train", "batch", text, why, sizeof why) != 0)
        return step_error(r, key, "%s: %s", nn_safe(text), why);
    long rows = p->name[0] ? nn_preset_data_rows(p, NULL) : 0;
    if (rows > 0 && scratch.batch > rows)
        return step_error(r, key, "%d: out of range: larger than %s's %ld training rows", scratch.batch, p->name,
                          rows);
    *out = scratch.batch;
    return 0;
}

static int read_batches(const step_reader *r, const nn_preset *p)
{
    const char *s = step_raw(r, "batch");
    char buf[256], *save = NULL;
    if (s && batch_value(r, "batch", s, p, &r->s->batch) != 0)
        return -1;
    if (!(s = step_raw(r, "batches")))
        return 0;
    if (r->s->kind != NN_LESSON_SWEEP)
        return step_error(r, "batches", "only a sweep step sweeps batches (this one is a %s)",
                          nn_lesson_kind_name(r->s->kind));
    nn_strlcpy(buf, s, sizeof buf);
    for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        if (r->s->n_batches == NN_LESSON_MAX_BATCHES)
            return step_error(r, "batches", "at most %d batch sizes", NN_LESSON_MAX_BATCHES);
        if (batch_value(r, "batches", tok, p, &r->s->batches[r->s->n_batches++]) != 0)
            return -1;
    }
    return r->s->n_batches > 0 ? 0 : step_error(r, "batches", "empty (expected a list like 1,4,16)");
}

/* device, gpu_profile, way and the GPU switches: a switch needs the GPU. */
static int read_device(const step_reader *r)
{
    static const char *const ways[] = { "framework", "eager", "graph" };
    static const char *const switches[] = { "data_on_device", "graph", "sync_every_step", "pinned" };
    nn_lesson_step *s = r->s;
    int *val[] = { &s->data_on_device, &s->graph, &s->sync_every_step, &s->pinned };
    char why[NN_ERR_LEN];
    nn_gpu_profile prof;
    if (text_value(r->d, r->path, s->section, "device", 0, s->device, sizeof s->device, r->err, r->err_len))
        return -1;
    if (!s->device[0])
        nn_strlcpy(s->device, "cpu", sizeof s->device);
    nn_device_kind kind = nn_device_kind_of(s->device);
    if (!kind.known)
        return step_error(r, "device", "unknown device '%s' (expected cpu or gpu)", nn_safe(s->device));
    if (text_value(r->d, r->path, s->section, "gpu_profile", 0, s->gpu_profile, sizeof s->gpu_profile, r->err,
                   r->err_len))
        return -1;
    if (s->gpu_profile[0] && nn_profile_find(s->gpu_profile, &prof, why, sizeof why) != 0)
        return step_error(r, "gpu_profile", "%s", why);
    s->way = -1;
    if (step_raw(r, "way") && choice(r, "way", ways, 3, &s->way) != 0)
        return -1;
    for (int k = 0; k < 4; k++) {
        if (switch_value(r, switches[k], val[k]) != 0)
            return -1;
        if (*val[k] >= 0 && !kind.gpu)
            return step_error(r, switches[k], "a GPU switch on the %s device: set device = gpu, or drop it",
                              s->device);
    }
    if (s->way >= 0 && !kind.gpu && (s->kind == NN_LESSON_EXPLAIN || s->kind == NN_LESSON_RANKS))
        return step_error(r, "way", "a GPU way on the %s device: set device = gpu, or drop it", s->device);
    return 0;
}

/* A ranks step's ranks, link and overlap (another kind takes none of
 * them); the link, when named, found and loaded. Without one the default
 * (nn_link_default_name) is found when the step runs: this machine's
 * shared memory is a link only once calibrated. */
static int read_ranks(const step_reader *r)
{
    static const char *const keys[] = { "ranks", "link", "overlap", "measure" };
    nn_lesson_step *s = r->s;
    const char *ranks = step_raw(r, "ranks");
    char why[NN_ERR_LEN];
    long n = 2;
    int overlap;
    nn_link l;
    if (s->kind != NN_LESSON_RANKS) {
        for (int k = 0; k < 4; k++)
            if (step_raw(r, keys[k]))
                return step_error(r, keys[k], "only a ranks step has %s (this one is a %s)", keys[k],
                                  nn_lesson_kind_name(s->kind));
        return 0;
    }
    if (ranks && (nn_parse_long(ranks, &n) != 0 || n < 2 || n > NN_LESSON_MAX_RANKS))
        return step_error(r, "ranks", "%s: out of range (2..%d)", nn_safe(ranks), NN_LESSON_MAX_RANKS);
    s->ranks = (int)n;
    if (text_value(r->d, r->path, s->section, "link", 0, s->link, sizeof s->link, r->err, r->err_len))
        return -1;
    if (s->link[0] && nn_link_find(s->link, &l, why, sizeof why) != 0)
        return step_error(r, "link", "%s", why);
    if (switch_value(r, "overlap", &overlap) != 0)
        return -1;
    s->overlap = overlap != 0;       /* not given (-1): overlapped, as DDP does */
    if (switch_value(r, "measure", &s->measure) != 0)
        return -1;
    s->measure = s->measure == 1;
    /* measured ranks are this machine's CPU ranks, summing over its own memory */
    if (s->measure && nn_device_kind_of(s->device).gpu)
        return step_error(r, "measure", "ranks measured here run on the CPU: set device = cpu, or drop measure");
    if (s->measure && s->link[0])
        return step_error(r, "link", "ranks measured here sum over this machine's shared memory: drop link, "
                          "or drop measure");
    return 0;
}

static int read_kind(const step_reader *r)
{
    static const char *const kinds[] = { "race", "sweep", "explain", "jacobian", "ranks", "note" };
    if (!step_raw(r, "kind"))
        return step_error(r, "kind", "missing (race, sweep, explain, jacobian, ranks or note)");
    return choice(r, "kind", kinds, NN_LESSON_KINDS, &r->s->kind);
}

int nn_lesson_load(const char *path, nn_lesson *out, char *err, size_t err_len)
{
    dictionary *d;
    int rc = -1, n = 0;
    memset(out, 0, sizeof *out);
    nn_strlcpy(out->path, path, sizeof out->path);
    if (load_capped(path, &d, err, err_len) != 0)
        return -1;
    if (check_entries(d, path, &n, err, err_len) == 0 && read_header(d, out, err, err_len) == 0) {
        out->n_steps = n;
        rc = 0;
        for (int k = 0; k < n && rc == 0; k++) {
            nn_preset p;
            memset(&p, 0, sizeof p);
            nn_lesson_step *s = &out->step[k];
            snprintf(s->section, sizeof s->section, "step%d", k + 1);
            step_reader r = { d, path, s, err, err_len };
            rc = text_value(d, path, s->section, "text", 1, s->text, sizeof s->text, err, err_len) ||
                 read_kind(&r) || read_preset(&r, &p) || read_batches(&r, &p) || read_jacobian(&r, &p) ||
                 read_device(&r) || read_ranks(&r) ||
                 nn_lesson_read_question(d, path, s, err, err_len) ? -1 : 0;
        }
    }
    iniparser_freedict(d);
    return rc;
}

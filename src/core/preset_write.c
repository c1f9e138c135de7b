/* src/core/preset_write.c - nn_preset_save: our own writer (iniparser's
 * dump drops comments and does not quote), through a temp file, fsync and
 * rename (atomic_file.h). Every key comes from the same tables the reader
 * walks, so what is saved loads back as the same preset. */
#include "atomic_file.h"
#include "layer_kind.h"
#include "preset_schema.h"
#include "preset_task.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct writer {
    FILE *f;
    int failed;                  /* a write failed; errno holds why */
} writer;

static void put(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(writer *w, const char *fmt, ...)
{
    va_list ap;
    if (w->failed)
        return;
    va_start(ap, fmt);
    if (vfprintf(w->f, fmt, ap) < 0)
        w->failed = 1;
    va_end(ap);
}

/* Quoted so that ';', '#' and blanks survive; ' when the text holds ". */
static void put_text(writer *w, const char *key, const char *s)
{
    char q = strchr(s, '"') ? '\'' : '"';
    put(w, "%s = %c%s%c\n", key, q, s, q);
}

static void put_scalars(writer *w, const nn_preset *p, const char *section)
{
    char v[64];
    for (size_t i = 0; i < nn_n_scalar_keys; i++) {
        const nn_scalar_key *k = &nn_scalar_keys[i];
        if (strcmp(k->section, section) != 0 || !nn_scalar_applies(k, p))
            continue;
        nn_value_format(k->type, (const char *)p + k->off, v, sizeof v);
        put(w, "%s = %s\n", k->key, v);
    }
}

static void put_layer(writer *w, int i, const nn_layer_spec *l)
{
    const nn_layer_def *d = nn_layer_def_of(l->kind);
    char v[64];
    put(w, "\n[layer%d]\ntype = %s\n", i + 1, d->name);
    unsigned keys = nn_layer_keys_of(l->kind);
    for (int k = 0; k < NN_LAYER_KEY_COUNT; k++) {
        const nn_layer_key_def *lk = &nn_layer_keys[k];
        const void *src = (const char *)l + lk->off;
        if (!(keys & NN_KEY(k)))
            continue;
        /* a key not given stays out: the default it stands for is the reader's
         * (input and weights too: a chain layer keeps its file as it was) */
        if (lk->zero_unset && (lk->type == NN_V_FLOAT ? *(const float *)src == 0.0f
                                                      : *(const int *)src == 0))
            continue;
        nn_value_format(lk->type, src, v, sizeof v);
        put(w, "%s = %s\n", lk->key, v);
    }
}

/* What the original experiment measured: only the figures given (the
 * scalar table reads them; 0 means "not given" and is not written), with
 * the experiment's own batch and epochs, which a copy saved with others
 * keeps (its figures stay the original's). */
static void put_measured(writer *w, const nn_preset *p)
{
    char v[64];
    for (size_t i = 0; i < nn_n_scalar_keys; i++) {
        const nn_scalar_key *k = &nn_scalar_keys[i];
        const void *src = (const char *)p + k->off;
        if (strcmp(k->section, "preset") != 0 || !nn_preset_has_measured(p) ||
            (k->type == NN_V_FLOAT ? *(const float *)src == 0 : *(const int *)src == 0))
            continue;
        nn_value_format(k->type, (const char *)p + k->off, v, sizeof v);
        put(w, "%s = %s\n", k->key, v);
    }
    if (p->measured_note[0])
        put_text(w, "measured_note", p->measured_note);
}

/* The description heads the file as a comment. Another comment line always
 * follows it: iniparser joins a line ending in '\' with the next one. */
/* [task], for any kind but the default (train): its kind, its method where
 * it has methods, and its own keys (preset_task.c's table). */
static void put_task(writer *w, const nn_preset *p)
{
    const nn_task_def *t = nn_task_def_of(p->task);
    if (!t || t == nn_task_defs[0])
        return;
    put(w, "\n[task]\nkind = %s\n", t->name);
    if (t->n_methods > 0)
        put(w, "method = %s\n", t->method_name(p->task_method));
    put_scalars(w, p, "task");
}

static void put_preset(writer *w, const nn_preset *p)
{
    put(w, "; %s\n; Saved by nnlab; the format is described in nnlab.ini(5).\n",
        p->description[0] ? p->description : p->name);
    put(w, "\n[preset]\n");
    put_text(w, "name", p->name);
    put_text(w, "description", p->description);
    put_measured(w, p);
    put(w, "\n[data]\nset = %s\n", nn_data_names[p->data]);
    if (p->data_dir[0])
        put_text(w, "dir", p->data_dir);
    put_scalars(w, p, "data");
    put(w, "\n[train]\nloss = %s\ndevice = %s\n", nn_loss_names[p->loss], p->device);
    if (p->compare[0])
        put(w, "compare = %s\n", p->compare);
    put_scalars(w, p, "train");
    put(w, "\n[optimizer]\ntype = %s\n", nn_opt_names[p->opt]);
    put_scalars(w, p, "optimizer");
    put(w, "\n[gpu]\n");
    put_scalars(w, p, "gpu");
    put(w, "\n[lab]\n");
    put_scalars(w, p, "lab");
    put_task(w, p);
    for (int i = 0; i < p->n_layers; i++)
        put_layer(w, i, &p->layers[i]);
}

static int fill_preset(FILE *f, const void *ctx)
{
    writer w = { f, 0 };
    errno = 0;
    put_preset(&w, ctx);
    if (w.failed && !errno)
        errno = EIO;
    return w.failed ? -1 : 0;
}

int nn_preset_save(const char *path, const nn_preset *p, char *err, size_t err_len)
{
    /* check a copy: it fills `in` and the shapes, and refuses a preset that
     * would not load back */
    nn_preset copy = *p;
    if (nn_preset_check(&copy, path, err, err_len) != 0)
        return -1;
    return nn_write_atomic(path, fill_preset, &copy, err, err_len);
}

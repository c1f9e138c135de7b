/* src/core/preset_write.c - nn_preset_save: our own writer (iniparser's
 * dump drops comments and does not quote), through a temp file, fsync and
 * rename (atomic_file.h). Every key comes from the same tables the reader
 * walks, so what is saved loads back as the same preset. */
#include "atomic_file.h"
#include "layer_kind.h"
#include "preset_schema.h"
#include "preset_task.h"
#include "ini_write.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>


static void put_scalars(nn_ini_writer *w, const nn_preset *p, const char *section)
{
    char v[64];
    for (size_t i = 0; i < nn_n_scalar_keys; i++) {
        const nn_scalar_key *k = &nn_scalar_keys[i];
        if (strcmp(k->section, section) != 0 || !nn_scalar_applies(k, p))
            continue;
        nn_value_format(k->type, (const char *)p + k->off, v, sizeof v);
        nn_ini_put(w, "%s = %s\n", k->key, v);
    }
}

static void put_layer(nn_ini_writer *w, int i, const nn_layer_spec *l)
{
    const nn_layer_def *d = nn_layer_def_of(l->kind);
    char v[64];
    nn_ini_put(w, "\n[layer%d]\ntype = %s\n", i + 1, d->name);
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
        nn_ini_put(w, "%s = %s\n", lk->key, v);
    }
}

/* What the original experiment measured: only the figures given (the
 * scalar table reads them; 0 means "not given" and is not written), with
 * the experiment's own batch and epochs, which a copy saved with others
 * keeps (its figures stay the original's). */
static void put_measured(nn_ini_writer *w, const nn_preset *p)
{
    char v[64];
    for (size_t i = 0; i < nn_n_scalar_keys; i++) {
        const nn_scalar_key *k = &nn_scalar_keys[i];
        const void *src = (const char *)p + k->off;
        if (strcmp(k->section, "preset") != 0 || !nn_preset_has_measured(p) ||
            (k->type == NN_V_FLOAT ? *(const float *)src == 0 : *(const int *)src == 0))
            continue;
        nn_value_format(k->type, (const char *)p + k->off, v, sizeof v);
        nn_ini_put(w, "%s = %s\n", k->key, v);
    }
    if (p->measured_note[0])
        nn_ini_put_text(w, "measured_note", p->measured_note);
}

/* The description heads the file as a comment. Another comment line always
 * follows it: iniparser joins a line ending in '\' with the next one. */
/* [task], for any kind but the default (train): its kind, its method where
 * it has methods, and its own keys (preset_task.c's table). */
static void put_task(nn_ini_writer *w, const nn_preset *p)
{
    const nn_task_def *t = nn_task_def_of(p->task);
    if (!t || t == nn_task_defs[0])
        return;
    nn_ini_put(w, "\n[task]\nkind = %s\n", t->name);
    if (t->n_methods > 0)
        nn_ini_put(w, "method = %s\n", t->method_name(p->task_method));
    put_scalars(w, p, "task");
}

static void put_preset(nn_ini_writer *w, const nn_preset *p)
{
    nn_ini_put(w, "; %s\n; Saved by nnlab; the format is described in nnlab.ini(5).\n",
        p->description[0] ? p->description : p->name);
    nn_ini_put(w, "\n[preset]\n");
    nn_ini_put_text(w, "name", p->name);
    nn_ini_put_text(w, "description", p->description);
    put_measured(w, p);
    nn_ini_put(w, "\n[data]\nset = %s\n", nn_data_names[p->data]);
    if (p->data_dir[0])
        nn_ini_put_text(w, "dir", p->data_dir);
    put_scalars(w, p, "data");
    nn_ini_put(w, "\n[train]\nloss = %s\ndevice = %s\n", nn_loss_names[p->loss], p->device);
    if (p->compare[0])
        nn_ini_put(w, "compare = %s\n", p->compare);
    put_scalars(w, p, "train");
    nn_ini_put(w, "\n[optimizer]\ntype = %s\n", nn_opt_names[p->opt]);
    put_scalars(w, p, "optimizer");
    nn_ini_put(w, "\n[gpu]\n");
    put_scalars(w, p, "gpu");
    nn_ini_put(w, "\n[lab]\n");
    put_scalars(w, p, "lab");
    put_task(w, p);
    for (int i = 0; i < p->n_layers; i++)
        put_layer(w, i, &p->layers[i]);
}

static int fill_preset(FILE *f, const void *ctx)
{
    nn_ini_writer w = { f, 0 };
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

int nn_file_seen_now(const char *path, nn_file_seen *out)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    if (stat(path, &st) != 0) {
        out->exists = errno != ENOENT;
        return errno == ENOENT ? 0 : -1;
    }
    out->exists = 1;
    out->dev = (unsigned long long)st.st_dev;
    out->ino = (unsigned long long)st.st_ino;
    out->size = (long long)st.st_size;
    out->mtime_s = (long long)st.st_mtim.tv_sec;
    out->mtime_ns = (long long)st.st_mtim.tv_nsec;
    return 0;
}

static int same_file(const nn_file_seen *a, const nn_file_seen *b)
{
    if (!a->exists || !b->exists)
        return a->exists == b->exists;
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_s == b->mtime_s &&
           a->mtime_ns == b->mtime_ns;
}

/* The folder of path, opened and locked (flock, exclusive): every lab's save
 * into it takes the same lock. The fd, or -1 with a message. */
static int lock_folder(const char *path, char *err, size_t err_len)
{
    char dir[NN_PATH_LEN];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if ((size_t)snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path) >= sizeof dir)
        return nn_errorf(err, err_len, "%s: path too long", path);
    if (nn_make_dirs(dir) != 0)
        return nn_errorf(err, err_len, "%s: cannot create the folder %s: %s", path, dir, strerror(errno));
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return nn_errorf(err, err_len, "%s: cannot lock the folder %s: %s", path, dir, strerror(e));
    }
    return fd;
}

int nn_preset_save_unchanged(const char *path, const nn_preset *p, const nn_file_seen *seen, char *err,
                             size_t err_len)
{
    nn_preset copy = *p;
    nn_file_seen now;
    if (nn_preset_check(&copy, path, err, err_len) != 0)
        return -1;
    int lock = lock_folder(path, err, err_len);
    if (lock < 0)
        return -1;
    int rc;
    (void)nn_file_seen_now(path, &now);
    if (!same_file(&now, seen))
        rc = nn_errorf(err, err_len, "%s: saved by another lab meanwhile (it %s since this one looked): "
                       "save again to replace it", path, !seen->exists ? "appeared" : now.exists ? "changed" : "went");
    else
        rc = nn_write_atomic(path, fill_preset, &copy, err, err_len);
    close(lock);                     /* the lock goes with it */
    return rc;
}

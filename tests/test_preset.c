/* tests/test_preset.c - the preset module: shipped presets load and infer the
 * shapes the write-ups describe, load -> save -> load is exact, saving is
 * atomic, lookup and listing follow the folders, and every bad fixture gives a
 * one-line error naming the file, the section and the key. One cmocka group. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "nnlab/preset.h"
#include "util.h"

#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif
#ifndef FIXTURES_DIR
#define FIXTURES_DIR "tests/fixtures"
#endif

/* every shipped preset, in name order (as nn_preset_list gives them) */
static const char *const shipped[] = {
    "conv1d-regression", "lenet-cifar10", "lenet5-cifar10", "mlp-jacobian", "mnist-mlp-1000",
    "mnist-mlp-128", "tabnet-regression",
};
#define N_SHIPPED ((int)(sizeof shipped / sizeof shipped[0]))

static char tmp_root[NN_PATH_LEN];    /* a fresh folder for the whole group */

/* ---------------------------------------------------------------- helpers */

/* snprintf into an NN_PATH_LEN buffer, failing the test on truncation. */
static void pathf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pathf(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, NN_PATH_LEN, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && n < NN_PATH_LEN);
}

static void path_of(char *buf, const char *dir, const char *name)
{
    pathf(buf, "%s/%s", dir, name);
}

static void shipped_path(char *buf, const char *name)
{
    assert_true((size_t)snprintf(buf, NN_PATH_LEN, "%s/%s.ini", PRESETS_SRCDIR, name) < NN_PATH_LEN);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* The whole file, NUL-terminated, malloc'ed. */
static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void remove_tree(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    if (lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    d = opendir(path);
    while (d && (e = readdir(d)) != NULL) {
        char child[NN_PATH_LEN];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if ((size_t)snprintf(child, sizeof child, "%s/%s", path, e->d_name) < sizeof child)
            remove_tree(child);
    }
    if (d)
        closedir(d);
    rmdir(path);
}

/* A per-test config home, so that tests do not see each other's presets.
 * Fills the user preset folder it implies. */
static void use_config_home(const char *name, char *user_dir)
{
    char home[NN_PATH_LEN];
    path_of(home, tmp_root, name);
    assert_int_equal(setenv("XDG_CONFIG_HOME", home, 1), 0);
    assert_int_equal(nn_preset_user_dir(user_dir, NN_PATH_LEN), 0);
}

static nn_preset *load_ok(const char *path)
{
    nn_preset *p = malloc(sizeof *p);
    char err[NN_ERR_LEN] = "";
    assert_non_null(p);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
    return p;
}

/* Field by field; floats bit for bit; layers (zero-filled) with memcmp. */
static void assert_same_preset(const nn_preset *a, const nn_preset *b)
{
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->description, b->description);
    assert_memory_equal(&a->measured_cpu_s, &b->measured_cpu_s, sizeof a->measured_cpu_s);
    assert_memory_equal(&a->measured_gpu_s, &b->measured_gpu_s, sizeof a->measured_gpu_s);
    assert_string_equal(a->measured_note, b->measured_note);
    assert_int_equal(a->data, b->data);
    assert_string_equal(a->data_dir, b->data_dir);
    assert_int_equal(a->rows, b->rows);
    assert_int_equal(a->val_rows, b->val_rows);
    assert_int_equal(a->features, b->features);
    assert_int_equal(a->targets, b->targets);
    assert_int_equal(a->loss, b->loss);
    assert_string_equal(a->device, b->device);
    assert_int_equal(a->batch, b->batch);
    assert_int_equal(a->epochs, b->epochs);
    assert_int_equal(a->log_every, b->log_every);
    assert_int_equal(a->opt, b->opt);
    assert_memory_equal(&a->lr, &b->lr, sizeof a->lr);
    assert_memory_equal(&a->momentum, &b->momentum, sizeof a->momentum);
    assert_memory_equal(&a->dampening, &b->dampening, sizeof a->dampening);
    assert_memory_equal(&a->weight_decay, &b->weight_decay, sizeof a->weight_decay);
    assert_int_equal(a->nesterov, b->nesterov);
    assert_int_equal(a->task, b->task);
    assert_int_equal(a->task_val, b->task_val);
    assert_int_equal(a->task_method, b->task_method);
    assert_memory_equal(&a->beta1, &b->beta1, sizeof a->beta1);
    assert_memory_equal(&a->beta2, &b->beta2, sizeof a->beta2);
    assert_memory_equal(&a->eps, &b->eps, sizeof a->eps);
    assert_string_equal(a->compare, b->compare);
    assert_int_equal(a->data_on_device, b->data_on_device);
    assert_int_equal(a->pinned, b->pinned);
    assert_int_equal(a->sync_every_step, b->sync_every_step);
    assert_int_equal(a->graph, b->graph);
    assert_int_equal(a->tf32, b->tf32);
    assert_int_equal(a->deterministic, b->deterministic);
    assert_int_equal(a->race, b->race);
    assert_int_equal(a->sweep_from, b->sweep_from);
    assert_int_equal(a->sweep_to, b->sweep_to);
    assert_int_equal(a->sweep_steps, b->sweep_steps);
    assert_int_equal(a->sweep_cpu_ref, b->sweep_cpu_ref);
    assert_int_equal(a->n_layers, b->n_layers);
    assert_memory_equal(a->layers, b->layers, sizeof a->layers[0] * (size_t)a->n_layers);
}

static void assert_shapes(const nn_preset *p, const char *input, const char *const *outs)
{
    char s[64];
    nn_shape_format(&p->layers[0].in_shape, s, sizeof s);
    assert_string_equal(s, input);
    for (int i = 0; i < p->n_layers; i++) {
        nn_shape_format(&p->layers[i].out_shape, s, sizeof s);
        assert_string_equal(s, outs[i]);
        if (i > 0)
            assert_memory_equal(&p->layers[i].in_shape, &p->layers[i - 1].out_shape, sizeof(nn_shape));
    }
}

/* A small valid preset built in memory, as the UI would. */
static void build_preset(nn_preset *p)
{
    nn_preset_defaults(p);
    nn_strlcpy(p->name, "built", sizeof p->name);
    p->data = NN_DATA_RANDOM;
    p->features = 6;
    p->loss = NN_LOSS_MSE;
    p->opt = NN_OPT_ADAM;
    p->n_layers = 3;
    p->layers[0].kind = NN_LAYER_LINEAR;
    p->layers[0].out = 8;                 /* in left 0: inferred */
    p->layers[1].kind = NN_LAYER_TANH;
    p->layers[2].kind = NN_LAYER_LINEAR;
    p->layers[2].out = 1;
}

/* ---------------------------------------------------------------- group */

static int group_setup(void **state)
{
    const char *tmpdir = getenv("TMPDIR");
    (void)state;
    snprintf(tmp_root, sizeof tmp_root, "%s/nnlab-preset-XXXXXX", tmpdir && tmpdir[0] ? tmpdir : "/tmp");
    if (!mkdtemp(tmp_root))
        return -1;
    /* the system folder is the source tree's; the user's is per test */
    return setenv("NNLAB_PRESETS_DIR", PRESETS_SRCDIR, 1);
}

static int group_teardown(void **state)
{
    (void)state;
    remove_tree(tmp_root);
    return 0;
}

/* ---------------------------------------------------------------- shipped presets */

static void test_shipped_presets_load(void **state)
{
    DIR *d = opendir(PRESETS_SRCDIR);
    struct dirent *e;
    int n = 0;
    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[NN_PATH_LEN];
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        path_of(path, PRESETS_SRCDIR, e->d_name);
        nn_preset *p = load_ok(path);
        assert_int_equal(strncmp(p->name, e->d_name, len - 4), 0);   /* name = file stem */
        assert_true(strlen(p->description) > 0);
        free(p);
        n++;
    }
    closedir(d);
    assert_true(n >= N_SHIPPED);
    for (int i = 0; i < N_SHIPPED; i++) {
        char path[NN_PATH_LEN];
        shipped_path(path, shipped[i]);
        free(load_ok(path));
    }
}

static void test_lenet_shapes(void **state)
{
    static const char *const outs[] = {
        "6x28x28", "6x28x28", "6x14x14", "16x10x10", "16x10x10", "16x5x5", "400", "10",
    };
    char path[NN_PATH_LEN];
    (void)state;
    shipped_path(path, "lenet-cifar10");
    nn_preset *p = load_ok(path);
    assert_int_equal(p->n_layers, 8);
    assert_shapes(p, "3x32x32", outs);
    assert_int_equal(p->data, NN_DATA_CIFAR10);
    assert_int_equal(p->loss, NN_LOSS_XENT);
    assert_int_equal(p->opt, NN_OPT_SGD);
    assert_true(p->lr == 0.001f && p->momentum == 0.9f);
    assert_int_equal(p->batch, 4);
    assert_int_equal(p->epochs, 2);
    assert_int_equal(p->log_every, 2000);
    assert_int_equal(p->layers[2].stride, 2);
    assert_int_equal(p->layers[7].in, 400);
    free(p);
}

static void test_conv1d_regression_shapes(void **state)
{
    static const char *const outs[] = {
        "16", "16", "1x16", "8x16", "8x16", "8x5", "16x5", "16x5", "16", "1",
    };
    char path[NN_PATH_LEN];
    (void)state;
    shipped_path(path, "conv1d-regression");
    nn_preset *p = load_ok(path);
    assert_int_equal(p->n_layers, 10);
    assert_shapes(p, "84", outs);
    assert_int_equal(p->data, NN_DATA_RANDOM);
    assert_int_equal(p->rows, 1000000);
    assert_int_equal(p->val_rows, 2000);
    assert_int_equal(p->loss, NN_LOSS_MSE);
    assert_int_equal(p->opt, NN_OPT_ADAM);
    assert_int_equal(p->batch, 1024);
    assert_int_equal(p->epochs, 10);
    assert_int_equal(p->layers[5].stride, 3);      /* pool stride = kernel */
    free(p);
}

static void test_mnist_mlp_shapes(void **state)
{
    static const char *const outs128[] = { "784", "128", "128", "128", "10" };
    static const char *const outs1000[] = { "784", "1000", "1000", "1000", "1000", "1000", "1000", "10" };
    char path[NN_PATH_LEN];
    (void)state;
    shipped_path(path, "mnist-mlp-128");
    nn_preset *p = load_ok(path);
    assert_shapes(p, "1x28x28", outs128);
    assert_true(p->layers[3].p == 0.2f);
    assert_int_equal(p->log_every, 500);
    free(p);
    shipped_path(path, "mnist-mlp-1000");
    p = load_ok(path);
    assert_shapes(p, "1x28x28", outs1000);
    free(p);
}

/* ---------------------------------------------------------------- save */

static void test_roundtrip_shipped(void **state)
{
    char dir[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    path_of(dir, tmp_root, "roundtrip");
    for (int i = 0; i < N_SHIPPED; i++) {
        char src[NN_PATH_LEN], dst[NN_PATH_LEN], again[NN_PATH_LEN];
        shipped_path(src, shipped[i]);
        pathf(dst, "%s/%s.ini", dir, shipped[i]);
        pathf(again, "%s/%s.again.ini", dir, shipped[i]);
        nn_preset *a = load_ok(src);
        if (nn_preset_save(dst, a, err, sizeof err) != 0)
            fail_msg("%s", err);
        nn_preset *b = load_ok(dst);
        assert_same_preset(a, b);
        /* the writer is a fixed point: saving what it wrote gives the same bytes */
        assert_int_equal(nn_preset_save(again, b, err, sizeof err), 0);
        char *t1 = read_all(dst), *t2 = read_all(again);
        assert_string_equal(t1, t2);
        free(t1);
        free(t2);
        free(a);
        free(b);
    }
}

/* What the original experiment measured is data the preset carries: read,
 * written only when given, and what each shipped preset's comment says. */
static void test_measured_keys(void **state)
{
    static const struct { const char *name; float cpu_s, gpu_s; } want[] = {
        { "lenet-cifar10", 50, 94 }, { "lenet5-cifar10", 60, 120 }, { "conv1d-regression", 209, 125 },
        { "mnist-mlp-128", 52, 123 }, { "mnist-mlp-1000", 390, 224 },
    };
    char src[NN_PATH_LEN], dst[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        shipped_path(src, want[i].name);
        nn_preset *p = load_ok(src);
        assert_true(p->measured_cpu_s == want[i].cpu_s && p->measured_gpu_s == want[i].gpu_s);
        assert_non_null(strstr(p->measured_note, "seed 00"));
        assert_true(nn_preset_is_measured_job(p, p->batch, p->epochs));
        free(p);
    }
    shipped_path(src, "lenet-cifar10");
    nn_preset *p = load_ok(src);
    pathf(dst, "%s/measured.ini", tmp_root);
    p->measured_gpu_s = 0;                       /* not given: not written */
    assert_int_equal(nn_preset_save(dst, p, err, sizeof err), 0);
    char *text = read_all(dst);
    assert_non_null(strstr(text, "measured_cpu_s = 50\n"));
    assert_null(strstr(text, "measured_gpu_s"));
    assert_non_null(strstr(text, "measured_note = \"seed 000"));
    free(text);
    p->measured_cpu_s = 0;
    p->measured_note[0] = '\0';
    assert_int_equal(nn_preset_save(dst, p, err, sizeof err), 0);
    text = read_all(dst);
    assert_null(strstr(text, "measured_"));
    free(text);
    free(p);
}

/* A write-up's range stays a range (lenet5's GPU 120-150 s, not 135), and
 * a copy saved at another batch keeps the figures as the original job's:
 * its batch and epochs are written with them and read back, so the copy's
 * job is not the experiment's while the original's still is. */
static void test_measured_job_kept(void **state)
{
    char src[NN_PATH_LEN], dst[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    shipped_path(src, "lenet5-cifar10");
    nn_preset *p = load_ok(src);
    assert_true(p->measured_gpu_s == 120 && p->measured_gpu_max_s == 150 && p->measured_cpu_max_s == 0);
    assert_int_equal(p->measured_batch, 4);
    assert_int_equal(p->measured_epochs, 2);
    p->batch = 16;
    pathf(dst, "%s/batch16.ini", tmp_root);
    assert_int_equal(nn_preset_save(dst, p, err, sizeof err), 0);
    nn_preset *q = load_ok(dst);
    assert_int_equal(q->batch, 16);
    assert_int_equal(q->measured_batch, 4);
    assert_int_equal(q->measured_epochs, 2);
    assert_true(q->measured_gpu_max_s == 150);
    assert_false(nn_preset_is_measured_job(q, q->batch, q->epochs));
    assert_true(nn_preset_is_measured_job(q, 4, 2));
    assert_false(nn_preset_is_measured_job(q, 4, 3));
    free(q);
    /* a range's high end must lie above its low end */
    p->measured_gpu_max_s = 100;
    assert_int_not_equal(nn_preset_check(p, "t", err, sizeof err), 0);
    assert_non_null(strstr(err, "measured_gpu_max_s"));
    free(p);
}

/* A preset that does not say its experiment's batch: the figures are for its own. */
static void test_measured_job_default(void **state)
{
    char path[NN_PATH_LEN];
    (void)state;
    pathf(path, "%s/nojob.ini", tmp_root);
    write_file(path, "[preset]\nmeasured_cpu_s = 10\n[data]\nset = random\nrows = 100\nfeatures = 4\n"
               "[train]\nloss = mse\nbatch = 8\nepochs = 3\n[optimizer]\ntype = sgd\nlr = 0.01\n"
               "[layer1]\ntype = linear\nout = 1\n");
    nn_preset *p = load_ok(path);
    assert_int_equal(p->measured_batch, 8);
    assert_int_equal(p->measured_epochs, 3);
    assert_true(nn_preset_is_measured_job(p, 8, 3));
    free(p);
}

/* Values chosen to break a careless writer: floats that need 9 digits,
 * quotes, ';' and '#', blanks and a backslash (iniparser's line continuation)
 * at the ends. */
static void test_roundtrip_awkward_values(void **state)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    nn_preset *p = malloc(sizeof *p);
    (void)state;
    assert_non_null(p);
    build_preset(p);
    nn_strlcpy(p->description, "  He said \"fast\"; 50% # really \\", sizeof p->description);
    nn_strlcpy(p->data_dir, "/data/it's; here #1", sizeof p->data_dir);
    p->lr = 1.0f / 3.0f;
    p->beta1 = 0.0f;
    p->beta2 = 0.99999994f;          /* the largest float below 1 */
    p->eps = FLT_MIN;
    p->weight_decay = 1e-30f;
    p->log_every = 123456789012L;
    path_of(path, tmp_root, "awkward.ini");
    if (nn_preset_save(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(nn_preset_check(p, "built", err, sizeof err), 0);   /* fills in, shapes */
    nn_preset *q = load_ok(path);
    assert_same_preset(p, q);
    char *text = read_all(path);
    assert_non_null(strstr(text, "lr = 0.33333334\n"));
    assert_non_null(strstr(text, "\n[layer1]\ntype = linear\nin = 6\nout = 8\n"));
    assert_null(strstr(text, "momentum"));           /* sgd keys are not written for adam */
    free(text);
    free(p);
    free(q);
}

/* The lab's settings besides the preset's own: the device run beside,
 * the GPU switches, race or in turn, the sweep. Every one is saved and read
 * back; a preset without them (every shipped one) gets the defaults. */
static void test_roundtrip_lab_settings(void **state)
{
    char path[NN_PATH_LEN], shipped_file[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    nn_preset *p = malloc(sizeof *p);
    (void)state;
    assert_non_null(p);
    build_preset(p);
    nn_strlcpy(p->device, "cpu", sizeof p->device);
    nn_strlcpy(p->compare, "cpu-ref", sizeof p->compare);
    p->data_on_device = 0;
    p->pinned = 1;
    p->sync_every_step = 1;
    p->graph = 0;
    p->tf32 = 1;
    p->deterministic = 1;
    p->race = 1;
    p->sweep_from = 16;
    p->sweep_to = 256;
    p->sweep_steps = 7;
    p->sweep_cpu_ref = 1;
    path_of(path, tmp_root, "lab-settings.ini");
    if (nn_preset_save(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(nn_preset_check(p, "built", err, sizeof err), 0);
    nn_preset *q = load_ok(path);
    assert_same_preset(p, q);
    char *text = read_all(path);
    assert_non_null(strstr(text, "device = cpu\ncompare = cpu-ref\n"));
    assert_non_null(strstr(text, "\n[gpu]\ndata_on_device = false\npinned = true\n"));
    /* in [train], as nnlab.ini(5) documents it */
    const char *train = strstr(text, "\n[train]\n"), *det = strstr(text, "\ndeterministic = true\n");
    assert_true(train && det && det > train && det < strstr(train, "\n[optimizer]\n"));
    assert_non_null(strstr(text, "\n[lab]\nrace = true\nsweep_from = 16\nsweep_to = 256\n"));
    free(text);

    shipped_path(shipped_file, "lenet-cifar10");
    nn_preset *s = load_ok(shipped_file);
    assert_string_equal(s->compare, "");
    assert_int_equal(s->data_on_device, 1);
    assert_int_equal(s->graph, 1);
    assert_int_equal(s->sync_every_step, 0);
    assert_int_equal(s->deterministic, 0);
    assert_int_equal(s->race, 0);
    assert_int_equal(s->sweep_from, 1);
    assert_int_equal(s->sweep_to, 4096);
    assert_int_equal(s->sweep_steps, 20);
    free(s);
    free(p);
    free(q);
}

/* The longest [data] dir a line can store (992 characters besides "dir = " and
 * the quotes) fits the preset (NN_DIR_LEN) and comes back whole; one more is
 * refused by the checker, not cut by the preset's buffer. */
static void test_longest_data_dir(void **state)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    nn_preset p, q;
    (void)state;
    build_preset(&p);
    memset(p.data_dir, 'd', 992);
    p.data_dir[0] = '/';
    p.data_dir[992] = '\0';
    path_of(path, tmp_root, "long-dir.ini");
    if (nn_preset_save(path, &p, err, sizeof err) != 0)
        fail_msg("%s", err);
    if (nn_preset_load(path, &q, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_string_equal(q.data_dir, p.data_dir);
    p.data_dir[992] = 'd';
    p.data_dir[993] = '\0';
    assert_int_equal(nn_preset_check(&p, "built", err, sizeof err), -1);
    assert_int_equal(strncmp(err, "built: [data] dir = /ddd", 24), 0);   /* then cut: the value is long */
}

static void test_save_creates_folder(void **state)
{
    char base[NN_PATH_LEN], path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    struct stat st;
    (void)state;
    path_of(base, tmp_root, "fresh-XXXXXX");
    assert_non_null(mkdtemp(base));
    pathf(path, "%s/a/b/c/mine.ini", base);
    nn_preset *p = malloc(sizeof *p);
    assert_non_null(p);
    build_preset(p);
    if (nn_preset_save(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0644);
    pathf(path, "%s/a/b/c", base);
    assert_int_equal(count_entries(path), 1);        /* no temp file left */
    free(p);
}

/* The parent "folder" is a regular file: nothing can be created. */
static void test_save_impossible_path(void **state)
{
    char file[NN_PATH_LEN], path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    path_of(file, tmp_root, "plain-file");
    write_file(file, "not a folder\n");
    pathf(path, "%s/sub/p.ini", file);
    nn_preset *p = malloc(sizeof *p);
    assert_non_null(p);
    build_preset(p);
    assert_int_equal(nn_preset_save(path, p, err, sizeof err), -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "Not a directory"));
    char *text = read_all(file);
    assert_string_equal(text, "not a folder\n");
    free(text);
    free(p);
}

/* A write that fails half way (RLIMIT_FSIZE works even for root) must leave
 * the old file byte for byte and no temp file behind. */
static void test_save_write_error_keeps_old(void **state)
{
    char dir[NN_PATH_LEN], path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    struct rlimit old, small;
    (void)state;
    path_of(dir, tmp_root, "fsize");
    assert_int_equal(mkdir(dir, 0755), 0);
    path_of(path, dir, "keep.ini");
    write_file(path, "; the old file\n");
    nn_preset *p = malloc(sizeof *p);
    assert_non_null(p);
    build_preset(p);

    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = 64;
    signal(SIGXFSZ, SIG_IGN);            /* get EFBIG instead of being killed */
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = nn_preset_save(path, p, err, sizeof err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);

    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "cannot write"));
    char *text = read_all(path);
    assert_string_equal(text, "; the old file\n");
    free(text);
    assert_int_equal(count_entries(dir), 1);
    free(p);
}

static void test_save_invalid_keeps_old(void **state)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    path_of(path, tmp_root, "invalid.ini");
    write_file(path, "; the old file\n");
    nn_preset *p = malloc(sizeof *p);
    assert_non_null(p);
    build_preset(p);
    p->layers[2].out = 3;                /* mse with targets = 1 */
    assert_int_equal(nn_preset_save(path, p, err, sizeof err), -1);
    assert_non_null(strstr(err, "[train] loss = mse"));
    char *text = read_all(path);
    assert_string_equal(text, "; the old file\n");
    free(text);
    free(p);
}

/* ---------------------------------------------------------------- find, list */

/* Saves the shipped lenet-cifar10 into dir with another description. */
static void save_user_copy(const char *dir, const char *description)
{
    char src[NN_PATH_LEN], dst[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    shipped_path(src, "lenet-cifar10");
    path_of(dst, dir, "lenet-cifar10.ini");
    nn_preset *p = load_ok(src);
    nn_strlcpy(p->description, description, sizeof p->description);
    if (nn_preset_save(dst, p, err, sizeof err) != 0)
        fail_msg("%s", err);
    free(p);
}

static void test_find_user_shadows_system(void **state)
{
    char user[NN_PATH_LEN], want[NN_PATH_LEN], path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    use_config_home("find-home", user);
    save_user_copy(user, "my own copy");

    assert_int_equal(nn_preset_find("lenet-cifar10", path, sizeof path, err, sizeof err), 0);
    path_of(want, user, "lenet-cifar10.ini");
    assert_string_equal(path, want);
    nn_preset *p = load_ok(path);
    assert_string_equal(p->description, "my own copy");
    free(p);

    assert_int_equal(nn_preset_find("mnist-mlp-128", path, sizeof path, err, sizeof err), 0);
    shipped_path(want, "mnist-mlp-128");
    assert_string_equal(path, want);
}

static void test_find_not_found_says_where(void **state)
{
    char user[NN_PATH_LEN], path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    use_config_home("find-missing", user);
    assert_int_equal(nn_preset_find("no-such-net", path, sizeof path, err, sizeof err), -1);
    assert_non_null(strstr(err, "no-such-net"));
    assert_non_null(strstr(err, user));
    assert_non_null(strstr(err, PRESETS_SRCDIR));
    assert_null(strchr(err, '\n'));
}

static void test_find_paths_as_given(void **state)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    assert_int_equal(nn_preset_find(FIXTURES_DIR "/good-mixed-case.ini", path, sizeof path, err, sizeof err), 0);
    assert_string_equal(path, FIXTURES_DIR "/good-mixed-case.ini");
    assert_int_equal(nn_preset_find("nowhere.ini", path, sizeof path, err, sizeof err), -1);
    assert_non_null(strstr(err, "nowhere.ini"));
    assert_int_equal(nn_preset_find("", path, sizeof path, err, sizeof err), -1);
}

static void test_user_and_system_dirs(void **state)
{
    char dir[NN_PATH_LEN], want[NN_PATH_LEN];
    char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    (void)state;
    assert_int_equal(setenv("XDG_CONFIG_HOME", "/x/cfg", 1), 0);
    assert_int_equal(nn_preset_user_dir(dir, sizeof dir), 0);
    assert_string_equal(dir, "/x/cfg/nnlab/presets");

    /* XDG: a relative value is ignored */
    assert_int_equal(setenv("XDG_CONFIG_HOME", "relative", 1), 0);
    assert_int_equal(setenv("HOME", "/home/someone", 1), 0);
    assert_int_equal(nn_preset_user_dir(dir, sizeof dir), 0);
    assert_string_equal(dir, "/home/someone/.config/nnlab/presets");
    assert_int_equal(nn_preset_user_dir(dir, 8), -1);          /* too small */
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("HOME");
    assert_int_equal(nn_preset_user_dir(dir, sizeof dir), -1);
    if (saved_home)
        setenv("HOME", saved_home, 1);
    free(saved_home);

    assert_string_equal(nn_preset_system_dir(), PRESETS_SRCDIR);
    unsetenv("NNLAB_PRESETS_DIR");
    snprintf(want, sizeof want, "%s", nn_preset_system_dir());
    assert_true(want[0] == '/');                               /* the installed folder */
    assert_int_equal(setenv("NNLAB_PRESETS_DIR", PRESETS_SRCDIR, 1), 0);
}

static void test_list_marks_broken_and_shadowed(void **state)
{
    char user[NN_PATH_LEN], path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    nn_preset_entry *e = calloc(32, sizeof *e);
    (void)state;
    assert_non_null(e);
    use_config_home("list-home", user);
    save_user_copy(user, "my own copy");
    path_of(path, user, "broken.ini");
    write_file(path, "[data]\nset = mnist\n");
    path_of(path, user, ".hidden.ini");
    write_file(path, "junk");
    path_of(path, user, "notes.txt");
    write_file(path, "junk");

    int n = nn_preset_list(e, 32, NULL, err, sizeof err);
    assert_int_equal(n, 2 + N_SHIPPED);
    assert_string_equal(e[0].name, "broken");
    assert_true(e[0].user);
    assert_non_null(strstr(e[0].error, "broken.ini"));
    assert_non_null(strstr(e[0].error, "[layer1]"));
    assert_string_equal(e[1].name, "lenet-cifar10");
    assert_true(e[1].user && !e[1].shadowed && !e[1].error[0]);
    assert_string_equal(e[1].description, "my own copy");
    for (int i = 0; i < N_SHIPPED; i++) {
        const nn_preset_entry *s = &e[2 + i];
        assert_string_equal(s->name, shipped[i]);   /* listed by name */
        assert_false(s->user);
        assert_string_equal(s->error, "");
        assert_true(s->description[0] != '\0');
        assert_int_equal(s->shadowed, strcmp(s->name, "lenet-cifar10") == 0);
    }
    int left = 0;
    assert_int_equal(nn_preset_list(e, 3, &left, err, sizeof err), 3);    /* at most max */
    assert_int_equal(left, n - 3);                                       /* the rest counted */

    use_config_home("list-empty", user);                             /* no user folder */
    assert_int_equal(nn_preset_list(e, 32, NULL, err, sizeof err), N_SHIPPED);
    free(e);
}

/* ---------------------------------------------------------------- load details */

static void test_mixed_case_and_defaults(void **state)
{
    (void)state;
    nn_preset *p = load_ok(FIXTURES_DIR "/good-mixed-case.ini");
    assert_string_equal(p->name, "mixed");
    assert_string_equal(p->description, "keeps ; and # inside quotes");
    assert_int_equal(p->data, NN_DATA_RANDOM);
    assert_int_equal(p->val_rows, 0);
    assert_int_equal(p->loss, NN_LOSS_MSE);
    assert_string_equal(p->device, "cpu-ref");
    assert_int_equal(p->opt, NN_OPT_SGD);
    assert_true(p->nesterov == 1 && p->lr == 0.05f && p->dampening == 0.0f);
    assert_int_equal(p->layers[1].in, 2);            /* inferred from 2x6 */
    assert_int_equal(p->layers[1].stride, 1);        /* conv default */
    assert_int_equal(p->layers[2].stride, 2);        /* pool default = kernel */
    static const char *const outs[] = { "2x6", "3x5", "3x2", "6", "2" };
    assert_shapes(p, "12", outs);
    free(p);
}

static void test_name_defaults_to_file_stem(void **state)
{
    char path[NN_PATH_LEN];
    (void)state;
    path_of(path, tmp_root, "stem-name.ini");
    write_file(path, "[data]\nset = random\n[train]\nloss = mse\n[optimizer]\ntype = adam\n"
                     "[layer1]\ntype = linear\nout = 1\n");
    nn_preset *p = load_ok(path);
    assert_string_equal(p->name, "stem-name");
    assert_int_equal(p->batch, 32);
    assert_int_equal(p->epochs, 1);
    assert_int_equal(p->log_every, 2000);
    assert_string_equal(p->device, "cpu");
    assert_true(p->lr == 0.001f && p->beta1 == 0.9f && p->beta2 == 0.999f && p->eps == 1e-8f);
    assert_int_equal(p->rows, 1000000);
    assert_int_equal(p->features, 84);
    free(p);
}

/* iniparser prints syntax errors to stderr; ours must not reach the terminal. */
static void test_syntax_error_is_silent(void **state)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    struct stat st;
    nn_preset *p = malloc(sizeof *p);
    (void)state;
    assert_non_null(p);
    path_of(path, tmp_root, "stderr.txt");
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    int rc = nn_preset_load(FIXTURES_DIR "/bad-syntax.ini", p, err, sizeof err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(fstat(fd, &st), 0);
    close(fd);
    assert_int_equal(rc, -1);
    assert_int_equal(st.st_size, 0);
    assert_string_equal(err, FIXTURES_DIR "/bad-syntax.ini: syntax error: line 4: this line has no equals sign");
    free(p);
}

/* iniparser's own limit, reported in our form. */
static void test_line_too_long(void **state)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN] = "", text[1200];
    nn_preset *p = malloc(sizeof *p);
    (void)state;
    assert_non_null(p);
    const char *head = "[preset]\ndescription = ";
    memset(text, 'a', sizeof text);
    memcpy(text, head, strlen(head));
    text[sizeof text - 2] = '\n';
    text[sizeof text - 1] = '\0';
    path_of(path, tmp_root, "long-line.ini");
    write_file(path, text);
    assert_int_equal(nn_preset_load(path, p, err, sizeof err), -1);
    assert_int_equal(strncmp(err, path, strlen(path)), 0);
    assert_non_null(strstr(err, ": syntax error: line 2: line too long"));
    free(p);
}

static void test_cannot_open(void **state)
{
    char err[NN_ERR_LEN] = "";
    nn_preset *p = malloc(sizeof *p);
    (void)state;
    assert_non_null(p);
    assert_int_equal(nn_preset_load(FIXTURES_DIR "/no-such-file.ini", p, err, sizeof err), -1);
    assert_non_null(strstr(err, FIXTURES_DIR "/no-such-file.ini: cannot open"));
    assert_int_equal(nn_preset_load(FIXTURES_DIR, p, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a regular file"));
    free(p);
}

static void test_check_in_memory(void **state)
{
    char err[NN_ERR_LEN] = "";
    nn_preset *p = malloc(sizeof *p);
    (void)state;
    assert_non_null(p);
    build_preset(p);
    assert_int_equal(nn_preset_check(p, "ui", err, sizeof err), 0);
    assert_int_equal(p->layers[0].in, 6);
    assert_int_equal(p->layers[2].in, 8);

    p->opt = NN_OPT_SGD;
    p->nesterov = 1;
    assert_int_equal(nn_preset_check(p, "ui", err, sizeof err), -1);
    assert_string_equal(err, "ui: [optimizer] nesterov = true: needs momentum > 0 and dampening = 0");
    p->momentum = 0.9f;
    assert_int_equal(nn_preset_check(p, "ui", err, sizeof err), 0);

    p->layers[2].in = 7;
    assert_int_equal(nn_preset_check(p, "ui", err, sizeof err), -1);
    assert_string_equal(err, "ui: [layer3] in = 7: the previous layer gives 8");
    p->layers[2].in = 0;

    p->batch = 0;
    assert_int_equal(nn_preset_check(p, "ui", err, sizeof err), -1);
    assert_string_equal(err, "ui: [train] batch = 0: must be in 1..1048576");
    p->batch = 8;

    nn_strlcpy(p->device, "tpu", sizeof p->device);
    assert_int_equal(nn_preset_check(p, "ui", err, sizeof err), -1);
    assert_non_null(strstr(err, "[train] device = tpu"));
    nn_strlcpy(p->device, "gpu", sizeof p->device);

    nn_strlcpy(p->description, "two\nlines", sizeof p->description);
    assert_int_equal(nn_preset_check(p, "ui", err, sizeof err), -1);
    assert_non_null(strstr(err, "[preset] description"));
    p->description[0] = '\0';

    p->n_layers = 0;
    assert_int_equal(nn_preset_check(p, "ui", err, sizeof err), -1);
    assert_non_null(strstr(err, "[layer1]"));
    free(p);
}

static void test_helpers(void **state)
{
    nn_shape s3 = { 3, { 3, 32, 32 } }, s1 = { 1, { 400, 0, 0 } }, bad = { 0, { 0, 0, 0 } };
    nn_shape huge = { 3, { 2147483647, 2147483647, 2147483647 } };
    char buf[64];
    (void)state;
    nn_shape_format(&s3, buf, sizeof buf);
    assert_string_equal(buf, "3x32x32");
    nn_shape_format(&s1, buf, sizeof buf);
    assert_string_equal(buf, "400");
    nn_shape_format(&s3, buf, 4);
    assert_string_equal(buf, "3x3");
    assert_int_equal(nn_shape_count(&s3), 3072);
    assert_int_equal(nn_shape_count(&s1), 400);
    assert_int_equal(nn_shape_count(&bad), -1);
    assert_int_equal(nn_shape_count(&huge), -1);
    assert_string_equal(nn_layer_kind_name(NN_LAYER_CONV2D), "conv2d");
    assert_string_equal(nn_layer_kind_name(NN_LAYER_MAXLEN), "maxlen");
    assert_string_equal(nn_layer_kind_name(NN_LAYER_DROPOUT), "dropout");
    assert_string_equal(nn_layer_kind_name(NN_LAYER_KIND_COUNT), "?");

    nn_preset *p = malloc(sizeof *p);
    assert_non_null(p);
    nn_preset_defaults(p);
    p->data = NN_DATA_MNIST;
    assert_int_equal(nn_preset_classes(p), 10);
    s3 = nn_preset_input_shape(p);
    nn_shape_format(&s3, buf, sizeof buf);
    assert_string_equal(buf, "1x28x28");
    p->data = NN_DATA_RANDOM;
    assert_int_equal(nn_preset_classes(p), 0);
    free(p);
}

/* ---------------------------------------------------------------- bad fixtures */

typedef struct bad_case {
    const char *file;
    const char *want[3];         /* substrings the message must hold, besides the path */
} bad_case;

static bad_case bad_cases[] = {
    { "bad-syntax.ini", { "syntax error: line 4", "this line has no equals sign" } },
    { "bad-unknown-section.ini", { "[trian]", "unknown section" } },
    { "bad-unknown-key.ini", { "[layer2] kernel: not a key of a layer of type relu" } },
    { "bad-static-key.ini", { "[train] bach: not a key of [train]", "batch" } },
    { "bad-number.ini", { "[train] batch = 3x", "not a whole number" } },
    { "bad-empty-number.ini", { "[train] epochs = : no value given" } },
    { "bad-range.ini", { "[optimizer] momentum = 1.5", "must be in [0, 1]" } },
    { "bad-batch-range.ini", { "[train] batch = 0", "must be in 1..1048576" } },
    { "bad-float-overflow.ini", { "[optimizer] lr = 1e40", "too large for a float" } },
    { "bad-float-hex.ini", { "[optimizer] lr = 0x10: not a number" } },
    { "bad-plus-int.ini", { "[layer2] virtual_batch = +3: not a whole number" } },
    { "bad-plus-float.ini", { "[optimizer] lr = +0.01: not a number" } },
    { "bad-dropout-p.ini", { "[layer2] p = 1", "[0, 1)" } },
    { "bad-missing-key.ini", { "[layer1] out: missing", "a layer of type linear needs out" } },
    { "bad-missing-type.ini", { "[layer2] type: missing", "linear, conv2d" } },
    { "bad-missing-set.ini", { "[data] set: missing", "mnist, cifar10 or random" } },
    { "bad-enum.ini", { "[train] loss = foo: expected cross_entropy or mse" } },
    { "bad-device.ini", { "[train] device = tpu", "cpu, cpu-ref or gpu" } },
    { "bad-bool.ini", { "[optimizer] nesterov = yes: expected true or false" } },
    { "bad-nesterov.ini", { "[optimizer] nesterov = true", "momentum > 0" } },
    { "bad-optimizer-key.ini", { "[optimizer] momentum: only for type = sgd" } },
    { "bad-data-key.ini", { "[data] rows: only for set = random" } },
    { "bad-key-outside.ini", { "batch: key outside any section" } },
    { "bad-layer-gap.ini", { "[layer3]: missing", "[layer4]" } },
    { "bad-layer-zero.ini", { "[layer0]", "numbered" } },
    { "bad-no-layers.ini", { "no [layer1] section" } },
    { "bad-chain.ini", { "[layer3] in = 500: the previous layer gives 400" } },
    { "bad-conv-in.ini", { "[layer1] in = 1: the data gives 3 channels (3x32x32)" } },
    { "bad-unflattened.ini", { "[layer3] type = linear", "6x28x28", "add a [flatten] layer" } },
    { "bad-conv1d-rank.ini", { "[layer1] type = conv1d", "(C,L)", "shape = 1x84" } },
    { "bad-maxlen-rank.ini", { "[layer1] type = maxlen", "(C,L)", "3x32x32" } },
    { "bad-kernel.ini", { "[layer1] kernel = 30", "larger than the padded input" } },
    { "bad-pool-kernel.ini", { "[layer2] kernel = 8", "larger than the input" } },
    { "bad-stride.ini", { "[layer1] stride = 0", "must be in 1..1048576" } },
    { "bad-reshape.ini", { "[layer2] shape = 1x15: holds 15 values, but the previous layer gives 16" } },
    { "bad-shape-syntax.ini", { "[layer2] shape = 1by16", "like 1x16" } },
    { "bad-sweep-from.ini", { "[lab] sweep_from = 13", "a power of two (8 or 16)" } },
    { "bad-sweep-order.ini", { "[lab] sweep_to = 32", "below sweep_from = 64" } },
    { "bad-sweep-steps.ini", { "[lab] sweep_steps = 0", "must be in 1..100000" } },
    { "bad-compare.ini", { "[train] compare = tpu", "cpu, cpu-ref or gpu" } },
    { "bad-compare-same.ini", { "[train] compare = cpu", "the same as device" } },
    { "bad-gpu-switch.ini", { "[gpu] graph = maybe", "expected true or false" } },
    { "bad-deterministic.ini", { "[train] deterministic = sometimes", "expected true or false" } },
    { "bad-loss.ini", { "[train] loss = cross_entropy", "gives 12", "10 classes" } },
    { "bad-mse-targets.ini", { "[train] loss = mse", "targets = 2" } },
    { "bad-random-xent.ini", { "[train] loss = cross_entropy", "use mse" } },
    { "bad-duplicate-key.ini", { "[train] Batch given twice (lines 6 and 8)" } },
    { "bad-duplicate-section.ini", { "[Train] given twice (lines 4 and 12)" } },
    { "bad-measured.ini", { "[preset] measured_gpu_s = -3", "must be >= 0" } },
    { "bad-graph-unknown.ini", { "[layer2] input = layer9: no [layer9]", "layer1 .. layer3" } },
    { "bad-graph-later.ini", { "[layer2] input = layer3: [layer3] comes later", "no cycles" } },
    { "bad-graph-self.ini", { "[layer2] input = layer2: names the layer itself", "no cycles" } },
    { "bad-graph-add-shape.ini", { "[layer3] inputs = layer1, layer2", "gives 8, the second 4", "same shape" } },
    { "bad-graph-slice.ini", { "[layer2] to = 9: past the end", "gives 8 features" } },
    { "bad-graph-weights-kind.ini", { "[layer4] weights = layer1", "of type linear, this one of type conv1d" } },
    { "bad-graph-weights-shape.ini", { "[layer2] weights = layer1", "linear 12->8, this one linear 8->4", "same shapes" } },
    { "bad-graph-dead.ini", { "[layer2] type = relu", "does not use this layer" } },
    { "bad-graph-ref.ini", { "[layer2] input = 1", "like layer3" } },
    { "bad-graph-add-input.ini", { "[layer2] input: not a key of a layer of type add", "inputs" } },
};

/* nn_preset_data_rows: the one count of a data set's rows before it is
 * loaded (the engine's memory check, the lab's loss-point interval and the
 * steps of an epoch all read it) */
static void test_data_rows(void **state)
{
    nn_preset p;
    long val = -1;
    (void)state;
    nn_preset_defaults(&p);
    p.data = NN_DATA_MNIST;
    assert_int_equal(nn_preset_data_rows(&p, &val), 60000);
    assert_int_equal(val, 10000);
    p.data = NN_DATA_CIFAR10;
    assert_int_equal(nn_preset_data_rows(&p, NULL), 50000);
    assert_int_equal(nn_preset_data_rows(&p, &val), 50000);
    assert_int_equal(val, 10000);
    p.data = NN_DATA_RANDOM;
    p.rows = 1234;
    p.val_rows = 56;
    assert_int_equal(nn_preset_data_rows(&p, &val), 1234);
    assert_int_equal(val, 56);
    assert_int_equal(nn_preset_steps_per_epoch(&p, 100), 13);   /* the last one partial */
}

static void test_bad_fixture(void **state)
{
    const bad_case *c = *state;
    char path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    nn_preset *p = malloc(sizeof *p);
    assert_non_null(p);
    path_of(path, FIXTURES_DIR, c->file);
    assert_int_equal(nn_preset_load(path, p, err, sizeof err), -1);
    /* the message starts with the path as given, is one line, and names the key */
    assert_int_equal(strncmp(err, path, strlen(path)), 0);
    assert_int_equal(err[strlen(path)], ':');
    assert_null(strchr(err, '\n'));
    for (int i = 0; i < 3 && c->want[i]; i++)
        if (!strstr(err, c->want[i]))
            fail_msg("message \"%s\" lacks \"%s\"", err, c->want[i]);
    free(p);
}

/* Every tests/fixtures/bad-*.ini has a case above. */
static void test_every_bad_fixture_listed(void **state)
{
    DIR *d = opendir(FIXTURES_DIR);
    struct dirent *e;
    int found = 0;
    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        int listed = 0;
        if (strncmp(e->d_name, "bad-", 4) != 0)
            continue;
        for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
            listed |= strcmp(bad_cases[i].file, e->d_name) == 0;
        if (!listed)
            fail_msg("%s has no test case", e->d_name);
        found++;
    }
    closedir(d);
    assert_int_equal(found, (int)(sizeof bad_cases / sizeof bad_cases[0]));
}

#define BAD(i) { bad_cases[i].file, test_bad_fixture, NULL, NULL, &bad_cases[i] }

int main(void)
{
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_presets_load),
        cmocka_unit_test(test_lenet_shapes),
        cmocka_unit_test(test_conv1d_regression_shapes),
        cmocka_unit_test(test_mnist_mlp_shapes),
        cmocka_unit_test(test_roundtrip_shipped),
        cmocka_unit_test(test_measured_keys),
        cmocka_unit_test(test_measured_job_kept),
        cmocka_unit_test(test_measured_job_default),
        cmocka_unit_test(test_roundtrip_awkward_values),
        cmocka_unit_test(test_roundtrip_lab_settings),
        cmocka_unit_test(test_longest_data_dir),
        cmocka_unit_test(test_save_creates_folder),
        cmocka_unit_test(test_save_impossible_path),
        cmocka_unit_test(test_save_write_error_keeps_old),
        cmocka_unit_test(test_save_invalid_keeps_old),
        cmocka_unit_test(test_find_user_shadows_system),
        cmocka_unit_test(test_find_not_found_says_where),
        cmocka_unit_test(test_find_paths_as_given),
        cmocka_unit_test(test_user_and_system_dirs),
        cmocka_unit_test(test_list_marks_broken_and_shadowed),
        cmocka_unit_test(test_mixed_case_and_defaults),
        cmocka_unit_test(test_name_defaults_to_file_stem),
        cmocka_unit_test(test_syntax_error_is_silent),
        cmocka_unit_test(test_line_too_long),
        cmocka_unit_test(test_cannot_open),
        cmocka_unit_test(test_check_in_memory),
        cmocka_unit_test(test_helpers),
        cmocka_unit_test(test_data_rows),
        cmocka_unit_test(test_every_bad_fixture_listed),
        BAD(0), BAD(1), BAD(2), BAD(3), BAD(4), BAD(5), BAD(6), BAD(7), BAD(8), BAD(9),
        BAD(10), BAD(11), BAD(12), BAD(13), BAD(14), BAD(15), BAD(16), BAD(17), BAD(18),
        BAD(19), BAD(20), BAD(21), BAD(22), BAD(23), BAD(24), BAD(25), BAD(26), BAD(27),
        BAD(28), BAD(29), BAD(30), BAD(31), BAD(32), BAD(33), BAD(34), BAD(35),
        BAD(36), BAD(37), BAD(38), BAD(39), BAD(40), BAD(41), BAD(42), BAD(43), BAD(44),
        BAD(45), BAD(46), BAD(47), BAD(48), BAD(49), BAD(50), BAD(51), BAD(52), BAD(53), BAD(54),
        BAD(55), BAD(56), BAD(57), BAD(58),
    };
    _Static_assert(sizeof bad_cases / sizeof bad_cases[0] == 59, "add a BAD(i) per bad case");
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

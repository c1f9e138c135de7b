/* tests/test_engine.c - the engine API: a job starts, pauses, resumes and is
 * cancelled; bad configurations are refused; training makes the loss fall;
 * the cpu and cpu-ref backends train the same curve; a step allocates nothing;
 * a calibration job shows its progress, gives its result and can be cancelled. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/preset.h"
#include "net.h"

#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif

/* ---- allocation counting (linked with -Wl,--wrap=...) ------------------------ */

static long allocations;
static size_t allocated_bytes;            /* the sizes asked for, never freed from */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);

void *__wrap_malloc(size_t n)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&allocated_bytes, n, __ATOMIC_RELAXED);
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&allocated_bytes, n * m, __ATOMIC_RELAXED);
    return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&allocated_bytes, n, __ATOMIC_RELAXED);
    return __real_realloc(p, n);
}

int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&allocated_bytes, n, __ATOMIC_RELAXED);
    return __real_posix_memalign(p, a, n);
}

/* ---- helpers ------------------------------------------------------------------ */

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* A small regression MLP on random rows: quick to build, no files needed. */
static void small_preset(nn_preset *p)
{
    char err[NN_ERR_LEN];
    nn_preset_defaults(p);
    strcpy(p->name, "test-mlp");
    p->data = NN_DATA_RANDOM;
    p->rows = 4096;
    p->val_rows = 256;
    p->features = 16;
    p->targets = 1;
    p->loss = NN_LOSS_MSE;
    p->opt = NN_OPT_SGD;
    p->lr = 0.01f;
    p->momentum = 0.9f;
    p->batch = 16;
    p->epochs = 1;
    p->n_layers = 4;
    p->layers[0] = (nn_layer_spec){ .kind = NN_LAYER_LINEAR, .in = 16, .out = 32 };
    p->layers[1] = (nn_layer_spec){ .kind = NN_LAYER_TANH };
    p->layers[2] = (nn_layer_spec){ .kind = NN_LAYER_DROPOUT, .p = 0.1f };
    p->layers[3] = (nn_layer_spec){ .kind = NN_LAYER_LINEAR, .in = 32, .out = 1 };
    if (nn_preset_check(p, "test-mlp", err, sizeof err) != 0)
        fail_msg("small preset: %s", err);
}

/* cfg: the small preset's defaults (p keeps the preset) on device. */
static void small_config(nn_preset *p, nn_job_config *cfg, const char *device)
{
    small_preset(p);
    nn_job_config_init(cfg, p);
    strcpy(cfg->device, device);
}

static void load_shipped(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static nn_snapshot wait_until(nn_job *job, int (*ok)(const nn_snapshot *, long), long arg)
{
    nn_snapshot s;
    for (int i = 0; i < 3000; i++) {      /* 30 s at most */
        nn_job_snapshot(job, &s);
        if (ok(&s, arg) || s.state == NN_JOB_FAILED)
            return s;
        sleep_ms(10);
    }
    fail_msg("timed out waiting (state %s, step %ld)", nn_job_state_name(s.state), s.step);
    return s;
}

static int past_step(const nn_snapshot *s, long step)
{
    return s->state == NN_JOB_RUNNING && s->step > step;
}

static int is_paused(const nn_snapshot *s, long unused)
{
    (void)unused;
    return s->state == NN_JOB_PAUSED;
}

static nn_job *start_or_fail(const nn_job_config *cfg)
{
    char err[NN_ERR_LEN] = "";
    nn_job *job = nn_job_start(cfg, err, sizeof err);
    if (!job)
        fail_msg("nn_job_start: %s", err);
    return job;
}

/* Runs cfg to the end and returns the final snapshot. */
static nn_snapshot run_to_end(const nn_job_config *cfg)
{
    nn_snapshot s;
    nn_job *job = start_or_fail(cfg);
    nn_job_wait(job);
    nn_job_snapshot(job, &s);
    nn_job_free(job);
    if (s.state != NN_JOB_DONE)
        fail_msg("job ended %s: %s", nn_job_state_name(s.state), s.error);
    return s;
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_pause_resume_cancel(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    small_config(&p, &cfg, "cpu-ref");
    cfg.steps = 100000000;          /* far more than the test lets it run */

    nn_job *job = start_or_fail(&cfg);
    nn_snapshot s = wait_until(job, past_step, 20);
    assert_int_equal(s.state, NN_JOB_RUNNING);

    nn_job_pause(job);
    s = wait_until(job, is_paused, 0);
    assert_int_equal(s.state, NN_JOB_PAUSED);
    long paused_at = s.step;
    sleep_ms(100);
    nn_job_snapshot(job, &s);
    assert_int_equal(s.state, NN_JOB_PAUSED);
    assert_int_equal(s.step, paused_at);      /* nothing trains while paused */

    nn_job_resume(job);
    s = wait_until(job, past_step, paused_at + 20);
    assert_true(s.step > paused_at);
    assert_true(s.has_rate && s.samples_per_s > 0 && s.eta_s > 0);

    nn_job_cancel(job);
    assert_int_equal(nn_job_wait(job), NN_JOB_CANCELLED);
    nn_job_snapshot(job, &s);
    assert_true(s.step < s.total_steps);
    nn_job_free(job);
}

static void test_cancel_while_paused(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    small_config(&p, &cfg, "cpu");
    cfg.steps = 100000000;
    nn_job *job = start_or_fail(&cfg);
    wait_until(job, past_step, 5);
    nn_job_pause(job);
    wait_until(job, is_paused, 0);
    nn_job_cancel(job);                       /* must wake the paused trainer */
    assert_int_equal(nn_job_wait(job), NN_JOB_CANCELLED);
    nn_job_free(job);
}

/* A job cancelled between reports still reports the loss of the steps it
 * ran since the last one (it said `train_loss: null` at step 378 of a
 * 2000-step interval). */
static void test_cancel_reports_partial_loss(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_loss_point pts[64];
    nn_snapshot s;
    small_config(&p, &cfg, "cpu");
    cfg.steps = 100000000;
    cfg.log_every = 1000000;                  /* no report of its own before the cancel */
    nn_job *job = start_or_fail(&cfg);
    wait_until(job, past_step, 37);
    nn_job_cancel(job);
    assert_int_equal(nn_job_wait(job), NN_JOB_CANCELLED);
    nn_job_snapshot(job, &s);
    assert_true(s.n_loss_points >= 1);
    long n = nn_job_loss_points(job, s.n_loss_points - 1, pts, 64);
    assert_int_equal(n, 1);
    assert_int_equal(pts[0].step, s.step);    /* the last point ends where the job stopped */
    assert_true(isfinite(pts[0].loss) && pts[0].loss > 0.0f);
    assert_true(s.last_loss == pts[0].loss);
    nn_job_free(job);
}

/* Every point and epoch result carries the job's training time when it was
 * published (the x of the lab's chart by seconds, the history's seconds):
 * rising, within the job's elapsed time, an epoch's after its points (its
 * validation counts). */
static void test_points_carry_training_time(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_loss_point pts[64];
    nn_epoch_result eps[4];
    nn_snapshot s;
    small_config(&p, &cfg, "cpu");
    p.rows = 1024;                            /* 64 steps an epoch, 8 points each */
    cfg.preset = p;
    cfg.epochs = 2;
    cfg.log_every = 8;
    nn_job *job = start_or_fail(&cfg);
    assert_int_equal(nn_job_wait(job), NN_JOB_DONE);
    nn_job_snapshot(job, &s);
    long n = nn_job_loss_points(job, 0, pts, 64);
    int m = nn_job_epoch_results(job, 0, eps, 4);
    assert_int_equal(n, 16);
    assert_int_equal(m, 2);
    for (long i = 0; i < n; i++) {
        assert_true(pts[i].time_s > 0 && pts[i].time_s <= s.elapsed_s);
        if (i > 0)
            assert_true(pts[i].time_s > pts[i - 1].time_s);
    }
    assert_true(eps[0].time_s > pts[7].time_s && eps[0].time_s < pts[8].time_s);
    assert_true(eps[1].time_s > pts[15].time_s && eps[1].time_s <= s.elapsed_s);
    nn_job_free(job);
}

static void test_bad_configs_are_refused(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    char err[NN_ERR_LEN];
    small_preset(&p);

    nn_job_config_init(&cfg, &p);
    strcpy(cfg.device, "abacus");
    assert_null(nn_job_start(&cfg, err, sizeof err));
    assert_non_null(strstr(err, "abacus"));

    /* without a GPU: refused at once when the module cannot be loaded, else
     * (the probe runs on the job's thread, never the caller's) the job fails */
    nn_job_config_init(&cfg, &p);
    strcpy(cfg.device, "gpu");
    nn_job *job = NULL;
    if (nn_device_require("gpu", err, sizeof err) == 0)
        snprintf(err, sizeof err, "gpu: usable here");       /* a GPU machine: nothing to refuse */
    else
        job = nn_job_start(&cfg, err, sizeof err);
    if (job) {
        nn_snapshot s;
        assert_int_equal(nn_job_wait(job), NN_JOB_FAILED);
        nn_job_snapshot(job, &s);
        snprintf(err, sizeof err, "%s", s.error);
        nn_job_free(job);
    }
    assert_non_null(strstr(err, "gpu"));

    nn_job_config_init(&cfg, &p);
    cfg.batch = -3;
    assert_null(nn_job_start(&cfg, err, sizeof err));
    assert_non_null(strstr(err, "batch"));

    nn_job_config_init(&cfg, &p);
    cfg.lr = -1;
    assert_null(nn_job_start(&cfg, err, sizeof err));
    assert_non_null(strstr(err, "learning rate"));
}

static void test_missing_data_dir_fails_the_job(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_snapshot s;
    load_shipped("mnist-mlp-128", &p);
    nn_job_config_init(&cfg, &p);
    strcpy(cfg.data_dir, "/nonexistent/nnlab-data");
    nn_job *job = start_or_fail(&cfg);
    assert_int_equal(nn_job_wait(job), NN_JOB_FAILED);
    nn_job_snapshot(job, &s);
    assert_non_null(strstr(s.error, "/nonexistent/nnlab-data"));
    nn_job_free(job);
}

/* A learning rate far too large: the loss becomes NaN or inf at once, and
 * the job stops there as DIVERGED, saying at which step, instead of running
 * its 50 epochs of NaN (on each CPU device, with and without reading the
 * loss back every step). */
static void test_divergence_stops_the_job(void **state)
{
    (void)state;
    const char *devices[] = { "cpu", "cpu-ref" };
    for (int d = 0; d < 2; d++)
        for (int sync = 0; sync < 2; sync++) {
            nn_preset p;
            nn_job_config cfg;
            nn_snapshot s;
            small_config(&p, &cfg, devices[d]);
            cfg.lr = 1e30;
            cfg.epochs = 50;                 /* 12,800 steps if it ran on */
            cfg.log_every = 100;
            cfg.sync_every_step = sync;
            nn_job *job = start_or_fail(&cfg);
            assert_int_equal(nn_job_wait(job), NN_JOB_DIVERGED);
            nn_job_snapshot(job, &s);
            nn_job_free(job);
            print_message("# %s, sync %d: %s\n", devices[d], sync, s.error);
            assert_int_equal(s.state, NN_JOB_DIVERGED);
            assert_string_equal(nn_job_state_name(s.state), "diverged");
            assert_true(nn_job_state_ended(s.state));
            /* step 1's loss is computed before its update: finite */
            assert_int_equal(s.diverged_step, 2);
            assert_int_equal(s.diverged_exact, 1);
            assert_int_equal(s.step, 2);
            assert_int_equal(s.n_epoch_results, 0);   /* no validation of NaN */
            assert_non_null(strstr(s.error, "at step 2"));
            assert_true(strstr(s.error, "loss became NaN") || strstr(s.error, "loss became inf"));
        }
}

/* A sane learning rate never trips it. */
static void test_finite_loss_is_not_divergence(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    small_config(&p, &cfg, "cpu");
    cfg.steps = 300;
    nn_snapshot s = run_to_end(&cfg);
    assert_int_equal(s.diverged_step, 0);
    assert_false(nn_job_state_ended(NN_JOB_RUNNING) || nn_job_state_ended(NN_JOB_PAUSED) ||
                 nn_job_state_ended(NN_JOB_PREPARING));
}

/* ---- sizes checked before memory is taken ------------------------------------------ */

/* A batch larger than the training set is refused at once, saying which. */
static void test_batch_larger_than_the_data_is_refused(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    char err[NN_ERR_LEN];
    small_config(&p, &cfg, "cpu");
    cfg.batch = 4097;                        /* the set has 4096 rows */
    assert_null(nn_job_start(&cfg, err, sizeof err));
    print_message("# %s\n", err);
    assert_non_null(strstr(err, "batch 4097: larger than the training set (4096 samples)"));
    cfg.batch = 4096;                        /* one step an epoch: allowed */
    cfg.epochs = 1;
    nn_snapshot s = run_to_end(&cfg);
    assert_int_equal(s.step, 1);
}

/* A layer no machine holds is refused before anything is allocated, naming
 * the layer's key and the bytes; so is a batch whose buffers are too large,
 * naming the batch as the caller's user gave it. */
static void test_too_large_for_memory_is_refused(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_memory_estimate m;
    char err[NN_ERR_LEN];
    small_preset(&p);
    p.n_layers = 3;                          /* 16 -> 1048576 -> 1048576 -> 1: 4.4 TB of weights */
    p.layers[0] = (nn_layer_spec){ .kind = NN_LAYER_LINEAR, .in = 16, .out = 1048576 };
    p.layers[1] = (nn_layer_spec){ .kind = NN_LAYER_LINEAR, .in = 1048576, .out = 1048576 };
    p.layers[2] = (nn_layer_spec){ .kind = NN_LAYER_LINEAR, .in = 1048576, .out = 1 };
    assert_int_equal(nn_preset_check(&p, "wide", err, sizeof err), 0);
    nn_job_config_init(&cfg, &p);
    long before = __atomic_load_n(&allocations, __ATOMIC_RELAXED);
    assert_null(nn_job_start(&cfg, err, sizeof err));
    assert_true(__atomic_load_n(&allocations, __ATOMIC_RELAXED) - before < 10);
    print_message("# %s\n", err);
    /* three arenas (weights, gradients, SGD's momentum) and the host copy
     * the initial weights are drawn into: 4 x 4.4 TB */
    assert_non_null(strstr(err, "[layer2] out = 1048576 (linear 1048576->1048576): needs ~17.6 TB of "
                            "memory (parameters 17.6 TB, "));
    assert_non_null(strstr(err, "available"));

    /* the batch drives it: named as given; unknown memory (0) refuses nothing */
    small_config(&p, &cfg, "cpu");
    cfg.batch = 4096;                        /* its buffers outweigh the 4096 rows */
    nn_job_memory_estimate(&cfg, &m);
    assert_true(m.available > 0);
    assert_int_equal(nn_job_check_sizes(&cfg, &m, "--batch", err, sizeof err), 0);
    m.available = m.host / 2;
    assert_int_equal(nn_job_check_sizes(&cfg, &m, "--batch", err, sizeof err), -1);
    print_message("# %s\n", err);
    assert_non_null(strstr(err, "--batch 4096: needs ~"));
    m.available = 0;
    assert_int_equal(nn_job_check_sizes(&cfg, &m, "--batch", err, sizeof err), 0);

    /* on a GPU the network is the device's: only the data and the staging are
     * the host's (asked without loading the GPU module) */
    strcpy(cfg.device, "gpu");
    nn_job_memory_estimate(&cfg, &m);
    assert_int_equal(m.device, 1);
    assert_true(m.host >= m.data && m.host - m.fixed < m.data + m.batch);

    /* N ranks on this host hold N of it (a training config that starts its
     * ranks runs as the ranks kind); the refusal says each one's parts */
    nn_memory_estimate one;
    strcpy(cfg.device, "cpu");
    cfg.batch = 64;
    nn_job_memory_estimate(&cfg, &one);
    cfg.ranks = 4;
    nn_job_memory_estimate(&cfg, &m);
    assert_int_equal(m.copies, 4);
    assert_true(fabs(m.host - 4 * one.host) < 1e-6 * one.host);
    assert_true(m.params == one.params && m.data == one.data);   /* the parts stay each rank's */
    m.available = 2.5 * one.host;                                /* room for two of them */
    assert_int_equal(nn_job_check_sizes(&cfg, &m, "--batch", err, sizeof err), -1);
    print_message("# %s\n", err);
    assert_non_null(strstr(err, "(4 ranks, each: parameters "));
    cfg.ranks = 0;
}

/* The estimate adds up to what a job allocates: the data set, the network
 * for its batch, the batch staging (within a quarter either way: the thread
 * pool, the histories and the allocator's rounding are not in it). */
static void test_memory_estimate_matches_the_job(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_memory_estimate m;
    small_config(&p, &cfg, "cpu-ref");
    p.rows = 20000;
    p.layers[0].out = p.layers[3].in = 512;
    cfg.preset = p;
    cfg.batch = 1024;
    cfg.steps = 2;
    cfg.no_validation = 1;
    assert_int_equal(nn_preset_check(&cfg.preset, "test", (char[NN_ERR_LEN]){ 0 }, NN_ERR_LEN), 0);
    nn_job_memory_estimate(&cfg, &m);
    size_t before = __atomic_load_n(&allocated_bytes, __ATOMIC_RELAXED);
    run_to_end(&cfg);
    double used = (double)(__atomic_load_n(&allocated_bytes, __ATOMIC_RELAXED) - before);
    print_message("# estimated %.0f bytes (params %.0f, batch %.0f, data %.0f), allocated %.0f\n",
                  m.host, m.params, m.batch, m.data, used);
    assert_int_equal(m.device, 0);
    assert_int_equal(m.train_rows, 20000);
    assert_true(m.fixed == NN_JOB_FIXED_BYTES);  /* pages, not allocations: left out here */
    assert_true(m.host - m.fixed > 0.8 * used && m.host - m.fixed < 1.25 * used);
    assert_true(m.batch > m.params);         /* 1024 x 512 activations beat 17k weights */
    /* and where the parameters outweigh the rest, what is held at the peak,
     * while the network is made: the arenas and the initial weights' host
     * copy together (before, one copy of the parameters short: ten linear
     * 4096 layers estimated 1.9 GB against a 2.52 GB peak) */
    small_config(&p, &cfg, "cpu-ref");
    p.layers[0] = (nn_layer_spec){ .kind = NN_LAYER_LINEAR, .in = 16, .out = 2048 };
    p.layers[1] = (nn_layer_spec){ .kind = NN_LAYER_LINEAR, .in = 2048, .out = 2048 };
    p.layers[2] = (nn_layer_spec){ .kind = NN_LAYER_LINEAR, .in = 2048, .out = 2048 };
    p.layers[3] = (nn_layer_spec){ .kind = NN_LAYER_LINEAR, .in = 2048, .out = 1 };
    cfg.preset = p;
    cfg.batch = 8;
    assert_int_equal(nn_preset_check(&cfg.preset, "wide", (char[NN_ERR_LEN]){ 0 }, NN_ERR_LEN), 0);
    nn_job_memory_estimate(&cfg, &m);
    nn_net_bytes nb;
    nn_net_bytes_of(&cfg.preset, 8, NULL, &nb);
    assert_true(nb.init_host > 0 && nb.init_host * 3 <= nb.params + 1e3);
    assert_true(m.params >= nb.params + nb.init_host);
}

/* Mean of the first and the last recorded loss points of a job. */
static void first_last_loss(const nn_job_config *cfg, float *first, float *last, nn_snapshot *out)
{
    nn_loss_point pts[1024];
    nn_job *job = start_or_fail(cfg);
    nn_job_wait(job);
    nn_job_snapshot(job, out);
    long n = nn_job_loss_points(job, 0, pts, 1024);
    nn_job_free(job);
    if (out->state != NN_JOB_DONE)
        fail_msg("job ended %s: %s", nn_job_state_name(out->state), out->error);
    assert_true(n >= 2);
    *first = pts[0].loss;
    *last = pts[n - 1].loss;
}

static void test_lenet_loss_falls_on_synthetic_cifar(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_snapshot s;
    float first, last;
    load_shipped("lenet-cifar10", &p);
    nn_job_config_init(&cfg, &p);
    strcpy(cfg.device, "cpu");
    cfg.steps = 2000;
    cfg.log_every = 200;
    cfg.no_validation = 1;
    first_last_loss(&cfg, &first, &last, &s);
    assert_true(s.data_synthetic);
    print_message("# lenet-cifar10 synthetic: loss %.3f -> %.3f\n", first, last);
    /* the issue asks that it falls; by a clear margin, not by noise */
    assert_true(last < 0.8f * first);
}

static void test_mlp_loss_halves(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_snapshot s;
    float first, last;
    load_shipped("mnist-mlp-128", &p);
    nn_job_config_init(&cfg, &p);
    strcpy(cfg.device, "cpu");
    cfg.steps = 600;
    cfg.log_every = 25;
    first_last_loss(&cfg, &first, &last, &s);
    print_message("# mnist-mlp-128 on %s: loss %.3f -> %.3f, val acc %.3f\n", s.data_name, first, last,
                  s.last_epoch.val_accuracy);
    assert_true(last < 0.5f * first);
    assert_int_equal(s.n_epoch_results, 1);   /* --steps ends inside epoch 1: validated at the end */
    assert_true(s.last_epoch.val_accuracy > 0.5f);
}

/* The same seed on cpu and cpu-ref: the same data order, weights and dropout
 * masks, so the loss curves agree to float rounding. */
static void test_cpu_matches_reference_curve(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_loss_point a[64], b[64];
    long na, nb;
    small_preset(&p);
    nn_job_config_init(&cfg, &p);
    cfg.steps = 200;
    cfg.log_every = 10;
    cfg.seed = 7;

    const char *devices[2] = { "cpu-ref", "cpu" };
    nn_loss_point *out[2] = { a, b };
    long *count[2] = { &na, &nb };
    for (int d = 0; d < 2; d++) {
        strcpy(cfg.device, devices[d]);
        nn_job *job = start_or_fail(&cfg);
        assert_int_equal(nn_job_wait(job), NN_JOB_DONE);
        *count[d] = nn_job_loss_points(job, 0, out[d], 64);
        nn_job_free(job);
    }
    assert_int_equal(na, nb);
    assert_true(na >= 20);
    for (long i = 0; i < na; i++) {
        assert_int_equal(a[i].step, b[i].step);
        if (fabsf(a[i].loss - b[i].loss) > 1e-3f + 1e-3f * fabsf(a[i].loss))
            fail_msg("point %ld (step %ld): cpu-ref %.6f vs cpu %.6f", i, a[i].step, a[i].loss, b[i].loss);
    }
}

static void test_same_seed_same_run(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    small_config(&p, &cfg, "cpu");
    cfg.steps = 100;
    cfg.seed = 42;
    nn_snapshot s1 = run_to_end(&cfg), s2 = run_to_end(&cfg);
    assert_true(s1.last_loss == s2.last_loss);
    assert_true(s1.last_epoch.val_loss == s2.last_epoch.val_loss);
    cfg.seed = 43;
    nn_snapshot s3 = run_to_end(&cfg);
    assert_true(s1.last_loss != s3.last_loss);
}

/* Allocations over a whole job do not grow with its step count. */
static void test_no_allocation_per_step(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    long counts[2];
    const long steps[2] = { 10, 1000 };
    small_preset(&p);
    for (int i = -1; i < 2; i++) {
        nn_job_config_init(&cfg, &p);
        strcpy(cfg.device, "cpu");
        cfg.threads = 1;
        /* i = -1, uncounted: the first job of these shapes and thread count
         * contests them (OpenBLAS against BLIS, calibrate_products.c) as its
         * backend opens, allocating the operands; the jobs after it find
         * them chosen. What is counted is what a job allocates per step. */
        cfg.steps = steps[i < 0 ? 0 : i];
        cfg.log_every = 1000000;           /* one point at the end of each run */
        cfg.no_validation = 1;
        long before = __atomic_load_n(&allocations, __ATOMIC_RELAXED);
        run_to_end(&cfg);
        if (i >= 0)
            counts[i] = __atomic_load_n(&allocations, __ATOMIC_RELAXED) - before;
    }
    print_message("# allocations: %ld for %ld steps, %ld for %ld steps\n", counts[0], steps[0], counts[1],
                  steps[1]);
    assert_int_equal(counts[0], counts[1]);
}

static void test_bench_reports_median(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    small_config(&p, &cfg, "cpu");
    cfg.bench = 1;
    cfg.steps = 30;
    cfg.warmup = 5;
    nn_snapshot s = run_to_end(&cfg);
    assert_int_equal(s.timed_steps, 30);
    assert_int_equal(s.step, 35);
    assert_true(s.us_per_step_median > 0);
    assert_int_equal(s.n_epoch_results, 0);   /* bench does not validate */
    double sum = 0;
    for (int ph = 0; ph < NN_PHASE_COUNT; ph++)
        sum += s.phase_us[ph];
    assert_true(sum <= s.us_per_step * 1.01 + 1);
}

/* ---- the calibration job kind ------------------------------------------------ */

/* A cache folder of the tests' own, so that calibrating writes nothing of the
 * user's; removed at the end. */
static char cache_dir[] = "/tmp/nnlab-test-engine-XXXXXX";
static int cache_made;

static void private_cache(void)
{
    if (!cache_made) {
        if (!mkdtemp(cache_dir))
            fail_msg("mkdtemp %s failed", cache_dir);
        cache_made = 1;
    }
    setenv("XDG_CACHE_HOME", cache_dir, 1);
}

static int remove_cache(void **state)
{
    (void)state;
    char path[NN_PATH_LEN];
    if (!cache_made)
        return 0;
    if (nn_calibration_path("cpu", path, sizeof path) == 0)
        unlink(path);
    snprintf(path, sizeof path, "%s/nnlab", cache_dir);
    rmdir(path);
    rmdir(cache_dir);
    return 0;
}

/* A calibration needs no preset: a zeroed configuration with a device. */
static void calibration_config(nn_job_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kind = NN_JOB_CALIBRATE;
    strcpy(cfg->device, "cpu");
    cfg->threads = 1;
}

static int calibration_under_way(const nn_snapshot *s, long unused)
{
    (void)unused;
    return s->state == NN_JOB_RUNNING && s->fraction_done > 0 && s->activity[0];
}

static void test_calibration_job(void **state)
{
    (void)state;
    nn_job_config cfg;
    nn_snapshot s;
    nn_calibration cal, cached;
    private_cache();
    calibration_config(&cfg);
    nn_job *job = start_or_fail(&cfg);
    s = wait_until(job, calibration_under_way, 0);
    assert_int_equal(s.kind, NN_JOB_CALIBRATE);
    assert_int_equal(s.state, NN_JOB_RUNNING);
    assert_true(s.fraction_done < 1.0);
    print_message("# calibrating: %.0f%% %s\n", s.fraction_done * 100, s.activity);
    int early = nn_job_calibration(job, &cal);
    nn_job_snapshot(job, &s);
    assert_true(early != 0 || s.state == NN_JOB_DONE);   /* no result before the end */
    assert_int_equal(nn_job_wait(job), NN_JOB_DONE);
    nn_job_snapshot(job, &s);
    assert_true(s.fraction_done >= 1.0);
    assert_int_equal(nn_job_calibration(job, &cal), 0);
    nn_job_free(job);
    print_message("# cpu, one thread: %.1f GFLOP/s, %.1f GB/s\n", cal.gemm_gflops, cal.mem_gbps);
    assert_string_equal(cal.device, "cpu");
    assert_true(cal.gemm_gflops > 0);
    assert_string_equal(s.note, "");         /* cached: */
    assert_int_equal(nn_calibration_load("cpu", &cached), 0);
}

static void test_calibration_cancel(void **state)
{
    (void)state;
    nn_job_config cfg;
    nn_calibration cal, cached;
    char path[NN_PATH_LEN];
    private_cache();
    assert_int_equal(nn_calibration_path("cpu", path, sizeof path), 0);
    unlink(path);
    calibration_config(&cfg);
    nn_job *job = start_or_fail(&cfg);
    wait_until(job, calibration_under_way, 0);
    nn_job_cancel(job);
    assert_int_equal(nn_job_wait(job), NN_JOB_CANCELLED);
    assert_int_equal(nn_job_calibration(job, &cal), -1);
    nn_job_free(job);
    assert_int_equal(nn_calibration_load("cpu", &cached), -1);    /* a cancelled job keeps nothing */
}

/* A training job has no calibration to give. */
static void test_training_job_has_no_calibration(void **state)
{
    (void)state;
    nn_preset p;
    nn_job_config cfg;
    nn_calibration cal;
    small_config(&p, &cfg, "cpu-ref");
    cfg.steps = 5;
    nn_job *job = start_or_fail(&cfg);
    assert_int_equal(nn_job_wait(job), NN_JOB_DONE);
    assert_int_equal(nn_job_calibration(job, &cal), -1);
    nn_snapshot s;
    nn_job_snapshot(job, &s);
    assert_int_equal(s.kind, NN_JOB_TRAIN);
    assert_true(s.fraction_done == 1.0);
    nn_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pause_resume_cancel),
        cmocka_unit_test(test_cancel_while_paused),
        cmocka_unit_test(test_cancel_reports_partial_loss),
        cmocka_unit_test(test_points_carry_training_time),
        cmocka_unit_test(test_bad_configs_are_refused),
        cmocka_unit_test(test_missing_data_dir_fails_the_job),
        cmocka_unit_test(test_divergence_stops_the_job),
        cmocka_unit_test(test_finite_loss_is_not_divergence),
        cmocka_unit_test(test_batch_larger_than_the_data_is_refused),
        cmocka_unit_test(test_too_large_for_memory_is_refused),
        cmocka_unit_test(test_memory_estimate_matches_the_job),
        cmocka_unit_test(test_lenet_loss_falls_on_synthetic_cifar),
        cmocka_unit_test(test_mlp_loss_halves),
        cmocka_unit_test(test_cpu_matches_reference_curve),
        cmocka_unit_test(test_same_seed_same_run),
        cmocka_unit_test(test_no_allocation_per_step),
        cmocka_unit_test(test_bench_reports_median),
        cmocka_unit_test(test_calibration_job),
        cmocka_unit_test(test_calibration_cancel),
        cmocka_unit_test(test_training_job_has_no_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, remove_cache);
}

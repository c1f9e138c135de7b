/* tests/test_jacobian_memory.c - the Jacobian job's memory: the
 * estimate (nn_jac_memory_of) is what jac_prepare and the method allocate,
 * counted byte by byte on the host (linked with -Wl,--wrap=malloc, calloc,
 * free) and on the backend (cpu-ref behind a table that counts its alloc and
 * free), for every method at a few vals; and a job too large for the memory
 * available is refused before it starts, naming [task] val and the bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend.h"
#include "jacobian/jacobian_internal.h"
#include "nnlab/engine.h"
#include "util.h"

#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif

/* ---- counting: live bytes by pointer, and the peak ------------------------------- */

#define MAX_LIVE 256

typedef struct counter {
    void *ptr[MAX_LIVE];
    size_t bytes[MAX_LIVE];
    size_t live, peak;
    int overflow;                /* more live blocks than the table holds */
} counter;

static counter host_count, device_count;
/* Only this thread, only between count_start and count_stop, and never the
 * backend's own allocations (they are the device's) */
static _Thread_local int counting, in_backend;

static void count_add(counter *c, void *p, size_t n)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (!c->ptr[i]) {
            c->ptr[i] = p;
            c->bytes[i] = n;
            c->live += n;
            if (c->live > c->peak)
                c->peak = c->live;
            return;
        }
    c->overflow = 1;
}

/* A block allocated before counting started is not in the table: ignored. */
static void count_remove(counter *c, void *p)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (c->ptr[i] == p) {
            c->live -= c->bytes[i];
            c->ptr[i] = NULL;
            return;
        }
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void __real_free(void *p);

void *__wrap_malloc(size_t n)
{
    void *p = __real_malloc(n);
    if (p && counting && !in_backend)
        count_add(&host_count, p, n);
    return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
    void *p = __real_calloc(n, m);
    if (p && counting && !in_backend)
        count_add(&host_count, p, n * m);
    return p;
}

void __wrap_free(void *p)
{
    if (p && counting && !in_backend)
        count_remove(&host_count, p);
    __real_free(p);
}

/* cpu-ref, its alloc and free counted as the device's */
static nn_backend_ops counting_ops;

static int counting_alloc(nn_backend *b, size_t bytes, void **out)
{
    in_backend = 1;
    int rc = nn_backend_find("cpu-ref")->alloc(b, bytes, out);
    in_backend = 0;
    if (rc == 0 && counting)
        count_add(&device_count, *out, bytes);
    return rc;
}

static void counting_free(nn_backend *b, void *p)
{
    if (counting)
        count_remove(&device_count, p);
    in_backend = 1;
    nn_backend_find("cpu-ref")->free(b, p);
    in_backend = 0;
}

static void count_start(void)
{
    memset(&host_count, 0, sizeof host_count);
    memset(&device_count, 0, sizeof device_count);
    counting = 1;
}

/* ---- the estimate against what is allocated ---------------------------------------- */

static const nn_jac_shape mlp = { 3, { 1, 20, 20, 400 }, { 1, 1, 0 } };

/* Prepares and runs method m at val on the counting cpu-ref; the peaks. */
static void run_counted(nn_backend *b, const nn_jac_shape *s, int val, enum nn_jac_method m)
{
    jac_run r;
    char err[NN_ERR_LEN] = "";
    count_start();
    int rc = jac_prepare(&r, b, s, val, m, 7, 0, err, sizeof err);
    if (rc == 0)
        rc = jac_forward(&r, &r.acts);
    if (rc == 0)
        rc = jac_run_method(&r);
    counting = 0;
    jac_release(&r);
    if (rc != 0)
        fail_msg("%s at val %d: %s %s", nn_jac_method_name(m), val, err, b->last_error);
    assert_false(host_count.overflow || device_count.overflow);
}

static void check_estimate(nn_backend *b, const nn_jac_shape *s, int val, enum nn_jac_method m)
{
    nn_jac_memory est;
    run_counted(b, s, val, m);
    nn_jac_memory_of(s, val, m, &est);
    print_message("# %-10s val %3d: device %zu bytes (estimate %.0f), host %zu (estimate %.0f)\n",
                  nn_jac_method_name(m), val, device_count.peak, est.device, host_count.peak, est.host);
    if ((double)device_count.peak != est.device || (double)host_count.peak != est.host)
        fail_msg("%s at val %d: allocated device %zu, host %zu; estimated %.0f, %.0f", nn_jac_method_name(m),
                 val, device_count.peak, host_count.peak, est.device, est.host);
}

/* Every method at a few vals (batched's chunk differs at each), on the
 * seed's network and on one without a tanh after its widest layer. */
static void test_estimate_is_what_is_allocated(void **state)
{
    static const int vals[] = { 1, 5, 12 };
    static const nn_jac_shape other = { 2, { 3, 50, 4 }, { 0, 1 } };
    nn_backend b;
    nn_backend_config bc = { .threads = 1 };
    (void)state;
    counting_ops = *nn_backend_find("cpu-ref");
    counting_ops.alloc = counting_alloc;
    counting_ops.free = counting_free;
    assert_int_equal(nn_backend_open(&b, &counting_ops, &bc), 0);
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++) {
        for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
            check_estimate(&b, &mlp, vals[i], (enum nn_jac_method)m);
        check_estimate(&b, &other, 9, (enum nn_jac_method)m);
    }
    nn_backend_close(&b);
}

/* The sizes by hand at val 100000 for the seed's network: batched holds one
 * cotangent group of val*out rows, twice that in its one-hot buffer. */
static void test_sizes_by_hand(void **state)
{
    nn_jac_sizes z;
    (void)state;
    nn_jac_sizes_of(&mlp, 100000, NN_JAC_BATCHED, &z);
    assert_int_equal(z.chunk, 1);
    assert_int_equal(z.onehot, 2 * 40000000 - 1);
    assert_int_equal(z.acts, 100000 * (1 + 20 + 20 + 20 + 20 + 400));
    assert_int_equal(z.rep, z.acts);
    assert_int_equal(z.scratch, 100000 * 400);
    assert_int_equal(z.blocks, 40000000);
    assert_int_equal(z.staging, z.onehot);
    nn_jac_sizes_of(&mlp, 100, NN_JAC_ROWS, &z);
    assert_int_equal(z.onehot, 40000 + 400 - 1);
    assert_int_equal(z.dx, 400 * 100);
    assert_int_equal(z.rep, 0);
}

/* ---- the size check ------------------------------------------------------------------ */

static void jacobian_config(nn_preset *p, nn_job_config *cfg, const char *device, int val, int method)
{
    char err[NN_ERR_LEN];
    assert_int_equal(nn_preset_load(PRESETS_SRCDIR "/mlp-jacobian.ini", p, err, sizeof err), 0);
    nn_job_config_init(cfg, p);
    nn_strlcpy(cfg->device, device, sizeof cfg->device);
    cfg->jac_val = val;
    cfg->jac_method = method;
}

/* The estimate the front ends see is the one above; a device with memory
 * of its own leaves the host only the host arrays. */
static void test_job_estimate(void **state)
{
    nn_preset p;
    nn_job_config cfg;
    nn_memory_estimate m;
    nn_jac_memory est;
    char err[NN_ERR_LEN];
    (void)state;
    jacobian_config(&p, &cfg, "cpu", 100000, NN_JAC_BATCHED);
    nn_jac_memory_of(&mlp, 100000, NN_JAC_BATCHED, &est);
    nn_job_memory_estimate(&cfg, &m);
    assert_true(m.host == est.device + est.host);
    assert_true(m.params + m.batch == est.device && m.data == est.host);
    assert_int_equal(m.device, 0);
    assert_true(m.available > 0);
    m.available = m.host / 2;
    assert_int_equal(nn_job_check_sizes(&cfg, &m, "--val", err, sizeof err), -1);
    print_message("# %s\n", err);
    assert_non_null(strstr(err, "--val 100000: needs ~"));
    assert_non_null(strstr(err, " of memory (method batched: parameters "));
    m.available = m.host;
    assert_int_equal(nn_job_check_sizes(&cfg, &m, "--val", err, sizeof err), 0);
    m.available = 0;                                  /* unknown refuses nothing */
    assert_int_equal(nn_job_check_sizes(&cfg, &m, "--val", err, sizeof err), 0);

    /* the preset's val when the config has none; a GPU's host part */
    cfg.jac_val = 0;
    strcpy(cfg.device, "gpu");
    nn_job_memory_estimate(&cfg, &m);
    nn_jac_memory_of(&mlp, 100, NN_JAC_BATCHED, &est);
    assert_int_equal(m.device, 1);
    assert_true(m.host == est.host && m.data == est.host);
    m.available = m.host / 2;
    assert_int_equal(nn_job_check_sizes(&cfg, &m, NULL, err, sizeof err), -1);
    print_message("# %s\n", err);
    assert_non_null(strstr(err, "[task] val = 100: needs ~"));
    assert_non_null(strstr(err, " of host memory (method batched: host arrays "));
    assert_non_null(strstr(err, "more on the device)"));
}

/* rows on host memory counts every lane it may run (jacobian_lanes.c):
 * each further one holds the backend's buffers again and the host arrays
 * but the blocks, which the lanes share; other methods run one. */
static void test_lanes_estimate(void **state)
{
    nn_preset p;
    nn_job_config cfg;
    nn_memory_estimate one, three;
    nn_jac_memory est;
    nn_jac_sizes z;
    (void)state;
    jacobian_config(&p, &cfg, "cpu", 500, NN_JAC_ROWS);
    nn_jac_memory_of(&mlp, 500, NN_JAC_ROWS, &est);
    nn_jac_sizes_of(&mlp, 500, NN_JAC_ROWS, &z);
    assert_true(est.lane_host == est.host - 4.0 * (double)z.blocks);
    cfg.threads = 1;
    nn_job_memory_estimate(&cfg, &one);
    cfg.threads = 3;
    nn_job_memory_estimate(&cfg, &three);
    assert_true(one.host == est.device + est.host);
    assert_true(three.host == 3 * est.device + est.host + 2 * est.lane_host);
    assert_true(three.params + three.batch + three.data == three.host);
    cfg.jac_val = 2;                                  /* no more lanes than samples */
    nn_job_memory_estimate(&cfg, &three);
    nn_jac_memory_of(&mlp, 2, NN_JAC_ROWS, &est);
    assert_true(three.host == 2 * est.device + est.host + est.lane_host);
    cfg.jac_val = 500;
    cfg.jac_method = NN_JAC_PER_SAMPLE;              /* one lane */
    nn_job_memory_estimate(&cfg, &three);
    nn_jac_memory_of(&mlp, 500, NN_JAC_PER_SAMPLE, &est);
    assert_true(three.host == est.device + est.host);
}

/* What the process may still map, as the engine reads it: an address-space
 * limit that leaves room lets it see only that room. */
static size_t mapped_bytes(void)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    return pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* val 100000 by batched needs over 1 GB; under a limit that leaves 256 MB
 * it is refused by nn_job_start, before its thread starts, naming the
 * preset's [task] val and the bytes needed and available. */
static void test_too_large_is_refused(void **state)
{
    nn_preset p;
    nn_job_config cfg;
    struct rlimit old, small;
    char err[NN_ERR_LEN] = "";
    (void)state;
    jacobian_config(&p, &cfg, "cpu-ref", 100000, NN_JAC_BATCHED);
    assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
    small = old;
    small.rlim_cur = mapped_bytes() + ((rlim_t)256 << 20);
    if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < small.rlim_cur)
        small.rlim_cur = old.rlim_cur;
    assert_int_equal(setrlimit(RLIMIT_AS, &small), 0);
    nn_job *job = nn_job_start(&cfg, err, sizeof err);
    assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
    if (job) {                       /* started: stop it before it takes the memory */
        nn_job_cancel(job);
        nn_job_wait(job);
        nn_job_free(job);
        fail_msg("val 100000 by batched was started under a 256 MB limit");
    }
    print_message("# %s\n", err);
    assert_non_null(strstr(err, "[task] val = 100000: needs ~1."));
    assert_non_null(strstr(err, " GB of memory (method batched: "));
    assert_non_null(strstr(err, " MB available"));
    assert_null(strchr(err, '\n'));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_by_hand),
        cmocka_unit_test(test_estimate_is_what_is_allocated),
        cmocka_unit_test(test_job_estimate), cmocka_unit_test(test_lanes_estimate),
        cmocka_unit_test(test_too_large_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

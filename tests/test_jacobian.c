/* tests/test_jacobian.c - the Jacobian job on cpu-ref and cpu:
 * every method against finite differences and every other method; the
 * preset's [task] section; the FLOP accounting; the same inputs from the
 * same seed. The GPU's cases are in tests/test_gpu.c (the emulated GPU in
 * make check). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "jacobian_check.h"
#include "nnlab/profile.h"
#include "npy.h"
#include "test_tmp.h"
#include "util.h"

/* Writes text to DIR/name.ini and loads it: 0 or -1 with err. */
static int load_text(const char *dir, const char *name, const char *text, nn_preset *p, char *err,
                     size_t err_len)
{
    char path[NN_PATH_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    return nn_preset_load(path, p, err, err_len);
}

#define MLP_LAYERS "[layer1]\ntype = linear\nin = 1\nout = 3\n[layer2]\ntype = tanh\n" \
                   "[layer3]\ntype = linear\nin = 3\nout = 2\n"
#define HEAD "[data]\nset = random\nfeatures = 1\ntargets = 2\n[train]\nloss = mse\n" \
             "[optimizer]\ntype = sgd\nlr = 0.1\n"

/* [task]: read, checked, written back; a training preset has none. */
static void test_task_section(void **state)
{
    char dir[NN_PATH_LEN - 16], err[NN_ERR_LEN], path[NN_PATH_LEN];
    nn_preset p, q;
    (void)state;
    assert_int_equal(test_tmp_create(dir, sizeof dir, "jacobian"), 0);
    assert_int_equal(load_text(dir, "ok", HEAD "[task]\nkind = jacobian\nval = 7\nmethod = per-sample\n"
                               MLP_LAYERS, &p, err, sizeof err), 0);
    assert_int_equal(p.task, NN_TASK_JACOBIAN);
    assert_int_equal(p.task_val, 7);
    assert_int_equal(p.task_method, NN_JAC_PER_SAMPLE);
    snprintf(path, sizeof path, "%s/again.ini", dir);
    assert_int_equal(nn_preset_save(path, &p, err, sizeof err), 0);
    assert_int_equal(nn_preset_load(path, &q, err, sizeof err), 0);
    assert_int_equal(q.task, NN_TASK_JACOBIAN);
    assert_int_equal(q.task_val, 7);
    assert_int_equal(q.task_method, NN_JAC_PER_SAMPLE);
    assert_int_equal(load_text(dir, "train", HEAD MLP_LAYERS, &p, err, sizeof err), 0);
    assert_int_equal(p.task, NN_TASK_TRAIN);

    static const struct { const char *task, *why; } bad[] = {
        { "kind = jacobian\nmethod = vectorize\n", "[task] method = vectorize: expected rows, batched, per-sample or forward" },
        { "kind = sweep\n", "[task] kind = sweep: expected train or jacobian" },
        { "method = rows\n", "[task] method: only for kind = jacobian" },
        { "val = 5\n", "[task] val: only for kind = jacobian" },
        { "kind = jacobian\nval = 0\n", "[task] val = 0" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, HEAD "[task]\n%s" MLP_LAYERS, bad[i].task);
        assert_int_equal(load_text(dir, "bad", text, &p, err, sizeof err), -1);
        if (!strstr(err, bad[i].why))
            fail_msg("expected \"%s\" in \"%s\"", bad[i].why, err);
    }
    assert_int_equal(load_text(dir, "relu", HEAD "[task]\nkind = jacobian\n[layer1]\ntype = linear\n"
                               "in = 1\nout = 2\n[layer2]\ntype = relu\n", &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "[layer2] type = relu: a jacobian task takes linear and tanh layers"));
    assert_int_equal(test_tmp_remove(dir), 0);
}

static void test_cpu_ref_methods(void **state)
{
    (void)state;
    jac_check_device("cpu-ref", 5);
    jac_check_device("cpu-ref", 1);
}

static void test_cpu_methods(void **state)
{
    (void)state;
    jac_check_device("cpu", 7);
    jac_check_device("cpu", 1);
}

/* cpu-ref is the oracle: the fast backend gives the same J from the same seed. */
static void test_cpu_matches_ref(void **state)
{
    nn_jac_result a, b;
    (void)state;
    jac_check_run("cpu-ref", 12, NN_JAC_ROWS, 0, &a);
    jac_check_run("cpu", 12, NN_JAC_BATCHED, 0, &b);
    assert_memory_equal(a.x, b.x, 12 * sizeof(float));
    assert_memory_equal(a.params, b.params, a.n_params * sizeof(float));
    assert_true(nn_jac_max_diff(&a, &b) <= 1e-5);
    assert_int_equal(a.n_params, 20 * 2 + 20 * 21 + 400 * 21);
    nn_jac_result_free(&a);
    nn_jac_result_free(&b);
}

/* nn.Linear's bounds: weights and bias of layer l within 1/sqrt(in). */
/* rows over lanes (jacobian_lanes.c): on three threads each runs whole
 * passes on a backend of one thread, and J comes out bit for bit as on one
 * thread; fewer lanes than threads when val has fewer groups. */
static void test_rows_lanes(void **state)
{
    nn_jac_result one, three, two;
    (void)state;
    jac_check_run_threads("cpu", 7, NN_JAC_ROWS, 0, 1, &one);
    jac_check_run_threads("cpu", 7, NN_JAC_ROWS, 0, 3, &three);
    assert_int_equal(one.lanes, 1);
    assert_int_equal(three.lanes, 3);
    assert_memory_equal(one.blocks, three.blocks, 7 * 400 * sizeof(float));
    assert_true(three.offdiag_checked && three.offdiag_max == 0);
    nn_jac_result_free(&one);
    jac_check_run_threads("cpu", 2, NN_JAC_ROWS, 0, 1, &one);
    jac_check_run_threads("cpu", 2, NN_JAC_ROWS, 0, 3, &two);
    assert_int_equal(two.lanes, 2);
    assert_memory_equal(one.blocks, two.blocks, 2 * 400 * sizeof(float));
    nn_jac_result_free(&one);
    nn_jac_result_free(&three);
    nn_jac_result_free(&two);
}

static void test_init_bounds(void **state)
{
    nn_jac_result r;
    (void)state;
    jac_check_run("cpu", 50, NN_JAC_FORWARD, 0, &r);
    const int w[4] = { 1, 20, 20, 400 };
    const float *p = r.params;
    for (int l = 0; l < 3; l++) {
        float bound = 1.0f / sqrtf((float)w[l]), seen = 0;
        for (int j = 0; j < w[l + 1] * (w[l] + 1); j++, p++) {
            assert_true(fabsf(*p) <= bound);
            seen = fmaxf(seen, fabsf(*p));
        }
        assert_true(seen > 0.8f * bound);       /* spread over the range, not a constant */
    }
    for (int i = 0; i < 50; i++)
        assert_true(r.x[i] >= 0 && r.x[i] < 1);
    nn_jac_result_free(&r);
}

static void test_flops(void **state)
{
    nn_jac_shape s = { 3, { 1, 20, 20, 400 }, { 1, 1, 0 } };
    nn_jac_flops f[NN_JAC_METHOD_COUNT];
    (void)state;
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++)
        nn_jac_flops_of(&s, 100, (enum nn_jac_method)m, &f[m]);
    /* one reverse pass over a row: 2*(400*20 + 20*20 + 20*1) + 3*(20 + 20) */
    double row = 2.0 * (8000 + 400 + 20) + 3.0 * 40;
    assert_true(fabs(f[NN_JAC_ROWS].derivative - 40000.0 * 100 * row) < 1);
    assert_true(fabs(f[NN_JAC_ROWS].zero / f[NN_JAC_ROWS].derivative - 0.99) < 1e-12);
    assert_true(f[NN_JAC_ROWS].total == f[NN_JAC_BATCHED].total);
    assert_true(fabs(f[NN_JAC_PER_SAMPLE].derivative - 400.0 * 100 * row) < 1);
    assert_true(f[NN_JAC_PER_SAMPLE].zero == 0 && f[NN_JAC_FORWARD].zero == 0);
    assert_true(fabs(f[NN_JAC_FORWARD].derivative - 100 * row) < 1);
    assert_true(f[NN_JAC_FORWARD].total == f[NN_JAC_FORWARD].forward + f[NN_JAC_FORWARD].derivative);
}

/* A CPU as the cost model sees it, fixed for the test: 40 GFLOP/s, 20
 * GB/s, 0.02 us an op, no rate curves (every product at the sgemm rate). */
static void fixed_cpu(nn_calibration *c)
{
    memset(c, 0, sizeof *c);
    strcpy(c->device, "cpu");
    c->gemm_gflops = 40;
    c->mem_gbps = 20;
    c->op_us = 0.02;
}

static int sweep_index(const nn_jac_sweep *sw, long val)
{
    for (int i = 0; i < sw->n; i++)
        if (sw->val[i] == val)
            return i;
    fail_msg("val %ld not in the sweep", val);
    return -1;
}

/* The framework-eager line of the val sweep reproduces the seed's lesson:
 * run eagerly by a framework, rows on a T4 loses to the CPU at val 100 and
 * wins at 1000; nnlab's own passes (a graph replay on the GPU) do not pay
 * that overhead. */
static void test_framework_sweep(void **state)
{
    nn_jac_shape s = { 3, { 1, 20, 20, 400 }, { 1, 1, 0 } };
    nn_calibration cpu, gpu;
    nn_gpu_profile t4;
    nn_jac_framework fw;
    static nn_jac_sweep sw;
    char err[NN_ERR_LEN];
    (void)state;
    fixed_cpu(&cpu);
    if (nn_profile_load(PROFILES_SRCDIR "/t4.ini", &t4, err, sizeof err) != 0)
        fail_msg("%s", err);
    nn_profile_calibration(&t4, &gpu);
    fw.cpu_op_us = t4.framework_op_us;
    fw.gpu_op_us = nn_profile_framework_gpu_us(&t4);
    assert_true(fw.cpu_op_us == 10 && fw.gpu_op_us == 30);
    /* By hand on the T4: every operation of a pass is overhead-bound (a
     * product's 1.6 MFLOP take 0.2 us at 8,141 GFLOP/s, its 200 KB 0.6 us
     * at 320 GB/s): 8 kernels (3 products, 2 tanh derivatives, ones, zeros,
     * copy_) x (4.758 + 30) + 7 views x 30 = 488.06 us a pass (the launch
     * the H200 host's, bench/derive_profile.py; seed 002 measured 487),
     * 40,000 passes. */
    double t = nn_jac_predict_framework_s(&s, 100, NN_JAC_ROWS, &gpu, fw.gpu_op_us);
    assert_true(fabs(t - 40000 * 488.064e-6) < 0.001 * t);
    nn_jac_sweep_predict(&s, NULL, 0, &cpu, &gpu, &fw, &sw);
    /* the framework's overhead comes on top of the same work (on the GPU,
     * nnlab also reads J back, which a framework leaves on the device: rows
     * alone is compared there) */
    for (int i = 0; i < sw.n; i++) {
        for (int m = 0; m < NN_JAC_METHOD_COUNT; m++)
            assert_true(sw.cpu_s[NN_JAC_WAY_FRAMEWORK][m][i] > sw.cpu_s[NN_JAC_WAY_NNLAB][m][i]);
        assert_true(sw.gpu_s[NN_JAC_WAY_FRAMEWORK][NN_JAC_ROWS][i] > 10 * sw.gpu_s[NN_JAC_WAY_NNLAB][NN_JAC_ROWS][i]);
    }
    int at100 = sweep_index(&sw, 100), at1000 = sweep_index(&sw, 1000);
    const double *fc = sw.cpu_s[NN_JAC_WAY_FRAMEWORK][NN_JAC_ROWS], *fg = sw.gpu_s[NN_JAC_WAY_FRAMEWORK][NN_JAC_ROWS];
    assert_true(fg[at100] > 2 * fc[at100]);
    assert_true(fg[at1000] < fc[at1000]);
    assert_int_equal(sw.gpu_overtakes[NN_JAC_WAY_FRAMEWORK][NN_JAC_ROWS], 1000);
    /* nnlab's own passes: from val 20 with the T4's launch and graph figures derived from the GH100s */
    assert_int_equal(sw.gpu_overtakes[NN_JAC_WAY_NNLAB][NN_JAC_ROWS], 20);
    char verdict[1024];
    nn_jac_sweep_verdict(&sw, NN_JAC_ROWS, 100, verdict, sizeof verdict);
    assert_non_null(strstr(verdict, "rows on the GPU overtakes this machine's CPU from val 1000 on"));
    assert_non_null(strstr(verdict, "10 us on the CPU, 30 us on a GPU"));
    assert_non_null(strstr(verdict, "with nnlab's own passes, from val 20 on"));
}

/* NumPy's format 1.0: magic, version, little-endian length, the dict with
 * Python's tuple, spaces and '\n' to a multiple of 64. */
static void test_npy_header(void **state)
{
    static const struct { long shape[2]; int rank; const char *dict; } cases[] = {
        { { 4, 1 }, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 1), }" },
        { { 20, 0 }, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (20,), }" },
        { { 0, 0 }, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }" },
    };
    char buf[512];
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = nn_npy_header(cases[c].shape, cases[c].rank, buf, sizeof buf);
        size_t dl = strlen(cases[c].dict);
        assert_true(n > 0 && n % 64 == 0);
        assert_memory_equal(buf, "\x93NUMPY\x01\x00", 8);
        assert_int_equal((unsigned char)buf[8] | (unsigned char)buf[9] << 8, n - 10);
        assert_memory_equal(buf + 10, cases[c].dict, dl);
        for (size_t i = 10 + dl; i < n - 1; i++)
            assert_int_equal(buf[i], ' ');
        assert_int_equal(buf[n - 1], '\n');
    }
    assert_int_equal(nn_npy_header(cases[0].shape, 2, buf, 100), 0);   /* does not fit */
}

static void test_method_names(void **state)
{
    (void)state;
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++)
        assert_int_equal(nn_jac_method_find(nn_jac_method_name((enum nn_jac_method)m)), m);
    assert_int_equal(nn_jac_method_find("vectorize"), -1);
}

static void test_bad_config(void **state)
{
    nn_preset p;
    nn_job_config cfg;
    char err[NN_ERR_LEN] = "";
    (void)state;
    nn_preset_defaults(&p);
    p.task = NN_TASK_JACOBIAN;
    p.n_layers = 1;
    p.layers[0].kind = NN_LAYER_RELU;
    nn_job_config_init(&cfg, &p);
    nn_strlcpy(cfg.device, "cpu", sizeof cfg.device);
    assert_null(nn_job_start(&cfg, err, sizeof err));
    assert_non_null(strstr(err, "a jacobian task takes linear and tanh layers"));
    p.layers[0].kind = NN_LAYER_LINEAR;
    p.layers[0].in = 1;
    p.layers[0].out = 2;
    nn_job_config_init(&cfg, &p);
    cfg.jac_val = -3;
    assert_null(nn_job_start(&cfg, err, sizeof err));
    assert_non_null(strstr(err, "val -3"));
}

/* Pause holds the job between groups (the snapshot PAUSED, no rows done
 * meanwhile); resume lets it go on; cancel ends it CANCELLED with no result.
 * cpu-ref at val 150 takes seconds a run, so the test never waits it out. */
/* Starts the shipped preset's Jacobian job on device at val (threads: 0
 * the free cores), pauses it and waits until it says so: the row count it
 * holds, which must stay while paused. */
static nn_job *start_paused(const char *device, int val, int threads, long *held)
{
    nn_preset p;
    nn_job_config cfg;
    nn_snapshot s;
    char err[NN_ERR_LEN] = "", path[NN_PATH_LEN];
    const char *dir = getenv("NNLAB_PRESETS_DIR");
    const struct timespec tick = { 0, 2000000 };
    snprintf(path, sizeof path, "%s/mlp-jacobian.ini", dir && *dir ? dir : "presets");
    assert_int_equal(nn_preset_load(path, &p, err, sizeof err), 0);
    nn_job_config_init(&cfg, &p);
    nn_strlcpy(cfg.device, device, sizeof cfg.device);
    cfg.jac_val = val;
    cfg.threads = threads;
    cfg.seed = 7;
    nn_job *job = nn_job_start(&cfg, err, sizeof err);
    if (!job)
        fail_msg("%s", err);
    nn_job_pause(job);
    for (int i = 0; i < 15000; i++) {
        nn_job_snapshot(job, &s);
        if (s.state == NN_JOB_PAUSED || nn_job_state_ended(s.state))
            break;
        nanosleep(&tick, NULL);
    }
    assert_int_equal(s.state, NN_JOB_PAUSED);
    *held = s.step;
    nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
    nn_job_snapshot(job, &s);
    assert_int_equal(s.step, *held);
    assert_true(*held < s.total_steps);
    return job;
}

static void test_pause_resume_cancel(void **state)
{
    nn_snapshot s;
    nn_jac_result r;
    long held;
    const struct timespec tick = { 0, 5000000 };
    (void)state;
    nn_job *job = start_paused("cpu-ref", 150, 0, &held);
    nn_job_resume(job);
    nn_job_snapshot(job, &s);
    for (int i = 0; i < 6000 && s.step == held; i++) {
        nanosleep(&tick, NULL);
        nn_job_snapshot(job, &s);
    }
    assert_true(s.step > held);              /* resumed: rows again */
    nn_job_cancel(job);
    assert_int_equal(nn_job_wait(job), NN_JOB_CANCELLED);
    assert_int_equal(nn_job_jacobian(job, &r), -1);
    nn_job_free(job);
}

/* A job on lanes pauses whole (the count stays while paused), resumes and
 * finishes with the same J as one thread. */
static void test_lanes_pause(void **state)
{
    nn_snapshot s;
    nn_jac_result r, ref;
    long held;
    (void)state;
    nn_job *job = start_paused("cpu", 40, 2, &held);
    nn_job_resume(job);
    assert_int_equal(nn_job_wait(job), NN_JOB_DONE);
    nn_job_snapshot(job, &s);
    assert_int_equal(s.step, s.total_steps);
    assert_int_equal(nn_job_jacobian(job, &r), 0);
    nn_job_free(job);
    assert_int_equal(r.lanes, 2);
    jac_check_run_threads("cpu", 40, NN_JAC_ROWS, 0, 1, &ref);
    assert_memory_equal(r.blocks, ref.blocks, 40 * 400 * sizeof(float));
    nn_jac_result_free(&r);
    nn_jac_result_free(&ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_method_names),  cmocka_unit_test(test_flops), cmocka_unit_test(test_framework_sweep), cmocka_unit_test(test_npy_header),
        cmocka_unit_test(test_cpu_ref_methods), cmocka_unit_test(test_cpu_methods),
        cmocka_unit_test(test_cpu_matches_ref), cmocka_unit_test(test_init_bounds),
        cmocka_unit_test(test_bad_config), cmocka_unit_test(test_task_section),
        cmocka_unit_test(test_pause_resume_cancel), cmocka_unit_test(test_rows_lanes),
        cmocka_unit_test(test_lanes_pause),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

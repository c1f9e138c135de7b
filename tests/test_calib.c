/* tests/test_calib.c - a calibration that cannot contradict the hardware:
 * the checks of calibration_quality.c on the H200's recorded calibration
 * (tests/fixtures/calibration-h200.json, read here and through the cache's
 * reader), on a sane calibration, one check at a time, and the
 * measurement's second try driven by a fake device clock. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend.h"
#include "model/calibrate_internal.h"
#include "nnlab/calibrate.h"
#include "cpu/cpu_info.h"
#include "util.h"

/* The H200's FP32 peak: 132 SMs x 128 FP32 lanes (sm_90) x 2 x 1980 MHz. */
#define H200_PEAK_GFLOPS (132.0 * 128 * 2 * 1.98)

/* ---- the recorded file: `nnlab calibrate --device gpu --json`'s output -------------------- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    static char buf[1 << 16];
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* The number after "key": at or after from; asserts it is there. */
static double number_after(const char *from, const char *key)
{
    char pattern[96];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = strstr(from, pattern);
    assert_non_null(p);
    return strtod(p + strlen(pattern), NULL);
}

/* A curve: the {"flops": f, "gflops": g} objects of the array "name". */
static void curve_from(const char *json, const char *name, nn_rate_curve *c)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": [", name);
    const char *p = strstr(json, pattern), *end;
    assert_non_null(p);
    end = strchr(p, ']');
    memset(c, 0, sizeof *c);
    while ((p = strstr(p + 1, "\"flops\":")) && p < end && c->n < NN_CURVE_POINTS) {
        c->flops[c->n] = number_after(p, "flops");
        c->gflops[c->n] = number_after(p, "gflops");
        c->n++;
        p = strchr(p, '}');
    }
}

static void load_h200(nn_calibration *c)
{
    char path[512];
    snprintf(path, sizeof path, "%s/calibration-h200.json", FIXTURES_DIR);
    const char *json = read_text(path);
    memset(c, 0, sizeof *c);
    snprintf(c->device, sizeof c->device, "gpu");
    c->gemm_gflops = number_after(json, "gemm_gflops");
    c->mem_gbps = number_after(json, "mem_gbps");
    c->op_us = number_after(json, "op_us");
    c->sync_us = number_after(json, "sync_us");
    c->host_copy_gbps = number_after(json, "host_copy_gbps");
    c->matrix_op_us = number_after(json, "matrix_op_us");
    c->threads = (int)number_after(json, "threads");
    curve_from(json, "linear_fwd", &c->linear_fwd);
    curve_from(json, "linear_bwd", &c->linear_bwd);
    curve_from(json, "conv_fwd", &c->conv_fwd);
    curve_from(json, "conv_bwd", &c->conv_bwd);
    const char *spread = strstr(json, "\"spread\": {");
    assert_non_null(spread);
    for (int k = 0; k < NN_SPREAD_LINEAR; k++)      /* the figures the file has */
        c->spread[k] = number_after(spread, nn_spread_name(k));
    /* the file has no clocks: the test gives the H200's peak */
    c->device_peak_gflops = H200_PEAK_GFLOPS;
    snprintf(c->device_peak_how, sizeof c->device_peak_how, "132 SMs x 128 FP32 lanes (sm_90) x 2 x 1980 MHz");
}

/* 1 when one of the n failures holds every one of the words. */
static int failed_with(const nn_cal_failure *f, int n, const char *a, const char *b)
{
    for (int i = 0; i < n; i++)
        if (strstr(f[i].why, a) && (!b || strstr(f[i].why, b)))
            return 1;
    return 0;
}

static void assert_h200_flagged(const nn_calibration *c)
{
    nn_cal_failure f[16];
    char why[NN_ERR_LEN];
    int n = nn_calibration_check(c, f, 16);
    for (int i = 0; i < n && i < 16; i++)
        print_message("# failed: %s\n", f[i].why);
    assert_true(n >= 2);
    /* linear backward at 85490 GFLOP/s above the H200's 66908 */
    assert_true(failed_with(f, n, "linear backward at 2.56e+08 FLOPs a call ran at 85490 GFLOP/s", "66908"));
    /* 74.33 us of fixed cost against a smallest product of 12.33 us */
    assert_true(failed_with(f, n, "matrix_op_us 74.3 us", "smallest product's measured time, 12.3 us"));
    assert_int_equal(nn_calibration_quality(c, why, sizeof why), NN_CAL_CONTRADICTORY);
    assert_non_null(strstr(why, "more)"));
}

static void test_h200_file_flagged(void **state)
{
    nn_calibration c;
    (void)state;
    load_h200(&c);
    assert_h200_flagged(&c);
    /* every rate of the file but linear backward's largest stays below the peak */
    c.linear_bwd.n = 6;
    c.matrix_op_us = 1.0;
    assert_int_equal(nn_calibration_check(&c, NULL, 0), 0);
}

/* The cache's reader checks what it reads back: the file's figures
 * written as this machine's cache and read again. */
static void test_h200_through_the_cache(void **state)
{
    nn_calibration c, back;
    char dir[] = "/tmp/nnlab-calib-XXXXXX", err[NN_ERR_LEN], path[NN_PATH_LEN];
    (void)state;
    assert_non_null(mkdtemp(dir));
    setenv("XDG_CACHE_HOME", dir, 1);
    load_h200(&c);
    nn_machine_description(c.machine, sizeof c.machine);
    c.created = 1;
    assert_int_equal(nn_calibration_save(&c, err, sizeof err), 0);
    assert_int_equal(nn_calibration_load("gpu", &back), 0);
    assert_true(back.device_peak_gflops > 66900 && back.device_peak_gflops < 66910);
    assert_string_equal(back.device_peak_how, c.device_peak_how);
    assert_h200_flagged(&back);
    assert_int_equal(nn_calibration_path("gpu", path, sizeof path), 0);
    assert_int_equal(remove(path), 0);
    char nn_dir[NN_PATH_LEN + 8];
    snprintf(nn_dir, sizeof nn_dir, "%s/nnlab", dir);
    rmdir(nn_dir);
    rmdir(dir);
}

/* A calibration at a rank's threads is cached apart: the device's own file
 * stays the device's, and each reads back only as what it is. */
static void test_threads_cached_apart(void **state)
{
    nn_calibration own, rank, back;
    char dir[] = "/tmp/nnlab-calib-XXXXXX", err[NN_ERR_LEN], path[NN_PATH_LEN], nn_dir[NN_PATH_LEN + 8];
    (void)state;
    assert_non_null(mkdtemp(dir));
    setenv("XDG_CACHE_HOME", dir, 1);
    load_h200(&own);
    nn_machine_description(own.machine, sizeof own.machine);
    own.created = 1;
    own.threads = 16;
    rank = own;
    rank.threads = 1;
    rank.gemm_gflops = own.gemm_gflops / 8;
    assert_int_equal(nn_calibration_save(&own, err, sizeof err), 0);
    assert_int_equal(nn_calibration_save_threads(&rank, err, sizeof err), 0);
    assert_int_equal(nn_calibration_load("gpu", &back), 0);
    assert_int_equal(back.threads, 16);              /* the rank's did not replace it */
    assert_int_equal(nn_calibration_load_threads("gpu", 1, &back), 0);
    assert_int_equal(back.threads, 1);
    assert_float_equal(back.gemm_gflops, rank.gemm_gflops, 1e-6 * rank.gemm_gflops);
    assert_int_equal(nn_calibration_load_threads("gpu", 2, &back), -1);   /* none at 2 */
    assert_int_equal(nn_calibration_path_threads("gpu", 1, path, sizeof path), 0);
    assert_non_null(strstr(path, "calibration-gpu-1threads.txt"));
    assert_int_equal(remove(path), 0);
    assert_int_equal(nn_calibration_path("gpu", path, sizeof path), 0);
    assert_int_equal(remove(path), 0);
    snprintf(nn_dir, sizeof nn_dir, "%s/nnlab", dir);
    rmdir(nn_dir);
    rmdir(dir);
}

/* ---- a sane calibration, and each check alone --------------------------------------------- */

/* An H200-like calibration whose figures agree: fixed cost 2 us, the
 * smallest product 3 us, rates below the peak, repetitions within 3%. */
static void sane_gpu(nn_calibration *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->device, sizeof c->device, "gpu");
    c->gemm_gflops = 40000;
    c->mem_gbps = 3000;
    c->host_copy_gbps = 12;
    c->matrix_op_us = 2.0;
    c->smallest_product_us = 3.0;
    c->device_peak_gflops = H200_PEAK_GFLOPS;
    c->device_clock = 1;
    double f = 2704;
    for (int i = 0; i < 7; i++, f *= 8) {
        c->linear_fwd.flops[i] = f;
        c->linear_fwd.gflops[i] = 2.7 * (i + 1) * (i + 1) * (i + 1) * 10;
        c->linear_bwd.flops[i] = 2 * f;
        c->linear_bwd.gflops[i] = c->linear_fwd.gflops[i];
    }
    c->linear_fwd.n = c->linear_bwd.n = 7;
    for (int k = 0; k < NN_SPREADS; k++)
        c->spread[k] = 0.01 * (k % 4);
}

static void test_sane_not_flagged(void **state)
{
    nn_calibration c;
    char why[NN_ERR_LEN];
    (void)state;
    sane_gpu(&c);
    assert_int_equal(nn_calibration_check(&c, NULL, 0), 0);
    assert_int_equal(nn_calibration_quality(&c, why, sizeof why), NN_CAL_GOOD);
    assert_string_equal(why, "");
}

static void test_rate_above_peak(void **state)
{
    nn_calibration c;
    nn_cal_failure f[4];
    (void)state;
    sane_gpu(&c);
    c.linear_fwd.gflops[5] = 70000;
    assert_int_equal(nn_calibration_check(&c, f, 4), 1);
    assert_int_equal(f[0].figure, NN_SPREAD_LINEAR);
    assert_non_null(strstr(f[0].why, "ran at 70000 GFLOP/s, above the device's peak 66908 GFLOP/s"));
    /* without the device's peak a GPU is held to its 1024^3 sgemm + 10% */
    sane_gpu(&c);
    c.device_peak_gflops = 0;
    c.conv_bwd.n = 1;
    c.conv_bwd.flops[0] = 1e6;
    c.conv_bwd.gflops[0] = 44100;
    assert_int_equal(nn_calibration_check(&c, f, 4), 1);
    assert_int_equal(f[0].figure, NN_SPREAD_CONV);
    assert_non_null(strstr(f[0].why, "above the 1024^3 sgemm's 40000 GFLOP/s + 10%"));
    c.conv_bwd.gflops[0] = 43900;
    assert_int_equal(nn_calibration_check(&c, f, 4), 0);
}

static void test_fixed_cost_above_smallest(void **state)
{
    nn_calibration c;
    nn_cal_failure f[4];
    (void)state;
    sane_gpu(&c);
    c.matrix_op_us = 3.3;                        /* within 10% of the smallest call */
    assert_int_equal(nn_calibration_check(&c, f, 4), 0);
    c.matrix_op_us = 3.4;
    assert_int_equal(nn_calibration_check(&c, f, 4), 1);
    assert_non_null(strstr(f[0].why, "matrix_op_us 3.4 us (a 1x1x1 product) is above the smallest product's "
                                     "measured time, 3 us"));
    c.matrix_op_us = -0.5;
    assert_int_equal(nn_calibration_check(&c, f, 4), 1);
    assert_non_null(strstr(f[0].why, "below 0"));
}

static void test_repetitions_disagree(void **state)
{
    nn_calibration c;
    nn_cal_failure f[4];
    char why[NN_ERR_LEN];
    (void)state;
    sane_gpu(&c);
    c.spread[NN_SPREAD_MEM] = 0.39;              /* the H200's "streaming varied 39%" */
    c.remeasured = 1u << NN_SPREAD_MEM;
    assert_int_equal(nn_calibration_check(&c, f, 4), 1);
    assert_int_equal(f[0].figure, NN_SPREAD_MEM);
    assert_int_equal(nn_calibration_quality(&c, why, sizeof why), NN_CAL_CONTRADICTORY);
    assert_string_equal(why, "streaming: repetitions varied 39%, more than 10% (measured twice)");
}

/* ---- the second measurement, on a fake device clock ---------------------------------------- */

/* Every timed batch lasts 100 ms on the fake clock, or 150: in threes, one
 * short and two long, so that any 3 or 5 batches in a row have a median
 * half again their best (a spread of 50%), while disagree is set. */
static int fake_batches, fake_disagree;

static int fake_clock_start(nn_backend *b)
{
    (void)b;
    return 0;
}

static int fake_clock_stop(nn_backend *b, double *us)
{
    (void)b;
    *us = fake_disagree && fake_batches++ % 3 ? 150000.0 : 100000.0;
    return 0;
}

/* The second pass starts past 90% of the progress: the fake then agrees. */
static void agree_in_second_pass(void *ctx, double fraction, const char *what)
{
    (void)ctx;
    (void)what;
    if (fraction > 0.91)
        fake_disagree = 0;
}

static void calibrate_on_fake_clock(int disagree_twice, nn_calibration *c)
{
    nn_backend_ops ops = *nn_backend_find("cpu");
    char err[NN_ERR_LEN];
    ops.clock_start = fake_clock_start;
    ops.clock_stop = fake_clock_stop;
    fake_disagree = 1;
    fake_batches = 0;
    memset(c, 0, sizeof *c);
    assert_int_equal(nn_calibrate_ops(&ops, 1, c, disagree_twice ? NULL : agree_in_second_pass, NULL, err,
                                      sizeof err), 0);
    assert_int_equal(c->device_clock, 1);
}

/* The figures timed on the fake clock: the rest is the host's. */
static const int on_fake_clock[] = { NN_SPREAD_GEMM, NN_SPREAD_GEMM_1THREAD, NN_SPREAD_MEM, NN_SPREAD_OP,
                                     NN_SPREAD_LINEAR, NN_SPREAD_CONV, NN_SPREAD_ELEM };
#define N_FAKE (int)(sizeof on_fake_clock / sizeof on_fake_clock[0])

static void test_disagreeing_twice_is_contradictory(void **state)
{
    static nn_calibration c;
    nn_cal_failure f[2 * NN_SPREADS];
    (void)state;
    calibrate_on_fake_clock(1, &c);
    int n = nn_calibration_check(&c, f, 2 * NN_SPREADS);
    for (int i = 0; i < N_FAKE; i++) {
        int k = on_fake_clock[i];
        char words[64];
        snprintf(words, sizeof words, "%s: repetitions varied 50%%", nn_spread_name(k));
        assert_true(c.remeasured & (1u << k));             /* measured again ... */
        assert_true(c.spread[k] > 0.49 && c.spread[k] < 0.51);
        assert_true(failed_with(f, n, words, "(measured twice)"));   /* ... and failed again */
    }
    assert_int_equal(nn_calibration_quality(&c, NULL, 0), NN_CAL_CONTRADICTORY);
}

static void test_disagreeing_once_is_measured_again(void **state)
{
    static nn_calibration c;
    nn_cal_failure f[2 * NN_SPREADS];
    (void)state;
    calibrate_on_fake_clock(0, &c);
    int n = nn_calibration_check(&c, f, 2 * NN_SPREADS);
    for (int i = 0; i < N_FAKE; i++) {
        int k = on_fake_clock[i];
        assert_true(c.remeasured & (1u << k));
        assert_true(c.spread[k] == 0);                     /* the second time they agreed */
        char words[64];
        snprintf(words, sizeof words, "%s: repetitions", nn_spread_name(k));
        assert_false(failed_with(f, n, words, NULL));
    }
}

/* ---- a degenerate product slower than the smallest real one ------------------------------ */

/* cuBLAS ran the 1x1x1 product slower than the presets' smallest on an H100
 * and an H200: here the CPU's 1x1x1 linear_forward waits 300 us more. The
 * fixed cost taken is then the smallest call measured, and the check that
 * a fixed cost stays within a whole call holds. */
static const nn_backend_ops *real_cpu;

static int slow_degenerate_linear_forward(nn_backend *b, int n, int in, int out, const float *x, const float *w,
                                          const float *bias, float *y)
{
    if (n == 1 && in == 1 && out == 1)
        for (double until = nn_now() + 300e-6; nn_now() < until;)
            ;
    return real_cpu->linear_forward(b, n, in, out, x, w, bias, y);
}

static void test_degenerate_product_slower(void **state)
{
    static nn_calibration c;
    nn_cal_failure f[2 * NN_SPREADS];
    char err[NN_ERR_LEN];
    (void)state;
    real_cpu = nn_backend_find("cpu");
    nn_backend_ops ops = *real_cpu;
    ops.linear_forward = slow_degenerate_linear_forward;
    memset(&c, 0, sizeof c);
    assert_int_equal(nn_calibrate_ops(&ops, 1, &c, NULL, NULL, err, sizeof err), 0);
    assert_true(c.smallest_product_us > 0 && c.smallest_product_us < 300);
    assert_true(c.matrix_op_us > 0 && c.matrix_op_us <= c.smallest_product_us);
    assert_true(c.fresh_page_us > 0 && c.vector_floats >= 4);   /* a CPU device measures them */
    int n = nn_calibration_check(&c, f, 2 * NN_SPREADS);
    assert_false(failed_with(f, n, "matrix_op_us", "smallest product's measured time"));
}

/* A fresh page's first touch: measured, positive and of a page's order
 * (a fault and a 4 KiB zeroing: microseconds, never a millisecond), and the
 * vector's floats as the CPU's extensions say; the CPU's calibration has both. */
static void test_fresh_pages_measured(void **state)
{
    static nn_calibration c;
    nn_cpu_info ci;
    (void)state;
    memset(&c, 0, sizeof c);
    nn_cpu_info_read(&ci);
    assert_int_equal(nn_cal_fresh_pages(&c), 0);
    print_message("# fresh page %.3f us, %g floats\n", c.fresh_page_us, c.vector_floats);
    assert_true(c.fresh_page_us > 0 && c.fresh_page_us < 1000);
    assert_float_equal(c.vector_floats,
                       (ci.features & NN_CPU_AVX512F) ? 16 : (ci.features & NN_CPU_AVX2) ? 8 : 4, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h200_file_flagged),
        cmocka_unit_test(test_h200_through_the_cache),
        cmocka_unit_test(test_threads_cached_apart),
        cmocka_unit_test(test_sane_not_flagged),
        cmocka_unit_test(test_rate_above_peak),
        cmocka_unit_test(test_fixed_cost_above_smallest),
        cmocka_unit_test(test_repetitions_disagree),
        cmocka_unit_test(test_disagreeing_twice_is_contradictory),
        cmocka_unit_test(test_disagreeing_once_is_measured_again),
        cmocka_unit_test(test_degenerate_product_slower),
        cmocka_unit_test(test_fresh_pages_measured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* tests/test_profile_bounds.c - no shipped GPU profile contradicts a
 * measured GPU. Every profile in profiles/ (the measured GH100 fits and
 * those derived from them by bench/derive_profile.py,
 * docs/decisions/0123-unmeasured-profiles-derived-from-gh100.md):
 *  - is of one form: every [kernels] figure given (a profile without them
 *    prices a small step as its launches alone: the T4's LeNet graph step
 *    at batch 4 was 21.5 us, the H200 measured 101);
 *  - predicts no preset's graph-way step (the device-bound way: one launch
 *    of the recorded step, the data on the device) at batches 1 to 16 below
 *    FLOOR times the step the H200 measured for it
 *    (tests/fixtures/h200-sweeps.jsonl: every shipped GPU is no faster at
 *    such steps than a GH100 with its 1980 MHz clock, the 4090's faster
 *    clock held at the GH100's). The measured step taken is the lowest at
 *    this batch or any larger one: a step never costs less for more work,
 *    so a batch that cost more than a larger one (mnist-mlp-128 at 16: 95.8
 *    us, 57.2 at 64, on both GH100s) was a cost of that shape, not of the
 *    device;
 *  - predicts no rate above its own peak: the libraries' rates within the
 *    FP32 peak, the copies within the link's raw rate, and for every
 *    preset, batch and way the arithmetic within fp32_gflops and the bytes
 *    within mem_gbps.
 * And the [kernels] figures' form: the calls' costs by kind, the GH100s'
 * agreement, the slow filter-gradient regime. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_fixture.h"
#include "nnlab/profile.h"
#include "util.h"

#define FLOOR 0.7
#define MAX_PROFILES 32

static nn_profile_entry profiles[MAX_PROFILES];
static int n_profiles;

static int setup(void **state)
{
    (void)state;
    setenv("XDG_CONFIG_HOME", "/nonexistent/nnlab-test-profile-bounds", 1);   /* no user profiles */
    setenv("NNLAB_PROFILES_DIR", PROFILES_SRCDIR, 1);
    n_profiles = nn_profile_list(profiles, MAX_PROFILES);
    return n_profiles > 0 ? 0 : -1;
}

static void load_preset(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void find(const char *name, nn_gpu_profile *g)
{
    char err[NN_ERR_LEN];
    if (nn_profile_find(name, g, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* Every shipped profile loads and gives every [kernels] figure. */
static void test_one_form(void **state)
{
    (void)state;
    assert_int_equal(n_profiles, 7);
    for (int i = 0; i < n_profiles; i++) {
        const nn_gpu_profile *g = &profiles[i].p;
        if (profiles[i].error[0])
            fail_msg("%s", profiles[i].error);
        const double figures[] = { g->conv_forward_us, g->conv_backward_us, g->linear_forward_us,
                                   g->linear_backward_us, g->other_op_us, g->layer_op_us,
                                   g->conv_forward_gflops, g->conv_backward_gflops, g->linear_gflops,
                                   g->conv_backward_reduce_us, g->linear_backward_reduce_us, g->layer_reduce_us,
                                   g->layer_ns, g->pool_ns, g->cudnn_call_us, g->cublas_call_us,
                                   g->conv_backward_slow_flops, g->conv_backward_slow_gflops };
        for (size_t k = 0; k < sizeof figures / sizeof figures[0]; k++)
            if (!(figures[k] > 0))
                fail_msg("%s: [kernels] figure %zu absent or 0", g->id, k);
    }
}

/* The lowest measured step at point i or any larger batch of s. */
static double envelope_us(const model_series *s, int i)
{
    double low = s->us[i];
    for (int j = i + 1; j < s->n; j++)
        low = s->us[j] < low ? s->us[j] : low;
    return low;
}

/* One profile against every graph series' points at batches 1..16; the
 * count of points checked. */
static int check_floor(const nn_gpu_profile *g, const model_series *all, int n)
{
    static nn_preset p;
    nn_explanation e[NN_GPU_WAYS];
    int checked = 0;
    for (int k = 0; k < n; k++) {
        if (strcmp(all[k].way, "graph") != 0)
            continue;
        load_preset(all[k].preset, &p);
        for (int i = 0; i < all[k].n && all[k].batch[i] <= 16; i++) {
            double floor_us = FLOOR * envelope_us(&all[k], i);
            nn_profile_predict(&p, all[k].batch[i], g, e);
            print_message("# %-13s %-18s batch %2d: graph %7.1f us predicted, H200 %7.1f measured (floor %.1f)\n",
                          g->id, all[k].preset, all[k].batch[i], e[NN_WAY_GRAPH].predicted_us, all[k].us[i],
                          floor_us);
            if (e[NN_WAY_GRAPH].predicted_us < floor_us)
                fail_msg("%s: %s at batch %d: graph step %.1f us predicted, below %.1f (%.1fx the H200's "
                         "measured %.1f)", g->id, all[k].preset, all[k].batch[i], e[NN_WAY_GRAPH].predicted_us,
                         floor_us, FLOOR, envelope_us(&all[k], i));
            checked++;
        }
    }
    return checked;
}

static void test_graph_step_floor(void **state)
{
    static model_series all[32];
    (void)state;
    int n = model_fixture_read("h200-sweeps.jsonl", all, 32);
    assert_int_equal(n, 12);
    for (int i = 0; i < n_profiles; i++)
        assert_int_equal(check_floor(&profiles[i].p, all, n), 17);   /* TabNet has no batch 1 */
}

/* The raw rate of a PCI Express x16 link a direction, GB/s (PCI-SIG). */
static double link_gbps(int gen)
{
    static const double raw[] = { 0, 4.0, 8.0, 15.75, 31.5, 63.0, 121.0 };
    return gen >= 1 && gen <= 6 ? raw[gen] : 0;
}

static void check_step_rates(const nn_gpu_profile *g, const nn_preset *p, int batch)
{
    nn_explanation e[NN_GPU_WAYS];
    nn_profile_predict(p, batch, g, e);
    for (int w = 0; w < NN_GPU_WAYS; w++) {
        double flops = e[w].cost.total.flops, bytes = e[w].cost.total.bytes;
        /* GFLOP/s = FLOP / (us x 1e3); the tiny slack is rounding */
        if (flops / (e[w].sized_compute_us * 1e3) > g->fp32_gflops * (1 + 1e-9) ||
            flops / (e[w].predicted_us * 1e3) > g->fp32_gflops || bytes / (e[w].predicted_us * 1e3) > g->mem_gbps)
            fail_msg("%s: %s at batch %d, %s: %.0f FLOP and %.0f B in %.2f us (arithmetic %.2f us): above "
                     "the peak %.0f GFLOP/s or %.0f GB/s", g->id, p->name, batch, nn_gpu_way_name((nn_gpu_way)w),
                     flops, bytes, e[w].predicted_us, e[w].sized_compute_us, g->fp32_gflops, g->mem_gbps);
    }
}

static void test_rates_within_peaks(void **state)
{
    static const char *const presets[] = { "lenet-cifar10", "lenet5-cifar10", "mnist-mlp-128",
                                           "mnist-mlp-1000", "conv1d-regression", "tabnet-regression" };
    static nn_preset p;
    (void)state;
    for (int i = 0; i < n_profiles; i++) {
        const nn_gpu_profile *g = &profiles[i].p;
        const double rates[] = { g->conv_forward_gflops, g->conv_backward_gflops, g->linear_gflops,
                                 g->conv_backward_slow_gflops };
        for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++)
            if (rates[k] > g->fp32_gflops)
                fail_msg("%s: a library rate %.0f GFLOP/s above the FP32 peak %.0f", g->id, rates[k],
                         g->fp32_gflops);
        if (g->pinned_copy_gbps > link_gbps(g->pcie_gen) || g->copy_gbps > link_gbps(g->pcie_gen))
            fail_msg("%s: copies at %.2f and %.2f GB/s, above PCIe %d.0 x16's %.2f", g->id, g->pinned_copy_gbps,
                     g->copy_gbps, g->pcie_gen, link_gbps(g->pcie_gen));
        for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++) {
            load_preset(presets[k], &p);
            for (int batch = 1; batch <= 4096; batch *= 4)
                check_step_rates(g, &p, batch);
        }
    }
}

/* The [kernels] figures: without them nothing is priced (the model as it
 * was); the T4's are derived from the GH100s'; h100 and h200 (one GH100
 * chip, 16-core Xeon hosts) share the eager calls' host costs (fitted to
 * the H200's synced repeats; the H100's varied too much to fit), their
 * device figures each fitted to its own run of today's code
 * (docs/decisions/0114-gpu-profiles-refitted-to-todays-code.md), and their
 * LeNet at batch 4 (overhead-bound: memory does not matter) agrees within
 * 5%, as the two machines' measured steps did (graph: 97.1 and 100.8 us); a
 * convolution's backward call costs the device more than its forward. */
static void test_kernel_figures(void **state)
{
    static nn_preset p;
    static nn_explanation e100[NN_GPU_WAYS], e200[NN_GPU_WAYS];
    nn_gpu_profile g, h100, h200;
    nn_calibration c;
    (void)state;
    find("h100", &h100);
    find("h200", &h200);
    /* the T4's, derived from the two: the larger time at the clock ratio 1980/1590 MHz */
    find("t4", &g);
    nn_profile_calibration(&g, &c);
    assert_true(c.calls.has);
    assert_true(fabs(g.conv_forward_us - 1.636 * 1980 / 1590) < 1e-3 && g.cudnn_call_us == h200.cudnn_call_us);
    /* without the calls' device times, nothing is priced beyond the model as it was */
    nn_gpu_profile none = g;
    none.conv_forward_us = none.conv_backward_us = none.linear_forward_us = none.linear_backward_us = 0;
    none.other_op_us = none.layer_op_us = 0;
    nn_profile_calibration(&none, &c);
    assert_false(c.calls.has);
    nn_profile_calibration(&h200, &c);
    assert_true(c.calls.has);
    /* LeNet's first convolution at batch 1 (6 x 28 x 28 outputs): its
     * backward's fixed time and reductions above its forward's */
    assert_true(c.calls.device_us[NN_CALL_CONV_BWD] + c.calls.reduce_us[NN_CALL_CONV_BWD] * sqrt(6.0 * 28 * 28) >
                c.calls.device_us[NN_CALL_CONV_FWD] + c.calls.reduce_us[NN_CALL_CONV_FWD] * sqrt(6.0 * 28 * 28));
    assert_true(h100.cudnn_call_us == h200.cudnn_call_us && h100.cublas_call_us == h200.cublas_call_us);
    load_preset("lenet-cifar10", &p);
    nn_profile_predict(&p, 4, &h100, e100);
    nn_profile_predict(&p, 4, &h200, e200);
    for (int w = NN_WAY_EAGER; w < NN_GPU_WAYS; w++)
        assert_true(fabs(e100[w].predicted_us - e200[w].predicted_us) < 0.05 * e200[w].predicted_us);
    assert_true(e200[NN_WAY_GRAPH].calls_us > 0);
    assert_true(e200[NN_WAY_EAGER].overlapped && !e200[NN_WAY_GRAPH].overlapped);
    assert_int_equal(e200[NN_WAY_EAGER].library_calls[0], 4);   /* conv1, conv2: forward and backward */
    assert_int_equal(e200[NN_WAY_EAGER].library_calls[1], 2);   /* the linear layer */
}

/* A convolution's backward call beyond conv_backward_slow_flops pays the
 * FLOPs beyond at the slow rate: with the first H200 run's figures (450
 * MFLOP, 425 GFLOP/s: cuDNN's deterministic filter gradient, before the
 * timed choice), LeNet's calls pass it at batch 1024 (0.7 and 1.0 GFLOP),
 * not at 256 (0.18 and 0.25), where the step is the same without the slow
 * rate. The shipped h100 and h200, fitted to today's code, keep the
 * threshold beyond every preset's calls. */
static void test_slow_conv_backward(void **state)
{
    static nn_preset p;
    static nn_explanation with[NN_GPU_WAYS], without[NN_GPU_WAYS];
    nn_gpu_profile h200, fast;
    (void)state;
    find("h200", &h200);
    assert_true(h200.conv_backward_slow_flops > 1.0e9);
    h200.conv_backward_slow_flops = 4.5e8;
    h200.conv_backward_slow_gflops = 425;
    fast = h200;
    fast.conv_backward_slow_gflops = 0;
    load_preset("lenet-cifar10", &p);
    nn_profile_predict(&p, 256, &h200, with);
    nn_profile_predict(&p, 256, &fast, without);
    assert_true(with[NN_WAY_GRAPH].predicted_us == without[NN_WAY_GRAPH].predicted_us);
    nn_profile_predict(&p, 1024, &h200, with);
    nn_profile_predict(&p, 1024, &fast, without);
    /* (0.727 + 0.985 GFLOP - 2 x the size) at the slow rate */
    double slow_us = (7.27e8 + 9.85e8 - 2 * h200.conv_backward_slow_flops) / (h200.conv_backward_slow_gflops * 1e3);
    assert_true(fabs(with[NN_WAY_GRAPH].predicted_us - without[NN_WAY_GRAPH].predicted_us - slow_us) < 0.01 * slow_us);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_form),
        cmocka_unit_test(test_graph_step_floor),
        cmocka_unit_test(test_rates_within_peaks),
        cmocka_unit_test(test_kernel_figures),
        cmocka_unit_test(test_slow_conv_backward),
    };
    return cmocka_run_group_tests_name("profile bounds", tests, setup, NULL);
}

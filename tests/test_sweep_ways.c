/* tests/test_sweep_ways.c - the sweep's ways on both devices, its pairs and
 * its noise (nnlab/sweep.h; src/analysis/model/sweep_ways.c, sweep_pairs.c,
 * sweep_noise.c): every device says its way and source; without a GPU the
 * framework way is predicted on both devices and pairs with itself; a GPU
 * here is measured eager and graph side by side; a framework measured for
 * real (the hook) pairs and labels as such; rates within their spread are a
 * tie, not a crossover; a point whose runs disagree is run again, its step
 * the median run's; a cancelled sweep says so in the words every front end
 * prints. */
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

#include "nnlab/framework.h"
#include "nnlab/profile.h"
#include "nnlab/sweep.h"
#include "cal_fixture.h"
#include "util.h"

#define N_BATCHES 4
static const int batches[N_BATCHES] = { 1, 4, 16, 64 };

static nn_sweep sw;
static nn_preset preset;
static nn_gpu_profile t4;

static void load(const char *name)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    if (nn_preset_load(path, &preset, err, sizeof err) != 0)
        fail_msg("%s", err);
    snprintf(path, sizeof path, "%s/t4.ini", PROFILES_SRCDIR);
    if (nn_profile_load(path, &t4, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* A finished point's snapshot: mean step us, median step median_us. */
static void snapshot(nn_snapshot *s, const char *device, int batch, double us, double median_us)
{
    memset(s, 0, sizeof *s);
    snprintf(s->device, sizeof s->device, "%s", device);
    s->batch = batch;
    s->state = NN_JOB_DONE;
    s->timed_steps = 20;
    s->us_per_step = us;
    s->us_per_step_median = median_us;
    s->host_phase_us[NN_PHASE_FORWARD] = us;
}

/* lenet-cifar10 on the recorded 2-core CPU, the GPU not here (T4) */
static void sweep_without_gpu(void)
{
    nn_job_config cfg;
    nn_calibration cal;
    nn_snapshot s;
    load("lenet-cifar10");
    nn_job_config_init(&cfg, &preset);
    nn_sweep_init(&sw, &cfg, batches, N_BATCHES, 20, 3);
    assert_int_equal(cal_fixture_load("calibration-cpu-dev2.txt", &cal), 0);
    assert_int_equal(nn_sweep_add_device(&sw, "cpu", &cal, NULL), 0);
    assert_int_equal(nn_sweep_add_framework_cpu(&sw, &cal, &t4), 0);
    assert_int_equal(nn_sweep_add_predicted(&sw, &t4), 0);
    for (int i = 0; i < N_BATCHES; i++) {
        snapshot(&s, "cpu", batches[i], 60.0 * batches[i], 60.0 * batches[i]);
        nn_sweep_record(&sw, 0, i, &s);
    }
}

/* Every device has a way and a source; labels say both. */
static void test_ways_and_labels(void **state)
{
    static const char *const want[] = { "cpu nnlab", "cpu framework (predicted from this CPU's calibration)",
                                        "gpu graph (predicted for T4)", "gpu eager (predicted for T4)",
                                        "gpu framework (predicted for T4)" };
    char label[160];
    (void)state;
    sweep_without_gpu();
    assert_int_equal(sw.n_devices, 5);
    for (int d = 0; d < sw.n_devices; d++) {
        nn_sweep_device_label(&sw, d, label, sizeof label);
        assert_string_equal(label, want[d]);
    }
    assert_string_equal(nn_sweep_way_word(&sw, 0), "nnlab");
    assert_string_equal(nn_sweep_way_word(&sw, 1), "framework");
    /* the CPU's framework step is the fitted form over nnlab's predicted step */
    for (int i = 0; i < N_BATCHES; i++) {
        nn_explanation e;
        double us = nn_framework_cpu_step_us(&preset, batches[i], &sw.cal[1], &t4, &e);
        assert_true(sw.pt[1][i].predicted && sw.pt[1][i].state == NN_POINT_DONE);
        assert_true(fabs(sw.pt[1][i].predicted_us - us) < 1e-9);
        assert_true(us > e.predicted_us);            /* a framework is never faster than nnlab here */
        assert_true(fabs(sw.pt[1][i].rate - batches[i] * 1e6 / us) < 1e-6);
    }
    /* calibrations listed once: the CPU's (not again for its framework way), the profile's */
    assert_true(nn_sweep_lists_calibration(&sw, 0) && !nn_sweep_lists_calibration(&sw, 1));
    assert_true(nn_sweep_lists_calibration(&sw, 2) && !nn_sweep_lists_calibration(&sw, 3));
}

/* The GPU predicted with the transfer switches given: nnlab's eager and graph
 * ways copy each batch and read the loss back, as a measured job with them
 * would (each point dearer than without), the framework way stays the
 * write-ups' (the same figures either way). */
static void test_predicted_switches(void **state)
{
    nn_job_config cfg;
    static nn_sweep plain;
    (void)state;
    sweep_without_gpu();
    plain = sw;
    load("lenet-cifar10");
    nn_job_config_init(&cfg, &preset);
    cfg.data_on_device = 0;
    cfg.sync_every_step = 1;
    nn_sweep_init(&sw, &cfg, batches, N_BATCHES, 20, 3);
    assert_int_equal(nn_sweep_add_predicted(&sw, &t4), 0);
    for (int i = 0; i < N_BATCHES; i++) {
        for (int k = 0; k < 2; k++)            /* graph, eager: copies and a read-back added */
            assert_true(sw.pt[k][i].predicted_us > plain.pt[2 + k][i].predicted_us * 1.001);
        assert_true(fabs(sw.pt[2][i].predicted_us - plain.pt[4][i].predicted_us) < 1e-9);
    }
}

/* The pairs: framework with framework, nnlab's CPU with nnlab's GPU ways;
 * the framework pair predicted; the write-up's figure beside it with the
 * direction predicted here (LeNet at batch 4: the GPU slower, as written). */
static void test_matching_pairs(void **state)
{
    nn_sweep_pair p[8];
    char words[160], writeup[320];
    (void)state;
    sweep_without_gpu();
    int n = nn_sweep_pairs(&sw, p, 8);
    assert_int_equal(n, 3);
    assert_int_equal(p[0].kind, NN_PAIR_FRAMEWORK);
    assert_int_equal(p[0].base, 1);
    assert_int_equal(p[0].challenger, 4);
    assert_true(p[0].predicted);
    assert_int_equal(p[1].kind, NN_PAIR_NNLAB);
    assert_int_equal(p[1].base, 0);
    assert_int_equal(sw.way[p[1].challenger], NN_WAY_GRAPH);
    assert_int_equal(sw.way[p[2].challenger], NN_WAY_EAGER);
    for (int k = 0; k < n; k++)
        assert_int_equal(p[k].crossover, nn_sweep_crossover(&sw, p[k].base, p[k].challenger));
    /* the framework's GPU is slower at batch 1 and 4 (its per-op cost) */
    assert_true(sw.pt[4][0].rate < sw.pt[1][0].rate && sw.pt[4][1].rate < sw.pt[1][1].rate);
    assert_true(p[0].crossover != 0 && p[0].crossover != 1);
    nn_sweep_crossover_words(&sw, &p[0], words, sizeof words);
    if (p[0].crossover > 0) {
        char want[64];
        snprintf(want, sizeof want, "overtakes from batch %d on", batches[p[0].crossover]);
        assert_string_equal(words, want);
    } else {
        assert_string_equal(words, "does not overtake at the batches swept");
    }
    nn_sweep_writeup_text(&sw, writeup, sizeof writeup);
    assert_non_null(strstr(writeup, "the write-up at batch 4: CPU 50 s, GPU 94 s (the GPU 1.88x slower); "
                                    "the framework way here: CPU "));
    assert_non_null(strstr(writeup, "(the GPU slower)"));
}

/* The noise rule on bare rates: rates within the combined spread tie. */
static void test_tie_is_not_a_crossover(void **state)
{
    static const double base[4] = { 100, 100, 100, 100 }, chal[4] = { 80, 104, 120, 130 };
    static const double spread[4] = { 3, 3, 3, 3 };
    int tie;
    (void)state;
    assert_int_equal(nn_crossover_index(base, chal, 4), 1);     /* by 4%: a crossover without noise */
    assert_int_equal(nn_crossover_index_noisy(base, chal, spread, spread, 4, &tie), 2);
    assert_int_equal(tie, 1);
    /* the busy machine's 141.9k against 141.6k, each +-1%: a tie, not a crossover */
    static const double b2[2] = { 141.6e3, 141.6e3 }, c2[2] = { 100e3, 141.9e3 }, s2[2] = { 1416, 1416 };
    static const double s2c[2] = { 1000, 1419 };
    assert_int_equal(nn_crossover_index(b2, c2, 2), 1);
    assert_int_equal(nn_crossover_index_noisy(b2, c2, s2, s2c, 2, &tie), -1);
    assert_int_equal(tie, 1);
    /* a lead that falls into a tie again ends */
    static const double c3[4] = { 120, 120, 101, 120 };
    assert_int_equal(nn_crossover_index_noisy(base, c3, spread, spread, 4, &tie), 3);
    assert_int_equal(tie, 2);
}

/* A point whose mean and median disagree is run again; its step is the
 * median run's, its spread half their range; at most NN_SWEEP_MAX_REPEATS. */
static void test_repeats(void **state)
{
    nn_job_config cfg;
    nn_calibration cal;
    nn_snapshot s;
    (void)state;
    load("mnist-mlp-128");
    nn_job_config_init(&cfg, &preset);
    nn_sweep_init(&sw, &cfg, batches, N_BATCHES, 20, 3);
    assert_int_equal(cal_fixture_load("calibration-cpu-dev2.txt", &cal), 0);
    nn_sweep_add_device(&sw, "cpu", &cal, NULL);
    snapshot(&s, "cpu", 1, 100, 98);              /* 1% apart: spread 1 us, not run again */
    nn_sweep_record(&sw, 0, 0, &s);
    assert_true(fabs(sw.pt[0][0].spread_us - 1) < 1e-9);
    assert_false(nn_sweep_wants_repeat(&sw, 0, 0));
    snapshot(&s, "cpu", 4, 130, 100);             /* a few slow steps: 30% apart */
    nn_sweep_record(&sw, 0, 1, &s);
    assert_true(fabs(nn_sweep_relative_spread(&sw, 0, 1) - 15.0 / 130) < 1e-9);
    assert_true(nn_sweep_wants_repeat(&sw, 0, 1));
    snapshot(&s, "cpu", 4, 300, 290);             /* the machine got busy: the runs disagree */
    nn_sweep_record(&sw, 0, 1, &s);
    assert_int_equal(sw.pt[0][1].repeats, 2);
    assert_true(sw.pt[0][1].measured.step_us == 130);   /* of two, the faster */
    assert_true(fabs(sw.pt[0][1].spread_us - 85) < 1e-9);
    assert_true(nn_sweep_wants_repeat(&sw, 0, 1));
    snapshot(&s, "cpu", 4, 140, 139);
    nn_sweep_record(&sw, 0, 1, &s);
    assert_int_equal(sw.pt[0][1].repeats, 3);
    assert_true(sw.pt[0][1].measured.step_us == 140);   /* the median of 130, 300, 140 */
    assert_true(fabs(sw.pt[0][1].rate - 4e6 / 140) < 1e-9);
    assert_false(nn_sweep_wants_repeat(&sw, 0, 1));     /* three runs: enough */
    /* a repetition that fails leaves the point as measured */
    memset(&s, 0, sizeof s);
    s.state = NN_JOB_CANCELLED;
    nn_sweep_record(&sw, 0, 1, &s);
    assert_int_equal(sw.pt[0][1].state, NN_POINT_DONE);
    assert_true(sw.pt[0][1].measured.step_us == 140);
}

/* After a cancel, the words say the batches measured before it. */
static void test_cancelled_words(void **state)
{
    nn_sweep_pair p[8];
    char words[160];
    (void)state;
    sweep_without_gpu();
    sw.cancelled = 1;
    int n = nn_sweep_pairs(&sw, p, 8);
    assert_true(n >= 1);
    p[0].crossover = -1;
    p[0].tie = -1;
    nn_sweep_crossover_words(&sw, &p[0], words, sizeof words);
    assert_string_equal(words, "does not overtake at the batches measured before the cancel");
    p[0].crossover = 0;
    nn_sweep_crossover_words(&sw, &p[0], words, sizeof words);
    assert_string_equal(words, "is faster at every batch measured before the cancel");
}

/* The hook for a framework measured for real: no job, its own label, and
 * it pairs with the other device's framework way measured the same way. */
static void test_external_framework(void **state)
{
    nn_sweep_pair p[12];
    char label[160];
    (void)state;
    sweep_without_gpu();
    int c = nn_sweep_add_external(&sw, "cpu", NN_WAY_FRAMEWORK, "PyTorch 2.11");
    int g = nn_sweep_add_external(&sw, "gpu", NN_WAY_FRAMEWORK, "PyTorch 2.11");
    assert_true(c >= 0 && g == c + 1);
    for (int i = 0; i < N_BATCHES; i++) {
        nn_sweep_record_external(&sw, c, i, 1000.0 + 50 * batches[i], 10, NULL);
        nn_sweep_record_external(&sw, g, i, i == 2 ? 0 : 1400.0 + 5 * batches[i], 0, "CUDA out of memory");
    }
    assert_int_equal(sw.pt[g][2].state, NN_POINT_FAILED);
    assert_non_null(strstr(sw.last_error, "gpu batch 16: CUDA out of memory"));
    nn_sweep_device_label(&sw, g, label, sizeof label);
    assert_string_equal(label, "gpu framework (measured with PyTorch 2.11)");
    int n = nn_sweep_pairs(&sw, p, 12), k = 0;
    while (k < n && p[k].challenger != g)
        k++;
    assert_true(k < n);
    assert_int_equal(p[k].kind, NN_PAIR_FRAMEWORK);
    assert_int_equal(p[k].base, c);
    assert_false(p[k].predicted);
    assert_int_equal(p[k].crossover, 3);          /* 1400 + 320 us against 1000 + 3200 at batch 64 */
    assert_false(nn_sweep_lists_calibration(&sw, c));
    /* the runner starts no job for it, nor for a predicted device */
    nn_job_config cfg;
    nn_job_config_init(&cfg, &preset);
    nn_sweep_init(&sw, &cfg, batches, 1, 1, 0);
    nn_sweep_add_external(&sw, "gpu", NN_WAY_FRAMEWORK, "PyTorch 2.11");
    nn_sweep_poll(&sw);
    assert_true(sw.finished && sw.job == NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ways_and_labels),
        cmocka_unit_test(test_predicted_switches),
        cmocka_unit_test(test_matching_pairs),
        cmocka_unit_test(test_tie_is_not_a_crossover),
        cmocka_unit_test(test_repeats),
        cmocka_unit_test(test_cancelled_words),
        cmocka_unit_test(test_external_framework),
    };
    return cmocka_run_group_tests_name("sweep ways", tests, NULL, NULL);
}

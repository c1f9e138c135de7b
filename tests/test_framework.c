/* tests/test_framework.c - the framework way on the CPU (nnlab/framework.h):
 * the fit recomputed from its data (tests/fixtures/framework-cpu-fit.csv)
 * gives the figures the profiles carry; the form reproduces PyTorch's
 * measured CPU steps within the stated tolerance; the shipped profile reads
 * them; and, with a recorded CPU calibration of the 2-core development
 * machine (tests/fixtures/calibration-cpu-dev2.txt) and the default GPU
 * profile (T4), the framework's GPU is slower than its CPU where the
 * write-ups found it slower and faster where they found it faster. */
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

#define MAX_SAMPLES 128

static void load_preset(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void load_profile(const char *name, nn_gpu_profile *prof)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PROFILES_SRCDIR, name);
    if (nn_profile_load(path, prof, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* A preset's framework operations per step (batch does not change them). */
static int ops_of(const char *preset)
{
    static nn_preset p;
    nn_cost c;
    load_preset(preset, &p);
    nn_cost_model(&p, 4, &c);
    return nn_framework_ops(&p, &c);
}

/* The fixture's rows: host,preset,batch,torch_us,nnlab_us ('#' comments, a header). */
static int read_samples(nn_framework_sample *s, char hosts[][16], int max)
{
    char line[256], path[NN_PATH_LEN];
    int n = 0;
    snprintf(path, sizeof path, "%s/framework-cpu-fit.csv", FIXTURES_DIR);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f) && n < max) {
        char host[16], preset[64];
        int batch;
        double torch_us, nnlab_us;
        if (line[0] == '#' || !strncmp(line, "host,", 5))
            continue;
        assert_int_equal(sscanf(line, "%15[^,],%63[^,],%d,%lf,%lf", host, preset, &batch, &torch_us, &nnlab_us), 5);
        s[n] = (nn_framework_sample){ ops_of(preset), nnlab_us, torch_us };
        snprintf(hosts[n], 16, "%s", host);
        n++;
    }
    fclose(f);
    return n;
}

/* The fit from the data is the one the shipped figures record (to their
 * printed digits), and it holds within the tolerance docs/ways.md states:
 * every sample's relative error within 75%, their root mean square within
 * 35%. The form has three figures for two hosts (2 and 16 threads), six
 * presets and batches 1 to 4096: its per-op cost is the hosts' compromise
 * (10.6 us fitted on the 2-core host alone, 28 on the 16-thread one). */
static void test_fit_recomputed(void **state)
{
    (void)state;
    static nn_framework_sample s[MAX_SAMPLES];
    static char hosts[MAX_SAMPLES][16];
    nn_framework_fit fit;
    int n = read_samples(s, hosts, MAX_SAMPLES);
    assert_true(n >= 40);
    assert_int_equal(nn_framework_fit_cpu(s, n, &fit), 0);
    print_message("# fit over %d samples: op_us %.2f, step_us %.1f, work_ratio %.3f; rms %.1f%%, max %.1f%%\n",
                  fit.n, fit.op_us, fit.step_us, fit.work_ratio, 100 * fit.rms_rel, 100 * fit.max_rel);
    assert_true(fabs(fit.op_us - NN_FRAMEWORK_CPU_OP_US) < 0.01);
    assert_true(fabs(fit.step_us - NN_FRAMEWORK_CPU_STEP_US) < 0.5);
    assert_true(fabs(fit.work_ratio - NN_FRAMEWORK_CPU_WORK_RATIO) < 0.005);
    assert_true(fit.rms_rel < 0.35);
    assert_true(fit.max_rel < 0.75);
    /* no cost negative; a framework pays per op and computes no faster than nnlab */
    assert_true(fit.op_us > 0 && fit.step_us >= 0 && fit.work_ratio > 1);
}

/* The form predicts each of torch.csv's 16-core steps (the H200 host)
 * within the same tolerance: a relative error within 75%. */
static void test_form_against_torch_csv(void **state)
{
    (void)state;
    static nn_framework_sample s[MAX_SAMPLES];
    static char hosts[MAX_SAMPLES][16];
    int n = read_samples(s, hosts, MAX_SAMPLES), xeon = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(hosts[i], "xeon16") != 0)
            continue;
        double pred = nn_framework_cpu_form(s[i].ops, s[i].nnlab_us, NN_FRAMEWORK_CPU_OP_US,
                                            NN_FRAMEWORK_CPU_STEP_US, NN_FRAMEWORK_CPU_WORK_RATIO);
        if (fabs(pred / s[i].framework_us - 1) > 0.75)
            fail_msg("sample %d: predicted %.0f us, PyTorch measured %.0f", i, pred, s[i].framework_us);
        xeon++;
    }
    assert_int_equal(xeon, 12);
}

/* Every shipped profile reads the figures: t4.ini carries them, the others
 * read the same defaults. A value out of range is refused by the reader. */
static void test_profiles_read_framework(void **state)
{
    (void)state;
    static const char *const names[] = { "t4", "rtx3060", "rtx4090", "a100", "h100", "h200", "geforce-940m" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        nn_gpu_profile prof;
        load_profile(names[i], &prof);
        assert_true(fabs(prof.framework_cpu_op_us - NN_FRAMEWORK_CPU_OP_US) < 1e-9);
        assert_true(fabs(prof.framework_cpu_step_us - NN_FRAMEWORK_CPU_STEP_US) < 1e-9);
        assert_true(fabs(prof.framework_cpu_work_ratio - NN_FRAMEWORK_CPU_WORK_RATIO) < 1e-9);
        assert_true(fabs(prof.framework_gpu.step_us - NN_FRAMEWORK_GPU_STEP_US) < 1e-9);
        assert_true(fabs(prof.framework_gpu.op_us - NN_FRAMEWORK_GPU_FW_OP_US) < 1e-9);
        assert_true(fabs(prof.framework_gpu.conv_us - NN_FRAMEWORK_GPU_CONV_US) < 1e-9);
        assert_true(fabs(prof.framework_gpu.device_ratio - NN_FRAMEWORK_GPU_DEVICE_RATIO) < 1e-9);
    }
}

/* The write-ups' direction, each at its own batch: the framework's GPU
 * (predicted for T4 and for the GeForce 940M) against its CPU (predicted
 * from the recorded calibration). Slower: lenet-cifar10, lenet5-cifar10;
 * faster: mnist-mlp-1000, conv1d-regression, tabnet-regression. The
 * write-up has mnist-mlp-128 at batch 32 slower too, but the model cannot
 * tell: its GPU side (1088 us for T4, 1198 for the 940M) is below its CPU
 * side (1437 us), which is 40% above PyTorch's measured CPU step on that
 * machine (867 us at batch 16, 1217 at 64: framework-cpu-fit.csv) because
 * nnlab's own step predicted from the calibration (558 us) is above its
 * measured one (243 at 16, 394 at 64); it is held within 35% of the GPU
 * side, and docs/ways.md says so. */
static void test_direction_of_the_writeups(void **state)
{
    (void)state;
    /* gpu_slower 2: the write-up has the GPU slower, the model cannot tell (see above) */
    static const struct { const char *preset; int gpu_slower; } cases[] = {
        { "lenet-cifar10", 1 },  { "lenet5-cifar10", 1 },    { "mnist-mlp-128", 2 },
        { "mnist-mlp-1000", 0 }, { "conv1d-regression", 0 }, { "tabnet-regression", 0 },
    };
    static const char *const profiles[] = { "t4", "geforce-940m" };
    nn_calibration cal;
    assert_int_equal(cal_fixture_load("calibration-cpu-dev2.txt", &cal), 0);
    int wrong = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0] * 2; k++) {
        size_t i = k % (sizeof cases / sizeof cases[0]);
        nn_gpu_profile prof;
        load_profile(profiles[k / (sizeof cases / sizeof cases[0])], &prof);
        static nn_preset p;
        nn_explanation gpu[NN_GPU_WAYS];
        load_preset(cases[i].preset, &p);
        double cpu_us = nn_framework_cpu_step_us(&p, p.batch, &cal, &prof, NULL);
        nn_profile_predict(&p, p.batch, &prof, gpu);
        double gpu_us = gpu[NN_WAY_FRAMEWORK].predicted_us;
        print_message("# %s batch %d: framework cpu %.0f us, framework gpu (%s) %.0f us\n", cases[i].preset,
                      p.batch, cpu_us, prof.name, gpu_us);
        assert_true(cpu_us > 0 && gpu_us > 0);
        if (cases[i].gpu_slower == 2) {
            if (fabs(gpu_us / cpu_us - 1) > 0.35)
                fail_msg("%s: %.0f against %.0f us: no longer within the CPU side's error", cases[i].preset,
                         gpu_us, cpu_us);
            continue;
        }
        if (cases[i].gpu_slower != (gpu_us > cpu_us)) {
            print_message("WRONG: %s at batch %d: the framework's GPU (%s) %.0f us against its CPU %.0f us: "
                          "the write-up has the GPU %s\n", cases[i].preset, p.batch, prof.name, gpu_us, cpu_us,
                          cases[i].gpu_slower ? "slower" : "faster");
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
}

/* ---- the GPU: PyTorch on the recorded H200 ---------------------------------------- */

#define MAX_GPU_SAMPLES 64

typedef struct gpu_row {
    char preset[64];
    int batch;
} gpu_row;

/* tests/fixtures/framework-gpu-h200.csv (preset,batch,torch_us,mean_us) as
 * samples priced with the h200 profile's calibration. */
static int read_gpu_samples(nn_framework_gpu_sample *s, gpu_row *rows, int max)
{
    char line[256], path[NN_PATH_LEN];
    nn_gpu_profile prof;
    nn_calibration cal;
    int n = 0;
    load_profile("h200", &prof);
    nn_profile_calibration(&prof, &cal);
    snprintf(path, sizeof path, "%s/framework-gpu-h200.csv", FIXTURES_DIR);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f) && n < max) {
        static nn_preset p;
        double torch_us, mean_us;
        if (line[0] == '#' || !strncmp(line, "preset,", 7))
            continue;
        assert_int_equal(sscanf(line, "%63[^,],%d,%lf,%lf", rows[n].preset, &rows[n].batch, &torch_us, &mean_us), 4);
        load_preset(rows[n].preset, &p);
        assert_int_equal(nn_framework_gpu_sample_of(&p, rows[n].batch, &cal, &s[n]), 0);
        s[n].framework_us = torch_us;
        n++;
    }
    fclose(f);
    return n;
}

/* The fit from the recorded run gives the figures the profiles carry, and
 * every one of its 35 steps (6 presets, batches 1 to 1024) is predicted
 * within 25% with the batch on the device, as it was measured. */
static void test_gpu_fit_recomputed(void **state)
{
    (void)state;
    static nn_framework_gpu_sample s[MAX_GPU_SAMPLES];
    static gpu_row rows[MAX_GPU_SAMPLES];
    nn_framework_gpu_fit fit;
    int n = read_gpu_samples(s, rows, MAX_GPU_SAMPLES);
    assert_int_equal(n, 35);
    assert_int_equal(nn_framework_fit_gpu(s, n, &fit), 0);
    print_message("# gpu fit over %d samples: step_us %.2f, op_us %.3f, conv_us %.2f, device_ratio %.4f; "
                  "rms %.1f%%, max %.1f%%\n", fit.n, fit.fw.step_us, fit.fw.op_us, fit.fw.conv_us,
                  fit.fw.device_ratio, 100 * fit.rms_rel, 100 * fit.max_rel);
    assert_true(fabs(fit.fw.step_us - NN_FRAMEWORK_GPU_STEP_US) < 0.05);
    assert_true(fabs(fit.fw.op_us - NN_FRAMEWORK_GPU_FW_OP_US) < 0.005);
    assert_true(fabs(fit.fw.conv_us - NN_FRAMEWORK_GPU_CONV_US) < 0.05);
    assert_true(fabs(fit.fw.device_ratio - NN_FRAMEWORK_GPU_DEVICE_RATIO) < 0.0005);
    for (int i = 0; i < n; i++) {
        nn_framework_gpu shipped = { NN_FRAMEWORK_GPU_STEP_US, NN_FRAMEWORK_GPU_FW_OP_US, NN_FRAMEWORK_GPU_CONV_US,
                                     NN_FRAMEWORK_GPU_DEVICE_RATIO };
        double pred = nn_framework_gpu_form(&s[i], &shipped), rel = pred / s[i].framework_us - 1;
        print_message("# %-18s b%-5d predicted %6.0f us, PyTorch measured %6.0f (%+.1f%%)\n", rows[i].preset,
                      rows[i].batch, pred, s[i].framework_us, 100 * rel);
        if (fabs(rel) > 0.25)
            fail_msg("%s at batch %d: predicted %.0f us, PyTorch measured %.0f on the H200", rows[i].preset,
                     rows[i].batch, pred, s[i].framework_us);
    }
}

/* The model prices the same form: nn_explain with the framework way's
 * options and the h200 profile's figures gives the form's step with the
 * batch on the device, and that step plus the batch's copy from pageable
 * memory (the profile's copy_us, copy_gbps) as the framework way. */
static void test_gpu_model_is_the_form(void **state)
{
    (void)state;
    static nn_preset p;
    nn_gpu_profile prof;
    nn_calibration cal;
    load_profile("h200", &prof);
    nn_profile_calibration(&prof, &cal);
    load_preset("lenet-cifar10", &p);
    for (int batch = 1; batch <= 1024; batch *= 4) {
        nn_framework_gpu_sample s;
        nn_explain_options opt;
        nn_explanation on_device, way[NN_GPU_WAYS];
        assert_int_equal(nn_framework_gpu_sample_of(&p, batch, &cal, &s), 0);
        nn_gpu_way_options(NN_WAY_FRAMEWORK, &prof.framework_gpu, &opt);
        opt.data_on_device = 1;
        nn_explain(&p, batch, &cal, &opt, &on_device);
        assert_true(fabs(on_device.predicted_us - nn_framework_gpu_form(&s, &prof.framework_gpu)) < 1e-6);
        assert_true(on_device.copy_us == 0);
        nn_profile_predict(&p, batch, &prof, way);
        double copy = 2 * prof.copy_us + way[NN_WAY_FRAMEWORK].cost.input_bytes / (prof.copy_gbps * 1e3);
        assert_true(fabs(way[NN_WAY_FRAMEWORK].copy_us - copy) < 1e-6);   /* samples and labels */
        assert_true(fabs(way[NN_WAY_FRAMEWORK].predicted_us - on_device.predicted_us -
                         way[NN_WAY_FRAMEWORK].copy_us) < 1e-6);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_recomputed),
        cmocka_unit_test(test_form_against_torch_csv),
        cmocka_unit_test(test_profiles_read_framework),
        cmocka_unit_test(test_direction_of_the_writeups),
        cmocka_unit_test(test_gpu_fit_recomputed),
        cmocka_unit_test(test_gpu_model_is_the_form),
    };
    return cmocka_run_group_tests_name("framework", tests, NULL, NULL);
}

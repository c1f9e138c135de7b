/* tests/test_framework.c - the framework way on the CPU (nnlab/framework.h):
 * the fit recomputed from its data (tests/fixtures/framework-cpu-fit.csv)
 * gives the figures the profiles carry; the form reproduces PyTorch's
 * measured CPU steps on each host within the bounds docs/ways.md states;
 * the shipped profile reads them; with the one-thread calibrations recorded
 * beside PyTorch (tests/fixtures/calibration-cpu-dev5.txt, -dev7.txt) and the
 * T4 and 940M profiles, the framework's GPU is slower than its CPU where the
 * write-ups found it slower and faster where they found it faster; and on
 * the GPU the recorded H200 run's fit, and a refit of steps that copied
 * their batch.
 *
 * Run with --terms it prints every fixture row's terms as CSV instead (what
 * tools/fit_framework_cpu.py fits and tabulates); with --gpu-fit CSV PROFILE
 * the GPU figures refitted to a GPU fixture's steps (bench/gpu_table.py
 * --fixture writes one from a lent GPU's run) and its table. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
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

#define MAX_SAMPLES 512

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

/* One row of the fixture: its host and point, and its terms. */
typedef struct cpu_row {
    char host[16], preset[64];
    int batch;
    double fresh_bytes;          /* nn_framework_fresh_bytes at the host's vector (16 where its
                                    calibration predates the figure: every fixture host runs
                                    AVX-512), for tools/fit_framework_cpu.py --fresh-page-us */
} cpu_row;

/* The shipped figures. */
static nn_framework_cpu shipped_cpu(void)
{
    return nn_framework_cpu_shipped();
}

/* The fixture's rows (host,preset,batch,torch_us,nnlab_us; '#' comments, a
 * header), each priced from its host's calibration (calibration-cpu-NAME.txt,
 * NAME as hosts[] pairs them); nnlab_us (nnlab's measured step there) is only
 * shown. */
static int read_samples(nn_framework_sample *s, cpu_row *rows, int max, double *nnlab_measured)
{
    /* each host and its calibration: dev7's two PyTorch releases ran in the same minutes */
    static const char *const hosts[][2] = { { "dev2", "dev2" }, { "dev3", "dev3" }, { "xeon16", "xeon16" },
                                            { "dev4", "dev4" }, { "dev5", "dev5" }, { "dev6", "dev6" },
                                            { "dev7", "dev7" }, { "dev7-pt2", "dev7" },
                                            { "dev8", "dev8" }, { "dev8-pt2", "dev8" },
                                            { "dev9-pt2-t1", "dev9-pt2-t1" }, { "dev9-pt2-t2", "dev9-pt2-t2" } };
    enum { HOSTS = sizeof hosts / sizeof hosts[0] };
    static nn_calibration cal[HOSTS];
    char line[256], path[NN_PATH_LEN];
    int n = 0;
    for (int h = 0; h < HOSTS; h++) {
        snprintf(path, sizeof path, "calibration-cpu-%s.txt", hosts[h][1]);
        assert_int_equal(cal_fixture_load(path, &cal[h]), 0);
    }
    snprintf(path, sizeof path, "%s/framework-cpu-fit.csv", FIXTURES_DIR);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f) && n < max) {
        static nn_preset p;
        cpu_row *r = &rows[n];
        double torch_us, nnlab_us;
        if (line[0] == '#' || !strncmp(line, "host,", 5))
            continue;
        assert_int_equal(sscanf(line, "%15[^,],%63[^,],%d,%lf,%lf", r->host, r->preset, &r->batch, &torch_us,
                                &nnlab_us), 5);
        load_preset(r->preset, &p);
        int h = 0;
        while (h < HOSTS && strcmp(r->host, hosts[h][0]) != 0)
            h++;
        assert_true(h < HOSTS);
        static nn_explanation e;
        assert_int_equal(nn_framework_cpu_sample_of(&p, r->batch, &cal[h], &s[n], &e), 0);
        r->fresh_bytes = nn_framework_fresh_bytes(&p, &e.cost, cal[h].vector_floats > 0 ? cal[h].vector_floats : 16);
        s[n].framework_us = torch_us;
        if (nnlab_measured)
            nnlab_measured[n] = nnlab_us;
        n++;
    }
    fclose(f);
    return n;
}

/* The relative errors of figures fc on one host's rows: their root mean
 * square and the largest. */
static void host_errors(const nn_framework_sample *s, const cpu_row *rows, int n, const char *host,
                        const nn_framework_cpu *fc, double *rms, double *max)
{
    double sq = 0;
    int k = 0;
    *max = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i].host, host) != 0)
            continue;
        double rel = nn_framework_cpu_form(&s[i], fc) / s[i].framework_us - 1;
        sq += rel * rel;
        *max = fabs(rel) > *max ? fabs(rel) : *max;
        k++;
    }
    assert_true(k > 0);
    *rms = sqrt(sq / k);
}

/* Prints the rows whose error is above 25% (what the issue asks of every
 * point), the largest first. */
static void print_misses(const nn_framework_sample *s, const cpu_row *rows, int n)
{
    nn_framework_cpu fc = shipped_cpu();
    double last = 1e9;
    for (;;) {
        int worst = -1;
        double w = 0;
        for (int i = 0; i < n; i++) {
            double rel = fabs(nn_framework_cpu_form(&s[i], &fc) / s[i].framework_us - 1);
            if (rel > 0.25 && rel < last && rel > w)
                worst = i, w = rel;
        }
        if (worst < 0)
            return;
        last = w;
        print_message("# beyond 25%%: %-6s %-18s b%-5d predicted %7.0f us, PyTorch measured %7.0f (%+.1f%%)\n",
                      rows[worst].host, rows[worst].preset, rows[worst].batch,
                      nn_framework_cpu_form(&s[worst], &fc), s[worst].framework_us,
                      100 * (nn_framework_cpu_form(&s[worst], &fc) / s[worst].framework_us - 1));
    }
}

/* The hosts the figures are fitted to (tests/fixtures/framework-cpu-fit.csv
 * says why these): each one's calibration describes the nnlab measured
 * beside PyTorch, and its PyTorch ran the threads it was given (dev5 and
 * dev7 one, dev3 and dev6 two, xeon16 sixteen). Checked, not fitted: dev2
 * (its calibration is of an older nnlab: it prices nnlab's own steps there
 * at 1.5-3x what nnlab measured), dev4 (its PyTorch's matrix products ran
 * on both cores at "one thread"), dev7-pt2 (another PyTorch release), dev8,
 * dev8-pt2, dev9-pt2-t1 and dev9-pt2-t2 (recorded after the fit: its test on
 * hosts it never saw). */
static const char *const fit_hosts[] = { "dev3", "dev5", "dev6", "dev7", "xeon16" };
enum { FIT_HOSTS = sizeof fit_hosts / sizeof fit_hosts[0] };

static int is_fit_host(const char *host)
{
    for (int h = 0; h < FIT_HOSTS; h++)
        if (!strcmp(host, fit_hosts[h]))
            return 1;
    return 0;
}

/* The fitted hosts' samples, leaving out those of host left_out (NULL: none),
 * or only those of host only (NULL: all). */
static int fitted_samples(const nn_framework_sample *s, const cpu_row *rows, int n, const char *left_out,
                          const char *only, nn_framework_sample *out)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (is_fit_host(rows[i].host) && !(left_out && !strcmp(rows[i].host, left_out)) &&
            (!only || !strcmp(rows[i].host, only)))
            out[k++] = s[i];
    return k;
}

/* The bounds docs/ways.md states for each host (rms, largest |relative
 * error|), a little above what the shipped figures give: a change of the
 * form or the figures that does worse on any host fails here. */
static const struct { const char *host; double rms, max; } bounds[] = {
    /* fitted: two threads, PyTorch 1.13.1 (17.7%, 42.1%) */
    { "dev3", 0.18, 0.43 },
    /* fitted: 16 threads, PyTorch 2.11 (26.7%, 59.0%) */
    { "xeon16", 0.27, 0.60 },
    /* fitted: one thread, every pool bounded, three rounds' medians (13.7%, 24.9%) */
    { "dev5", 0.14, 0.25 },
    /* fitted: two threads on dev5's VM, every pool bounded, three rounds' medians (15.1%, 36.1%) */
    { "dev6", 0.16, 0.37 },
    /* fitted: one thread, every pool bounded, three rounds' medians, PyTorch 1.13.1 (13.9%, 27.6%) */
    { "dev7", 0.14, 0.28 },
    /* not fitted: the same minutes with PyTorch 2.15.0 from PyPI (26.7%, 74.1%) */
    { "dev7-pt2", 0.27, 0.75 },
    /* not fitted: two threads, recorded after the fit (the figures' test on a host they never
       saw), PyTorch 1.13.1 the faster of every pool at two and its default (21.0%, 46.7%) */
    { "dev8", 0.22, 0.47 },
    /* not fitted: the same minutes with PyTorch 2.15.0, every pool at two (24.9%, 54.4%) */
    { "dev8-pt2", 0.25, 0.55 },
    /* not fitted: PyTorch 2.15.0 at one thread and at two as a lent GPU's call measures the
       16-core rows (bench/lent-gpu.sh: a warmed process, three rounds' medians) (24.1%, 53.7%;
       27.5%, 47.2%) */
    { "dev9-pt2-t1", 0.25, 0.54 },
    { "dev9-pt2-t2", 0.28, 0.48 },
    /* not fitted, a calibration of an older nnlab (58.5%, 160.2%) */
    { "dev2", 0.59, 1.61 },
    /* not fitted, PyTorch's products on both cores at one thread (42.8%, 115.2%) */
    { "dev4", 0.43, 1.16 },
};

/* The largest |relative error| bounds[] allows on host. */
static double bound_max(const char *host)
{
    for (size_t h = 0; h < sizeof bounds / sizeof bounds[0]; h++)
        if (!strcmp(bounds[h].host, host))
            return bounds[h].max;
    fail_msg("no bound for %s", host);
    return 0;
}

/* The fit from the data is the one the shipped figures record (to their
 * printed digits): the eight figures fitted together on the hosts above;
 * each host's errors within its bound. Not every point is within the 25%
 * asked of it (docs/ways.md and docs/decisions/0168 say which and why): the
 * test prints them. */
static void test_fit_recomputed(void **state)
{
    (void)state;
    static nn_framework_sample s[MAX_SAMPLES], fit_s[MAX_SAMPLES];
    static cpu_row rows[MAX_SAMPLES];
    nn_framework_fit fit;
    int n = read_samples(s, rows, MAX_SAMPLES, NULL), k = fitted_samples(s, rows, n, NULL, NULL, fit_s);
    assert_int_equal(k, 172);
    assert_int_equal(nn_framework_fit_cpu(fit_s, k, &fit), 0);
    print_message("# fit over %d samples: step_us %.2f, op_ratio %.2f, elem_passes %.4f, param_passes %.4f, "
                  "work_ratio %.4f, arith_ratio %.4f, thread_op_ratio %.2f, thread_work_ratio %.4f; rms %.1f%%, "
                  "max %.1f%%\n", fit.n, fit.fc.step_us, fit.fc.op_ratio, fit.fc.elem_passes, fit.fc.param_passes,
                  fit.fc.work_ratio, fit.fc.arith_ratio, fit.fc.thread_op_ratio, fit.fc.thread_work_ratio,
                  100 * fit.rms_rel, 100 * fit.max_rel);
    nn_framework_cpu want = shipped_cpu();
    assert_true(fabs(fit.fc.step_us - want.step_us) < 0.05);
    assert_true(fabs(fit.fc.op_ratio - want.op_ratio) < 0.05);
    assert_true(fabs(fit.fc.elem_passes - want.elem_passes) < 0.0005);
    assert_true(fabs(fit.fc.param_passes - want.param_passes) < 0.0005);
    assert_true(fabs(fit.fc.work_ratio - want.work_ratio) < 0.0005);
    assert_true(fabs(fit.fc.thread_op_ratio - want.thread_op_ratio) < 0.05);
    assert_true(fabs(fit.fc.thread_work_ratio - want.thread_work_ratio) < 0.0005);
    assert_true(fabs(fit.fc.arith_ratio - want.arith_ratio) < 0.0005);
    for (int i = 0; i < n; i++)
        (void)bound_max(rows[i].host);          /* every host of the fixture is bounded */
    for (size_t h = 0; h < sizeof bounds / sizeof bounds[0]; h++) {
        double rms, max;
        host_errors(s, rows, n, bounds[h].host, &want, &rms, &max);
        print_message("# %s: rms %.1f%%, max %.1f%% (bounds %.0f%%, %.0f%%)\n", bounds[h].host, 100 * rms, 100 * max,
                      100 * bounds[h].rms, 100 * bounds[h].max);
        assert_true(rms < bounds[h].rms);
        assert_true(max < bounds[h].max);
    }
    print_misses(s, rows, n);
    /* no cost negative */
    assert_true(fit.fc.step_us >= 0 && fit.fc.op_ratio > 0 && fit.fc.elem_passes >= 0 && fit.fc.param_passes >= 0 &&
                fit.fc.work_ratio > 0 && fit.fc.thread_op_ratio >= 0 && fit.fc.arith_ratio >= 0 &&
                fit.fc.thread_work_ratio >= 0);
    /* one thread count alone cannot tell the thread figures from the others: they stay 0 */
    k = fitted_samples(s, rows, n, NULL, "dev5", fit_s);
    assert_int_equal(nn_framework_fit_cpu(fit_s, k, &fit), 0);
    assert_true(fit.fc.thread_op_ratio == 0 && fit.fc.thread_work_ratio == 0 && fit.fc.work_ratio > 0);
    assert_int_equal(nn_framework_fit_cpu(fit_s, 5, &fit), -1);   /* fewer samples than figures */
}

/* Each fitted host held out, the figures fitted on the others alone: each
 * 2-core host is then predicted within 20% rms (docs/ways.md gives the
 * figures), so the fit is not each host's own; the 16-core host is not
 * (rms above 50%): only it tells what more threads cost PyTorch. */
static void test_fit_held_out(void **state)
{
    (void)state;
    static nn_framework_sample s[MAX_SAMPLES], others[MAX_SAMPLES];
    static cpu_row rows[MAX_SAMPLES];
    int n = read_samples(s, rows, MAX_SAMPLES, NULL);
    for (int h = 0; h < FIT_HOSTS; h++) {
        nn_framework_fit fit;
        int k = fitted_samples(s, rows, n, fit_hosts[h], NULL, others);
        assert_int_equal(nn_framework_fit_cpu(others, k, &fit), 0);
        double rms, max;
        host_errors(s, rows, n, fit_hosts[h], &fit.fc, &rms, &max);
        print_message("# %s held out (fitted on the other %d samples, rms %.1f%% there): rms %.1f%%\n", fit_hosts[h],
                      k, 100 * fit.rms_rel, 100 * rms);
        if (!strcmp(fit_hosts[h], "xeon16"))
            assert_true(rms > 0.5);
        else
            assert_true(rms < 0.20);
    }
}

/* The 16-core Xeon (torch.csv, PyTorch 2.11 at 16 threads), priced from its
 * own calibration (a lent host of the same kind the next day): each of its 32
 * steps within its bound, and the thread figures are what bring it there
 * (without it, every step is predicted far too fast). */
static void test_form_against_torch_csv(void **state)
{
    (void)state;
    static nn_framework_sample s[MAX_SAMPLES];
    static cpu_row rows[MAX_SAMPLES];
    nn_framework_cpu fc = shipped_cpu(), no_threads = shipped_cpu();
    int n = read_samples(s, rows, MAX_SAMPLES, NULL), xeon = 0, faster = 0;
    no_threads.thread_op_ratio = no_threads.thread_work_ratio = 0;   /* one thread's figures */
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i].host, "xeon16") != 0)
            continue;
        double pred = nn_framework_cpu_form(&s[i], &fc);
        print_message("# xeon16 %-18s b%-5d predicted %7.0f us, PyTorch measured %7.0f (%+.1f%%)\n", rows[i].preset,
                      rows[i].batch, pred, s[i].framework_us, 100 * (pred / s[i].framework_us - 1));
        assert_int_equal(s[i].threads, 16);
        if (fabs(pred / s[i].framework_us - 1) > bound_max("xeon16"))
            fail_msg("%s at %d: predicted %.0f us, PyTorch measured %.0f", rows[i].preset, rows[i].batch, pred,
                     s[i].framework_us);
        faster += nn_framework_cpu_form(&s[i], &no_threads) < 0.75 * s[i].framework_us;
        xeon++;
    }
    assert_int_equal(xeon, 32);
    assert_true(faster >= 28);
}

/* The split of nnlab's predicted work by kind (what tools/fit_framework_cpu.py
 * --form split fits) adds up: the four kinds and the optimiser's pass are the
 * model's whole work, each preset's kinds where its layers are (LeNet has
 * convolutions and no bytes-priced layer, TabNet the reverse). */
static void test_split_terms_add_up(void **state)
{
    (void)state;
    static const struct { const char *preset; int conv, other; } cases[] = {
        { "lenet-cifar10", 1, 0 }, { "mnist-mlp-1000", 0, 0 }, { "conv1d-regression", 1, 0 },
        { "tabnet-regression", 0, 1 },
    };
    nn_calibration cal;
    assert_int_equal(cal_fixture_load("calibration-cpu-dev5.txt", &cal), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static nn_preset p;
        nn_framework_sample s;
        nn_explanation e;
        load_preset(cases[i].preset, &p);
        assert_int_equal(nn_framework_cpu_sample_of(&p, 64, &cal, &s, &e), 0);
        double kinds = s.linear_us + s.conv_us + s.act_us + s.other_us;
        double all = kinds + e.class_work_us[e.cost.optimizer_class];
        print_message("# %s at 64: linear %.1f, conv %.1f, per element %.1f, by bytes %.1f, optimiser %.1f us; "
                      "work %.1f us\n", cases[i].preset, s.linear_us, s.conv_us, s.act_us, s.other_us,
                      e.class_work_us[e.cost.optimizer_class], e.work_us);
        assert_true(fabs(all - e.work_us) <= 1e-9 * e.work_us);
        assert_true(s.linear_us > 0 && s.act_us > 0);
        assert_int_equal(s.conv_us > 0, cases[i].conv);
        assert_int_equal(s.other_us > 0, cases[i].other);
    }
}

/* The bytes PyTorch maps fresh each step: LeNet's first convolution's output
 * (6 channels padded to the vector's 16, 28x28) is 51,380,224 bytes at batch
 * 1024, above glibc's 32 MiB ceiling, twice a step (the output and its
 * gradient; the first layer computes no input gradient), and nothing else of
 * the presets reaches it; at 8 floats (AVX2) it takes batch 2048. The term is
 * those bytes' pages at the calibration's fresh_page_us, 0 without one. */
static void test_fresh_bytes(void **state)
{
    (void)state;
    static const struct { const char *preset; int batch; double floats, bytes; } cases[] = {
        { "lenet-cifar10", 1024, 16, 2 * 51380224.0 }, { "lenet5-cifar10", 1024, 16, 2 * 51380224.0 },
        { "lenet-cifar10", 256, 16, 0 },               { "lenet-cifar10", 1024, 8, 0 },
        { "lenet-cifar10", 2048, 8, 2 * 51380224.0 },  { "lenet-cifar10", 1024, 0, 0 },
        { "mnist-mlp-1000", 1024, 16, 0 },             { "conv1d-regression", 1024, 16, 0 },
        { "tabnet-regression", 1024, 16, 0 },
    };
    nn_calibration cal;
    assert_int_equal(cal_fixture_load("calibration-cpu-dev5.txt", &cal), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static nn_preset p;
        nn_cost c;
        load_preset(cases[i].preset, &p);
        nn_cost_model(&p, cases[i].batch, &c);
        double bytes = nn_framework_fresh_bytes(&p, &c, cases[i].floats);
        print_message("# %s at %d, %g floats: %.0f bytes fresh\n", cases[i].preset, cases[i].batch,
                      cases[i].floats, bytes);
        assert_float_equal(bytes, cases[i].bytes, 0.5);
    }
    static nn_preset lenet;
    nn_calibration old;
    nn_framework_sample none, priced;
    load_preset("lenet-cifar10", &lenet);
    assert_int_equal(cal_fixture_load("calibration-cpu-dev2.txt", &old), 0);
    assert_float_equal(old.fresh_page_us, 0, 0);         /* recorded before the figure, none added */
    assert_int_equal(nn_framework_cpu_sample_of(&lenet, 1024, &old, &none, NULL), 0);
    assert_float_equal(none.fresh_us, 0, 0);
    assert_float_equal(cal.fresh_page_us, 1.635, 0);     /* added to dev5's: its kind's figure */
    assert_int_equal(nn_framework_cpu_sample_of(&lenet, 1024, &cal, &none, NULL), 0);
    assert_float_equal(none.fresh_us, 2 * 51380224.0 / 4096 * 1.635, 1e-6);
    cal.fresh_page_us = 0;
    assert_int_equal(nn_framework_cpu_sample_of(&lenet, 1024, &cal, &none, NULL), 0);
    assert_float_equal(none.fresh_us, 0, 0);
    cal.fresh_page_us = 1.5;
    cal.vector_floats = 16;
    assert_int_equal(nn_framework_cpu_sample_of(&lenet, 1024, &cal, &priced, NULL), 0);
    assert_float_equal(priced.fresh_us, 2 * 51380224.0 / 4096 * 1.5, 1e-6);
    nn_framework_cpu fc = shipped_cpu();
    assert_float_equal(nn_framework_cpu_form(&priced, &fc) - nn_framework_cpu_form(&none, &fc), priced.fresh_us,
                       1e-6);
}

/* Every term of the form grows with the batch or stays, on every host and
 * preset of the fixture (rows in batch order): what lets
 * tools/fit_framework_cpu.py call a smaller batch measured much slower than
 * a larger one the data's miss, not the form's. */
static void test_terms_grow_with_the_batch(void **state)
{
    (void)state;
    static nn_framework_sample s[MAX_SAMPLES];
    static cpu_row rows[MAX_SAMPLES];
    int n = read_samples(s, rows, MAX_SAMPLES, NULL), pairs = 0;
    for (int i = 1; i < n; i++) {
        if (strcmp(rows[i].host, rows[i - 1].host) != 0 || strcmp(rows[i].preset, rows[i - 1].preset) != 0)
            continue;
        const nn_framework_sample *a = &s[i - 1], *b = &s[i];
        assert_true(rows[i].batch > rows[i - 1].batch);
        assert_true(b->ops >= a->ops && b->elem_us >= a->elem_us && b->param_us >= a->param_us &&
                    b->nnlab_us >= a->nnlab_us && b->fresh_us >= a->fresh_us);
        pairs++;
    }
    assert_true(pairs > 200);
}

/* --terms: every fixture row's terms, one CSV line each. */
static int print_terms(void)
{
    static nn_framework_sample s[MAX_SAMPLES];
    static cpu_row rows[MAX_SAMPLES];
    static double nnlab_measured[MAX_SAMPLES];
    int n = read_samples(s, rows, MAX_SAMPLES, nnlab_measured);
    printf("host,preset,batch,torch_us,nnlab_us,threads,ops,op_us,elem_us,param_us,nnlab_pred_us,linear_us,conv_us,"
           "act_us,other_us,fresh_us,fresh_bytes,arith_us\n");
    for (int i = 0; i < n; i++)
        printf("%s,%s,%d,%.1f,%.1f,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.0f,%.9g\n", rows[i].host,
               rows[i].preset, rows[i].batch, s[i].framework_us, nnlab_measured[i], s[i].threads, s[i].ops,
               s[i].op_us, s[i].elem_us, s[i].param_us, s[i].nnlab_us, s[i].linear_us, s[i].conv_us, s[i].act_us,
               s[i].other_us, s[i].fresh_us, rows[i].fresh_bytes, s[i].arith_us);
    return 0;
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
        nn_framework_cpu fc = shipped_cpu();
        assert_int_equal(memcmp(&prof.framework_cpu, &fc, sizeof fc), 0);
        assert_true(fabs(prof.framework_gpu.step_us - NN_FRAMEWORK_GPU_STEP_US) < 1e-9);
        assert_true(fabs(prof.framework_gpu.op_us - NN_FRAMEWORK_GPU_FW_OP_US) < 1e-9);
        assert_true(fabs(prof.framework_gpu.conv_us - NN_FRAMEWORK_GPU_CONV_US) < 1e-9);
        assert_true(fabs(prof.framework_gpu.device_ratio - NN_FRAMEWORK_GPU_DEVICE_RATIO) < 1e-9);
    }
}

/* The write-ups' direction, each at its own batch: the framework's GPU
 * (predicted for T4 and for the GeForce 940M) against its CPU, predicted from
 * the recorded calibrations of the hosts that gave PyTorch one core (dev5,
 * dev7: the model holds their measured steps at 14% rms, largest 25% and
 * 28%). Slower:
 * LeNet at 4 (both), the 784-128-10 MLP at 32; faster: the 1000-wide MLP at
 * 32, the 1-D convnet and TabNet at 1024 (seeds 000, 001, 003). Not asserted
 * (docs/decisions/0168): two Zen 5 cores run PyTorch's TabNet at 1024 in
 * 10.3-10.6 ms (measured, dev3 and dev6), a tie with a T4's predicted 10.7;
 * dev2's calibration prices its own nnlab steps at 1.5-3x what it measured. */
static void test_direction_of_the_writeups(void **state)
{
    (void)state;
    static const struct { const char *preset; int gpu_slower; } cases[] = {
        { "lenet-cifar10", 1 },  { "lenet5-cifar10", 1 },    { "mnist-mlp-128", 1 },
        { "mnist-mlp-1000", 0 }, { "conv1d-regression", 0 }, { "tabnet-regression", 0 },
    };
    enum { CASES = sizeof cases / sizeof cases[0] };
    static const char *const profiles[] = { "t4", "geforce-940m" };
    static const char *const cpus[] = { "calibration-cpu-dev5.txt", "calibration-cpu-dev7.txt" };
    int wrong = 0;
    for (size_t c = 0; c < sizeof cpus / sizeof cpus[0]; c++) {
        nn_calibration cal;
        assert_int_equal(cal_fixture_load(cpus[c], &cal), 0);
        for (size_t k = 0; k < CASES * 2; k++) {
            size_t i = k % CASES;
            nn_gpu_profile prof;
            load_profile(profiles[k / CASES], &prof);
            static nn_preset p;
            nn_explanation gpu[NN_GPU_WAYS];
            load_preset(cases[i].preset, &p);
            double cpu_us = nn_framework_cpu_step_us(&p, p.batch, &cal, &prof, NULL);
            nn_profile_predict(&p, p.batch, &prof, gpu);
            double gpu_us = gpu[NN_WAY_FRAMEWORK].predicted_us;
            print_message("# %s, %s batch %d: framework cpu %.0f us, framework gpu (%s) %.0f us\n", cpus[c],
                          cases[i].preset, p.batch, cpu_us, prof.name, gpu_us);
            assert_true(cpu_us > 0 && gpu_us > 0);
            if (cases[i].gpu_slower != (gpu_us > cpu_us)) {
                print_message("WRONG: %s at batch %d: the framework's GPU (%s) %.0f us against its CPU %.0f us: "
                              "the write-up has the GPU %s\n", cases[i].preset, p.batch, prof.name, gpu_us, cpu_us,
                              cases[i].gpu_slower ? "slower" : "faster");
                wrong++;
            }
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

/* The way a GPU fixture's steps had their batch, from its "# way: " line
 * (the helper's way: framework copies each batch, framework-data-on-device
 * keeps them there; bench/gpu_table.py writes it); -1 when none is said. */
static int fixture_batch_way(const char *line)
{
    if (!strcmp(line, "# way: framework\n"))
        return NN_FRAMEWORK_BATCH_COPIED;
    if (!strcmp(line, "# way: framework-data-on-device\n"))
        return NN_FRAMEWORK_BATCH_ON_DEVICE;
    return -1;
}

/* A GPU fixture (preset,batch,torch_us,mean_us: tests/fixtures/framework-gpu-h200.csv,
 * or bench/gpu_table.py --fixture's) as samples priced with a profile's
 * calibration, each with the batch as the fixture's way line says the run
 * had it. */
static int read_gpu_samples(const char *path, const char *profile, nn_framework_gpu_sample *s, gpu_row *rows,
                            int max)
{
    char line[256];
    nn_gpu_profile prof;
    nn_calibration cal;
    int n = 0, batch_way = -1;
    load_profile(profile, &prof);
    nn_profile_calibration(&prof, &cal);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f) && n < max) {
        static nn_preset p;
        double torch_us, mean_us;
        int said = fixture_batch_way(line);
        if (said >= 0)
            batch_way = said;
        if (line[0] == '#' || !strncmp(line, "preset,", 7))
            continue;
        assert_int_equal(sscanf(line, "%63[^,],%d,%lf,%lf", rows[n].preset, &rows[n].batch, &torch_us, &mean_us), 4);
        if (batch_way < 0)
            fail_msg("%s: no \"# way: \" line before its first step", path);
        load_preset(rows[n].preset, &p);
        assert_int_equal(nn_framework_gpu_sample_of(&p, rows[n].batch, &cal, batch_way, &s[n]), 0);
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
    char path[NN_PATH_LEN];
    snprintf(path, sizeof path, "%s/framework-gpu-h200.csv", FIXTURES_DIR);
    int n = read_gpu_samples(path, "h200", s, rows, MAX_GPU_SAMPLES);
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
        assert_int_equal(nn_framework_gpu_sample_of(&p, batch, &cal, NN_FRAMEWORK_BATCH_ON_DEVICE, &s), 0);
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
        /* a sample of a step that copied its batch: the form is the way's prediction */
        assert_int_equal(nn_framework_gpu_sample_of(&p, batch, &cal, NN_FRAMEWORK_BATCH_COPIED, &s), 0);
        assert_true(fabs(nn_framework_gpu_form(&s, &prof.framework_gpu) - way[NN_WAY_FRAMEWORK].predicted_us) < 1e-6);
    }
}

/* A re-measure with the framework way itself (each batch copied: bench/gpu.sh's
 * torch-P-cuda-framework-B.json) refits the same four figures: the copy is a
 * given term, priced from the calibration, so steps made by the form with
 * known figures and their copies give those figures back, and pricing the
 * same steps as if the batch were on the device does not (the copy, growing
 * with the batch, lands in the device's ratio). */
static void test_gpu_fit_of_copied_steps(void **state)
{
    (void)state;
    static const char *presets[] = { "lenet-cifar10", "lenet5-cifar10", "mnist-mlp-128", "mnist-mlp-1000",
                                     "conv1d-regression" };
    static nn_framework_gpu_sample copied[64], on_device[64];
    const nn_framework_gpu truth = { 150.0, 18.0, 170.0, 0.25 };
    nn_gpu_profile prof;
    nn_calibration cal;
    nn_framework_gpu_fit fit, wrong;
    int n = 0;
    load_profile("h200", &prof);
    nn_profile_calibration(&prof, &cal);
    for (size_t i = 0; i < sizeof presets / sizeof *presets; i++) {
        static nn_preset p;
        load_preset(presets[i], &p);
        for (int batch = 1; batch <= 1024; batch *= 4, n++) {
            assert_int_equal(nn_framework_gpu_sample_of(&p, batch, &cal, NN_FRAMEWORK_BATCH_COPIED, &copied[n]), 0);
            assert_int_equal(nn_framework_gpu_sample_of(&p, batch, &cal, NN_FRAMEWORK_BATCH_ON_DEVICE,
                                                        &on_device[n]), 0);
            assert_true(copied[n].given_us > on_device[n].given_us);     /* the copy, priced */
            copied[n].framework_us = on_device[n].framework_us = nn_framework_gpu_form(&copied[n], &truth);
        }
    }
    assert_int_equal(nn_framework_fit_gpu(copied, n, &fit), 0);
    print_message("# copied steps refitted: %.2f %.3f %.2f %.4f (rms %.2g)\n", fit.fw.step_us, fit.fw.op_us,
                  fit.fw.conv_us, fit.fw.device_ratio, fit.rms_rel);
    assert_true(fabs(fit.fw.step_us - truth.step_us) < 1e-3 && fabs(fit.fw.op_us - truth.op_us) < 1e-4);
    assert_true(fabs(fit.fw.conv_us - truth.conv_us) < 1e-3);
    assert_true(fabs(fit.fw.device_ratio - truth.device_ratio) < 1e-6);
    assert_true(fit.max_rel < 1e-9);
    assert_int_equal(nn_framework_fit_gpu(on_device, n, &wrong), 0);
    print_message("# the same steps priced with the batch on the device: %.2f %.3f %.2f %.4f (max %.1f%%)\n",
                  wrong.fw.step_us, wrong.fw.op_us, wrong.fw.conv_us, wrong.fw.device_ratio, 100 * wrong.max_rel);
    assert_true(wrong.max_rel > 0.01);
}

/* --gpu-fit CSV PROFILE: the refit a re-measure on a lent GPU needs (docs/ways.md,
 * "The framework way on a GPU"): the four figures fitted to CSV's steps priced
 * with PROFILE, then each step predicted with them and with the figures the
 * profile carries, as a table. */
static int print_gpu_fit(const char *path, const char *profile)
{
    static nn_framework_gpu_sample s[MAX_GPU_SAMPLES];
    static gpu_row rows[MAX_GPU_SAMPLES];
    nn_framework_gpu_fit fit;
    nn_gpu_profile prof;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "test_framework: %s: %s\n", path, strerror(errno));
        return 1;
    }
    fclose(f);
    int n = read_gpu_samples(path, profile, s, rows, MAX_GPU_SAMPLES);
    load_profile(profile, &prof);
    if (nn_framework_fit_gpu(s, n, &fit) != 0) {
        fprintf(stderr, "test_framework: %s: %d steps, no fit (at least 4, not singular)\n", path, n);
        return 1;
    }
    printf("# %s, priced with the %s profile: %d steps\n", path, profile, n);
    printf("fitted: gpu_step_us %.2f, gpu_op_us %.3f, gpu_conv_us %.2f, gpu_device_ratio %.4f; rms %.1f%%, "
           "largest %.1f%%\n", fit.fw.step_us, fit.fw.op_us, fit.fw.conv_us, fit.fw.device_ratio,
           100 * fit.rms_rel, 100 * fit.max_rel);
    printf("preset,batch,measured_us,fitted_us,fitted_rel,profile_us,profile_rel\n");
    for (int i = 0; i < n; i++) {
        double f = nn_framework_gpu_form(&s[i], &fit.fw), q = nn_framework_gpu_form(&s[i], &prof.framework_gpu);
        printf("%s,%d,%.1f,%.1f,%+.3f,%.1f,%+.3f\n", rows[i].preset, rows[i].batch, s[i].framework_us, f,
               f / s[i].framework_us - 1, q, q / s[i].framework_us - 1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--terms"))
        return print_terms();
    if (argc == 4 && !strcmp(argv[1], "--gpu-fit"))
        return print_gpu_fit(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_recomputed),
        cmocka_unit_test(test_fit_held_out),
        cmocka_unit_test(test_form_against_torch_csv),
        cmocka_unit_test(test_profiles_read_framework),
        cmocka_unit_test(test_direction_of_the_writeups),
        cmocka_unit_test(test_split_terms_add_up),
        cmocka_unit_test(test_fresh_bytes),
        cmocka_unit_test(test_terms_grow_with_the_batch),
        cmocka_unit_test(test_gpu_fit_recomputed),
        cmocka_unit_test(test_gpu_model_is_the_form),
        cmocka_unit_test(test_gpu_fit_of_copied_steps),
    };
    return cmocka_run_group_tests_name("framework", tests, NULL, NULL);
}

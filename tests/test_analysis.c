/* tests/test_analysis.c - the analysis layer's shared rules, which the CLI
 * and the lab both call: reading a snapshot (explain inputs, the measured
 * step and its parts), an explanation recomputed only when its inputs
 * change, explain's figures for every shipped preset (the split adds up,
 * the prediction never below its floors, the arithmetic's units), the
 * sweep (its points, the crossover and doubling rules, the runner), the
 * lab's calibration store, device status and the GPU switches' rule. One cmocka group. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
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

#include "nnlab/calibrate.h"
#include "nnlab/device.h"
#include "nnlab/explain.h"
#include "nnlab/observe.h"
#include "nnlab/preset.h"
#include "nnlab/sweep.h"
#include "util.h"

#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif

static void load_preset(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* A calibration with round numbers: 100 GFLOP/s, 10 GB/s, 1 us an op. */
static void fake_calibration(nn_calibration *c, const char *device)
{
    memset(c, 0, sizeof *c);
    snprintf(c->device, sizeof c->device, "%s", device);
    nn_machine_description(c->machine, sizeof c->machine);
    c->gemm_gflops = 100;
    c->gemm_gflops_1thread = 50;
    c->mem_gbps = 10;
    c->op_us = 1;
    c->sync_us = 10;
    c->upload_us = 5;
    c->upload_gbps = 5;
    c->host_copy_gbps = 10;
    c->created = 1;
}

static void running_snapshot(nn_snapshot *s, const char *device, int batch)
{
    memset(s, 0, sizeof *s);
    s->state = NN_JOB_RUNNING;
    snprintf(s->device, sizeof s->device, "%s", device);
    s->batch = batch;
}

/* ---- reading a snapshot -------------------------------------------------------------------- */

static void test_observe_inputs(void **state)
{
    nn_snapshot s;
    nn_explain_inputs in;
    (void)state;
    running_snapshot(&s, "cpu", 32);
    s.state = NN_JOB_PREPARING;                  /* the switches are not decided yet */
    assert_int_equal(nn_observe_inputs(&s, &in), -1);
    s.state = NN_JOB_RUNNING;
    s.sync_every_step = 1;
    assert_int_equal(nn_observe_inputs(&s, &in), 0);
    assert_string_equal(in.device, "cpu");
    assert_int_equal(in.batch, 32);
    assert_int_equal(in.opt.host_memory, 1);     /* no switches reported: host memory */
    assert_int_equal(in.opt.data_on_device, 1);
    assert_int_equal(in.opt.sync_every_step, 1);
    assert_int_equal(in.opt.launches_per_step, 0);
    /* a device backend: its switches and its launch count, rounded */
    running_snapshot(&s, "gpu", 4);
    s.has_switches = 1;
    s.data_on_device = 0;
    s.pinned = 1;
    s.has_counters = 1;
    s.timed_steps = 10;
    s.per_step.launches = 41.6;
    s.per_step.graph_nodes = 0.4;
    assert_int_equal(nn_observe_inputs(&s, &in), 0);
    assert_int_equal(in.opt.host_memory, 0);
    assert_int_equal(in.opt.data_on_device, 0);
    assert_int_equal(in.opt.pinned, 1);
    assert_int_equal(in.opt.launches_per_step, 42);
    assert_int_equal(in.opt.graph_nodes_per_step, 0);
    assert_int_equal(in.opt.sync_every_step, 0);
    s.timed_steps = 0;                           /* counters before a timed step are not counts */
    assert_int_equal(nn_observe_inputs(&s, &in), 0);
    assert_int_equal(in.opt.launches_per_step, 0);
    s.device[0] = '\0';                          /* never started */
    assert_int_equal(nn_observe_inputs(&s, &in), -1);
}

static void test_explainer_recomputed_on_change_only(void **state)
{
    static nn_preset p;
    static nn_explainer x;
    static nn_explanation want;
    nn_calibration cal;
    nn_snapshot s;
    nn_explain_inputs in;
    (void)state;
    load_preset("mnist-mlp-128", &p);
    fake_calibration(&cal, "cpu");
    nn_explainer_reset(&x, &cal, NULL);
    running_snapshot(&s, "cpu", 32);
    assert_int_equal(nn_observe_inputs(&s, &in), 0);
    assert_int_equal(nn_explainer_update(&x, &p, &in), 1);
    assert_int_equal(x.recomputed, 1);
    /* the same as nn_explain computes for these options */
    nn_explain(&p, 32, &cal, &in.opt, &want);
    assert_true(fabs(x.e.predicted_us - want.predicted_us) < 1e-9);
    assert_int_equal(x.e.regime, want.regime);
    /* every frame polls; the model runs again only when an input changes */
    for (int i = 0; i < 100; i++) {
        s.step = i;
        s.us_per_step = 100 + i;
        assert_int_equal(nn_observe_inputs(&s, &in), 0);
        assert_int_equal(nn_explainer_update(&x, &p, &in), 0);
    }
    assert_int_equal(x.recomputed, 1);
    s.batch = 64;
    assert_int_equal(nn_observe_inputs(&s, &in), 0);
    assert_int_equal(nn_explainer_update(&x, &p, &in), 1);
    assert_int_equal(x.e.cost.batch, 64);
    s.has_counters = 1;
    s.timed_steps = 5;
    s.per_step.launches = 12;
    assert_int_equal(nn_observe_inputs(&s, &in), 0);
    assert_int_equal(nn_explainer_update(&x, &p, &in), 1);
    assert_int_equal(x.e.ops, 12);
    s.per_step.launches = 12.2;                  /* the same count once rounded */
    assert_int_equal(nn_observe_inputs(&s, &in), 0);
    assert_int_equal(nn_explainer_update(&x, &p, &in), 0);
    assert_int_equal(x.recomputed, 3);
    /* without a calibration there is nothing to run */
    nn_explainer_reset(&x, NULL, "calibrating cpu: out of memory");
    assert_int_equal(nn_explainer_update(&x, &p, &in), 0);
    assert_false(x.valid);
    assert_string_equal(x.no_cal_why, "calibrating cpu: out of memory");
}

/* The sum of the valid parts. */
static double parts_sum(const nn_step_measure *m)
{
    double sum = 0;
    for (int p = 0; p < NN_STEP_PARTS; p++)
        if (m->part_valid & (1u << p))
            sum += m->part_us[p];
    return sum;
}

/* The measured step is the mean, and its parts (the host's times, as the
 * engine's mean us_per_step is) add up to it; a graph job's replay is what
 * the other parts leave. The device's own phase times are not parts. */
static void test_measured_step_adds_up(void **state)
{
    nn_snapshot s;
    nn_step_measure m;
    (void)state;
    running_snapshot(&s, "cpu", 32);
    nn_measure_step(&s, &m);                     /* nothing timed yet */
    assert_int_equal(m.timed_steps, 0);
    assert_int_equal(m.part_valid, 0);
    assert_true(nn_measured_step_us(&s) == 0);
    s.timed_steps = 20;
    s.us_per_step = 309.0;
    s.us_per_step_median = 250.0;                /* not the statistic: the parts are means */
    const double host[NN_PHASE_COUNT] = { 12.5, 80.25, 150.0, 66.0, 0.25 };
    memcpy(s.host_phase_us, host, sizeof host);
    memcpy(s.phase_us, host, sizeof host);
    s.phase_us[NN_PHASE_OPTIMIZER] = 658.6;      /* were it another statistic, it would not add up */
    s.phase_valid = (1u << NN_PHASE_COUNT) - 1;
    nn_measure_step(&s, &m);
    assert_float_equal(nn_measured_step_us(&s), 309.0, 1e-12);
    assert_float_equal(m.step_us, 309.0, 1e-12);
    assert_int_equal(m.timed_steps, 20);
    assert_int_equal(m.part_valid, ((1u << NN_PHASE_COUNT) - 1) & ~(1u << NN_PHASE_ALLREDUCE));
    assert_float_equal(parts_sum(&m), m.step_us, 1e-9);
    assert_string_equal(NN_STEP_STAT, "mean");
    /* a GPU replaying a graph, timed on the device's clock */
    running_snapshot(&s, "gpu", 32);
    s.has_switches = 1;
    s.graph = 1;
    s.timed_steps = 20;
    s.us_per_step = 500;
    s.host_phase_us[NN_PHASE_COPY] = 3;
    s.host_phase_us[NN_PHASE_SYNC] = 480;
    s.phase_device_clock = 1;
    s.phase_us[NN_PHASE_COPY] = 40;
    s.has_graph_us = 1;
    s.graph_us = 450;
    nn_measure_step(&s, &m);
    assert_int_equal(m.part_valid, (1u << NN_PHASE_COPY) | (1u << NN_PHASE_SYNC) | (1u << NN_PART_GRAPH));
    assert_float_equal(m.part_us[NN_PART_GRAPH], 17.0, 1e-9);
    assert_float_equal(parts_sum(&m), 500.0, 1e-9);
    assert_string_equal(nn_step_part_name(NN_PART_GRAPH), "graph");
    assert_string_equal(nn_step_part_name(NN_PHASE_OPTIMIZER), "optimizer");
}

/* ---- explain's figures for every shipped preset -------------------------------------------- */

/* A calibration that tries the rules: small products measured faster than
 * the 1024^3 sgemm (as on a shared machine, or with the reference loops),
 * elementwise ops almost free per element, graphs and pinned copies. */
static void tricky_calibration(nn_calibration *c)
{
    fake_calibration(c, "gpu");
    c->gemm_gflops = 50;
    c->mem_gbps = 20;
    c->op_us = 2;
    c->matrix_op_us = 3;
    c->download_us = 12;
    c->upload_gbps = 6;
    c->has_pinned = 1;
    c->pinned_upload_us = 3;
    c->pinned_upload_gbps = 12;
    c->has_graph = 1;
    c->graph_launch_us = 8;
    c->graph_node_us = 0.5;
    c->linear_fwd = (nn_rate_curve){ .n = 3, .flops = { 1e3, 1e6, 1e9 }, .gflops = { 5, 80, 200 } };
    c->linear_bwd = (nn_rate_curve){ .n = 2, .flops = { 1e4, 1e8 }, .gflops = { 10, 120 } };
    c->conv_fwd = (nn_rate_curve){ .n = 2, .flops = { 1e5, 1e8 }, .gflops = { 20, 300 } };
    c->conv_bwd = (nn_rate_curve){ .n = 2, .flops = { 1e5, 1e9 }, .gflops = { 15, 90 } };
    for (int k = NN_OP_RELU; k < NN_OP_CLASSES; k++)
        c->elem_ns[k][0] = c->elem_ns[k][1] = 0.001;
}

/* "X MFLOP per step take Y us at ... (Z GFLOP/s on average, ...": the
 * figures of the arithmetic agree, X / Y = Z (to the printed digits). */
static void check_arithmetic_units(const nn_explanation *e, const char *where)
{
    const char *at = strstr(e->why, " MFLOP per step take ");
    double mflop, us, gflops;
    if (!at)
        return;
    while (at > e->why && (at[-1] == '.' || (at[-1] >= '0' && at[-1] <= '9')))
        at--;
    if (sscanf(at, "%lf MFLOP per step take %lf us at the rates measured for ops of these sizes (%lf GFLOP/s",
               &mflop, &us, &gflops) != 3)
        fail_msg("%s: cannot read '%s'", where, e->why);
    if (fabs(mflop / us * 1e3 - gflops) > 0.05 * gflops + 0.1)
        fail_msg("%s: %g MFLOP in %g us is not %g GFLOP/s: '%s'", where, mflop, us, gflops, e->why);
}

static void check_figures(const nn_preset *p, int batch, const nn_calibration *cal, const nn_explain_options *o,
                          const char *how)
{
    static nn_explanation e;
    char where[160];
    snprintf(where, sizeof where, "%s batch %d %s", p->name, batch, how);
    nn_explain(p, batch, cal, o, &e);
    double split = e.issue_us + e.copy_us + e.sync_us + e.fixed_us + e.work_us;
    if (o->framework) {          /* the host issues while the device works: nnlab/framework.h */
        double device = e.fixed_us + e.calls_us + e.work_us, host = e.issue_us + o->framework_device_ratio * device;
        split = e.copy_us + e.sync_us + (host > device ? host : device);
    }
    if (fabs(split - e.predicted_us) > 1e-9 * e.predicted_us)
        fail_msg("%s: the split adds up to %.6f, not %.6f", where, split, e.predicted_us);
    if (e.predicted_us < e.compute_us || e.work_us < e.compute_us)
        fail_msg("%s: predicted %.3f us (work %.3f) below its FLOPs at the peak, %.3f us", where, e.predicted_us,
                 e.work_us, e.compute_us);
    if (e.predicted_us < e.memory_us || e.work_us < e.memory_us)
        fail_msg("%s: predicted %.3f us below its bytes at the bandwidth, %.3f us", where, e.predicted_us,
                 e.memory_us);
    if (e.sized_compute_us < e.compute_us)
        fail_msg("%s: the arithmetic (%.3f us) is faster than the peak allows (%.3f us)", where,
                 e.sized_compute_us, e.compute_us);
    assert_true(e.peak_gflops >= cal->gemm_gflops);
    if (e.overhead_us > e.predicted_us * (1 + 1e-9) || fabs(e.overhead_us + e.scaling_us - e.predicted_us) >
        1e-9 * e.predicted_us)
        fail_msg("%s: overhead %.3f + scaling %.3f is not the predicted %.3f", where, e.overhead_us, e.scaling_us,
                 e.predicted_us);
    assert_int_equal(e.regime == NN_REGIME_OVERHEAD, e.overhead_us >= e.scaling_us);
    check_arithmetic_units(&e, where);
}

static int is_ini(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".ini") == 0;
}

static void test_explain_figures_every_preset(void **state)
{
    static nn_preset p;
    static const int batches[] = { 1, 4, 64, 1024 };
    const nn_explain_options options[] = {
        { .host_memory = 1, .data_on_device = 1 },
        { .data_on_device = 1 },
        { .data_on_device = 1, .graph = 1 },
        { .pinned = 1, .sync_every_step = 1 },
        { .sync_every_step = 1, .framework = 1, .framework_op_us = 10 },
        { .sync_every_step = 1, .framework = 1, .framework_op_us = 10, .framework_step_us = 100,
          .framework_conv_us = 50, .framework_device_ratio = 0.25 },
    };
    static const char *const how[] = { "in host memory", "eager", "graph", "pinned+sync", "framework",
                                       "framework fitted" };
    nn_calibration cal;
    int presets = 0;
    (void)state;
    tricky_calibration(&cal);
    assert_true(nn_calibration_peak_gflops(&cal) == 300);   /* the conv curve's best, not sgemm's 50 */
    DIR *dir = opendir(PRESETS_SRCDIR);
    assert_non_null(dir);
    for (struct dirent *de; (de = readdir(dir)) != NULL;) {
        char path[NN_PATH_LEN], err[NN_ERR_LEN];
        if (!is_ini(de->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", PRESETS_SRCDIR, de->d_name);
        if (nn_preset_load(path, &p, err, sizeof err) != 0)
            fail_msg("%s", err);
        presets++;
        for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (size_t k = 0; k < sizeof options / sizeof options[0]; k++)
                check_figures(&p, batches[b], &cal, &options[k], how[k]);
    }
    closedir(dir);
    assert_true(presets >= 5);
}

/* A CPU calibrated on a 2-core machine (the figures `nnlab calibrate` gave
 * here): small products run far below the rate larger calls reach, a
 * matrix product costs 0.32 us beyond a 0.014 us op. */
static void cpu_calibration(nn_calibration *c)
{
    fake_calibration(c, "cpu");
    c->gemm_gflops = 50;
    c->gemm_gflops_1thread = 30;
    c->mem_gbps = 16;
    c->op_us = 0.014;
    c->sync_us = 0.015;
    c->host_copy_gbps = 11;
    c->matrix_op_us = 0.32;
    c->linear_fwd = (nn_rate_curve){ .n = 6, .flops = { 2.7e3, 3.2e4, 2e5, 8e5, 6.2e6, 2.1e9 },
                                     .gflops = { 2.8, 7.1, 3.8, 19, 50.7, 50 } };
    c->linear_bwd = (nn_rate_curve){ .n = 5, .flops = { 5.4e3, 6.4e4, 4e5, 1.6e6, 1.2e7 },
                                     .gflops = { 2.2, 9.5, 3.6, 10.1, 50.6 } };
    c->conv_fwd = (nn_rate_curve){ .n = 3, .flops = { 7.1e5, 2.8e6, 4.5e7 }, .gflops = { 46.8, 58.2, 59.7 } };
    c->conv_bwd = (nn_rate_curve){ .n = 3, .flops = { 1.4e6, 5.7e6, 9.1e7 }, .gflops = { 22.9, 49.6, 48.4 } };
    static const double ns[NN_OP_CLASSES][2] = {
        [NN_OP_RELU] = { 0.1, 0.12 }, [NN_OP_TANH] = { 2.1, 0.12 }, [NN_OP_MISH] = { 2.2, 3.0 },
        [NN_OP_DROPOUT] = { 1.7, 1.7 }, [NN_OP_POOL2X2] = { 0.17, 0.8 }, [NN_OP_POOL] = { 0.78, 1.6 },
        [NN_OP_SOFTMAX_XENT] = { 17.5, 0 }, [NN_OP_MSE] = { 1.8, 0 }, [NN_OP_SGD] = { 0.34, 0 },
        [NN_OP_ADAM] = { 0.69, 0 },
    };
    memcpy(c->elem_ns, ns, sizeof ns);
}

/* conv1d-regression at batch 1 took 19.7 us a step at ~7% of the
 * peak and was named compute-bound, as its fixed costs alone (issuing ops,
 * the products' fixed cost) are less than its work. But most of that work
 * is what a larger batch amortises: small products running far below the
 * rate larger calls reach, and the optimiser's pass over every parameter.
 * The rule counts those: overhead-bound, with the numbers that show it. At
 * batch 1024 the same net is not. */
static void test_regime_overhead_on_cpu(void **state)
{
    static nn_preset p;
    static nn_explanation e;
    nn_calibration cal;
    nn_explain_options cpu = { .host_memory = 1, .data_on_device = 1 };
    (void)state;
    load_preset("conv1d-regression", &p);
    cpu_calibration(&cal);
    nn_explain(&p, 1, &cal, &cpu, &e);
    assert_true(e.issue_us + e.sync_us + e.fixed_us < e.work_us);   /* the old rule's compute-bound */
    assert_true(e.shortfall_us > 0 && e.optimizer_us > 0);
    assert_true(fabs(e.overhead_us - (e.issue_us + e.sync_us + e.fixed_us + e.shortfall_us + e.optimizer_us)) <
                1e-9);
    assert_true(fabs(e.overhead_us + e.scaling_us - e.predicted_us) < 1e-9);
    assert_true(e.overhead_us >= e.scaling_us);
    assert_int_equal(e.regime, NN_REGIME_OVERHEAD);
    assert_non_null(strstr(e.why, "small products"));
    assert_non_null(strstr(e.why, "the optimiser's pass"));
    assert_non_null(strstr(e.why, "overhead-bound; the work that grows with the batch is"));
    assert_non_null(strstr(e.advice, "a larger batch"));
    nn_explain(&p, 1024, &cal, &cpu, &e);
    assert_true(e.overhead_us < e.scaling_us);
    assert_int_not_equal(e.regime, NN_REGIME_OVERHEAD);
}

/* The framework way issues more operations than nnlab's (nn_framework_ops),
 * each paying its host overhead: priced by the same model. */
static void test_framework_way(void **state)
{
    static nn_preset p;
    static nn_explanation fw, eager;
    nn_calibration cal;
    nn_explain_options o;
    (void)state;
    load_preset("mnist-mlp-128", &p);
    tricky_calibration(&cal);
    const nn_framework_gpu figures = { .step_us = 100, .op_us = 10, .conv_us = 50, .device_ratio = 0.5 };
    nn_gpu_way_options(NN_WAY_FRAMEWORK, &figures, &o);
    assert_true(o.framework && o.sync_every_step && !o.data_on_device && !o.graph && o.framework_op_us == 10);
    assert_true(o.framework_step_us == 100 && o.framework_conv_us == 50 && o.framework_device_ratio == 0.5);
    nn_explain(&p, 32, &cal, &o, &fw);
    /* flatten; linear 784->128 (2 + dW db), relu (2), dropout (2), linear (2 + dx dW db): 13, loss 4;
     * 4 tensors x (Adam's 6 + zeroing) = 28 */
    assert_int_equal(nn_framework_ops(&p, &fw.cost), 45);
    assert_int_equal(fw.ops, 45);
    /* the GPU form (nnlab/framework.h): the host's issue, no convolution here, half nnlab's device time */
    assert_true(fabs(fw.issue_us - (100 + 45 * (cal.op_us + 10))) < 1e-9);
    assert_true(fw.sync_us > 0 && fw.copy_us > 0 && !fw.priced_graph && fw.graph_saving_us == 0);
    double device = fw.fixed_us + fw.calls_us + fw.work_us;
    assert_true(fabs(fw.predicted_us - (fw.issue_us + fw.copy_us + fw.sync_us + 0.5 * device)) < 1e-6);
    assert_non_null(strstr(fw.why, "the framework's host: 100.0 us a step + 45 ops x (2.00 launch + 10.00 us)"));
    nn_gpu_way_options(NN_WAY_EAGER, &figures, &o);
    assert_true(!o.framework && o.framework_op_us == 0 && o.data_on_device && !o.graph && !o.sync_every_step);
    nn_explain(&p, 32, &cal, &o, &eager);
    assert_true(eager.predicted_us < fw.predicted_us);
    assert_true(eager.work_us == fw.work_us);         /* the same work, other overheads */
    nn_gpu_way_options(NN_WAY_GRAPH, NULL, &o);
    assert_true(o.graph && o.data_on_device);
    assert_string_equal(nn_gpu_way_key(NN_WAY_GRAPH), "graph");
    assert_string_equal(nn_gpu_way_name(NN_WAY_FRAMEWORK), "framework eager");
}

/* ---- whether a calibration can be trusted ----------------------------------------------------- */

static void test_calibration_quality(void **state)
{
    nn_calibration c;
    char why[NN_ERR_LEN], line[NN_ERR_LEN];
    (void)state;
    fake_calibration(&c, "cpu");
    c.threads = 2;
    c.spread[NN_SPREAD_GEMM] = 0.04;
    assert_int_equal(nn_calibration_quality(&c, why, sizeof why), NN_CAL_GOOD);
    assert_string_equal(why, "");
    nn_calibration_describe(&c, c.created + 180, line, sizeof line);
    assert_string_equal(line, "measured 3 min ago, good (repetitions within 4%)");
    /* a busy machine: one thread faster than two ... */
    c.gemm_gflops = 24;
    c.gemm_gflops_1thread = 33;
    assert_int_equal(nn_calibration_quality(&c, why, sizeof why), NN_CAL_CONTRADICTORY);
    assert_non_null(strstr(why, "faster on one thread (33.0 GFLOP/s) than on 2 (24.0)"));
    c.threads = 1;                               /* asked for one thread: nothing to compare */
    assert_int_equal(nn_calibration_quality(&c, why, sizeof why), NN_CAL_GOOD);
    /* ... streaming far below the host's memcpy ... */
    c.mem_gbps = 2;
    assert_int_equal(nn_calibration_quality(&c, why, sizeof why), NN_CAL_CONTRADICTORY);
    assert_non_null(strstr(why, "streaming at 2.0 GB/s"));
    c.mem_gbps = 10;
    /* ... and repetitions far apart (measured again, then contradictory, no longer noisy) */
    c.spread[NN_SPREAD_OP] = 0.45;
    assert_int_equal(nn_calibration_quality(&c, why, sizeof why), NN_CAL_CONTRADICTORY);
    assert_non_null(strstr(why, "issue one op: repetitions varied 45%, more than 10%"));
    nn_calibration_describe(&c, c.created + 7200, line, sizeof line);
    assert_non_null(strstr(line, "measured 2 h ago, contradictory: issue one op: repetitions varied 45%"));
    c.profile = 1;                               /* a profile's figures are given, not measured */
    snprintf(c.note, sizeof c.note, "predicted for T4");
    assert_int_equal(nn_calibration_quality(&c, why, sizeof why), NN_CAL_GOOD);
    nn_calibration_describe(&c, c.created, line, sizeof line);
    assert_string_equal(line, "predicted for T4 (a GPU profile)");
}

/* "9460.1 MFLOP per step = 369087.0 us at 35 GFLOP/s" mixed the time at the
 * sizes' rates with the peak's rate: the why of a compute-bound step now
 * gives the rate its time stands for. */
static void test_explain_compute_why(void **state)
{
    static nn_preset p;
    static nn_explanation e;
    nn_calibration cal;
    nn_explain_options cpu = { .host_memory = 1, .data_on_device = 1 };
    (void)state;
    load_preset("mnist-mlp-1000", &p);
    fake_calibration(&cal, "cpu");
    cal.gemm_gflops = 35;
    cal.mem_gbps = 1000;
    nn_explain(&p, 1024, &cal, &cpu, &e);
    assert_int_equal(e.regime, NN_REGIME_COMPUTE);
    assert_non_null(strstr(e.why, "GFLOP/s on average"));
    check_arithmetic_units(&e, "mnist-mlp-1000 at 1024");
}

/* ---- the sweep's rules ---------------------------------------------------------------------- */

static void test_sweep_batches(void **state)
{
    int b[32];
    (void)state;
    assert_int_equal(nn_sweep_powers_of_two(1, 4096, b, 32), 13);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[12], 4096);
    assert_int_equal(nn_sweep_powers_of_two(3, 20, b, 32), 3);
    assert_memory_equal(b, ((const int[]){ 4, 8, 16 }), 3 * sizeof(int));
    assert_int_equal(nn_sweep_powers_of_two(0, 0, b, 32), 0);
    assert_int_equal(nn_sweep_powers_of_two(1, 1 << 30, b, 5), 5);
}

static void test_crossover_rule(void **state)
{
    const double base[] = { 10, 10, 10, 10, 10 };
    (void)state;
    assert_int_equal(nn_crossover_index(base, (const double[]){ 1, 5, 20, 30, 40 }, 5), 2);
    assert_int_equal(nn_crossover_index(base, (const double[]){ 20, 30, 40, 50, 60 }, 5), 0);
    assert_int_equal(nn_crossover_index(base, (const double[]){ 1, 2, 3, 4, 5 }, 5), -1);
    /* ahead, behind, then ahead for good: the lead that lasts starts at 3 */
    assert_int_equal(nn_crossover_index(base, (const double[]){ 1, 20, 5, 30, 40 }, 5), 3);
    /* ahead and then behind at the end: no crossover */
    assert_int_equal(nn_crossover_index(base, (const double[]){ 1, 20, 30, 40, 5 }, 5), -1);
    /* equal is not ahead */
    assert_int_equal(nn_crossover_index(base, (const double[]){ 1, 10, 10, 10, 11 }, 5), 4);
    /* a failed or unmeasured point says nothing: skipped, not an end */
    assert_int_equal(nn_crossover_index(base, (const double[]){ 1, NAN, 20, 30, NAN }, 5), 2);
    assert_int_equal(nn_crossover_index(base, (const double[]){ 1, 20, NAN, 30, 40 }, 5), 1);
    assert_int_equal(nn_crossover_index((const double[]){ 10, 10, 10, NAN, NAN },
                                        (const double[]){ 1, 20, 30, 40, 50 }, 5), 1);
    assert_int_equal(nn_crossover_index(base, (const double[]){ NAN, NAN, NAN, NAN, NAN }, 5), -1);
    assert_int_equal(nn_crossover_index(base, base, 0), -1);
}

/* A job that ended: `us` per step over 10 timed steps (its parts adding up),
 * or failed when us <= 0. */
static void ended_snapshot(nn_snapshot *s, const char *device, int batch, double us)
{
    running_snapshot(s, device, batch);
    if (us <= 0) {
        s->state = NN_JOB_FAILED;
        snprintf(s->error, sizeof s->error, "out of memory");
        return;
    }
    s->state = NN_JOB_DONE;
    s->timed_steps = 10;
    s->us_per_step = us;
    s->us_per_step_median = 0.5 * us;            /* not the statistic */
    s->host_phase_us[NN_PHASE_COPY] = 0.1 * us;
    s->host_phase_us[NN_PHASE_FORWARD] = 0.3 * us;
    s->host_phase_us[NN_PHASE_BACKWARD] = 0.4 * us;
    s->host_phase_us[NN_PHASE_OPTIMIZER] = 0.2 * us;
}

static void test_sweep_record(void **state)
{
    static nn_sweep sw;
    static nn_explanation want;
    static nn_preset p;
    static nn_job_config cfg;
    const int batches[] = { 1, 2, 4, 8 };
    nn_calibration cal;
    nn_snapshot s;
    (void)state;
    load_preset("mnist-mlp-128", &p);
    nn_job_config_init(&cfg, &p);
    fake_calibration(&cal, "cpu");
    nn_sweep_init(&sw, &cfg, batches, 4, 5, 1);
    assert_int_equal(sw.base.steps, 5);
    assert_true(sw.base.bench);
    assert_int_equal(nn_sweep_add_device(&sw, "cpu", &cal, NULL), 0);
    assert_int_equal(nn_sweep_add_device(&sw, "gpu", NULL, "gpu: no calibration"), 0);
    assert_int_equal(sw.latest_dev, -1);
    assert_string_equal(sw.cal_why[1], "gpu: no calibration");
    ended_snapshot(&s, "cpu", 4, 200);
    nn_sweep_record(&sw, 0, 2, &s);
    const nn_sweep_point *pt = &sw.pt[0][2];
    assert_int_equal(pt->state, NN_POINT_DONE);
    assert_float_equal(pt->measured.step_us, 200, 1e-12);       /* the mean, as everywhere */
    assert_float_equal(pt->rate, 4 * 1e6 / 200, 1e-9);
    assert_true(pt->has_model);
    nn_explain(&cfg.preset, 4, &cal, &pt->in.opt, &want);
    assert_int_equal(pt->regime, want.regime);
    assert_float_equal(pt->predicted_us, want.predicted_us, 1e-9);
    assert_int_equal(nn_sweep_explain(&sw, 0, 2, &want), 0);
    assert_float_equal(want.predicted_us, pt->predicted_us, 1e-9);
    assert_int_equal(sw.latest_dev, 0);
    assert_int_equal(sw.latest_batch, 2);
    /* batch 2 measured too: the doubling ratio at 4 is t(4) / t(2) */
    ended_snapshot(&s, "cpu", 2, 150);
    nn_sweep_record(&sw, 0, 1, &s);
    assert_float_equal(nn_sweep_doubling(&sw, 0, 2), 200.0 / 150.0, 1e-9);
    assert_true(nn_sweep_doubling(&sw, 0, 1) == 0);              /* batch 1 not measured */
    assert_true(nn_sweep_doubling(&sw, 0, 3) == 0);              /* batch 8 not measured */
    /* no calibration: measured, its inputs read, no model */
    ended_snapshot(&s, "gpu", 1, 50);
    nn_sweep_record(&sw, 1, 0, &s);
    assert_int_equal(sw.pt[1][0].state, NN_POINT_DONE);
    assert_true(sw.pt[1][0].has_inputs);
    assert_false(sw.pt[1][0].has_model);
    assert_int_equal(nn_sweep_explain(&sw, 1, 0, &want), -1);
    assert_string_equal(sw.pt[1][0].in.device, "gpu");
    assert_int_equal(sw.latest_dev, 1);
    /* a failure says why; a cancelled job is no failure */
    ended_snapshot(&s, "gpu", 8, 0);
    nn_sweep_record(&sw, 1, 3, &s);
    assert_int_equal(sw.pt[1][3].state, NN_POINT_FAILED);
    assert_true(isnan(sw.pt[1][3].rate));
    assert_string_equal(sw.last_error, "gpu batch 8: out of memory");
    assert_int_equal(sw.n_failed, 1);
    s.state = NN_JOB_CANCELLED;
    nn_sweep_record(&sw, 1, 2, &s);
    assert_int_equal(sw.pt[1][2].state, NN_POINT_CANCELLED);
    assert_int_equal(sw.n_failed, 1);
    assert_int_equal(nn_sweep_device_index(&sw, "gpu"), 1);
    assert_int_equal(nn_sweep_device_index(&sw, "tpu"), -1);
}

/* The runner end to end on the CPU: two tiny points, one job at a time. */
static void test_sweep_runs(void **state)
{
    static nn_sweep sw;
    static nn_preset p;
    static nn_job_config cfg;
    const int batches[] = { 2, 4 };
    (void)state;
    load_preset("conv1d-regression", &p);
    nn_job_config_init(&cfg, &p);
    cfg.threads = 1;
    nn_sweep_init(&sw, &cfg, batches, 2, 2, 0);
    nn_sweep_add_device(&sw, "cpu", NULL, "not calibrated in this test");
    nn_sweep_add_device(&sw, "no-such-device", NULL, NULL);
    time_t end = time(NULL) + 60;
    while (!sw.finished) {
        assert_true(time(NULL) < end);
        if (!(nn_sweep_poll(&sw) & NN_SWEEP_RESULTS))
            nn_sweep_wait(&sw);
    }
    assert_false(nn_sweep_active(&sw));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sw.pt[0][i].state, NN_POINT_DONE);
        assert_int_equal(sw.pt[0][i].measured.timed_steps, 2);
        assert_int_equal(sw.pt[1][i].state, NN_POINT_FAILED);
    }
    assert_non_null(strstr(sw.last_error, "no-such-device batch 4: unknown device"));
    nn_sweep_free(&sw);
}

/* ---- the calibration store ----------------------------------------------------------------- */

/* A fresh cache folder for the calibration store. */
static int cache_setup(void **state)
{
    static char dir[] = "/tmp/nnlab-test-analysis-XXXXXX";
    char *d = mkdtemp(dir);
    if (!d || setenv("XDG_CACHE_HOME", d, 1) != 0)
        return -1;
    *state = d;
    return 0;
}

/* Removes what test_cal_store wrote: one cache file and the folders. */
static int cache_teardown(void **state)
{
    char path[512];
    if (nn_calibration_path("cpu-ref", path, sizeof path) == 0)
        unlink(path);
    if (nn_calibration_path("gpu", path, sizeof path) == 0)
        unlink(path);
    snprintf(path, sizeof path, "%s/nnlab", (const char *)*state);
    rmdir(path);
    return rmdir((const char *)*state) == 0 ? 0 : -1;
}

static void test_cal_store(void **state)
{
    static nn_cal_store st, fresh;
    nn_calibration cal, loaded;
    const char *why = NULL;
    char err[NN_ERR_LEN];
    (void)state;
    memset(&st, 0, sizeof st);
    assert_int_equal(nn_cal_store_needed(&st, "cpu"), 1);   /* an empty cache */
    assert_null(nn_cal_store_get(&st, "cpu", &why));
    assert_non_null(strstr(why, "not been calibrated"));
    nn_cal_store_record(&st, "cpu", NULL, "calibrating cpu: out of memory");
    assert_null(nn_cal_store_get(&st, "cpu", &why));
    assert_string_equal(why, "calibrating cpu: out of memory");
    assert_int_equal(nn_cal_store_needed(&st, "cpu"), 1);   /* a failure is tried again */
    fake_calibration(&cal, "cpu");
    nn_cal_store_record(&st, "cpu", &cal, NULL);
    assert_int_equal(nn_cal_store_needed(&st, "cpu"), 0);
    assert_true(nn_cal_store_get(&st, "cpu", &why)->gemm_gflops == 100);
    assert_int_equal(st.n, 1);
    /* a cached calibration is not measured again (whatever the cache accepts) */
    fake_calibration(&cal, "cpu-ref");
    assert_int_equal(nn_calibration_save(&cal, err, sizeof err), 0);
    memset(&fresh, 0, sizeof fresh);
    int cached = nn_calibration_load("cpu-ref", &loaded) == 0;
    assert_int_equal(nn_cal_store_needed(&fresh, "cpu-ref"), !cached);
    /* a cached calibration that is not good (cached marked) is measured again */
    cal.threads = 1;
    cal.spread[NN_SPREAD_MEM] = 0.6;
    assert_int_equal(nn_calibration_save(&cal, err, sizeof err), 0);
    memset(&fresh, 0, sizeof fresh);
    assert_int_equal(nn_cal_store_needed(&fresh, "cpu-ref"), 1);
    assert_null(nn_cal_store_get(&fresh, "cpu-ref", &why));
    assert_non_null(strstr(why, "is contradictory (streaming: repetitions varied 60%"));
    nn_cal_store_collect(&fresh, "cpu-ref", 0, &cal, NULL);    /* measured again: kept, whatever it is */
    assert_int_equal(nn_cal_store_needed(&fresh, "cpu-ref"), 0);
    cal.spread[NN_SPREAD_MEM] = 0;
    assert_int_equal(nn_calibration_save(&cal, err, sizeof err), 0);
    /* which of a list need measuring, in order */
    const char *const devs[] = { "cpu", "cpu-ref", "gpu" };
    char missing[4][16];
    memset(&st, 0, sizeof st);
    fake_calibration(&cal, "cpu");
    nn_cal_store_record(&st, "cpu", &cal, NULL);
    int n = nn_cal_store_missing(&st, devs, 3, missing, 4);
    assert_int_equal(n, cached ? 1 : 2);
    assert_string_equal(missing[n - 1], "gpu");
    /* a measurement that ended: kept (the job cached it), or its reason kept */
    fake_calibration(&cal, "gpu");
    assert_int_equal(nn_cal_store_collect(&st, "gpu", -1, NULL, "gpu: no device"), -1);
    assert_null(nn_cal_store_get(&st, "gpu", &why));
    assert_string_equal(why, "gpu: no device");
    assert_int_equal(nn_cal_store_collect(&st, "gpu", 0, &cal, NULL), 0);
    assert_non_null(nn_cal_store_get(&st, "gpu", &why));
    /* more devices than the store holds: never measured, never a crash */
    for (int i = 0; i < NN_CAL_STORE_DEVICES + 3; i++) {
        char dev[16];
        snprintf(dev, sizeof dev, "dev%d", i);
        nn_cal_store_record(&fresh, dev, NULL, "x");
    }
    assert_int_equal(fresh.n, NN_CAL_STORE_DEVICES);
    assert_int_equal(nn_cal_store_needed(&fresh, "dev99"), 0);
    assert_null(nn_cal_store_get(&fresh, "dev99", &why));
}

/* ---- devices and switches -------------------------------------------------------------------- */

static void test_devices(void **state)
{
    nn_device_status st[NN_MAX_DEVICES], one;
    char err[NN_ERR_LEN];
    (void)state;
    int n = nn_devices_list(st, NN_MAX_DEVICES);
    assert_true(n >= 3);
    int cpu = -1, gpu = -1;
    for (int i = 0; i < n; i++) {
        if (!strcmp(st[i].name, "cpu"))
            cpu = i;
        if (!strcmp(st[i].name, "gpu"))
            gpu = i;
        assert_true(st[i].available ? st[i].why[0] == '\0' && st[i].summary[0] : st[i].why[0] != '\0');
    }
    assert_true(cpu >= 0 && gpu >= 0);
    assert_true(st[cpu].available && st[cpu].host_memory);
    assert_true(st[cpu].on_host_cores);          /* two CPU jobs racing share the cores */
    assert_int_equal(nn_device_require("cpu", err, sizeof err), 0);
    /* the GPU: whatever this machine has, status and require agree */
    assert_int_equal(nn_device_status_of("gpu", &one), st[gpu].available ? 0 : -1);
    if (!one.available) {
        assert_int_equal(nn_device_require("gpu", err, sizeof err), -1);
        assert_non_null(strstr(err, "device gpu: not available: "));
        assert_non_null(strstr(err, one.why));
    }
    assert_int_equal(nn_device_status_of("xpu", &one), -1);
    assert_int_equal(nn_device_require("xpu", err, sizeof err), -1);
    assert_string_equal(err, "unknown device 'xpu' (expected cpu, cpu-ref or gpu)");
}

/* A device's kind from its name, without probing: the flags the status
 * gives every device of the list, known or not here; none for an unknown
 * name. */
static void test_device_kinds(void **state)
{
    nn_device_status st[NN_MAX_DEVICES];
    (void)state;
    int n = nn_devices_list(st, NN_MAX_DEVICES);
    int gpus = 0, refs = 0;
    for (int i = 0; i < n; i++) {
        nn_device_kind k = nn_device_kind_of(st[i].name);
        assert_true(k.known);
        assert_int_equal(k.gpu, st[i].gpu);
        assert_int_equal(k.reference, st[i].reference);
        if (st[i].available)
            assert_int_equal(k.host_memory, st[i].host_memory);
        assert_false(k.gpu && k.host_memory);
        gpus += k.gpu;
        refs += k.reference;
    }
    assert_int_equal(gpus, 1);
    assert_int_equal(refs, 1);
    nn_device_kind none = nn_device_kind_of("xpu");
    assert_false(none.known || none.gpu || none.reference || none.threaded || none.host_memory);
    none = nn_device_kind_of(NULL);
    assert_false(none.known);
}

static void test_device_survey(void **state)
{
    nn_device_status st[NN_MAX_DEVICES], direct[NN_MAX_DEVICES];
    char err[NN_ERR_LEN];
    (void)state;
    nn_device_survey *sv = nn_device_survey_start(err, sizeof err);
    assert_non_null(sv);
    time_t end = time(NULL) + 30;
    int n;
    while ((n = nn_device_survey_poll(sv, st, NN_MAX_DEVICES)) < 0) {
        assert_true(time(NULL) < end);
        usleep(1000);
    }
    nn_device_survey_free(sv);
    assert_int_equal(n, nn_devices_list(direct, NN_MAX_DEVICES));
    for (int i = 0; i < n; i++) {
        assert_string_equal(st[i].name, direct[i].name);
        assert_int_equal(st[i].available, direct[i].available);
    }
    nn_device_survey_free(NULL);
}

static void test_switches_rule(void **state)
{
    static nn_job_config cfg;
    char err[NN_ERR_LEN];
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    cfg.data_on_device = 1;
    assert_int_equal(nn_job_switches_check(&cfg, err, sizeof err), 0);
    cfg.pinned = 1;
    assert_int_equal(nn_job_switches_check(&cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "--no-data-on-device"));
    cfg.data_on_device = 0;
    assert_int_equal(nn_job_switches_check(&cfg, err, sizeof err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_observe_inputs),
        cmocka_unit_test(test_explainer_recomputed_on_change_only),
        cmocka_unit_test(test_measured_step_adds_up),
        cmocka_unit_test(test_explain_figures_every_preset),
        cmocka_unit_test(test_explain_compute_why),
        cmocka_unit_test(test_regime_overhead_on_cpu),
        cmocka_unit_test(test_framework_way),
        cmocka_unit_test(test_calibration_quality),
        cmocka_unit_test(test_sweep_batches),
        cmocka_unit_test(test_crossover_rule),
        cmocka_unit_test(test_sweep_record),
        cmocka_unit_test(test_sweep_runs),
        cmocka_unit_test_setup_teardown(test_cal_store, cache_setup, cache_teardown),
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_device_kinds),
        cmocka_unit_test(test_device_survey),
        cmocka_unit_test(test_switches_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

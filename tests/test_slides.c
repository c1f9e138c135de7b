/* tests/test_slides.c - the slides below the front ends: the
 * divergence rule and its sentence, a loss that keeps its column, the
 * predicted GPU's progress (where it is at any time, the label on every
 * line), a Jacobian's predicted lane priced as its val sweep prices it,
 * Explain's why when the measured step is far from the model, and the
 * GeForce 940M profile's sourced figures. The SVG itself is
 * parsed by tests/cli_slides.sh and tests/tui_slides.sh. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nnlab/divergence.h"
#include "nnlab/jacobian.h"
#include "nnlab/observe.h"
#include "nnlab/predicted.h"
#include "nnlab/profile.h"

#ifndef PROFILES_SRCDIR
#define PROFILES_SRCDIR "profiles"
#endif
#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif

static void points(nn_loss_point *pts, const double *loss, int n)
{
    for (int i = 0; i < n; i++)
        pts[i] = (nn_loss_point){ .step = 50L * (i + 1), .epoch = 1, .step_in_epoch = 50L * (i + 1),
                                  .loss = (float)loss[i] };
}

static void test_divergence_rule(void **state)
{
    nn_snapshot s = { 0 };
    nn_loss_point pts[4];
    nn_divergence d;
    char text[NN_TEXT_LEN];
    (void)state;
    s.state = NN_JOB_DONE;
    points(pts, (const double[]){ 2.3, 1.1, 0.6, 0.5 }, 4);   /* a run that learns */
    assert_int_equal(nn_divergence_of(&s, pts, 4, &d), 0);
    points(pts, (const double[]){ 2.3, 40.0, 2400.0, 9.0 }, 4);   /* 1000x past 2.3 at the third */
    assert_int_equal(nn_divergence_of(&s, pts, 4, &d), 1);
    assert_true(d.blowing_up);
    assert_int_equal(d.step, 150);
    nn_divergence_text(&d, text, sizeof text);
    assert_string_equal(text, "loss blowing up by step 150: 2.4e+03 - lower the learning rate (2.3 at the start)");
    points(pts, (const double[]){ 2.3, 2000.0 }, 2);   /* under 1000x: not yet */
    assert_int_equal(nn_divergence_of(&s, pts, 2, &d), 0);
    points(pts, (const double[]){ 9.7e7 }, 1);       /* logged once, already lost */
    assert_int_equal(nn_divergence_of(&s, pts, 1, &d), 1);
    nn_divergence_text(&d, text, sizeof text);
    assert_string_equal(text, "loss blowing up by step 50: 9.7e+07 - lower the learning rate");
    s.state = NN_JOB_DIVERGED;                        /* the engine stopped it */
    s.diverged_step = 2;
    s.diverged_exact = 1;
    s.diverged_loss = NAN;
    assert_int_equal(nn_divergence_of(&s, pts, 0, &d), 1);
    nn_divergence_text(&d, text, sizeof text);
    assert_string_equal(text, "diverged at step 2: loss nan - lower the learning rate");
    s.diverged_exact = 0;
    s.diverged_loss = INFINITY;
    nn_divergence_of(&s, pts, 0, &d);
    nn_divergence_text(&d, text, sizeof text);
    assert_string_equal(text, "diverged by step 2: loss inf - lower the learning rate");
}

static void test_loss_keeps_its_column(void **state)
{
    char buf[32];
    const double v[] = { 2.302585, NAN, INFINITY, -INFINITY, 3.1e17, 58275.6836, 0.0 };
    (void)state;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        nn_format_loss(v[i], 9, buf, sizeof buf);
        assert_int_equal(strlen(buf), 9);
        nn_format_loss(v[i], 7, buf, sizeof buf);
        assert_int_equal(strlen(buf), 7);
    }
    nn_format_loss(2.302585, 9, buf, sizeof buf);
    assert_string_equal(buf, "   2.3026");
    nn_format_loss(NAN, 9, buf, sizeof buf);
    assert_string_equal(buf, "      nan");
    nn_format_loss(3.1e17, 9, buf, sizeof buf);
    assert_string_equal(buf, "  3.1e+17");
}

static void load_preset(const char *name, nn_job_config *cfg)
{
    char path[512], err[NN_ERR_LEN];
    nn_preset p;
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    assert_int_equal(nn_preset_load(path, &p, err, sizeof err), 0);
    nn_job_config_init(cfg, &p);
}

static void find(const char *name, nn_gpu_profile *g)
{
    char err[NN_ERR_LEN];
    if (nn_profile_find(name, g, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void test_predicted_progress(void **state)
{
    nn_job_config cfg;
    nn_gpu_profile t4;
    nn_predicted_gpu g;
    nn_predicted_progress p;
    nn_explanation e[NN_GPU_WAYS];
    char line[NN_TEXT_LEN];
    (void)state;
    load_preset("mnist-mlp-128", &cfg);
    find("t4", &t4);
    assert_int_equal(nn_predicted_gpu_init(&g, &cfg, &t4), 0);
    assert_string_equal(g.label, "predicted for T4");
    assert_int_equal(g.way, cfg.graph ? NN_WAY_GRAPH : NN_WAY_EAGER);
    /* the same model as every other prediction: the profile's way, priced alike */
    nn_profile_predict(&cfg.preset, cfg.preset.batch, &t4, e);
    assert_true(fabs(g.step_s - e[g.way].predicted_us * 1e-6) <= 1e-9 + 1e-6 * g.step_s);
    /* where it is: steps at its pace, never past the total */
    nn_predicted_progress_at(&g, 0.0, 1000, &p);
    assert_int_equal(p.steps, 0);
    assert_false(p.ended);
    nn_predicted_progress_at(&g, 100.5 * g.step_s, 1000, &p);
    assert_int_equal(p.steps, 100);
    assert_true(fabs(p.fraction - 0.1) < 1e-12);
    assert_true(fabs(p.remaining_s - (1000 * g.step_s - 100.5 * g.step_s)) < 1e-9);
    nn_predicted_progress_at(&g, 1e9, 1000, &p);
    assert_true(p.ended);
    assert_int_equal(p.steps, 1000);
    assert_true(fabs(p.elapsed_s - p.total_s) < 1e-12);
    nn_predicted_progress_at(&g, INFINITY, 1000, &p);
    assert_true(p.ended);
    nn_predicted_status(&g, &p, line, sizeof line);
    assert_int_equal(strncmp(line, "predicted for T4: done in ", 26), 0);
    nn_predicted_progress_at(&g, 10 * g.step_s, 1000, &p);
    nn_predicted_status(&g, &p, line, sizeof line);
    assert_int_equal(strncmp(line, "predicted for T4: step 10/1000, ", 32), 0);
    /* no graph: nnlab eager, which is slower or equal */
    nn_predicted_gpu eager;
    cfg.graph = 0;
    assert_int_equal(nn_predicted_gpu_init(&eager, &cfg, &t4), 0);
    assert_int_equal(eager.way, NN_WAY_EAGER);
}

/* seed 003's GPU: the figures its .ini sources */
static void test_geforce_940m(void **state)
{
    nn_gpu_profile g, t4;
    nn_job_config cfg;
    nn_predicted_gpu slow, fast;
    (void)state;
    find("geforce-940m", &g);
    assert_string_equal(g.name, "GeForce 940M");
    assert_false(g.measured);
    assert_true(fabs(g.fp32_gflops - 384 * 2 * 1.176) < 0.1);   /* cores x 2 x boost GHz */
    assert_true(fabs(g.mem_gbps - 8 * 1.8) < 1e-9);                /* 64-bit at 1.8 GT/s */
    assert_int_equal(g.pcie_gen, 3);
    assert_true(g.pinned_copy_gbps < 3.94);                         /* under x4's raw rate */
    find("GeForce 940M", &g);                                       /* by its name too */
    find("t4", &t4);
    load_preset("lenet-cifar10", &cfg);
    assert_int_equal(nn_predicted_gpu_init(&slow, &cfg, &g), 0);
    assert_int_equal(nn_predicted_gpu_init(&fast, &cfg, &t4), 0);
    assert_true(slow.step_s > fast.step_s);
}

/* The lab's Jacobian race: its predicted GPU lane takes the time the val
 * sweep's table shows for the job (nnlab's passes, rows as a graph), its
 * steps rows of J, its pace rows/s; not a training step's prediction. */
static void test_predicted_jacobian(void **state)
{
    nn_job_config cfg;
    nn_gpu_profile t4;
    nn_predicted_gpu g;
    nn_predicted_progress p;
    nn_calibration cal;
    nn_jac_shape s;
    char err[NN_ERR_LEN], pace[32], line[NN_TEXT_LEN];
    (void)state;
    load_preset("mlp-jacobian", &cfg);
    find("t4", &t4);
    long val = cfg.jac_val > 0 ? cfg.jac_val : cfg.preset.task_val;
    assert_int_equal(nn_jac_shape_from_preset(&cfg.preset, "mlp-jacobian", &s, err, sizeof err), 0);
    nn_profile_calibration(&t4, &cal);
    double job_s = nn_jac_predict_s(&s, val, (enum nn_jac_method)cfg.jac_method, &cal, 1);
    long rows = nn_jac_rows_total(&s, val);
    assert_int_equal(nn_predicted_gpu_init(&g, &cfg, &t4), 0);
    assert_true(g.rows);
    assert_false(g.cpu);
    nn_predicted_progress_at(&g, INFINITY, rows, &p);
    assert_true(fabs(p.total_s - job_s) <= 1e-9 * job_s);
    nn_predicted_pace(&g, pace, sizeof pace);
    assert_non_null(strstr(pace, " rows/s"));
    assert_null(strstr(pace, "step"));
    nn_predicted_status(&g, &p, line, sizeof line);
    assert_non_null(strstr(line, "rows/s"));
    /* a training preset's lane keeps its step */
    load_preset("mnist-mlp-128", &cfg);
    assert_int_equal(nn_predicted_gpu_init(&g, &cfg, &t4), 0);
    assert_false(g.rows);
    nn_predicted_pace(&g, pace, sizeof pace);
    assert_non_null(strstr(pace, "/step"));
}

/* Explain's why against a measured step: the model's own within 2x; past
 * it, the measured parts first, the largest named, the optimiser's pass
 * the model priced beside the one measured, then the model's reading. */
static void test_why_measured(void **state)
{
    nn_explanation e;
    nn_step_measure m;
    char why[1280];
    (void)state;
    memset(&e, 0, sizeof e);
    memset(&m, 0, sizeof m);
    snprintf(e.why, sizeof e.why, "overhead: the optimiser's pass 395.7 us");
    e.predicted_us = 513;
    e.optimizer_us = 395.7;
    nn_explain_why_measured(&e, &m, why, sizeof why);          /* nothing timed: the model's */
    assert_string_equal(why, e.why);
    m.timed_steps = 10;
    m.step_us = 400;                                            /* within 2x */
    nn_explain_why_measured(&e, &m, why, sizeof why);
    assert_string_equal(why, e.why);
    m.step_us = 72;
    m.part_us[NN_PHASE_FORWARD] = 9;
    m.part_us[NN_PHASE_BACKWARD] = 12;
    m.part_us[NN_PHASE_OPTIMIZER] = 50;
    m.part_valid = (1u << NN_PHASE_FORWARD) | (1u << NN_PHASE_BACKWARD) | (1u << NN_PHASE_OPTIMIZER);
    nn_explain_why_measured(&e, &m, why, sizeof why);
    assert_non_null(strstr(why, "measured 72 us/step, 0.14x the model's 513"));
    assert_non_null(strstr(why, "forward 9, backward 12, optimizer 50 us, the optimizer the largest"));
    assert_non_null(strstr(why, "the model's optimiser's pass 396 us is 7.9x the measured 50"));
    assert_non_null(strstr(why, e.why));
    assert_true(strstr(why, "forward") < strstr(why, e.why));  /* the measurement first */
    /* its first half alone, which the lab's Explain panel shows as the why */
    assert_int_equal(nn_explain_measured_part(&e, &m, why, sizeof why), 1);
    assert_null(strstr(why, e.why));
    assert_non_null(strstr(why, "the optimizer the largest"));
    m.step_us = 400;
    assert_int_equal(nn_explain_measured_part(&e, &m, why, sizeof why), 0);
    assert_string_equal(why, "");
}

static int setup(void **state)
{
    (void)state;
    setenv("NNLAB_PROFILES_DIR", PROFILES_SRCDIR, 1);
    setenv("XDG_CONFIG_HOME", "/nonexistent-nnlab-test", 1);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_divergence_rule),
        cmocka_unit_test(test_loss_keeps_its_column),
        cmocka_unit_test(test_predicted_progress),
        cmocka_unit_test(test_geforce_940m),
        cmocka_unit_test(test_predicted_jacobian),
        cmocka_unit_test(test_why_measured),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

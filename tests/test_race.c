/* tests/test_race.c - a race of the CPU and a GPU's measured ways
 * (nnlab/race.h) and the lab's run that plans it (ui/text/run.c): which jobs,
 * with which switches, their labels, each pair's ratio, the framework way
 * predicted on top. No GPU is needed: the GPU is a device status made
 * here (the emulated GPU's end-to-end race: tests/cli_race.sh, tui_race.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cal_fixture.h"
#include "nnlab/framework.h"
#include "nnlab/race.h"
#include "nnlab/race_ways.h"
#include "text/run.h"

static nn_device_status status(const char *name, int gpu, int threaded)
{
    nn_device_status st;
    memset(&st, 0, sizeof st);
    snprintf(st.name, sizeof st.name, "%s", name);
    st.available = 1;
    st.gpu = gpu;
    st.threaded = threaded;
    return st;
}

static void load_preset(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* A GPU with its way not fixed races twice, eager then graph; fixed, once. */
static void plan_splits_a_gpu_into_its_ways(void **state)
{
    (void)state;
    nn_device_status cpu = status("cpu", 0, 1), gpu = status("gpu", 1, 0), ref = status("cpu-ref", 0, 0);
    const nn_device_status *cg[2] = { &cpu, &gpu }, *cr[2] = { &cpu, &ref };
    nn_race_job j[NN_RACE_MAX_JOBS];
    assert_int_equal(nn_race_plan(cg, 2, 0, j), 3);
    assert_string_equal(j[0].device, "cpu");
    assert_int_equal(j[0].graph, -1);
    assert_false(j[0].gpu);
    assert_string_equal(j[1].device, "gpu");
    assert_int_equal(j[1].graph, 0);
    assert_string_equal(j[2].device, "gpu");
    assert_int_equal(j[2].graph, 1);
    assert_true(j[1].gpu && j[2].gpu);
    assert_int_equal(nn_race_plan(cg, 2, 1, j), 2);
    assert_int_equal(j[1].graph, -1);
    assert_int_equal(nn_race_plan(cr, 2, 0, j), 2);   /* no GPU: each device once */
}

/* The way is fixed by any GPU switch away from nnlab's defaults. */
static void way_fixed_by_any_switch(void **state)
{
    (void)state;
    static nn_preset p;
    nn_job_config cfg;
    load_preset("mnist-mlp-128", &p);
    nn_job_config_init(&cfg, &p);
    assert_false(nn_race_way_fixed(&cfg));
    cfg.graph = 0;
    assert_true(nn_race_way_fixed(&cfg));
    nn_job_config_init(&cfg, &p);
    cfg.sync_every_step = 1;
    assert_true(nn_race_way_fixed(&cfg));
    nn_job_config_init(&cfg, &p);
    cfg.data_on_device = 0;
    assert_true(nn_race_way_fixed(&cfg));
}

/* Each job's config: its device and graph switch, the rest of the base's. */
static void job_config_and_labels(void **state)
{
    (void)state;
    static nn_preset p;
    nn_job_config base, cfg;
    nn_device_status cpu = status("cpu", 0, 1), gpu = status("gpu", 1, 0);
    const nn_device_status *cg[2] = { &cpu, &gpu };
    nn_race_job j[NN_RACE_MAX_JOBS];
    char label[32];
    load_preset("mnist-mlp-128", &p);
    nn_job_config_init(&base, &p);
    base.batch = 4;
    assert_int_equal(nn_race_plan(cg, 2, 0, j), 3);
    nn_race_job_config(&j[1], &base, &cfg);
    assert_string_equal(cfg.device, "gpu");
    assert_int_equal(cfg.graph, 0);
    assert_int_equal(cfg.data_on_device, base.data_on_device);
    assert_int_equal(cfg.sync_every_step, base.sync_every_step);
    assert_int_equal(cfg.batch, 4);
    nn_race_job_config(&j[2], &base, &cfg);
    assert_int_equal(cfg.graph, 1);
    const char *want[3] = { "cpu nnlab", "gpu eager", "gpu graph" };
    for (int k = 0; k < 3; k++) {
        nn_race_label(&j[k], &base, NULL, label, sizeof label);
        assert_string_equal(label, want[k]);
    }
    /* a GPU job with the config's way says the way it applied */
    nn_snapshot s;
    memset(&s, 0, sizeof s);
    s.has_switches = 1;
    s.graph = 0;
    assert_int_equal(nn_race_plan(cg, 2, 1, j), 2);
    nn_race_label(&j[1], &base, &s, label, sizeof label);
    assert_string_equal(label, "gpu eager");
    nn_race_label(&j[1], &base, NULL, label, sizeof label);
    assert_string_equal(label, base.graph ? "gpu graph" : "gpu eager");
}

static nn_snapshot done(double elapsed_s)
{
    nn_snapshot s;
    memset(&s, 0, sizeof s);
    s.state = NN_JOB_DONE;
    s.step = s.total_steps = 100;
    s.elapsed_s = elapsed_s;
    return s;
}

/* A pair's ratio is the slower's time over the faster's, named both ways. */
static void pair_ratio_names_both(void **state)
{
    (void)state;
    nn_snapshot a = done(3.0), b = done(1.5);
    char line[256];
    double r = nn_race_pair_text("cpu nnlab", &a, "gpu graph", &b, line, sizeof line);
    assert_true(fabs(r - 2.0) < 1e-9);
    assert_string_equal(line, "gpu graph 2.00x faster than cpu nnlab: 3.00 s / 1.50 s");
    r = nn_race_pair_text("gpu graph", &b, "cpu nnlab", &a, line, sizeof line);
    assert_string_equal(line, "gpu graph 2.00x faster than cpu nnlab: 3.00 s / 1.50 s");
    b.state = NN_JOB_CANCELLED;
    r = nn_race_pair_text("cpu nnlab", &a, "gpu eager", &b, line, sizeof line);
    assert_true(r == 0.0);
    assert_string_equal(line, "no ratio: gpu eager did not finish");
}

/* The one rule of a verdict: a lead only beyond both spreads, never on a
 * contradictory calibration, never with a side missing. */
static void verdict_only_beyond_the_spreads(void **state)
{
    (void)state;
    nn_verdict v;
    assert_int_equal(nn_verdict_of(1000, 0.02, 2620, 0, 0, &v), NN_VERDICT_GPU_SLOWER);
    assert_true(fabs(v.ratio - 2.62) < 1e-9);
    assert_int_equal(nn_verdict_of(1000, 0.02, 400, 0, 0, &v), NN_VERDICT_GPU_FASTER);
    assert_true(fabs(v.ratio - 2.5) < 1e-9);
    /* 1560 against 1541: 1.2% apart, within a 10% spread */
    assert_int_equal(nn_verdict_of(1560, 0.10, 1541, 0, 0, &v), NN_VERDICT_TOO_CLOSE);
    assert_true(v.ratio == 0);
    /* the spreads add: 5% + 5% holds a 9% gap, not an 11% one */
    assert_int_equal(nn_verdict_of(1000, 0.05, 1090, 0.05, 0, &v), NN_VERDICT_TOO_CLOSE);
    assert_int_equal(nn_verdict_of(1000, 0.05, 1110, 0.05, 0, &v), NN_VERDICT_GPU_SLOWER);
    assert_int_equal(nn_verdict_of(1000, 0, 5000, 0, 1, &v), NN_VERDICT_CONTRADICTORY);
    assert_int_equal(nn_verdict_of(NAN, 0, 5000, 0, 0, &v), NN_VERDICT_MISSING);
    assert_int_equal(nn_verdict_of(1000, 0, 0, 0, 0, &v), NN_VERDICT_MISSING);
}

static void ways_of(const char *preset, int batch, const nn_calibration *cpu, nn_race_ways *w)
{
    static nn_preset p;
    static nn_gpu_profile prof;
    char err[NN_ERR_LEN], path[NN_PATH_LEN];
    load_preset(preset, &p);
    snprintf(path, sizeof path, "%s/t4.ini", PROFILES_SRCDIR);
    if (nn_profile_load(path, &prof, err, sizeof err) != 0)
        fail_msg("%s", err);
    nn_race_ways_predict(w, &p, batch, cpu, NULL, &prof, NN_WAY_GRAPH);
}

/* The four lanes predicted, each saying where it comes from; the framework
 * pair first in the summary, the write-up's direction at its batch. */
static void ways_answer_the_writeup_first(void **state)
{
    (void)state;
    static nn_calibration cpu;
    static nn_race_ways w;
    char fw[3 * NN_TEXT_LEN], own[3 * NN_TEXT_LEN];
    assert_int_equal(cal_fixture_load("calibration-cpu-dev2.txt", &cpu), 0);
    ways_of("lenet-cifar10", 4, &cpu, &w);
    for (int k = 0; k < NN_LANES; k++) {
        assert_true(w.lane[k].present);
        assert_false(w.lane[k].measured);
    }
    assert_string_equal(w.lane[NN_LANE_FW_CPU].source, "predicted from this CPU's calibration");
    assert_string_equal(w.lane[NN_LANE_FW_GPU].source, "predicted for T4");
    assert_string_equal(w.lane[NN_LANE_NNLAB_GPU].label, "gpu graph");
    assert_true(w.lane[NN_LANE_FW_CPU].spread > 0);      /* the calibration's repetitions */
    assert_true(w.lane[NN_LANE_FW_GPU].spread == 0);     /* a profile's figures, as given */
    nn_race_ways_summary(&w, fw, sizeof fw, own, sizeof own);
    assert_non_null(strstr(fw, "as a framework runs it: the GPU is "));
    assert_non_null(strstr(fw, "x slower than the CPU at batch 4 (cpu framework "));
    assert_non_null(strstr(own, "nnlab's own code: the GPU is "));
    /* measured replaces predicted, and says so */
    nn_race_lane_measure(&w.lane[NN_LANE_NNLAB_CPU], 140, 0, "measured");
    assert_true(w.lane[NN_LANE_NNLAB_CPU].measured);
    nn_race_ways_summary(&w, fw, sizeof fw, own, sizeof own);
    assert_non_null(strstr(own, "(cpu nnlab 140 us measured, gpu graph "));
    /* no calibration: the CPU's lanes say why, and no verdict is called */
    ways_of("lenet-cifar10", 4, NULL, &w);
    assert_false(w.lane[NN_LANE_FW_CPU].present);
    nn_race_ways_summary(&w, fw, sizeof fw, own, sizeof own);
    assert_string_equal(fw, "as a framework runs it: no verdict: cpu framework not priced: this CPU has not "
                        "been calibrated");
}

/* A contradictory calibration: the verdict says so and calls nothing. */
static void ways_refuse_a_contradictory_calibration(void **state)
{
    (void)state;
    static nn_calibration cpu;
    static nn_race_ways w;
    char fw[3 * NN_TEXT_LEN], own[3 * NN_TEXT_LEN];
    assert_int_equal(cal_fixture_load("calibration-cpu-dev2.txt", &cpu), 0);
    cpu.spread[NN_SPREAD_GEMM] = 0.45;   /* repetitions 45% apart */
    ways_of("lenet-cifar10", 4, &cpu, &w);
    assert_true(w.lane[NN_LANE_FW_CPU].contradictory);
    nn_race_ways_summary(&w, fw, sizeof fw, own, sizeof own);
    assert_non_null(strstr(fw, "as a framework runs it: cannot call at batch 4: the CPU's figure rests on a "
                           "calibration marked contradictory"));
    assert_null(strstr(fw, "slower"));
    assert_null(strstr(fw, "faster"));
}

/* The lab's run of cpu and a GPU: three jobs in turn, labelled, the later
 * ones waiting for the one before; a switch away from the default: two. */
static void lab_run_plans_three_jobs(void **state)
{
    (void)state;
    static nn_preset p;
    static ui_run r;
    nn_job_config cfg;
    char err[NN_ERR_LEN], buf[128];
    nn_device_status cpu, gpu = status("gpu", 1, 0);
    assert_int_equal(nn_device_status_of("cpu", &cpu), 0);
    load_preset("mnist-mlp-128", &p);
    nn_job_config_init(&cfg, &p);
    cfg.steps = 2;
    assert_int_equal(ui_run_start(&r, &cfg, &cpu, &gpu, 1, err, sizeof err), 0);
    assert_int_equal(r.n_jobs, 3);
    assert_true(r.ways);
    assert_string_equal(r.j[0].label, "cpu nnlab");
    assert_string_equal(r.j[1].label, "gpu eager");
    assert_string_equal(r.j[2].label, "gpu graph");
    assert_true(r.j[0].started && !r.j[1].started && !r.j[2].started);
    ui_run_not_started_text(&r, 2, buf, sizeof buf);
    assert_string_equal(buf, "waiting: starts when gpu eager ends (one after the other)");
    ui_run_free(&r);
    cfg.graph = 0;                   /* the way fixed: the GPU once */
    assert_int_equal(ui_run_start(&r, &cfg, &cpu, &gpu, 1, err, sizeof err), 0);
    assert_int_equal(r.n_jobs, 2);
    assert_string_equal(r.j[1].label, "gpu eager");
    ui_run_free(&r);
    /* racing: the GPU's two host threads take a core each, the CPU the rest */
    const nn_device_status *three[3] = { &cpu, &gpu, &gpu };
    int t[3];
    ui_race_threads(three, 3, 8, t);
    assert_true(t[0] == 6 && t[1] == 1 && t[2] == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_splits_a_gpu_into_its_ways),
        cmocka_unit_test(way_fixed_by_any_switch),
        cmocka_unit_test(job_config_and_labels),
        cmocka_unit_test(pair_ratio_names_both),
        cmocka_unit_test(lab_run_plans_three_jobs),
        cmocka_unit_test(verdict_only_beyond_the_spreads),
        cmocka_unit_test(ways_answer_the_writeup_first),
        cmocka_unit_test(ways_refuse_a_contradictory_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

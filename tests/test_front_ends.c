/* tests/test_front_ends.c - the CLI and the lab give the same answers for the
 * same measurements. One sweep of CPU and GPU points, one of them failed,
 * goes into the analysis layer (nn_sweep_record, as both runners do); then
 * `nnlab sweep`'s printer (src/cli/cli_sweep.c) and the lab's words for the
 * sweep screen and its Explain panel (ui/text/sweep.c, ui/text/explain_text.c) must
 * give the same crossover, the same regime and the same predicted step for
 * every point. The failed point sits where stopping at it (the CLI's old
 * rule) would move the crossover. A GPU that is not here is swept as
 * predicted for a profile: both say so for every row, column and crossover,
 * and give the same crossovers. */
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

#include "cli.h"
#include "text/explain_text.h"
#include "nnlab/observe.h"
#include "nnlab/sweep.h"
#include "text/sweep.h"

#define N_BATCHES 6
static const int batches[N_BATCHES] = { 1, 2, 4, 8, 16, 32 };
/* samples/s measured: the CPU's flat, the GPU's growing; the GPU's batch 8 failed */
static const double cpu_rate[N_BATCHES] = { 1000, 1000, 1000, 1000, 1000, 1000 };
static const double gpu_rate[N_BATCHES] = { 100, 500, 2000, 0, 3000, 4000 };

static void calibration(nn_calibration *c, const char *device)
{
    memset(c, 0, sizeof *c);
    snprintf(c->device, sizeof c->device, "%s", device);
    c->gemm_gflops = 100;
    c->mem_gbps = 10;
    c->op_us = strcmp(device, "gpu") ? 0.1 : 5;
    c->sync_us = 10;
    c->download_us = 12;
    c->upload_us = 5;
    c->upload_gbps = 5;
    c->host_copy_gbps = 10;
    c->has_graph = !strcmp(device, "gpu");
    c->graph_launch_us = 8;
    c->graph_node_us = 1;
}

/* The last snapshot of a point's job: the GPU reports its switches and
 * counts its launches; rate 0 is a failed job. */
static void snapshot(nn_snapshot *s, const char *device, int batch, double rate)
{
    memset(s, 0, sizeof *s);
    snprintf(s->device, sizeof s->device, "%s", device);
    s->batch = batch;
    if (rate <= 0) {
        s->state = NN_JOB_FAILED;
        snprintf(s->error, sizeof s->error, "out of device memory");
        return;
    }
    s->state = NN_JOB_DONE;
    s->timed_steps = 20;
    s->us_per_step = batch * 1e6 / rate;
    s->us_per_step_median = 0.9 * s->us_per_step;
    s->host_phase_us[NN_PHASE_COPY] = 0.25 * s->us_per_step;
    s->host_phase_us[NN_PHASE_SYNC] = 0.75 * s->us_per_step;
    if (!strcmp(device, "gpu")) {
        s->has_switches = 1;
        s->data_on_device = 1;
        s->graph = 1;
        s->has_graph_us = 1;
        s->has_counters = 1;
        s->per_step.launches = 2;
        s->per_step.graph_nodes = 20;
    }
}

static nn_sweep *measured_sweep(void)
{
    static nn_sweep sw;
    static nn_preset p;
    static nn_job_config cfg;
    char path[512], err[512];
    nn_calibration cal;
    nn_snapshot s;
    snprintf(path, sizeof path, "%s/mnist-mlp-128.ini", PRESETS_SRCDIR);
    if (nn_preset_load(path, &p, err, sizeof err) != 0)
        fail_msg("%s", err);
    nn_job_config_init(&cfg, &p);
    nn_sweep_init(&sw, &cfg, batches, N_BATCHES, 20, 3);
    calibration(&cal, "cpu");
    nn_sweep_add_device(&sw, "cpu", &cal, NULL);
    calibration(&cal, "gpu");
    nn_sweep_add_device(&sw, "gpu", &cal, NULL);
    for (int i = 0; i < N_BATCHES; i++) {   /* batch-major, as the runner goes */
        snapshot(&s, "cpu", batches[i], cpu_rate[i]);
        nn_sweep_record(&sw, 0, i, &s);
        snapshot(&s, "gpu", batches[i], gpu_rate[i]);
        nn_sweep_record(&sw, 1, i, &s);
    }
    return &sw;
}

/* What cli_sweep_print writes in format f. */
static char *cli_output(const nn_sweep *sw, enum cli_sweep_format f)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    cli_sweep_print(mem, sw, f);
    assert_int_equal(fclose(mem), 0);
    return text;
}

/* The skip rule puts the crossover at batch 4; stopping at the failed
 * batch 8 would have put it at 16. */
static void test_same_crossover(void **state)
{
    const nn_sweep *sw = measured_sweep();
    char line[128];
    (void)state;
    int x = nn_sweep_crossover(sw, 0, 1);
    assert_int_equal(x, 2);
    assert_int_equal(sw->pt[1][3].state, NN_POINT_FAILED);
    char *json = cli_output(sw, CLI_SWEEP_JSON), *text = cli_output(sw, CLI_SWEEP_TEXT);
    assert_non_null(strstr(json, "\"crossovers\": [{\"pair\": \"nnlab\", \"from\": \"cpu\", \"from_way\": "
                               "\"nnlab\", \"to\": \"gpu\", \"way\": \"graph\", \"source\": \"measured\", "
                               "\"batch\": 4, \"tie_batch\": 0, \"says\": \"overtakes from batch 4 on\"}]"));
    assert_non_null(strstr(text, "nnlab: gpu graph against cpu nnlab: overtakes from batch 4 on\n"));
    assert_int_equal(ui_sweep_gpu_crossover(sw, nn_sweep_device_index(sw, "cpu")), x);
    ui_sweep_crossover_text(sw, nn_sweep_device_index(sw, "cpu"), line, sizeof line);
    assert_string_equal(line, "nnlab: gpu overtakes from batch 4 on");
    free(json);
    free(text);
}

/* Every measured point: the CLI's JSON, CSV and table rows and the lab's
 * table cell name the point's regime; the failed point is left out of the
 * CLI's output and shown as failed in the lab's table. */
static void test_same_regimes(void **state)
{
    const nn_sweep *sw = measured_sweep();
    char *json = cli_output(sw, CLI_SWEEP_JSON), *csv = cli_output(sw, CLI_SWEEP_CSV);
    (void)state;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < N_BATCHES; i++) {
            const nn_sweep_point *p = &sw->pt[d][i];
            char want[160], cell[32];
            snprintf(want, sizeof want, "{\"device\": \"%s\", \"batch\": %d, ", sw->device[d], batches[i]);
            ui_sweep_cell_text(sw, d, i, 11, cell, sizeof cell);
            if (p->state != NN_POINT_DONE) {
                assert_null(strstr(json, want));
                assert_non_null(strstr(cell, "failed"));
                continue;
            }
            assert_true(p->has_model);
            const char *row = strstr(json, want);
            assert_non_null(row);
            snprintf(want, sizeof want, "\"regime\": \"%s\"}", nn_regime_name(p->regime));
            assert_non_null(strstr(row, want));
            assert_true(strstr(row, want) < strchr(row, '}') + 1);
            snprintf(want, sizeof want, "%s,%d,", sw->device[d], batches[i]);
            const char *line = strstr(csv, want);
            assert_non_null(line);
            snprintf(want, sizeof want, ",%s,measured,", nn_regime_name(p->regime));
            const char *at = strstr(line, want);
            assert_true(at && at < strchr(line, '\n'));
            assert_non_null(strstr(cell, ui_regime_short(p->regime, 0)));
        }
    free(json);
    free(csv);
}

/* The predicted step: the CLI prints the point's, the lab's Explain panel
 * runs the model again from the point's inputs; they agree to the digit. */
static void test_same_prediction(void **state)
{
    static nn_explainer x;
    static ui_text t;
    const nn_sweep *sw = measured_sweep();
    char *json = cli_output(sw, CLI_SWEEP_JSON);
    (void)state;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < N_BATCHES; i++) {
            const nn_sweep_point *p = &sw->pt[d][i];
            char want[160];
            if (p->state != NN_POINT_DONE)
                continue;
            nn_explainer_reset(&x, &sw->cal[d], NULL);
            assert_int_equal(nn_explainer_update(&x, &sw->base.preset, &p->in), 1);
            assert_true(x.e.predicted_us == p->predicted_us);
            assert_int_equal(x.e.regime, p->regime);
            snprintf(want, sizeof want, "{\"device\": \"%s\", \"batch\": %d, ", sw->device[d], batches[i]);
            const char *row = strstr(json, want);
            assert_non_null(row);
            snprintf(want, sizeof want, "\"predicted_us\": %.6g,", p->predicted_us);
            assert_non_null(strstr(row, want));
            ui_explain_format(&x, sw->device[d], batches[i], &p->measured, 72, 40, &t);
            snprintf(want, sizeof want, "%s, batch %d: %s", sw->device[d], batches[i], nn_regime_name(p->regime));
            assert_string_equal(t.line[0], want);
            snprintf(want, sizeof want, p->predicted_us < 9.95 ? "predicted %.1f us/step" : "predicted %.0f us/step",
                     p->predicted_us);
            assert_string_equal(t.line[1], want);
        }
    free(json);
}

#ifndef PROFILES_SRCDIR
#define PROFILES_SRCDIR "profiles"
#endif

/* A CPU measured at 10,000 samples/s at every batch (within a 5% spread: its mean and median differ by 10%), and the GPU predicted
 * for the T4: each way overtakes it somewhere, the framework's last. */
static nn_sweep *predicted_sweep(void)
{
    static nn_sweep sw;
    static nn_preset p;
    static nn_job_config cfg;
    static nn_gpu_profile prof;
    char path[512], err[512];
    nn_calibration cal;
    nn_snapshot s;
    snprintf(path, sizeof path, "%s/mnist-mlp-128.ini", PRESETS_SRCDIR);
    if (nn_preset_load(path, &p, err, sizeof err) != 0)
        fail_msg("%s", err);
    snprintf(path, sizeof path, "%s/t4.ini", PROFILES_SRCDIR);
    if (nn_profile_load(path, &prof, err, sizeof err) != 0)
        fail_msg("%s", err);
    nn_job_config_init(&cfg, &p);
    nn_sweep_init(&sw, &cfg, batches, N_BATCHES, 20, 3);
    calibration(&cal, "cpu");
    nn_sweep_add_device(&sw, "cpu", &cal, NULL);
    assert_int_equal(nn_sweep_add_predicted(&sw, &prof), 0);
    for (int i = 0; i < N_BATCHES; i++) {
        snapshot(&s, "cpu", batches[i], 10000);
        nn_sweep_record(&sw, 0, i, &s);
    }
    return &sw;
}

static void test_predicted_gpu(void **state)
{
    static nn_explainer x;
    static ui_text t;
    const nn_sweep *sw = predicted_sweep();
    char *csv = cli_output(sw, CLI_SWEEP_CSV), *text = cli_output(sw, CLI_SWEEP_TEXT), line[200], want[320];
    (void)state;
    assert_int_equal(sw->n_devices, 4);
    assert_int_equal(nn_sweep_gpu_index(sw, -1), 1);
    static const char *const keys[] = { "graph", "eager", "framework" }, *const columns[] = { "gpu gr*", "gpu ea*",
                                                                                            "gpu fw*" };
    int cross[4];
    char lab_line[600];
    ui_sweep_crossover_text(sw, nn_sweep_device_index(sw, "cpu"), lab_line, sizeof lab_line);
    for (int d = 1; d < 4; d++) {
        assert_true(sw->predicted[d]);
        assert_string_equal(nn_gpu_way_key((nn_gpu_way)sw->way[d]), keys[d - 1]);
        cross[d] = nn_sweep_crossover(sw, 0, d);
        assert_true(cross[d] >= 0);
        for (int i = 0; i < N_BATCHES; i++) {    /* every row says predicted, for whom and how */
            snprintf(want, sizeof want, "\ngpu,%d,%.3f,", batches[i], sw->pt[d][i].predicted_us);
            const char *row = strstr(csv, want);
            assert_non_null(row);
            snprintf(want, sizeof want, ",predicted,%s,T4,,%s,0.000,0,profile T4\n", keys[d - 1],
                     i == cross[d] ? "yes" : "");
            assert_true(strstr(row, want) && strstr(row, want) < strchr(row + 1, '\n'));
        }
        nn_sweep_device_label(sw, d, line, sizeof line);
        snprintf(want, sizeof want, "gpu %s (predicted for T4)", keys[d - 1]);
        assert_string_equal(line, want);
        ui_sweep_column_name(sw, d, line, sizeof line);
        assert_string_equal(line, columns[d - 1]);
        /* the CLI's sentence and the lab's say the same words for the same pair */
        char words[160];
        nn_sweep_pair pairs[8];
        int np = nn_sweep_pairs(sw, pairs, 8), k = 0;
        while (k < np && pairs[k].challenger != d)
            k++;
        assert_true(k < np);
        nn_sweep_crossover_words(sw, &pairs[k], words, sizeof words);
        if (cross[d] == 0)
            assert_string_equal(words, "is faster at every batch swept");
        else {
            /* and, where the batch before is within the noise, "(a tie within the noise at ...)" */
            snprintf(want, sizeof want, "overtakes from batch %d on", batches[cross[d]]);
            if (strncmp(words, want, strlen(want)) != 0)
                fail_msg("'%s': wanted '%s'", words, want);
        }
        /* without the CPU's framework way, the GPU's pairs with the first device as before */
        const char *kind = d < 3 ? "nnlab" : "other";
        snprintf(want, sizeof want, "%s: gpu %s (predicted for T4) against cpu nnlab: %s (predicted)\n", kind,
                 keys[d - 1], words);
        assert_non_null(strstr(text, want));
        if (d < 3)
            snprintf(want, sizeof want, "nnlab: %s %s", columns[d - 1], words);
        else
            snprintf(want, sizeof want, "%s against cpu: %s", columns[d - 1], words);
        assert_non_null(strstr(lab_line, want));
    }
    assert_true(cross[3] > cross[1]);            /* the framework's launches: it overtakes later */
    assert_int_equal(ui_sweep_gpu_crossover(sw, nn_sweep_device_index(sw, "cpu")), cross[1]);
    ui_sweep_predicted_note(sw, line, sizeof line);
    assert_non_null(strstr(line, "predicted for T4"));
    /* the Explain panel of a predicted point: the same step, predicted for T4, nothing measured */
    const nn_sweep_point *p = &sw->pt[1][2];
    ui_explain_context ctx = { .label = "gpu graph", .predicted_for = "T4" };
    nn_explainer_reset(&x, &sw->cal[1], NULL);
    assert_int_equal(nn_explainer_update(&x, &sw->base.preset, &p->in), 1);
    assert_true(x.e.predicted_us == p->predicted_us);
    ui_explain_format_in(&x, &ctx, "gpu", batches[2], &p->measured, 72, 30, &t);
    snprintf(want, sizeof want, "gpu graph, batch %d: %s (predicted for T4)", batches[2], nn_regime_name(p->regime));
    assert_string_equal(t.line[0], want);
    snprintf(want, sizeof want, p->predicted_us < 9.95 ? "predicted %.1f us/step for T4" : "predicted %.0f us/step for T4",
             p->predicted_us);
    assert_string_equal(t.line[1], want);
    int measured = 0;
    for (int i = 0; i < t.n; i++)
        measured |= strcmp(t.line[i], "measured  nothing: no GPU here") == 0;
    assert_true(measured);
    free(csv);
    free(text);
}

/* A GPU that is here, beside a profile: each measured GPU point gets the
 * profile's prediction for its own inputs (how the profiles get checked),
 * and the CLI prints it with the measurement; the CPU's points get none. */
static void test_measured_gpu_beside_profile(void **state)
{
    static nn_sweep sw;
    static nn_gpu_profile prof;
    static nn_explanation e;
    char path[512], err[512], want[160];
    nn_calibration cal;
    nn_snapshot s;
    (void)state;
    sw = *measured_sweep();
    snprintf(path, sizeof path, "%s/a100.ini", PROFILES_SRCDIR);
    if (nn_profile_load(path, &prof, err, sizeof err) != 0)
        fail_msg("%s", err);
    nn_sweep_set_profile(&sw, &prof);
    nn_profile_calibration(&prof, &cal);
    for (int i = 0; i < N_BATCHES; i++) {        /* recorded again, as the runner would with the profile set */
        snapshot(&s, "cpu", batches[i], cpu_rate[i]);
        nn_sweep_record(&sw, 0, i, &s);
        snapshot(&s, "gpu", batches[i], gpu_rate[i]);
        nn_sweep_record(&sw, 1, i, &s);
    }
    char *csv = cli_output(&sw, CLI_SWEEP_CSV);
    for (int i = 0; i < N_BATCHES; i++) {
        const nn_sweep_point *g = &sw.pt[1][i];
        assert_true(sw.pt[0][i].profile_us == 0);
        if (g->state != NN_POINT_DONE)
            continue;
        nn_explain(&sw.base.preset, batches[i], &cal, &g->in.opt, &e);
        assert_true(g->profile_us == e.predicted_us && g->profile_us > 0);
        snprintf(want, sizeof want, ",measured,graph,A100,%.3f,", g->profile_us);
        assert_non_null(strstr(csv, want));
    }
    free(csv);
}

/* After a cancel the lab said "frmwk* never" where the CLI said "does not
 * overtake at the batches swept". Both now print nn_sweep_crossover_words:
 * the same words, which say the cancel. */
static void test_cancel_same_words(void **state)
{
    static nn_sweep sw;
    char line[600];
    (void)state;
    sw = *measured_sweep();
    for (int i = 3; i < N_BATCHES; i++)           /* cancelled after batch 4: the GPU never led */
        sw.pt[1][i].state = NN_POINT_CANCELLED;
    sw.pt[1][2].rate = 900;
    sw.cancelled = 1;
    char *text = cli_output(&sw, CLI_SWEEP_TEXT);
    const char *words = "does not overtake at the batches measured before the cancel";
    assert_non_null(strstr(text, "nnlab: gpu graph against cpu nnlab: does not overtake at the batches measured "
                                 "before the cancel\n"));
    ui_sweep_crossover_text(&sw, nn_sweep_device_index(&sw, "cpu"), line, sizeof line);
    assert_non_null(strstr(line, words));
    assert_null(strstr(line, "never"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_crossover),
        cmocka_unit_test(test_same_regimes),
        cmocka_unit_test(test_same_prediction),
        cmocka_unit_test(test_predicted_gpu),
        cmocka_unit_test(test_measured_gpu_beside_profile),
        cmocka_unit_test(test_cancel_same_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

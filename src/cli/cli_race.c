/* src/cli/cli_race.c - `nnlab train --race`: the job on a CPU device and on
 * the GPU, one after the other (fair timing), and with no GPU switch given
 * the GPU twice, eager then graph (nnlab/race.h: the jobs, their labels and
 * the pairs' ratios are the lab's). Each job's time, us/step and way on
 * stderr, then the ratio of every pair and the framework way predicted on
 * top; --json, an array of results, each with its device, way and source. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_common.h"
#include "cli_race.h"
#include "cli_stop.h"
#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/progress.h"
#include "nnlab/race.h"
#include "util.h"

/* One job of the race as it ended. */
typedef struct race_result {
    nn_race_job job;
    nn_job_config cfg;
    nn_snapshot snap;
    char label[48];
    int ran;                     /* started (a cancel leaves the rest not run) */
} race_result;

/* The CPU side: --device when it names a CPU device, else cpu. */
static const char *cpu_side(const nn_job_config *base, const nn_preset *p)
{
    const char *dev = base->device[0] ? base->device : p->device;
    nn_device_status st;
    if (nn_device_status_of(dev, &st) == 0 && !st.gpu)
        return dev;
    return "cpu";
}

/* Both devices' statuses, or exit 2 after one line: no GPU here points to
 * the predicted race, as other unavailable devices do. */
static int race_devices(const nn_job_config *base, const nn_preset *p, nn_device_status st[2])
{
    if (nn_device_status_of(cpu_side(base, p), &st[0]) != 0) {
        fprintf(stderr, "nnlab: --race: %s: %s\n", st[0].name, st[0].why);
        return -1;
    }
    if (nn_device_status_of("gpu", &st[1]) != 0 || !st[1].gpu) {
        fprintf(stderr, "nnlab: --race: no GPU here (%s); --race-predicted [--gpu-profile NAME] races the "
                "CPU against a predicted one\n", st[1].why[0] ? st[1].why : "device gpu: not available");
        return -1;
    }
    return 0;
}

/* Runs one job to its end, quietly; 0, or -1 when it could not start or
 * a stop signal left it stuck (then its last snapshot is kept). */
static int run_one(race_result *r)
{
    char err[NN_ERR_LEN];
    nn_job *job = nn_job_start(&r->cfg, err, sizeof err);
    r->ran = 1;
    if (!job) {
        r->snap.state = NN_JOB_FAILED;
        nn_strlcpy(r->snap.error, err, sizeof r->snap.error);
        return -1;
    }
    for (;;) {
        nn_job_snapshot(job, &r->snap);
        if (nn_job_state_ended(r->snap.state))
            break;
        if (cli_job_abandoned(job))
            return -1;               /* its thread is left; the command exits */
        cli_sleep_ms(20);
    }
    nn_job_wait(job);
    nn_job_snapshot(job, &r->snap);
    nn_job_free(job);
    return 0;
}

/* "gpu eager: done in 00:01 (1s 512us/step): 200 steps: training 0.10 s
 * (...); 512.3 us/step (mean), measured" */
static void print_result(const race_result *r)
{
    char headline[160], steps[160];
    if (r->snap.state == NN_JOB_FAILED) {
        fprintf(stderr, "%s: failed: %s\n", r->label, r->snap.error);
        return;
    }
    nn_format_headline(&r->snap, headline, sizeof headline);
    nn_format_steps_line(&r->snap, steps, sizeof steps);
    fprintf(stderr, "%s: %s: %s; %.1f us/step (mean), way %s, measured\n", r->label, headline, steps,
            r->snap.us_per_step, nn_race_way_word(&r->job, nn_race_way(&r->job, &r->cfg, &r->snap)));
}

/* Every pair's ratio, in the order the jobs ran (nn_race_pair_text). */
static void print_pairs(const race_result *res, int n)
{
    char line[256];
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (res[a].ran && res[b].ran) {
                nn_race_pair_text(res[a].label, &res[a].snap, res[b].label, &res[b].snap, line, sizeof line);
                fprintf(stderr, "  %s\n", line);
            }
}

/* The GPU profile the predicted lanes use where this GPU has no calibration:
 * --gpu-profile's, else the one shipped for the GPU here, else the default.
 * 0, or -1 when none is found. */
static int race_profile(const cli_options *o, nn_gpu_profile *prof)
{
    nn_device_status st;
    if (!o->gpu_profile && nn_device_status_of("gpu", &st) == 0 && st.gpu &&
        nn_profile_for_device(st.description, prof) == 0)
        return 0;
    return cli_gpu_profile(o, 0, prof);
}

/* The fastest GPU job that finished, or -1. */
static int best_gpu_job(const race_result *res, int n)
{
    int best = -1;
    for (int k = 0; k < n; k++)
        if (res[k].job.gpu && res[k].snap.state == NN_JOB_DONE && res[k].snap.us_per_step > 0 &&
            (best < 0 || res[k].snap.us_per_step < res[best].snap.us_per_step))
            best = k;
    return best;
}

/* The race's four lanes: the framework way predicted from the calibrations
 * of the CPU and the GPU (cached, else measured now), nnlab's lanes measured
 * by the jobs. */
static void race_ways(const cli_options *o, const race_result *res, int n, const char *cpu, nn_race_ways *w)
{
    nn_gpu_profile prof;
    int g = best_gpu_job(res, n);
    nn_gpu_way way = g >= 0 ? nn_race_way(&res[g].job, &res[g].cfg, &res[g].snap) : NN_WAY_GRAPH;
    int have_prof = race_profile(o, &prof) == 0;
    cli_ways_predict(o, &res[0].cfg, cpu, 1, have_prof ? &prof : NULL, way, w);
    cli_ways_measure_torch(o, &res[0].cfg, cpu, 1, w);
    for (int k = 0; k < n; k++)
        if (!res[k].job.gpu && res[k].snap.state == NN_JOB_DONE)
            nn_race_lane_measure(&w->lane[NN_LANE_NNLAB_CPU], res[k].snap.us_per_step, 0, "measured");
    if (g >= 0)
        nn_race_lane_measure(&w->lane[NN_LANE_NNLAB_GPU], res[g].snap.us_per_step, 0, "measured");
}

/* A number, or null where it is not valid. */
static void json_value(double v, int valid)
{
    if (valid && isfinite(v))
        printf("%.3f", v);
    else
        printf("null");
}

static void json_result(const race_result *r, int last)
{
    const nn_snapshot *s = &r->snap;
    nn_job_times t;
    nn_job_times_of(s, &t);
    printf("  {\"device\": ");
    cli_json_string(stdout, r->job.device);
    printf(", \"way\": \"%s\", \"source\": \"measured\", \"label\": ",
           nn_race_way_word(&r->job, nn_race_way(&r->job, &r->cfg, s)));
    cli_json_string(stdout, r->label);
    printf(", \"state\": \"%s\", \"steps\": %ld, \"wall_s\": %.6f, \"train_s\": %.6f, \"us_per_step\": ",
           r->ran ? nn_job_state_name(s->state) : "not run", s->step, s->elapsed_s, t.train_s);
    json_value(s->us_per_step, s->timed_steps > 0);
    printf(", \"graph_us\": ");
    json_value(s->graph_us, s->has_graph_us);
    if (s->has_switches)
        printf(", \"switches\": {\"data_on_device\": %s, \"pinned\": %s, \"sync_every_step\": %s, "
               "\"graph\": %s}}", s->data_on_device ? "true" : "false", s->pinned ? "true" : "false",
               s->sync_every_step ? "true" : "false", s->graph ? "true" : "false");
    else
        printf(", \"switches\": null}");
    printf("%s\n", last ? "" : ",");
}

/* {"preset", "jobs": every job measured, "ways": the four lanes,
 * "verdicts": the framework pair's and nnlab's} */
static void print_json(const char *preset, const race_result *res, int n, const nn_race_ways *w)
{
    printf("{\n  \"preset\": ");
    cli_json_string(stdout, preset);
    printf(",\n  \"jobs\": [\n");
    for (int k = 0; k < n; k++)
        json_result(&res[k], k == n - 1);
    printf("  ],\n");
    nn_race_ways_json(stdout, w, res[0].snap.total_steps, 2, 1);
    printf("}\n");
}

/* Runs the planned jobs in turn; returns how many ended, stops at a
 * cancel. A job stuck after a stop signal exits the process. */
static int run_all(race_result *res, int n, int quiet)
{
    for (int k = 0; k < n; k++) {
        if (!quiet)
            fprintf(stderr, "race %d/%d: %s, %s batch %d\n", k + 1, n, res[k].label, res[k].cfg.preset.name,
                    res[k].cfg.batch > 0 ? res[k].cfg.batch : res[k].cfg.preset.batch);
        if (run_one(&res[k]) != 0 && res[k].snap.state != NN_JOB_FAILED) {
            fprintf(stderr, "nnlab: %s: the job did not end within %d s of its cancel; exiting without it\n",
                    strsignal(cli_stop_signal()), CLI_GRACE_MS / 1000);
            cli_exit_abandoned();
        }
        if (res[k].snap.state == NN_JOB_CANCELLED)
            return k + 1;
    }
    return n;
}

/* The jobs of the race: 0, or -1 after one line (a job too large). */
static int plan(const cli_options *o, const nn_job_config *base, const nn_device_status st[2], race_result *res,
                int *n)
{
    const nn_device_status *devices[2] = { &st[0], &st[1] };
    nn_race_job jobs[NN_RACE_MAX_JOBS];
    *n = nn_race_plan(devices, 2, o->way_switch_given, jobs);
    for (int k = 0; k < *n; k++) {
        memset(&res[k], 0, sizeof res[k]);
        res[k].job = jobs[k];
        nn_race_job_config(&jobs[k], base, &res[k].cfg);
        nn_race_label(&jobs[k], &res[k].cfg, NULL, res[k].label, sizeof res[k].label);
        if (cli_check_sizes(o->batch > 0 ? "--batch" : NULL, o->preset, &res[k].cfg) != 0)
            return -1;
    }
    return 0;
}

int cli_race(const cli_options *o, const nn_preset *p, const nn_job_config *base)
{
    nn_device_status st[2];
    race_result res[NN_RACE_MAX_JOBS];
    nn_race_ways w;
    int n;
    if (race_devices(base, p, st) != 0 || plan(o, base, st, res, &n) != 0)
        return CLI_EXIT_USAGE;
    cli_catch_stop_signals();
    int ran = run_all(res, n, o->quiet);
    fprintf(stderr, "race of %s, one after the other:\n", nn_safe(p->name));
    for (int k = 0; k < ran; k++)
        print_result(&res[k]);
    print_pairs(res, ran);
    race_ways(o, res, ran, st[0].name, &w);
    cli_ways_print(&w, p->name, res[0].snap.total_steps);
    if (o->json)
        print_json(p->name, res, n, &w);
    for (int k = 0; k < ran; k++)
        if (res[k].snap.state == NN_JOB_CANCELLED)
            return cli_stop_signal() ? CLI_EXIT_SIGNAL + cli_stop_signal() : CLI_EXIT_CANCELLED;
    for (int k = 0; k < ran; k++)
        if (res[k].snap.state != NN_JOB_DONE)
            return EXIT_FAILURE;
    return 0;
}

/* src/cli/cli_train_json.c - the result nnlab train and nnlab bench print on
 * stdout with --json (cli_train_json.h): one object, its fields in
 * man/nnlab.1's order. Moved out of cli_train.c, which runs and follows the
 * job. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli_common.h"
#include "cli_ranks.h"
#include "cli_train_json.h"
#include "nnlab/engine.h"
#include "nnlab/export.h"
#include "nnlab/observe.h"
#include "nnlab/progress.h"
#include "nnlab/race_ways.h"

/* The convolutions a job lists at most (LeNet has 6, with 3 directions each). */
#define CLI_CONV_MAX 64

/* bench reports the median step, unless steps were not waited for one by
 * one (a GPU without --sync-every-step): then a step's own time is only the
 * time to issue it, and the mean, which includes every wait, is the rate. */
int cli_bench_uses_median(const nn_snapshot *s)
{
    return !s->steps_async;
}

static const char *json_bool(int v)
{
    return v ? "true" : "false";
}

/* "name_us": value or null, for a set of phase times with validity bits */
static void json_phases(const char *key, const double *us, unsigned valid, int last)
{
    printf("  \"%s\": {", key);
    for (int p = 0; p < NN_PHASE_COUNT; p++) {
        printf("%s\"%s_us\": ", p ? ", " : "", nn_step_part_key(p));
        if (valid & (1u << p))
            printf("%.3f", us[p]);
        else
            printf("null");
    }
    printf(last ? "}\n" : "},\n");
}

/* The GPU part of the result: switches as applied, the per-step accounting
 * counted by the backend, and how the phases were timed. null where a field
 * does not apply (a CPU device). */
static void print_json_gpu(const nn_snapshot *s)
{
    printf("  \"phase_clock\": \"%s\",\n", s->phase_device_clock ? "device" : "host");
    /* a graph job issues forward, backward and optimizer as one launch */
    unsigned host_valid = (1u << NN_PHASE_COUNT) - 1;
    if (s->has_graph_us)
        host_valid &= ~((1u << NN_PHASE_FORWARD) | (1u << NN_PHASE_BACKWARD) | (1u << NN_PHASE_OPTIMIZER));
    json_phases("host_phases", s->host_phase_us, host_valid, 0);
    printf("  \"graph_us\": ");
    if (s->has_graph_us)
        printf("%.3f,\n", s->graph_us);
    else
        printf("null,\n");
    if (s->has_switches)
        printf("  \"switches\": {\"data_on_device\": %s, \"pinned\": %s, \"sync_every_step\": %s, "
               "\"graph\": %s, \"tf32\": %s},\n", json_bool(s->data_on_device), json_bool(s->pinned),
               json_bool(s->sync_every_step), json_bool(s->graph), json_bool(s->tf32));
    else
        printf("  \"switches\": {\"data_on_device\": null, \"pinned\": null, \"sync_every_step\": %s, "
               "\"graph\": null, \"tf32\": null},\n", json_bool(s->sync_every_step));
    if (s->has_counters && s->timed_steps > 0) {
        const nn_step_counters *c = &s->per_step;
        printf("  \"per_step\": {\"launches\": %.4g, \"kernels\": %.4g, \"library_calls\": %.4g, "
               "\"graph_launches\": %.4g, \"graph_nodes\": %.4g, \"h2d_copies\": %.4g, "
               "\"h2d_bytes\": %.6g, \"d2h_copies\": %.4g, \"d2h_bytes\": %.6g, \"syncs\": %.4g},\n",
               c->launches, c->kernels, c->library_calls, c->graph_launches, c->graph_nodes,
               c->h2d_copies, c->h2d_bytes, c->d2h_copies, c->d2h_bytes, c->syncs);
    } else {
        printf("  \"per_step\": null,\n");
    }
    printf("  \"note\": ");
    cli_json_string(stdout, s->note);
    printf(",\n");
}

/* "history": one row per epoch (nn_json_history), from everything the job
 * published; [] when it could not be copied (out of memory). */
static void print_json_history(nn_job *job, const nn_snapshot *s)
{
    nn_loss_point *pts = malloc((size_t)(s->n_loss_points + 1) * sizeof *pts);
    nn_epoch_result *eps = malloc((size_t)(s->n_epoch_results + 1) * sizeof *eps);
    long n_pts = pts ? nn_job_loss_points(job, 0, pts, s->n_loss_points) : 0;
    int n_eps = eps ? nn_job_epoch_results(job, 0, eps, s->n_epoch_results) : 0;
    printf("  \"history\": ");
    nn_json_history(stdout, pts, pts && eps ? n_pts : 0, eps, pts && eps ? n_eps : 0, 4);
    printf(",\n");
    free(pts);
    free(eps);
}

/* "conv_algorithms": what the device chose for each convolution (a GPU),
 * left out when there are none. */
static void print_json_conv(nn_job *job)
{
    nn_conv_algorithm_info a[CLI_CONV_MAX];
    int n = nn_job_conv_algorithms(job, a, CLI_CONV_MAX);
    cli_conv_algorithms_json(a, n < CLI_CONV_MAX ? n : CLI_CONV_MAX);
}

/* The threads at the end and why; a CPU device's processor and OpenBLAS. */
static void print_json_cpu(const nn_snapshot *s)
{
    if (s->threads_now > 0) {   /* the threads at the end, and why (revised as it ran) */
        printf("  \"adam_fused_layers\": %d,\n", s->adam_fused_layers);
        printf("  \"threads_now\": %d, \"threads_why\": ", s->threads_now);
        cli_json_string(stdout, s->threads_why);
        printf(",\n");
    }
    if (!s->has_switches) {      /* a CPU device: the processor and OpenBLAS it ran on */
        printf("  ");
        cli_cpu_facts_json(0);
        printf(",\n");
    }
}

void cli_train_json(nn_job *job, const nn_job_config *cfg, const nn_snapshot *s, int bench,
                    const cli_torch *torch, const nn_race_ways *ways)
{
    nn_job_times t;
    nn_job_times_of(s, &t);
    const nn_epoch_result *e = s->n_epoch_results > 0 ? &s->last_epoch : NULL;
    printf("{\n  \"command\": \"%s\",\n  \"preset\": ", bench ? "bench" : "train");
    cli_json_string(stdout, cfg->preset.name);
    printf(",\n  \"device\": ");
    cli_json_string(stdout, s->device);
    printf(",\n  \"state\": \"%s\",\n", nn_job_state_name(s->state));
    /* where the loss became NaN or inf: "at" that step (exact) or "by" it */
    if (s->state == NN_JOB_DIVERGED)
        printf("  \"diverged\": {\"step\": %ld, \"exact\": %s},\n", s->diverged_step,
               json_bool(s->diverged_exact));
    else
        printf("  \"diverged\": null,\n");
    printf("  \"batch\": %d,\n  \"epochs\": %d,\n  \"steps\": %ld,\n", s->batch, s->epochs, s->step);
    cli_ranks_json(s);
    printf("  \"data\": {\"name\": ");
    cli_json_string(stdout, s->data_name);
    printf(", \"real\": %s, \"description\": ", s->data_synthetic ? "false" : "true");
    cli_json_string(stdout, s->data_desc);
    /* the threads it ran with (the title's count), then those asked (0: the cores free at the start) */
    printf("},\n  \"seed\": %llu,\n  \"threads\": %d, \"threads_asked\": %d,\n", (unsigned long long)cfg->seed,
           s->threads_now > 0 ? s->threads_now : s->threads, s->threads);
    cli_json_number("lr", cfg->lr ? cfg->lr : cfg->preset.lr, 0);
    cli_json_number("params", (double)s->n_params, 0);
    cli_json_number("prepare_s", s->prepare_s, 0);
    cli_json_number("wall_s", s->elapsed_s, 0);
    cli_json_number("train_s", t.train_s, 0);
    cli_json_number("val_s", t.val_s, 0);
    cli_json_number("per_step_s", t.has_per_step ? t.per_step_s : NAN, 0);
    cli_json_number("timed_steps", (double)s->timed_steps, 0);
    cli_json_number("us_per_step", bench && cli_bench_uses_median(s) ? s->us_per_step_median : s->us_per_step, 0);
    printf("  \"us_per_step_stat\": \"%s\",\n", bench && cli_bench_uses_median(s) ? "median" : "mean");
    cli_json_number("us_per_step_mean", s->us_per_step, 0);
    cli_json_number("samples_per_s", s->samples_per_s, 0);
    /* nine digits: a float's every bit, so that two runs compare exactly */
    cli_json_float("train_loss", s->n_loss_points > 0 ? s->last_loss : NAN, 0);
    cli_json_number("val_loss", e ? e->val_loss : NAN, 0);
    cli_json_number("val_accuracy", e && e->has_accuracy ? e->val_accuracy : NAN, 0);
    print_json_history(job, s);
    print_json_cpu(s);
    print_json_gpu(s);
    printf("  \"deterministic\": %s,\n", json_bool(cfg->deterministic));
    print_json_conv(job);
    cli_torch_json(torch);       /* bench --with-pytorch only */
    if (ways)                    /* --race-predicted: every lane and both verdicts */
        nn_race_ways_json(stdout, ways, s->total_steps, 2, 0);
    json_phases("phases", s->phase_us, s->phase_valid, 1);   /* last: null where not measured */
    printf("}\n");
}


/* src/cli/cli_train.c - nnlab train and nnlab bench: start a job, poll its
 * snapshot, print progress on stderr and the result (JSON) on stdout. The
 * same engine API as the lab. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_common.h"
#include "cli_ranks.h"
#include "cli_race.h"
#include "cli_stop.h"
#include "cli_torch.h"
#include "cli_train_json.h"
#include "nnlab/device.h"
#include "nnlab/divergence.h"
#include "nnlab/engine.h"
#include "nnlab/export.h"
#include "nnlab/export_svg.h"
#include "nnlab/predicted.h"
#include "nnlab/observe.h"
#include "nnlab/progress.h"
#include "util.h"

/* The exit status of a job stopped because its loss became NaN or inf
 * (man/nnlab.1, EXIT STATUS): not a failure of the program (1), nor a usage
 * error (2), but a result a script must not take for a trained model. */
enum { CLI_EXIT_DIVERGED = CLI_RANKS_EXIT_DIVERGED };

/* ---- progress and results ------------------------------------------------------ */

/* "  00:18<00:12  18s 28ms/step": the job's times when epoch e ended (tqdm's
 * elapsed<remaining, then Keras's), from the library's one rule. */
static void print_epoch_times(const nn_epoch_result *e, long total_steps)
{
    nn_job_times t;
    char tq[48], keras[48];
    nn_job_times_of_epoch(e, total_steps, &t);
    nn_format_elapsed_remaining(&t, tq, sizeof tq);
    nn_format_keras(&t, keras, sizeof keras);
    fprintf(stderr, "  %s  %s\n", tq, keras);
}

/* The predicted GPU of --race-predicted where it would be when epoch e
 * ended: "  gpu step 1875/1875, ... (predicted for T4)". */
static void print_race_line(const nn_predicted_gpu *race, const nn_epoch_result *e, long total_steps)
{
    nn_predicted_progress pp;
    char line[NN_TEXT_LEN];
    if (!race)
        return;
    nn_predicted_progress_at(race, e->time_s, total_steps, &pp);
    nn_predicted_status(race, &pp, line, sizeof line);
    fprintf(stderr, "  gpu %s\n", line);
}

static void print_new_progress(nn_job *job, long total_steps, long *seen_points, int *seen_epochs, int quiet,
                               const nn_predicted_gpu *race)
{
    nn_loss_point pts[64];
    nn_epoch_result ep[16];
    long n;
    int m;
    while ((n = nn_job_loss_points(job, *seen_points, pts, 64)) > 0) {
        for (long i = 0; i < n && !quiet; i++)   /* the write-ups' format */
            fprintf(stderr, "[%d, %5ld] loss: %.3f\n", pts[i].epoch, pts[i].step_in_epoch, pts[i].loss);
        *seen_points += n;
    }
    while ((m = nn_job_epoch_results(job, *seen_epochs, ep, 16)) > 0) {
        for (int i = 0; i < m && !quiet; i++) {
            if (ep[i].has_accuracy)
                fprintf(stderr, "[%d] validation loss: %.4f  accuracy: %.4f", ep[i].epoch,
                        ep[i].val_loss, ep[i].val_accuracy);
            else
                fprintf(stderr, "[%d] validation loss: %.4f", ep[i].epoch, ep[i].val_loss);
            print_epoch_times(&ep[i], total_steps);
            print_race_line(race, &ep[i], total_steps);
        }
        *seen_epochs += m;
    }
}

/* " = copy 12.5 + forward 80.2 + ...": the parts of the measured step */
static void print_parts(const nn_step_measure *m)
{
    int first = 1;
    for (int p = 0; p < NN_STEP_PARTS; p++)
        if (m->part_valid & (1u << p)) {
            fprintf(stderr, "%s%s %.1f", first ? " = " : " + ", nn_step_part_label(m, p), m->part_us[p]);
            first = 0;
        }
}

/* The step: bench's median (its figure) beside the mean, whose parts add up
 * to it; the device's own phase times apart, as they are not parts. */
static void print_step(const nn_snapshot *s, int bench)
{
    nn_step_measure m;
    nn_measure_step(s, &m);
    fprintf(stderr, "  ");
    if (bench && cli_bench_uses_median(s))
        fprintf(stderr, "%.1f us/step (median of %ld); ", s->us_per_step_median, s->timed_steps);
    fprintf(stderr, "%.1f us/step (%s)", m.step_us, NN_STEP_STAT);
    print_parts(&m);
    fprintf(stderr, "\n");
    if (m.adam_fused_layers > 0)
        fprintf(stderr, "  backward+adam: Adam's update of %d linear layer%s ran in %s weight "
                "gradient's pass; optimizer: the other parameters'\n", m.adam_fused_layers,
                m.adam_fused_layers == 1 ? "" : "s", m.adam_fused_layers == 1 ? "its" : "each one's");
    if (s->phase_device_clock) {
        fprintf(stderr, "  on the device's clock:");
        for (int p = NN_PHASE_COPY; p <= NN_PHASE_OPTIMIZER; p++)
            if (s->phase_valid & (1u << p))
                fprintf(stderr, " %s %.1f", nn_phase_name(p), s->phase_us[p]);
        if (s->has_graph_us)
            fprintf(stderr, " graph %.1f", s->graph_us);
        fprintf(stderr, " (sync is the host waiting for it)\n");
    }
}

static void print_summary(const nn_snapshot *s, int bench)
{
    const char *what = s->state != NN_JOB_DONE ? "stopped" : bench ? "bench" : "trained";
    char headline[160], steps[160];
    nn_format_headline(s, headline, sizeof headline);   /* its time first, as the lab's */
    nn_format_steps_line(s, steps, sizeof steps);       /* training apart from validation */
    if (s->ranks > 1)
        fprintf(stderr, "%s: %s on %d ranks of %s, batch %d per rank (global batch %ld): %s\n",
                headline, what, s->ranks, s->device, s->batch, s->global_batch, steps);
    else
        fprintf(stderr, "%s: %s on %s, batch %d: %s\n", headline, what, s->device, s->batch, steps);
    cli_ranks_text(s);
    print_step(s, bench);
    if (s->has_counters && s->timed_steps > 0)
        fprintf(stderr, "  per step: %.1f launches, %.1f copies to the device (%.0f bytes), "
                "%.1f back, %.1f waits\n", s->per_step.launches, s->per_step.h2d_copies,
                s->per_step.h2d_bytes, s->per_step.d2h_copies, s->per_step.syncs);
    if (s->note[0])
        fprintf(stderr, "  note: %s\n", s->note);
    if (s->n_epoch_results > 0 && s->last_epoch.has_accuracy)
        fprintf(stderr, "  validation: loss %.4f, accuracy %.4f\n", s->last_epoch.val_loss,
                s->last_epoch.val_accuracy);
    else if (s->n_epoch_results > 0)
        fprintf(stderr, "  validation: loss %.4f\n", s->last_epoch.val_loss);
}

/* "  diverged at step 2: loss nan - lower the learning rate", or the same
 * for a loss blowing up while still finite (nnlab/divergence.h: the lab's
 * banner says the same); nothing for a run that kept its footing. */
static void print_divergence(nn_job *job, const nn_snapshot *s)
{
    nn_loss_point *pts = malloc((size_t)(s->n_loss_points + 1) * sizeof *pts);
    long n = pts ? nn_job_loss_points(job, 0, pts, s->n_loss_points) : 0;
    nn_divergence d;
    char text[NN_TEXT_LEN];
    if (nn_divergence_of(s, pts, n, &d)) {
        nn_divergence_text(&d, text, sizeof text);
        fprintf(stderr, "  %s%s\n", d.blowing_up ? "warning: " : "", text);
    }
    free(pts);
}

/* ---- a predicted GPU beside the CPU, and the SVG ------------------------------------- */

/* Said where a GPU was asked for and is not here: the predicted race. */
#define CLI_RACE_HINT "; without a GPU, --race-predicted [--gpu-profile NAME] races the CPU against a predicted one"

/* --race-predicted: the job runs on a device that is here and a GPU not here
 * runs beside it as --gpu-profile predicts (nnlab/predicted.h). */
static int predicted_race(const cli_options *o, const nn_job_config *cfg, nn_predicted_gpu *race,
                          nn_gpu_profile *prof_out)
{
    nn_gpu_profile prof;
    const char *dev = cfg->device[0] ? cfg->device : cfg->preset.device;
    nn_device_status st;
    if (nn_device_status_of(dev, &st) == 0 && st.gpu) {
        fprintf(stderr, "nnlab: --race-predicted: the job runs on %s; race a CPU device (--device cpu) "
                "against the predicted GPU\n", dev);
        return -1;
    }
    if (cli_gpu_profile(o, 1, &prof) != 0)
        return -1;
    if (nn_predicted_gpu_init(race, cfg, &prof) != 0) {
        fprintf(stderr, "nnlab: --race-predicted: the model gives no step for %s\n", prof.name);
        return -1;
    }
    *prof_out = prof;
    return 0;
}

/* "gpu: predicted for T4: done in 0.41 s (220us/step), nnlab graph", then
 * the race of ways: the job's measured step beside the three predicted
 * lanes, and the two verdicts (the framework pair's first). */
static void print_race_end(const nn_predicted_gpu *race, const nn_snapshot *s, const char *preset,
                           nn_race_ways *ways)
{
    nn_predicted_progress pp;
    char line[NN_TEXT_LEN];
    nn_predicted_progress_at(race, INFINITY, s->total_steps, &pp);
    nn_predicted_status(race, &pp, line, sizeof line);
    fprintf(stderr, "gpu: %s\n", line);
    if (s->state != NN_JOB_DONE)
        return;
    nn_race_lane_measure(&ways->lane[NN_LANE_NNLAB_CPU], s->us_per_step, 0, "measured");
    cli_ways_print(ways, preset, s->total_steps);
}

/* --svg FILE: the job's loss and accuracy curves, a race of ways' lanes in
 * the accuracy's place (nnlab/export_svg.h). */
static int write_svg(nn_job *job, const nn_job_config *cfg, const nn_snapshot *s, const nn_race_ways *ways,
                     const char *path)
{
    nn_loss_point *pts = malloc((size_t)(s->n_loss_points + 1) * sizeof *pts);
    nn_epoch_result *eps = malloc((size_t)(s->n_epoch_results + 1) * sizeof *eps);
    char err[NN_ERR_LEN];
    int rc = -1;
    if (pts && eps) {
        long n_pts = nn_job_loss_points(job, 0, pts, s->n_loss_points);
        int n_eps = nn_job_epoch_results(job, 0, eps, s->n_epoch_results);
        nn_export_run run = { cfg->preset.name, 1, 0, { { s, pts, n_pts, eps, n_eps, s->threads, NULL } }, ways,
                              s->total_steps };
        rc = nn_export_svg_file(path, &run, cfg->lr > 0 ? cfg->lr : cfg->preset.lr, NULL, 0, NULL, err,
                                sizeof err);
        if (rc != 0)
            fprintf(stderr, "nnlab: --svg: %s\n", err);
    } else {
        fprintf(stderr, "nnlab: --svg: out of memory\n");
    }
    free(pts);
    free(eps);
    return rc;
}

/* ---- commands ----------------------------------------------------------------------- */

/* A job cancelled while it still prepared (loaded its data, built its
 * network) has planned no steps: nothing to announce or sum up ("0 steps;
 * data: " with no data said nothing true). */
static int cancelled_preparing(const nn_snapshot *s)
{
    return s->state == NN_JOB_CANCELLED && s->total_steps == 0;
}

/* Polls the job until it ends, printing its progress; a stop signal
 * cancels it (cli_stop.h). 0, or 1 when the job did not end within the
 * grace after the signal: its thread is left running and s is the last
 * snapshot it published. */
static int follow(nn_job *job, const nn_preset *p, int bench, int quiet, int lines,
                  const nn_predicted_gpu *race, nn_snapshot *out)
{
    nn_snapshot s;
    long seen_points = 0;
    int seen_epochs = 0, announced = 0;
    double last_line = 0.0;
    for (;;) {
        nn_job_snapshot(job, &s);
        if (lines && !nn_job_state_ended(s.state))
            cli_progress_line(&s, &last_line);
        if (!announced && s.state != NN_JOB_PREPARING && s.state != NN_JOB_FAILED && !cancelled_preparing(&s)) {
            if (!quiet && s.ranks > 1)
                fprintf(stderr, "%s: %s on %d ranks of %s, batch %d per rank (global batch %ld), "
                        "%ld steps; data: %s\n", nn_safe(p->name), bench ? "bench" : "training",
                        s.ranks, s.device, s.batch, s.global_batch, s.total_steps,
                        nn_safe(s.data_desc));
            else if (!quiet)
                fprintf(stderr, "%s: %s on %s, batch %d, %ld steps; data: %s\n", nn_safe(p->name),
                        bench ? "bench" : "training", s.device, s.batch, s.total_steps,
                        nn_safe(s.data_desc));
            announced = 1;
        }
        print_new_progress(job, s.total_steps, &seen_points, &seen_epochs, quiet, race);
        if (nn_job_state_ended(s.state))
            break;
        if (cli_job_abandoned(job)) {
            *out = s;
            return 1;
        }
        cli_sleep_ms(20);
    }
    nn_job_wait(job);
    nn_job_snapshot(job, &s);
    print_new_progress(job, s.total_steps, &seen_points, &seen_epochs, quiet, race);
    if (lines)
        cli_progress_line(&s, &last_line);
    *out = s;
    return 0;
}

/* The job did not end after a stop signal: what it measured so far, the
 * JSON asked for, a one-line reason, and the signal's exit status, without
 * waiting for its thread (nn_job_free would). */
static void leave_stuck_job(nn_job *job, const nn_job_config *cfg, const nn_snapshot *s, int bench, int json,
                            const cli_torch *torch)
{
    if (json)
        cli_train_json(job, cfg, s, bench, torch, NULL);
    fprintf(stderr, "nnlab: %s: the job did not end within %d s of its cancel (%s, %ld steps); exiting "
            "without it\n", strsignal(cli_stop_signal()), CLI_GRACE_MS / 1000, nn_job_state_name(s->state),
            s->step);
    cli_exit_abandoned();
}

/* --race runs several jobs: an option about one job's output is refused. */
static int race_options_ok(const cli_options *o)
{
    const char *other = o->race_predicted ? "--race-predicted" : o->svg ? "--svg" : NULL;
    if (other)
        fprintf(stderr, "nnlab: --race: not with %s\n", other);
    return other == NULL;
}

/* The exit status of a job that ended, with its one line when it diverged
 * or was cancelled. */
static int end_status(const nn_snapshot *s)
{
    if (s->state == NN_JOB_DIVERGED) {
        fprintf(stderr, "nnlab: %s\n", s->error);
        return CLI_EXIT_DIVERGED;
    }
    if (s->state != NN_JOB_CANCELLED)
        return 0;
    if (cancelled_preparing(s))
        fprintf(stderr, "nnlab: cancelled while preparing the job (loading its data), before its first step\n");
    else
        fprintf(stderr, "nnlab: cancelled after %ld steps\n", s->step);
    return cli_stop_signal() ? CLI_EXIT_SIGNAL + cli_stop_signal() : CLI_EXIT_CANCELLED;
}

/* The predicted lanes a train run races (--race-predicted), built before its
 * job starts: nothing measured now is raced. */
typedef struct race_lanes {
    int on;
    nn_predicted_gpu gpu;
    nn_gpu_profile prof;
    nn_race_ways ways;
} race_lanes;

/* What a job that ended prints: its summary, divergence and the race's end
 * (which measures r's CPU lane: the job's step),
 * PyTorch's line beside it, the SVG and the JSON. Returns the exit status. */
static int report_job(nn_job *job, const cli_options *o, const nn_job_config *cfg, const nn_preset *p,
                      const nn_snapshot *s, int bench, race_lanes *r, const cli_torch *torch)
{
    const nn_race_ways *ways = r->on && s->state == NN_JOB_DONE ? &r->ways : NULL;
    if ((!o->quiet || s->state == NN_JOB_DONE) && !cancelled_preparing(s)) {
        print_summary(s, bench);
        print_divergence(job, s);
        if (r->on)
            print_race_end(&r->gpu, s, p->name, &r->ways);
    }
    if (s->state == NN_JOB_DONE)
        cli_torch_text(torch, cli_bench_uses_median(s) ? s->us_per_step_median : s->us_per_step,
                       cli_bench_uses_median(s) ? "median" : "mean", s->timed_steps,
                       s->threads_now > 0 ? s->threads_now : s->threads);
    if (o->svg && write_svg(job, cfg, s, ways, o->svg) != 0)
        return EXIT_FAILURE;
    if (o->json)
        cli_train_json(job, cfg, s, bench, torch, ways);
    return end_status(s);
}

static int run_job(int argc, char **argv, enum cli_command command)
{
    cli_options o;
    nn_preset p;
    nn_job_config cfg;
    nn_snapshot s;
    cli_torch torch = { 0 };
    race_lanes r = { 0 };
    char err[NN_ERR_LEN];
    int bench = command == CLI_BENCH;
    int rc = cli_parse(command, argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : CLI_EXIT_USAGE;
    if (cli_load_preset(o.preset, &p) != 0 || cli_job_config(&o, &p, &cfg) != 0)
        return CLI_EXIT_USAGE;
    nn_ranks_info ranks;         /* mpirun started, or this process joined (cli_ranks.c) */
    if (o.ranks > 1 && !nn_ranks_launched()) {
        /* the launcher: all N ranks hold their share on this host, checked
         * before mpirun starts them (else the kernel's OOM killer ends one) */
        nn_job_config all = cfg;
        all.ranks = (int)o.ranks;
        if (cli_check_sizes(o.batch > 0 ? "--batch" : NULL, o.preset, &all) != 0)
            return CLI_EXIT_USAGE;
    }
    if (cli_ranks_start(argc, argv, &o, cfg.device[0] ? cfg.device : p.device, &ranks, &rc))
        return rc;
    if (o.race)                  /* the job on several devices and ways (cli_race.c) */
        return race_options_ok(&o) ? cli_race(&o, &p, &cfg) : CLI_EXIT_USAGE;
    /* asked here too, so that a device that cannot run is a usage error (2)
     * before anything starts; the job asks again on its own thread */
    if (nn_device_require(cfg.device[0] ? cfg.device : p.device, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s%s\n", err, bench ? "" : CLI_RACE_HINT);
        return CLI_EXIT_USAGE;
    }
    r.on = o.race_predicted && !bench;
    if (r.on && predicted_race(&o, &cfg, &r.gpu, &r.prof) != 0)
        return CLI_EXIT_USAGE;
    if (cli_check_sizes(o.batch > 0 ? "--batch" : NULL, o.preset, &cfg) != 0)
        return CLI_EXIT_USAGE;
    cli_say_prediction(&cfg, o.quiet);
    if (r.on) {
        const char *cpu = cfg.device[0] ? cfg.device : p.device;
        cli_ways_predict(&o, &cfg, cpu, 0, &r.prof, (nn_gpu_way)r.gpu.way, &r.ways);
        cli_ways_measure_torch(&o, &cfg, cpu, 0, &r.ways);
    }
    /* PyTorch first: a refusal (no torch, a preset it cannot build) comes
     * before nnlab's job, and the two never share the cores */
    if (o.with_pytorch && (rc = cli_torch_measure(&o, &cfg, &torch)) != 0)
        return rc;
    nn_job *job = nn_job_start(&cfg, err, sizeof err);
    if (!job) {
        fprintf(stderr, "nnlab: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    cli_catch_stop_signals();
    if (follow(job, &p, bench, o.quiet, o.progress_lines, r.on ? &r.gpu : NULL, &s) != 0)
        leave_stuck_job(job, &cfg, &s, bench, o.json, &torch);
    if (cli_ranks_end(job, &o, &s, &ranks, &rc)) {
        /* a failure, the parameters saved, or a rank above 0: said */
    } else if (s.state == NN_JOB_FAILED) {
        fprintf(stderr, "nnlab: %s\n", s.error);
        rc = EXIT_FAILURE;
    } else {
        rc = report_job(job, &o, &cfg, &p, &s, bench, &r, &torch);
    }
    nn_job_free(job);
    return rc;
}

int nn_cli_train(int argc, char **argv)
{
    return run_job(argc, argv, CLI_TRAIN);
}

int nn_cli_bench(int argc, char **argv)
{
    return run_job(argc, argv, CLI_BENCH);
}

/* src/cli/cli_lesson.c - `nnlab lesson [NAME]`: a guided lesson headless
 * (nnlab/lesson.h). Each step's job runs through the CLI's own paths: a
 * race predicts its lanes as `train --race-predicted` does (cli_ways.c:
 * the calibrations cached or measured, PyTorch where it imports and the
 * step asks) and measures nnlab's CPU lane (and with a GPU here its GPU
 * lane) with a short training job; a
 * sweep is `nnlab sweep`'s (cli_sweep.c); Explain prices the GPU's step as
 * `nnlab explain` does, and a ranks step N ranks' as `explain --ranks`. What each step found, the answer it expects and
 * the handout are the report's (nnlab/lesson_report.h), so the lab and the
 * CLI compute every figure in one place. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_common.h"
#include "cli_race.h"
#include "cli_stop.h"
#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/lesson.h"
#include "nnlab/lesson_report.h"
#include "nnlab/ranks_sweep.h"
#include "util.h"

#define LESSON_MAX_LISTED 64
#define LESSON_MAX_POINTS 1024     /* a race's CPU job's loss points kept for its chart */

/* Everything a lesson's run holds: hundreds of KB (the lesson, a sweep, the
 * results), so on the heap (cli_run_on_heap). */
typedef struct lesson_command {
    nn_lesson l;
    nn_lesson_result r[NN_LESSON_MAX_STEPS];
    char svg_name[NN_LESSON_MAX_STEPS][NN_NAME_LEN + 16];
    const char *svg[NN_LESSON_MAX_STEPS];
    nn_sweep sw;
    nn_race_ways w;
    nn_preset p;
    nn_job_config cfg;
    nn_gpu_profile prof;
    nn_calibration cal;
    nn_snapshot snap;            /* the last race's CPU job, and its loss points: its chart */
    nn_loss_point pts[LESSON_MAX_POINTS];
    long n_pts;
    int gpu_here;
    char answers[NN_LESSON_MAX_STEPS + 1];   /* one key a question, '-' none */
} lesson_command;

/* ---- the list, the answers --------------------------------------------------------------- */

static int print_list(void)
{
    nn_lesson_entry *list = calloc(LESSON_MAX_LISTED, sizeof *list);
    if (!list) {
        fprintf(stderr, "nnlab: out of memory\n");
        return EXIT_FAILURE;
    }
    int n = nn_lesson_list(list, LESSON_MAX_LISTED);
    for (int i = 0; i < n; i++) {
        printf("%-20s %s%s\n", nn_safe(list[i].name), list[i].error[0] ? "BROKEN: " : "",
               nn_safe(list[i].error[0] ? list[i].error : list[i].title));
        printf("%-20s %s%s%s\n", "", nn_safe(list[i].path), list[i].user ? " (yours)" : "",
               list[i].shadowed ? " (hidden by your lesson of the same name)" : "");
    }
    if (n == 0)
        printf("no lessons found (looked in your folder and %s)\n", nn_safe(nn_lesson_system_dir()));
    free(list);
    return 0;
}

/* --answers KEYS: one key a question ('-': none), each one of its
 * question's keys; fewer keys leave the rest unanswered. 0, or -1 after
 * one line naming the question. */
static int check_answers(const char *given, const nn_lesson *l, char *out)
{
    size_t at = 0, n = given ? strlen(given) : 0;
    for (int k = 0; k < l->n_steps; k++) {
        const nn_lesson_step *s = &l->step[k];
        if (!s->question[0])
            continue;
        char key = at < n ? (char)tolower((unsigned char)given[at]) : '-';
        if (key != '-' && !strcmp(nn_lesson_answer_label(s, key), "?")) {
            fprintf(stderr, "nnlab: --answers %s: '%c' for question %zu ([%s]): not one of its keys (", nn_safe(given),
                    given[at], at + 1, s->section);
            for (int a = 0; a < s->n_answers; a++)
                fprintf(stderr, "%s%c", a ? ", " : "", s->answers[a].key);
            fprintf(stderr, ", or - for none)\n");
            return -1;
        }
        out[at++] = key;
    }
    out[at] = '\0';
    if (n > at) {
        fprintf(stderr, "nnlab: --answers %s: %zu keys, but the lesson asks %zu questions\n", nn_safe(given), n, at);
        return -1;
    }
    return 0;
}

/* The answer given to step k's question. */
static char answer_of(const lesson_command *c, int k)
{
    int q = 0;
    for (int i = 0; i < k; i++)
        q += c->l.step[i].question[0] != '\0';
    return c->answers[q] ? c->answers[q] : '-';
}

/* ---- a step's job ---------------------------------------------------------------------------- */

/* The step's preset and job (the CPU's; its batch the step's), and the
 * step's options for the CLI's helpers. 0, or -1 (said). */
static int step_job(const cli_options *o, lesson_command *c, const nn_lesson_step *s, cli_options *so)
{
    *so = *o;
    so->preset = s->preset;
    so->device = "cpu";
    so->quiet = 1;
    if (cli_load_preset(s->preset, &c->p) != 0 || cli_job_config(so, &c->p, &c->cfg) != 0)
        return -1;
    c->cfg.batch = nn_lesson_batch(s, &c->p);
    return 0;
}

/* One of nnlab's lanes measured: a short training job (`train --steps N`,
 * as --race-predicted's CPU job) on device, a GPU's in its way (graph or
 * eager, the data on the device), its mean step into lane. Its snapshot
 * and loss points are kept for the race's chart. 0, or -1 when it did not
 * finish (said). */
static int measure_lane(lesson_command *c, const char *device, nn_gpu_way way, int lane)
{
    char err[NN_ERR_LEN];
    nn_snapshot *snap = &c->snap;
    nn_job_config cfg = c->cfg;
    nn_strlcpy(cfg.device, device, sizeof cfg.device);
    cfg.bench = 0;
    cfg.warmup = 0;
    cfg.no_validation = 1;
    cfg.graph = way == NN_WAY_GRAPH;
    cfg.data_on_device = 1;
    nn_job *job = nn_job_start(&cfg, err, sizeof err);
    if (!job) {
        fprintf(stderr, "nnlab: %s on %s: %s\n", c->p.name, device, err);
        return -1;
    }
    for (;;) {
        nn_job_snapshot(job, snap);
        if (nn_job_state_ended(snap->state))
            break;
        if (cli_job_abandoned(job))
            cli_exit_abandoned();
        cli_sleep_ms(10);
    }
    nn_job_wait(job);
    nn_job_snapshot(job, snap);
    c->n_pts = nn_job_loss_points(job, 0, c->pts, LESSON_MAX_POINTS);
    nn_job_free(job);
    if (snap->state != NN_JOB_DONE) {
        fprintf(stderr, "nnlab: %s: the job on %s did not finish: %s\n", c->p.name, device, snap->error);
        return -1;
    }
    nn_race_lane_measure(&c->w.lane[lane], snap->us_per_step, 0, "measured");
    return 0;
}

static int run_race(const cli_options *o, lesson_command *c, int k)
{
    const nn_lesson_step *s = &c->l.step[k];
    cli_options so;
    if (step_job(o, c, s, &so) != 0)
        return -1;
    cli_ways_predict(&so, &c->cfg, "cpu", c->gpu_here, &c->prof, nn_lesson_gpu_way(s), &c->w);
    if (s->pytorch)
        cli_ways_measure_torch(&so, &c->cfg, "cpu", c->gpu_here, &c->w);
    /* the GPU first where one is here, so that the chart keeps the CPU's job */
    if (c->gpu_here && measure_lane(c, "gpu", nn_lesson_gpu_way(s), NN_LANE_NNLAB_GPU) != 0)
        return -1;
    if (measure_lane(c, "cpu", NN_WAY_EAGER, NN_LANE_NNLAB_CPU) != 0)
        return -1;
    nn_lesson_race_result(s, &c->p, &c->w, &c->r[k]);
    if (s->pytorch && !c->w.lane[NN_LANE_FW_CPU].measured)
        nn_lesson_torch_missing(&c->r[k]);
    return 0;
}

static int run_sweep(const cli_options *o, lesson_command *c, int k)
{
    const nn_lesson_step *s = &c->l.step[k];
    static const int fallback[] = { 1, 4, 16, 64, 256, 1024 };
    cli_options so;
    if (step_job(o, c, s, &so) != 0)
        return -1;
    so.devices = "cpu,gpu";
    nn_sweep_free(&c->sw);
    nn_sweep_init(&c->sw, &c->cfg, s->n_batches ? s->batches : fallback, s->n_batches ? s->n_batches : 6,
                  c->cfg.steps, c->cfg.warmup);
    if (cli_sweep_add_devices(&c->sw, &so) != 0)
        return -1;
    cli_run_sweep(&c->sw, o->quiet);
    nn_lesson_sweep_result(s, &c->sw, &c->r[k]);
    return 0;
}

/* Explain: the GPU's step priced from this GPU's calibration, else the
 * profile's; the CPU's from its calibration. */
static int run_explain(const cli_options *o, lesson_command *c, int k)
{
    const nn_lesson_step *s = &c->l.step[k];
    char source[NN_TEXT_LEN];
    cli_options so;
    int gpu = nn_device_kind_of(s->device).gpu;
    if (step_job(o, c, s, &so) != 0)
        return -1;
    if (gpu && !c->gpu_here) {
        nn_profile_calibration(&c->prof, &c->cal);
        snprintf(source, sizeof source, "predicted for %s", c->prof.name);
    } else {
        if (cli_calibration(gpu ? "gpu" : "cpu", (int)o->threads, o->recalibrate, 1, &c->cal) != 0)
            return -1;
        snprintf(source, sizeof source, "predicted from this %s's calibration", gpu ? "GPU" : "CPU");
    }
    nn_lesson_explain_result(s, &c->p, &c->cal, &c->prof, source, &c->r[k]);
    return 0;
}

/* A Jacobian method at val: the CPU's figures from its calibration, the
 * GPU's from its calibration or the profile, and the framework's host
 * cost an operation from the profile, as `nnlab jacobian --sweep` takes
 * them. */
static int run_jacobian(const cli_options *o, lesson_command *c, int k)
{
    const nn_lesson_step *s = &c->l.step[k];
    nn_calibration gpu;
    char source[NN_TEXT_LEN];
    if (cli_load_preset(s->preset, &c->p) != 0 || cli_calibration("cpu", (int)o->threads, 0, 1, &c->cal) != 0)
        return -1;
    if (c->gpu_here) {
        if (cli_calibration("gpu", 0, 0, 1, &gpu) != 0)
            return -1;
        snprintf(source, sizeof source, "predicted from this GPU's calibration");
    } else {
        nn_profile_calibration(&c->prof, &gpu);
        snprintf(source, sizeof source, "predicted for %s", c->prof.name);
    }
    nn_lesson_jacobian_result(s, &c->p, &c->cal, &gpu, c->prof.framework_op_us, nn_profile_framework_gpu_us(&c->prof),
                              source, &c->r[k]);
    return 0;
}

/* A ranks step with measure = true: its pair run here as `nnlab sweep
 * --ranks N --batches B` runs one cell (N ranks at B and one rank at N x
 * B, each a bench of this program, the ranks under mpirun). */
static int run_ranks_measured(const cli_options *o, lesson_command *c, int k)
{
    const nn_lesson_step *s = &c->l.step[k];
    cli_options so;
    char err[NN_ERR_LEN];
    nn_ranks_sweep *sw = calloc(1, sizeof *sw);
    if (!sw || step_job(o, c, s, &so) != 0) {
        free(sw);
        return -1;
    }
    nn_strlcpy(sw->preset_arg, s->preset, sizeof sw->preset_arg);
    sw->p = c->p;
    nn_strlcpy(sw->device, "cpu", sizeof sw->device);
    sw->n_counts = 1;
    sw->counts[0] = s->ranks;
    sw->n_batches = 1;
    sw->batches[0] = c->cfg.batch;
    sw->steps = c->cfg.steps > 0 ? c->cfg.steps : 1;
    sw->warmup = c->cfg.warmup;
    sw->overlap = s->overlap;
    if (nn_ranks_sweep_run(sw, NULL, NULL, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", nn_safe(err));
        free(sw);
        return -1;
    }
    const nn_ranks_cell *cell = &sw->cell[0][0];
    const nn_ranks_run *bad = cell->ranks.state != NN_RANKS_DONE ? &cell->ranks
                            : cell->one.state != NN_RANKS_DONE ? &cell->one : NULL;
    if (bad) {
        fprintf(stderr, "nnlab: %s: %s\n", nn_safe(c->l.path), nn_safe(bad->error));
        snprintf(c->r[k].why, sizeof c->r[k].why, "its ranks did not run: %s", bad->error);
        free(sw);
        return -1;
    }
    /* means, as the lab's race gives them: the all-reduce phase is a mean */
    nn_lesson_ranks_run m = { c->cfg.batch, cell->one.step_mean_us, cell->ranks.step_mean_us, cell->ranks.allreduce_us,
                              "" };
    snprintf(m.how, sizeof m.how, "%ld steps each after %ld untimed, the mean step; the ranks under mpirun, "
             "%d thread%s each", sw->steps, sw->warmup, cell->ranks.threads, cell->ranks.threads == 1 ? "" : "s");
    nn_lesson_ranks_measured_result(s, &m, &c->r[k]);
    free(sw);
    return 0;
}

/* N ranks against one: the one rank priced as an explain step is (this
 * device's calibration, else the profile's), over the step's link; or, with
 * measure = true, run here. */
static int run_ranks(const cli_options *o, lesson_command *c, int k)
{
    const nn_lesson_step *s = &c->l.step[k];
    char source[NN_TEXT_LEN], err[NN_ERR_LEN];
    nn_link link;
    int gpu = nn_device_kind_of(s->device).gpu;
    if (s->measure)
        return run_ranks_measured(o, c, k);
    if (nn_lesson_ranks_link(s, &link, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s: %s\n", nn_safe(c->l.path), nn_safe(err));
        nn_strlcpy(c->r[k].why, err, sizeof c->r[k].why);   /* the step's own line, and the handout's */
        return -1;
    }
    if (cli_load_preset(s->preset, &c->p) != 0)
        return -1;
    if (gpu && !c->gpu_here) {
        nn_profile_calibration(&c->prof, &c->cal);
        snprintf(source, sizeof source, "predicted for %s", c->prof.name);
    } else {
        if (cli_calibration(gpu ? "gpu" : "cpu", (int)o->threads, o->recalibrate, 1, &c->cal) != 0)
            return -1;
        snprintf(source, sizeof source, "predicted from this %s's calibration", gpu ? "GPU" : "CPU");
    }
    nn_lesson_ranks_result(s, &c->p, &c->cal, &c->prof, &link, source, &c->r[k]);
    return 0;
}

/* ---- printing -------------------------------------------------------------------------------- */

static void print_step_head(const lesson_command *c, int k)
{
    const nn_lesson_step *s = &c->l.step[k];
    printf("\n== step %d/%d: %s%s%s ==\n%s\n", k + 1, c->l.n_steps, nn_lesson_kind_name(s->kind),
           s->preset[0] ? ", " : "", nn_safe(s->preset), nn_safe(s->text));
    if (s->question[0]) {
        printf("question: %s (", nn_safe(s->question));
        for (int a = 0; a < s->n_answers; a++)
            printf("%s%c: %s", a ? ", " : "", s->answers[a].key, nn_safe(s->answers[a].label));
        printf(")\n");
    }
    fflush(stdout);
}

static void print_step_result(const lesson_command *c, int k)
{
    const nn_lesson_step *s = &c->l.step[k];
    const nn_lesson_result *r = &c->r[k];
    char answer[2 * NN_TEXT_LEN], step[32];
    if (s->kind != NN_LESSON_NOTE && !r->ran) {
        printf("  not run: %s\n", nn_safe(r->why));
    } else if (s->kind != NN_LESSON_NOTE) {
        printf("  >> %s <<  (%s)\n", nn_safe(r->headline), nn_safe(r->label));
        for (int n = 0; n < r->n_numbers; n++) {
            if (r->number[n].whole)     /* a whole Jacobian, not a step */
                snprintf(step, sizeof step, "%.3g s", r->number[n].us * 1e-6);
            else if (r->number[n].us > 0)
                nn_race_step_text(r->number[n].us, step, sizeof step);
            else
                snprintf(step, sizeof step, "0 us/step");   /* a part the step has none of */
            printf("  %-34s %14s  %s\n", nn_safe(r->number[n].what), step, nn_safe(r->number[n].source));
        }
        for (int n = 0; n < r->n_lines; n++)
            printf("  %s\n", nn_safe(r->line[n]));
        if (r->writeup_text[0])
            printf("  %s\n", nn_safe(r->writeup_text));
    }
    if (s->question[0]) {
        nn_lesson_answer_text(s, answer_of(c, k), r, answer, sizeof answer);
        printf("  %s\n", nn_safe(answer));
    }
    fflush(stdout);
}

/* ---- the handout ----------------------------------------------------------------------------- */

/* The SVG of step k's race or sweep beside the handout: 0 written (its name
 * kept), 1 none for this step, -1 failed (said). */
static int write_svg(const char *dir, lesson_command *c, int k)
{
    char err[NN_ERR_LEN];
    if (!c->r[k].ran)
        return 1;
    nn_export_run run = { c->p.name, 1, 0, { { &c->snap, c->pts, c->n_pts > 0 ? c->n_pts : 0, NULL, 0,
                                               c->snap.threads, NULL } }, &c->w, c->snap.total_steps };
    int rc = nn_lesson_step_svg(dir, &c->l, k, &run, c->p.lr, &c->sw, c->svg_name[k], sizeof c->svg_name[k], err,
                                sizeof err);
    if (rc < 0) {
        fprintf(stderr, "nnlab: --handout: %s\n", nn_safe(err));
        return -1;
    }
    if (rc == 0)
        c->svg[k] = c->svg_name[k];
    return rc;
}

static int write_handout(const char *dir, lesson_command *c)
{
    char machine[2 * NN_ERR_LEN], path[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_lesson_machine_text(c->gpu_here, c->prof.name, machine, sizeof machine);
    nn_lesson_handout h = { &c->l, c->r, c->answers, machine, c->svg };
    if (nn_lesson_handout_write(dir, &h, path, sizeof path, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: --handout: %s\n", nn_safe(err));
        return EXIT_FAILURE;
    }
    fprintf(stderr, "the handout: %s\n", nn_safe(path));
    return 0;
}

/* ---- the command ------------------------------------------------------------------------------ */

/* Runs step k's job; for a race or sweep with a handout, its SVG. */
static int run_step(const cli_options *o, lesson_command *c, int k)
{
    static int (*const run[])(const cli_options *, lesson_command *, int) = { run_race, run_sweep, run_explain,
                                                                                run_jacobian, run_ranks };
    const nn_lesson_step *s = &c->l.step[k];
    int rc = 0;
    print_step_head(c, k);
    memset(&c->r[k], 0, sizeof c->r[k]);
    c->r[k].writeup = -1;
    if (s->kind != NN_LESSON_NOTE && run[s->kind](o, c, k) != 0) {
        if (!c->r[k].why[0])
            snprintf(c->r[k].why, sizeof c->r[k].why, "its job did not run (said above)");
        rc = -1;
    }
    print_step_result(c, k);
    if (o->handout && write_svg(o->handout, c, k) < 0)
        rc = -1;
    return rc;
}

/* The lesson, its answers and the profile its GPU figures are predicted
 * for: 0, or the exit status after one line. */
static int lesson_open(const cli_options *o, lesson_command *c)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    if (!o->lesson) {
        fprintf(stderr, "nnlab: lesson: name a lesson (`nnlab lesson --list` lists them)\n");
        return CLI_EXIT_USAGE;
    }
    if (nn_lesson_find(o->lesson, path, sizeof path, err, sizeof err) != 0 ||
        nn_lesson_load(path, &c->l, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", nn_safe(err));
        return CLI_EXIT_USAGE;
    }
    if (check_answers(o->answers, &c->l, c->answers) != 0)
        return CLI_EXIT_USAGE;
    c->gpu_here = nn_device_require("gpu", err, sizeof err) == 0;
    return 0;
}

/* The profile of step s: --gpu-profile's, else the step's, else the
 * default. 0, or -1 (said). */
static int step_profile(const cli_options *o, lesson_command *c, const nn_lesson_step *s)
{
    cli_options po = *o;
    if (!o->gpu_profile && s->gpu_profile[0])
        po.gpu_profile = s->gpu_profile;
    return cli_gpu_profile(&po, 1, &c->prof);
}

static int lesson_command_run(cli_options *o, void *state)
{
    lesson_command *c = state;
    int rc, failed = 0;
    if (o->list)
        return print_list();
    if ((rc = lesson_open(o, c)) != 0)
        return rc;
    printf("lesson %s: %s\n%s\n", nn_safe(c->l.name), nn_safe(c->l.title), nn_safe(c->l.description));
    cli_catch_stop_signals();
    for (int k = 0; k < c->l.n_steps && !cli_stop_signal(); k++) {
        if (step_profile(o, c, &c->l.step[k]) != 0)
            return CLI_EXIT_USAGE;
        failed |= run_step(o, c, k) != 0;
    }
    nn_sweep_free(&c->sw);
    if (cli_stop_signal())
        return CLI_EXIT_SIGNAL + cli_stop_signal();
    if (o->handout && (rc = write_handout(o->handout, c)) != 0)
        return rc;
    return failed ? EXIT_FAILURE : 0;
}

int nn_cli_lesson(int argc, char **argv)
{
    return cli_run_on_heap(CLI_LESSON, argc, argv, sizeof(lesson_command), lesson_command_run);
}

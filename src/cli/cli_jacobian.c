/* src/cli/cli_jacobian.c - `nnlab jacobian`: the Jacobian job (nnlab/jacobian.h)
 * headless. Runs the method asked for, then a second one (forward, or
 * per-sample when forward was asked) to print the largest difference
 * between them; --dump writes what PyTorch needs to check the result as
 * .npy files (src/common/npy.h; the files are listed in man/nnlab.1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_common.h"
#include "cli_stop.h"
#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/jacobian.h"
#include "atomic_file.h"
#include "npy.h"
#include "util.h"

/* Runs cfg to its end (Ctrl-C cancels), rows done on stderr unless quiet;
 * 0 and the result, or after a one-line error -1 (it failed), CLI_EXIT_USAGE
 * (refused before it started) or 128 + the signal that cancelled it. */
static int run(const nn_job_config *cfg, int quiet, nn_jac_result *r)
{
    char err[NN_ERR_LEN] = "";
    nn_snapshot s;
    nn_job *job = nn_job_start(cfg, err, sizeof err);
    if (!job) {
        fprintf(stderr, "nnlab: %s\n", err);
        return CLI_EXIT_USAGE;       /* refused before it started, as every such refusal */
    }
    for (long shown = -1;;) {
        nn_job_snapshot(job, &s);
        if (nn_job_state_ended(s.state))
            break;
        if (cli_job_abandoned(job)) {
            fprintf(stderr, "nnlab: %s: the job did not end within %d s of its cancel (%s, %ld of %ld rows); "
                    "exiting without it\n", strsignal(cli_stop_signal()), CLI_GRACE_MS / 1000,
                    nn_job_state_name(s.state), s.step, s.total_steps);
            cli_exit_abandoned();
        }
        if (!quiet && s.step / 4000 != shown / 4000 && s.state == NN_JOB_RUNNING) {
            fprintf(stderr, "  %s\n", s.activity);
            shown = s.step;
        }
        cli_sleep_ms(20);
    }
    nn_job_wait(job);
    nn_job_snapshot(job, &s);
    int rc = s.state == NN_JOB_DONE ? nn_job_jacobian(job, r) : -1;
    if (s.state == NN_JOB_FAILED)
        fprintf(stderr, "nnlab: %s\n", s.error);
    else if (s.state == NN_JOB_CANCELLED)
        fprintf(stderr, "nnlab: cancelled after %ld of %ld rows\n", s.step, s.total_steps);
    else if (s.note[0] && !quiet)
        fprintf(stderr, "nnlab: note: %s\n", s.note);
    nn_job_free(job);
    if (s.state == NN_JOB_CANCELLED)
        return cli_stop_signal() ? CLI_EXIT_SIGNAL + cli_stop_signal() : CLI_EXIT_CANCELLED;
    return rc;
}

static int write_npy(const char *dir, const char *name, const float *data, const long *shape, int rank)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN + NN_PATH_LEN];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        fprintf(stderr, "nnlab: --dump %s: path too long\n", dir);
        return -1;
    }
    if (nn_npy_write(path, data, shape, rank, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: --dump: %s\n", err);
        return -1;
    }
    return 0;
}

#define FULL_J_MAX_BYTES (64.0 * 1024 * 1024)

/* Removes a file an earlier dump into dir left that this one does not
 * write, so that no file in the folder belongs to another network or x. */
static int remove_stale(const char *dir, const char *name)
{
    char path[NN_PATH_LEN];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return 0;                    /* it could not have been written there either */
    if (unlink(path) == 0 || errno == ENOENT)
        return 0;
    fprintf(stderr, "nnlab: --dump: %s is from an earlier dump and cannot be removed: %s\n", nn_safe(path),
            strerror(errno));
    return -1;
}

/* The whole J, zeros included, as torch.autograd.functional.jacobian gives it. */
static int dump_full(const char *dir, const nn_jac_result *r)
{
    long shape[4] = { r->val, r->out, r->val, r->in };
    size_t n = (size_t)r->val * (size_t)r->out * (size_t)r->val * (size_t)r->in;
    if ((double)n * sizeof(float) > FULL_J_MAX_BYTES)
        return remove_stale(dir, "jacobian.npy");   /* too large to write: none, not an old one */
    float *j = calloc(n, sizeof *j);
    if (!j) {
        fprintf(stderr, "nnlab: --dump: out of memory for the whole Jacobian\n");
        return -1;
    }
    for (size_t i = 0; i < (size_t)r->val; i++)
        for (size_t k = 0; k < (size_t)r->out; k++)
            for (size_t d = 0; d < (size_t)r->in; d++)
                j[((i * (size_t)r->out + k) * (size_t)r->val + i) * (size_t)r->in + d] =
                    r->blocks[(i * (size_t)r->out + k) * (size_t)r->in + d];
    int rc = write_npy(dir, "jacobian.npy", j, shape, 4);
    free(j);
    return rc;
}

/* The weights (linearN.weight (out, in) and linearN.bias (out), nn.Linear's
 * layout), the input x (val, in), J's diagonal blocks (val, out, in) and,
 * when it is at most 64 MB, the whole J (val, out, val, in). */
static int dump(const char *dir, const nn_jac_result *r)
{
    char name[64];
    const float *p = r->params;
    long vx[2] = { r->val, r->in }, blk[3] = { r->val, r->out, r->in };
    if (nn_make_dirs(dir) != 0) {
        fprintf(stderr, "nnlab: --dump %s: cannot create the folder: %s\n", dir, strerror(errno));
        return -1;
    }
    for (int l = 0; l < r->shape.n_linear; l++) {
        long w[2] = { r->shape.width[l + 1], r->shape.width[l] }, b[1] = { r->shape.width[l + 1] };
        snprintf(name, sizeof name, "linear%d.weight.npy", l + 1);
        if (write_npy(dir, name, p, w, 2) != 0)
            return -1;
        p += w[0] * w[1];
        snprintf(name, sizeof name, "linear%d.bias.npy", l + 1);
        if (write_npy(dir, name, p, b, 1) != 0)
            return -1;
        p += b[0];
    }
    for (int l = r->shape.n_linear; l < NN_JAC_MAX_LINEAR; l++) {   /* a deeper network's layers */
        snprintf(name, sizeof name, "linear%d.weight.npy", l + 1);
        if (remove_stale(dir, name) != 0)
            return -1;
        snprintf(name, sizeof name, "linear%d.bias.npy", l + 1);
        if (remove_stale(dir, name) != 0)
            return -1;
    }
    if (write_npy(dir, "x.npy", r->x, vx, 2) != 0 || write_npy(dir, "jacobian_blocks.npy", r->blocks, blk, 3) != 0)
        return -1;
    return dump_full(dir, r);
}

static void print_shape(FILE *f, const nn_jac_shape *s)
{
    for (int l = 0; l <= s->n_linear; l++)
        fprintf(f, "%s%d%s", l ? " -> " : "", s->width[l], l > 0 && s->tanh_after[l - 1] ? " tanh" : "");
}

static void print_text(const char *preset, const char *device, const nn_jac_result *r,
                       const nn_jac_result *other, double diff)
{
    const nn_jac_flops *f = &r->flops;
    printf("%s: Jacobian of ", preset);
    print_shape(stdout, &r->shape);
    printf(" at val %d on %s, method %s\n", r->val, device, nn_jac_method_name(r->method));
    printf("  time        %.6f s (forward pass %.3f ms; warm-up %.3f ms before, untimed", r->seconds,
           r->forward_s * 1e3, r->warmup_s * 1e3);
    if (r->lanes > 1)
        printf("; %d threads, whole passes each", r->lanes);
    printf(")\n");
    printf("  rows        %ld rows of J, %.0f rows/s\n", nn_jac_rows_total(&r->shape, r->val), r->rows_per_s);
    printf("  FLOPs       %.4g (%.0f passes over %.0f rows), %.1f%% of them on J's zero blocks\n", f->total,
           f->passes, f->pass_rows, f->total > 0 ? 100 * f->zero / f->total : 0);
    if (r->offdiag_checked)
        printf("  zero blocks computed; the largest |J[i,k,j,d]|, j != i: %g\n", r->offdiag_max);
    else
        printf("  zero blocks not computed (sample i's outputs do not depend on sample j's input)\n");
    printf("  vs %-8s largest difference %.3g (%s took %.6f s)\n", nn_jac_method_name(other->method), diff,
           nn_jac_method_name(other->method), other->seconds);
    char why[1024];
    nn_jac_explain(&r->shape, r->val, r->method, why, sizeof why);
    printf("  why: %s\n", why);
}

/* The one writer the lab's `x` uses too (nnlab/jacobian.h). */
static void print_json(const char *preset, const char *device, const nn_jac_result *r,
                       const nn_jac_result *other, double diff, const nn_jac_sweep *sw)
{
    nn_jac_export x = { preset, device, r->method, r->val, r->shape, "done", 0, r->seconds, r, other, diff, sw };
    nn_jac_export_json(stdout, &x);
}

/* The GPU's figures: its calibration when one is here, else a profile's
 * (predicted for it); and the framework's per-operation cost, which only
 * a profile gives (the named one, else the default). 0, or -1 after a
 * one-line error. */
static int gpu_figures(const cli_options *o, nn_calibration *gpu, nn_jac_framework *fw)
{
    char why[NN_ERR_LEN];
    nn_gpu_profile prof;
    int have_gpu = nn_device_require("gpu", why, sizeof why) == 0;
    if (cli_gpu_profile(o, !have_gpu, &prof) != 0) {
        if (!have_gpu || o->gpu_profile)
            return -1;
        memset(&prof, 0, sizeof prof);
    }
    fw->cpu_op_us = prof.framework_op_us;
    fw->gpu_op_us = nn_profile_framework_gpu_us(&prof);
    if (have_gpu)
        return cli_calibration("gpu", 0, 0, o->quiet || o->json, gpu);
    nn_profile_calibration(&prof, gpu);
    return 0;
}

static void print_sweep_rows(const nn_jac_sweep *sw, enum nn_jac_way w)
{
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++)
        for (int d = 0; d < 2; d++) {
            printf("  %-11s %-4s", d ? "" : nn_jac_method_name((enum nn_jac_method)m), d ? "gpu" : "cpu");
            for (int i = 0; i < sw->n; i++)
                printf(" %9.3g", d ? sw->gpu_s[w][m][i] : sw->cpu_s[w][m][i]);
            printf("\n");
        }
}

static void print_verdicts(const nn_jac_sweep *sw, enum nn_jac_way w)
{
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++) {
        printf("  %-11s ", nn_jac_method_name((enum nn_jac_method)m));
        if (sw->gpu_overtakes[w][m])
            printf("%s: the GPU overtakes the CPU at val %ld (predicted)\n", nn_jac_way_name(w),
                   sw->gpu_overtakes[w][m]);
        else
            printf("%s: the CPU stays faster up to val %ld (predicted)\n", nn_jac_way_name(w),
                   sw->val[sw->n - 1]);
    }
}

/* The predicted val sweep of the network: 0, or -1 after a one-line error. */
static int sweep_of(const cli_options *o, const nn_jac_shape *s, nn_jac_sweep *sw)
{
    nn_calibration cpu, gpu;
    nn_jac_framework fw;
    if (cli_calibration("cpu", (int)o->threads, 0, o->quiet || o->json, &cpu) != 0 || gpu_figures(o, &gpu, &fw) != 0)
        return -1;
    nn_jac_sweep_predict(s, NULL, 0, &cpu, &gpu, &fw, sw);
    return 0;
}

/* The predicted val sweep: per method, the CPU's and the GPU's seconds and
 * the val from which the GPU stays faster, as nnlab issues the passes and
 * as a framework does in eager mode. */
static int print_sweep(const cli_options *o, const nn_jac_shape *s, enum nn_jac_method m, long val)
{
    char verdict[1024];
    nn_jac_sweep sw;
    if (sweep_of(o, s, &sw) != 0)
        return -1;
    printf("\nval sweep, predicted by the cost model (CPU: this machine's calibration; GPU: %s), seconds\n",
           sw.gpu_name);
    for (int w = 0; w < NN_JAC_WAYS; w++) {
        if (w == NN_JAC_WAY_NNLAB)
            printf("nnlab's own passes (rows on a GPU: one recorded graph a group):\n");
        else
            printf("a framework in eager mode (as PyTorch's jacobian; rows is vectorize=False),\n"
                   "host overhead an operation %.3g us on the CPU, %.3g us on the GPU:\n", sw.framework.cpu_op_us,
                   sw.framework.gpu_op_us);
        printf("  %-11s %-4s", "val", "");
        for (int i = 0; i < sw.n; i++)
            printf(" %9ld", sw.val[i]);
        printf("\n");
        print_sweep_rows(&sw, (enum nn_jac_way)w);
    }
    for (int w = 0; w < NN_JAC_WAYS; w++)
        print_verdicts(&sw, (enum nn_jac_way)w);
    nn_jac_sweep_verdict(&sw, m, val, verdict, sizeof verdict);
    printf("  %s\n", verdict);
    return 0;
}

/* The options into a job: the preset's [task] unless given. */
static int job_config(const cli_options *o, const nn_preset *p, nn_job_config *cfg)
{
    const nn_job_traits *kind = nn_job_traits_of(nn_job_kind_of_preset(p));
    nn_job_config_init(cfg, p);
    if (strcmp(kind->name, "jacobian") != 0) {     /* the command runs the kind of its name */
        fprintf(stderr, "nnlab: %s: not a jacobian preset (its [task] kind is %s; see mlp-jacobian)\n",
                o->preset, kind->name);
        return -1;
    }
    if (o->method && (cfg->jac_method = nn_jac_method_find(o->method)) < 0) {
        fprintf(stderr, "nnlab: --method %s: expected %s\n", o->method, nn_jac_method_list());
        return -1;
    }
    if (o->device)
        nn_strlcpy(cfg->device, o->device, sizeof cfg->device);
    cfg->jac_val = (int)o->val;
    cfg->seed = o->seed;
    cfg->threads = (int)o->threads;
    cfg->graph = o->graph;
    cfg->tf32 = o->tf32;
    if (o->deterministic)            /* else the preset's [train] deterministic */
        cfg->deterministic = 1;
    return 0;
}

/* The bytes the command holds besides a job: the first result while the
 * second method runs, and with --dump the whole J when it is written. */
static double held_bytes(const cli_options *o, const nn_job_config *cfg)
{
    nn_jac_shape s;
    nn_jac_memory m;
    char err[NN_ERR_LEN];
    long val = cfg->jac_val > 0 ? cfg->jac_val : cfg->preset.task_val;
    if (nn_jac_shape_from_preset(&cfg->preset, o->preset, &s, err, sizeof err) != 0 || val < 1)
        return 0;                    /* refused by the job, in its own words */
    nn_jac_memory_of(&s, val, (enum nn_jac_method)cfg->jac_method, &m);
    double full = (double)val * (double)val * s.width[0] * s.width[s.n_linear] * sizeof(float);
    return m.result + (o->dump && full <= FULL_J_MAX_BYTES ? full : 0);
}

/* A job larger than the memory available is a usage error in the user's
 * terms (--val, or the preset's key), as train's; of the two methods run,
 * the larger, plus what the command holds. nn_job_start checks each job too. */
static int check_sizes(const cli_options *o, const nn_job_config *cfg, int other)
{
    char key[NN_PATH_LEN + 32], err[NN_ERR_LEN + NN_PATH_LEN];
    nn_job_config second = *cfg;
    nn_memory_estimate m, m2;
    second.jac_method = other;
    if (o->val > 0)
        snprintf(key, sizeof key, "--val");
    else
        snprintf(key, sizeof key, "%s: [task] val =", o->preset);
    nn_job_memory_estimate(cfg, &m);
    nn_job_memory_estimate(&second, &m2);
    const nn_job_config *larger = cfg;
    if (m2.host > m.host) {
        m = m2;
        larger = &second;
    }
    double held = held_bytes(o, cfg);
    m.data += held;
    m.host += held;
    if (nn_job_check_sizes(larger, &m, key, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "nnlab: %s\n", err);
    return -1;
}

/* 0 when the device can run here; else says why. */
static int device_ready(const char *device)
{
    char err[NN_ERR_LEN];
    if (nn_device_require(device, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "nnlab: %s\n", err);
    return -1;
}

/* The method compared with: forward, or per-sample when forward was asked. */
static int other_method(int m)
{
    return m == NN_JAC_FORWARD ? NN_JAC_PER_SAMPLE : NN_JAC_FORWARD;
}

int nn_cli_jacobian(int argc, char **argv)
{
    cli_options o;
    nn_preset p;
    nn_job_config cfg;
    nn_jac_result r, other;
    nn_jac_sweep sw;
    int rc = cli_parse(CLI_JACOBIAN, argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : CLI_EXIT_USAGE;
    if (!o.preset) {
        fprintf(stderr, "nnlab: jacobian: --preset is required\n");
        return CLI_EXIT_USAGE;
    }
    if (cli_load_preset(o.preset, &p) != 0 || job_config(&o, &p, &cfg) != 0)
        return CLI_EXIT_USAGE;
    /* a device that cannot run is refused before anything starts, as
     * train's: every refusal exits 2 (the job asks again on its thread) */
    if (device_ready(cfg.device[0] ? cfg.device : p.device) != 0 ||
        check_sizes(&o, &cfg, other_method(cfg.jac_method)) != 0)
        return CLI_EXIT_USAGE;
    cli_say_prediction(&cfg, o.quiet);
    cli_catch_stop_signals();
    if ((rc = run(&cfg, o.quiet || o.json, &r)) != 0)
        return rc > 0 ? rc : 1;
    cfg.jac_method = other_method(r.method);
    if ((rc = run(&cfg, 1, &other)) != 0) {
        nn_jac_result_free(&r);
        return rc > 0 ? rc : 1;
    }
    double diff = nn_jac_max_diff(&r, &other);
    if (o.json && o.jac_sweep && sweep_of(&o, &r.shape, &sw) != 0)
        rc = 1;
    else if (o.json)
        print_json(p.name, cfg.device[0] ? cfg.device : p.device, &r, &other, diff, o.jac_sweep ? &sw : NULL);
    else
        print_text(p.name, cfg.device[0] ? cfg.device : p.device, &r, &other, diff);
    if (rc == 0)
        rc = o.dump && dump(o.dump, &r) != 0 ? 1 : 0;
    if (rc == 0 && o.jac_sweep && !o.json && print_sweep(&o, &r.shape, r.method, r.val) != 0)
        rc = 1;
    nn_jac_result_free(&r);
    nn_jac_result_free(&other);
    return rc;
}

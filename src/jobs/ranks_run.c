/* src/jobs/ranks_run.c - the ranks' sweep's runs: each point a bench of
 * this very program as a child (`nnlab bench --ranks N ... --json`, which
 * starts its ranks under mpirun), its JSON read (src/common/json_flat.c),
 * through the PyTorch helper's child runner (torch_child.c: no shell, its
 * own process group, a deadline, a cancel). See nnlab/ranks_sweep.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "nnlab/ranks_sweep.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_flat.h"
#include "torch_child.h"
#include "util.h"

/* A bench of a few dozen steps; a rank that hangs is ended by then. */
#define RUN_TIMEOUT_S 900.0

typedef struct run_ctx {
    int (*cancelled)(void *);
    void *ctx;
} run_ctx;

/* This program, to run as the child. */
static int self_path(char *exe, size_t len, char *err, size_t err_len)
{
    ssize_t n = readlink("/proc/self/exe", exe, len - 1);
    if (n <= 0)
        return nn_errorf(err, err_len, "cannot find this program to run its ranks (/proc/self/exe)");
    exe[n] = '\0';
    return 0;
}

/* The figures of one child's JSON; 0, or -1 with run->error. */
static int read_result(const torch_child *c, nn_ranks_run *run)
{
    nn_json_flat j;
    char err[256];
    double threads = 0;
    int rc = nn_json_flat_parse(c->out, &j, err, sizeof err);
    if (rc != 0 || nn_json_flat_number(&j, "us_per_step", &run->step_us) != 0 || !(run->step_us > 0)) {
        snprintf(run->error, sizeof run->error, "its JSON: %.200s", rc ? err : "no us_per_step");
        nn_json_flat_free(&j);
        return -1;
    }
    if (nn_json_flat_number(&j, "us_per_step_mean", &run->step_mean_us) != 0)
        run->step_mean_us = run->step_us;
    if (nn_json_flat_number(&j, "phases.allreduce_us", &run->allreduce_us) != 0)
        run->allreduce_us = 0;       /* one rank sums nothing */
    nn_json_flat_number(&j, "threads", &threads);
    run->threads = (int)threads;
    nn_json_flat_free(&j);
    return 0;
}

static int child_cancelled(void *p)
{
    const run_ctx *r = p;
    return r->cancelled && r->cancelled(r->ctx);
}

/* One bench: `exe bench --preset P --device D --batch B [--ranks N] ...`. */
static void bench_run(const nn_ranks_sweep *sw, const char *exe, int ranks, int batch, run_ctx *rc,
                      nn_ranks_run *run)
{
    char b[16], n[16], steps[24], warmup[24];
    torch_child *c = calloc(1, sizeof *c);
    memset(run, 0, sizeof *run);
    run->state = NN_RANKS_FAILED;
    if (!c) {
        snprintf(run->error, sizeof run->error, "out of memory");
        return;
    }
    snprintf(b, sizeof b, "%d", batch);
    snprintf(n, sizeof n, "%d", ranks);
    snprintf(steps, sizeof steps, "%ld", sw->steps);
    snprintf(warmup, sizeof warmup, "%ld", sw->warmup);
    /* one rank: a plain bench, the list ends before "--ranks"; the ranks
     * sum as the sweep prices them (--no-overlap: one sum after backward) */
    char *argv[] = { (char *)exe, "bench", "--preset", (char *)sw->preset_arg, "--device", (char *)sw->device,
                     "--batch", b, "--steps", steps, "--warmup", warmup, "--json", "--quiet",
                     ranks > 1 ? "--ranks" : NULL, n, sw->overlap ? NULL : "--no-overlap", NULL };
    if (torch_child_run(argv, RUN_TIMEOUT_S, child_cancelled, rc, c) != 0 || c->spawn_errno)
        snprintf(run->error, sizeof run->error, "cannot run %s", exe);
    else if (c->exit_code != 0) {
        char last[200];
        torch_child_last_line(c, last, sizeof last);
        snprintf(run->error, sizeof run->error, "%s", c->timed_out ? "it ran past its deadline"
                 : c->cancelled ? "cancelled" : last[0] ? last : "it failed without a message");
    } else if (read_result(c, run) == 0)
        run->state = NN_RANKS_DONE;
    free(c);
}

int nn_ranks_sweep_run(nn_ranks_sweep *sw, void (*progress)(const nn_ranks_sweep *, int, int, void *),
                       int (*cancelled)(void *), void *ctx, char *err, size_t err_len)
{
    char exe[PATH_MAX];
    run_ctx rc = { cancelled, ctx };
    if (self_path(exe, sizeof exe, err, err_len) != 0)
        return -1;
    for (int b = 0; b < sw->n_batches; b++)
        for (int c = 0; c < sw->n_counts; c++) {
            nn_ranks_cell *cell = &sw->cell[c][b];
            int n = sw->counts[c];
            if (cancelled && cancelled(ctx))
                return 0;
            bench_run(sw, exe, n, sw->batches[b], &rc, &cell->ranks);
            if (n == 1)
                cell->one = cell->ranks;     /* one rank at 1 x B: the same run */
            else
                bench_run(sw, exe, 1, n * sw->batches[b], &rc, &cell->one);
            nn_ranks_cell_finish(sw, c, b);
            if (progress)
                progress(sw, c, b, ctx);
        }
    return 0;
}

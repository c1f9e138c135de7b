/* src/jobs/ranks_lines.c - the ranks' progress lines read back; see
 * ranks_lines.h. */
#include "ranks_lines.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json_flat.h"
#include "nnlab/observe.h"

static int state_named(const char *name, nn_job_state *out)
{
    static const nn_job_state all[] = { NN_JOB_PREPARING, NN_JOB_RUNNING, NN_JOB_PAUSED, NN_JOB_DONE,
                                        NN_JOB_CANCELLED, NN_JOB_FAILED, NN_JOB_DIVERGED };
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
        if (strcmp(nn_job_state_name(all[i]), name) == 0) {
            *out = all[i];
            return 0;
        }
    return -1;
}

/* A number that is there and finite: 1 and *v; 0 for null or absent. */
static int finite_number(const nn_json_flat *j, const char *key, double *v)
{
    return nn_json_flat_number(j, key, v) == 0 && isfinite(*v);
}

static long whole(const nn_json_flat *j, const char *key)
{
    double v;
    return finite_number(j, key, &v) && v >= 0 && v < 1e15 ? (long)v : 0;
}

static void read_parts(const nn_json_flat *j, ranks_line *out)
{
    for (int p = 0; p < NN_STEP_PARTS; p++) {
        char key[64];
        snprintf(key, sizeof key, "parts.%s_us", nn_step_part_key(p));
        if (finite_number(j, key, &out->part_us[p]) && out->part_us[p] >= 0)
            out->part_valid |= 1u << p;
    }
}

static void read_figures(const nn_json_flat *j, ranks_line *out)
{
    double v;
    out->step = whole(j, "step");
    out->steps = whole(j, "steps");
    out->epoch = (int)whole(j, "epoch");
    out->has_loss = finite_number(j, "loss", &out->loss);
    out->loss_points = whole(j, "loss_points");
    out->epochs_done = (int)whole(j, "epochs_done");
    out->has_val = finite_number(j, "val_loss", &out->val_loss);
    out->has_accuracy = finite_number(j, "val_accuracy", &out->val_accuracy);
    out->elapsed_s = finite_number(j, "elapsed_s", &v) && v >= 0 ? v : 0;
    out->has_rate = finite_number(j, "samples_per_s", &out->samples_per_s) && out->samples_per_s > 0;
    if (!finite_number(j, "eta_s", &out->eta_s) || out->eta_s < 0)
        out->eta_s = 0;
    out->timed_steps = whole(j, "timed_steps");
    out->steps_per_epoch = whole(j, "steps_per_epoch");
    const char *why = nn_json_flat_string(j, "error");
    snprintf(out->error, sizeof out->error, "%s", why ? why : "");
    if (!finite_number(j, "us_per_step", &out->us_per_step) || out->us_per_step < 0)
        out->us_per_step = 0;
    out->has_allreduce = finite_number(j, "allreduce_us", &out->allreduce_us) && out->allreduce_us >= 0;
    read_parts(j, out);
}

int ranks_line_parse(const char *line, int max_ranks, ranks_line *out)
{
    nn_json_flat j;
    char err[128];
    double progress, rank, ranks;
    memset(out, 0, sizeof *out);
    line += strspn(line, " \t\r");
    if (line[0] != '{') {            /* not JSON at all: no parse, no message */
        return -1;
    }
    int rc = nn_json_flat_parse(line, &j, err, sizeof err);
    if (rc == 0 && nn_json_flat_number(&j, "progress", &progress) == 0 && progress == 1 &&
        nn_json_flat_number(&j, "rank", &rank) == 0 && nn_json_flat_number(&j, "ranks", &ranks) == 0 &&
        ranks >= 1 && ranks <= max_ranks && rank >= 0 && rank < ranks && rank == floor(rank) &&
        ranks == floor(ranks) && state_named(nn_json_flat_string(&j, "state"), &out->state) == 0) {
        out->rank = (int)rank;
        out->ranks = (int)ranks;
        read_figures(&j, out);
    } else {
        rc = -1;
    }
    nn_json_flat_free(&j);
    return rc == 0 ? 0 : -1;
}

void ranks_line_feed(ranks_line_buffer *b, const char *buf, size_t n, void (*on_line)(const char *, void *),
                     void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (c == '\n') {
            if (!b->skipping) {
                b->line[b->len] = '\0';
                on_line(b->line, ctx);
            }
            b->len = 0;
            b->skipping = 0;
        } else if (b->skipping) {
            continue;
        } else if (b->len == RANKS_LINE_MAX) {
            b->skipping = 1;         /* too long for a progress line: not one */
            b->len = 0;
        } else {
            b->line[b->len++] = c;
        }
    }
}

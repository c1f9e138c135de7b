/* src/analysis/report/export.c - a run as CSV and JSON, a run's history as
 * JSON (which the CLI shares), and a run's or a sweep's export files; see
 * nnlab/export.h. The sweep's writers are export_sweep.c; the folder and
 * the pair of files, written both or neither, model/export_files.c; a JSON
 * string or number, model/export_json.c. */
#include "nnlab/export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnlab/progress.h"
#include "nnlab/race.h"
#include "util.h"

/* ---- a run's history as JSON -------------------------------------------------------------------- */

/* The history's rows: one per epoch, on the heap (a long run has many). */
static nn_epoch_row *history_rows(const nn_loss_point *pts, long n_pts, const nn_epoch_result *eps, int n_eps,
                                  int *n)
{
    long max = (n_pts > 0 ? pts[n_pts - 1].epoch : 0) + n_eps + 1;
    nn_epoch_row *rows = malloc((size_t)max * sizeof *rows);
    *n = rows ? nn_epoch_history(pts, n_pts, eps, n_eps, rows, (int)max) : 0;
    return rows;
}

void nn_json_history(FILE *f, const nn_loss_point *pts, long n_pts, const nn_epoch_result *eps, int n_eps,
                     int indent)
{
    int n;
    nn_epoch_row *rows = history_rows(pts, n_pts, eps, n_eps, &n);
    fprintf(f, "[");
    for (int i = 0; i < n; i++) {
        const nn_epoch_row *r = &rows[i];
        fprintf(f, "%s\n%*s{\"epoch\": %d, \"step\": %ld, \"train_loss\": ", i ? "," : "", indent, "", r->epoch,
                r->step);
        nn_json_number(f, r->has_train_loss ? r->train_loss : NAN);
        fprintf(f, ", \"val_loss\": ");
        nn_json_number(f, r->has_val ? r->val_loss : NAN);
        fprintf(f, ", \"val_accuracy\": ");
        nn_json_number(f, r->has_accuracy ? r->val_accuracy : NAN);
        fprintf(f, ", \"time_s\": %.6g, \"seconds\": %.6g}", r->time_s, r->seconds);
    }
    fprintf(f, n ? "\n%*s]" : "]", indent > 2 ? indent - 2 : 0, "");
    free(rows);
}

/* ---- a run as CSV ---------------------------------------------------------------------------- */

static void csv_number(FILE *f, int valid, double v)
{
    if (valid && isfinite(v))
        fprintf(f, ",%.6g", v);
    else
        fprintf(f, ",");
}

static void csv_job(FILE *f, const nn_export_job *j)
{
    int n;
    const char *way = nn_snapshot_way_word(j->snap);
    nn_epoch_row *rows = history_rows(j->pts, j->n_pts, j->eps, j->n_eps, &n);
    for (long i = 0; i < j->n_pts; i++) {
        const nn_loss_point *p = &j->pts[i];
        fprintf(f, "%s,loss,%d,%ld,%.6g,,%.6g,,,%s,measured,\n", j->snap->device, p->epoch, p->step, p->time_s,
                p->loss, way);
    }
    for (int i = 0; i < n; i++) {
        const nn_epoch_row *r = &rows[i];
        fprintf(f, "%s,epoch,%d,%ld,%.6g,%.6g", j->snap->device, r->epoch, r->step, r->time_s, r->seconds);
        csv_number(f, r->has_train_loss, r->train_loss);
        csv_number(f, r->has_val, r->val_loss);
        csv_number(f, r->has_accuracy, r->val_accuracy);
        fprintf(f, ",%s,measured,\n", way);
    }
    free(rows);
}

/* A text field, quoted (RFC 4180) when it holds a comma, a quote or a line break. */
static void csv_field(FILE *f, const char *v)
{
    if (!strpbrk(v, ",\"\r\n")) {
        fputs(v, f);
        return;
    }
    fputc('"', f);
    for (; *v; v++) {
        if (*v == '"')
            fputc('"', f);
        fputc(*v, f);
    }
    fputc('"', f);
}

/* A lane of a race of ways: "gpu,lane,,25000,0.539,,,,,graph,predicted for T4,21.6" */
static void csv_lane(FILE *f, const nn_race_lane *l, long steps)
{
    if (!l->present)
        return;
    fprintf(f, "%s,lane,,%ld,%.6g,,,,,%s,", l->gpu ? "gpu" : "cpu", steps, (double)steps * l->step_us * 1e-6,
            l->gpu || l->way == NN_WAY_FRAMEWORK ? nn_gpu_way_key((nn_gpu_way)l->way) : "nnlab");
    csv_field(f, l->source);
    fprintf(f, ",%.6g\n", l->step_us);
}

int nn_export_run_csv(FILE *f, const nn_export_run *run)
{
    fprintf(f, "device,kind,epoch,step,time_s,seconds,train_loss,val_loss,val_accuracy,way,source,us_per_step\n");
    for (int k = 0; k < run->n_jobs; k++)
        if (run->job[k].snap)
            csv_job(f, &run->job[k]);
    for (int k = 0; run->ways && k < NN_LANES; k++)
        csv_lane(f, &run->ways->lane[k], run->ways_steps);
    return ferror(f) ? -1 : 0;
}

/* ---- a run as JSON --------------------------------------------------------------------------- */

static void json_points(FILE *f, const nn_export_job *j)
{
    fprintf(f, "[");
    for (long i = 0; i < j->n_pts; i++) {
        const nn_loss_point *p = &j->pts[i];
        fprintf(f, "%s\n        {\"epoch\": %d, \"step\": %ld, \"step_in_epoch\": %ld, \"loss\": ", i ? "," : "",
                p->epoch, p->step, p->step_in_epoch);
        nn_json_number(f, p->loss);
        fprintf(f, ", \"time_s\": %.6g}", p->time_s);
    }
    fprintf(f, j->n_pts ? "\n      ]" : "]");
}

static void json_job(FILE *f, const nn_export_job *j)
{
    const nn_snapshot *s = j->snap;
    nn_job_times t;
    char headline[160];
    nn_job_times_of(s, &t);
    nn_format_headline(s, headline, sizeof headline);
    fprintf(f, "    {\n      \"device\": ");
    nn_json_string(f, s->device);
    fprintf(f, ", \"way\": \"%s\", \"ranks\": %d", nn_snapshot_way_word(s),
            s->launched_ranks > 1 ? s->launched_ranks : 1);
    fprintf(f, ",\n      \"state\": \"%s\",\n      \"headline\": ", nn_job_state_name(s->state));
    nn_json_string(f, headline);
    /* the threads it ran with, as the title says them; then those asked (0: the cores free) */
    fprintf(f, ",\n      \"batch\": %d, \"threads\": %d, \"threads_asked\": %d, \"steps\": %ld, \"total_steps\": %ld,\n",
            s->batch, s->threads_now > 0 ? s->threads_now : s->threads, s->threads, s->step, s->total_steps);
    fprintf(f, "      \"prepare_s\": %.6g, \"elapsed_s\": %.6g, \"train_s\": %.6g, \"val_s\": %.6g, \"per_step_s\": ",
            s->prepare_s, t.elapsed_s, t.train_s, t.val_s);
    nn_json_number(f, t.has_per_step ? t.per_step_s : NAN);
    fprintf(f, ", \"samples_per_s\": ");
    nn_json_number(f, s->has_rate ? s->samples_per_s : NAN);
    fprintf(f, ",\n      \"history\": ");
    nn_json_history(f, j->pts, j->n_pts, j->eps, j->n_eps, 8);
    fprintf(f, ",\n      \"loss_points\": ");
    json_points(f, j);
    fprintf(f, "\n    }");
}

void nn_export_job_name(const nn_export_job *j, char *buf, size_t len)
{
    const nn_snapshot *s = j->snap;
    if (j->name && j->name[0])
        snprintf(buf, len, "%s", j->name);
    else if (!s)
        snprintf(buf, len, "?");
    else if (s->launched_ranks > 1)  /* ranks it started: "cpu 2 ranks", as the lab labels them */
        snprintf(buf, len, "%s %d ranks", s->device, s->launched_ranks);
    else
        snprintf(buf, len, "%s %s", s->device, nn_snapshot_way_word(s));
}

static void json_job_name(FILE *f, const nn_export_job *j)
{
    char name[64];
    nn_export_job_name(j, name, sizeof name);
    nn_json_string(f, name);
}

/* Every pair of jobs that both finished: which is faster and by how much, the
 * quotient of the times as shown (nn_race_ratio). */
static void json_ratios(FILE *f, const nn_export_run *run)
{
    int first = 1;
    fprintf(f, "[");
    for (int a = 0; a < run->n_jobs; a++)
        for (int b = a + 1; b < run->n_jobs; b++) {
            int faster;
            const nn_snapshot *sa = run->job[a].snap, *sb = run->job[b].snap;
            double ratio = sa && sb ? nn_race_ratio(sa, sb, &faster) : 0.0;
            if (!(ratio > 0))
                continue;
            fprintf(f, "%s\n    {\"faster\": ", first ? "" : ",");
            json_job_name(f, &run->job[faster ? b : a]);
            fprintf(f, ", \"than\": ");
            json_job_name(f, &run->job[faster ? a : b]);
            fprintf(f, ", \"times\": %.4g}", ratio);
            first = 0;
        }
    fprintf(f, first ? "]" : "\n  ]");
}

int nn_export_run_json(FILE *f, const nn_export_run *run)
{
    int faster = 0;
    double ratio = run->n_jobs == 2 && run->job[0].snap && run->job[1].snap
                       ? nn_race_ratio(run->job[0].snap, run->job[1].snap, &faster) : 0.0;
    fprintf(f, "{\n  \"preset\": ");
    nn_json_string(f, run->preset ? run->preset : "");
    fprintf(f, ",\n  \"side_by_side\": %s,\n  \"jobs\": [\n",
            run->n_jobs < 2 ? "null" : run->sequential ? "\"one after the other\"" : "\"raced\"");
    for (int k = 0, first = 1; k < run->n_jobs; k++) {
        if (!run->job[k].snap)
            continue;
        fprintf(f, "%s", first ? "" : ",\n");
        json_job(f, &run->job[k]);
        first = 0;
    }
    /* "ratio": two jobs' (kept for readers of two-job runs); "ratios": every pair's */
    fprintf(f, "\n  ],\n  \"ratio\": ");
    if (ratio > 0)
        fprintf(f, "{\"faster\": \"%s\", \"times\": %.4g}", run->job[faster].snap->device, ratio);
    else
        fprintf(f, "null");
    fprintf(f, ",\n  \"ratios\": ");
    json_ratios(f, run);
    if (run->ways) {                 /* the race of ways: every lane, both verdicts */
        fprintf(f, ",\n");
        nn_race_ways_json(f, run->ways, run->ways_steps, 2, 1);
        fprintf(f, "}\n");
    } else {
        fprintf(f, "\n}\n");
    }
    return ferror(f) ? -1 : 0;
}

/* ---- files ------------------------------------------------------------------------------------ */

typedef struct export_ctx {
    const nn_export_run *run;
    const nn_sweep *sw;
    long long now;
} export_ctx;

static int fill_csv(FILE *f, const void *p)
{
    const export_ctx *c = p;
    return c->run ? nn_export_run_csv(f, c->run) : nn_export_sweep_csv(f, c->sw);
}

static int fill_json(FILE *f, const void *p)
{
    const export_ctx *c = p;
    return c->run ? nn_export_run_json(f, c->run) : nn_export_sweep_json(f, c->sw, c->now);
}

int nn_export_files(const char *dir, const nn_export_run *run, const nn_sweep *sw, long long now,
                    char *csv_path, char *json_path, size_t path_len, char *err, size_t err_len)
{
    export_ctx c = { run, sw, now };
    if (!run && !sw)
        return nn_errorf(err, err_len, "export: nothing to write");
    return nn_export_pair(dir, run ? run->preset : sw->base.preset.name, run ? "run" : "sweep", now, fill_csv,
                          fill_json, &c, csv_path, json_path, path_len, err, err_len);
}

/* ui/panels/race_view.c - a run of several jobs on the run screen: labels,
 * colours, the title and the summary; see race_view.h. The ratios and the
 * framework way are nnlab/race.h's, the words `nnlab train --race` prints. */
#include "race_view.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text/format.h"
#include "race_predicted.h"
#include "screens/setup_fields.h"
#include "nnlab/progress.h"

const char *ui_race_label(const ui_run *r, int k)
{
    return r->j[k].label[0] ? r->j[k].label : r->j[k].device;
}

int ui_race_label_width(const ui_run *r)
{
    int w = 8;
    for (int k = 0; k < r->n_jobs; k++) {
        int n = (int)strlen(ui_race_label(r, k));
        w = n > w ? n : w;
    }
    return w;
}

enum ui_role ui_race_role(int k, int val)
{
    /* the first two jobs keep the colours a run of two always had; the
     * third (a GPU's graph way) takes the first's validation colour pair
     * the other way round, so that no two curves of a run share one */
    static const enum ui_role loss[UI_RUN_MAX_JOBS] = { UI_SERIES0, UI_SERIES2, UI_SERIES3 };
    static const enum ui_role valid[UI_RUN_MAX_JOBS] = { UI_SERIES1, UI_SERIES3, UI_SERIES1 };
    k = k < 0 ? 0 : k >= UI_RUN_MAX_JOBS ? UI_RUN_MAX_JOBS - 1 : k;
    return val ? valid[k] : loss[k];
}

/* Whether the device computes on this machine's cores (the lab's survey). */
static int on_host_cores(const ui_lab *lab, const char *device)
{
    const nn_device_status *st = ui_device_status(lab, device);
    return st && st->available && st->on_host_cores;
}

/* "cpu nnlab vs gpu eager vs gpu graph" */
static void jobs_text(const ui_run *r, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < r->n_jobs && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? " vs " : "", ui_race_label(r, k));
}

/* "cpu on 6 threads, gpu eager on 1, gpu graph on 1" */
static void threads_text(const ui_run *r, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < r->n_jobs && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s on %d%s", k ? ", " : "", ui_race_label(r, k),
                               r->j[k].threads, k ? "" : r->j[k].threads == 1 ? " thread" : " threads");
}

void ui_race_title(const ui_lab *lab, char *t, size_t len, const char *data)
{
    const ui_run *r = &lab->run;
    char jobs[128], threads[192];
    int all_host = 1;
    jobs_text(r, jobs, sizeof jobs);
    threads_text(r, threads, sizeof threads);
    for (int k = 0; k < r->n_jobs; k++)
        all_host &= on_host_cores(lab, r->j[k].device);
    if (r->sequential)
        snprintf(t, len, "nnlab - %.64s: %s, one after the other, batch %d%.300s", r->cfg.preset.name, jobs,
                 r->cfg.batch, data);
    else if (r->cores > 0 && all_host)
        snprintf(t, len, "nnlab - %.64s: RACE sharing %d cores: %s, batch %d%.300s", r->cfg.preset.name, r->cores,
                 threads, r->cfg.batch, data);
    else if (r->j[0].threads > 0)    /* each its own cores */
        snprintf(t, len, "nnlab - %.64s: %s, RACE: %s, batch %d%.300s", r->cfg.preset.name, jobs, threads,
                 r->cfg.batch, data);
    else
        snprintf(t, len, "nnlab - %.64s: %s, RACE, sharing the CPU, batch %d%.300s", r->cfg.preset.name, jobs,
                 r->cfg.batch, data);
}

/* Whether a shipped profile matches the GPU of r's GPU job (nn_profile_for_device). */
static int gpu_own_profile(const ui_lab *lab, const ui_run *r, nn_gpu_profile *prof)
{
    for (int k = 0; k < r->n_jobs; k++) {
        const nn_device_status *st = r->j[k].way.gpu ? ui_gpu_here(lab, r->j[k].device) : NULL;
        if (st)
            return nn_profile_for_device(st->description, prof) == 0;
    }
    return 0;
}

int ui_race_ways_init(ui_lab *lab, nn_race_ways *w)
{
    const ui_run *r = &lab->run;
    const nn_calibration *cpu = NULL, *gpu = NULL;
    const char *why;
    nn_gpu_profile prof;
    char err[NN_ERR_LEN];
    int with_gpu = r->has_predicted;
    if (!nn_job_traits_of(r->cfg.kind)->trains)
        return 0;                    /* the ways price training steps; a Jacobian's are its panel's */
    for (int k = 0; k < r->n_jobs; k++) {
        const nn_calibration *c = nn_cal_store_get(&lab->cals, r->j[k].device, &why);
        if (r->j[k].way.gpu)
            with_gpu = 1, gpu = c;
        else if (!cpu)
            cpu = c;
    }
    if (!with_gpu || (!r->has_predicted && r->n_jobs < 2))
        return 0;
    /* the profile of the GPU racing when one ships (as Explain and `train
     * --race` price it), else the settings' */
    if (!gpu_own_profile(lab, r, &prof) && ui_predicted_profile(lab, &prof, err, sizeof err) != 0)
        return 0;
    nn_race_ways_predict(w, &r->cfg.preset, r->cfg.batch, cpu, gpu, &prof,
                         r->has_predicted ? (nn_gpu_way)r->predicted.way : NN_WAY_GRAPH);
    return 1;
}

/* The fastest GPU job that finished, or -1. */
static int best_gpu_job(const ui_run *r)
{
    int best = -1;
    for (int k = 0; k < r->n_jobs; k++) {
        const nn_snapshot *s = &r->j[k].snap;
        if (r->j[k].way.gpu && s->state == NN_JOB_DONE && s->us_per_step > 0 &&
            (best < 0 || s->us_per_step < r->j[best].snap.us_per_step))
            best = k;
    }
    return best;
}

void ui_race_ways_now(const ui_run *r, const nn_race_ways *w, nn_race_ways *out)
{
    *out = *w;
    for (int k = 0; k < r->n_jobs; k++)
        if (!r->j[k].way.gpu && r->j[k].snap.state == NN_JOB_DONE) {
            nn_race_lane_measure(&out->lane[NN_LANE_NNLAB_CPU], r->j[k].snap.us_per_step, 0, "measured");
            break;
        }
    int g = best_gpu_job(r);
    if (g >= 0) {
        nn_race_lane *l = &out->lane[NN_LANE_NNLAB_GPU];
        nn_race_lane_measure(l, r->j[g].snap.us_per_step, 0, "measured");
        snprintf(l->label, sizeof l->label, "%s", ui_race_label(r, g));
    }
}

/* The rows the ratios take: two a pair (its times may wrap). */
static int pair_rows(const ui_run *r)
{
    return r->n_jobs * (r->n_jobs - 1);
}

/* The ways' block: each pair's verdict and its two steps, the framework
 * pair first (the write-ups' question), a note on what "*" means. */
#define WAYS_ROWS 8
#define WAYS_ROWS_COMPACT 6

static int show_times(const ui_run *r)
{
    return r->n_jobs >= 2;           /* a predicted race's one job: its row says its time */
}

int ui_race_summary_rows(const ui_lab *lab, const nn_race_ways *w)
{
    const ui_run *r = &lab->run;
    int times = show_times(r) ? 1 + r->n_jobs + pair_rows(r) : 0;
    return times + (w ? WAYS_ROWS : 0);
}

/* " cpu fw* 1.17 ms/step": the lane's name as the job rows give it ("*":
 * predicted), its step. */
static void lane_row(ui_lab *lab, const nn_race_lane *l, ui_rect in, int y)
{
    char step[32];
    nn_race_step_text(l->present ? l->step_us : 0, step, sizeof step);
    ui_putf(y, in.x, in.w, ui_attr(lab, l->measured ? UI_OK : UI_DIM), " %s%s%s %s",
            l->way == NN_WAY_FRAMEWORK ? (l->gpu ? "gpu" : "cpu") : l->label,
            l->way == NN_WAY_FRAMEWORK ? " fw" : "", l->measured ? "" : "*", l->present ? step : "not priced");
}

/* "As a framework runs it:" / " GPU 1.44x slower" */
static int verdict_rows(ui_lab *lab, const nn_race_ways *w, int cpu, int gpu, const char *who, ui_rect in, int y)
{
    char v[96];
    int kind = nn_race_verdict_short(w, cpu, gpu, v, sizeof v);
    int called = kind == NN_VERDICT_GPU_FASTER || kind == NN_VERDICT_GPU_SLOWER;
    ui_putf(y++, in.x, in.w, A_BOLD, "%s:", who);
    /* the batch is the title's: " GPU 70.88x faster" fits a 24-column panel */
    ui_putf(y++, in.x, in.w, called ? (A_BOLD | ui_attr(lab, UI_OK)) : ui_attr(lab, UI_ERROR), " %s", v);
    return y;
}

static void ways_draw(ui_lab *lab, const nn_race_ways *w, ui_rect in, int y)
{
    y = verdict_rows(lab, w, NN_LANE_FW_CPU, NN_LANE_FW_GPU, "As a framework runs it", in, y);
    lane_row(lab, &w->lane[NN_LANE_FW_CPU], in, y++);
    lane_row(lab, &w->lane[NN_LANE_FW_GPU], in, y++);
    y = verdict_rows(lab, w, NN_LANE_NNLAB_CPU, NN_LANE_NNLAB_GPU, "nnlab's own code", in, y);
    lane_row(lab, &w->lane[NN_LANE_NNLAB_CPU], in, y++);
    lane_row(lab, &w->lane[NN_LANE_NNLAB_GPU], in, y);   /* "*": predicted (the jobs' note) */
}

/* Six rows: the framework pair whole, nnlab's verdict alone (its figures
 * are on the job rows). */
static void ways_draw_compact(ui_lab *lab, const nn_race_ways *w, ui_rect in, int y)
{
    y = verdict_rows(lab, w, NN_LANE_FW_CPU, NN_LANE_FW_GPU, "As a framework runs it", in, y);
    lane_row(lab, &w->lane[NN_LANE_FW_CPU], in, y++);
    lane_row(lab, &w->lane[NN_LANE_FW_GPU], in, y++);
    verdict_rows(lab, w, NN_LANE_NNLAB_CPU, NN_LANE_NNLAB_GPU, "nnlab's own code", in, y);
}

/* "cpu-ref  0.7881s  9.3k/s": a job's time and rate in a narrow panel; the
 * rate left out where the row has no room for it (a long label, 4 decimals). */
static void narrow_time(const char *label, int lw, int d, double total_s, const char *rate, ui_rect in, int y)
{
    char line[96];
    snprintf(line, sizeof line, "%-*s %6.*fs %6s/s", lw, label, d, total_s, rate);
    if (ui_text_cols(line) > in.w)
        snprintf(line, sizeof line, "%-*s %6.*fs", lw, label, d, total_s);
    ui_put(y, in.x, in.w, A_NORMAL, line);
}

/* A row per job: its label, whole time, time per step and rate. */
static int draw_times(ui_lab *lab, ui_rect in, int y, int wide, int d)
{
    const ui_run *r = &lab->run;
    int lw = ui_race_label_width(r);
    for (int k = 0; k < r->n_jobs; k++) {
        const ui_run_job *j = &r->j[k];
        nn_job_times t;
        char rate[16], per[24];
        nn_job_times_of(&j->snap, &t);
        ui_fmt_si(j->snap.has_rate ? j->snap.samples_per_s : NAN, rate, sizeof rate);
        nn_format_per_step(t.has_per_step ? t.per_step_s : NAN, per, sizeof per);
        if (wide)
            ui_putf(y++, in.x, in.w, A_NORMAL, "%-*s %7.*f s %11s %6s/s", lw, ui_race_label(r, k), d, t.total_s,
                    per, rate);
        else
            narrow_time(ui_race_label(r, k), lw, d, t.total_s, rate, in, y++);
    }
    return y;
}

/* Two jobs: the faster by name, its ratio, the two times shown divided
 * ("cpu 2.00x faster: 0.50 s / 0.25 s"); narrow, the times on a row of
 * their own, never cut. */
static void draw_two(ui_lab *lab, ui_rect in, int y, int wide, int d)
{
    const ui_run *r = &lab->run;
    nn_job_times t[2];
    int faster;
    double ratio = nn_race_ratio(&r->j[0].snap, &r->j[1].snap, &faster);
    char line[96];
    nn_job_times_of(&r->j[0].snap, &t[0]);
    nn_job_times_of(&r->j[1].snap, &t[1]);
    if (!(ratio > 0)) {
        ui_put(y, in.x, in.w, ui_attr(lab, UI_ERROR), "no ratio: a job did not finish");
        return;
    }
    snprintf(line, sizeof line, wide ? "%s %.2fx faster: %.*f s / %.*f s" : "%s %.2fx: %.*f/%.*f",
             ui_race_label(r, faster), ratio, d, t[!faster].total_s, d, t[faster].total_s);
    if ((int)strlen(line) <= in.w) {
        ui_put(y, in.x, in.w, ui_attr(lab, UI_OK), line);
        return;
    }
    ui_putf(y, in.x, in.w, ui_attr(lab, UI_OK), "%s %.2fx:", ui_race_label(r, faster), ratio);
    ui_putf(y + 1, in.x, in.w, ui_attr(lab, UI_OK), "%.*f/%.*f", d, t[!faster].total_s, d, t[faster].total_s);
}

/* One pair on two rows, broken after "than" so that no label is split:
 * "gpu graph 2.10x faster than" / "cpu nnlab: 1.23 s / 0.59 s", the
 * second row without its times when they do not fit. */
static void draw_pair(ui_lab *lab, ui_rect in, int y, char *line, double ratio)
{
    attr_t a = ui_attr(lab, ratio > 0 ? UI_OK : UI_ERROR);
    char *than = strstr(line, " than ");
    if (!than || (int)strlen(line) <= in.w) {
        ui_put(y, in.x, in.w, a, line);
        return;
    }
    than[5] = '\0';                 /* "... faster than" */
    char *second = than + 6, *times = strstr(second, ": ");
    if (times && (int)strlen(second) > in.w)
        *times = '\0';
    ui_put(y, in.x, in.w, a, line);
    ui_put(y + 1, in.x, in.w, a, second);
}

/* The ratio of every pair (nn_race_pair_text), the times shown divided,
 * on two rows each. */
static int draw_pairs(ui_lab *lab, ui_rect in, int y, int wide, int d)
{
    const ui_run *r = &lab->run;
    if (r->n_jobs == 2) {            /* one pair: the faster named, its times beside */
        draw_two(lab, in, y, wide, d);
        return y + 2;
    }
    for (int a = 0; a < r->n_jobs; a++)
        for (int b = a + 1; b < r->n_jobs; b++) {
            char line[256];
            double ratio = nn_race_pair_text(ui_race_label(r, a), &r->j[a].snap, ui_race_label(r, b),
                                             &r->j[b].snap, line, sizeof line);
            draw_pair(lab, in, y, line, ratio);
            y += 2;
        }
    return y;
}

/* A job's name in the compact summary: its way on a GPU ("eager",
 * "graph"), its device on a CPU ("cpu"). */
static const char *short_name(const ui_run *r, int k)
{
    const nn_race_job *j = &r->j[k].way;
    if (!j->gpu)
        return r->j[k].device;
    return nn_race_way_word(j, nn_race_way(j, &r->cfg, &r->j[k].snap));
}

int ui_race_summary_rows_compact(const ui_lab *lab, const nn_race_ways *w)
{
    const ui_run *r = &lab->run;
    return w ? WAYS_ROWS_COMPACT : 1 + r->n_jobs * (r->n_jobs - 1) / 2;
}

void ui_race_summary_draw_compact(ui_lab *lab, const nn_race_ways *w, ui_rect in, int y)
{
    const ui_run *r = &lab->run;
    nn_race_ways now;
    if (w) {                         /* the verdicts matter most: the ways alone */
        ui_race_ways_now(r, w, &now);
        ways_draw_compact(lab, &now, in, y);
        return;
    }
    ui_putf(y++, in.x, in.w, A_BOLD, "Summary (%s)", r->sequential ? "in turn" : "raced");
    for (int a = 0; a < r->n_jobs; a++)
        for (int b = a + 1; b < r->n_jobs; b++) {
            int faster;
            double ratio = nn_race_ratio(&r->j[a].snap, &r->j[b].snap, &faster);
            if (ratio > 0)
                ui_putf(y++, in.x, in.w, ui_attr(lab, UI_OK), "%s %.2fx %s", short_name(r, faster ? b : a),
                        ratio, short_name(r, faster ? a : b));
            else
                ui_putf(y++, in.x, in.w, ui_attr(lab, UI_ERROR), "%s, %s: no ratio", short_name(r, a),
                        short_name(r, b));
        }
}

void ui_race_summary_draw(ui_lab *lab, const nn_race_ways *w, ui_rect in, int y)
{
    const ui_run *r = &lab->run;
    nn_race_ways now;
    int wide = in.w >= 34, d = 2;
    if (w) {                         /* the write-ups' question first */
        ui_race_ways_now(r, w, &now);
        ways_draw(lab, &now, in, y);
        y += WAYS_ROWS;
    }
    if (!show_times(r))
        return;
    for (int a = 0; a < r->n_jobs; a++)     /* the decimals that tell every pair apart */
        for (int b = a + 1; b < r->n_jobs; b++) {
            int db = nn_race_decimals(&r->j[a].snap, &r->j[b].snap);
            d = db > d ? db : d;
        }
    if (wide)
        ui_putf(y++, in.x, in.w, A_BOLD, "Measured, %s", r->sequential ? "one after the other" : "raced");
    else
        ui_putf(y++, in.x, in.w, A_BOLD, "Measured (%s)", r->sequential ? "in turn" : "raced");
    y = draw_times(lab, in, y, wide, d);
    draw_pairs(lab, in, y, wide, d);
}

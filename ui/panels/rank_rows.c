/* ui/panels/rank_rows.c - a job's rows per rank; see rank_rows.h. */
#include "rank_rows.h"

#include <stdio.h>
#include <string.h>

#include "draw.h"
#include "text/format.h"

int ui_rank_rows_wanted(const ui_run *r, int k)
{
    int n = r->j[k].way.ranks;
    if (n < 2)
        return 0;
    return n < UI_RANK_ROWS_MAX ? n : UI_RANK_ROWS_MAX;
}

int ui_rank_rows_total(const ui_run *r)
{
    int rows = 0;
    for (int k = 0; k < r->n_jobs; k++)
        rows += ui_rank_rows_wanted(r, k);
    return rows;
}

/* "allreduce 46 of 412 us (11%) measured": its share of the rank's own step. */
static void allreduce_text(const nn_rank_progress *p, char *buf, size_t len)
{
    if (p->has_allreduce && p->us_per_step > 0)
        snprintf(buf, len, "allreduce %.0f of %.0f us (%.0f%%) measured", p->allreduce_us, p->us_per_step,
                 100.0 * p->allreduce_us / p->us_per_step);
    else
        snprintf(buf, len, "allreduce not timed yet");
}

/* One rank's row: "rank 1 [####------]  45% 180/400  allreduce 46 of 412 us (11%)
 * measured  1.2k sa/s  ETA 0:03", the parts that fit, in that order. */
static void draw_rank(ui_lab *lab, const nn_rank_progress *p, int rank, int ranks, int y, int x, int w)
{
    char bar[256], parts[256], fitted[256], rate[24], eta[24], ar[64];
    int head = ui_putf(y, x, w, A_NORMAL, "  rank %d ", rank);
    if (!p->heard) {
        ui_put(y, x + head, w - head, ui_attr(lab, UI_DIM), "starting: no progress line yet");
        return;
    }
    double frac = p->steps > 0 ? (double)p->step / (double)p->steps : 0;
    ui_bar_text(bar, sizeof bar, 10, frac, lab->utf8);
    ui_put(y, x + head, 10, ui_attr(lab, UI_SERIES0), bar);
    head += 10;
    /* its share of the global batch's samples: every rank takes every step */
    ui_fmt_si(p->samples_per_s / (ranks > 0 ? ranks : 1), rate, sizeof rate);
    ui_fmt_duration(p->us_per_step > 0 && p->steps > p->step ? (double)(p->steps - p->step) * p->us_per_step / 1e6 : 0,
                    eta, sizeof eta);
    allreduce_text(p, ar, sizeof ar);
    if (p->us_per_step > 0)
        snprintf(parts, sizeof parts, "%3.0f%% %ld/%ld  %s  %s sa/s  ETA %s", 100.0 * frac, p->step, p->steps, ar,
                 rate, eta);
    else
        snprintf(parts, sizeof parts, "%3.0f%% %ld/%ld  %s", 100.0 * frac, p->step, p->steps,
                 nn_job_state_name(p->state));
    ui_fit_parts(parts, w - head - 1, fitted, sizeof fitted);
    ui_putf(y, x + head, w - head, A_NORMAL, " %s", fitted);
}

/* The ranks that did not get a row of their own: their steps' range. */
static void draw_rest(ui_lab *lab, const nn_snapshot *s, int first, int y, int x, int w)
{
    long lo = -1, hi = -1;
    int heard = 0, shown = s->launched_ranks < NN_RANKS_JOB_MAX ? s->launched_ranks : NN_RANKS_JOB_MAX;
    for (int r = first; r < shown; r++) {
        const nn_rank_progress *p = &s->rank_rows[r];
        if (!p->heard)
            continue;
        heard++;
        lo = lo < 0 || p->step < lo ? p->step : lo;
        hi = p->step > hi ? p->step : hi;
    }
    if (heard == 0)
        ui_putf(y, x, w, ui_attr(lab, UI_DIM), "  ranks %d-%d: no progress line yet", first, s->launched_ranks - 1);
    else
        ui_putf(y, x, w, A_NORMAL, "  ranks %d-%d: steps %ld to %ld of %ld (%d heard)", first, s->launched_ranks - 1,
                lo, hi, s->total_steps, heard);
}

void ui_rank_rows_draw(ui_lab *lab, const ui_run_job *j, int y, int x, int w, int rows)
{
    const nn_snapshot *s = &j->snap;
    int ranks = j->way.ranks;
    if (rows <= 0 || ranks < 2)
        return;
    if (!j->started) {
        ui_putf(y, x, w, ui_attr(lab, UI_DIM), "  %d ranks, a bar each once they start", ranks);
        return;
    }
    int single = ranks <= rows ? ranks : rows - 1;
    for (int r = 0; r < single; r++)
        draw_rank(lab, &s->rank_rows[r], r, ranks, y + r, x, w);
    if (single < ranks)
        draw_rest(lab, s, single, y + single, x, w);
}

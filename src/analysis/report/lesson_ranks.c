/* src/analysis/report/lesson_ranks.c - a ranks step's result: N
 * data-parallel ranks at the step's batch each against one rank at their
 * global batch, from the cost model's one prediction (nn_ranks_predict,
 * which `nnlab explain --ranks` prints too), in the words the CLI, the
 * lab and the handout share; or, for a step with measure = true, from the
 * two runs measured here (nn_lesson_ranks_measured_result). */
#include "nnlab/lesson_report.h"
#include "lesson_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnlab/device.h"
#include "nnlab/sweep.h"
#include "nnlab/verdict.h"
#include "util.h"

int nn_lesson_ranks_link(const nn_lesson_step *s, nn_link *l, char *err, size_t err_len)
{
    char why[NN_ERR_LEN];
    const char *name = s->link[0] ? s->link : nn_link_default_name(nn_device_kind_of(s->device).gpu);
    if (nn_link_find(name, l, why, sizeof why) == 0)
        return 0;
    return nn_errorf(err, err_len, "[%s] link %s%s: %s", s->section, name, s->link[0] ? "" : " (the default)", why);
}

/* The five step times: one rank's, the sum and its waited part, N ranks',
 * one rank at the global batch. */
static void ranks_numbers(const nn_ranks_prediction *x, const nn_link *l, const char *source, nn_lesson_result *r)
{
    char what[96], over[NN_TEXT_LEN];
    snprintf(over, sizeof over, "predicted over %s (%s)", l->name,
             l->measured ? "its figures measured by nnlab calibrate --link" : "its datasheet's figures");
    snprintf(what, sizeof what, "one rank's step at batch %d", x->rank_batch);
    nn_lesson_add_number(r, what, x->rank_step_us, 0, source);
    snprintf(what, sizeof what, "the all-reduce (%.3g MB, %d hops)", x->gradient_bytes / 1e6, 2 * (x->ranks - 1));
    nn_lesson_add_number(r, what, x->allreduce_us, 0, over);
    nn_lesson_add_number(r, "the all-reduce waited for", x->exposed_us, 0, over);
    snprintf(what, sizeof what, "%d ranks' step", x->ranks);
    nn_lesson_add_number(r, what, x->step_us, 0, source);
    snprintf(what, sizeof what, "one rank at batch %d", x->global_batch);
    nn_lesson_add_number(r, what, x->one_rank_us, 0, source);
}

/* expect = pays: yes when N ranks are ahead beyond the calibration's
 * spread, no when behind, none when too close to call. */
static void ranks_expect(const nn_lesson_step *s, const nn_ranks_prediction *x, const nn_calibration *cal,
                         nn_lesson_result *r)
{
    nn_verdict v;
    double spread = nn_calibration_spread(cal);
    int kind = nn_verdict_of(x->one_rank_us, spread, x->step_us, spread, nn_calibration_contradictory(cal), &v);
    if (s->expect != NN_EXPECT_PAYS)
        return;
    if (kind != NN_VERDICT_GPU_FASTER && kind != NN_VERDICT_GPU_SLOWER) {
        snprintf(r->expected_why, sizeof r->expected_why, "no lead called here (%s): every answer stands",
                 nn_verdict_kind_name(kind));
        return;
    }
    int pays = kind == NN_VERDICT_GPU_FASTER;
    r->expected = nn_lesson_key_of(s, pays ? "yes" : "no");
    snprintf(r->expected_why, sizeof r->expected_why, "%d ranks are %.2fx one rank's speed on the same %d samples "
             "(predicted)", x->ranks, x->speedup, x->global_batch);
}

void nn_lesson_ranks_result(const nn_lesson_step *s, const nn_preset *p, const nn_calibration *cal,
                            const nn_gpu_profile *prof, const nn_link *l, const char *source, nn_lesson_result *r)
{
    nn_explain_options opt;
    nn_ranks_prediction x;
    char line[3 * NN_TEXT_LEN];
    int batch = nn_lesson_batch(s, p), gpu = nn_device_kind_of(s->device).gpu;
    memset(r, 0, sizeof *r);
    r->writeup = -1;                 /* no write-up ran ranks */
    nn_lesson_explain_options(s, prof, &opt);
    nn_ranks_predict(p, batch, s->ranks, cal, &opt, l, s->overlap, &x);
    if (!(x.step_us > 0) || !(x.one_rank_us > 0)) {
        snprintf(r->why, sizeof r->why, "the model gives no step (%s)", source);
        return;
    }
    r->ran = 1;
    nn_strlcpy(r->source, "predicted", sizeof r->source);
    snprintf(r->headline, sizeof r->headline, "%d ranks: %.2fx one rank", x.ranks, x.speedup);
    snprintf(r->label, sizeof r->label, "%d %s ranks at batch %d each over %s, the all-reduce %s backward: %s",
             x.ranks, gpu ? "GPU" : "CPU", x.rank_batch, l->name, s->overlap ? "during" : "after", source);
    ranks_numbers(&x, l, source, r);
    nn_ranks_words(&x, line, sizeof line);
    nn_lesson_result_add_line(r, line);
    snprintf(line, sizeof line, "speedup %.2fx, efficiency %.0f%%: the all-reduce %.1f us, %.1f us of it waited "
             "for (%.0f%% of the step; %s), %.1f us of it the hops' fixed costs (predicted)", x.speedup,
             100 * x.efficiency, x.allreduce_us, x.exposed_us, 100 * x.allreduce_share,
             s->overlap ? "the rest hidden behind backward" : "no overlap: all of it", x.hops_us);
    nn_lesson_result_add_line(r, line);
    snprintf(line, sizeof line, "%s: %.4g GB/s each way, %.3g us a hop (%s)", l->name, l->bandwidth_gbps, l->hop_us,
             nn_link_origin(l));
    nn_lesson_result_add_line(r, line);
    ranks_expect(s, &x, cal, r);
}

/* expect = pays for measured steps: a lead only beyond a measurement's noise. */
static void measured_expect(const nn_lesson_step *s, const nn_lesson_ranks_run *m, double speedup,
                            nn_lesson_result *r)
{
    if (s->expect != NN_EXPECT_PAYS)
        return;
    if (fabs(speedup - 1.0) <= NN_SWEEP_NOISE) {
        snprintf(r->expected_why, sizeof r->expected_why, "too close to call: %.2fx is within the %.0f%% two runs "
                 "of one step differ by here; every answer stands", speedup, 100 * NN_SWEEP_NOISE);
        return;
    }
    r->expected = nn_lesson_key_of(s, speedup > 1.0 ? "yes" : "no");
    snprintf(r->expected_why, sizeof r->expected_why, "%d ranks are %.2fx one rank's speed on the same %d samples "
             "(measured)", s->ranks, speedup, s->ranks * m->batch);
}

void nn_lesson_ranks_measured_result(const nn_lesson_step *s, const nn_lesson_ranks_run *m, nn_lesson_result *r)
{
    char what[96], line[3 * NN_TEXT_LEN];
    nn_ranks_prediction x;           /* the words' figures, measured here */
    memset(r, 0, sizeof *r);
    r->writeup = -1;
    if (!(m->one_us > 0) || !(m->ranks_us > 0)) {
        snprintf(r->why, sizeof r->why, "the ranks' runs gave no step (%s)", m->how);
        return;
    }
    memset(&x, 0, sizeof x);
    x.ranks = s->ranks;
    x.rank_batch = m->batch;
    x.global_batch = s->ranks * m->batch;
    x.speedup = m->one_us / m->ranks_us;
    x.efficiency = x.speedup / s->ranks;
    x.allreduce_share = m->allreduce_us / m->ranks_us;
    r->ran = 1;
    nn_strlcpy(r->source, "measured", sizeof r->source);
    snprintf(r->headline, sizeof r->headline, "%d ranks: %.2fx one rank", s->ranks, x.speedup);
    snprintf(r->label, sizeof r->label, "%d CPU ranks at batch %d each on this machine, against one rank at batch "
             "%d: measured (%s)", s->ranks, m->batch, x.global_batch, m->how);
    snprintf(what, sizeof what, "%d ranks' step", s->ranks);
    nn_lesson_add_number(r, what, m->ranks_us, 1, "measured");
    nn_lesson_add_number(r, "the all-reduce waited for", m->allreduce_us, 1, "measured");
    snprintf(what, sizeof what, "one rank at batch %d", x.global_batch);
    nn_lesson_add_number(r, what, m->one_us, 1, "measured");
    nn_ranks_words(&x, line, sizeof line);
    nn_lesson_result_add_line(r, line);
    snprintf(line, sizeof line, "speedup %.2fx, efficiency %.0f%%: the ranks waited %.1f us a step for the sum "
             "(%.0f%% of their step; measured), on cores they share", x.speedup, 100 * x.efficiency,
             m->allreduce_us, 100 * x.allreduce_share);
    nn_lesson_result_add_line(r, line);
    measured_expect(s, m, x.speedup, r);
}

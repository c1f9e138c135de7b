/* src/analysis/report/lesson_report.c - a lesson step's result read from
 * the jobs that ran it: a race's four lanes, a sweep's pairs, Explain's
 * parts; its headline, its labels, the answer its figures give and the
 * write-up's verdict beside it. Every figure is the shared code's
 * (race_ways.c, sweep_pairs.c, explain.c): nothing is priced twice. See
 * nnlab/lesson_report.h. */
#include "nnlab/lesson_report.h"
#include "lesson_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "nnlab/device.h"
#include "nnlab/verdict.h"
#include "util.h"

int nn_lesson_batch(const nn_lesson_step *s, const nn_preset *p)
{
    if (s->batch > 0)
        return s->batch;
    return p->measured_batch > 0 ? p->measured_batch : p->batch;
}

nn_gpu_way nn_lesson_gpu_way(const nn_lesson_step *s)
{
    if (s->way == NN_WAY_EAGER || s->way == NN_WAY_GRAPH)
        return (nn_gpu_way)s->way;
    return s->graph == 0 ? NN_WAY_EAGER : NN_WAY_GRAPH;
}

/* The key of the answer labelled label, or 0. */
char nn_lesson_key_of(const nn_lesson_step *s, const char *label)
{
    for (int k = 0; k < s->n_answers; k++)
        if (strcasecmp(s->answers[k].label, label) == 0)
            return s->answers[k].key;
    return 0;
}

const char *nn_lesson_answer_label(const nn_lesson_step *s, char key)
{
    for (int k = 0; k < s->n_answers; k++)
        if (s->answers[k].key == tolower((unsigned char)key))
            return s->answers[k].label;
    return "?";
}

void nn_lesson_add_number(nn_lesson_result *r, const char *what, double us, int measured, const char *source)
{
    if (r->n_numbers == NN_LESSON_MAX_NUMBERS || !(us >= 0))   /* a part of 0 us is shown: none */
        return;
    nn_lesson_number *n = &r->number[r->n_numbers++];
    nn_strlcpy(n->what, what, sizeof n->what);
    n->us = us;
    n->measured = measured;
    nn_strlcpy(n->source, source, sizeof n->source);
}

void nn_lesson_result_add_line(nn_lesson_result *r, const char *text)
{
    if (r->n_lines < NN_LESSON_MAX_LINES)
        nn_strlcpy(r->line[r->n_lines++], text, sizeof r->line[0]);
}

/* The expected answer from a verdict: the device it names faster (or
 * slower); none when the verdict calls no lead. */
void nn_lesson_expect_verdict(const nn_lesson_step *s, int kind, nn_lesson_result *r)
{
    int faster_gpu = kind == NN_VERDICT_GPU_FASTER;
    if (s->expect != NN_EXPECT_FASTER && s->expect != NN_EXPECT_SLOWER)
        return;
    if (kind != NN_VERDICT_GPU_FASTER && kind != NN_VERDICT_GPU_SLOWER) {
        snprintf(r->expected_why, sizeof r->expected_why, "no lead called here (%s): every answer stands",
                 nn_verdict_kind_name(kind));
        return;
    }
    int gpu = s->expect == NN_EXPECT_FASTER ? faster_gpu : !faster_gpu;
    r->expected = nn_lesson_key_of(s, gpu ? "GPU" : "CPU");
    snprintf(r->expected_why, sizeof r->expected_why, "the %s is %s here", gpu ? "GPU" : "CPU",
             s->expect == NN_EXPECT_FASTER ? "faster" : "slower");
}

/* The write-up's direction at batch beside this machine's verdict kind. */
void nn_lesson_compare_writeup(const nn_preset *p, const char *word, int batch, int kind, int predicted_gpu,
                               nn_lesson_result *r)
{
    int wb = p->measured_batch > 0 ? p->measured_batch : p->batch;
    r->writeup = -1;
    if (!(p->measured_cpu_s > 0) || !(p->measured_gpu_s > 0))
        return;
    double ratio = p->measured_gpu_s / p->measured_cpu_s;
    int n = snprintf(r->writeup_text, sizeof r->writeup_text, "the write-up at %s %d: CPU %.4g s, GPU %.4g s "
                     "(the GPU %.2fx %s)", word, wb, p->measured_cpu_s, p->measured_gpu_s, ratio >= 1 ? ratio : 1 / ratio,
                     ratio >= 1 ? "slower" : "faster");
    if (n < 0 || (size_t)n >= sizeof r->writeup_text)
        return;
    char *tail = r->writeup_text + n;
    size_t room = sizeof r->writeup_text - (size_t)n;
    if (batch != wb) {
        snprintf(tail, room, "; this step runs %s %d, not the write-up's", word, batch);
        return;
    }
    if (kind != NN_VERDICT_GPU_FASTER && kind != NN_VERDICT_GPU_SLOWER) {
        snprintf(tail, room, "; this machine calls no lead (%s)", nn_verdict_kind_name(kind));
        return;
    }
    r->writeup = (kind == NN_VERDICT_GPU_SLOWER) == (ratio >= 1);
    if (r->writeup)
        snprintf(tail, room, ": this machine agrees");
    else
        snprintf(tail, room, ": this machine disagrees, as its %s not the write-up's (a GPU figure %s; the "
                 "write-up's host and GPU were others)", predicted_gpu ? "GPU is predicted," : "devices are",
                 predicted_gpu ? "from a profile" : "measured here");
}

/* ---- a race ----------------------------------------------------------------------------------- */

void nn_lesson_race_result(const nn_lesson_step *s, const nn_preset *p, const nn_race_ways *w, nn_lesson_result *r)
{
    int cpu = s->pair == NN_PAIR_OF_NNLAB ? NN_LANE_NNLAB_CPU : NN_LANE_FW_CPU;
    int gpu = s->pair == NN_PAIR_OF_NNLAB ? NN_LANE_NNLAB_GPU : NN_LANE_FW_GPU;
    char fw[3 * NN_TEXT_LEN], own[3 * NN_TEXT_LEN];
    const nn_race_lane *c = &w->lane[cpu], *g = &w->lane[gpu];
    memset(r, 0, sizeof *r);
    r->ran = 1;
    int kind = nn_race_verdict_short(w, cpu, gpu, r->headline, sizeof r->headline);
    snprintf(r->label, sizeof r->label, "%s at batch %d: CPU %s, GPU %s", s->pair == NN_PAIR_OF_NNLAB ?
             "nnlab's own code" : "as a framework runs it", w->batch, c->present ? c->source : "not priced",
             g->present ? g->source : "not priced");
    nn_race_ways_summary(w, fw, sizeof fw, own, sizeof own);
    nn_lesson_result_add_line(r, s->pair == NN_PAIR_OF_NNLAB ? own : fw);
    nn_lesson_result_add_line(r, s->pair == NN_PAIR_OF_NNLAB ? fw : own);
    for (int k = 0; k < NN_LANES; k++)
        if (w->lane[k].present)
            nn_lesson_add_number(r, w->lane[k].label, w->lane[k].step_us, w->lane[k].measured, w->lane[k].source);
    nn_lesson_expect_verdict(s, kind, r);
    if (s->pair == NN_PAIR_OF_NNLAB) {
        r->writeup = -1;
        snprintf(r->writeup_text, sizeof r->writeup_text, "the write-up ran a framework; this pair is nnlab's own "
                 "code, which it never ran");
        return;
    }
    nn_lesson_compare_writeup(p, "batch", w->batch, kind, g->present && !g->measured, r);
}

/* ---- a sweep ---------------------------------------------------------------------------------- */

static double point_us(const nn_sweep *sw, int d, int i)
{
    const nn_sweep_point *pt = &sw->pt[d][i];
    if (pt->state != NN_POINT_DONE)
        return NAN;
    return pt->predicted ? pt->predicted_us : pt->measured.step_us;
}

/* The verdict of pair at batch index i. */
static int pair_verdict(const nn_sweep *sw, const nn_sweep_pair *pr, int i)
{
    nn_verdict v;
    return nn_verdict_of(point_us(sw, pr->base, i), nn_sweep_relative_spread(sw, pr->base, i),
                         point_us(sw, pr->challenger, i), nn_sweep_relative_spread(sw, pr->challenger, i),
                         pr->contradictory, &v);
}

static void sweep_numbers(const nn_sweep *sw, const nn_sweep_pair *pr, int last, nn_lesson_result *r)
{
    int dev[2] = { pr->base, pr->challenger }, at[2] = { 0, last };
    char what[96], source[NN_TEXT_LEN];
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++) {
            snprintf(what, sizeof what, "%s %s at batch %d", sw->device[dev[k]], nn_sweep_way_word(sw, dev[k]),
                     sw->batch[at[j]]);
            nn_sweep_source_text(sw, dev[k], source, sizeof source);
            nn_lesson_add_number(r, what, point_us(sw, dev[k], at[j]), !sw->predicted[dev[k]] && !sw->pt[dev[k]][at[j]].predicted,
                       source);
        }
}

static void sweep_expect(const nn_lesson_step *s, const nn_sweep *sw, const nn_sweep_pair *pr, int last,
                         nn_lesson_result *r)
{
    if (s->expect != NN_EXPECT_OVERTAKES) {
        nn_lesson_expect_verdict(s, pair_verdict(sw, pr, last), r);
        return;
    }
    if (pr->contradictory) {
        snprintf(r->expected_why, sizeof r->expected_why, "no crossover named on a contradictory calibration");
        return;
    }
    r->expected = nn_lesson_key_of(s, pr->crossover >= 0 ? "yes" : "no");
    snprintf(r->expected_why, sizeof r->expected_why, "%s", r->headline);
}

/* The pair a sweep step reads: its framework pair, else nnlab's; -1 none. */
static int step_pair(const nn_sweep *sw, nn_sweep_pair *out)
{
    nn_sweep_pair pairs[2 * NN_SWEEP_MAX_DEVICES];
    int n = nn_sweep_pairs(sw, pairs, 2 * NN_SWEEP_MAX_DEVICES);
    for (int k = 0; k < n; k++)
        if (pairs[k].kind == NN_PAIR_FRAMEWORK || pairs[k].kind == NN_PAIR_NNLAB) {
            *out = pairs[k];
            return 0;
        }
    return -1;
}

void nn_lesson_sweep_result(const nn_lesson_step *s, const nn_sweep *sw, nn_lesson_result *r)
{
    nn_sweep_pair pr;
    char words[160], base[80], ch[80], src_b[NN_TEXT_LEN], src_c[NN_TEXT_LEN];
    int last = sw->n_batches - 1, wb = -1;
    memset(r, 0, sizeof *r);
    r->writeup = -1;
    if (step_pair(sw, &pr) != 0 || last < 0) {
        snprintf(r->why, sizeof r->why, "the sweep has no CPU-GPU pair to compare");
        return;
    }
    r->ran = 1;
    nn_sweep_device_label(sw, pr.base, base, sizeof base);
    nn_sweep_device_label(sw, pr.challenger, ch, sizeof ch);
    nn_sweep_crossover_words(sw, &pr, words, sizeof words);
    if (pr.crossover >= 0 && !pr.contradictory)
        snprintf(r->headline, sizeof r->headline, "GPU ahead from batch %d", sw->batch[pr.crossover]);
    else
        snprintf(r->headline, sizeof r->headline, "GPU not ahead up to batch %d", sw->batch[last]);
    nn_sweep_source_text(sw, pr.base, src_b, sizeof src_b);
    nn_sweep_source_text(sw, pr.challenger, src_c, sizeof src_c);
    if (snprintf(r->label, sizeof r->label, "%s: CPU %s, GPU %s", nn_pair_kind_name(pr.kind), src_b, src_c) >=
        (int)sizeof r->label)
        snprintf(r->label, sizeof r->label, "%s", nn_pair_kind_name(pr.kind));
    snprintf(r->line[r->n_lines++], sizeof r->line[0], "%s: %s against %s: %s%s", nn_pair_kind_name(pr.kind), ch,
             base, words, pr.predicted ? " (predicted)" : "");
    sweep_numbers(sw, &pr, last, r);
    sweep_expect(s, sw, &pr, last, r);
    const nn_preset *p = &sw->base.preset;
    for (int i = 0; i <= last; i++)
        wb = sw->batch[i] == (p->measured_batch > 0 ? p->measured_batch : p->batch) ? i : wb;
    nn_lesson_compare_writeup(p, "batch", wb >= 0 ? sw->batch[wb] : -1, wb >= 0 ? pair_verdict(sw, &pr, wb) : NN_VERDICT_MISSING,
                    pr.predicted, r);
}

/* ---- explain ---------------------------------------------------------------------------------- */

void nn_lesson_explain_options(const nn_lesson_step *s, const nn_gpu_profile *prof, nn_explain_options *opt)
{
    nn_gpu_way way = s->way >= 0 ? (nn_gpu_way)s->way : NN_WAY_FRAMEWORK;
    memset(opt, 0, sizeof *opt);
    if (!nn_device_kind_of(s->device).gpu) {
        opt->host_memory = 1;
        return;
    }
    nn_gpu_way_options(way, prof ? &prof->framework_gpu : NULL, opt);
    if (s->data_on_device >= 0)
        opt->data_on_device = s->data_on_device;
    if (s->graph >= 0)
        opt->graph = s->graph;
    if (s->sync_every_step >= 0)
        opt->sync_every_step = s->sync_every_step;
    if (s->pinned >= 0)
        opt->pinned = s->pinned;
}

void nn_lesson_explain_result(const nn_lesson_step *s, const nn_preset *p, const nn_calibration *cal,
                              const nn_gpu_profile *prof, const char *source, nn_lesson_result *r)
{
    static const char *const parts[] = { "launches", "copies", "read-back", "work" };
    nn_explain_options opt;
    nn_explanation e;
    int batch = nn_lesson_batch(s, p), big = 0;
    memset(r, 0, sizeof *r);
    r->writeup = -1;
    nn_lesson_explain_options(s, prof, &opt);
    nn_explain(p, batch, cal, &opt, &e);
    double us[4] = { e.issue_us, e.copy_us, e.sync_us, e.work_us + e.fixed_us + e.calls_us };
    double sum = us[0] + us[1] + us[2] + us[3];
    if (!(sum > 0) || !(e.predicted_us > 0)) {
        snprintf(r->why, sizeof r->why, "the model gives no step (%s)", source);
        return;
    }
    r->ran = 1;
    for (int k = 0; k < 4; k++) {
        big = us[k] > us[big] ? k : big;
        nn_lesson_add_number(r, parts[k], us[k], 0, source);
    }
    nn_lesson_add_number(r, "the whole step", e.predicted_us, 0, source);
    snprintf(r->headline, sizeof r->headline, "%s %.0f%% of the parts", parts[big], 100 * us[big] / sum);
    snprintf(r->label, sizeof r->label, "%s %s at batch %d, %s", opt.host_memory ? "the CPU's" : "the GPU's",
             opt.host_memory ? "step" : nn_gpu_way_name(s->way >= 0 ? (nn_gpu_way)s->way : NN_WAY_FRAMEWORK),
             batch, source);
    /* the parts can add up to more than the step: a GPU works while its host issues */
    snprintf(r->line[r->n_lines++], sizeof r->line[0], "%.0f us a step; its parts: launches %.0f, copies %.0f, "
             "read-back %.0f, work %.0f (%s; %d operations issued; regime: %s)", e.predicted_us, us[0], us[1], us[2],
             us[3], source, e.ops, nn_regime_name(e.regime));
    if (e.advice[0])
        nn_lesson_result_add_line(r, e.advice);
    if (s->expect == NN_EXPECT_LARGEST) {
        r->expected = nn_lesson_key_of(s, parts[big]);
        snprintf(r->expected_why, sizeof r->expected_why, "%s are the largest part", parts[big]);
    }
}

/* ---- the answer ------------------------------------------------------------------------------- */

int nn_lesson_answer_text(const nn_lesson_step *s, char given, const nn_lesson_result *r, char *buf, size_t len)
{
    given = (char)tolower((unsigned char)given);
    if (!s->question[0]) {
        snprintf(buf, len, "no question");
        return -1;
    }
    if (!given || given == '-') {
        if (r->expected)
            snprintf(buf, len, "answer -: none given; this machine says %c (%s)", r->expected,
                     nn_lesson_answer_label(s, r->expected));
        else
            snprintf(buf, len, "answer -: none given");
        return -1;
    }
    if (!r->expected) {
        snprintf(buf, len, "answer %c (%s): nothing to check it against (%s)", given, nn_lesson_answer_label(s, given),
                 r->expected_why[0] ? r->expected_why : s->expect ? "not measured" : "a show of hands");
        return -1;
    }
    int match = given == r->expected;
    snprintf(buf, len, "answer %c (%s): %s %c (%s): %s", given, nn_lesson_answer_label(s, given),
             match ? "right, this machine says" : "this machine says", r->expected,
             nn_lesson_answer_label(s, r->expected), r->expected_why);
    return match;
}

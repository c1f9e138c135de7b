/* src/analysis/model/observe.c - a snapshot read once for every front end; see observe.h. */
#include "nnlab/observe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the measured step ---------------------------------------------------------------- */

/* The host's clock timed the step from the batch copy to the loss read-back:
 * its phases are the step's parts. A graph job issues forward, backward and
 * optimizer as one replay, whose host time is what the other parts leave. */
void nn_measure_step(const nn_snapshot *s, nn_step_measure *out)
{
    const unsigned in_graph = (1u << NN_PHASE_FORWARD) | (1u << NN_PHASE_BACKWARD) | (1u << NN_PHASE_OPTIMIZER);
    double sum = 0;
    memset(out, 0, sizeof *out);
    if (s->timed_steps <= 0 || !(s->us_per_step > 0))
        return;
    out->timed_steps = s->timed_steps;
    out->step_us = s->us_per_step;
    out->adam_fused_layers = s->adam_fused_layers;
    for (int p = 0; p < NN_PHASE_COUNT; p++) {
        if (s->has_graph_us && (in_graph & (1u << p)))
            continue;
        if (p == NN_PHASE_ALLREDUCE && s->ranks <= 1)
            continue;                /* one rank sums nothing */
        out->part_us[p] = s->host_phase_us[p];
        out->part_valid |= 1u << p;
        sum += out->part_us[p];
    }
    if (s->has_graph_us) {
        out->part_us[NN_PART_GRAPH] = out->step_us > sum ? out->step_us - sum : 0.0;
        out->part_valid |= 1u << NN_PART_GRAPH;
    }
}

const char *nn_step_part_label(const nn_step_measure *m, int part)
{
    if (part == NN_PHASE_BACKWARD && m->adam_fused_layers > 0)
        return "backward+adam";
    return nn_step_part_name(part);
}

const char *nn_step_part_key(int part)
{
    return part == NN_PHASE_ALLREDUCE ? "allreduce" : nn_step_part_name(part);
}

double nn_measured_step_us(const nn_snapshot *s)
{
    return s->timed_steps > 0 && s->us_per_step > 0 ? s->us_per_step : 0.0;
}

const char *nn_step_part_name(int part)
{
    if (part >= 0 && part < NN_PHASE_COUNT)
        return nn_phase_name((enum nn_phase)part);
    return part == NN_PART_GRAPH ? "graph" : "?";
}

/* Microseconds for a sentence: whole ones from 100 on ("2511", never
 * "2.51e+03"), three digits below. */
static const char *us_words(double us, char *buf, size_t len)
{
    snprintf(buf, len, fabs(us) >= 100 ? "%.0f" : "%.3g", us);
    return buf;
}

/* The measured parts one after the other ("forward 9.1, backward 12,
 * optimizer 50 us") and the largest; -1 when none was measured. */
static int parts_text(const nn_step_measure *m, char *buf, size_t len)
{
    size_t n = 0;
    int largest = -1;
    buf[0] = '\0';
    for (int p = 0; p < NN_STEP_PARTS && n + 1 < len; p++) {
        if (!(m->part_valid & (1u << p)))
            continue;
        char v[32];
        int w = snprintf(buf + n, len - n, "%s%s %s", n ? ", " : "", nn_step_part_label(m, p),
                         us_words(m->part_us[p], v, sizeof v));
        if (w < 0)
            break;
        n += (size_t)w;
        if (largest < 0 || m->part_us[p] > m->part_us[largest])
            largest = p;
    }
    if (largest >= 0 && n + 1 < len)
        snprintf(buf + n, len - n, " us, the %s the largest", nn_step_part_label(m, largest));
    return largest;
}

int nn_explain_measured_part(const nn_explanation *e, const nn_step_measure *m, char *buf, size_t len)
{
    char parts[256], opt[160] = "", a[32], b[32];
    double ratio = m && m->timed_steps > 0 && e->predicted_us > 0 ? m->step_us / e->predicted_us : NAN;
    buf[0] = '\0';
    if (!(ratio > NN_MODEL_OFF_BY || ratio < 1.0 / NN_MODEL_OFF_BY))
        return 0;
    if (parts_text(m, parts, sizeof parts) < 0)
        snprintf(parts, sizeof parts, "no part measured");
    /* the one part the model prices on its own: the optimiser's pass (not
     * when the backward held part of it) */
    double measured_opt = m->part_us[NN_PHASE_OPTIMIZER];
    if ((m->part_valid & (1u << NN_PHASE_OPTIMIZER)) && measured_opt > 0 && e->optimizer_us > 0 &&
        m->adam_fused_layers == 0) {
        double r = e->optimizer_us / measured_opt;
        if (r > NN_MODEL_OFF_BY || r < 1.0 / NN_MODEL_OFF_BY)
            snprintf(opt, sizeof opt, "; the model's optimiser's pass %s us is %.2gx the measured %s",
                     us_words(e->optimizer_us, a, sizeof a), r, us_words(measured_opt, b, sizeof b));
    }
    snprintf(buf, len, "measured %s us/step, %.2gx the model's %s: its parts %s%s", us_words(m->step_us, a, sizeof a),
             ratio, us_words(e->predicted_us, b, sizeof b), parts, opt);
    return 1;
}

void nn_explain_why_measured(const nn_explanation *e, const nn_step_measure *m, char *buf, size_t len)
{
    char part[512];
    if (nn_explain_measured_part(e, m, part, sizeof part))
        snprintf(buf, len, "%s. The model's reading, which this step does not bear out: %s", part, e->why);
    else
        snprintf(buf, len, "%s", e->why);
}

/* ---- what an explanation depends on --------------------------------------------------- */

int nn_observe_inputs(const nn_snapshot *s, nn_explain_inputs *in)
{
    nn_explain_options *o = &in->opt;
    memset(in, 0, sizeof *in);
    if (s->state == NN_JOB_PREPARING || !s->device[0] || s->batch <= 0)
        return -1;
    snprintf(in->device, sizeof in->device, "%s", s->device);
    in->batch = s->batch;
    o->host_memory = !s->has_switches;
    o->data_on_device = s->has_switches ? s->data_on_device : 1;
    o->sync_every_step = s->sync_every_step;
    o->pinned = s->has_switches && s->pinned;
    o->graph = s->has_switches && s->graph;
    /* counters before a timed step count nothing yet */
    if (s->has_counters && s->timed_steps > 0 && s->per_step.launches > 0) {
        o->launches_per_step = (int)lround(s->per_step.launches);
        o->graph_nodes_per_step = (int)lround(s->per_step.graph_nodes);
    }
    return 0;
}

int nn_explain_inputs_equal(const nn_explain_inputs *a, const nn_explain_inputs *b)
{
    const nn_explain_options *x = &a->opt, *y = &b->opt;
    return !strcmp(a->device, b->device) && a->batch == b->batch && x->host_memory == y->host_memory &&
           x->data_on_device == y->data_on_device && x->sync_every_step == y->sync_every_step &&
           x->launches_per_step == y->launches_per_step && x->graph == y->graph && x->pinned == y->pinned &&
           x->graph_nodes_per_step == y->graph_nodes_per_step;
}

void nn_explain_inputs_run(const nn_preset *p, const nn_calibration *cal, const nn_explain_inputs *in,
                           nn_explanation *out)
{
    nn_explain(p, in->batch, cal, &in->opt, out);
}

/* ---- one explanation kept up to date ------------------------------------------------------ */

void nn_explainer_reset(nn_explainer *x, const nn_calibration *cal, const char *why)
{
    memset(x, 0, sizeof *x);
    if (cal) {
        x->cal = *cal;
        x->has_cal = 1;
    } else {
        snprintf(x->no_cal_why, sizeof x->no_cal_why, "%s", why && why[0] ? why : "none measured");
    }
}

int nn_explainer_update(nn_explainer *x, const nn_preset *p, const nn_explain_inputs *in)
{
    if (!x->has_cal || (x->valid && nn_explain_inputs_equal(&x->in, in)))
        return 0;
    nn_explain_inputs_run(p, &x->cal, in, &x->e);
    x->in = *in;
    x->valid = 1;
    x->recomputed++;
    return 1;
}

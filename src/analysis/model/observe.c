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
    for (int p = 0; p < NN_PHASE_COUNT; p++) {
        if (s->has_graph_us && (in_graph & (1u << p)))
            continue;
        out->part_us[p] = s->host_phase_us[p];
        out->part_valid |= 1u << p;
        sum += out->part_us[p];
    }
    if (s->has_graph_us) {
        out->part_us[NN_PART_GRAPH] = out->step_us > sum ? out->step_us - sum : 0.0;
        out->part_valid |= 1u << NN_PART_GRAPH;
    }
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

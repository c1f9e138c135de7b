/* src/analysis/model/sweep.c - the batch sweep's rules: its points recorded and
 * predicted, the crossover and the doubling ratio; see sweep.h. The runner
 * that starts a point's job is src/jobs/sweep_run.c. */
#include "nnlab/sweep.h"
#include "nnlab/device.h"
#include "sweep_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int nn_sweep_powers_of_two(int from, int to, int *out, int max)
{
    int n = 0;
    long b = 1;
    if (from < 1)
        from = 1;
    while (b < from)
        b *= 2;
    for (; b <= to && n < max; b *= 2)
        out[n++] = (int)b;
    return n;
}

void nn_sweep_init(nn_sweep *sw, const nn_job_config *base, const int *batches, int n_batches, long steps,
                   long warmup)
{
    memset(sw, 0, sizeof *sw);
    sw->base = *base;
    sw->base.bench = 1;
    sw->base.steps = steps > 0 ? steps : 20;
    sw->base.warmup = warmup >= 0 ? warmup : 3;
    sw->base.epochs = 0;
    sw->n_batches = n_batches < NN_SWEEP_MAX_BATCHES ? n_batches : NN_SWEEP_MAX_BATCHES;
    memcpy(sw->batch, batches, (size_t)sw->n_batches * sizeof *batches);
    sw->latest_dev = sw->latest_batch = -1;
    for (int d = 0; d < NN_SWEEP_MAX_DEVICES; d++)
        sw->graph_switch[d] = -1;
    for (int d = 0; d < NN_SWEEP_MAX_DEVICES; d++)
        for (int i = 0; i < NN_SWEEP_MAX_BATCHES; i++)
            sw->pt[d][i].rate = NAN;
}

int nn_sweep_device_is_gpu(const nn_sweep *sw, int d)
{
    return nn_device_kind_of(sw->device[d]).gpu;
}

int nn_sweep_device_is_cpu(const nn_sweep *sw, int d)
{
    nn_device_kind k = nn_device_kind_of(sw->device[d]);
    return k.threaded && k.host_memory;
}

int nn_sweep_add_device(nn_sweep *sw, const char *device, const nn_calibration *cal, const char *why)
{
    if (sw->n_devices == NN_SWEEP_MAX_DEVICES)
        return -1;
    int d = sw->n_devices++;
    snprintf(sw->device[d], sizeof sw->device[0], "%s", device);
    /* nnlab's own step: on a GPU the base's switches pick eager or graph */
    sw->way[d] = nn_sweep_device_is_gpu(sw, d) && sw->base.graph ? NN_WAY_GRAPH : NN_WAY_EAGER;
    sw->graph_switch[d] = -1;
    sw->has_cal[d] = cal != NULL;
    if (cal)
        sw->cal[d] = *cal;
    else
        snprintf(sw->cal_why[d], sizeof sw->cal_why[0], "%s", why && why[0] ? why : "none measured");
    return 0;
}

/* ---- a GPU predicted ------------------------------------------------------------------------ */

/* The order the ways are added: nnlab's default first, the write-ups' last. */
static const nn_gpu_way predicted_order[NN_GPU_WAYS] = { NN_WAY_GRAPH, NN_WAY_EAGER, NN_WAY_FRAMEWORK };

void nn_sweep_predict_point(nn_sweep *sw, int d, int i)
{
    nn_sweep_point *pt = &sw->pt[d][i];
    nn_explanation e;
    memset(pt, 0, sizeof *pt);
    pt->state = NN_POINT_DONE;
    pt->predicted = 1;
    pt->has_inputs = 1;
    nn_strlcpy(pt->in.device, sw->device[d], sizeof pt->in.device);
    pt->in.batch = sw->batch[i];
    nn_gpu_way_options((nn_gpu_way)sw->way[d], &sw->prof.framework_gpu, &pt->in.opt);
    if (sw->way[d] != NN_WAY_FRAMEWORK) {
        /* nnlab's own ways with the transfer switches given (--no-data-on-device,
         * --pinned, --sync-every-step), as a measured job runs them; the
         * framework way is the write-ups', whatever they are */
        pt->in.opt.data_on_device = sw->base.data_on_device;
        pt->in.opt.pinned = !sw->base.data_on_device && sw->base.pinned;
        pt->in.opt.sync_every_step = sw->base.sync_every_step;
    }
    nn_explain_inputs_run(&sw->base.preset, &sw->cal[d], &pt->in, &e);
    pt->has_model = 1;
    pt->regime = e.regime;
    pt->predicted_us = e.predicted_us;
    pt->rate = e.predicted_us > 0 ? sw->batch[i] * 1e6 / e.predicted_us : NAN;
}

int nn_sweep_add_predicted(nn_sweep *sw, const nn_gpu_profile *prof)
{
    nn_calibration cal;
    if (sw->n_devices + NN_GPU_WAYS > NN_SWEEP_MAX_DEVICES)
        return -1;
    nn_sweep_set_profile(sw, prof);
    nn_profile_calibration(prof, &cal);
    for (int k = 0; k < NN_GPU_WAYS; k++) {
        int d = sw->n_devices;
        nn_sweep_add_device(sw, "gpu", &cal, NULL);
        sw->predicted[d] = 1;
        sw->way[d] = predicted_order[k];
        for (int i = 0; i < sw->n_batches; i++)
            nn_sweep_predict_point(sw, d, i);
    }
    return 0;
}

void nn_sweep_set_profile(nn_sweep *sw, const nn_gpu_profile *prof)
{
    sw->prof = *prof;
    sw->has_profile = 1;
}

/* ---- recording a point ------------------------------------------------------------------- */

static void record_failure(nn_sweep *sw, int d, int i, const char *why)
{
    sw->pt[d][i].state = NN_POINT_FAILED;
    sw->n_failed++;
    snprintf(sw->last_error, sizeof sw->last_error, "%s batch %d: %s", sw->device[d], sw->batch[i], why);
}

/* A measured point's explanation: its inputs read from the snapshot, then
 * with the device's calibration its regime and predicted step. */
static void explain_point(nn_sweep *sw, int d, int i, const nn_snapshot *s)
{
    nn_sweep_point *pt = &sw->pt[d][i];
    nn_explanation e;
    pt->has_inputs = nn_observe_inputs(s, &pt->in) == 0;
    pt->has_model = 0;
    pt->profile_us = 0;
    if (!pt->has_inputs || !sw->has_cal[d])
        return;
    nn_explain_inputs_run(&sw->base.preset, &sw->cal[d], &pt->in, &e);
    pt->has_model = 1;
    pt->regime = e.regime;
    pt->predicted_us = e.predicted_us;
    if (sw->has_profile && nn_sweep_device_is_gpu(sw, d) && !pt->in.opt.host_memory) {
        nn_calibration prof;
        nn_profile_calibration(&sw->prof, &prof);
        nn_explain_inputs_run(&sw->base.preset, &prof, &pt->in, &e);
        pt->profile_us = e.predicted_us;
    }
}

void nn_sweep_record(nn_sweep *sw, int d, int i, const nn_snapshot *s)
{
    nn_sweep_point *pt = &sw->pt[d][i];
    nn_step_measure m;
    nn_measure_step(s, &m);
    if (s->state == NN_JOB_DONE && m.timed_steps > 0) {
        int first = pt->repeats == 0;   /* else a repetition (nn_sweep_wants_repeat) */
        pt->state = NN_POINT_DONE;
        if (nn_sweep_add_repetition(pt, &m, s->steps_async ? 0 : s->us_per_step_median, first))
            pt->measured = m;        /* this repetition is the median one */
        pt->rate = sw->batch[i] * 1e6 / pt->measured.step_us;
        explain_point(sw, d, i, s);
        sw->latest_dev = d;
        sw->latest_batch = i;
        return;
    }
    if (pt->repeats > 0)
        return;                      /* a repetition that did not end: the point keeps its runs */
    pt->rate = NAN;
    if (s->state == NN_JOB_CANCELLED)
        pt->state = NN_POINT_CANCELLED;
    else
        record_failure(sw, d, i, s->error[0] ? s->error : "no timed steps");
}

/* ---- reading the results ------------------------------------------------------------------ */

int nn_sweep_device_index(const nn_sweep *sw, const char *name)
{
    for (int d = 0; d < sw->n_devices; d++)
        if (!strcmp(sw->device[d], name))
            return d;
    return -1;
}

double nn_sweep_doubling(const nn_sweep *sw, int d, int i)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    if (p->state != NN_POINT_DONE || sw->batch[i] % 2 != 0)
        return 0;
    for (int j = 0; j < sw->n_batches; j++) {
        const nn_sweep_point *half = &sw->pt[d][j];
        if (2 * sw->batch[j] == sw->batch[i] && half->state == NN_POINT_DONE && half->rate > 0)
            return (sw->batch[i] / p->rate) / (sw->batch[j] / half->rate);   /* t(b) / t(b/2) */
    }
    return 0;
}

int nn_sweep_explain(const nn_sweep *sw, int d, int i, nn_explanation *out)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    if (!p->has_model)
        return -1;
    nn_explain_inputs_run(&sw->base.preset, &sw->cal[d], &p->in, out);
    return 0;
}

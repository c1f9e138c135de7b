/* src/analysis/model/sweep_ways.c - the ways of running a step on both devices in
 * a sweep (framework, eager or nnlab, graph), their labels, the framework
 * way on the CPU predicted, a GPU's eager and graph ways measured side by
 * side, the hook for a framework measured for real, and the crossovers per
 * matching pair with the write-up's figure. See nnlab/sweep.h and
 * docs/ways.md. */
#include "nnlab/sweep.h"
#include "sweep_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnlab/framework.h"

const char *nn_sweep_way_word(const nn_sweep *sw, int d)
{
    if (d < 0 || d >= sw->n_devices)
        return "?";
    if (!nn_sweep_device_is_gpu(sw, d) && sw->way[d] == NN_WAY_EAGER)
        return "nnlab";              /* a CPU's own step: nnlab's code, no launches */
    return nn_gpu_way_key((nn_gpu_way)sw->way[d]);
}

void nn_sweep_source_text(const nn_sweep *sw, int d, char *buf, size_t len)
{
    if (d < 0 || d >= sw->n_devices)
        snprintf(buf, len, "?");
    else if (sw->external[d])
        snprintf(buf, len, "measured with %s", sw->measured_with[d]);
    else if (!sw->predicted[d])
        snprintf(buf, len, "measured");
    else if (sw->cal[d].profile)
        snprintf(buf, len, "predicted for %s", sw->prof.name);
    else
        snprintf(buf, len, "predicted from this %s's calibration", nn_sweep_device_is_gpu(sw, d) ? "GPU" : "CPU");
}

void nn_sweep_device_label(const nn_sweep *sw, int d, char *buf, size_t len)
{
    char source[NN_NAME_LEN + 48];
    if (d < 0 || d >= sw->n_devices) {
        snprintf(buf, len, "?");
        return;
    }
    nn_sweep_source_text(sw, d, source, sizeof source);
    if (sw->predicted[d] || sw->external[d])
        snprintf(buf, len, "%s %s (%s)", sw->device[d], nn_sweep_way_word(sw, d), source);
    else
        snprintf(buf, len, "%s %s", sw->device[d], nn_sweep_way_word(sw, d));
}

int nn_sweep_gpu_index(const nn_sweep *sw, int way)
{
    int measured = -1, predicted = -1;
    for (int d = 0; d < sw->n_devices; d++) {
        if (!nn_sweep_device_is_gpu(sw, d) || sw->external[d])
            continue;
        int match = way < 0 || sw->way[d] == way;
        if (!sw->predicted[d] && match)
            return d;
        if (!sw->predicted[d] && measured < 0)
            measured = d;
        if (sw->predicted[d] && match && predicted < 0)
            predicted = d;
    }
    return measured >= 0 ? measured : predicted;
}

/* ---- adding ways ---------------------------------------------------------------------------- */

/* Point (d, i) of the CPU's framework way: the fitted form over nnlab's
 * predicted CPU step. Not explained (has_model 0): the form is a fit, not
 * the model's split, and the Explain panel says so (cal_why). */
static void predict_framework_cpu(nn_sweep *sw, int d, int i)
{
    nn_sweep_point *pt = &sw->pt[d][i];
    memset(pt, 0, sizeof *pt);
    double us = nn_framework_cpu_step_us(&sw->base.preset, sw->batch[i], &sw->cal[d], &sw->prof, NULL);
    pt->predicted = 1;
    pt->state = us > 0 ? NN_POINT_DONE : NN_POINT_FAILED;
    pt->predicted_us = us;
    pt->rate = us > 0 ? sw->batch[i] * 1e6 / us : NAN;
}

int nn_sweep_add_framework_cpu(nn_sweep *sw, const nn_calibration *cal, const nn_gpu_profile *prof)
{
    if (sw->n_devices >= NN_SWEEP_MAX_DEVICES)
        return -1;
    if (!sw->has_profile)
        nn_sweep_set_profile(sw, prof);
    int d = sw->n_devices;
    nn_sweep_add_device(sw, "cpu", cal, NULL);
    sw->predicted[d] = 1;
    sw->way[d] = NN_WAY_FRAMEWORK;
    for (int i = 0; i < sw->n_batches; i++)
        predict_framework_cpu(sw, d, i);
    /* priced from cal, but not the model's split: Explain has no explanation to give */
    sw->has_cal[d] = 0;
    const nn_framework_cpu *fc = &sw->prof.framework_cpu;
    int threads = cal->threads > 1 ? cal->threads : 1;
    char fresh[64] = "";
    if (cal->fresh_page_us > 0)
        snprintf(fresh, sizeof fresh, " + its fresh pages x %.2f us", cal->fresh_page_us);
    snprintf(sw->cal_why[d], sizeof sw->cal_why[d], "a framework's CPU step is a fitted form, not the model's "
             "split: %.0f us + ops x %.0f op_us + %.2f elementwise and %.2f parameter passes + %.3f x nnlab's "
             "step + %.2f x its per-element arithmetic%s, at %d threads (nnlab(1), WAYS)", fc->step_us,
             fc->op_ratio + fc->thread_op_ratio * (threads - 1), fc->elem_passes, fc->param_passes,
             fc->work_ratio + fc->thread_work_ratio * (threads - 1), fc->arith_ratio, fresh, threads);
    return 0;
}

int nn_sweep_add_framework_gpu(nn_sweep *sw, const nn_calibration *cal, const nn_gpu_profile *prof)
{
    if (sw->n_devices >= NN_SWEEP_MAX_DEVICES)
        return -1;
    if (!sw->has_profile)
        nn_sweep_set_profile(sw, prof);
    int d = sw->n_devices;
    nn_sweep_add_device(sw, "gpu", cal, NULL);
    sw->predicted[d] = 1;
    sw->way[d] = NN_WAY_FRAMEWORK;
    for (int i = 0; i < sw->n_batches; i++)
        nn_sweep_predict_point(sw, d, i);
    return 0;
}

int nn_sweep_add_gpu_ways(nn_sweep *sw, const nn_calibration *cal, const nn_gpu_profile *prof)
{
    static const nn_gpu_way measured[2] = { NN_WAY_EAGER, NN_WAY_GRAPH };
    if (sw->n_devices + 3 > NN_SWEEP_MAX_DEVICES)
        return -1;
    for (int k = 0; k < 2; k++) {
        int d = sw->n_devices;
        nn_sweep_add_device(sw, "gpu", cal, NULL);
        sw->way[d] = measured[k];
        sw->graph_switch[d] = measured[k] == NN_WAY_GRAPH;
    }
    sw->way_fixed = 1;
    return nn_sweep_add_framework_gpu(sw, cal, prof);
}

int nn_sweep_add_external(nn_sweep *sw, const char *device, nn_gpu_way way, const char *tool)
{
    if (sw->n_devices >= NN_SWEEP_MAX_DEVICES)
        return -1;
    int d = sw->n_devices;
    nn_sweep_add_device(sw, device, NULL, "measured by the framework: no nnlab calibration applies");
    sw->external[d] = 1;
    sw->way[d] = way;
    snprintf(sw->measured_with[d], sizeof sw->measured_with[d], "%s", tool && tool[0] ? tool : "a framework");
    return d;
}

void nn_sweep_record_external(nn_sweep *sw, int d, int i, double step_us, double spread_us, const char *why)
{
    nn_sweep_point *pt = &sw->pt[d][i];
    memset(pt, 0, sizeof *pt);
    if (!(step_us > 0)) {
        pt->state = NN_POINT_FAILED;
        pt->rate = NAN;
        sw->n_failed++;
        snprintf(sw->last_error, sizeof sw->last_error, "%s batch %d: %s", sw->device[d], sw->batch[i],
                 why && why[0] ? why : "not measured");
        return;
    }
    pt->state = NN_POINT_DONE;
    pt->measured.timed_steps = 1;
    pt->measured.step_us = step_us;
    pt->repeats = 1;
    pt->rep_us[0] = step_us;
    pt->spread_us = spread_us > 0 ? spread_us : 0;
    pt->rate = sw->batch[i] * 1e6 / step_us;
}

int nn_sweep_lists_calibration(const nn_sweep *sw, int d)
{
    if (sw->external[d] || (sw->predicted[d] && !sw->cal[d].profile))
        return 0;
    for (int e = 0; e < d; e++)      /* one line per device name and kind of figures */
        if (!sw->external[e] && !strcmp(sw->device[e], sw->device[d]) && sw->cal[e].profile == sw->cal[d].profile &&
            !(sw->predicted[e] && !sw->cal[e].profile))
            return 0;
    return 1;
}

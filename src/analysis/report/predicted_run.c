/* src/analysis/report/predicted_run.c - a predicted GPU racing a real job; see
 * nnlab/predicted.h. */
#include "nnlab/predicted.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnlab/jacobian.h"
#include "nnlab/progress.h"
#include "util.h"

nn_gpu_way nn_predicted_way(const nn_job_config *cfg)
{
    return cfg->graph ? NN_WAY_GRAPH : NN_WAY_EAGER;
}

/* A Jacobian job's row: the whole job as the val sweep prices it on the
 * GPU (nnlab's passes, rows replayed as a graph), shared among its rows;
 * NAN when the preset is no chain the Jacobian takes. */
static double jacobian_row_s(const nn_job_config *cfg, const nn_calibration *cal)
{
    nn_jac_shape s;
    char err[NN_ERR_LEN];
    long val = cfg->jac_val > 0 ? cfg->jac_val : cfg->preset.task_val;
    int m = cfg->jac_method >= 0 && cfg->jac_method < NN_JAC_METHOD_COUNT ? cfg->jac_method : NN_JAC_ROWS;
    if (val <= 0 || nn_jac_shape_from_preset(&cfg->preset, cfg->preset.name, &s, err, sizeof err) != 0)
        return NAN;
    long rows = nn_jac_rows_total(&s, val);
    return rows > 0 ? nn_jac_predict_s(&s, val, (enum nn_jac_method)m, cal, 1) / (double)rows : NAN;
}

int nn_predicted_gpu_init(nn_predicted_gpu *g, const nn_job_config *cfg, const nn_gpu_profile *prof)
{
    nn_calibration cal;
    nn_explain_options opt;
    nn_explanation e;
    nn_gpu_way way = nn_predicted_way(cfg);
    int batch = cfg->batch > 0 ? cfg->batch : cfg->preset.batch;
    nn_profile_calibration(prof, &cal);
    memset(g, 0, sizeof *g);
    nn_strlcpy(g->profile, prof->name, sizeof g->profile);
    snprintf(g->label, sizeof g->label, "predicted for %s", prof->name);
    g->way = (int)way;
    if (nn_job_kind_of_preset(&cfg->preset) == NN_JOB_JACOBIAN) {
        g->rows = 1;
        g->way = NN_WAY_GRAPH;        /* the sweep's price: rows' passes replayed as a graph */
        g->step_s = jacobian_row_s(cfg, &cal);
        return isfinite(g->step_s) && g->step_s > 0 ? 0 : -1;
    }
    nn_gpu_way_options(way, &prof->framework_gpu, &opt);
    /* the job's own switches, where they change what the way prices */
    opt.data_on_device = cfg->data_on_device;
    opt.pinned = !cfg->data_on_device && cfg->pinned;
    opt.sync_every_step = cfg->sync_every_step;
    nn_explain(&cfg->preset, batch, &cal, &opt, &e);
    g->step_s = e.predicted_us * 1e-6;
    return isfinite(g->step_s) && g->step_s > 0 ? 0 : -1;
}

void nn_predicted_progress_at(const nn_predicted_gpu *g, double elapsed_s, long total_steps,
                              nn_predicted_progress *out)
{
    double t = elapsed_s > 0 ? elapsed_s : 0.0;   /* NaN and negatives: not started; inf: ended */
    out->total_steps = total_steps > 0 ? total_steps : 0;
    out->total_s = (double)out->total_steps * g->step_s;
    out->ended = t >= out->total_s;
    out->elapsed_s = out->ended ? out->total_s : t;
    out->steps = out->ended ? out->total_steps : (long)floor(t / g->step_s);
    out->fraction = out->total_steps > 0 ? (double)out->steps / (double)out->total_steps : 0.0;
    out->remaining_s = out->total_s - out->elapsed_s;
}

void nn_predicted_status(const nn_predicted_gpu *g, const nn_predicted_progress *p, char *buf, size_t len)
{
    nn_job_times t;
    char clock[48], per[32];
    nn_job_times_at(p->elapsed_s, p->steps, p->total_steps, p->ended, &t);
    t.has_per_step = 1;              /* the model's step, not elapsed / steps */
    t.per_step_s = g->step_s;
    t.has_remaining = 1;
    t.remaining_s = p->remaining_s;
    t.total_s = p->total_s;
    nn_format_elapsed_remaining(&t, clock, sizeof clock);
    nn_predicted_pace(g, per, sizeof per);
    /* the label first: a line cut short at 80 columns still says it */
    if (p->ended)
        snprintf(buf, len, "%s: done in %.3g s (%s), %s", g->label, p->total_s, per,
                 nn_gpu_way_name((nn_gpu_way)g->way));
    else
        snprintf(buf, len, "%s: step %ld/%ld, %s, %s, %s", g->label, p->steps, p->total_steps, clock, per,
                 nn_gpu_way_name((nn_gpu_way)g->way));
}

void nn_predicted_pace(const nn_predicted_gpu *g, char *buf, size_t len)
{
    if (!g->rows) {
        nn_format_per_step(g->step_s, buf, len);
        return;
    }
    double per_s = g->step_s > 0 ? 1.0 / g->step_s : 0.0;
    if (per_s >= 1e6)
        snprintf(buf, len, "%.3gM rows/s", per_s / 1e6);
    else if (per_s >= 1e3)
        snprintf(buf, len, "%.3gk rows/s", per_s / 1e3);
    else
        snprintf(buf, len, "%.3g rows/s", per_s);
}

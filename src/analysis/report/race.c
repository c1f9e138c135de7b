/* src/analysis/report/race.c - one job raced, measured, on the devices that are
 * here: its jobs, their labels and the pairs' ratios; see nnlab/race.h and
 * docs/ways.md (the framework way beside them: race_ways.c). */
#include "nnlab/race.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnlab/progress.h"
#include "util.h"

int nn_race_way_fixed(const nn_job_config *cfg)
{
    nn_preset d;
    nn_preset_defaults(&d);
    return cfg->graph != d.graph || cfg->data_on_device != d.data_on_device || cfg->pinned != d.pinned ||
           cfg->sync_every_step != d.sync_every_step;
}

static void add_job(nn_race_job *j, const nn_device_status *st, int graph)
{
    memset(j, 0, sizeof *j);
    nn_strlcpy(j->device, st->name, sizeof j->device);
    j->gpu = st->gpu;
    j->graph = graph;
}

int nn_race_plan(const nn_device_status *const *devices, int n, int way_fixed, nn_race_job *jobs)
{
    int m = 0;
    for (int k = 0; k < n && m < NN_RACE_MAX_JOBS; k++) {
        if (!devices[k]->gpu || way_fixed) {
            add_job(&jobs[m++], devices[k], -1);
            continue;
        }
        /* both measured ways, eager first: the slower one while the machine is fresh */
        add_job(&jobs[m++], devices[k], 0);
        if (m < NN_RACE_MAX_JOBS)
            add_job(&jobs[m++], devices[k], 1);
    }
    return m;
}

int nn_race_plan_ranks(const nn_device_status *device, int ranks, int batch, nn_race_job *jobs)
{
    add_job(&jobs[0], device, -1);
    add_job(&jobs[1], device, -1);
    jobs[0].ranks = 1;
    jobs[0].batch = ranks * batch;
    jobs[1].ranks = ranks;
    jobs[1].batch = batch;
    return 2;
}

void nn_race_job_config(const nn_race_job *j, const nn_job_config *base, nn_job_config *out)
{
    *out = *base;
    nn_strlcpy(out->device, j->device, sizeof out->device);
    if (j->graph >= 0)
        out->graph = j->graph;
    if (j->ranks > 0)
        out->ranks = j->ranks;
    if (j->batch > 0)
        out->batch = j->batch;
}

nn_gpu_way nn_race_way(const nn_race_job *j, const nn_job_config *base, const nn_snapshot *s)
{
    if (!j->gpu)
        return NN_WAY_EAGER;         /* a CPU runs nnlab's own step, no launches */
    if (s && s->has_switches)        /* as the job applied them */
        return s->graph ? NN_WAY_GRAPH : NN_WAY_EAGER;
    int graph = j->graph >= 0 ? j->graph : base->graph;
    return graph ? NN_WAY_GRAPH : NN_WAY_EAGER;
}

const char *nn_race_way_word(const nn_race_job *j, nn_gpu_way w)
{
    return j->gpu ? nn_gpu_way_key(w) : "nnlab";
}

const char *nn_snapshot_way_word(const nn_snapshot *s)
{
    if (s->launched_ranks > 1)
        return "ranks";              /* data-parallel ranks this job started */
    if (!s->has_switches)
        return "nnlab";
    return nn_gpu_way_key(s->graph ? NN_WAY_GRAPH : NN_WAY_EAGER);
}

void nn_race_label(const nn_race_job *j, const nn_job_config *base, const nn_snapshot *s, char *buf, size_t len)
{
    if (j->ranks > 0)
        snprintf(buf, len, "%s %d rank%s", j->device, j->ranks, j->ranks == 1 ? "" : "s");
    else
        snprintf(buf, len, "%s %s", j->device, nn_race_way_word(j, nn_race_way(j, base, s)));
}

double nn_race_pair_text(const char *label_a, const nn_snapshot *a, const char *label_b, const nn_snapshot *b,
                         char *buf, size_t len)
{
    int faster;
    double ratio = nn_race_ratio(a, b, &faster);
    if (!(ratio > 0)) {
        snprintf(buf, len, "no ratio: %s did not finish", a->state != NN_JOB_DONE ? label_a : label_b);
        return 0.0;
    }
    nn_job_times ta, tb;
    nn_job_times_of(a, &ta);
    nn_job_times_of(b, &tb);
    int d = nn_race_decimals(a, b);
    /* the slower's time over the faster's: the ratio a reader can check */
    snprintf(buf, len, "%s %.2fx faster than %s: %.*f s / %.*f s", faster ? label_b : label_a, ratio,
             faster ? label_a : label_b, d, faster ? ta.total_s : tb.total_s, d, faster ? tb.total_s : ta.total_s);
    return ratio;
}

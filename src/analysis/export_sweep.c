/* src/analysis/export_sweep.c - a sweep as CSV and JSON, for `nnlab sweep
 * --csv/--json` and the lab's export alike; see nnlab/export.h. */
#include "nnlab/export.h"

#include <stdio.h>
#include <string.h>

#include "nnlab/calibrate.h"
#include "nnlab/explain.h"
#include "nnlab/observe.h"

/* "measured" or "predicted": a column of every format, so no reader can
 * take a prediction for a measurement. */
static const char *source_of(const nn_sweep *sw, int d)
{
    return sw->predicted[d] ? "predicted" : "measured";
}

/* The way a GPU row ran: a predicted one's, or the switches a measured
 * GPU job applied; "" for a CPU. */
static const char *way_of(const nn_sweep *sw, int d, int i)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    if (sw->predicted[d])
        return nn_gpu_way_key((nn_gpu_way)sw->way[d]);
    if (!p->has_inputs || p->in.opt.host_memory)
        return "";
    return p->in.opt.graph ? "graph" : "eager";
}

/* The profile a row is predicted for, or a measured GPU row is compared with. */
static const char *profile_of(const nn_sweep *sw, int d, int i)
{
    return sw->predicted[d] || sw->pt[d][i].profile_us > 0 ? sw->prof.name : "";
}

static double step_of(const nn_sweep_point *p)
{
    return p->predicted ? p->predicted_us : p->measured.step_us;
}

/* ---- CSV ----------------------------------------------------------------------------------- */

static void csv_point(FILE *f, const nn_sweep *sw, int d, int i, int crossover)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    fprintf(f, "%s,%d,%.3f,%.1f,%.3f,%s,%s,%s,%s", sw->device[d], sw->batch[i], step_of(p), p->rate,
            nn_sweep_doubling(sw, d, i), p->has_model ? nn_regime_name(p->regime) : "-", source_of(sw, d),
            way_of(sw, d, i), profile_of(sw, d, i));
    if (p->profile_us > 0)
        fprintf(f, ",%.3f", p->profile_us);
    else
        fprintf(f, ",");
    fprintf(f, ",%s\n", crossover ? "yes" : "");
}

int nn_export_sweep_csv(FILE *f, const nn_sweep *sw)
{
    fprintf(f, "device,batch,us_per_step,samples_per_s,doubling,regime,source,way,profile,profile_us,crossover\n");
    for (int d = 0; d < sw->n_devices; d++) {
        int x = d > 0 ? nn_sweep_crossover(sw, 0, d) : -1;
        for (int i = 0; i < sw->n_batches; i++)
            if (sw->pt[d][i].state == NN_POINT_DONE)
                csv_point(f, sw, d, i, i == x);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void json_point(FILE *f, const nn_sweep *sw, int d, int i, int first)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    fprintf(f, "%s    {\"device\": \"%s\", \"batch\": %d, \"source\": \"%s\", \"way\": \"%s\", \"profile\": ",
            first ? "" : ",\n", sw->device[d], sw->batch[i], source_of(sw, d), way_of(sw, d, i));
    if (profile_of(sw, d, i)[0])
        nn_json_string(f, profile_of(sw, d, i));
    else
        fprintf(f, "null");
    fprintf(f, ", \"us_per_step\": %.6g, \"samples_per_s\": %.6g, \"doubling\": %.4g, \"profile_us\": ",
            step_of(p), p->rate, nn_sweep_doubling(sw, d, i));
    if (p->profile_us > 0)
        fprintf(f, "%.6g", p->profile_us);
    else
        fprintf(f, "null");
    fprintf(f, ", \"predicted_us\": ");
    if (p->has_model)
        fprintf(f, "%.6g, \"regime\": \"%s\"}", p->predicted_us, nn_regime_name(p->regime));
    else
        fprintf(f, "null, \"regime\": null}");
}

/* Each device's calibration: where its figures come from, their age and
 * quality (a predicted device's: the profile's, said once for the three ways). */
static void json_calibrations(FILE *f, const nn_sweep *sw, long long now)
{
    char line[NN_ERR_LEN];
    fprintf(f, "\n  ],\n  \"calibrations\": [");
    for (int d = 0, first = 1; d < sw->n_devices; d++) {
        if (d > 0 && sw->predicted[d] && sw->predicted[d - 1])
            continue;
        if (sw->has_cal[d])
            nn_calibration_describe(&sw->cal[d], now, line, sizeof line);
        else
            snprintf(line, sizeof line, "none: %s", sw->cal_why[d]);
        fprintf(f, "%s{\"device\": \"%s\", \"source\": \"%s\", \"quality\": \"%s\", \"calibration\": ",
                first ? "" : ", ", sw->device[d], sw->predicted[d] ? "profile" : "measured",
                sw->has_cal[d] ? nn_cal_quality_name(nn_calibration_quality(&sw->cal[d], NULL, 0)) : "none");
        nn_json_string(f, line);
        fprintf(f, "}");
        first = 0;
    }
}

/* Where each device after the first overtakes the first (batch 0: it does
 * not); a predicted device's crossover is a prediction and says so. */
static void json_crossovers(FILE *f, const nn_sweep *sw)
{
    fprintf(f, "],\n  \"crossovers\": [");
    for (int d = 1; d < sw->n_devices; d++) {
        int x = nn_sweep_crossover(sw, 0, d), batch = x >= 0 ? sw->batch[x] : 0;
        fprintf(f, "%s{\"from\": \"%s\", \"to\": \"%s\", \"way\": \"%s\", \"source\": \"%s\", \"batch\": %d}",
                d > 1 ? ", " : "", sw->device[0], sw->device[d],
                sw->predicted[d] ? nn_gpu_way_key((nn_gpu_way)sw->way[d]) : "", source_of(sw, d), batch);
    }
    fprintf(f, "]\n}\n");
}

int nn_export_sweep_json(FILE *f, const nn_sweep *sw, long long now)
{
    int first = 1;
    fprintf(f, "{\n  \"us_per_step_stat\": \"%s\",\n  \"points\": [\n", NN_STEP_STAT);
    for (int d = 0; d < sw->n_devices; d++)
        for (int i = 0; i < sw->n_batches; i++)
            if (sw->pt[d][i].state == NN_POINT_DONE) {
                json_point(f, sw, d, i, first);
                first = 0;
            }
    json_calibrations(f, sw, now);
    json_crossovers(f, sw);
    return ferror(f) ? -1 : 0;
}

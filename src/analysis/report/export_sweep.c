/* src/analysis/report/export_sweep.c - a sweep as CSV and JSON, for `nnlab sweep
 * --csv/--json` and the lab's export alike; see nnlab/export.h. */
#include "nnlab/export.h"

#include <stdio.h>
#include <string.h>

#include "nnlab/calibrate.h"
#include "nnlab/explain.h"
#include "nnlab/observe.h"

/* "measured", "predicted" or "measured with PyTorch 2.11": a column of
 * every format, so no reader can take a prediction for a measurement. */
static void source_of(const nn_sweep *sw, int d, char *buf, size_t len)
{
    if (sw->external[d])
        snprintf(buf, len, "measured with %s", sw->measured_with[d]);
    else
        snprintf(buf, len, "%s", sw->predicted[d] ? "predicted" : "measured");
}

/* What a predicted device's figures come from: "profile T4", "cpu
 * calibration" (the framework's CPU way), "gpu calibration"; "" when measured. */
static void predicted_from(const nn_sweep *sw, int d, char *buf, size_t len)
{
    if (!sw->predicted[d])
        snprintf(buf, len, "%s", "");
    else if (sw->cal[d].profile)
        snprintf(buf, len, "profile %s", sw->prof.name);
    else
        snprintf(buf, len, "%s calibration", sw->device[d]);
}

/* The profile a row is predicted for, or a measured GPU row is compared with. */
static const char *profile_of(const nn_sweep *sw, int d, int i)
{
    return (sw->predicted[d] && sw->cal[d].profile) || sw->pt[d][i].profile_us > 0 ? sw->prof.name : "";
}

/* The pair whose challenger is d: its crossover index, else -1. */
static int crossover_of(const nn_sweep_pair *pairs, int n, int d)
{
    for (int k = 0; k < n; k++)
        if (pairs[k].challenger == d)
            return pairs[k].crossover;
    return -1;
}

static double step_of(const nn_sweep_point *p)
{
    return p->predicted ? p->predicted_us : p->measured.step_us;
}

/* ---- CSV ----------------------------------------------------------------------------------- */

static void csv_point(FILE *f, const nn_sweep *sw, int d, int i, int crossover)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    char source[64], from[NN_NAME_LEN + 16];
    source_of(sw, d, source, sizeof source);
    predicted_from(sw, d, from, sizeof from);
    fprintf(f, "%s,%d,%.3f,%.1f,%.3f,%s,%s,%s,%s", sw->device[d], sw->batch[i], step_of(p), p->rate,
            nn_sweep_doubling(sw, d, i), p->has_model ? nn_regime_name(p->regime) : "-", source,
            nn_sweep_way_word(sw, d), profile_of(sw, d, i));
    if (p->profile_us > 0)
        fprintf(f, ",%.3f", p->profile_us);
    else
        fprintf(f, ",");
    fprintf(f, ",%s,%.3f,%d,%s\n", crossover ? "yes" : "", p->spread_us, p->repeats, from);
}

int nn_export_sweep_csv(FILE *f, const nn_sweep *sw)
{
    nn_sweep_pair pairs[2 * NN_SWEEP_MAX_DEVICES];
    int np = nn_sweep_pairs(sw, pairs, 2 * NN_SWEEP_MAX_DEVICES);
    fprintf(f, "device,batch,us_per_step,samples_per_s,doubling,regime,source,way,profile,profile_us,crossover,"
               "spread_us,repeats,predicted_from\n");
    for (int d = 0; d < sw->n_devices; d++) {
        int x = crossover_of(pairs, np, d);
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
    char source[64], from[NN_NAME_LEN + 16];
    source_of(sw, d, source, sizeof source);
    predicted_from(sw, d, from, sizeof from);
    fprintf(f, "%s    {\"device\": \"%s\", \"batch\": %d, \"source\": ", first ? "" : ",\n", sw->device[d],
            sw->batch[i]);
    nn_json_string(f, source);
    fprintf(f, ", \"way\": \"%s\", \"predicted_from\": ", nn_sweep_way_word(sw, d));
    nn_json_string(f, from);
    fprintf(f, ", \"spread_us\": %.6g, \"repeats\": %d, \"profile\": ", p->spread_us, p->repeats);
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
        if (!nn_sweep_lists_calibration(sw, d))
            continue;
        if (sw->has_cal[d])
            nn_calibration_describe(&sw->cal[d], now, line, sizeof line);
        else
            snprintf(line, sizeof line, "none: %s", sw->cal_why[d]);
        fprintf(f, "%s{\"device\": \"%s\", \"source\": \"%s\", \"quality\": \"%s\", \"calibration\": ",
                first ? "" : ", ", sw->device[d], sw->cal[d].profile ? "profile" : "measured",
                sw->has_cal[d] ? nn_cal_quality_name(nn_calibration_quality(&sw->cal[d], NULL, 0)) : "none");
        nn_json_string(f, line);
        fprintf(f, "}");
        first = 0;
    }
}

/* The crossover of each matching pair (batch 0: none), what it is, and the
 * sentence every front end prints; the write-up's figure (null without). */
static void json_crossovers(FILE *f, const nn_sweep *sw)
{
    nn_sweep_pair pairs[2 * NN_SWEEP_MAX_DEVICES];
    int n = nn_sweep_pairs(sw, pairs, 2 * NN_SWEEP_MAX_DEVICES);
    char words[160], writeup[320];
    fprintf(f, "],\n  \"crossovers\": [");
    for (int k = 0; k < n; k++) {
        const nn_sweep_pair *p = &pairs[k];
        nn_sweep_crossover_words(sw, p, words, sizeof words);
        fprintf(f, "%s{\"pair\": \"%s\", \"from\": \"%s\", \"from_way\": \"%s\", \"to\": \"%s\", "
                   "\"way\": \"%s\", \"source\": \"%s\", \"batch\": %d, \"tie_batch\": %d, \"says\": ",
                k ? ", " : "", nn_pair_kind_name(p->kind), sw->device[p->base], nn_sweep_way_word(sw, p->base),
                sw->device[p->challenger], nn_sweep_way_word(sw, p->challenger),
                p->predicted ? "predicted" : "measured", p->crossover >= 0 ? sw->batch[p->crossover] : 0,
                p->tie >= 0 ? sw->batch[p->tie] : 0);
        nn_json_string(f, words);
        fprintf(f, "}");
    }
    nn_sweep_writeup_text(sw, writeup, sizeof writeup);
    fprintf(f, "],\n  \"writeup\": ");
    if (writeup[0])
        nn_json_string(f, writeup);
    else
        fprintf(f, "null");
    fprintf(f, "\n}\n");
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

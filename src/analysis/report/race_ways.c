/* src/analysis/report/race_ways.c - a race's four lanes (the framework way
 * and nnlab's, on each device), their verdicts and the one rule that calls a
 * lead; see nnlab/race_ways.h. */
#include "nnlab/race_ways.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnlab/export.h"
#include "nnlab/framework.h"
#include "util.h"

static void lane_init(nn_race_lane *l, int gpu, nn_gpu_way way, const char *label)
{
    memset(l, 0, sizeof *l);
    l->gpu = gpu;
    l->way = (int)way;
    nn_strlcpy(l->label, label, sizeof l->label);
}

/* A predicted figure from cal: present when positive and finite. */
static void lane_predicted(nn_race_lane *l, double us, const nn_calibration *cal, const char *source)
{
    if (!(isfinite(us) && us > 0)) {
        snprintf(l->why, sizeof l->why, "the model gives no step (%s)", source);
        return;
    }
    l->present = 1;
    l->step_us = us;
    l->spread = nn_calibration_spread(cal);
    l->contradictory = nn_calibration_contradictory(cal);
    nn_strlcpy(l->source, source, sizeof l->source);
}

/* The GPU's step in way w from cal (the framework way with prof's host cost
 * per op), as nn_explain prices it. */
static double gpu_step_us(const nn_preset *p, int batch, const nn_calibration *cal, const nn_gpu_profile *prof,
                          nn_gpu_way w)
{
    nn_explain_options opt;
    nn_explanation e;
    nn_gpu_way_options(w, &prof->framework_gpu, &opt);
    nn_explain(p, batch, cal, &opt, &e);
    return e.predicted_us;
}

static void predict_cpu(nn_race_ways *w, const nn_preset *p, const nn_calibration *cpu_cal,
                        const nn_gpu_profile *prof)
{
    nn_race_lane *fw = &w->lane[NN_LANE_FW_CPU], *own = &w->lane[NN_LANE_NNLAB_CPU];
    if (!cpu_cal) {
        snprintf(fw->why, sizeof fw->why, "not priced: this CPU has not been calibrated");
        snprintf(own->why, sizeof own->why, "not priced: this CPU has not been calibrated");
        return;
    }
    nn_explanation e;
    nn_gpu_profile figures;
    if (!prof) {                     /* the framework's CPU figures: the fitted ones */
        memset(&figures, 0, sizeof figures);
        figures.framework_cpu = nn_framework_cpu_shipped();
        prof = &figures;
    }
    double us = nn_framework_cpu_step_us(p, w->batch, cpu_cal, prof, &e);
    const char *src = "predicted from this CPU's calibration";
    lane_predicted(fw, us, cpu_cal, src);
    lane_predicted(own, e.predicted_us, cpu_cal, src);
}

static void predict_gpu(nn_race_ways *w, const nn_preset *p, const nn_calibration *gpu_cal,
                        const nn_gpu_profile *prof, nn_gpu_way gpu_way)
{
    nn_calibration from_profile;
    char src[NN_TEXT_LEN];
    if (!prof) {
        snprintf(w->lane[NN_LANE_FW_GPU].why, sizeof w->lane[NN_LANE_FW_GPU].why,
                 "not priced: no GPU profile found");
        snprintf(w->lane[NN_LANE_NNLAB_GPU].why, sizeof w->lane[NN_LANE_NNLAB_GPU].why,
                 "not priced: no GPU profile found");
        return;
    }
    if (gpu_cal) {
        snprintf(src, sizeof src, "predicted from this GPU's calibration");
    } else {                         /* no GPU here: the profile's figures */
        nn_profile_calibration(prof, &from_profile);
        gpu_cal = &from_profile;
        snprintf(src, sizeof src, "predicted for %s", prof->name);
    }
    lane_predicted(&w->lane[NN_LANE_FW_GPU], gpu_step_us(p, w->batch, gpu_cal, prof, NN_WAY_FRAMEWORK), gpu_cal,
                   src);
    lane_predicted(&w->lane[NN_LANE_NNLAB_GPU], gpu_step_us(p, w->batch, gpu_cal, prof, gpu_way), gpu_cal, src);
}

void nn_race_ways_predict(nn_race_ways *w, const nn_preset *p, int batch, const nn_calibration *cpu_cal,
                          const nn_calibration *gpu_cal, const nn_gpu_profile *prof, nn_gpu_way gpu_way)
{
    char gpu_label[32];
    memset(w, 0, sizeof *w);
    w->batch = batch > 0 ? batch : p->batch;
    if (gpu_way == NN_WAY_FRAMEWORK)
        gpu_way = NN_WAY_GRAPH;
    snprintf(gpu_label, sizeof gpu_label, "gpu %s", nn_gpu_way_key(gpu_way));
    lane_init(&w->lane[NN_LANE_FW_CPU], 0, NN_WAY_FRAMEWORK, "cpu framework");
    lane_init(&w->lane[NN_LANE_FW_GPU], 1, NN_WAY_FRAMEWORK, "gpu framework");
    lane_init(&w->lane[NN_LANE_NNLAB_CPU], 0, NN_WAY_EAGER, "cpu nnlab");
    lane_init(&w->lane[NN_LANE_NNLAB_GPU], 1, gpu_way, gpu_label);
    predict_cpu(w, p, cpu_cal, prof);
    predict_gpu(w, p, gpu_cal, prof, gpu_way);
}

void nn_race_lane_measure(nn_race_lane *l, double step_us, double spread, const char *source)
{
    if (!(isfinite(step_us) && step_us > 0))
        return;                      /* nothing measured: the prediction stays */
    l->present = 1;
    l->measured = 1;
    l->contradictory = 0;
    l->step_us = step_us;
    l->spread = isfinite(spread) && spread > 0 ? spread : 0;
    nn_strlcpy(l->source, source, sizeof l->source);
    l->why[0] = '\0';
}

/* ---- the verdict ------------------------------------------------------------------------- */

void nn_race_step_text(double us, char *buf, size_t len)
{
    if (!(us > 0))
        snprintf(buf, len, "-");
    else if (us >= 1000.0)
        snprintf(buf, len, "%.2f ms/step", us / 1000.0);
    else
        snprintf(buf, len, "%.0f us/step", us);
}

/* "cpu framework 1165 us predicted from this CPU's calibration, gpu framework
 * 3050 us predicted for T4" */
static void sources_text(const nn_race_lane *c, const nn_race_lane *g, char *buf, size_t len)
{
    snprintf(buf, len, "%s %.0f us %s, %s %.0f us %s", c->label, c->step_us, c->source, g->label, g->step_us,
             g->source);
}

static void missing_text(const nn_race_lane *c, const nn_race_lane *g, const char *who, char *buf, size_t len)
{
    const nn_race_lane *m = c->present ? g : c;
    snprintf(buf, len, "%s: no verdict: %s %s", who, m->label, m->why[0] ? m->why : "not priced");
}

int nn_race_verdict_text(const nn_race_ways *w, int cpu_lane, int gpu_lane, const char *who, char *buf,
                         size_t len)
{
    const nn_race_lane *c = &w->lane[cpu_lane], *g = &w->lane[gpu_lane];
    nn_verdict v;
    char src[2 * NN_TEXT_LEN + 64];
    int kind = nn_verdict_of(c->present ? c->step_us : NAN, c->spread, g->present ? g->step_us : NAN, g->spread,
                             c->contradictory || g->contradictory, &v);
    sources_text(c, g, src, sizeof src);
    switch (kind) {
    case NN_VERDICT_MISSING:
        missing_text(c, g, who, buf, len);
        break;
    case NN_VERDICT_CONTRADICTORY:
        snprintf(buf, len, "%s: cannot call at batch %d: the %s figure rests on a calibration marked "
                 "contradictory (the machine was busy?): calibrate again (%s)", who, w->batch,
                 c->contradictory ? "CPU's" : "GPU's", src);
        break;
    case NN_VERDICT_TOO_CLOSE:
        snprintf(buf, len, "%s: too close to call at batch %d: CPU %.0f vs GPU %.0f us, within their spreads "
                 "(%.0f%%, %.0f%%; %s)", who, w->batch, c->step_us, g->step_us, 100 * c->spread,
                 100 * g->spread, src);
        break;
    default:
        snprintf(buf, len, "%s: the GPU is %.2fx %s than the CPU at batch %d (%s)", who, v.ratio,
                 kind == NN_VERDICT_GPU_SLOWER ? "slower" : "faster", w->batch, src);
    }
    return kind;
}

int nn_race_verdict_short(const nn_race_ways *w, int cpu_lane, int gpu_lane, char *buf, size_t len)
{
    const nn_race_lane *c = &w->lane[cpu_lane], *g = &w->lane[gpu_lane];
    nn_verdict v;
    int kind = nn_verdict_of(c->present ? c->step_us : NAN, c->spread, g->present ? g->step_us : NAN, g->spread,
                             c->contradictory || g->contradictory, &v);
    switch (kind) {
    case NN_VERDICT_MISSING:
        snprintf(buf, len, "no verdict: %s not priced", c->present ? g->label : c->label);
        break;
    case NN_VERDICT_CONTRADICTORY:
        snprintf(buf, len, "cannot call: recalibrate");
        break;
    case NN_VERDICT_TOO_CLOSE:
        snprintf(buf, len, "too close to call");
        break;
    default:
        snprintf(buf, len, "GPU %.2fx %s", v.ratio, kind == NN_VERDICT_GPU_SLOWER ? "slower" : "faster");
    }
    return kind;
}

void nn_race_ways_summary(const nn_race_ways *w, char *framework, size_t flen, char *nnlab, size_t nlen)
{
    nn_race_verdict_text(w, NN_LANE_FW_CPU, NN_LANE_FW_GPU, "as a framework runs it", framework, flen);
    nn_race_verdict_text(w, NN_LANE_NNLAB_CPU, NN_LANE_NNLAB_GPU, "nnlab's own code", nnlab, nlen);
}

/* ---- exports ------------------------------------------------------------------------------ */

static void json_lane(FILE *f, const nn_race_lane *l, long steps, const char *pad, int last)
{
    fprintf(f, "%s  {\"label\": ", pad);
    nn_json_string(f, l->label);
    fprintf(f, ", \"device\": \"%s\", \"way\": \"%s\", \"source\": ", l->gpu ? "gpu" : "cpu",
            l->gpu || l->way == NN_WAY_FRAMEWORK ? nn_gpu_way_key((nn_gpu_way)l->way) : "nnlab");
    nn_json_string(f, l->present ? l->source : l->why);
    fprintf(f, ", \"measured\": %s, \"us_per_step\": ", l->measured ? "true" : "false");
    nn_json_number(f, l->present ? l->step_us : NAN);
    fprintf(f, ", \"spread\": ");
    nn_json_number(f, l->present ? l->spread : NAN);
    fprintf(f, ", \"steps\": %ld, \"total_s\": ", steps);
    nn_json_number(f, l->present ? (double)steps * l->step_us * 1e-6 : NAN);
    fprintf(f, "}%s\n", last ? "" : ",");
}

static void json_verdict(FILE *f, const nn_race_ways *w, int cpu, int gpu, const char *key, const char *who,
                         const char *pad, int last)
{
    char text[3 * NN_TEXT_LEN];
    nn_verdict v;
    const nn_race_lane *c = &w->lane[cpu], *g = &w->lane[gpu];
    int kind = nn_race_verdict_text(w, cpu, gpu, who, text, sizeof text);
    nn_verdict_of(c->present ? c->step_us : NAN, c->spread, g->present ? g->step_us : NAN, g->spread,
                  c->contradictory || g->contradictory, &v);
    fprintf(f, "%s  \"%s\": {\"cpu\": \"%s\", \"gpu\": \"%s\", \"verdict\": \"%s\", \"gpu_over_cpu\": ", pad,
            key, c->label, g->label, nn_verdict_kind_name(kind));
    /* the ratio of the two steps, whatever the verdict: a reader can check it */
    nn_json_number(f, c->present && g->present ? g->step_us / c->step_us : NAN);
    fprintf(f, ", \"text\": ");
    nn_json_string(f, text);
    fprintf(f, "}%s\n", last ? "" : ",");
}

int nn_race_ways_json(FILE *f, const nn_race_ways *w, long total_steps, int indent, int last)
{
    char pad[32];
    indent = indent < 0 ? 0 : indent > 30 ? 30 : indent;
    memset(pad, ' ', (size_t)indent);
    pad[indent] = '\0';
    fprintf(f, "%s\"ways\": [\n", pad);
    for (int k = 0; k < NN_LANES; k++)
        json_lane(f, &w->lane[k], total_steps, pad, k == NN_LANES - 1);
    fprintf(f, "%s],\n%s\"verdicts\": {\n", pad, pad);
    json_verdict(f, w, NN_LANE_FW_CPU, NN_LANE_FW_GPU, "framework", "as a framework runs it", pad, 0);
    json_verdict(f, w, NN_LANE_NNLAB_CPU, NN_LANE_NNLAB_GPU, "nnlab", "nnlab's own code", pad, 1);
    return fprintf(f, "%s}%s\n", pad, last ? "" : ",") < 0 || ferror(f) ? -1 : 0;
}

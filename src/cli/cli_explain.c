/* src/cli/cli_explain.c - nnlab explain. A device that is here: one point
 * timed, as a sweep of one (nnlab/sweep.h), and its explanation printed:
 * the same measured step, regime and prediction as `nnlab sweep` and the
 * lab give for that point, with the calibration's age and quality, and on
 * a GPU the profile's prediction beside the measurement, with the error.
 * A GPU that is not here: the cost model priced by a GPU profile, the job's
 * switches and the three ways of running the step side by side, every
 * figure marked predicted. Either way, for a preset that carries what its
 * original experiment measured, that and the prediction for the same job. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_common.h"
#include "cli_explain_ranks.h"
#include "nnlab/calibrate.h"
#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/explain.h"
#include "nnlab/observe.h"
#include "nnlab/preset.h"
#include "nnlab/profile.h"
#include "nnlab/sweep.h"
#include "util.h"

/* What one explanation prints. */
typedef struct explain_view {
    const nn_preset *p;
    const char *device;
    const nn_explanation *e;     /* the job's */
    const nn_calibration *cal;   /* its figures: measured, or a profile's */
    const nn_snapshot *s;        /* measured: the point's last snapshot; NULL when predicted */
    const nn_step_measure *m;    /* measured: the step; NULL when predicted */
    const nn_gpu_profile *prof;  /* the profile to hand (NULL: none) */
    const char *no_gpu;          /* predicted: why the GPU is not here */
    double profile_us;           /* a measured GPU step: the profile's prediction for it; 0 none */
    nn_explain_options opt;      /* the switches the explanation priced */
    int has_ranks;               /* --ranks: the N ranks' step (ranks, link, overlap) */
    nn_ranks_prediction ranks;
    nn_link link;
    int overlap;
    const nn_conv_algorithm_info *conv;  /* measured on a GPU: each convolution's algorithm */
    int n_conv;
    nn_explanation ways[NN_GPU_WAYS];    /* predicted: the three ways */
    int has_writeup;
    nn_writeup w;
    int profile_of_device;       /* measured on a GPU: prof is that GPU's own profile */
    char profile_note[NN_ERR_LEN];   /* measured on a GPU: which profile, and why ("" none) */
} explain_view;

static int predicted(const explain_view *v)
{
    return v->m == NULL;
}

/* ---- text ------------------------------------------------------------------------------------ */

/* "copy 12.0 + forward 40.1 + ..." : the parts of the measured step, which
 * add up to it (the same statistic: means) */
static void print_parts_text(const nn_step_measure *m)
{
    int first = 1;
    for (int p = 0; p < NN_STEP_PARTS; p++)
        if (m->part_valid & (1u << p)) {
            printf("%s%s %.1f", first ? " = " : " + ", nn_step_part_label(m, p), m->part_us[p]);
            first = 0;
        }
}

/* The device's own clock, where it timed the phases: not parts of the step
 * (the device runs while the host issues), so printed apart. */
static void print_device_clock(const nn_snapshot *s)
{
    if (!s->phase_device_clock)
        return;
    printf("  device:   ");
    for (int ph = NN_PHASE_COPY; ph <= NN_PHASE_OPTIMIZER; ph++)
        if (s->phase_valid & (1u << ph))
            printf(" %s %.1f", nn_phase_name(ph), s->phase_us[ph]);
    if (s->has_graph_us)
        printf(" graph %.1f", s->graph_us);
    printf(" (us on the device's clock, mean per step)\n");
}

static void print_model_text(const explain_view *v)
{
    const nn_explanation *e = v->e;
    char tag[NN_NAME_LEN + 24] = "";
    if (predicted(v))
        snprintf(tag, sizeof tag, " (predicted for %s)", nn_safe(v->prof->name));
    printf("  model:     %zu parameters, %.3f MFLOP and %.3f MB per step, %d operations%s\n", e->cost.params,
           e->cost.total.flops * 1e-6, e->cost.total.bytes * 1e-6, e->ops,
           v->s && v->s->has_counters ? " (counted by the backend)" : "");
    printf("  predicted: %.1f us = issue %.1f + copy %.1f + sync %.1f + fixed %.1f + work %.1f%s\n",
           e->predicted_us, e->issue_us, e->copy_us, e->sync_us, e->fixed_us, e->work_us, tag);
    printf("             work: FLOPs %.1f at the rates of their sizes, bytes %.1f; its floor: FLOPs %.1f "
           "at the %.0f GFLOP/s peak\n", e->sized_compute_us, e->memory_us, e->compute_us, e->peak_gflops);
    if (e->priced_graph)
        printf("             issue: one graph of %d nodes%s\n", e->graph_nodes,
               e->priced_pinned ? "; copies from pinned memory" : "");
    else if (e->priced_pinned)
        printf("             copies from pinned memory\n");
}

static void print_measured_text(const explain_view *v)
{
    if (predicted(v)) {
        printf("  measured:  nothing: no GPU here (%s); every GPU figure is predicted for %s\n", v->no_gpu,
               nn_safe(v->prof->name));
        return;
    }
    printf("  measured:  %.1f us/step (%s of %ld)", v->m->step_us, NN_STEP_STAT, v->m->timed_steps);
    print_parts_text(v->m);
    printf("\n");
    print_device_clock(v->s);
}

/* The profile's prediction beside a GPU's measured step: how the profiles
 * get checked. */
static void print_profile_check(const explain_view *v)
{
    if (v->profile_note[0])
        printf("  profile:   %s\n", v->profile_note);
    if (!(v->profile_us > 0))
        return;
    double err = (v->profile_us - v->m->step_us) / v->m->step_us;
    printf("  profile:   predicted for %s: %.1f us/step; measured %.1f: the profile is %.0f%% %s\n", nn_safe(v->prof->name),
           v->profile_us, v->m->step_us, fabs(100.0 * err), err < 0 ? "under" : "over");
}

static void print_ways_text(const explain_view *v)
{
    if (!predicted(v))
        return;
    printf("  three ways, predicted for %s:\n", nn_safe(v->prof->name));
    for (int w = 0; w < NN_GPU_WAYS; w++) {
        const nn_explanation *x = &v->ways[w];
        printf("    %-16s %10.1f us/step %12.0f samples/s  %-15s %d launches%s\n", nn_gpu_way_name((nn_gpu_way)w),
               x->predicted_us, x->cost.batch * 1e6 / x->predicted_us, nn_regime_name(x->regime), x->ops,
               w == NN_WAY_FRAMEWORK ? ", each batch copied, the loss read back" :
               w == NN_WAY_GRAPH ? " (one graph), data on the device" : ", data on the device");
    }
}

/* The write-up's whole job: what it measured, what the profile predicts,
 * and what the step measured here would take. */
static void print_writeup_text(const explain_view *v)
{
    const nn_writeup *w = &v->w;
    char line[NN_ERR_LEN];
    if (!v->has_writeup)
        return;
    nn_writeup_text(w, line, sizeof line);
    printf("  write-up:  %s (%s)\n", line, v->p->measured_note);
    if (v->prof)
        printf("             predicted for %s, the write-up's job: framework eager %.1f s, nnlab eager %.1f s, "
               "nnlab graph %.1f s\n", nn_safe(v->prof->name), w->way_s[NN_WAY_FRAMEWORK], w->way_s[NN_WAY_EAGER],
               w->way_s[NN_WAY_GRAPH]);
    /* the step measured here times the write-up's steps: the same network and
     * batch, so the same job whatever epochs this one was asked for */
    if (!predicted(v) && v->e->cost.batch == w->batch)
        printf("             %s here: %.1f us/step measured x %ld steps = %.1f s (predicted %.1f s)\n", v->device,
               v->m->step_us, w->steps, v->m->step_us * w->steps * 1e-6, v->e->predicted_us * w->steps * 1e-6);
}

static void print_explain_text(const explain_view *v)
{
    char line[NN_ERR_LEN], why[1280];
    const nn_explanation *e = v->e;
    /* a step measured far from the model: what its parts show comes first */
    if (predicted(v))
        snprintf(why, sizeof why, "%s", e->why);
    else
        nn_explain_why_measured(e, v->m, why, sizeof why);
    printf("%s on %s, batch %d", nn_safe(v->p->name), v->device, e->cost.batch);
    if (predicted(v))
        printf(": predicted for %s (a GPU profile)", nn_safe(v->prof->name));
    printf("\n");
    nn_calibration_describe(v->cal, (long long)time(NULL), line, sizeof line);
    printf("  calibration: %s\n", line);
    if (e->caveat[0])
        printf("  caveat:    %s\n", e->caveat);
    print_model_text(v);
    print_measured_text(v);
    printf("  regime:    %s%s%s%s\n  why:       %s\n  advice:    %s\n", nn_regime_name(e->regime),
           predicted(v) ? " (predicted for " : "", predicted(v) ? nn_safe(v->prof->name) : "", predicted(v) ? ")" : "",
           why, e->advice);
    if (v->s && v->s->note[0])
        printf("  switches:  %s\n", v->s->note);
    for (int i = 0; i < v->n_conv; i++) {
        nn_conv_algorithm_text(&v->conv[i], line, sizeof line);
        printf("  %s %s\n", i ? "          " : "algorithm:", line);
    }
    print_profile_check(v);
    print_ways_text(v);
    print_writeup_text(v);
    if (v->has_ranks)
        cli_ranks_print_text(&v->ranks, &v->link, v->overlap);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void print_model_json(const nn_explanation *e)
{
    printf("  \"params\": %zu,\n  \"flops_per_step\": %.6g,\n  \"bytes_per_step\": %.6g,\n  \"ops_per_step\": %d,\n",
           e->cost.params, e->cost.total.flops, e->cost.total.bytes, e->ops);
    printf("  \"predicted_us\": %.6g,\n  \"issue_us\": %.6g,\n  \"copy_us\": %.6g,\n  \"sync_us\": %.6g,\n",
           e->predicted_us, e->issue_us, e->copy_us, e->sync_us);
    printf("  \"fixed_us\": %.6g,\n  \"matrix_calls\": %d,\n", e->fixed_us, e->matrix_calls);
    printf("  \"work_us\": %.6g,\n  \"sized_compute_us\": %.6g,\n  \"compute_us\": %.6g,\n  \"memory_us\": %.6g,\n",
           e->work_us, e->sized_compute_us, e->compute_us, e->memory_us);
    printf("  \"overhead_us\": %.6g,\n  \"shortfall_us\": %.6g,\n  \"optimizer_us\": %.6g,\n  \"scaling_us\": %.6g,\n",
           e->overhead_us, e->shortfall_us, e->optimizer_us, e->scaling_us);
    printf("  \"peak_gflops\": %.6g,\n", e->peak_gflops);
    printf("  \"graph\": %s,\n  \"graph_nodes\": %d,\n  \"pinned\": %s,\n  \"graph_saving_us\": %.6g,\n",
           e->priced_graph ? "true" : "false", e->graph_nodes, e->priced_pinned ? "true" : "false",
           e->graph_saving_us);
}

static void print_measured_json(const explain_view *v)
{
    if (predicted(v)) {
        printf("  \"measured_us\": null,\n  \"measured_stat\": \"%s\",\n  \"phases\": null,\n", NN_STEP_STAT);
        return;
    }
    printf("  \"measured_us\": %.6g,\n  \"measured_stat\": \"%s\",\n  \"phases\": {", v->m->step_us, NN_STEP_STAT);
    for (int ph = 0; ph < NN_STEP_PARTS; ph++) {
        printf("%s\"%s_us\": ", ph ? ", " : "", nn_step_part_name(ph));
        if (v->m->part_valid & (1u << ph))
            printf("%.3f", v->m->part_us[ph]);
        else
            printf("null");
    }
    /* the backward part's name in the text: "backward+adam" when > 0 */
    printf("},\n  \"adam_fused_layers\": %d,\n", v->m->adam_fused_layers);
}

/* "profile": {...}: the profile to hand and, for a GPU measured here, its
 * prediction beside the measurement and the error. */
static void print_profile_json(const explain_view *v)
{
    printf("  \"profile\": ");
    if (!v->prof) {
        printf("null,\n");
        return;
    }
    printf("{\"name\": ");
    cli_json_string(stdout, v->prof->name);
    printf(", \"id\": ");
    cli_json_string(stdout, v->prof->id);
    printf(", \"measured\": %s", v->prof->measured ? "true" : "false");
    if (v->profile_note[0]) {
        printf(", \"of_this_gpu\": %s, \"note\": ", v->profile_of_device ? "true" : "false");
        cli_json_string(stdout, v->profile_note);
    }
    if (v->profile_us > 0)
        printf(", \"predicted_us\": %.6g, \"error\": %.4g", v->profile_us,
               (v->profile_us - v->m->step_us) / v->m->step_us);
    printf("},\n");
}

static void print_ways_json(const explain_view *v)
{
    printf("  \"ways\": ");
    if (!predicted(v)) {
        printf("null,\n");
        return;
    }
    printf("[\n");
    for (int w = 0; w < NN_GPU_WAYS; w++) {
        const nn_explanation *x = &v->ways[w];
        printf("    {\"way\": \"%s\", \"name\": \"%s\", \"source\": \"predicted\", \"predicted_us\": %.6g, "
               "\"samples_per_s\": %.6g, \"ops_per_step\": %d, \"regime\": \"%s\"}%s\n",
               nn_gpu_way_key((nn_gpu_way)w), nn_gpu_way_name((nn_gpu_way)w), x->predicted_us,
               x->cost.batch * 1e6 / x->predicted_us, x->ops, nn_regime_name(x->regime),
               w + 1 < NN_GPU_WAYS ? "," : "");
    }
    printf("  ],\n");
}

static void print_writeup_json(const explain_view *v)
{
    const nn_writeup *w = &v->w;
    printf("  \"writeup\": ");
    if (!v->has_writeup) {
        printf("null,\n");
        return;
    }
    printf("{\"batch\": %d, \"epochs\": %d, \"steps\": %ld, \"measured_cpu_s\": %.6g, \"measured_gpu_s\": %.6g, "
           "\"measured_cpu_max_s\": %.6g, \"measured_gpu_max_s\": %.6g, \"own_job\": %s, \"note\": ", w->batch,
           w->epochs, w->steps, w->cpu_s, w->gpu_s, w->cpu_max_s > w->cpu_s ? w->cpu_max_s : w->cpu_s,
           w->gpu_max_s > w->gpu_s ? w->gpu_max_s : w->gpu_s, w->own_job ? "true" : "false");
    cli_json_string(stdout, v->p->measured_note);
    if (v->prof)
        printf(", \"predicted_s\": {\"framework\": %.6g, \"eager\": %.6g, \"graph\": %.6g}",
               w->way_s[NN_WAY_FRAMEWORK], w->way_s[NN_WAY_EAGER], w->way_s[NN_WAY_GRAPH]);
    if (!predicted(v) && v->e->cost.batch == w->batch)
        printf(", \"here_measured_s\": %.6g", v->m->step_us * w->steps * 1e-6);
    printf("},\n");
}

static void print_explain_json(const explain_view *v)
{
    const nn_explanation *e = v->e;
    printf("{\n  \"preset\": ");
    cli_json_string(stdout, v->p->name);
    printf(",\n  \"device\": \"%s\",\n  \"batch\": %d,\n", v->device, e->cost.batch);
    printf("  \"source\": \"%s\",\n", predicted(v) ? "predicted" : "measured");
    if (predicted(v)) {
        printf("  \"predicted_for\": ");
        cli_json_string(stdout, v->prof->name);
        printf(",\n  \"gpu_unavailable\": ");
        cli_json_string(stdout, v->no_gpu);
        printf(",\n");
    }
    printf("  ");
    cli_calibration_json(v->cal);
    printf(",\n");
    print_model_json(e);
    print_measured_json(v);
    printf("  \"regime\": \"%s\",\n  \"why\": ", nn_regime_name(e->regime));
    cli_json_string(stdout, e->why);
    if (!predicted(v)) {             /* what the measured parts show first, when far from the model */
        char why[1280];
        nn_explain_why_measured(e, v->m, why, sizeof why);
        printf(",\n  \"why_measured\": ");
        cli_json_string(stdout, why);
    }
    printf(",\n  \"advice\": ");
    cli_json_string(stdout, e->advice);
    printf(",\n");
    cli_conv_algorithms_json(v->conv, v->n_conv);
    print_profile_json(v);
    print_ways_json(v);
    print_writeup_json(v);
    if (v->has_ranks)
        cli_ranks_print_json(&v->ranks, &v->link, v->overlap);
    printf("  \"layers\": [\n");
    for (int i = 0; i < e->cost.n_layers; i++) {
        const nn_layer_cost *l = &e->cost.layers[i];
        /* a graph's wiring ("<- layer3, layer5; weights of layer2") holds no
         * character JSON must escape */
        printf("    {\"layer\": \"%s\", \"params\": %zu, \"fwd_flops\": %.6g, \"bwd_flops\": %.6g, "
               "\"fwd_bytes\": %.6g, \"bwd_bytes\": %.6g%s%s%s}%s\n",
               l->label, l->params, l->fwd.flops, l->bwd.flops, l->fwd.bytes, l->bwd.bytes,
               l->wiring[0] ? ", \"wiring\": \"" : "", l->wiring, l->wiring[0] ? "\"" : "",
               i + 1 < e->cost.n_layers ? "," : "");
    }
    printf("  ]\n}\n");
}

/* ---- the command ----------------------------------------------------------------------------- */

/* Times the one point; 0, or -1 after the reason. */
static int time_point(nn_sweep *sw, const nn_job_config *cfg, const nn_calibration *cal, const nn_gpu_profile *prof)
{
    int batch = cfg->batch ? cfg->batch : cfg->preset.batch;
    nn_sweep_init(sw, cfg, &batch, 1, cfg->steps, cfg->warmup);
    if (nn_sweep_add_device(sw, cfg->device, cal, NULL) != 0)
        return -1;
    if (prof)
        nn_sweep_set_profile(sw, prof);
    cli_run_sweep(sw, 1);
    return sw->pt[0][0].state == NN_POINT_DONE && sw->pt[0][0].has_model ? 0 : -1;
}

/* Everything one explanation is made of, which its view points into: the
 * preset, the job, the one point's sweep, the explanation with its figures
 * and the profile. Hundreds of KB together, so on the heap, owned by
 * nn_cli_explain (calloc: v starts empty). */
typedef struct explain_command {
    nn_preset p;
    nn_job_config cfg;
    explain_view v;
    nn_sweep sw;                 /* measured: the point timed */
    nn_explanation e;
    nn_calibration cal;          /* measured, or the profile's */
    nn_gpu_profile prof;
} explain_command;

/* The GPU is not here: its step priced by the profile, for the job's
 * switches and the three ways. */
static int explain_predicted(const cli_options *o, explain_command *c, const char *why)
{
    const nn_job_config *cfg = &c->cfg;
    explain_view *v = &c->v;
    nn_explain_options opt = { .data_on_device = cfg->data_on_device, .pinned = cfg->pinned,
                               .sync_every_step = cfg->sync_every_step, .graph = cfg->graph };
    int batch = cfg->batch ? cfg->batch : cfg->preset.batch;
    if (cli_gpu_profile(o, 1, &c->prof) != 0)
        return CLI_EXIT_USAGE;
    nn_profile_calibration(&c->prof, &c->cal);
    nn_explain(v->p, batch, &c->cal, &opt, &c->e);
    nn_profile_predict(v->p, batch, &c->prof, v->ways);
    v->e = &c->e;
    v->cal = &c->cal;
    v->prof = &c->prof;
    v->no_gpu = why;
    v->opt = opt;
    return 0;
}

/* The GPU's name in its description: "NVIDIA H200 (GPU 0 of 1), ..." ->
 * the length of "NVIDIA H200". */
static int gpu_name_length(const char *description)
{
    size_t n = strcspn(description, "(,");
    while (n > 0 && description[n - 1] == ' ')
        n--;
    return (int)n;
}

/* The profile a measured device is compared with: the one named
 * (--gpu-profile); on a GPU with none named, the profile of that GPU when
 * one ships (nn_profile_for_device, the lab's rule too), else the default,
 * the note saying that no profile matches. NULL when none loads. */
static const nn_gpu_profile *profile_for_measured(const cli_options *o, const char *device, nn_gpu_profile *prof,
                                                  explain_view *v)
{
    nn_device_status st;
    if (o->gpu_profile || nn_device_status_of(device, &st) != 0 || !st.gpu)
        return cli_gpu_profile(o, 0, prof) == 0 ? prof : NULL;
    const char *desc = nn_safe(st.description);
    if (nn_profile_for_device(st.description, prof) == 0) {
        v->profile_of_device = 1;
        snprintf(v->profile_note, sizeof v->profile_note, "compared with %s, the profile of this GPU (%.*s)",
                 nn_safe(prof->name), gpu_name_length(desc), desc);
        return prof;
    }
    if (cli_gpu_profile(o, 0, prof) != 0)
        return NULL;
    snprintf(v->profile_note, sizeof v->profile_note,
             "no shipped profile matches this GPU (%.*s): compared with %s, the default (--gpu-profile names "
             "another)", gpu_name_length(desc), desc, nn_safe(prof->name));
    return prof;
}

/* The device is here: one point timed, its explanation, and on a GPU the
 * profile's prediction for the same inputs. */
static int explain_measured(const cli_options *o, explain_command *c)
{
    const nn_job_config *cfg = &c->cfg;
    explain_view *v = &c->v;
    nn_sweep *sw = &c->sw;
    v->prof = profile_for_measured(o, cfg->device, &c->prof, v);
    if (!v->prof && o->gpu_profile)
        return CLI_EXIT_USAGE;
    if (cli_calibration(cfg->device, (int)o->threads, o->recalibrate, o->json, &c->cal) != 0 ||
        time_point(sw, cfg, &c->cal, v->prof) != 0 || nn_sweep_explain(sw, 0, 0, &c->e) != 0) {
        nn_sweep_free(sw);
        return EXIT_FAILURE;         /* the failed point has said why */
    }
    v->e = &c->e;
    v->cal = &c->cal;
    v->s = &sw->snap;
    v->m = &sw->pt[0][0].measured;
    v->profile_us = sw->pt[0][0].profile_us;
    v->conv = sw->conv;              /* in c, as sw: freeing the sweep keeps its figures */
    v->n_conv = sw->n_conv;
    nn_explain_inputs in;
    if (nn_observe_inputs(&sw->snap, &in) == 0)
        v->opt = in.opt;
    nn_sweep_free(sw);
    return 0;
}

/* --ranks: the step of that many ranks at the explained batch each,
 * priced from the same calibration and switches; 0, or -1 after the reason. */
static int explain_ranks(const cli_options *o, explain_command *c)
{
    explain_view *v = &c->v;
    if (cli_ranks_link(o, nn_device_kind_of(v->device).gpu, &v->link) != 0)
        return -1;
    v->overlap = !o->no_overlap;
    nn_ranks_predict(v->p, v->e->cost.batch, (int)o->ranks, v->cal, &v->opt, &v->link, v->overlap, &v->ranks);
    v->has_ranks = 1;
    return 0;
}

/* The job measured or predicted, then printed; 0 or the exit status. */
static int explain_command_run(cli_options *o, void *state)
{
    explain_command *c = state;
    nn_preset *p = &c->p;
    nn_job_config *cfg = &c->cfg;
    explain_view *v = &c->v;
    char err[NN_ERR_LEN];
    int rc;
    if (cli_load_preset(o->preset, p) != 0 || cli_job_config(o, p, cfg) != 0)
        return CLI_EXIT_USAGE;
    if (!cfg->device[0])
        nn_strlcpy(cfg->device, p->device, sizeof cfg->device);
    v->p = p;
    v->device = cfg->device;
    if (nn_device_require(cfg->device, err, sizeof err) == 0)
        rc = cli_check_sizes(o->batch > 0 ? "--batch" : NULL, o->preset, cfg) != 0 ? CLI_EXIT_USAGE
           : explain_measured(o, c);
    else if (nn_device_kind_of(cfg->device).gpu)
        rc = explain_predicted(o, c, err);
    else {
        fprintf(stderr, "nnlab: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    if (rc != 0 || (o->ranks > 0 && explain_ranks(o, c) != 0))
        return rc ? rc : CLI_EXIT_USAGE;
    v->has_writeup = nn_writeup_for_job(p, v->e->cost.batch, cfg->epochs > 0 ? cfg->epochs : p->epochs, v->prof,
                                        &v->w) == 0;
    if (o->json)
        print_explain_json(v);
    else
        print_explain_text(v);
    return 0;
}

int nn_cli_explain(int argc, char **argv)
{
    return cli_run_on_heap(CLI_EXPLAIN, argc, argv, sizeof(explain_command), explain_command_run);
}

/* src/cli/cli_analyze.c - the headless analysis commands: calibrate, explain and
 * sweep. They price the cost model with a calibration and time bench jobs
 * through the same engine API as `nnlab bench` and the lab. */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnlab/calibrate.h"
#include "nnlab/device.h"
#include "cli.h"
#include "nnlab/engine.h"
#include "nnlab/explain.h"
#include "nnlab/observe.h"
#include "nnlab/preset.h"
#include "util.h"

#define MAX_POINTS 64
#define MAX_DEVICES 4

typedef struct analyze_options {
    const char *preset, *device, *devices, *batches;
    long batch, steps, warmup, threads;
    int json, csv, recalibrate;
    int data_on_device, pinned, sync_every_step, graph;   /* the GPU switches, as train and bench */
} analyze_options;

/* getopt codes of the long-only GPU switches */
enum { OPT_DATA_ON_DEVICE = 256, OPT_NO_DATA_ON_DEVICE, OPT_PINNED, OPT_SYNC_EVERY_STEP, OPT_GRAPH, OPT_NO_GRAPH };

static int parse_options(int argc, char **argv, analyze_options *o)
{
    static const struct option longopts[] = {
        { "data-on-device", no_argument, NULL, OPT_DATA_ON_DEVICE },
        { "no-data-on-device", no_argument, NULL, OPT_NO_DATA_ON_DEVICE },
        { "pinned", no_argument, NULL, OPT_PINNED },
        { "sync-every-step", no_argument, NULL, OPT_SYNC_EVERY_STEP },
        { "graph", no_argument, NULL, OPT_GRAPH },    { "no-graph", no_argument, NULL, OPT_NO_GRAPH },
        { "preset", required_argument, NULL, 'p' },   { "device", required_argument, NULL, 'd' },
        { "devices", required_argument, NULL, 'D' },  { "batch", required_argument, NULL, 'b' },
        { "batches", required_argument, NULL, 'B' },  { "steps", required_argument, NULL, 's' },
        { "warmup", required_argument, NULL, 'w' },   { "threads", required_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },           { "csv", no_argument, NULL, 'c' },
        { "recalibrate", no_argument, NULL, 'R' },    { NULL, 0, NULL, 0 }
    };
    int c;
    /* the engine's defaults (nn_job_config_init): data on the device, graphs on */
    o->data_on_device = 1;
    o->graph = 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:d:b:s:w:t:j", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': o->preset = optarg; break;
        case 'd': o->device = optarg; break;
        case 'D': o->devices = optarg; break;
        case 'B': o->batches = optarg; break;
        case 'b': if (nn_cli_parse_count("batch", optarg, 1, &o->batch)) return -1; break;
        case 's': if (nn_cli_parse_count("steps", optarg, 1, &o->steps)) return -1; break;
        case 'w': if (nn_cli_parse_count("warmup", optarg, 0, &o->warmup)) return -1; break;
        case 't': if (nn_cli_parse_count("threads", optarg, 1, &o->threads)) return -1; break;
        case 'j': o->json = 1; break;
        case 'c': o->csv = 1; break;
        case 'R': o->recalibrate = 1; break;
        case OPT_DATA_ON_DEVICE: o->data_on_device = 1; break;
        case OPT_NO_DATA_ON_DEVICE: o->data_on_device = 0; break;
        case OPT_PINNED: o->pinned = 1; break;
        case OPT_SYNC_EVERY_STEP: o->sync_every_step = 1; break;
        case OPT_GRAPH: o->graph = 1; break;
        case OPT_NO_GRAPH: o->graph = 0; break;
        default: return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "nnlab: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    static nn_job_config switches;   /* only the switches matter to the rule */
    char err[NN_ERR_LEN];
    switches.data_on_device = o->data_on_device;
    switches.pinned = o->pinned;
    if (nn_job_switches_check(&switches, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return -1;
    }
    return 0;
}

/* ---- calibration ------------------------------------------------------------------ */

static void show_progress(void *ctx, double fraction, const char *what)
{
    (void)ctx;
    fprintf(stderr, "\rcalibrating: %3.0f%% %-40s", fraction * 100.0, what);
    if (fraction >= 1.0)
        fprintf(stderr, "\n");
}

/* The cached calibration of device, measured (and cached) on first use. */
static int get_calibration(const char *device, int threads, int force, int quiet, nn_calibration *cal)
{
    char err[NN_ERR_LEN];
    if (!force && nn_calibration_load(device, cal) == 0)
        return 0;
    if (nn_calibrate(device, threads, cal, quiet ? NULL : show_progress, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return -1;
    }
    if (nn_calibration_save(cal, err, sizeof err) != 0)
        fprintf(stderr, "nnlab: warning: calibration not cached: %s\n", err);
    return 0;
}

static void print_curve_json(const char *name, const nn_rate_curve *c)
{
    printf(", \"%s\": [", name);
    for (int i = 0; i < c->n; i++)
        printf("%s{\"flops\": %.4g, \"gflops\": %.4g}", i ? ", " : "", c->flops[i], c->gflops[i]);
    printf("]");
}

/* s as a JSON string: a message may hold quotes, backslashes or control characters */
void nn_cli_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

/* A figure the backend cannot have (no pinned memory, no graphs) is null. */
static void print_optional_json(const char *name, int valid, double v)
{
    if (valid)
        printf(", \"%s\": %.4g", name, v);
    else
        printf(", \"%s\": null", name);
}

static void print_calibration_json(const nn_calibration *c, int last)
{
    printf("  {\"device\": \"%s\", \"machine\": \"%s\", \"gemm_gflops\": %.4g, \"gemm_gflops_1thread\": %.4g, "
           "\"mem_gbps\": %.4g, \"op_us\": %.4g, \"sync_us\": %.4g, \"upload_us\": %.4g, "
           "\"upload_gbps\": %.4g, \"host_copy_gbps\": %.4g, \"download_us\": %.4g",
           c->device, c->machine, c->gemm_gflops, c->gemm_gflops_1thread, c->mem_gbps, c->op_us, c->sync_us,
           c->upload_us, c->upload_gbps, c->host_copy_gbps, c->download_us);
    print_optional_json("pinned_upload_us", c->has_pinned, c->pinned_upload_us);
    print_optional_json("pinned_upload_gbps", c->has_pinned, c->pinned_upload_gbps);
    print_optional_json("graph_launch_us", c->has_graph, c->graph_launch_us);
    print_optional_json("graph_node_us", c->has_graph, c->graph_node_us);
    printf(", \"matrix_op_us\": %.4g", c->matrix_op_us);
    print_curve_json("linear_fwd", &c->linear_fwd);
    print_curve_json("linear_bwd", &c->linear_bwd);
    print_curve_json("conv_fwd", &c->conv_fwd);
    print_curve_json("conv_bwd", &c->conv_bwd);
    printf(", \"elem_ns\": {");
    for (int k = NN_OP_RELU; k < NN_OP_CLASSES; k++)
        printf("%s\"%s\": [%.4g, %.4g]", k > NN_OP_RELU ? ", " : "", nn_op_class_name((nn_op_class)k),
               c->elem_ns[k][0], c->elem_ns[k][1]);
    printf("}");
    printf(", \"note\": ");
    nn_cli_json_string(c->note);
    printf("}%s\n", last ? "" : ",");
}

/* "2.7e+03: 5.4" per point, GFLOP/s by FLOPs per call */
static void print_curve_text(const char *what, const nn_rate_curve *c)
{
    if (c->n == 0)
        return;
    printf("  %-18s", what);
    for (int i = 0; i < c->n; i++)
        printf(" %.2g:%.1f", c->flops[i], c->gflops[i]);
    printf("\n");
}

static void print_calibration_text(const nn_calibration *c)
{
    printf("%s on %s\n", c->device, c->machine);
    if (c->gemm_gflops_1thread > 0)
        printf("  sgemm:            %.1f GFLOP/s (one thread: %.1f)\n", c->gemm_gflops, c->gemm_gflops_1thread);
    else
        printf("  sgemm:            %.1f GFLOP/s\n", c->gemm_gflops);
    printf("  streaming:        %.1f GB/s (an elementwise op, read + write)\n", c->mem_gbps);
    printf("  issue one op:     %.3f us\n", c->op_us);
    printf("  op + synchronise: %.3f us\n", c->sync_us);
    printf("  copy to device:   %.3f us fixed, %.1f GB/s\n", c->upload_us, c->upload_gbps);
    if (c->has_pinned)
        printf("  ... pinned:       %.3f us fixed, %.1f GB/s\n", c->pinned_upload_us, c->pinned_upload_gbps);
    printf("  copy to host:     %.3f us (4 bytes and the wait for them)\n", c->download_us);
    if (c->has_graph)
        printf("  graph replay:     %.3f us a launch + %.3f us a node\n", c->graph_launch_us, c->graph_node_us);
    printf("  host memcpy:      %.1f GB/s\n", c->host_copy_gbps);
    printf("  matrix product:   %.3f us fixed; GFLOP/s by FLOPs per call:\n", c->matrix_op_us);
    print_curve_text("linear forward", &c->linear_fwd);
    print_curve_text("linear backward", &c->linear_bwd);
    print_curve_text("conv forward", &c->conv_fwd);
    print_curve_text("conv backward", &c->conv_bwd);
    printf("  per element (ns, forward/backward; a loss or a step is one call):\n   ");
    for (int k = NN_OP_RELU; k < NN_OP_CLASSES; k++)
        if (k < NN_OP_SOFTMAX_XENT)
            printf(" %s %.2f/%.2f", nn_op_class_name((nn_op_class)k), c->elem_ns[k][0], c->elem_ns[k][1]);
        else
            printf(" %s %.2f", nn_op_class_name((nn_op_class)k), c->elem_ns[k][0]);
    printf("\n");
    if (c->note[0])
        printf("  note:             %s\n", c->note);
}

int nn_cli_calibrate(int argc, char **argv)
{
    analyze_options o = { 0 };
    nn_calibration cal[MAX_DEVICES];
    const char *devices[MAX_DEVICES];
    nn_device_status st[NN_MAX_DEVICES];
    int n = 0;
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    if (o.device) {
        devices[n++] = o.device;
    } else {
        int nd = nn_devices_list(st, NN_MAX_DEVICES);
        for (int i = 0; i < nd && n < MAX_DEVICES; i++)
            if (st[i].available)
                devices[n++] = st[i].name;
    }
    for (int i = 0; i < n; i++)
        if (get_calibration(devices[i], (int)o.threads, 1, o.json, &cal[i]) != 0)
            return 1;
    if (o.json) {
        printf("[\n");
        for (int i = 0; i < n; i++)
            print_calibration_json(&cal[i], i == n - 1);
        printf("]\n");
    } else {
        for (int i = 0; i < n; i++)
            print_calibration_text(&cal[i]);
    }
    return 0;
}

/* ---- timing a point ------------------------------------------------------------------ */

/* Times `steps` training steps of p on device at batch; 0 or -1. */
static int time_point(const nn_preset *p, const char *device, int batch, const analyze_options *o,
                      nn_snapshot *s)
{
    nn_job_config cfg;
    char err[NN_ERR_LEN];
    nn_job_config_init(&cfg, p);
    nn_strlcpy(cfg.device, device, sizeof cfg.device);
    cfg.batch = batch;
    cfg.bench = 1;
    cfg.steps = o->steps ? o->steps : 20;
    cfg.warmup = o->warmup ? o->warmup : 3;
    cfg.threads = (int)o->threads;
    cfg.data_on_device = o->data_on_device;
    cfg.pinned = o->pinned;
    cfg.sync_every_step = o->sync_every_step;
    cfg.graph = o->graph;
    nn_job *job = nn_job_start(&cfg, err, sizeof err);
    if (!job) {
        fprintf(stderr, "nnlab: %s\n", err);
        return -1;
    }
    nn_job_wait(job);
    nn_job_snapshot(job, s);
    nn_job_free(job);
    if (s->state != NN_JOB_DONE) {
        fprintf(stderr, "nnlab: %s at batch %d: %s\n", device, batch, s->error);
        return -1;
    }
    return 0;
}

/* ---- explain ----------------------------------------------------------------------------- */

/* "copy 12.0 + forward 40.1 + ..." : the parts of the measured step, which
 * add up to it (the same statistic: means) */
static void print_parts_text(const nn_step_measure *m)
{
    int first = 1;
    for (int p = 0; p < NN_STEP_PARTS; p++)
        if (m->part_valid & (1u << p)) {
            printf("%s%s %.1f", first ? " = " : " + ", nn_step_part_name(p), m->part_us[p]);
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

static void print_explain_text(const nn_preset *p, const nn_explanation *e, const nn_snapshot *s)
{
    nn_step_measure m;
    nn_measure_step(s, &m);
    printf("%s on %s, batch %d\n", p->name, s->device, e->cost.batch);
    printf("  model:     %zu parameters, %.3f MFLOP and %.3f MB per step, %d operations%s\n", e->cost.params,
           e->cost.total.flops * 1e-6, e->cost.total.bytes * 1e-6, e->ops,
           s->has_counters ? " (counted by the backend)" : "");
    printf("  predicted: %.1f us = issue %.1f + copy %.1f + sync %.1f + fixed %.1f + work %.1f\n",
           e->predicted_us, e->issue_us, e->copy_us, e->sync_us, e->fixed_us, e->work_us);
    printf("             work: FLOPs %.1f at the rates of their sizes, bytes %.1f; its floor: FLOPs %.1f "
           "at the %.0f GFLOP/s peak\n", e->sized_compute_us, e->memory_us, e->compute_us, e->peak_gflops);
    if (e->priced_graph)
        printf("             issue: one graph of %d nodes%s\n", e->graph_nodes,
               e->priced_pinned ? "; copies from pinned memory" : "");
    else if (e->priced_pinned)
        printf("             copies from pinned memory\n");
    printf("  measured:  %.1f us/step (%s of %ld)", m.step_us, NN_STEP_STAT, m.timed_steps);
    print_parts_text(&m);
    printf("\n");
    print_device_clock(s);
    printf("  regime:    %s\n  why:       %s\n  advice:    %s\n", nn_regime_name(e->regime), e->why,
           e->advice);
    if (s->note[0])
        printf("  switches:  %s\n", s->note);
    if (m.step_us > 2.0 * e->predicted_us)
        printf("  note:      the measured step is %.1fx the model: per-op costs the model does not "
               "see (thread wake-ups, cache misses) dominate\n", m.step_us / e->predicted_us);
}

static void print_explain_json(const nn_preset *p, const nn_explanation *e, const nn_snapshot *s)
{
    nn_step_measure m;
    nn_measure_step(s, &m);
    printf("{\n  \"preset\": \"%s\",\n  \"device\": \"%s\",\n  \"batch\": %d,\n", p->name, s->device,
           e->cost.batch);
    printf("  \"params\": %zu,\n  \"flops_per_step\": %.6g,\n  \"bytes_per_step\": %.6g,\n  \"ops_per_step\": %d,\n",
           e->cost.params, e->cost.total.flops, e->cost.total.bytes, e->ops);
    printf("  \"predicted_us\": %.6g,\n  \"issue_us\": %.6g,\n  \"copy_us\": %.6g,\n  \"sync_us\": %.6g,\n",
           e->predicted_us, e->issue_us, e->copy_us, e->sync_us);
    printf("  \"fixed_us\": %.6g,\n  \"matrix_calls\": %d,\n", e->fixed_us, e->matrix_calls);
    printf("  \"work_us\": %.6g,\n  \"sized_compute_us\": %.6g,\n  \"compute_us\": %.6g,\n  \"memory_us\": %.6g,\n",
           e->work_us, e->sized_compute_us, e->compute_us, e->memory_us);
    printf("  \"peak_gflops\": %.6g,\n", e->peak_gflops);
    printf("  \"graph\": %s,\n  \"graph_nodes\": %d,\n  \"pinned\": %s,\n  \"graph_saving_us\": %.6g,\n",
           e->priced_graph ? "true" : "false", e->graph_nodes, e->priced_pinned ? "true" : "false",
           e->graph_saving_us);
    printf("  \"measured_us\": %.6g,\n  \"measured_stat\": \"%s\",\n  \"phases\": {", m.step_us, NN_STEP_STAT);
    for (int ph = 0; ph < NN_STEP_PARTS; ph++) {
        printf("%s\"%s_us\": ", ph ? ", " : "", nn_step_part_name(ph));
        if (m.part_valid & (1u << ph))
            printf("%.3f", m.part_us[ph]);
        else
            printf("null");
    }
    printf("},\n  \"regime\": \"%s\",\n  \"why\": \"%s\",\n  \"advice\": \"%s\",\n  \"layers\": [\n",
           nn_regime_name(e->regime), e->why, e->advice);
    for (int i = 0; i < e->cost.n_layers; i++) {
        const nn_layer_cost *l = &e->cost.layers[i];
        printf("    {\"layer\": \"%s\", \"params\": %zu, \"fwd_flops\": %.6g, \"bwd_flops\": %.6g, "
               "\"fwd_bytes\": %.6g, \"bwd_bytes\": %.6g}%s\n",
               l->label, l->params, l->fwd.flops, l->bwd.flops, l->fwd.bytes, l->bwd.bytes,
               i + 1 < e->cost.n_layers ? "," : "");
    }
    printf("  ]\n}\n");
}

int nn_cli_explain(int argc, char **argv)
{
    analyze_options o = { 0 };
    nn_preset p;
    nn_calibration cal;
    nn_snapshot s;
    nn_explanation e;
    if (parse_options(argc, argv, &o) != 0 || nn_cli_load_preset(o.preset, &p) != 0)
        return 2;
    const char *device = o.device ? o.device : p.device;
    int batch = o.batch ? (int)o.batch : p.batch;
    char err[NN_ERR_LEN];
    if (nn_device_require(device, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return 2;
    }
    if (get_calibration(device, (int)o.threads, o.recalibrate, o.json, &cal) != 0 ||
        time_point(&p, device, batch, &o, &s) != 0)
        return 1;
    nn_explain_inputs in;
    if (nn_observe_inputs(&s, &in) != 0) {
        fprintf(stderr, "nnlab: %s at batch %d: the job did not run\n", device, batch);
        return 1;
    }
    nn_explain_inputs_run(&p, &cal, &in, &e);
    if (o.json)
        print_explain_json(&p, &e, &s);
    else
        print_explain_text(&p, &e, &s);
    return 0;
}

/* ---- sweep -------------------------------------------------------------------------------- */

typedef struct sweep_point {
    int batch;
    int ok;
    double us, samples_per_s, doubling;   /* doubling: t(b) / t(b/2), 0 if not measured */
    nn_regime regime;
} sweep_point;

/* "1,4,16" -> batches; returns the count or -1. */
static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    char buf[512], *save = NULL;
    nn_strlcpy(buf, s, sizeof buf);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (n == max || nn_parse_long(tok, &v) != 0 || v < 1 || v > 1048576)
            return -1;
        out[n++] = (int)v;
    }
    return n;
}

static int split_devices(const char *s, char names[MAX_DEVICES][16])
{
    int n = 0;
    char buf[128], *save = NULL;
    nn_strlcpy(buf, s, sizeof buf);
    for (char *tok = strtok_r(buf, ",", &save); tok && n < MAX_DEVICES; tok = strtok_r(NULL, ",", &save))
        nn_strlcpy(names[n++], tok, 16);
    return n;
}

/* The smallest batch from which device b's throughput beats device a's at
 * every larger measured batch; 0 when it never does. */
static int crossover(const sweep_point *a, const sweep_point *b, int n)
{
    int from = 0;
    for (int i = n - 1; i >= 0; i--) {
        if (!a[i].ok || !b[i].ok || b[i].samples_per_s <= a[i].samples_per_s)
            break;
        from = b[i].batch;
    }
    return from;
}

static void fill_doubling(sweep_point *pts, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (pts[j].batch * 2 == pts[i].batch && pts[i].ok && pts[j].ok && pts[j].us > 0)
                pts[i].doubling = pts[i].us / pts[j].us;
}

static void print_sweep(char names[MAX_DEVICES][16], int nd, sweep_point pts[MAX_DEVICES][MAX_POINTS], int nb,
                        const analyze_options *o)
{
    if (o->csv)
        printf("device,batch,us_per_step,samples_per_s,doubling,regime\n");
    else if (o->json)
        printf("{\n  \"points\": [\n");
    else
        printf("%-8s %7s %12s %14s %9s  %s\n", "device", "batch", "us/step", "samples/s", "doubling", "regime");
    int first = 1;
    for (int d = 0; d < nd; d++)
        for (int i = 0; i < nb; i++) {
            const sweep_point *p = &pts[d][i];
            if (!p->ok)
                continue;
            if (o->csv)
                printf("%s,%d,%.3f,%.1f,%.3f,%s\n", names[d], p->batch, p->us, p->samples_per_s, p->doubling,
                       nn_regime_name(p->regime));
            else if (o->json)
                printf("%s    {\"device\": \"%s\", \"batch\": %d, \"us_per_step\": %.6g, \"samples_per_s\": %.6g, "
                       "\"doubling\": %.4g, \"regime\": \"%s\"}", first ? "" : ",\n", names[d], p->batch, p->us,
                       p->samples_per_s, p->doubling, nn_regime_name(p->regime));
            else {
                char doubling[16] = "-";
                if (p->doubling > 0)
                    snprintf(doubling, sizeof doubling, "%.2f", p->doubling);
                printf("%-8s %7d %12.1f %14.0f %9s  %s\n", names[d], p->batch, p->us, p->samples_per_s,
                       doubling, nn_regime_name(p->regime));
            }
            first = 0;
        }
    if (o->json)
        printf("\n  ],\n  \"crossovers\": [");
    for (int d = 1; d < nd; d++) {
        int x = crossover(pts[0], pts[d], nb);
        if (o->json)
            printf("%s{\"from\": \"%s\", \"to\": \"%s\", \"batch\": %d}", d > 1 ? ", " : "", names[0], names[d], x);
        else if (!o->csv && x)
            printf("%s overtakes %s from batch %d on\n", names[d], names[0], x);
        else if (!o->csv)
            printf("%s does not overtake %s at the measured batches\n", names[d], names[0]);
    }
    if (o->json)
        printf("]\n}\n");
}

int nn_cli_sweep(int argc, char **argv)
{
    analyze_options o = { 0 };
    nn_preset p;
    static sweep_point pts[MAX_DEVICES][MAX_POINTS];
    char names[MAX_DEVICES][16];
    int batches[MAX_POINTS];
    if (parse_options(argc, argv, &o) != 0 || nn_cli_load_preset(o.preset, &p) != 0)
        return 2;
    int nb = parse_list(o.batches ? o.batches : "1,2,4,8,16,32,64,128,256,512,1024,2048,4096", batches, MAX_POINTS);
    int nd = split_devices(o.devices ? o.devices : "cpu", names);
    if (nb < 1) {
        fprintf(stderr, "nnlab: --batches %s: expected a list like 1,4,16 of whole numbers 1..1048576\n", o.batches);
        return 2;
    }
    for (int d = 0; d < nd; d++) {
        nn_calibration cal;
        char err[NN_ERR_LEN];
        if (nn_device_require(names[d], err, sizeof err) != 0) {
            fprintf(stderr, "nnlab: %s\n", err);
            return 2;
        }
        if (get_calibration(names[d], (int)o.threads, 0, 1, &cal) != 0)
            return 1;
        for (int i = 0; i < nb; i++) {
            nn_snapshot s;
            nn_explanation e;
            sweep_point *pt = &pts[d][i];
            pt->batch = batches[i];
            fprintf(stderr, "\rsweep: %s batch %d ...   ", names[d], batches[i]);
            if (time_point(&p, names[d], batches[i], &o, &s) != 0)
                continue;      /* e.g. out of memory at a large batch: the rest still stands */
            nn_explain_inputs in;
            if (nn_observe_inputs(&s, &in) != 0)
                continue;
            nn_explain_inputs_run(&p, &cal, &in, &e);
            pt->ok = 1;
            pt->us = nn_measured_step_us(&s);
            pt->samples_per_s = pt->us > 0 ? batches[i] * 1e6 / pt->us : 0;
            pt->regime = e.regime;
        }
        fill_doubling(pts[d], nb);
    }
    fprintf(stderr, "\r%40s\r", "");
    print_sweep(names, nd, pts, nb, &o);
    return 0;
}

/* src/cli/cli_analyze.c - nnlab calibrate and nnlab explain. Explain times
 * one point, as a sweep of one (nnlab/sweep.h), and prints its explanation:
 * the same measured step, regime and prediction as `nnlab sweep` and the
 * lab give for that point. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_common.h"
#include "nnlab/calibrate.h"
#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/explain.h"
#include "nnlab/observe.h"
#include "nnlab/preset.h"
#include "nnlab/sweep.h"
#include "util.h"

/* ---- calibrate ---------------------------------------------------------------------------- */

static void print_curve_json(const char *name, const nn_rate_curve *c)
{
    printf(", \"%s\": [", name);
    for (int i = 0; i < c->n; i++)
        printf("%s{\"flops\": %.4g, \"gflops\": %.4g}", i ? ", " : "", c->flops[i], c->gflops[i]);
    printf("]");
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
    cli_json_string(stdout, c->note);
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

/* The devices to calibrate: the one named, else every available one. */
static int calibrate_devices(const cli_options *o, char names[NN_MAX_DEVICES][16])
{
    nn_device_status st[NN_MAX_DEVICES];
    int n = 0;
    if (o->device) {
        nn_strlcpy(names[n++], o->device, sizeof names[0]);
        return n;
    }
    int nd = nn_devices_list(st, NN_MAX_DEVICES);
    for (int i = 0; i < nd; i++)
        if (st[i].available)
            nn_strlcpy(names[n++], st[i].name, sizeof names[0]);
    return n;
}

int nn_cli_calibrate(int argc, char **argv)
{
    cli_options o;
    static nn_calibration cal[NN_MAX_DEVICES];
    char names[NN_MAX_DEVICES][16];
    int rc = cli_parse(CLI_CALIBRATE, argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : CLI_EXIT_USAGE;
    int n = calibrate_devices(&o, names);
    for (int i = 0; i < n; i++)
        if (cli_calibration(names[i], (int)o.threads, 1, o.json, &cal[i]) != 0)
            return EXIT_FAILURE;
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

/* ---- explain ------------------------------------------------------------------------------ */

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

static void print_explain_text(const nn_preset *p, const nn_explanation *e, const nn_snapshot *s,
                               const nn_step_measure *mp)
{
    nn_step_measure m = *mp;
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

static void print_explain_json(const nn_preset *p, const nn_explanation *e, const nn_snapshot *s,
                               const nn_step_measure *mp)
{
    nn_step_measure m = *mp;
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

/* Times the one point; 0, or -1 after the reason. */
static int time_point(nn_sweep *sw, const nn_job_config *cfg, const nn_calibration *cal)
{
    int batch = cfg->batch ? cfg->batch : cfg->preset.batch;
    nn_sweep_init(sw, cfg, &batch, 1, cfg->steps, cfg->warmup);
    if (nn_sweep_add_device(sw, cfg->device, cal, NULL) != 0)
        return -1;
    cli_run_sweep(sw, 1);
    return sw->pt[0][0].state == NN_POINT_DONE && sw->pt[0][0].has_model ? 0 : -1;
}

int nn_cli_explain(int argc, char **argv)
{
    cli_options o;
    static nn_preset p;
    static nn_job_config cfg;
    static nn_sweep sw;
    static nn_explanation e;
    nn_calibration cal;
    char err[NN_ERR_LEN];
    int rc = cli_parse(CLI_EXPLAIN, argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : CLI_EXIT_USAGE;
    if (cli_load_preset(o.preset, &p) != 0 || cli_job_config(&o, &p, &cfg) != 0)
        return CLI_EXIT_USAGE;
    if (!cfg.device[0])
        nn_strlcpy(cfg.device, p.device, sizeof cfg.device);
    if (nn_device_require(cfg.device, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    if (cli_calibration(cfg.device, (int)o.threads, o.recalibrate, o.json, &cal) != 0 ||
        time_point(&sw, &cfg, &cal) != 0 || nn_sweep_explain(&sw, 0, 0, &e) != 0) {
        nn_sweep_free(&sw);
        return EXIT_FAILURE;         /* the failed point has said why */
    }
    if (o.json)
        print_explain_json(&p, &e, &sw.snap, &sw.pt[0][0].measured);
    else
        print_explain_text(&p, &e, &sw.snap, &sw.pt[0][0].measured);
    nn_sweep_free(&sw);
    return 0;
}

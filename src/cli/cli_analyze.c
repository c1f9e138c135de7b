/* src/cli/cli_analyze.c - nnlab calibrate: measure each device (every figure
 * repeated, its spread kept), print the figures with their quality, and
 * with --save-profile keep a GPU's calibration as a GPU profile. nnlab
 * explain is cli_explain.c. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_calibrate_link.h"
#include "cli_common.h"
#include "nnlab/calibrate.h"
#include "nnlab/device.h"
#include "nnlab/profile.h"
#include "util.h"

/* ---- calibrate ---------------------------------------------------------------------------- */

static void print_curve_json(const char *name, const nn_rate_curve *c)
{
    printf(", \"%s\": [", name);
    for (int i = 0; i < c->n; i++)
        printf("%s{\"flops\": %.4g, \"gflops\": %.4g}", i ? ", " : "", c->flops[i], c->gflops[i]);
    printf("]");
}

/* What the checks compared the figures with (calibrate.h's
 * nn_calibration_check), the clock that timed them and what was measured
 * again; the checks' verdict is in "calibration". */
static void print_checks_json(const nn_calibration *c)
{
    cli_json_optional("device_peak_gflops", c->device_peak_gflops > 0, c->device_peak_gflops, 4);
    printf(", \"device_peak_how\": ");
    cli_json_string(stdout, c->device_peak_how);
    printf(", \"smallest_product_us\": %.4g, \"clock\": \"%s\", \"measured_again\": [",
           nn_calibration_smallest_product_us(c), c->device_clock ? "device" : "host");
    for (int k = 0, n = 0; k < NN_SPREADS; k++)
        if (c->remeasured & (1u << k))
            printf("%s\"%s\"", n++ ? ", " : "", nn_spread_name(k));
    printf("]");
}

/* A CPU device's one-core sgemm as the CPU facts judge OpenBLAS by: the
 * reference backend's products are its own plain loops, not OpenBLAS's, so
 * its rate says nothing about OpenBLAS's kernels (0: no judgement). */
static double blas_sgemm_1thread(const nn_calibration *c)
{
    return nn_device_kind_of(c->device).reference ? 0.0 : c->gemm_gflops_1thread;
}

static void print_calibration_json(const nn_calibration *c, int last)
{
    printf("  {\"device\": \"%s\", \"machine\": \"%s\", \"gemm_gflops\": %.4g, \"gemm_gflops_1thread\": %.4g, "
           "\"mem_gbps\": %.4g, \"op_us\": %.4g, \"sync_us\": %.4g, \"upload_us\": %.4g, "
           "\"upload_gbps\": %.4g, \"host_copy_gbps\": %.4g, \"download_us\": %.4g",
           c->device, c->machine, c->gemm_gflops, c->gemm_gflops_1thread, c->mem_gbps, c->op_us, c->sync_us,
           c->upload_us, c->upload_gbps, c->host_copy_gbps, c->download_us);
    /* a figure the backend cannot have (no pinned memory, no graphs) is null */
    cli_json_optional("pinned_upload_us", c->has_pinned, c->pinned_upload_us, 4);
    cli_json_optional("pinned_upload_gbps", c->has_pinned, c->pinned_upload_gbps, 4);
    cli_json_optional("graph_launch_us", c->has_graph, c->graph_launch_us, 4);
    cli_json_optional("graph_node_us", c->has_graph, c->graph_node_us, 4);
    printf(", \"matrix_op_us\": %.4g, \"fused_adam_max_batch\": %.0f, \"fresh_page_us\": %.4g, "
           "\"vector_floats\": %.0f", c->matrix_op_us, c->fused_adam_max_batch, c->fresh_page_us, c->vector_floats);
    print_checks_json(c);
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
    printf(", \"threads\": %d, ", c->threads);
    if (c->threads > 0) {        /* a CPU device: what it runs on */
        cli_cpu_facts_json(blas_sgemm_1thread(c));
        printf(", ");
        cli_products_json(c);
        printf(", ");
    }
    cli_calibration_json(c);
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

/* The checks: the peak and the clock, what was measured again, and every
 * check that failed (the quality line names the first). */
static void print_checks_text(const nn_calibration *c)
{
    nn_cal_failure fails[8];
    if (c->device_peak_gflops > 0)
        printf("  device peak:      %.0f GFLOP/s (%s)\n", c->device_peak_gflops, c->device_peak_how);
    printf("  timed on:         the %s's clock%s\n", c->device_clock ? "device" : "host",
           c->device_clock ? " (events around batches of 1 ms or more)" : "");
    if (c->remeasured) {
        printf("  measured again:  ");
        for (int k = 0, n = 0; k < NN_SPREADS; k++)
            if (c->remeasured & (1u << k))
                printf("%s %s", n++ ? "," : "", nn_spread_name(k));
        printf(" (failed a check)\n");
    }
    int n = nn_calibration_check(c, fails, 8);
    for (int i = 0; i < n && i < 8; i++)
        printf("  %s %s\n", i ? "                 " : "failed check:    ", fails[i].why);
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
    if (c->fresh_page_us > 0)
        printf("  fresh page:       %.3f us (a 4 KiB page's first touch after mmap: what a framework's "
               "new tensors pay)\n", c->fresh_page_us);
    if (c->fused_adam_max_batch > 0)
        printf("  Adam in backward: linear layers at batches up to %.0f (their gradient never "
               "stored; NNLAB_NO_FUSED_ADAM=1 keeps it)\n", c->fused_adam_max_batch);
    if (c->threads > 0) {
        cli_cpu_facts_text(blas_sgemm_1thread(c));
        cli_products_text(c);
    }
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
    printf("  spread:          ");
    for (int k = 0; k < NN_SPREADS; k++)
        printf(" %s %.0f%%%s", nn_spread_name(k), 100.0 * c->spread[k], k + 1 < NN_SPREADS ? "," : "\n");
    print_checks_text(c);
    char line[NN_ERR_LEN];
    nn_calibration_describe(c, (long long)time(NULL), line, sizeof line);
    printf("  quality:          %s\n", line);
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

/* --save-profile NAME: the GPU's calibration kept as a GPU profile in the
 * user's folder, marked measured; the two figures nnlab cannot measure
 * come from the default profile. 0, or -1 after a one-line error. */
static int save_profile(const char *name, const nn_calibration *cal)
{
    nn_gpu_profile est, prof;
    char err[NN_ERR_LEN], path[NN_PATH_LEN], origin[NN_TEXT_LEN + 96], when[32];
    time_t now = time(NULL);
    if (nn_profile_find(nn_profile_default_name(), &est, err, sizeof err) != 0 ||
        nn_profile_from_calibration(cal, name, &est, &prof, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: --save-profile %s: %s\n", name, err);
        return -1;
    }
    if (nn_profile_user_path(name, path, sizeof path) != 0) {
        fprintf(stderr, "nnlab: --save-profile %s: no config folder (neither XDG_CONFIG_HOME nor HOME)\n", name);
        return -1;
    }
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&now));
    snprintf(origin, sizeof origin, "measured by `nnlab calibrate --device gpu` on %.200s, %s", cal->machine, when);
    if (nn_profile_save(path, &prof, origin, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: --save-profile %s: %s\n", name, err);
        return -1;
    }
    fprintf(stderr, "nnlab: saved GPU profile %s (measured) as %s\n", nn_safe(name), nn_safe(path));
    return 0;
}

/* --save-profile needs the GPU, here: checked before anything is measured. */
static int check_save_profile(const cli_options *o)
{
    char err[NN_ERR_LEN];
    if (o->device && !nn_device_kind_of(o->device).gpu) {
        fprintf(stderr, "nnlab: --save-profile keeps a GPU's calibration: use --device gpu\n");
        return CLI_EXIT_USAGE;
    }
    if (nn_device_require("gpu", err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: --save-profile needs a GPU: %s\n", err);
        return CLI_EXIT_USAGE;       /* refused before anything runs, as every unavailable device */
    }
    return 0;
}

/* Caching the figures is what `nnlab calibrate` is for: each is read back,
 * and one that is not in the cache (a folder that cannot be written, a full
 * disk) fails the command after its figures are printed. */
/* --threads N on a CPU: the calibration at N threads, cached apart (as a
 * rank's, calibration-DEVICE-Nthreads.txt), not as the device's own, which
 * holds the free cores' and which every other command reads (a calibration
 * at one thread had replaced it: explain then priced two threads' steps at
 * one thread's rates). */
static int apart(const cli_options *o, const char *name)
{
    return o->threads > 0 && !nn_device_kind_of(name).gpu;
}

static int cached_all(const cli_options *o, char names[][16], const nn_calibration *cal, int n)
{
    nn_calibration *back = malloc(sizeof *back);
    int rc = 0;
    if (!back) {
        fprintf(stderr, "nnlab: out of memory\n");
        return EXIT_FAILURE;
    }
    for (int i = 0; i < n; i++)
        if ((apart(o, names[i]) ? nn_calibration_load_threads(names[i], (int)o->threads, back)
                                : nn_calibration_load(names[i], back)) != 0 ||
            back->created != cal[i].created) {
            fprintf(stderr, "nnlab: calibrate: %s's figures above are not cached (the warning says why)\n",
                    names[i]);
            rc = EXIT_FAILURE;
        }
    free(back);
    return rc;
}

/* Calibrates the devices into state (NN_MAX_DEVICES calibrations, several
 * KB each: on the heap) and prints them; 0 or the exit status. */
static int calibrate_and_print(cli_options *o, void *state)
{
    nn_calibration *cal = state;
    char names[NN_MAX_DEVICES][16];
    int rc;
    if (o->save_profile && ((rc = check_save_profile(o)) != 0))
        return rc;
    if (o->save_profile)
        o->device = "gpu";
    int n = calibrate_devices(o, names);
    for (int i = 0; i < n; i++)
        if ((apart(o, names[i]) ? cli_calibration_threads(names[i], (int)o->threads, 1, o->json, &cal[i])
                                : cli_calibration(names[i], (int)o->threads, 1, o->json, &cal[i])) != 0)
            return EXIT_FAILURE;
    if (o->save_profile && save_profile(o->save_profile, &cal[0]) != 0)
        return EXIT_FAILURE;
    if (o->json) {
        printf("[\n");
        for (int i = 0; i < n; i++)
            print_calibration_json(&cal[i], i == n - 1);
        printf("]\n");
    } else {
        for (int i = 0; i < n; i++)
            print_calibration_text(&cal[i]);
    }
    for (int i = 0; i < n; i++) {
        char path[NN_PATH_LEN];
        if (apart(o, names[i]) && nn_calibration_path_threads(names[i], (int)o->threads, path, sizeof path) == 0)
            fprintf(stderr, "nnlab: %s at %ld thread%s: cached apart as %s (the device's own calibration, of "
                    "the free cores, is unchanged)\n", names[i], o->threads, o->threads == 1 ? "" : "s", path);
    }
    return cached_all(o, names, cal, n);
}

int nn_cli_calibrate(int argc, char **argv)
{
    cli_options o;
    int rc = cli_parse(CLI_CALIBRATE, argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : CLI_EXIT_USAGE;
    if (o.link)                  /* the ranks' link, not a device (cli_calibrate_link.c) */
        return cli_calibrate_link(&o, argc, argv);
    if (o.ranks || o.transport) {
        fprintf(stderr, "nnlab: calibrate: --ranks and --transport go with --link NAME (a link between ranks)\n");
        return CLI_EXIT_USAGE;
    }
    return cli_run_on_heap(CLI_CALIBRATE, argc, argv, NN_MAX_DEVICES * sizeof(nn_calibration),
                           calibrate_and_print);
}

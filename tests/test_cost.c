/* tests/test_cost.c - the cost model against numbers worked out by hand.
 *
 * LeNet of lenet-cifar10 at batch N = 4 (input 3x32x32):
 *  conv1 3->6 k5: 28x28 outputs, K = 3*5*5 = 75 per output
 *    forward  2*N*6*784*75 + N*6*784 (bias)  = 2,822,400 + 18,816 = 2,841,216
 *    backward (first layer: no dx) dW 2,822,400 + db 18,816       = 2,841,216
 *    params 6*75 + 6 = 456
 *    forward bytes 4*(N*3*1024 + 450 + 6 + N*6*784) = 4*(12,288 + 456 + 18,816) = 126,240
 *  relu1: 4*6*784 = 18,816 elements: forward 18,816, backward 37,632;
 *    bytes forward 8*18,816 = 150,528, backward 12*18,816 = 225,792
 *  pool1 2x2: 4*6*196 = 4,704 outputs * 4 compares = 18,816 FLOPs;
 *    bytes 4*(18,816 + 4,704) = 94,080 forward, twice that backward
 *  conv2 6->16 k5: 10x10 outputs, K = 150
 *    forward 2*4*16*100*150 + 4*16*100 = 1,920,000 + 6,400 = 1,926,400
 *    backward dW 1,920,000 + db 6,400 + dx 1,920,000 = 3,846,400
 *    params 16*150 + 16 = 2,416
 *  relu2 6,400 elements; pool2 4*16*25*4 = 6,400; flatten free
 *  linear 400->10: forward 2*4*400*10 + 40 = 32,040; backward 32,040 + 32,000 = 64,040
 *    params 4,010
 *  params 456 + 2,416 + 4,010 = 6,882
 *  loss: 7 * 4 * 10 = 280; SGD with momentum: 6 * 6,882 = 41,292 FLOPs,
 *    20 bytes * 6,882 = 137,640 bytes
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nnlab/calibrate.h"
#include "nnlab/cost.h"
#include "nnlab/explain.h"
#include "nnlab/preset.h"
#include "util.h"

#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif

static void load(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[512];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

#define assert_count(got, want) assert_int_equal((long long)(got), (long long)(want))

static void test_lenet_layers(void **state)
{
    (void)state;
    nn_preset p;
    nn_cost c;
    load("lenet-cifar10", &p);
    nn_cost_model(&p, 4, &c);
    assert_int_equal(c.n_layers, 8);

    assert_count(c.layers[0].fwd.flops, 2841216);
    assert_count(c.layers[0].bwd.flops, 2841216);
    assert_count(c.layers[0].params, 456);
    assert_count(c.layers[0].fwd.bytes, 126240);
    assert_string_equal(c.layers[0].label, "conv2d 3->6 k5");

    assert_count(c.layers[1].fwd.flops, 18816);
    assert_count(c.layers[1].bwd.flops, 37632);
    assert_count(c.layers[1].fwd.bytes, 150528);
    assert_count(c.layers[1].bwd.bytes, 225792);

    assert_count(c.layers[2].fwd.flops, 18816);
    assert_count(c.layers[2].fwd.bytes, 94080);
    assert_count(c.layers[2].bwd.bytes, 188160);

    assert_count(c.layers[3].fwd.flops, 1926400);
    assert_count(c.layers[3].bwd.flops, 3846400);
    assert_count(c.layers[3].params, 2416);

    assert_count(c.layers[4].fwd.flops, 6400);
    assert_count(c.layers[5].fwd.flops, 6400);
    assert_count(c.layers[6].fwd.flops, 0);   /* flatten is a view */
    assert_count(c.layers[6].fwd.bytes, 0);

    assert_count(c.layers[7].fwd.flops, 32040);
    assert_count(c.layers[7].bwd.flops, 64040);
    assert_count(c.layers[7].params, 4010);
}

static void test_lenet_totals(void **state)
{
    (void)state;
    nn_preset p;
    nn_cost c;
    load("lenet-cifar10", &p);
    nn_cost_model(&p, 4, &c);
    assert_count(c.params, 6882);
    assert_count(c.loss.flops, 280);
    assert_count(c.optimizer.flops, 41292);
    assert_count(c.optimizer.bytes, 137640);
    double fwd = 2841216 + 18816 + 18816 + 1926400 + 6400 + 6400 + 32040;
    double bwd = 2841216 + 37632 + 18816 + 3846400 + 12800 + 6400 + 64040;
    assert_count(c.total.flops, fwd + bwd + 280 + 41292);
    /* input: 4 images of 3072 floats and 4 int32 labels */
    assert_count(c.input_bytes, 4 * 3072 * 4 + 4 * 4);
    assert_count(nn_cost_forward_flops_per_sample(&p), fwd / 4);
}

/* The arithmetic grows linearly with the batch; the optimiser does not. */
static void test_batch_scaling(void **state)
{
    (void)state;
    nn_preset p;
    nn_cost a, b;
    load("mnist-mlp-128", &p);
    nn_cost_model(&p, 32, &a);
    nn_cost_model(&p, 64, &b);
    assert_count(a.params, 784 * 128 + 128 + 128 * 10 + 10);
    assert_count(b.optimizer.flops, a.optimizer.flops);
    /* Adam: 15 FLOPs and 28 bytes per parameter */
    assert_count(a.optimizer.flops, 15.0 * 101770);
    assert_count(a.optimizer.bytes, 28.0 * 101770);
    /* the first linear after a flatten computes no dx: dW + db only */
    assert_count(a.layers[1].bwd.flops, 2.0 * 32 * 784 * 128 + 32 * 128);
    assert_count(b.layers[1].bwd.flops, 2 * a.layers[1].bwd.flops);
}

static void test_conv1d_regression(void **state)
{
    (void)state;
    nn_preset p;
    nn_cost c;
    load("conv1d-regression", &p);
    nn_cost_model(&p, 1, &c);
    /* conv1d 1->8 k3 pad 1 on length 16: 8*16 outputs of 3 MACs + bias */
    int conv = -1;
    for (int i = 0; i < c.n_layers; i++)
        if (p.layers[i].kind == NN_LAYER_CONV1D) {
            conv = i;
            break;
        }
    assert_true(conv >= 0);
    assert_count(c.layers[conv].fwd.flops, 2 * 8 * 16 * 3 + 8 * 16);
    assert_count(c.layers[conv].params, 8 * 3 + 8);
    /* MSE over one target: 5 FLOPs */
    assert_count(c.loss.flops, 5);
}


/* ---- explain: the model priced with a synthetic calibration ----------------------------- */

/* A device where only what a test sets costs anything: the peak so high and
 * bytes free (mem_gbps 0 prices no bytes) that the work is ~0. */
static nn_calibration free_device(void)
{
    nn_calibration c;
    memset(&c, 0, sizeof c);
    c.gemm_gflops = 1e9;
    return c;
}

/* LeNet at batch 4 issues 16 ops per step: conv1, relu, pool, conv2, relu,
 * pool, linear, each forward and backward (14; flatten is a view), the loss
 * and the optimiser; a GPU with the data resident adds one gather. */
static void test_explain_graph(void **state)
{
    (void)state;
    nn_preset p;
    nn_explanation e;
    nn_calibration cal = free_device();
    nn_explain_options eager = { .data_on_device = 1 }, graph = { .data_on_device = 1, .graph = 1 };
    load("lenet-cifar10", &p);
    cal.op_us = 4.0;
    cal.has_graph = 1;
    cal.graph_launch_us = 10.0;
    cal.graph_node_us = 1.0;

    nn_explain(&p, 4, &cal, &eager, &e);
    assert_int_equal(e.ops, 17);
    assert_float_equal(e.issue_us, 68.0, 1e-9);          /* 17 launches x 4 us */
    assert_false(e.priced_graph);
    /* recorded: 16 ops x 4 us = 64 us become 10 + 16 x 1 = 26 us */
    assert_float_equal(e.graph_saving_us, 38.0, 1e-9);
    assert_int_equal(e.regime, NN_REGIME_OVERHEAD);
    assert_non_null(strstr(e.advice, "a CUDA graph would save ~38 us"));
    assert_non_null(strstr(e.why, "17 launches x 4.00 us = 68.0 us"));

    nn_explain(&p, 4, &cal, &graph, &e);
    assert_true(e.priced_graph);
    assert_int_equal(e.graph_nodes, 16);
    assert_int_equal(e.ops, 2);                          /* the gather and the graph launch */
    assert_float_equal(e.issue_us, 4.0 + 10.0 + 16.0, 1e-9);
    assert_float_equal(e.graph_saving_us, 0.0, 1e-9);
    assert_float_equal(e.predicted_us, 30.0, 1e-3);

    /* counted by the backend: 41 launches eagerly; with the graph 2 launches
     * (gather, graph) and 40 nodes */
    eager.launches_per_step = 41;
    nn_explain(&p, 4, &cal, &eager, &e);
    assert_float_equal(e.issue_us, 164.0, 1e-9);
    assert_float_equal(e.graph_saving_us, 40 * 4.0 - (10.0 + 40 * 1.0), 1e-9);
    graph.launches_per_step = 2;
    graph.graph_nodes_per_step = 40;
    nn_explain(&p, 4, &cal, &graph, &e);
    assert_float_equal(e.issue_us, 4.0 + 10.0 + 40.0, 1e-9);

    /* graphs asked for on a calibration without them: priced eagerly */
    cal.has_graph = 0;
    graph.launches_per_step = 0;
    graph.graph_nodes_per_step = 0;
    nn_explain(&p, 4, &cal, &graph, &e);
    assert_false(e.priced_graph);
    assert_float_equal(e.issue_us, 68.0, 1e-9);
    assert_float_equal(e.graph_saving_us, 0.0, 1e-9);

    /* a CPU device issues no launches worth a graph */
    nn_explain_options cpu = { .host_memory = 1, .graph = 1 };
    cal.has_graph = 1;
    nn_explain(&p, 4, &cal, &cpu, &e);
    assert_false(e.priced_graph);
    assert_int_equal(e.ops, 16);
    assert_float_equal(e.graph_saving_us, 0.0, 1e-9);
}

/* The batch of LeNet at 4: 4 x 3072 floats + 4 labels = 49,168 bytes. Copied
 * from the host: gathered there (read + write at host_copy_gbps), then two
 * uploads (samples, labels), each with its fixed cost. */
static void test_explain_pinned(void **state)
{
    (void)state;
    nn_preset p;
    nn_explanation e;
    nn_calibration cal = free_device();
    nn_explain_options pageable = { 0 }, pinned = { .pinned = 1 };
    load("lenet-cifar10", &p);
    cal.upload_us = 10.0;
    cal.upload_gbps = 1.0;                 /* 1,000 bytes a microsecond */
    cal.host_copy_gbps = 10.0;
    cal.has_pinned = 1;
    cal.pinned_upload_us = 5.0;
    cal.pinned_upload_gbps = 4.0;

    nn_explain(&p, 4, &cal, &pageable, &e);
    /* 2 x 10 + 49,168 / 1,000 + 2 x 49,168 / 10,000 */
    assert_float_equal(e.copy_us, 20.0 + 49.168 + 9.8336, 1e-9);
    assert_false(e.priced_pinned);

    nn_explain(&p, 4, &cal, &pinned, &e);
    /* 2 x 5 + 49,168 / 4,000 + the same gather */
    assert_float_equal(e.copy_us, 10.0 + 12.292 + 9.8336, 1e-9);
    assert_true(e.priced_pinned);

    cal.has_pinned = 0;                    /* no page-locked figures: pageable ones */
    nn_explain(&p, 4, &cal, &pinned, &e);
    assert_float_equal(e.copy_us, 20.0 + 49.168 + 9.8336, 1e-9);
    assert_false(e.priced_pinned);

    /* a resident data set: a gather in device memory, read + write */
    nn_explain_options resident = { .data_on_device = 1 };
    cal.mem_gbps = 100.0;
    nn_explain(&p, 4, &cal, &resident, &e);
    assert_float_equal(e.copy_us, 2.0 * 49168 / 100e3, 1e-9);
}

/* Reading the loss back every step costs a download (and the wait); an
 * older calibration without one falls back to a tiny op's round trip. */
static void test_explain_sync(void **state)
{
    (void)state;
    nn_preset p;
    nn_explanation e;
    nn_calibration cal = free_device();
    nn_explain_options sync = { .data_on_device = 1, .sync_every_step = 1 }, nosync = { .data_on_device = 1 };
    load("mnist-mlp-128", &p);
    cal.sync_us = 7.0;
    cal.download_us = 20.0;
    nn_explain(&p, 32, &cal, &sync, &e);
    assert_float_equal(e.sync_us, 20.0, 1e-9);
    nn_explain(&p, 32, &cal, &nosync, &e);
    assert_float_equal(e.sync_us, 0.0, 1e-9);
    cal.download_us = 0;
    nn_explain(&p, 32, &cal, &sync, &e);
    assert_float_equal(e.sync_us, 7.0, 1e-9);
}

/* Adam fused into the linear layers' backward (decision 0161): where the
 * calibration says the device does it at this batch, each fused parameter's
 * gradient is neither written by the backward nor read by the optimiser
 * (8 bytes less a step), the FLOPs unchanged; not at a larger batch, not for
 * SGD, not when the options ask for the passes apart (a framework, ranks). */
static void test_explain_fused_adam(void **state)
{
    (void)state;
    nn_preset p;
    nn_explanation apart, fused;
    nn_calibration cal = free_device();
    nn_explain_options cpu = { .host_memory = 1 }, unfused = { .host_memory = 1, .unfused = 1 };
    load("mnist-mlp-1000", &p);            /* Adam; three linear layers of their own */
    cal.mem_gbps = 10.0;
    cal.fused_adam_max_batch = 8;
    nn_explain(&p, 4, &cal, &unfused, &apart);
    nn_explain(&p, 4, &cal, &cpu, &fused);
    const double params = (double)apart.cost.params;
    assert_float_equal(fused.cost.adam_fused_params, params, 0.5);
    assert_float_equal(apart.cost.adam_fused_params, 0, 0);
    assert_float_equal(apart.cost.total.bytes - fused.cost.total.bytes, 8.0 * params, 0.5);
    assert_float_equal(apart.cost.optimizer.bytes - fused.cost.optimizer.bytes, 4.0 * params, 0.5);
    assert_float_equal(fused.cost.total.flops, apart.cost.total.flops, 0);
    assert_true(fused.predicted_us < apart.predicted_us);
    nn_explain(&p, 9, &cal, &cpu, &fused);   /* past the device's batch: apart */
    assert_float_equal(fused.cost.adam_fused_params, 0, 0);
    nn_explain_options gpu = { 0 };          /* a device that is not host memory */
    nn_explain(&p, 4, &cal, &gpu, &fused);
    assert_float_equal(fused.cost.adam_fused_params, 0, 0);
    p.opt = NN_OPT_SGD;
    nn_explain(&p, 4, &cal, &cpu, &fused);
    assert_float_equal(fused.cost.adam_fused_params, 0, 0);
    /* a block shared by two layers is never fused, the other layers still are */
    nn_preset t;
    load("tabnet-regression", &t);
    nn_cost c, plain;
    nn_cost_model(&t, 8, &plain);
    c = plain;
    nn_cost_fuse_adam(&t, &c);
    int layers = 0;              /* the engine fuses 6 here (parity-fused-adam.sh's TabNet case) */
    for (int i = 0; i < t.n_layers; i++)
        layers += c.layers[i].bwd.bytes < plain.layers[i].bwd.bytes;
    assert_int_equal(layers, 6);
    double own = 0;
    for (int i = 0; i < t.n_layers; i++) {
        int shared = t.layers[i].weights != 0;
        for (int j = 0; j < t.n_layers; j++)
            shared |= t.layers[j].weights == i + 1;
        if (t.layers[i].kind == NN_LAYER_LINEAR && !shared)
            own += (double)c.layers[i].params;
    }
    assert_true(own > 0);
    assert_float_equal(c.adam_fused_params, own, 0.5);
}

/* Rates interpolate linearly in log(FLOPs) and hold at the ends. */
static void test_curve_interpolation(void **state)
{
    (void)state;
    nn_rate_curve c = { .n = 3, .flops = { 1e4, 1e6, 1e8 }, .gflops = { 10, 50, 100 } };
    nn_rate_curve none = { 0 };
    assert_float_equal(nn_curve_gflops(&c, 1e4), 10.0, 1e-9);    /* at the points */
    assert_float_equal(nn_curve_gflops(&c, 1e6), 50.0, 1e-9);
    assert_float_equal(nn_curve_gflops(&c, 1e8), 100.0, 1e-9);
    assert_float_equal(nn_curve_gflops(&c, 1e5), 30.0, 1e-9);    /* halfway in log: halfway */
    assert_float_equal(nn_curve_gflops(&c, 1e7), 75.0, 1e-9);
    /* a quarter of the way from 1e4 to 1e6 in log is 10^4.5 */
    assert_float_equal(nn_curve_gflops(&c, 31622.776601683792), 20.0, 1e-6);
    assert_float_equal(nn_curve_gflops(&c, 10), 10.0, 1e-9);     /* below: the smallest's */
    assert_float_equal(nn_curve_gflops(&c, 1e12), 100.0, 1e-9);  /* above: the largest's */
    assert_float_equal(nn_curve_gflops(&none, 1e6), 0.0, 1e-9);
}

/* mnist-mlp-128 at batch 4, its linear layers priced on a two-point curve
 * {1e4: 10, 1e6: 100 GFLOP/s}, i.e. rate(f) = 10 + 90 log(f/1e4)/log(100):
 *   linear 784->128 forward 2*4*784*128 + 4*128 = 803,328 FLOPs: rate
 *     10 + 90 log(80.3328)/log(100) = 95.7202, 8.392462 us; backward (no dx)
 *     the same FLOPs and time
 *   linear 128->10 forward 2*4*128*10 + 40 = 10,280: rate 10.5397, 0.975361 us
 *     backward 10,280 + 10,240 = 20,520: rate 24.0480, 0.853294 us
 *   work 18.613579 us, the rest (relu, dropout, loss, Adam) ~0 at the 1e9 peak.
 * And four matrix calls, each with 1.0 - 0.25 us of fixed cost beyond issuing. */
static void test_explain_sized_rates(void **state)
{
    (void)state;
    nn_preset p;
    nn_explanation e;
    nn_calibration cal = free_device();
    nn_explain_options cpu = { .host_memory = 1 };
    nn_rate_curve c = { .n = 2, .flops = { 1e4, 1e6 }, .gflops = { 10, 100 } };
    load("mnist-mlp-128", &p);
    cal.linear_fwd = c;
    cal.linear_bwd = c;
    cal.matrix_op_us = 1.0;
    cal.op_us = 0.25;
    nn_explain(&p, 4, &cal, &cpu, &e);
    assert_float_equal(e.work_us, 2 * 8.392462 + 0.975361 + 0.853294, 1e-5);
    assert_int_equal(e.matrix_calls, 4);
    assert_float_equal(e.fixed_us, 3.0, 1e-9);
    /* without curves the products run at the peak: the work vanishes */
    cal.linear_fwd.n = 0;
    cal.linear_bwd.n = 0;
    nn_explain(&p, 4, &cal, &cpu, &e);
    assert_true(e.work_us < 1e-3);

    /* a per-element cost: relu over 4 x 128 outputs at 2 ns forward and
     * 3 ns backward = 1.024 + 1.536 us */
    cal.elem_ns[NN_OP_RELU][0] = 2.0;
    cal.elem_ns[NN_OP_RELU][1] = 3.0;
    nn_explain(&p, 4, &cal, &cpu, &e);
    assert_float_equal(e.work_us, 2.56, 1e-3);
    /* and bytes bound it from below: 4*512*2 bytes forward at 1 GB/s is 4.096 us > 1.024 */
    cal.mem_gbps = 1.0;
    nn_explain(&p, 4, &cal, &cpu, &e);
    assert_true(e.work_us > 4.096 + 1.536);
}

/* ---- the calibration cache: complete files read back, old ones are stale ---------------------- */

static char cache_dir[64];

static int make_cache(void **state)
{
    (void)state;
    snprintf(cache_dir, sizeof cache_dir, "/tmp/nnlab-test-cost-XXXXXX");
    if (!mkdtemp(cache_dir))
        return -1;
    return setenv("XDG_CACHE_HOME", cache_dir, 1);
}

static int remove_cache(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* Copies path to itself without the line starting with `key =`. */
static void drop_line(const char *path, const char *key)
{
    char text[8192] = "", line[1024];
    size_t used = 0, klen = strlen(key);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        if (!(strncmp(line, key, klen) == 0 && strncmp(line + klen, " =", 2) == 0))
            used += (size_t)snprintf(text + used, sizeof text - used, "%s", line);
    fclose(f);
    assert_true(used < sizeof text);
    write_text(path, text);
}

/* c saved whole, then without key's line: a file of the format before key
 * came is stale, never read as a calibration with that figure 0. */
static void stale_without(const nn_calibration *c, const char *path, const char *key)
{
    nn_calibration back;
    char err[512];
    assert_int_equal(nn_calibration_save(c, err, sizeof err), 0);
    drop_line(path, key);
    assert_int_equal(nn_calibration_load("cpu", &back), -1);
}

static void test_cache_staleness(void **state)
{
    (void)state;
    nn_calibration c, back;
    char path[4096], err[512], old[1024];
    memset(&c, 0, sizeof c);
    nn_strlcpy(c.device, "cpu", sizeof c.device);
    nn_machine_description(c.machine, sizeof c.machine);
    c.gemm_gflops = 100;
    c.mem_gbps = 20;
    c.op_us = 0.02;
    c.download_us = 3.5;
    c.has_graph = 1;
    c.graph_launch_us = 2.5;
    c.graph_node_us = 0.75;
    c.matrix_op_us = 0.125;
    c.linear_fwd = (nn_rate_curve){ .n = 2, .flops = { 2704, 2.14853e9 }, .gflops = { 6.5, 90 } };
    c.elem_ns[NN_OP_MISH][0] = 4.5;
    c.elem_ns[NN_OP_ADAM][0] = 1.25;
    c.threads = 2;
    c.spread[NN_SPREAD_GEMM] = 0.125;
    c.spread[NN_SPREAD_HOST_COPY] = 0.5;
    c.fused_adam_max_batch = 8;
    c.fresh_page_us = 1.625;
    c.vector_floats = 16;
    assert_int_equal(nn_calibration_path("cpu", path, sizeof path), 0);

    /* the round trip */
    assert_int_equal(nn_calibration_save(&c, err, sizeof err), 0);
    assert_int_equal(nn_calibration_load("cpu", &back), 0);
    assert_float_equal(back.download_us, 3.5, 1e-9);
    assert_int_equal(back.has_graph, 1);
    assert_int_equal(back.has_pinned, 0);
    assert_float_equal(back.graph_node_us, 0.75, 1e-9);
    assert_int_equal(back.linear_fwd.n, 2);
    assert_float_equal(back.linear_fwd.flops[1], 2.14853e9, 1e3);
    assert_float_equal(back.linear_fwd.gflops[0], 6.5, 1e-9);
    assert_int_equal(back.conv_fwd.n, 0);
    assert_float_equal(back.elem_ns[NN_OP_MISH][0], 4.5, 1e-9);
    assert_float_equal(back.elem_ns[NN_OP_ADAM][0], 1.25, 1e-9);
    assert_int_equal(back.threads, 2);
    assert_float_equal(back.spread[NN_SPREAD_GEMM], 0.125, 1e-9);
    assert_float_equal(back.spread[NN_SPREAD_HOST_COPY], 0.5, 1e-9);
    assert_float_equal(back.spread[NN_SPREAD_MEM], 0, 1e-12);
    assert_float_equal(back.fused_adam_max_batch, 8, 1e-12);
    assert_float_equal(back.fresh_page_us, 1.625, 1e-12);
    assert_float_equal(back.vector_floats, 16, 1e-12);
    /* a format-6 file (before the fresh page's cost and the vector) is stale */
    stale_without(&c, path, "fresh_page_us");
    stale_without(&c, path, "vector_floats");
    /* a format-5 file (before the fused Adam's batch) is stale */
    stale_without(&c, path, "fused_adam_max_batch");

    /* a file of format 1 (before graphs, pinned copies and curves) is stale,
     * not a calibration with zeros */
    snprintf(old, sizeof old,
             "# nnlab calibration: `nnlab calibrate --device cpu` remakes it\n"
             "device = cpu\nmachine = %s\ncreated = 1795000000\n"
             "gemm_gflops = 155\ngemm_gflops_1thread = 92\nmem_gbps = 36\nop_us = 0.02\nsync_us = 0.02\n"
             "upload_us = 0.005\nupload_gbps = 9\nhost_copy_gbps = 19\n", c.machine);
    write_text(path, old);
    assert_int_equal(nn_calibration_load("cpu", &back), -1);

    /* so is a format-2 file missing one figure */
    stale_without(&c, path, "graph_node_us");
    stale_without(&c, path, "elem_ns");
    /* a format-2 file (before the spreads of format 3) is stale */
    assert_int_equal(nn_calibration_save(&c, err, sizeof err), 0);
    drop_line(path, "spread");
    drop_line(path, "threads");
    drop_line(path, "format");
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    assert_true(fputs("format = 2\n", f) >= 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(nn_calibration_load("cpu", &back), -1);
    stale_without(&c, path, "spread");             /* format 3 without its spreads */
    /* and one from another machine */
    nn_strlcpy(c.machine, "another machine, 64 cores", sizeof c.machine);
    assert_int_equal(nn_calibration_save(&c, err, sizeof err), 0);
    assert_int_equal(nn_calibration_load("cpu", &back), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lenet_layers),
        cmocka_unit_test(test_lenet_totals),
        cmocka_unit_test(test_batch_scaling),
        cmocka_unit_test(test_conv1d_regression),
        cmocka_unit_test(test_explain_graph),
        cmocka_unit_test(test_explain_pinned),
        cmocka_unit_test(test_explain_sync),
        cmocka_unit_test(test_explain_fused_adam),
        cmocka_unit_test(test_curve_interpolation),
        cmocka_unit_test(test_explain_sized_rates),
        cmocka_unit_test_setup_teardown(test_cache_staleness, make_cache, remove_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* tests/test_profile.c - GPU profiles: the shipped ones load, a profile maps
 * onto a calibration the one cost model prices, bad files give one-line
 * errors naming the file, section and key, the user's folder hides a
 * shipped profile, a real GPU's calibration saved as a profile (from a
 * fake calibration: there is no GPU here) loads back, and the write-up's
 * whole job is predicted. The predictions for LeNet are pinned to the
 * cost model's arithmetic, worked by hand below.
 *
 * LeNet (lenet-cifar10) on four profiles, at batch 4 and 1024: each
 * shipped profile's [gpu] figures (peak and bandwidth) with the host
 * figures below and no [kernels] figures (by_hand): the roofline and the
 * overheads as the model adds them. The shipped figures of the [link],
 * [launch] and [kernels] sections are derived from the measured GH100s
 * since (bench/derive_profile.py, checked by tests/derived_profiles.py;
 * their bounds against the H200's measured steps: test_profile_bounds.c).
 *
 * The operations of one step, F FLOPs and B bytes (the cost model's counts;
 * tests/test_cost.c checks batch 4 by hand; at 1024 each batch-sized term
 * is 256 times larger, the SGD step over 6,882 parameters is the same):
 *   op             F (batch 4)   B (batch 4)   F (batch 1024)  B (batch 1024)   F/B
 *   conv1 fwd       2,841,216       126,240     727,351,296      31,852,320   22.8
 *   conv1 bwd       2,841,216       201,504     727,351,296      51,119,904   14.2
 *   relu1 fwd          18,816       150,528       4,816,896      38,535,168    0.1
 *   relu1 bwd          37,632       225,792       9,633,792      57,802,752    0.2
 *   pool1 fwd          18,816        94,080       4,816,896      24,084,480    0.2
 *   pool1 bwd          18,816       188,160       4,816,896      48,168,960    0.1
 *   conv2 fwd       1,926,400        54,080     493,158,400      11,380,160   43.3
 *   conv2 bwd       3,846,400       133,696     984,678,400      29,313,856   33.6
 *   relu2 fwd           6,400        51,200       1,638,400      13,107,200    0.1
 *   relu2 bwd          12,800        76,800       3,276,800      19,660,800    0.2
 *   pool2 fwd           6,400        32,000       1,638,400       8,192,000    0.2
 *   pool2 bwd           6,400        64,000       1,638,400      16,384,000    0.1
 *   linear fwd         32,040        22,600       8,202,240       1,695,400    4.8
 *   linear bwd         64,040        45,320      16,394,240       3,431,720    4.8
 *   loss                  280           336          71,680          86,016    0.8
 *   SGD step           41,292       137,640          41,292         137,640    0.3
 *
 * A profile has no rate curves: every op takes max(F / peak, B / bandwidth)
 * (F / (GFLOP/s x 1e3) and B / (GB/s x 1e3) in us); an op is FLOP-bound
 * when its F/B is above the profile's ridge, peak / bandwidth. The work is
 * the FLOP-bound ops' F at the peak plus the others' B at the bandwidth.
 *
 * The three ways (explain.h) add their overheads to the same work:
 *  - nnlab graph: 1 launch outside the graph (the batch gathered on the
 *    device) x 2.5 + graph launch 4 + 16 nodes (7 forward, 7 backward,
 *    loss, SGD) x 0.6 = 16.1 us, and the gather (read and write the batch:
 *    2 x input bytes at the bandwidth);
 *  - nnlab eager: 17 launches (16 ops + the gather) x 2.5 = 42.5 us, and
 *    the same gather;
 *  - framework eager (nnlab/framework.h's GPU form, the fit's figures):
 *    its host 168.42 + 50 ops x (2.5 launch + 16.854) + 2 convolution
 *    layers x 182.34 = 1,500.8 us (nn_framework_ops: per working layer its
 *    kernel, and a bias kernel for the 3 with parameters = 10; backward:
 *    relu, pool x 2 = 4, conv1 dW db = 2, conv2 and linear dx dW db = 6;
 *    the loss 4; 6 parameter tensors x (3 SGD-with-momentum kernels +
 *    zeroing) = 24), + 0.2306 x the device's work (host-bound: the host's
 *    issue is longer than the work); copies of every batch as .to(device)
 *    makes them: 2 x 10 us fixed (samples, labels) + input / the pageable
 *    rate; the loss read back, 10 us.
 * The input is 4 x 3,072 floats + 4 labels = 49,168 B at batch 4,
 * 12,587,008 B at 1024. Launch 2.5, graph 4 + 0.6 a node, the framework's
 * figures, copies 10 us fixed, host memcpy 10 GB/s and read-back 10 us are
 * the same in the four profiles priced here (by_hand sets them).
 *
 * T4 (8,141 GFLOP/s, 320 GB/s: ridge 25.4 FLOP/byte; pageable copies 6.3 GB/s):
 *   batch 4: FLOP-bound: conv2 fwd, conv2 bwd; work = 5,772,800 F / 8,141,000 + 1,416,200 B / 320,000 = 5.1347 us
 *     graph 21.5420 = 16.1 + copy 0.3073 + work; eager 47.9420 = 42.5 + copy + work;
 *     framework 1539.7885 = 1500.8 + copies 27.8044 + read-back 10 + 0.2306 x work
 *   batch 1024: FLOP-bound: conv2 fwd, conv2 bwd; work = 1,477,836,800 F / 8,141,000 + 314,258,360 B / 320,000 = 1163.5875 us
 *     graph 1258.3563 = 16.1 + copy 78.6688 + work; eager 1284.7563 = 42.5 + copy + work;
 *     framework 3797.0611 = 1500.8 + copies 2017.9378 + read-back 10 + 0.2306 x work
 * RTX 3060 (12,740 GFLOP/s, 360 GB/s: ridge 35.4 FLOP/byte; pageable copies 12.6 GB/s):
 *   batch 4: FLOP-bound: conv2 fwd; work = 1,926,400 F / 12,740,000 + 1,549,896 B / 360,000 = 4.4565 us
 *     graph 20.8296 = 16.1 + copy 0.2732 + work; eager 47.2296 = 42.5 + copy + work;
 *     framework 1535.7299 = 1500.8 + copies 23.9022 + read-back 10 + 0.2306 x work
 *   batch 1024: FLOP-bound: conv2 fwd; work = 493,158,400 F / 12,740,000 + 343,572,216 B / 360,000 = 993.0767 us
 *     graph 1079.1045 = 16.1 + copy 69.9278 + work; eager 1105.5045 = 42.5 + copy + work;
 *     framework 2758.7724 = 1500.8 + copies 1018.9689 + read-back 10 + 0.2306 x work
 * RTX 4090 (82,580 GFLOP/s, 1,008 GB/s: ridge 81.9 FLOP/byte; pageable copies 12.6 GB/s):
 *   batch 4: FLOP-bound: none; work = 0 F / 82,580,000 + 1,603,976 B / 1,008,000 = 1.5912 us
 *     graph 17.7888 = 16.1 + copy 0.0976 + work; eager 44.1888 = 42.5 + copy + work;
 *     framework 1535.0692 = 1500.8 + copies 23.9022 + read-back 10 + 0.2306 x work
 *   batch 1024: FLOP-bound: none; work = 0 F / 82,580,000 + 354,952,376 B / 1,008,000 = 352.1353 us
 *     graph 393.2095 = 16.1 + copy 24.9742 + work; eager 419.6095 = 42.5 + copy + work;
 *     framework 2610.9713 = 1500.8 + copies 1018.9689 + read-back 10 + 0.2306 x work
 * A100 (19,500 GFLOP/s, 1,555 GB/s: ridge 12.5 FLOP/byte; pageable copies 12.6 GB/s):
 *   batch 4: FLOP-bound: conv1 fwd, conv1 bwd, conv2 fwd, conv2 bwd; work = 11,455,232 F / 19,500,000 + 1,088,456 B / 1,555,000 = 1.2874 us
 *     graph 17.4507 = 16.1 + copy 0.0632 + work; eager 43.8507 = 42.5 + copy + work;
 *     framework 1534.9991 = 1500.8 + copies 23.9022 + read-back 10 + 0.2306 x work
 *   batch 1024: FLOP-bound: conv1 fwd, conv1 bwd, conv2 fwd, conv2 bwd; work = 2,932,539,392 F / 19,500,000 + 231,286,136 B / 1,555,000 = 299.1237 us
 *     graph 331.4128 = 16.1 + copy 16.1891 + work; eager 357.8128 = 42.5 + copy + work;
 *     framework 2598.7468 = 1500.8 + copies 1018.9689 + read-back 10 + 0.2306 x work
 * H100 and H200 are not priced here: they carry the [kernels] figures
 * fitted to each machine's recorded run (a call's fixed time by kind,
 * per-row reductions, the libraries' rates), which tests/test_model_h200.c
 * and test_model_h100.c check against those runs' measured steps; below,
 * the two agree where memory does not matter and the matcher finds each by
 * its GPU's name.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nnlab/profile.h"
#include "util.h"

#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif
#ifndef PROFILES_SRCDIR
#define PROFILES_SRCDIR "profiles"
#endif

static char tmp_root[256];

static void load_preset(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void find(const char *name, nn_gpu_profile *g)
{
    char err[NN_ERR_LEN];
    if (nn_profile_find(name, g, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp_root, sizeof tmp_root, "/tmp/nnlab-test-profile-XXXXXX");
    if (!mkdtemp(tmp_root))
        return -1;
    char config[NN_PATH_LEN];
    snprintf(config, sizeof config, "%s/config", tmp_root);
    setenv("XDG_CONFIG_HOME", config, 1);
    setenv("NNLAB_PROFILES_DIR", PROFILES_SRCDIR, 1);
    unsetenv("NNLAB_GPU_PROFILE");
    return 0;
}

static int teardown(void **state)
{
    char cmd[NN_PATH_LEN + 16];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- the shipped profiles ------------------------------------------------------------------- */

static const char *const shipped[] = { "t4", "rtx3060", "rtx4090", "a100", "h100", "h200" };
static const char *const shipped_names[] = { "T4", "RTX 3060", "RTX 4090", "A100", "H100", "H200" };
#define N_SHIPPED 6
/* The first N_BY_HAND are priced by hand at the top; h100 and h200 carry
 * the [kernels] figures of their machines' recorded runs, checked against
 * their measured steps by tests/test_model_h100.c and test_model_h200.c. */
#define N_BY_HAND 4

static void test_shipped_profiles_load(void **state)
{
    nn_gpu_profile g;
    (void)state;
    for (int i = 0; i < N_SHIPPED; i++) {
        find(shipped[i], &g);
        assert_string_equal(g.id, shipped[i]);
        assert_string_equal(g.name, shipped_names[i]);
        assert_false(g.measured);
        assert_false(g.user);
        assert_true(g.description[0] != '\0');
        assert_true(g.fp32_gflops > 1000 && g.mem_gbps > 100 && g.pcie_gen >= 3);
    }
    find("T4", &g);                          /* names are case-blind */
    assert_string_equal(g.id, "t4");
    assert_string_equal(nn_profile_default_name(), "t4");
    setenv("NNLAB_GPU_PROFILE", "h100", 1);
    assert_string_equal(nn_profile_default_name(), "h100");
    unsetenv("NNLAB_GPU_PROFILE");
}

/* What the cost model prices: the figures as given, graphs and pinned
 * copies there, nothing measured. */
static void test_profile_calibration(void **state)
{
    nn_gpu_profile g;
    nn_calibration c;
    char why[NN_ERR_LEN];
    (void)state;
    find("t4", &g);
    nn_profile_calibration(&g, &c);
    assert_string_equal(c.device, "gpu");
    assert_true(c.profile);
    assert_string_equal(c.note, "predicted for T4");
    assert_true(c.gemm_gflops == 8141 && nn_calibration_peak_gflops(&c) == 8141);
    /* derived from the GH100s (bench/derive_profile.py): the H200 host's launch, graph launch,
     * synchronise and copies' fixed costs; a graph node at the clock ratio 1980/1590 MHz; the
     * pinned copy at PCIe 3.0's raw rate times the share the H200's link reached */
    assert_true(c.mem_gbps == 320 && c.op_us == 4.758 && c.matrix_op_us == c.op_us);
    assert_true(c.has_graph && c.graph_launch_us == 1.959 && c.graph_node_us == 1.134);
    assert_true(c.has_pinned && c.pinned_upload_gbps == 13.79 && c.upload_gbps == 7.309);
    assert_true(c.upload_us == 2.071 && c.download_us == 8.631 && c.sync_us == 10.32 && c.host_copy_gbps == 10);
    assert_true(c.calls.has);
    assert_int_equal(nn_calibration_quality(&c, why, sizeof why), NN_CAL_GOOD);
    /* a profile's figures are never cached as a measurement */
    assert_int_equal(nn_calibration_save(&c, why, sizeof why), -1);
    assert_non_null(strstr(why, "predicted for T4"));
}

/* The numbers of the comment at the top. */
static const double lenet_us[N_BY_HAND][2][NN_GPU_WAYS] = {
    /*             batch 4: framework, eager, graph     batch 1024: framework, eager, graph */
    /* t4 */      { { 1539.7885, 47.9420, 21.5420 }, { 3797.0611, 1284.7563, 1258.3563 } },
    /* rtx3060 */ { { 1535.7299, 47.2296, 20.8296 }, { 2758.7724, 1105.5045, 1079.1045 } },
    /* rtx4090 */ { { 1535.0692, 44.1888, 17.7888 }, { 2610.9713, 419.6095, 393.2095 } },
    /* a100 */    { { 1534.9991, 43.8507, 17.4507 }, { 2598.7468, 357.8128, 331.4128 } },
};

/* A shipped profile's [gpu] figures with the host figures of the comment
 * at the top and no [kernels] figures: the model's arithmetic as worked by
 * hand (the shipped figures are derived from the GH100s since; their
 * bounds: tests/test_profile_bounds.c). */
static void by_hand(const char *id, nn_gpu_profile *g)
{
    find(id, g);
    g->launch_us = 2.5;
    g->graph_launch_us = 4;
    g->graph_node_us = 0.6;
    g->copy_us = 10;
    g->copy_gbps = strcmp(id, "t4") ? 12.6 : 6.3;
    g->download_us = 10;
    g->sync_us = 6.6;
    g->framework_op_us = 10;
    g->framework_gpu_op_us = 20;
    g->host_copy_gbps = 10;
    /* the [kernels] figures, the struct's last, from conv_forward_us on */
    memset(&g->conv_forward_us, 0, sizeof *g - offsetof(nn_gpu_profile, conv_forward_us));
}

static void test_lenet_predictions_by_hand(void **state)
{
    static nn_preset p;
    static nn_explanation e[NN_GPU_WAYS];
    static const int batches[2] = { 4, 1024 };
    nn_gpu_profile g;
    (void)state;
    load_preset("lenet-cifar10", &p);
    for (int k = 0; k < N_BY_HAND; k++) {
        by_hand(shipped[k], &g);
        for (int b = 0; b < 2; b++) {
            nn_profile_predict(&p, batches[b], &g, e);
            for (int w = 0; w < NN_GPU_WAYS; w++)
                if (fabs(e[w].predicted_us - lenet_us[k][b][w]) > 1e-4 * lenet_us[k][b][w] + 1e-3)
                    fail_msg("%s batch %d %s: the model gives %.4f us, the hand %.4f us", shipped[k], batches[b],
                             nn_gpu_way_name((nn_gpu_way)w), e[w].predicted_us, lenet_us[k][b][w]);
            assert_int_equal(e[NN_WAY_FRAMEWORK].ops, 50);
            assert_int_equal(e[NN_WAY_EAGER].ops, 17);
            assert_int_equal(e[NN_WAY_GRAPH].graph_nodes, 16);
            /* at batch 4 each way is overhead-bound: the launches dominate */
            if (batches[b] == 4)
                for (int w = 0; w < NN_GPU_WAYS; w++)
                    assert_int_equal(e[w].regime, NN_REGIME_OVERHEAD);
        }
    }
}

/* A GPU's name as the backend and NVML give it finds the profile of that
 * GPU; another GPU, the emulated one and empty text find none. */
static void test_profile_for_device(void **state)
{
    static const struct { const char *device, *id; } cases[] = {
        { "NVIDIA H200", "h200" },
        { "NVIDIA H100 80GB HBM3", "h100" },
        { "NVIDIA H100 PCIe (GPU 0 of 2), 79.1 GiB, compute capability 9.0", "h100" },
        { "NVIDIA A100-SXM4-40GB", "a100" },
        { "Tesla T4", "t4" },
        { "NVIDIA GeForce RTX 4090 (GPU 0 of 1), 23.6 GiB", "rtx4090" },
        { "NVIDIA GeForce RTX 3060", "rtx3060" },
        { "NVIDIA H20", NULL },          /* not the H200 */
        { "NVIDIA GeForce RTX 3060 Ti", NULL },  /* another card than the 3060 */
        { "NVIDIA L4", NULL },
        { "emulated GPU (nnlab-cuda-emu: the CUDA code run on the CPU, seed 1)", NULL },
        { "", NULL },
    };
    nn_gpu_profile g;
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = nn_profile_for_device(cases[i].device, &g);
        if (!cases[i].id && rc == 0)
            fail_msg("'%s' matched %s", cases[i].device, g.id);
        if (cases[i].id && (rc != 0 || strcmp(g.id, cases[i].id) != 0))
            fail_msg("'%s': expected %s, got %s", cases[i].device, cases[i].id, rc ? "none" : g.id);
    }
    assert_int_equal(nn_profile_for_device(NULL, &g), -1);
}

/* ---- bad files ------------------------------------------------------------------------------------ */

/* The T4's file with `line` replaced by `by` ("" drops it). */
static void t4_with(const char *path, const char *line, const char *by)
{
    static char buf[16384], out[16384];
    char src[NN_PATH_LEN];
    snprintf(src, sizeof src, "%s/t4.ini", PROFILES_SRCDIR);
    FILE *f = fopen(src, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *at = strstr(buf, line);
    assert_non_null(at);
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - buf), buf, by, at + strlen(line));
    write_file(path, out);
}

static void expect_error(const char *line, const char *by, const char *want)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_gpu_profile g;
    snprintf(path, sizeof path, "%s/bad.ini", tmp_root);
    t4_with(path, line, by);
    assert_int_equal(nn_profile_load(path, &g, err, sizeof err), -1);
    if (!strstr(err, want) || !strstr(err, path) || strchr(err, '\n'))
        fail_msg("'%s' -> '%s': wanted one line with the file and '%s'", by, err, want);
}

static void test_bad_profiles(void **state)
{
    (void)state;
    expect_error("mem_gbps = 320", "mem_gbps = 320 GB/s", "[gpu] mem_gbps = 320 GB/s: not a number");
    expect_error("mem_gbps = 320", "mem_gbps = 0", "[gpu] mem_gbps = 0: must be in");
    expect_error("mem_gbps = 320", "", "[gpu] mem_gbps: missing");
    expect_error("mem_gbps = 320", "mem_gbs = 320", "[gpu] mem_gbs: unknown key");
    expect_error("[launch]", "[lunch]", "[lunch]: unknown section");
    expect_error("pcie_gen = 3", "pcie_gen = 3.5", "[link] pcie_gen = 3.5: expected a whole number");
    expect_error("measured = false", "measured = maybe", "[profile] measured = maybe: expected true or false");
    expect_error("graph_node_us = 1.134", "graph_node_us = -1", "[launch] graph_node_us = -1: must be in");
    expect_error("framework_gpu_op_us = 20", "framework_gpu_op_us = x", "[host] framework_gpu_op_us = x: not a number");
    expect_error("mem_gbps = 320", "mem_gbps = 320\nmem_gbps = 330", "[gpu] mem_gbps given twice");
}

/* A profile passes the presets' caps before iniparser sees it (whose
 * dictionary is quadratic: 115,000 sections took 8.33 s): more sections
 * than any profile has are refused at the line that passes the limit, a
 * file over 1 MiB by its size, each naming the file and saying what it is. */
static void test_profile_caps(void **state)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_gpu_profile g;
    (void)state;
    snprintf(path, sizeof path, "%s/many.ini", tmp_root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 1; i <= 115000; i++)
        assert_true(fprintf(f, "[s%d]\n", i) > 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(nn_profile_load(path, &g, err, sizeof err), -1);
    if (!strstr(err, path) || !strstr(err, ": line 257: more than 256 sections (no GPU profile needs that many)"))
        fail_msg("%s", err);
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 120000; i++)
        assert_true(fputs("; a comment line of about forty bytes .\n", f) >= 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(nn_profile_load(path, &g, err, sizeof err), -1);
    if (!strstr(err, path) || !strstr(err, "too large for a GPU profile"))
        fail_msg("%s", err);
}

/* A profile saved before framework_gpu_op_us existed still loads, with the
 * shipped estimate. */
static void test_profile_without_new_figure(void **state)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_gpu_profile g;
    (void)state;
    snprintf(path, sizeof path, "%s/older.ini", tmp_root);
    t4_with(path, "framework_gpu_op_us = 20", "");
    if (nn_profile_load(path, &g, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(g.framework_gpu_op_us == NN_FRAMEWORK_GPU_OP_US && g.framework_op_us == 10);
    assert_true(nn_profile_framework_gpu_us(&g) == 30);
}

/* ---- where profiles are found ---------------------------------------------------------------- */

/* The profiles the shipped folder holds: those listed above and any other
 * (tests/test_slides.c checks geforce-940m's figures). */
static int shipped_in_folder(void)
{
    static nn_profile_entry all[32];
    int n = nn_profile_list(all, 32), shipped_n = 0;
    for (int i = 0; i < n; i++)
        shipped_n += !all[i].p.user && !all[i].error[0];
    return shipped_n;
}

static void test_user_profiles(void **state)
{
    int n_shipped = shipped_in_folder();
    char dir[NN_PATH_LEN], path[NN_PATH_LEN + 16], err[NN_ERR_LEN];
    static nn_profile_entry list[32];
    nn_gpu_profile g;
    (void)state;
    assert_int_equal(nn_profile_user_dir(dir, sizeof dir), 0);
    assert_non_null(strstr(dir, "/config/nnlab/profiles"));
    assert_int_equal(system("true"), 0);
    char cmd[NN_PATH_LEN + 16];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    /* the user's t4 hides the shipped one */
    snprintf(path, sizeof path, "%s/t4.ini", dir);
    t4_with(path, "name = \"T4\"", "name = \"my T4\"");
    find("t4", &g);
    assert_string_equal(g.name, "my T4");
    assert_true(g.user);
    int n = nn_profile_list(list, 32), shadowed = 0, found_user = 0;
    assert_true(n_shipped >= N_SHIPPED);
    assert_int_equal(n, n_shipped + 1);
    for (int i = 0; i < n; i++) {
        assert_string_equal(list[i].error, "");
        shadowed += list[i].shadowed;
        found_user += list[i].p.user;
    }
    assert_int_equal(shadowed, 1);
    assert_int_equal(found_user, 1);
    assert_string_equal(list[0].p.name, "my T4");     /* the user's first */
    /* a broken user file is listed with its error */
    snprintf(path, sizeof path, "%s/broken.ini", dir);
    write_file(path, "[gpu]\nfp32_gflops = lots\n");
    n = nn_profile_list(list, 32);
    assert_int_equal(n, n_shipped + 2);
    assert_string_equal(list[0].p.id, "broken");
    assert_non_null(strstr(list[0].error, "fp32_gflops"));
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/t4.ini", dir);
    assert_int_equal(unlink(path), 0);
    /* not found: says where it looked */
    assert_int_equal(nn_profile_find("gtx9999", &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "gtx9999.ini"));
    assert_non_null(strstr(err, PROFILES_SRCDIR));
}

/* ---- a real GPU's calibration saved as a profile ----------------------------------------------- */

static void fake_gpu_calibration(nn_calibration *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->device, sizeof c->device, "gpu");
    snprintf(c->machine, sizeof c->machine, "AMD EPYC, 2 cores; NVIDIA L4, 23 GB");
    c->gemm_gflops = 21000;
    c->conv_fwd = (nn_rate_curve){ .n = 1, .flops = { 1e8 }, .gflops = { 23000 } };
    c->mem_gbps = 250;
    c->op_us = 3.1;
    c->sync_us = 9.5;
    c->upload_us = 11;
    c->upload_gbps = 7.5;
    c->download_us = 14;
    c->host_copy_gbps = 12;
    c->has_pinned = 1;
    c->pinned_upload_us = 4.5;
    c->pinned_upload_gbps = 24;
    c->has_graph = 1;
    c->graph_launch_us = 5.5;
    c->graph_node_us = 0.7;
}

static void test_save_measured_profile(void **state)
{
    char dir[NN_PATH_LEN], path[NN_PATH_LEN + 16], err[NN_ERR_LEN];
    nn_calibration cal;
    nn_gpu_profile t4, mine, back;
    (void)state;
    find("t4", &t4);
    fake_gpu_calibration(&cal);
    assert_int_equal(nn_profile_from_calibration(&cal, "My L4", &t4, &mine, err, sizeof err), 0);
    assert_true(mine.measured);
    assert_true(mine.fp32_gflops == 23000);          /* the fastest rate measured */
    assert_true(mine.framework_op_us == t4.framework_op_us && mine.pcie_gen == t4.pcie_gen);
    assert_int_equal(nn_profile_user_path("My L4", path, sizeof path), 0);
    assert_int_equal(nn_profile_user_dir(dir, sizeof dir), 0);
    assert_int_equal(strncmp(path, dir, strlen(dir)), 0);
    assert_string_equal(path + strlen(dir), "/my-l4.ini");
    assert_int_equal(nn_profile_save(path, &mine, "measured by a test", err, sizeof err), 0);
    find("My L4", &back);                            /* by name, case-blind */
    assert_true(back.measured && back.user);
    assert_string_equal(back.name, "My L4");
    nn_calibration a, b;
    nn_profile_calibration(&mine, &a);
    nn_profile_calibration(&back, &b);
    assert_memory_equal(&a, &b, sizeof a);           /* every figure read back as written */
    assert_true(back.launch_us == 3.1 && back.graph_node_us == 0.7 && back.host_copy_gbps == 12);
    assert_int_equal(unlink(path), 0);
    /* only a real GPU's calibration */
    snprintf(cal.device, sizeof cal.device, "cpu");
    assert_int_equal(nn_profile_from_calibration(&cal, "x", &t4, &mine, err, sizeof err), -1);
    fake_gpu_calibration(&cal);
    cal.has_graph = 0;
    assert_int_equal(nn_profile_from_calibration(&cal, "x", &t4, &mine, err, sizeof err), -1);
    assert_non_null(strstr(err, "graph"));
}

/* ---- the write-up beside the prediction ------------------------------------------------------ */

/* lenet-cifar10: 2 epochs of 50,000 / 4 = 12,500 steps; on the T4 the
 * three ways' steps of the top comment. */
static void test_writeup(void **state)
{
    static nn_preset p;
    static nn_explanation e[NN_GPU_WAYS];
    nn_gpu_profile g;
    nn_writeup w;
    (void)state;
    load_preset("lenet-cifar10", &p);
    find("t4", &g);
    assert_int_equal(nn_writeup_predict(&p, &g, &w), 0);
    assert_int_equal(w.batch, 4);
    assert_int_equal(w.epochs, 2);
    assert_int_equal(w.steps, 25000);
    assert_true(w.cpu_s == 50 && w.gpu_s == 94);
    nn_profile_predict(&p, 4, &g, e);
    for (int k = 0; k < NN_GPU_WAYS; k++)
        assert_true(fabs(w.way_s[k] - 25000 * e[k].predicted_us * 1e-6) < 1e-6 * w.way_s[k]);
    by_hand("t4", &g);
    assert_int_equal(nn_writeup_predict(&p, &g, &w), 0);
    for (int k = 0; k < NN_GPU_WAYS; k++)
        assert_true(fabs(w.way_s[k] - 25000 * lenet_us[0][0][k] * 1e-6) < 1e-3);
    /* conv1d-regression: 1,000,000 rows at batch 1024 = 977 steps an epoch, 10 epochs */
    load_preset("conv1d-regression", &p);
    assert_int_equal(nn_writeup_predict(&p, &g, &w), 0);
    assert_int_equal(w.steps, 9770);
    assert_true(w.cpu_s == 209 && w.gpu_s == 125);
    p.measured_cpu_s = p.measured_gpu_s = 0;         /* nothing measured: nothing to set beside */
    assert_int_equal(nn_writeup_predict(&p, &g, &w), -1);
}

/* A copy of lenet-cifar10 at batch 16 keeps the write-up's own job (batch 4,
 * 25,000 steps), is not that job, and says so; lenet5's GPU range stays one. */
static void test_writeup_own_job(void **state)
{
    static nn_preset p;
    nn_gpu_profile g;
    nn_writeup w;
    char line[512];
    (void)state;
    load_preset("lenet-cifar10", &p);
    find("t4", &g);
    p.batch = 16;                                    /* as the lab saves it */
    assert_int_equal(nn_writeup_for_job(&p, 16, 2, &g, &w), 0);
    assert_int_equal(w.batch, 4);
    assert_int_equal(w.steps, 25000);
    assert_false(w.own_job);
    nn_writeup_text(&w, line, sizeof line);
    assert_non_null(strstr(line, "CPU 50 s, GPU 94 s for its own job: batch 4, 2 epochs (25000 steps)"));
    assert_non_null(strstr(line, "not this one (batch 16, 2 epochs)"));
    assert_int_equal(nn_writeup_for_job(&p, 4, 2, &g, &w), 0);
    assert_true(w.own_job);
    nn_writeup_text(&w, line, sizeof line);
    assert_string_equal(line, "2 epochs at batch 4 = 25000 steps: measured CPU 50 s, GPU 94 s");
    load_preset("lenet5-cifar10", &p);
    assert_int_equal(nn_writeup_for_job(&p, 0, 0, NULL, &w), 0);
    assert_true(w.own_job);
    nn_writeup_text(&w, line, sizeof line);
    assert_non_null(strstr(line, "measured CPU 60 s, GPU 120-150 s"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_profiles_load),
        cmocka_unit_test(test_profile_caps),
        cmocka_unit_test(test_profile_calibration),
        cmocka_unit_test(test_lenet_predictions_by_hand),
        cmocka_unit_test(test_bad_profiles), cmocka_unit_test(test_profile_without_new_figure),
        cmocka_unit_test(test_user_profiles),
        cmocka_unit_test(test_save_measured_profile),
        cmocka_unit_test(test_writeup),
        cmocka_unit_test(test_profile_for_device), cmocka_unit_test(test_writeup_own_job),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* tests/test_gpu_rules.c - the rules of the GPU module that are plain C, so
 * that they are checked on every machine, with or without a GPU:
 *  - the probe's verdict (backends/cuda/cuda_probe.h): no GPU here (a test
 *    skips) or a GPU that cannot be used (a test fails), and the driver a
 *    CUDA version needs, named when the driver is too old;
 *  - cuDNN's size limit (backends/geom_check.h): a tensor of 2^31 elements or
 *    more is refused, naming the batch that fits; a network refuses such a
 *    batch before its first step, naming the layer (src/core/net.c).
 * What only the module itself can show runs in tests/test_gpu.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend.h"
#include "cuda/cuda_probe.h"
#include "geom_check.h"
#include "net.h"
#include "nnlab/preset.h"
#include "util.h"

#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif

static void expect_in(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("expected \"%s\" in: %s", part, text);
}

/* ---- the probe's verdict ------------------------------------------------------------------ */

/* A machine with one working GPU: driver CUDA 13.0, module built with 13.0. */
static gpu_probe_facts working(void)
{
    gpu_probe_facts f = { .driver = 13000, .runtime = 13000, .count_result = GPU_COUNT_OK,
                          .count = 1, .code_ok = 1, .device = "NVIDIA H100", .cc_major = 9 };
    return f;
}

static int verdict(const gpu_probe_facts *f, char *why, size_t len)
{
    int rc = gpu_probe_verdict(f, why, len);
    print_message("# %d: %s\n", rc, why);
    return rc;
}

/* No driver, no device: nothing to test here, a skip. */
static void test_probe_absent(void **state)
{
    (void)state;
    char why[NN_BACKEND_ERROR_LEN];
    gpu_probe_facts f = working();
    assert_int_equal(verdict(&f, why, sizeof why), 0);
    assert_string_equal(why, "");
    f.no_driver = "libcuda.so.1: cannot open shared object file";
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_ABSENT);
    expect_in(why, "no NVIDIA driver: libcuda.so.1 cannot be loaded (libcuda.so.1: cannot open");
    f = working();
    f.driver = 0;
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_ABSENT);
    f = working();
    f.count_result = GPU_COUNT_NO_DEVICE;
    f.visible = "7";
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_ABSENT);
    expect_in(why, "no CUDA device found (driver CUDA 13.0, CUDA_VISIBLE_DEVICES=7)");
    f = working();
    f.count = 0;                     /* no device, and a driver as new as the runtime */
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_ABSENT);
}

/* A GPU that cannot be used: a failure, with what to do. */
static void test_probe_unusable(void **state)
{
    (void)state;
    char why[NN_BACKEND_ERROR_LEN];
    /* a teaching lab's R535 driver (CUDA 12.2) under a module built with CUDA 13 */
    gpu_probe_facts f = working();
    f.driver = 12020;
    f.count_result = GPU_COUNT_OLD_DRIVER;
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_UNUSABLE);
    expect_in(why, "the NVIDIA driver is too old: it supports CUDA 12.2, this module was built with "
                   "CUDA 13.0, which needs driver 580 or newer");
    expect_in(why, "or build nnlab with a CUDA 12 toolkit (./configure --with-cuda=DIR)");
    /* some runtimes count no device instead of saying so */
    f.count_result = GPU_COUNT_OK;
    f.count = 0;
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_UNUSABLE);
    expect_in(why, "needs driver 580 or newer");
    /* a CUDA 12.4 build on an R470 driver (CUDA 11.4) */
    f = working();
    f.driver = 11040;
    f.runtime = 12040;
    f.count_result = GPU_COUNT_OLD_DRIVER;
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_UNUSABLE);
    expect_in(why, "which needs driver 525.60.13 or newer");
    expect_in(why, "a CUDA 11 toolkit");
    /* a release the table does not know */
    f.runtime = 14000;
    f.driver = 13000;
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_UNUSABLE);
    expect_in(why, "which needs a driver for CUDA 14.0 or newer");
    f = working();
    f.count_result = GPU_COUNT_FAILED;
    f.count_error = "cudaErrorSystemDriverMismatch: system has unsupported display driver / cuda "
                    "driver combination";
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_UNUSABLE);
    expect_in(why, "cudaGetDeviceCount failed: cudaErrorSystemDriverMismatch");
}

/* No code for the GPU: our PTX too new for the driver (minor version
 * compatibility runs machine code only), or no code for it at all. */
static void test_probe_no_code(void **state)
{
    (void)state;
    char why[NN_BACKEND_ERROR_LEN];
    gpu_probe_facts f = working();
    f.code_ok = 0;
    f.driver = 12020;
    f.runtime = 12080;
    f.ptx_too_new = 1;
    f.device = "NVIDIA RTX PRO 6000";
    f.cc_major = 12;
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_UNUSABLE);
    expect_in(why, "no machine code for NVIDIA RTX PRO 6000 (compute capability 12.0)");
    expect_in(why, "cannot compile its CUDA 12.8 PTX: update the driver to R570 or newer");
    f.driver = 12080;
    f.ptx_too_new = 0;
    f.code_error = "cudaErrorNoKernelImageForDevice: no kernel image is available";
    assert_int_equal(verdict(&f, why, sizeof why), NN_PROBE_UNUSABLE);
    expect_in(why, "has no code for NVIDIA RTX PRO 6000 (compute capability 12.0): "
                   "cudaErrorNoKernelImageForDevice");
    expect_in(why, "NVCC_GENCODE");
}

static void test_driver_tables(void **state)
{
    (void)state;
    assert_string_equal(gpu_driver_needed(13000), "580");
    assert_string_equal(gpu_driver_needed(12090), "525.60.13");
    assert_string_equal(gpu_driver_needed(11080), "450.80.02");
    assert_null(gpu_driver_needed(10020));
    assert_string_equal(gpu_driver_branch_of(12041), "R550");    /* 12.4 update 1 */
    assert_string_equal(gpu_driver_branch_of(12000), "R525");
    assert_string_equal(gpu_driver_branch_of(13000), "R580");
    assert_null(gpu_driver_branch_of(12070));                     /* there was no 12.7 */
}

/* ---- cuDNN's size limit ---------------------------------------------------------------- */

/* LeNet's first convolution, 3x32x32 -> 6x28x28, k5, at batch n */
static nn_conv_geom lenet_conv1(int n)
{
    nn_conv_geom g = { .n = n, .c_in = 3, .h_in = 32, .w_in = 32, .c_out = 6, .h_out = 28,
                       .w_out = 28, .k_h = 5, .k_w = 5, .stride_h = 1, .stride_w = 1 };
    return g;
}

static void test_cudnn_size_limit(void **state)
{
    (void)state;
    char msg[320];
    /* y (4704 a sample) is the larger: 2^31 - 1 = 456522 * 4704 + 4159 */
    nn_conv_geom g = lenet_conv1(456522);
    assert_int_equal(nn_conv_geom_size_problem("conv2d_workspace", &g, NN_CUDNN_MAX_ELEMENTS,
                                               "cuDNN", msg, sizeof msg), 0);
    g.n = 456523;
    assert_int_equal(nn_conv_geom_size_problem("conv2d_workspace", &g, NN_CUDNN_MAX_ELEMENTS,
                                               "cuDNN", msg, sizeof msg), -1);
    print_message("# %s\n", msg);
    expect_in(msg, "conv2d_workspace: y (n=456523, c=6, 28x28) has 2147484192 elements");
    expect_in(msg, "cuDNN takes at most 2147483647 in one tensor");
    expect_in(msg, "a batch of at most 456522 fits");
    /* where x is the larger: a strided convolution */
    nn_conv_geom s = { .n = 700000, .c_in = 3, .h_in = 32, .w_in = 32, .c_out = 2, .h_out = 16,
                       .w_out = 16, .k_h = 2, .k_w = 2, .stride_h = 2, .stride_w = 2 };
    assert_int_equal(nn_conv_geom_size_problem("conv2d_forward", &s, NN_CUDNN_MAX_ELEMENTS,
                                               "cuDNN", msg, sizeof msg), -1);
    expect_in(msg, "x (n=700000, c=3, 32x32) has 2150400000 elements");
    expect_in(msg, "a batch of at most 699050 fits");
    /* weights too large for any batch, and a sample too large on its own */
    nn_conv_geom w = { .n = 1, .c_in = 65536, .h_in = 3, .w_in = 3, .c_out = 65536, .h_out = 1,
                       .w_out = 1, .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1 };
    assert_int_equal(nn_conv_geom_size_problem("op", &w, NN_CUDNN_MAX_ELEMENTS, "cuDNN", msg,
                                               sizeof msg), -1);
    expect_in(msg, "at any batch");
    nn_conv_geom big = lenet_conv1(1);
    assert_int_equal(nn_conv_geom_size_problem("op", &big, 1000, "a small device", msg,
                                                sizeof msg), -1);
    expect_in(msg, "not even one sample fits");
}

/* A backend that refuses tensors above SMALL_LIMIT elements in
 * conv2d_workspace, as the GPU module refuses cuDNN's: cpu-ref otherwise. */
#define SMALL_LIMIT 100000
static nn_backend_ops small_ops;

static int small_workspace(nn_backend *b, const nn_conv_geom *g, size_t *bytes)
{
    char why[320];
    *bytes = 0;
    if (nn_conv_geom_size_problem("conv2d_workspace", g, SMALL_LIMIT, "this device", why, sizeof why))
        return nn_backend_fail(b, "%s", why);
    return nn_backend_cpu_ref.conv2d_workspace(b, g, bytes);
}

/* A batch the device cannot take is refused when the network is built, before
 * any step, with the layer and the batch that fits; the query does not hide
 * it as "no workspace". */
static void test_net_refuses_a_batch_up_front(void **state)
{
    (void)state;
    nn_preset p;
    nn_backend b;
    nn_net net;
    char err[NN_ERR_LEN];
    small_ops = nn_backend_cpu_ref;
    small_ops.name = "small-device";
    small_ops.conv2d_workspace = small_workspace;
    if (nn_preset_load(PRESETS_SRCDIR "/lenet-cifar10.ini", &p, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(nn_backend_open(&b, &small_ops, NULL), 0);
    assert_int_equal(nn_net_create(&net, &b, &p, 21, 1, err, sizeof err), 0);   /* 21 * 4704 fits */
    nn_net_destroy(&net);
    assert_int_equal(nn_net_create(&net, &b, &p, 22, 1, err, sizeof err), -1);
    print_message("# %s\n", err);
    expect_in(err, "layer 1 (conv2d 3->6 k5) at batch 22 on small-device: conv2d_workspace: y "
                   "(n=22, c=6, 28x28) has 103488 elements");
    expect_in(err, "a batch of at most 21 fits");
    nn_backend_close(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_absent),
        cmocka_unit_test(test_probe_unusable),
        cmocka_unit_test(test_probe_no_code),
        cmocka_unit_test(test_driver_tables),
        cmocka_unit_test(test_cudnn_size_limit),
        cmocka_unit_test(test_net_refuses_a_batch_up_front),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

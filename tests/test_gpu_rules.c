/* tests/test_gpu_rules.c - the rules of the GPU module that are plain C, so
 * that they are checked on every machine, with or without a GPU:
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
        cmocka_unit_test(test_cudnn_size_limit),
        cmocka_unit_test(test_net_refuses_a_batch_up_front),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

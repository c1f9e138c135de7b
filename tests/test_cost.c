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
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cost.h"
#include "preset.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lenet_layers),
        cmocka_unit_test(test_lenet_totals),
        cmocka_unit_test(test_batch_scaling),
        cmocka_unit_test(test_conv1d_regression),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

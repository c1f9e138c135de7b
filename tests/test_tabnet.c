/* tests/test_tabnet.c - the shipped tabnet-regression preset:
 * pytorch-tabnet 4.1's network for seed 001's settings. Its trained
 * parameters number what pytorch-tabnet trains (20,141: measured with
 * bench/tabnet_step.py, which counts the parameters that get a gradient in
 * pytorch-tabnet's own network), counted once for the shared fully connected
 * layers; cpu and cpu-ref take the same steps through the whole graph
 * (ghost batch norm, GLU blocks, shared weights without bias, sparsemax and
 * its loss term, the mask times the input); and a few hundred steps on a
 * small fixed set lower its loss. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "net.h"
#include "nnlab/cost.h"
#include "nnlab/preset.h"
#include "net_check.h"
#include "util.h"

#define BATCH 256                /* two ghost batches of 128 */

static nn_preset *load_tabnet(void)
{
    const char *dir = getenv("NNLAB_PRESETS_DIR");
    char path[NN_PATH_LEN];
    snprintf(path, sizeof path, "%s/tabnet-regression.ini", dir && *dir ? dir : "presets");
    return net_check_load(path);
}

static void open_net(nn_net *net, nn_backend *b, const nn_backend_ops *ops, const nn_preset *p)
{
    net_check_open(net, b, ops, p, BATCH);
}

/* Batch `which` of a small fixed set: rows and targets in [-1.7, 1.7]
 * (N(0,1)-like), the same on every backend. */
static void fill_batch(nn_net *net, int which)
{
    net_check_fill(net, BATCH, 1000 + (uint64_t)which, 1.7f);
}

/* One training step: the batch's loss (sparsity term included). */
static double step(nn_net *net, const nn_preset *p)
{
    double loss = net_check_loss(net, BATCH, 1);
    assert_int_equal(nn_net_optimize(net, p, p->lr), 0);
    return loss;
}

static void test_parameters_as_pytorch_tabnet(void **state)
{
    (void)state;
    nn_preset *p = load_tabnet();
    nn_backend b;
    nn_net net;
    nn_cost c;
    open_net(&net, &b, &nn_backend_cpu_ref, p);
    assert_int_equal(nn_net_param_count(&net), 20141);
    nn_cost_model(p, BATCH, &c);
    assert_int_equal(c.params, 20141);
    assert_int_equal(p->n_layers, 39);
    nn_net_destroy(&net);
    nn_backend_close(&b);
    free(p);
}

/* The first step's loss and every gradient on cpu-ref and cpu from the same
 * start, within float rounding (cpu sums in float, cpu-ref in double); then
 * eight Adam steps (lr 0.02) whose losses stay within 0.5 %: Adam divides
 * each gradient by its own running size, so a rounding difference in a
 * near-zero gradient becomes a full step of either sign, and the two runs
 * part slowly after the first step. */
static void test_cpu_steps_as_reference(void **state)
{
    (void)state;
    nn_preset *p = load_tabnet();
    nn_backend rb, cb;
    nn_net ref, cpu;
    open_net(&ref, &rb, &nn_backend_cpu_ref, p);
    open_net(&cpu, &cb, &nn_backend_cpu, p);
    for (int s = 0; s < 8; s++) {
        fill_batch(&ref, s % 4);
        fill_batch(&cpu, s % 4);
        float *out_r = nn_net_forward(&ref, BATCH, 1, 0), *out_c = nn_net_forward(&cpu, BATCH, 1, 0);
        assert_non_null(out_r);
        assert_non_null(out_c);
        ref.stats[0] = ref.stats[1] = cpu.stats[0] = cpu.stats[1] = 0;
        assert_int_equal(nn_net_loss(&ref, BATCH, out_r, nn_net_dout(&ref)), 0);
        assert_int_equal(nn_net_loss(&cpu, BATCH, out_c, nn_net_dout(&cpu)), 0);
        assert_int_equal(nn_net_backward(&ref, BATCH, 0, nn_net_dout(&ref)), 0);
        assert_int_equal(nn_net_backward(&cpu, BATCH, 0, nn_net_dout(&cpu)), 0);
        double lr = ref.stats[0], lc = cpu.stats[0];
        double tol = s == 0 ? 1e-6 + 1e-5 * fabs(lr) : 5e-3 * fabs(lr);
        if (fabs(lr - lc) > tol)
            fail_msg("step %d: loss %.9g on cpu-ref, %.9g on cpu", s, lr, lc);
        for (size_t i = 0; s == 0 && i < ref.n_params; i++)
            if (fabs(ref.grads[i] - cpu.grads[i]) > 1e-5 + 1e-3 * fabs(ref.grads[i]))
                fail_msg("gradient %zu: %.7g on cpu-ref, %.7g on cpu", i, (double)ref.grads[i],
                         (double)cpu.grads[i]);
        assert_int_equal(nn_net_optimize(&ref, p, p->lr), 0);
        assert_int_equal(nn_net_optimize(&cpu, p, p->lr), 0);
    }
    nn_net_destroy(&ref);
    nn_net_destroy(&cpu);
    nn_backend_close(&rb);
    nn_backend_close(&cb);
    free(p);
}

/* 300 steps over 4 fixed batches on cpu: the mean loss of the last 20 steps
 * well below that of the first 20 (the network fits 1,024 rows). */
static void test_training_lowers_the_loss(void **state)
{
    (void)state;
    nn_preset *p = load_tabnet();
    nn_backend b;
    nn_net net;
    double first = 0, last = 0;
    open_net(&net, &b, &nn_backend_cpu, p);
    for (int s = 0; s < 300; s++) {
        fill_batch(&net, s % 4);
        double l = step(&net, p);
        assert_true(isfinite(l));
        if (s < 20)
            first += l / 20;
        if (s >= 280)
            last += l / 20;
    }
    print_message("# tabnet-regression: mean loss %.4f over the first 20 steps, %.4f over the last 20\n",
                  first, last);
    assert_true(last < 0.8 * first);
    nn_net_destroy(&net);
    nn_backend_close(&b);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parameters_as_pytorch_tabnet),
        cmocka_unit_test(test_cpu_steps_as_reference),
        cmocka_unit_test(test_training_lowers_the_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

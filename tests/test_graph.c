/* tests/test_graph.c - networks as graphs: the graph fixture
 * tests/fixtures/graph-net.ini (a branch, a shared weight, a tensor read by
 * three layers and twice by one, slice, mul, a scaled add) through the whole
 * stack: its parameters counted once, its gradients against finite
 * differences through nn_net (shared weights and summed gradients included),
 * the same training on cpu-ref and cpu, the finite-difference checks of the
 * add, mul and slice ops, and the preset written back and read again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "net.h"
#include "nnlab/cost.h"
#include "nnlab/preset.h"
#include "net_check.h"
#include "rng.h"
#include "test_tmp.h"
#include "util.h"

#define GRAPH_NET FIXTURES_DIR "/graph-net.ini"
#define BATCH 8

static nn_preset *load_graph(void)
{
    return net_check_load(GRAPH_NET);
}

static void fill_batch(nn_net *net, uint64_t seed)
{
    net_check_fill(net, BATCH, seed, 1.0f);
}

static double net_loss(nn_net *net, int grads)
{
    return net_check_loss(net, BATCH, grads);
}

static void open_net(nn_net *net, nn_backend *b, const nn_backend_ops *ops, const nn_preset *p)
{
    net_check_open(net, b, ops, p, BATCH);
}

static void test_params_counted_once(void **state)
{
    (void)state;
    nn_preset *p = load_graph();
    nn_backend b;
    nn_net net;
    nn_cost c;
    nn_net_bytes bytes;
    open_net(&net, &b, &nn_backend_cpu_ref, p);
    assert_int_equal(nn_net_param_count(&net), 181);
    assert_int_equal(net.layers[4].param_offset, net.layers[2].param_offset);
    nn_cost_model(p, BATCH, &c);
    assert_int_equal(c.params, 181);
    assert_int_equal(c.layers[4].params, 0);
    assert_string_equal(c.layers[4].wiring, "weights of layer3");
    assert_string_equal(c.layers[8].wiring, "<- layer6");
    assert_string_equal(c.layers[5].wiring, "<- layer2, layer5");
    assert_string_equal(c.layers[2].wiring, "");
    nn_net_bytes_of(p, BATCH, NULL, &bytes);
    /* four arenas (Adam) of 112 + 80 + 16 floats (blocks padded to 16), plus
     * the shared block's gradient scratch */
    assert_int_equal(net.n_params, 208);
    assert_true(bytes.params == (208.0 * 4 + 72) * 4);
    nn_net_destroy(&net);
    nn_backend_close(&b);
    free(p);
}

/* The cost model charges backward the sums the network runs (net.c's
 * rule), at batch 1: layer2's 8 values are read by layer3, layer6 and twice
 * by layer7; going backward layer7's first input writes their gradient, its
 * second, layer6's and layer3's add to it (8 each); layer5 adds its 72
 * shared parameters' gradient to layer3's. Nothing else is summed. */
static void test_cost_of_sums(void **state)
{
    (void)state;
    static const double extra[11] = { 0, 0, 8, 0, 72, 8, 8, 0, 0, 0, 0 };
    nn_preset *p = load_graph();
    nn_cost c;
    nn_cost_model(p, 1, &c);
    for (int i = 0; i < p->n_layers; i++) {
        nn_layer_cost alone;
        nn_layer_cost_model(&p->layers[i], 1, nn_layer_needs_any_dx(p->layers, i), &alone);
        if (c.layers[i].bwd.flops - alone.bwd.flops != extra[i])
            fail_msg("[layer%d]: backward %.0f FLOPs, %.0f without sums, want %.0f more", i + 1,
                     c.layers[i].bwd.flops, alone.bwd.flops, extra[i]);
        assert_true(c.layers[i].bwd.bytes - alone.bwd.bytes == 12.0 * extra[i]);
    }
    free(p);
}

/* Every parameter's gradient against central differences of the loss, on
 * cpu-ref. relu becomes tanh here so that no kink lies within +-h. */
static void test_net_gradients(void **state)
{
    (void)state;
    nn_preset *p = load_graph();
    nn_backend b;
    nn_net net;
    p->layers[3].kind = NN_LAYER_TANH;
    open_net(&net, &b, &nn_backend_cpu_ref, p);
    fill_batch(&net, 3);
    net_loss(&net, 1);
    size_t n = net.n_params;
    float *analytic = malloc(n * sizeof *analytic);
    assert_non_null(analytic);
    memcpy(analytic, net.grads, n * sizeof *analytic);
    const double h = 1e-2;
    for (size_t i = 0; i < n; i++) {
        float saved = net.params[i];
        float xp = (float)(saved + h), xm = (float)(saved - h);
        net.params[i] = xp;
        double lp = net_loss(&net, 0);
        net.params[i] = xm;
        double lm = net_loss(&net, 0);
        net.params[i] = saved;
        double num = (lp - lm) / ((double)xp - (double)xm);
        if (fabs(analytic[i] - num) > 2e-3 + 2e-2 * fabs(num))
            fail_msg("parameter %zu: analytic %.7g, numeric %.7g", i, (double)analytic[i], num);
    }
    free(analytic);
    nn_net_destroy(&net);
    nn_backend_close(&b);
    free(p);
}

/* Forty Adam steps on cpu-ref and on cpu from the same start: the same
 * losses and parameters within float rounding (cpu sums in float, cpu-ref
 * in double). */
static void test_cpu_trains_as_reference(void **state)
{
    (void)state;
    nn_preset *p = load_graph();
    nn_backend rb, cb;
    nn_net ref, cpu;
    open_net(&ref, &rb, &nn_backend_cpu_ref, p);
    open_net(&cpu, &cb, &nn_backend_cpu, p);
    double first = 0, last = 0;
    for (int step = 0; step < 40; step++) {
        fill_batch(&ref, 100 + (uint64_t)step);
        fill_batch(&cpu, 100 + (uint64_t)step);
        double lr = net_loss(&ref, 1), lc = net_loss(&cpu, 1);
        if (fabs(lr - lc) > 1e-5 + 1e-4 * fabs(lr))
            fail_msg("step %d: loss %.9g on cpu-ref, %.9g on cpu", step, lr, lc);
        assert_int_equal(nn_net_optimize(&ref, p, p->lr), 0);
        assert_int_equal(nn_net_optimize(&cpu, p, p->lr), 0);
        if (step == 0)
            first = lr;
        last = lr;
    }
    for (size_t i = 0; i < ref.n_params; i++)
        if (fabs(ref.params[i] - cpu.params[i]) > 1e-4 + 1e-3 * fabs(ref.params[i]))
            fail_msg("parameter %zu: %.7g on cpu-ref, %.7g on cpu", i, (double)ref.params[i],
                     (double)cpu.params[i]);
    print_message("# graph-net loss %.4f -> %.4f over 40 steps\n", first, last);
    nn_net_destroy(&ref);
    nn_net_destroy(&cpu);
    nn_backend_close(&rb);
    nn_backend_close(&cb);
    free(p);
}

/* ---- the ops against finite differences (cpu-ref) ---- */

/* L = sum(r * y) of one op: add (scale 0.7), mul or slice columns [1, 3) of
 * (2, 5); the gradient of input `which` by central differences. */
static double op_objective(nn_backend *b, int op, const float *a, const float *c, const float *r)
{
    float y[10];
    size_t n = op == 2 ? 4 : 10;
    if (op == 0)
        assert_int_equal(b->ops->add_forward(b, 10, 0.7f, a, c, y), 0);
    else if (op == 1)
        assert_int_equal(b->ops->mul_forward(b, 10, a, c, y), 0);
    else
        assert_int_equal(b->ops->slice_forward(b, 2, 5, 1, 3, a, y), 0);
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)r[i] * y[i];
    return s;
}

static void test_op_gradients(void **state)
{
    (void)state;
    static const char *const names[] = { "add", "mul", "slice" };
    nn_backend b;
    nn_rng rng;
    assert_int_equal(nn_backend_open(&b, &nn_backend_cpu_ref, NULL), 0);
    nn_rng_seed(&rng, 9);
    for (int op = 0; op < 3; op++) {
        float a[10], c[10], r[10], da[10], dc[10];
        for (int i = 0; i < 10; i++) {
            a[i] = nn_rng_range(&rng, -2, 2);
            c[i] = nn_rng_range(&rng, -2, 2);
            r[i] = nn_rng_range(&rng, -1, 1);
        }
        if (op == 0)
            assert_int_equal(b.ops->add_backward(&b, 10, 0.7f, r, da, dc), 0);
        else if (op == 1)
            assert_int_equal(b.ops->mul_backward(&b, 10, a, c, r, da, dc), 0);
        else
            assert_int_equal(b.ops->slice_backward(&b, 2, 5, 1, 3, r, da), 0);
        for (int which = 0; which < (op == 2 ? 1 : 2); which++) {
            float *x = which ? c : a, *g = which ? dc : da;
            for (int i = 0; i < 10; i++) {
                float saved = x[i];
                x[i] = saved + 1e-2f;
                double lp = op_objective(&b, op, a, c, r);
                x[i] = saved - 1e-2f;
                double lm = op_objective(&b, op, a, c, r);
                double num = (lp - lm) / ((double)(saved + 1e-2f) - (double)(saved - 1e-2f));
                x[i] = saved;
                if (fabs(g[i] - num) > 1e-3 + 1e-2 * fabs(num))
                    fail_msg("%s input %d element %d: analytic %.7g, numeric %.7g", names[op],
                             which, i, (double)g[i], num);
            }
        }
    }
    nn_backend_close(&b);
}

/* Saved and read back: the same layers, keys included (input, inputs,
 * weights, scale, from, to), and a chain layer gets no input key. */
static void test_roundtrip(void **state)
{
    (void)state;
    char root[NN_PATH_LEN], path[NN_PATH_LEN + 16], err[NN_ERR_LEN];
    nn_preset *p = load_graph(), *q = malloc(sizeof *q);
    assert_non_null(q);
    assert_int_equal(test_tmp_create(root, sizeof root, "graph"), 0);
    snprintf(path, sizeof path, "%s/g.ini", root);
    if (nn_preset_save(path, p, err, sizeof err) != 0 || nn_preset_load(path, q, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(q->n_layers, p->n_layers);
    for (int i = 0; i < p->n_layers; i++)
        if (memcmp(&p->layers[i], &q->layers[i], sizeof p->layers[i]) != 0)
            fail_msg("[layer%d] differs after a round trip", i + 1);
    FILE *f = fopen(path, "r");
    char text[8192];
    assert_non_null(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "[layer5]\ntype = linear\nin = 8\nout = 8\ninput = layer4\nweights = layer3\n"));
    assert_non_null(strstr(text, "inputs = layer2, layer5\nscale = 0.70710677"));
    assert_null(strstr(text, "[layer2]\ntype = tanh\ninput"));
    assert_int_equal(test_tmp_remove(root), 0);
    free(p);
    free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_counted_once),
        cmocka_unit_test(test_cost_of_sums),
        cmocka_unit_test(test_net_gradients),
        cmocka_unit_test(test_cpu_trains_as_reference),
        cmocka_unit_test(test_op_gradients),
        cmocka_unit_test(test_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

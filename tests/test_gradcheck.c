/* tests/test_gradcheck.c - finite-difference gradient checks of every layer
 * and loss of the reference backend (cpu-ref), plus small hand-computed
 * forward values (a gradient check alone would accept a consistently wrong
 * forward, e.g. a flipped convolution kernel).
 *
 * Method: for an output y of a layer, the scalar objective is L = sum(y * r)
 * with a fixed random r, so the backward pass is run with dy = r. Each input
 * element is moved by +-h (h = 1e-2, the difference taken between the float
 * values actually stored) and (L+ - L-) / (x+ - x-), computed in double, is
 * compared with the analytic gradient within abs + rel*|numeric|. A loss is
 * its own objective (y = stats[0], r = 1). The worst element is reported. */
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
#include "cpu_ref/cpu_ref.h"
#include "dropout_hash.h"
#include "rng.h"

#define GC_H 1e-2
#define GC_ABS 1e-3
#define GC_REL 1e-2

static nn_backend B;   /* cpu-ref, opened once for the group */

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

static float *fvec(size_t n)
{
    float *p = calloc(n ? n : 1, sizeof *p);
    assert_non_null(p);
    return p;
}

static float *frand(nn_rng *r, size_t n, float lo, float hi)
{
    float *p = fvec(n);
    for (size_t i = 0; i < n; i++)
        p[i] = nn_rng_range(r, lo, hi);
    return p;
}

/* Output buffers start as NaN: an element a backward pass forgets to write,
 * or adds to instead of overwriting, shows up as a NaN in the check. */
static float *fnan(size_t n)
{
    float *p = fvec(n);
    for (size_t i = 0; i < n; i++)
        p[i] = NAN;
    return p;
}

/* n distinct values 0.05 apart (more than 2h, so no perturbation can change
 * which element of a pooling window is the maximum), in random order. */
static float *fdistinct(nn_rng *r, size_t n)
{
    float *p = fvec(n);
    for (size_t i = 0; i < n; i++)
        p[i] = 0.05f * ((float)i - (float)n / 2.0f);
    for (size_t i = n; i > 1; i--) {   /* Fisher-Yates */
        size_t j = (size_t)nn_rng_below(r, i);
        float t = p[i - 1];
        p[i - 1] = p[j];
        p[j] = t;
    }
    return p;
}

/* One case's forward pass: writes its output from its current inputs. */
typedef void (*forward_fn)(void *ctx, float *y);

typedef struct objective {
    forward_fn forward;
    void *ctx;
    size_t ny;
    const float *r;   /* (ny) the weights of L = sum(y * r), i.e. dy */
    float *y;         /* (ny) scratch */
} objective;

static double objective_value(const objective *o)
{
    o->forward(o->ctx, o->y);
    double s = 0.0;
    for (size_t i = 0; i < o->ny; i++)
        s += (double)o->y[i] * o->r[i];
    return s;
}

/* Compares analytic (n) with central differences of the objective over the n
 * elements of param; fails naming the worst element. */
static void check_grad_tol(const char *what, const objective *o, float *param,
                           const float *analytic, size_t n, double abs_tol, double rel_tol)
{
    double worst_ratio = 0.0, worst_num = 0.0, worst_err = 0.0, worst_tol = 0.0;
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        float saved = param[i];
        float xp = (float)(saved + GC_H), xm = (float)(saved - GC_H);
        param[i] = xp;
        double lp = objective_value(o);
        param[i] = xm;
        double lm = objective_value(o);
        param[i] = saved;
        double num = (lp - lm) / ((double)xp - (double)xm);
        double err = fabs((double)analytic[i] - num);
        double tol = abs_tol + rel_tol * fabs(num);
        double ratio = err / tol;
        if (isnan(ratio))
            ratio = INFINITY;   /* a NaN anywhere is the worst */
        if (i == 0 || ratio > worst_ratio) {
            worst_ratio = ratio;
            worst = i;
            worst_num = num;
            worst_err = err;
            worst_tol = tol;
        }
    }
    if (!(worst_ratio <= 1.0))
        fail_msg("%s: worst element %zu of %zu: analytic %.7g, numeric %.7g, "
                 "|diff| %.3g > tol %.3g", what, worst, n, (double)analytic[worst],
                 worst_num, worst_err, worst_tol);
}

static void check_grad(const char *what, const objective *o, float *param,
                       const float *analytic, size_t n)
{
    check_grad_tol(what, o, param, analytic, n, GC_ABS, GC_REL);
}

static void assert_close(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: got %.9g, want %.9g (tol %.3g)", what, got, want, tol);
}

/* ------------------------------------------------------------------------ */
/* Linear                                                                    */

typedef struct linear_case {
    int n, in, out;
    float *x, *w, *bias;
} linear_case;

static void linear_fwd(void *ctx, float *y)
{
    linear_case *c = ctx;
    assert_int_equal(B.ops->linear_forward(&B, c->n, c->in, c->out, c->x, c->w, c->bias, y), 0);
}

static void test_linear_grad(void **state)
{
    (void)state;
    nn_rng rng;
    nn_rng_seed(&rng, 11);
    linear_case c = { .n = 3, .in = 5, .out = 4 };
    const size_t nx = 15, nw = 20, ny = 12;
    c.x = frand(&rng, nx, -1, 1);
    c.w = frand(&rng, nw, -1, 1);
    c.bias = frand(&rng, 4, -1, 1);
    float *r = frand(&rng, ny, -1, 1), *y = fvec(ny);
    float *dx = fnan(nx), *dw = fnan(nw), *db = fnan(4);
    float *dw2 = fnan(nw), *db2 = fnan(4);

    assert_int_equal(B.ops->linear_backward(&B, c.n, c.in, c.out, c.x, c.w, r, dx, dw, db), 0);
    objective o = { linear_fwd, &c, ny, r, y };
    check_grad("linear dx", &o, c.x, dx, nx);
    check_grad("linear dw", &o, c.w, dw, nw);
    check_grad("linear dbias", &o, c.bias, db, 4);

    /* dx == NULL (first layer) skips dx and changes nothing else */
    assert_int_equal(B.ops->linear_backward(&B, c.n, c.in, c.out, c.x, c.w, r, NULL, dw2, db2), 0);
    assert_memory_equal(dw, dw2, nw * sizeof *dw);
    assert_memory_equal(db, db2, 4 * sizeof *db);

    free(c.x); free(c.w); free(c.bias); free(r); free(y);
    free(dx); free(dw); free(db); free(dw2); free(db2);
}

/* y = x . w^T + b by hand: x = (1, 2, 3), w = ((1, 0, -1), (0.5, 0.5, 0.5)),
 * b = (0.25, -1): y = (1 - 3 + 0.25, 0.5 + 1 + 1.5 - 1) = (-1.75, 2). */
static void test_linear_forward_values(void **state)
{
    (void)state;
    const float x[3] = { 1, 2, 3 };
    const float w[6] = { 1, 0, -1, 0.5f, 0.5f, 0.5f };
    const float b[2] = { 0.25f, -1 };
    float y[2];
    assert_int_equal(B.ops->linear_forward(&B, 1, 3, 2, x, w, b, y), 0);
    assert_close(y[0], -1.75, 1e-6, "y[0]");
    assert_close(y[1], 2.0, 1e-6, "y[1]");
}

/* ------------------------------------------------------------------------ */
/* Convolution                                                               */

typedef struct conv_case {
    nn_conv_geom g;
    float *x, *w, *bias;
} conv_case;

static void conv_fwd(void *ctx, float *y)
{
    conv_case *c = ctx;
    assert_int_equal(B.ops->conv2d_forward(&B, &c->g, c->x, c->w, c->bias, y, NULL), 0);
}

/* Fills in h_out/w_out from the formula in backend.h and checks every
 * gradient of the case. */
static void run_conv_case(const char *name, nn_conv_geom g, uint64_t seed)
{
    char what[128];
    nn_rng rng;
    nn_rng_seed(&rng, seed);
    g.h_out = (g.h_in + 2 * g.pad_h - g.k_h) / g.stride_h + 1;
    g.w_out = (g.w_in + 2 * g.pad_w - g.k_w) / g.stride_w + 1;
    conv_case c = { .g = g };
    const size_t nx = (size_t)g.n * g.c_in * g.h_in * g.w_in;
    const size_t nw = (size_t)g.c_out * g.c_in * g.k_h * g.k_w;
    const size_t ny = (size_t)g.n * g.c_out * g.h_out * g.w_out;
    const size_t nb = (size_t)g.c_out;
    c.x = frand(&rng, nx, -1, 1);
    c.w = frand(&rng, nw, -1, 1);
    c.bias = frand(&rng, nb, -1, 1);
    float *r = frand(&rng, ny, -1, 1), *y = fvec(ny);
    float *dx = fnan(nx), *dw = fnan(nw), *db = fnan(nb);

    size_t ws_bytes = 1;
    assert_int_equal(B.ops->conv2d_workspace(&B, &c.g, &ws_bytes), 0);
    assert_int_equal(ws_bytes, 0);
    assert_int_equal(B.ops->conv2d_backward(&B, &c.g, c.x, c.w, r, dx, dw, db, NULL), 0);
    objective o = { conv_fwd, &c, ny, r, y };
    snprintf(what, sizeof what, "%s dx", name);
    check_grad(what, &o, c.x, dx, nx);
    snprintf(what, sizeof what, "%s dw", name);
    check_grad(what, &o, c.w, dw, nw);
    snprintf(what, sizeof what, "%s dbias", name);
    check_grad(what, &o, c.bias, db, nb);

    free(c.x); free(c.w); free(c.bias); free(r); free(y);
    free(dx); free(dw); free(db);
}

static void test_conv2d_grad_stride1_pad0(void **state)
{
    (void)state;
    /* 7x6 input (non-square), 3 -> 4 channels, 3x3 kernel: output 5x4 */
    run_conv_case("conv2d s1 p0", (nn_conv_geom){ .n = 2, .c_in = 3, .h_in = 7, .w_in = 6,
                  .c_out = 4, .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1 }, 21);
}

static void test_conv2d_grad_stride1_pad1(void **state)
{
    (void)state;
    run_conv_case("conv2d s1 p1", (nn_conv_geom){ .n = 2, .c_in = 2, .h_in = 5, .w_in = 6,
                  .c_out = 3, .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1,
                  .pad_h = 1, .pad_w = 1 }, 22);
}

static void test_conv2d_grad_stride2_pad1(void **state)
{
    (void)state;
    /* (7 + 2 - 3)/2 + 1 = 4 rows, (6 + 2 - 3)/2 + 1 = 3 columns (floor) */
    run_conv_case("conv2d s2 p1", (nn_conv_geom){ .n = 2, .c_in = 3, .h_in = 7, .w_in = 6,
                  .c_out = 4, .k_h = 3, .k_w = 3, .stride_h = 2, .stride_w = 2,
                  .pad_h = 1, .pad_w = 1 }, 23);
}

static void test_conv2d_grad_stride2_pad0(void **state)
{
    (void)state;
    /* LeNet's 5x5 kernel; (8 - 5)/2 + 1 = 2 columns leaves the last input
     * column in no window, so its dx must be 0 (the check sees that) */
    run_conv_case("conv2d s2 p0 k5", (nn_conv_geom){ .n = 1, .c_in = 2, .h_in = 9, .w_in = 8,
                  .c_out = 3, .k_h = 5, .k_w = 5, .stride_h = 2, .stride_w = 2 }, 24);
}

static void test_conv2d_grad_mixed(void **state)
{
    (void)state;
    /* non-square kernel, stride and padding differing between the axes */
    run_conv_case("conv2d k3x2 s2x1 p1x0", (nn_conv_geom){ .n = 2, .c_in = 2, .h_in = 6,
                  .w_in = 5, .c_out = 3, .k_h = 3, .k_w = 2, .stride_h = 2, .stride_w = 1,
                  .pad_h = 1, .pad_w = 0 }, 25);
}

static void test_conv1d_grad(void **state)
{
    (void)state;
    /* conv1d as h = 1: the conv1d-regression preset's 1 -> 8 and 8 -> 16, k3 pad1 */
    run_conv_case("conv1d 1->8 k3 p1", (nn_conv_geom){ .n = 3, .c_in = 1, .h_in = 1, .w_in = 16,
                  .c_out = 8, .k_h = 1, .k_w = 3, .stride_h = 1, .stride_w = 1,
                  .pad_w = 1 }, 26);
    run_conv_case("conv1d 8->16 k3 p1", (nn_conv_geom){ .n = 2, .c_in = 8, .h_in = 1, .w_in = 5,
                  .c_out = 16, .k_h = 1, .k_w = 3, .stride_h = 1, .stride_w = 1,
                  .pad_w = 1 }, 27);
    run_conv_case("conv1d s2", (nn_conv_geom){ .n = 2, .c_in = 2, .h_in = 1, .w_in = 10,
                  .c_out = 3, .k_h = 1, .k_w = 3, .stride_h = 1, .stride_w = 2 }, 28);
}

/* Cross-correlation, not convolution: x = 1..9 as 3x3, w = ((1, 0), (0, -1))
 * gives y[i][j] = x[i][j] - x[i+1][j+1] = -4 everywhere, plus bias 0.5
 * (a flipped kernel would give +4). */
static void test_conv2d_forward_values(void **state)
{
    (void)state;
    const float x[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    const float w[4] = { 1, 0, 0, -1 };
    const float b[1] = { 0.5f };
    float y[4];
    nn_conv_geom g = { .n = 1, .c_in = 1, .h_in = 3, .w_in = 3, .c_out = 1, .h_out = 2,
                       .w_out = 2, .k_h = 2, .k_w = 2, .stride_h = 1, .stride_w = 1 };
    assert_int_equal(B.ops->conv2d_forward(&B, &g, x, w, b, y, NULL), 0);
    for (int i = 0; i < 4; i++)
        assert_close(y[i], -3.5, 1e-6, "conv2d 2x2 valid");

    /* pad 1, stride 2: the padded input is 5x5 and the windows start at
     * padded (0,0), (0,2), (2,0), (2,2). Window at padded (r,c) covers
     * x[r-1][c-1] (weight 1) and x[r][c] (weight -1), zero outside:
     *   (0,0): 0 - x[0][0] = -1        (0,2): 0 - x[0][2] = -3
     *   (2,0): 0 - x[2][0] = -7        (2,2): x[1][1] - x[2][2] = 5 - 9 = -4 */
    g.pad_h = g.pad_w = 1;
    g.stride_h = g.stride_w = 2;
    assert_int_equal(B.ops->conv2d_forward(&B, &g, x, w, NULL, y, NULL), 0);
    assert_close(y[0], -1, 1e-6, "conv2d pad y[0]");
    assert_close(y[1], -3, 1e-6, "conv2d pad y[1]");
    assert_close(y[2], -7, 1e-6, "conv2d pad y[2]");
    assert_close(y[3], -4, 1e-6, "conv2d pad y[3]");

    /* a wrong output size is refused, not read out of bounds */
    g.h_out = 3;
    assert_int_equal(B.ops->conv2d_forward(&B, &g, x, w, NULL, y, NULL), -1);
    assert_non_null(strstr(B.last_error, "conv2d_forward"));
}

/* ------------------------------------------------------------------------ */
/* Max pooling                                                               */

typedef struct pool_case {
    nn_pool_geom g;
    float *x;
} pool_case;

static void pool_fwd(void *ctx, float *y)
{
    pool_case *c = ctx;
    assert_int_equal(B.ops->maxpool2d_forward(&B, &c->g, c->x, y), 0);
}

static void run_pool_case(const char *name, nn_pool_geom g, uint64_t seed)
{
    nn_rng rng;
    nn_rng_seed(&rng, seed);
    g.h_out = (g.h_in - g.k_h) / g.stride_h + 1;
    g.w_out = (g.w_in - g.k_w) / g.stride_w + 1;
    pool_case c = { .g = g };
    const size_t nx = (size_t)g.n * g.c * g.h_in * g.w_in;
    const size_t ny = (size_t)g.n * g.c * g.h_out * g.w_out;
    c.x = fdistinct(&rng, nx);
    float *r = frand(&rng, ny, -1, 1), *y = fvec(ny), *dx = fnan(nx);

    pool_fwd(&c, y);
    assert_int_equal(B.ops->maxpool2d_backward(&B, &c.g, c.x, y, r, dx), 0);
    objective o = { pool_fwd, &c, ny, r, y };
    check_grad(name, &o, c.x, dx, nx);

    free(c.x); free(r); free(y); free(dx);
}

static void test_maxpool2d_grad(void **state)
{
    (void)state;
    run_pool_case("maxpool2d k2 s2", (nn_pool_geom){ .n = 2, .c = 2, .h_in = 6, .w_in = 6,
                  .k_h = 2, .k_w = 2, .stride_h = 2, .stride_w = 2 }, 31);
    /* overlapping windows (stride < k) on a non-square input, floor mode */
    run_pool_case("maxpool2d k3 s2", (nn_pool_geom){ .n = 1, .c = 3, .h_in = 7, .w_in = 6,
                  .k_h = 3, .k_w = 3, .stride_h = 2, .stride_w = 2 }, 32);
}

static void test_maxpool1d_grad(void **state)
{
    (void)state;
    /* maxpool1d 3 (stride 3): (10 - 3)/3 + 1 = 3 windows, the last element in none */
    run_pool_case("maxpool1d k3", (nn_pool_geom){ .n = 2, .c = 3, .h_in = 1, .w_in = 10,
                  .k_h = 1, .k_w = 3, .stride_h = 1, .stride_w = 3 }, 33);
}

static void test_max_over_length_grad(void **state)
{
    (void)state;
    run_pool_case("max over length", (nn_pool_geom){ .n = 3, .c = 4, .h_in = 1, .w_in = 7,
                  .k_h = 1, .k_w = 7, .stride_h = 1, .stride_w = 7 }, 34);
}

/* Forward values by hand, and ties: the gradient goes to the first maximum in
 * row-major window order, as PyTorch does. */
static void test_maxpool_values_and_ties(void **state)
{
    (void)state;
    /* 4x4, k2 s2: windows (1,5,2,0)->5, (3,3,7,7)->7, (0,0,0,0)->0, (-1,-2,-3,-4)->-1 */
    const float x[16] = {  1, 5,  3,  3,
                           2, 0,  7,  7,
                           0, 0, -1, -2,
                           0, 0, -3, -4 };
    const float dy[4] = { 10, 20, 30, 40 };
    float y[4], dx[16];
    nn_pool_geom g = { .n = 1, .c = 1, .h_in = 4, .w_in = 4, .h_out = 2, .w_out = 2,
                       .k_h = 2, .k_w = 2, .stride_h = 2, .stride_w = 2 };
    assert_int_equal(B.ops->maxpool2d_forward(&B, &g, x, y), 0);
    assert_close(y[0], 5, 0, "y[0]");
    assert_close(y[1], 7, 0, "y[1]");
    assert_close(y[2], 0, 0, "y[2]");
    assert_close(y[3], -1, 0, "y[3]");
    assert_int_equal(B.ops->maxpool2d_backward(&B, &g, x, y, dy, dx), 0);
    /* 5 at (0,1); 7 tied at (1,2),(1,3): the first, (1,2); 0 tied four
     * times: (2,0); -1 at (2,2) */
    const float want[16] = { 0, 10,  0, 0,
                             0,  0, 20, 0,
                            30,  0, 40, 0,
                             0,  0,  0, 0 };
    assert_memory_equal(dx, want, sizeof want);

    /* overlapping windows share a maximum: 1-D, k3 s1 over (0, 9, 1, 2):
     * both windows pick the 9, so its gradient is dy0 + dy1 */
    const float x1[4] = { 0, 9, 1, 2 };
    const float dy1[2] = { 1.5f, 2.25f };
    float y1[2], dx1[4];
    nn_pool_geom g1 = { .n = 1, .c = 1, .h_in = 1, .w_in = 4, .h_out = 1, .w_out = 2,
                        .k_h = 1, .k_w = 3, .stride_h = 1, .stride_w = 1 };
    assert_int_equal(B.ops->maxpool2d_forward(&B, &g1, x1, y1), 0);
    assert_int_equal(B.ops->maxpool2d_backward(&B, &g1, x1, y1, dy1, dx1), 0);
    const float want1[4] = { 0, 3.75f, 0, 0 };
    assert_memory_equal(dx1, want1, sizeof want1);
}

/* ------------------------------------------------------------------------ */
/* Activations                                                               */

typedef struct act_case {
    enum nn_act act;
    size_t n;
    float *x;
} act_case;

static void act_fwd(void *ctx, float *y)
{
    act_case *c = ctx;
    assert_int_equal(B.ops->act_forward(&B, c->act, c->n, c->x, y), 0);
}

static void run_act_case(const char *name, enum nn_act act, float *x, size_t n, uint64_t seed)
{
    nn_rng rng;
    nn_rng_seed(&rng, seed);
    act_case c = { act, n, x };
    float *r = frand(&rng, n, -1, 1), *y = fvec(n), *dx = fnan(n);
    act_fwd(&c, y);
    assert_int_equal(B.ops->act_backward(&B, act, n, x, y, r, dx), 0);
    objective o = { act_fwd, &c, n, r, y };
    check_grad(name, &o, x, dx, n);
    free(r); free(y); free(dx);
}

static void test_relu_grad(void **state)
{
    (void)state;
    nn_rng rng;
    nn_rng_seed(&rng, 41);
    const size_t n = 200;
    float *x = fvec(n);
    /* |x| in [0.1, 2], so that x +- h never crosses the kink at 0 */
    for (size_t i = 0; i < n; i++)
        x[i] = nn_rng_range(&rng, 0.1f, 2.0f) * (i % 2 ? 1.0f : -1.0f);
    run_act_case("relu", NN_ACT_RELU, x, n, 42);
    free(x);
}

static void test_tanh_grad(void **state)
{
    (void)state;
    nn_rng rng;
    nn_rng_seed(&rng, 43);
    float *x = frand(&rng, 200, -3, 3);
    run_act_case("tanh", NN_ACT_TANH, x, 200, 44);
    free(x);
}

static void test_mish_grad(void **state)
{
    (void)state;
    nn_rng rng;
    nn_rng_seed(&rng, 45);
    float *x = frand(&rng, 200, -6, 6);
    run_act_case("mish", NN_ACT_MISH, x, 200, 46);
    free(x);
}

/* Values computed in double from the definitions:
 *   mish(1)  = tanh(log(1 + e)) = 0.8650983882673103, mish'(1) = 1.0490362200997922
 *   mish(-1) = -0.30340146137410895, mish'(-1) = 0.059216755877395
 *   mish(0)  = 0, mish'(0) = tanh(log 2) = (4 - 1)/(4 + 1) = 0.6
 *   mish(20) = 20 and mish'(20) = 1 to float precision
 *   mish(-20) = -4.1223e-08, mish'(-20) = -3.9162e-08
 * and the far tails must stay finite (no inf/inf, no 0*inf). */
static void test_act_values(void **state)
{
    (void)state;
    enum { N = 10 };
    const float x[N] = { 1, -1, 0, 20, -20, 100, -100, 1e4f, -1e4f, -1e30f };
    const float one[N] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    float y[N], dx[N];
    assert_int_equal(B.ops->act_forward(&B, NN_ACT_MISH, N, x, y), 0);
    assert_int_equal(B.ops->act_backward(&B, NN_ACT_MISH, N, x, y, one, dx), 0);
    assert_close(y[0], 0.8650983882673103, 1e-6, "mish(1)");
    assert_close(dx[0], 1.0490362200997922, 1e-6, "mish'(1)");
    assert_close(y[1], -0.30340146137410895, 1e-6, "mish(-1)");
    assert_close(dx[1], 0.059216755877395, 1e-6, "mish'(-1)");
    assert_close(y[2], 0.0, 0.0, "mish(0)");
    assert_close(dx[2], 0.6, 1e-6, "mish'(0)");
    assert_close(y[3], 20.0, 1e-5, "mish(20)");
    assert_close(dx[3], 1.0, 1e-6, "mish'(20)");
    assert_close(y[4], -4.122307240628762e-08, 1e-12, "mish(-20)");
    assert_close(dx[4], -3.916191874348969e-08, 1e-12, "mish'(-20)");
    assert_close(y[5], 100.0, 1e-4, "mish(100)");
    assert_close(dx[5], 1.0, 1e-6, "mish'(100)");
    assert_close(y[7], 1e4, 1e-2, "mish(1e4)");
    for (int i = 0; i < N; i++) {
        if (!isfinite(y[i]) || !isfinite(dx[i]))
            fail_msg("mish(%g) = %g, mish' = %g: not finite", (double)x[i], (double)y[i],
                     (double)dx[i]);
        if (x[i] <= -100 && (fabsf(y[i]) > 1e-30f || fabsf(dx[i]) > 1e-30f))
            fail_msg("mish(%g) = %g, mish' = %g: should vanish", (double)x[i], (double)y[i],
                     (double)dx[i]);
    }

    /* relu and tanh by hand; relu'(0) = 0 as in PyTorch */
    const float xr[4] = { -2, 0, 0.5f, 3 };
    float yr[4], dr[4];
    const float dyr[4] = { 1, 1, 1, 1 };
    assert_int_equal(B.ops->act_forward(&B, NN_ACT_RELU, 4, xr, yr), 0);
    assert_int_equal(B.ops->act_backward(&B, NN_ACT_RELU, 4, xr, yr, dyr, dr), 0);
    const float want_y[4] = { 0, 0, 0.5f, 3 }, want_d[4] = { 0, 0, 1, 1 };
    assert_memory_equal(yr, want_y, sizeof want_y);
    assert_memory_equal(dr, want_d, sizeof want_d);
    assert_int_equal(B.ops->act_forward(&B, NN_ACT_TANH, 4, xr, yr), 0);
    assert_close(yr[0], -0.9640275800758169, 1e-6, "tanh(-2)");
    assert_close(yr[3], 0.9950547536867305, 1e-6, "tanh(3)");

    /* an unknown activation is an error with a message */
    B.last_error[0] = '\0';
    assert_int_equal(B.ops->act_forward(&B, (enum nn_act)99, 4, xr, yr), -1);
    assert_true(B.last_error[0] != '\0');
}

/* ------------------------------------------------------------------------ */
/* Dropout                                                                   */

typedef struct dropout_case {
    size_t n;
    float p;
    uint64_t seed, counter;
    float *x;
} dropout_case;

static void dropout_fwd(void *ctx, float *y)
{
    dropout_case *c = ctx;
    assert_int_equal(B.ops->dropout_forward(&B, c->n, c->p, c->seed, c->counter, c->x, y), 0);
}

static void test_dropout_grad(void **state)
{
    (void)state;
    nn_rng rng;
    nn_rng_seed(&rng, 51);
    dropout_case c = { .n = 300, .p = 0.2f, .seed = 1234, .counter = 77 };
    c.x = frand(&rng, c.n, -1, 1);
    float *r = frand(&rng, c.n, -1, 1), *y = fvec(c.n), *dx = fnan(c.n);
    assert_int_equal(B.ops->dropout_backward(&B, c.n, c.p, c.seed, c.counter, r, dx), 0);
    objective o = { dropout_fwd, &c, c.n, r, y };
    check_grad("dropout", &o, c.x, dx, c.n);

    /* exactly: dx = dy * mask / (1 - p), the mask from dropout_hash.h, and
     * the forward drops the same elements */
    dropout_fwd(&c, y);
    const float scale = 1.0f / (1.0f - c.p);
    for (size_t i = 0; i < c.n; i++) {
        int keep = nn_dropout_keep(c.seed, c.counter, i, c.p);
        float want_dx = keep ? r[i] * scale : 0.0f;
        float want_y = keep ? c.x[i] * scale : 0.0f;
        if (dx[i] != want_dx || y[i] != want_y)
            fail_msg("dropout element %zu (keep %d): dx %g want %g, y %g want %g", i, keep,
                     (double)dx[i], (double)want_dx, (double)y[i], (double)want_y);
    }
    free(c.x); free(r); free(y); free(dx);
}

static void test_dropout_mask(void **state)
{
    (void)state;
    enum { N = 20000 };
    float *x = fvec(N), *y = fvec(N), *y2 = fvec(N);
    for (size_t i = 0; i < N; i++)
        x[i] = 1.0f + (float)(i % 7);

    /* p = 0 is the identity */
    assert_int_equal(B.ops->dropout_forward(&B, N, 0.0f, 9, 1, x, y), 0);
    assert_memory_equal(x, y, N * sizeof *x);
    assert_int_equal(B.ops->dropout_backward(&B, N, 0.0f, 9, 1, x, y), 0);
    assert_memory_equal(x, y, N * sizeof *x);

    /* about 1 - p kept (std sqrt(0.21/N) = 0.003), and another counter
     * (another step or layer) gives another mask */
    assert_int_equal(B.ops->dropout_forward(&B, N, 0.3f, 9, 1, x, y), 0);
    assert_int_equal(B.ops->dropout_forward(&B, N, 0.3f, 9, 2, x, y2), 0);
    size_t kept = 0, differ = 0;
    for (size_t i = 0; i < N; i++) {
        kept += y[i] != 0.0f;
        differ += (y[i] != 0.0f) != (y2[i] != 0.0f);
    }
    assert_close((double)kept / N, 0.7, 0.02, "fraction kept");
    assert_true(differ > N / 10);

    /* p = 1 drops everything; p outside [0, 1] is an error */
    assert_int_equal(B.ops->dropout_forward(&B, N, 1.0f, 9, 1, x, y), 0);
    for (size_t i = 0; i < N; i++)
        assert_true(y[i] == 0.0f);
    assert_int_equal(B.ops->dropout_forward(&B, N, 1.5f, 9, 1, x, y), -1);
    assert_int_equal(B.ops->dropout_backward(&B, N, -0.1f, 9, 1, x, y), -1);
    assert_non_null(strstr(B.last_error, "dropout"));
    free(x); free(y); free(y2);
}

/* ------------------------------------------------------------------------ */
/* Losses                                                                    */

typedef struct xent_case {
    int n, classes;
    float *logits;
    int32_t *labels;
} xent_case;

static void xent_fwd(void *ctx, float *y)
{
    xent_case *c = ctx;
    float stats[2] = { 0, 0 };
    assert_int_equal(B.ops->softmax_xent(&B, c->n, c->classes, c->logits, c->labels, NULL,
                                         stats), 0);
    y[0] = stats[0];
}

static void test_softmax_xent_grad(void **state)
{
    (void)state;
    nn_rng rng;
    nn_rng_seed(&rng, 61);
    xent_case c = { .n = 4, .classes = 5 };
    const size_t nl = 20;
    c.logits = frand(&rng, nl, -2, 2);
    int32_t labels[4] = { 0, 3, 4, 3 };
    c.labels = labels;
    float *dl = fnan(nl), stats[2] = { 0, 0 }, y[1];
    const float one[1] = { 1 };
    assert_int_equal(B.ops->softmax_xent(&B, c.n, c.classes, c.logits, c.labels, dl, stats), 0);

    /* the loss itself is the objective; the gradients are ~0.1/n, so the
     * absolute tolerance is tighter than the default */
    objective o = { xent_fwd, &c, 1, one, y };
    check_grad_tol("softmax_xent dlogits", &o, c.logits, dl, nl, 1e-4, 1e-2);

    /* each row of dlogits sums to 0 (softmax sums to 1, minus the one-hot) */
    for (int i = 0; i < c.n; i++) {
        double s = 0;
        for (int k = 0; k < c.classes; k++)
            s += dl[i * c.classes + k];
        assert_close(s, 0.0, 1e-6, "row sum of dlogits");
    }
    free(c.logits); free(dl);
}

/* By hand:
 *  - logits (0, 0), label 0: loss log 2, dlogits (0.5 - 1, 0.5) / 1
 *  - logits (1000, 0), label 0: loss 0 (no overflow); (0, 1000), label 0: 1000
 *  - logits (1, 1, 0): the argmax is the first max, class 0; label 1 counts
 *    as wrong, label 0 as right */
static void test_softmax_xent_values(void **state)
{
    (void)state;
    float stats[2] = { 0, 0 }, dl[4];
    const float l1[2] = { 0, 0 };
    const int32_t lab0[2] = { 0, 0 };
    assert_int_equal(B.ops->softmax_xent(&B, 1, 2, l1, lab0, dl, stats), 0);
    assert_close(stats[0], log(2.0), 1e-6, "loss of (0, 0)");
    assert_close(stats[1], 1, 0, "correct of (0, 0)");
    assert_close(dl[0], -0.5, 1e-7, "dlogits[0]");
    assert_close(dl[1], 0.5, 1e-7, "dlogits[1]");

    /* two samples, mean over n: (0 + 1000)/2 = 500; correct: the first only;
     * dlogits = (softmax - onehot)/2 = ((0,0), (-0.5, 0.5)) */
    const float l2[4] = { 1000, 0, 0, 1000 };
    stats[0] = stats[1] = 0;
    assert_int_equal(B.ops->softmax_xent(&B, 2, 2, l2, lab0, dl, stats), 0);
    assert_close(stats[0], 500, 1e-4, "mean loss with huge logits");
    assert_close(stats[1], 1, 0, "correct with huge logits");
    assert_close(dl[0], 0, 1e-7, "dl[0]");
    assert_close(dl[1], 0, 1e-7, "dl[1]");
    assert_close(dl[2], -0.5, 1e-7, "dl[2]");
    assert_close(dl[3], 0.5, 1e-7, "dl[3]");

    /* stats accumulate (+=): a third call adds to what is there */
    const float l3[3] = { 1, 1, 0 };
    const int32_t lab1[1] = { 1 };
    float s3[2] = { 10, 5 };
    assert_int_equal(B.ops->softmax_xent(&B, 1, 3, l3, lab1, NULL, s3), 0);
    /* loss = log(e + e + 1) - 1 */
    assert_close(s3[0], 10 + log(2 * exp(1.0) + 1) - 1, 1e-5, "accumulated loss");
    assert_close(s3[1], 5, 0, "tie: first max is class 0, label 1 is wrong");
    assert_int_equal(B.ops->softmax_xent(&B, 1, 3, l3, lab0, NULL, s3), 0);
    assert_close(s3[1], 6, 0, "tie: first max is class 0, label 0 is right");
}

static void test_softmax_xent_bad_label(void **state)
{
    (void)state;
    const float logits[6] = { 1, 2, 3, 4, 5, 6 };
    float dl[6] = { 7, 7, 7, 7, 7, 7 };
    float stats[2] = { 1, 2 };
    const int32_t too_big[2] = { 0, 3 };
    const int32_t negative[2] = { -1, 0 };

    B.last_error[0] = '\0';
    assert_int_equal(B.ops->softmax_xent(&B, 2, 3, logits, too_big, dl, stats), -1);
    assert_non_null(strstr(B.last_error, "label"));
    assert_non_null(strstr(B.last_error, "3"));
    /* nothing written on failure */
    assert_true(stats[0] == 1 && stats[1] == 2);
    for (int i = 0; i < 6; i++)
        assert_true(dl[i] == 7);

    B.last_error[0] = '\0';
    assert_int_equal(B.ops->softmax_xent(&B, 2, 3, logits, negative, NULL, stats), -1);
    assert_non_null(strstr(B.last_error, "-1"));
}

typedef struct mse_case {
    int n, width;
    float *pred, *target;
} mse_case;

static void mse_fwd(void *ctx, float *y)
{
    mse_case *c = ctx;
    float stats[2] = { 0, 0 };
    assert_int_equal(B.ops->mse(&B, c->n, c->width, c->pred, c->target, NULL, stats), 0);
    y[0] = stats[0];
}

static void test_mse_grad(void **state)
{
    (void)state;
    nn_rng rng;
    nn_rng_seed(&rng, 71);
    mse_case c = { .n = 5, .width = 3 };
    const size_t m = 15;
    c.pred = frand(&rng, m, -2, 2);
    c.target = frand(&rng, m, -2, 2);
    float *dp = fnan(m), stats[2] = { 0, 0 }, y[1];
    const float one[1] = { 1 };
    assert_int_equal(B.ops->mse(&B, c.n, c.width, c.pred, c.target, dp, stats), 0);
    objective o = { mse_fwd, &c, 1, one, y };
    check_grad_tol("mse dpred", &o, c.pred, dp, m, 1e-4, 1e-2);
    free(c.pred); free(c.target); free(dp);
}

/* pred (1, 2, 0, -1), target (0, 0, 0, 1) as n = 2, width = 2:
 * loss = (1 + 4 + 0 + 4)/4 = 2.25, dpred = 2 (1, 2, 0, -2)/4 = (0.5, 1, 0, -1) */
static void test_mse_values(void **state)
{
    (void)state;
    const float pred[4] = { 1, 2, 0, -1 }, target[4] = { 0, 0, 0, 1 };
    float dp[4], stats[1] = { 0.5f };
    assert_int_equal(B.ops->mse(&B, 2, 2, pred, target, dp, stats), 0);
    assert_close(stats[0], 0.5 + 2.25, 1e-6, "mse loss (accumulated onto 0.5)");
    const float want[4] = { 0.5f, 1, 0, -1 };
    assert_memory_equal(dp, want, sizeof want);
}

/* ------------------------------------------------------------------------ */
/* The registry (backend.c)                                                  */

static int probe_never(char *why, size_t why_len)
{
    snprintf(why, why_len, "no such device");
    return -1;
}

static void test_registry(void **state)
{
    (void)state;
    size_t count = 0;
    for (const nn_backend_ops *const *p = nn_builtin_backends; *p; p++)
        count++;
    assert_true(count >= 2);
    assert_ptr_equal(nn_builtin_backends[0], &nn_backend_cpu_ref);
    assert_ptr_equal(nn_backend_find("cpu-ref"), &nn_backend_cpu_ref);
    assert_ptr_equal(nn_backend_find("cpu"), &nn_backend_cpu);
    /* "gpu" is the run-time module: NULL when it cannot be loaded here, else
     * its table, which no probe failure removes */
    const nn_backend_ops *gpu = nn_backend_find("gpu");
    char why[NN_BACKEND_ERROR_LEN];
    if (gpu) {
        assert_string_equal(gpu->name, "gpu");
        assert_int_equal(gpu->host_memory, 0);
    } else {
        assert_null(nn_backend_find_why("gpu", why, sizeof why));
        assert_true(why[0] != '\0');
    }
    assert_null(nn_backend_find_why("no-such-device", why, sizeof why));
    assert_non_null(strstr(why, "no-such-device"));
    assert_null(nn_backend_find(NULL));
    assert_string_equal(nn_backend_cpu_ref.summary,
                        "reference: plain C loops, one thread (the test oracle)");

    /* a failing probe: -1, the reason with the name, and nothing open */
    const nn_backend_ops never = { .name = "never", .probe = probe_never };
    nn_backend b;
    assert_int_equal(nn_backend_open(&b, &never, NULL), -1);
    assert_string_equal(b.last_error, "never: no such device");
    assert_null(b.ops);
    nn_backend_close(&b);   /* harmless on a backend that failed to open */

    /* cpu-ref opens with any config; alloc gives zeroed, aligned memory */
    nn_backend_config cfg = { .threads = 4 };
    assert_int_equal(nn_backend_open(&b, &nn_backend_cpu_ref, &cfg), 0);
    assert_string_equal(b.last_error, "");
    float *p = NULL;
    assert_int_equal(b.ops->alloc(&b, 10 * sizeof *p, (void **)&p), 0);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 64, 0);
    for (int i = 0; i < 10; i++)
        assert_true(p[i] == 0.0f);
    b.ops->free(&b, p);
    assert_int_equal(nn_backend_fail(&b, "x=%d %s", 42, "y"), -1);
    assert_string_equal(b.last_error, "x=42 y");
    nn_backend_close(&b);
    assert_null(b.ops);
}

/* ------------------------------------------------------------------------ */

static int group_setup(void **state)
{
    (void)state;
    return nn_backend_open(&B, &nn_backend_cpu_ref, NULL) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    nn_backend_close(&B);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_grad),
        cmocka_unit_test(test_linear_forward_values),
        cmocka_unit_test(test_conv2d_grad_stride1_pad0),
        cmocka_unit_test(test_conv2d_grad_stride1_pad1),
        cmocka_unit_test(test_conv2d_grad_stride2_pad1),
        cmocka_unit_test(test_conv2d_grad_stride2_pad0),
        cmocka_unit_test(test_conv2d_grad_mixed),
        cmocka_unit_test(test_conv1d_grad),
        cmocka_unit_test(test_conv2d_forward_values),
        cmocka_unit_test(test_maxpool2d_grad),
        cmocka_unit_test(test_maxpool1d_grad),
        cmocka_unit_test(test_max_over_length_grad),
        cmocka_unit_test(test_maxpool_values_and_ties),
        cmocka_unit_test(test_relu_grad),
        cmocka_unit_test(test_tanh_grad),
        cmocka_unit_test(test_mish_grad),
        cmocka_unit_test(test_act_values),
        cmocka_unit_test(test_dropout_grad),
        cmocka_unit_test(test_dropout_mask),
        cmocka_unit_test(test_softmax_xent_grad),
        cmocka_unit_test(test_softmax_xent_values),
        cmocka_unit_test(test_softmax_xent_bad_label),
        cmocka_unit_test(test_mse_grad),
        cmocka_unit_test(test_mse_values),
        cmocka_unit_test(test_registry),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

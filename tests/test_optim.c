/* tests/test_optim.c - the optimiser steps of the reference backend (cpu-ref)
 * against numbers worked out by hand from the formulas in backend.h (the
 * arithmetic is in the comments), and several Adam and SGD steps against an
 * independent double-precision re-implementation written from PyTorch's
 * documented algorithms (torch.optim.Adam, torch.optim.SGD). */
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
#include "rng.h"

static nn_backend B;   /* cpu-ref, opened once for the group */

/* Float results of a few float operations on values of order 1 are within a
 * few ulps (2.4e-7 near 2) of the exact decimals below. */
#define TOL 2e-6

static void assert_vec_close(const char *what, int step, const float *got,
                             const float *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - (double)want[i]) <= tol))
            fail_msg("%s, step %d, element %zu: got %.9g, want %.9g (tol %.2g)", what, step, i,
                     (double)got[i], (double)want[i], tol);
}

/* ------------------------------------------------------------------------ */
/* SGD by hand: three parameters, three steps, lr 0.1 throughout.           */

static const float P0[3] = { 1.0f, -2.0f, 0.5f };
static const float G[3][3] = {
    { 0.5f, -1.0f, 2.0f },     /* step 1 */
    { 0.25f, 0.5f, -1.0f },    /* step 2 */
    { -0.5f, 0.0f, 1.0f },     /* step 3 */
};

/* Runs three steps of h from P0 with the gradients G, checking the parameters
 * (and the velocity, when want_v is given) after each step. */
static void run_sgd(const char *what, const nn_sgd_hyper *h, const float want_p[3][3],
                    const float want_v[3][3])
{
    float p[3], v[3] = { 0, 0, 0 };
    memcpy(p, P0, sizeof p);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(B.ops->sgd_step(&B, 3, p, G[s], v, h, s + 1), 0);
        assert_vec_close(what, s + 1, p, want_p[s], 3, TOL);
        if (want_v)
            assert_vec_close(what, s + 1, v, want_v[s], 3, TOL);
    }
}

/* p -= 0.1 g:
 *   1: (1 - 0.05, -2 + 0.1, 0.5 - 0.2)        = (0.95, -1.9, 0.3)
 *   2: (0.95 - 0.025, -1.9 - 0.05, 0.3 + 0.1) = (0.925, -1.95, 0.4)
 *   3: (0.925 + 0.05, -1.95 - 0, 0.4 - 0.1)   = (0.975, -1.95, 0.3)
 * Without momentum the velocity is not touched. */
static void test_sgd_plain(void **state)
{
    (void)state;
    const nn_sgd_hyper h = { .lr = 0.1f };
    const float want[3][3] = { { 0.95f, -1.9f, 0.3f }, { 0.925f, -1.95f, 0.4f },
                               { 0.975f, -1.95f, 0.3f } };
    const float untouched[3][3] = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } };
    run_sgd("sgd plain", &h, want, untouched);
}

/* Weight decay 0.1, momentum 0: dampening (0.5) plays no part, as in
 * PyTorch, and the velocity may be NULL. g = grad + 0.1 p, p -= 0.1 g:
 *   1: g = (0.5 + 0.1, -1 - 0.2, 2 + 0.05) = (0.6, -1.2, 2.05)
 *      p = (1 - 0.06, -2 + 0.12, 0.5 - 0.205) = (0.94, -1.88, 0.295)
 *   2: g = (0.25 + 0.094, 0.5 - 0.188, -1 + 0.0295) = (0.344, 0.312, -0.9705)
 *      p = (0.94 - 0.0344, -1.88 - 0.0312, 0.295 + 0.09705) = (0.9056, -1.9112, 0.39205)
 *   3: g = (-0.5 + 0.09056, 0 - 0.19112, 1 + 0.039205) = (-0.40944, -0.19112, 1.039205)
 *      p = (0.9056 + 0.040944, -1.9112 + 0.019112, 0.39205 - 0.1039205)
 *        = (0.946544, -1.892088, 0.2881295) */
static void test_sgd_weight_decay_no_momentum(void **state)
{
    (void)state;
    const nn_sgd_hyper h = { .lr = 0.1f, .weight_decay = 0.1f, .dampening = 0.5f };
    const float want[3][3] = { { 0.94f, -1.88f, 0.295f }, { 0.9056f, -1.9112f, 0.39205f },
                               { 0.946544f, -1.892088f, 0.2881295f } };
    float p[3];
    memcpy(p, P0, sizeof p);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(B.ops->sgd_step(&B, 3, p, G[s], NULL, &h, s + 1), 0);
        assert_vec_close("sgd weight decay", s + 1, p, want[s], 3, TOL);
    }
}

/* Momentum 0.9: v = g at step 1, then v = 0.9 v + g; p -= 0.1 v:
 *   1: v = (0.5, -1, 2);                              p = (0.95, -1.9, 0.3)
 *   2: v = (0.45 + 0.25, -0.9 + 0.5, 1.8 - 1) = (0.7, -0.4, 0.8)
 *      p = (0.95 - 0.07, -1.9 + 0.04, 0.3 - 0.08) = (0.88, -1.86, 0.22)
 *   3: v = (0.63 - 0.5, -0.36 + 0, 0.72 + 1) = (0.13, -0.36, 1.72)
 *      p = (0.88 - 0.013, -1.86 + 0.036, 0.22 - 0.172) = (0.867, -1.824, 0.048) */
static void test_sgd_momentum(void **state)
{
    (void)state;
    const nn_sgd_hyper h = { .lr = 0.1f, .momentum = 0.9f };
    const float want_p[3][3] = { { 0.95f, -1.9f, 0.3f }, { 0.88f, -1.86f, 0.22f },
                                 { 0.867f, -1.824f, 0.048f } };
    const float want_v[3][3] = { { 0.5f, -1.0f, 2.0f }, { 0.7f, -0.4f, 0.8f },
                                 { 0.13f, -0.36f, 1.72f } };
    run_sgd("sgd momentum", &h, want_p, want_v);
}

/* Momentum 0.9, weight decay 0.01: g = grad + 0.01 p; v = g at step 1, then
 * v = 0.9 v + g; p -= 0.1 v
 *   1: g = (0.5 + 0.01, -1 - 0.02, 2 + 0.005) = (0.51, -1.02, 2.005) = v
 *      p = (1 - 0.051, -2 + 0.102, 0.5 - 0.2005) = (0.949, -1.898, 0.2995)
 *   2: g = (0.25 + 0.00949, 0.5 - 0.01898, -1 + 0.002995) = (0.25949, 0.48102, -0.997005)
 *      v = (0.459 + 0.25949, -0.918 + 0.48102, 1.8045 - 0.997005)
 *        = (0.71849, -0.43698, 0.807495)
 *      p = (0.949 - 0.071849, -1.898 + 0.043698, 0.2995 - 0.0807495)
 *        = (0.877151, -1.854302, 0.2187505)
 *   3: g = (-0.5 + 0.00877151, 0 - 0.01854302, 1 + 0.002187505)
 *        = (-0.49122849, -0.01854302, 1.002187505)
 *      v = (0.646641 - 0.49122849, -0.393282 - 0.01854302, 0.7267455 + 1.002187505)
 *        = (0.15541251, -0.41182502, 1.728933005)
 *      p = (0.877151 - 0.015541251, -1.854302 + 0.041182502, 0.2187505 - 0.1728933005)
 *        = (0.861609749, -1.813119498, 0.0458571995) */
static void test_sgd_momentum_weight_decay(void **state)
{
    (void)state;
    const nn_sgd_hyper h = { .lr = 0.1f, .momentum = 0.9f, .weight_decay = 0.01f };
    const float want_p[3][3] = { { 0.949f, -1.898f, 0.2995f },
                                 { 0.877151f, -1.854302f, 0.2187505f },
                                 { 0.861609749f, -1.813119498f, 0.0458571995f } };
    const float want_v[3][3] = { { 0.51f, -1.02f, 2.005f },
                                 { 0.71849f, -0.43698f, 0.807495f },
                                 { 0.15541251f, -0.41182502f, 1.728933005f } };
    run_sgd("sgd momentum + weight decay", &h, want_p, want_v);
}

/* Nesterov, momentum 0.9: v as in test_sgd_momentum; p -= 0.1 (g + 0.9 v)
 *   1: g + 0.9 v = (0.5 + 0.45, -1 - 0.9, 2 + 1.8) = (0.95, -1.9, 3.8)
 *      p = (1 - 0.095, -2 + 0.19, 0.5 - 0.38) = (0.905, -1.81, 0.12)
 *   2: g + 0.9 v = (0.25 + 0.63, 0.5 - 0.36, -1 + 0.72) = (0.88, 0.14, -0.28)
 *      p = (0.905 - 0.088, -1.81 - 0.014, 0.12 + 0.028) = (0.817, -1.824, 0.148)
 *   3: g + 0.9 v = (-0.5 + 0.117, 0 - 0.324, 1 + 1.548) = (-0.383, -0.324, 2.548)
 *      p = (0.817 + 0.0383, -1.824 + 0.0324, 0.148 - 0.2548) = (0.8553, -1.7916, -0.1068) */
static void test_sgd_nesterov(void **state)
{
    (void)state;
    const nn_sgd_hyper h = { .lr = 0.1f, .momentum = 0.9f, .nesterov = 1 };
    const float want_p[3][3] = { { 0.905f, -1.81f, 0.12f }, { 0.817f, -1.824f, 0.148f },
                                 { 0.8553f, -1.7916f, -0.1068f } };
    const float want_v[3][3] = { { 0.5f, -1.0f, 2.0f }, { 0.7f, -0.4f, 0.8f },
                                 { 0.13f, -0.36f, 1.72f } };
    run_sgd("sgd nesterov", &h, want_p, want_v);
}

/* Momentum 0.9, dampening 0.5, as PyTorch: v = g at step 1 (undamped), then
 * v = 0.9 v + 0.5 g; p -= 0.1 v
 *   1: v = (0.5, -1, 2);                               p = (0.95, -1.9, 0.3)
 *   2: v = (0.45 + 0.125, -0.9 + 0.25, 1.8 - 0.5) = (0.575, -0.65, 1.3)
 *      p = (0.95 - 0.0575, -1.9 + 0.065, 0.3 - 0.13) = (0.8925, -1.835, 0.17)
 *   3: v = (0.5175 - 0.25, -0.585 + 0, 1.17 + 0.5) = (0.2675, -0.585, 1.67)
 *      p = (0.8925 - 0.02675, -1.835 + 0.0585, 0.17 - 0.167) = (0.86575, -1.7765, 0.003) */
static void test_sgd_dampening(void **state)
{
    (void)state;
    const nn_sgd_hyper h = { .lr = 0.1f, .momentum = 0.9f, .dampening = 0.5f };
    const float want_p[3][3] = { { 0.95f, -1.9f, 0.3f }, { 0.8925f, -1.835f, 0.17f },
                                 { 0.86575f, -1.7765f, 0.003f } };
    const float want_v[3][3] = { { 0.5f, -1.0f, 2.0f }, { 0.575f, -0.65f, 1.3f },
                                 { 0.2675f, -0.585f, 1.67f } };
    run_sgd("sgd dampening", &h, want_p, want_v);
}

/* Step 1 creates the velocity as g, whatever the buffer held before (PyTorch
 * has no buffer yet): with a stale (NaN, 5, -5) the result is step 1 of
 * test_sgd_dampening. */
static void test_sgd_first_step_ignores_velocity(void **state)
{
    (void)state;
    const nn_sgd_hyper h = { .lr = 0.1f, .momentum = 0.9f, .dampening = 0.5f };
    const float want_p[3] = { 0.95f, -1.9f, 0.3f }, want_v[3] = { 0.5f, -1.0f, 2.0f };
    float p[3], v[3] = { NAN, 5.0f, -5.0f };
    memcpy(p, P0, sizeof p);
    assert_int_equal(B.ops->sgd_step(&B, 3, p, G[0], v, &h, 1), 0);
    assert_vec_close("sgd stale velocity", 1, p, want_p, 3, TOL);
    assert_vec_close("sgd stale velocity", 1, v, want_v, 3, TOL);
}

/* t counts from 1, as for Adam; a bad t changes nothing, with or without
 * momentum. */
static void test_sgd_bad_step(void **state)
{
    (void)state;
    const nn_sgd_hyper with_mom = { .lr = 0.1f, .momentum = 0.9f, .dampening = 0.5f };
    const nn_sgd_hyper plain = { .lr = 0.1f };
    float p[1] = { 1 }, g[1] = { 1 }, v[1] = { 0.5f };
    B.last_error[0] = '\0';
    assert_int_equal(B.ops->sgd_step(&B, 1, p, g, v, &with_mom, 0), -1);
    assert_non_null(strstr(B.last_error, "sgd_step"));
    assert_int_equal(B.ops->sgd_step(&B, 1, p, g, v, &with_mom, -3), -1);
    assert_int_equal(B.ops->sgd_step(&B, 1, p, g, NULL, &plain, 0), -1);
    assert_true(p[0] == 1 && v[0] == 0.5f);
}

/* ------------------------------------------------------------------------ */
/* Adam by hand: two parameters, three steps, lr 0.1, betas (0.9, 0.999),    */
/* eps 1e-8. p0 = (1, -0.5); gradients (0.2, -0.4), (0.1, 0.4), (-0.3, 0.4). */

static const float AP0[2] = { 1.0f, -0.5f };
static const float AG[3][2] = { { 0.2f, -0.4f }, { 0.1f, 0.4f }, { -0.3f, 0.4f } };

static void run_adam(const char *what, const nn_adam_hyper *h, const float want_p[3][2],
                     const float want_m[3][2], const float want_v[3][2])
{
    float p[2], m[2] = { 0, 0 }, v[2] = { 0, 0 };
    memcpy(p, AP0, sizeof p);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(B.ops->adam_step(&B, 2, p, AG[s], m, v, h, s + 1), 0);
        assert_vec_close(what, s + 1, p, want_p[s], 2, TOL);
        assert_vec_close(what, s + 1, m, want_m[s], 2, 5e-8);
        /* v is of order 1e-4: compare relatively. The float 0.999f is
         * 0.99900001287, so 1 - beta2 is 0.00099998713, 1.3e-5 below the
         * decimal 0.001 used above (the bias correction uses the same beta2,
         * so the step itself is unaffected). */
        for (int i = 0; i < 2; i++)
            if (!(fabs(v[i] - want_v[s][i]) <= 3e-5 * want_v[s][i]))
                fail_msg("%s, step %d: v[%d] = %.9g, want %.9g", what, s + 1, i, (double)v[i],
                         (double)want_v[s][i]);
    }
}

/* m = 0.9 m + 0.1 g; v = 0.999 v + 0.001 g^2;
 * p -= 0.1 mhat / (sqrt(vhat) + 1e-8), mhat = m/(1 - 0.9^t), vhat = v/(1 - 0.999^t)
 * t = 1: 1 - 0.9 = 0.1, 1 - 0.999 = 0.001, so mhat = g and sqrt(vhat) = |g|:
 *   p0: m = 0.02, v = 4e-5;    p = 1 - 0.1 * 0.2/(0.2 + 1e-8)      = 0.900000005
 *   p1: m = -0.04, v = 1.6e-4; p = -0.5 + 0.1 * 0.4/(0.4 + 1e-8)   = -0.4000000025
 * t = 2: 1 - 0.81 = 0.19, 1 - 0.998001 = 0.001999
 *   p0: m = 0.018 + 0.01 = 0.028; v = 3.996e-5 + 1e-5 = 4.996e-5
 *       mhat = 0.028/0.19 = 0.147368421, sqrt(vhat) = sqrt(0.0249924962) = 0.158090152
 *       p = 0.900000005 - 0.1 * 0.147368421/0.158090152 = 0.900000005 - 0.093217958
 *         = 0.806782047
 *   p1: m = -0.036 + 0.04 = 0.004; v = 1.5984e-4 + 1.6e-4 = 3.1984e-4
 *       mhat = 0.004/0.19 = 0.0210526316, sqrt(vhat) = sqrt(0.16) = 0.4 (|g| stayed 0.4)
 *       p = -0.4000000025 - 0.1 * 0.0210526316/0.4 = -0.4000000025 - 0.0052631578
 *         = -0.4052631603
 * t = 3: 1 - 0.729 = 0.271, 1 - 0.997002999 = 0.002997001
 *   p0: m = 0.0252 - 0.03 = -0.0048; v = 4.991004e-5 + 9e-5 = 1.3991004e-4
 *       mhat = -0.0048/0.271 = -0.0177121771, sqrt(vhat) = sqrt(0.0466834) = 0.216063296
 *       p = 0.806782047 + 0.1 * 0.0177121771/0.216063296 = 0.806782047 + 0.0081976794
 *         = 0.8149797264
 *   p1: m = 0.0036 + 0.04 = 0.0436; v = 3.1952016e-4 + 1.6e-4 = 4.7952016e-4
 *       mhat = 0.0436/0.271 = 0.160885609, sqrt(vhat) = 0.4
 *       p = -0.4052631603 - 0.1 * 0.160885609/0.4 = -0.4052631603 - 0.0402214012
 *         = -0.4454845615 */
static void test_adam(void **state)
{
    (void)state;
    const nn_adam_hyper h = { .lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    const float want_p[3][2] = { { 0.900000005f, -0.4000000025f },
                                 { 0.806782047f, -0.4052631603f },
                                 { 0.8149797264f, -0.4454845615f } };
    const float want_m[3][2] = { { 0.02f, -0.04f }, { 0.028f, 0.004f }, { -0.0048f, 0.0436f } };
    const float want_v[3][2] = { { 4e-5f, 1.6e-4f }, { 4.996e-5f, 3.1984e-4f },
                                 { 1.3991004e-4f, 4.7952016e-4f } };
    run_adam("adam", &h, want_p, want_m, want_v);
}

/* Weight decay 0.5 (L2, into the gradient): g = grad + 0.5 p, then as above.
 * t = 1: g = (0.2 + 0.5, -0.4 - 0.25) = (0.7, -0.65); mhat = g, sqrt(vhat) = |g|
 *   m = (0.07, -0.065), v = (4.9e-4, 4.225e-4)
 *   p = (1 - 0.1 * 0.7/(0.7 + 1e-8), -0.5 + 0.1 * 0.65/(0.65 + 1e-8))
 *     = (0.9000000014, -0.4000000015)
 * t = 2: g = (0.1 + 0.4500000007, 0.4 - 0.2000000008) = (0.5500000007, 0.1999999992)
 *   m = (0.063 + 0.0550000001, -0.0585 + 0.0199999999) = (0.1180000001, -0.0385000001)
 *   v = (4.8951e-4 + 3.025e-4, 4.220775e-4 + 4.0e-5) = (7.9201e-4, 4.620775e-4)
 *   mhat = m/0.19 = (0.6210526320, -0.2026315794)
 *   sqrt(vhat) = (sqrt(7.9201e-4/0.001999), sqrt(4.620775e-4/0.001999))
 *              = (sqrt(0.39620310), sqrt(0.23115433)) = (0.6294466633, 0.4807851152)
 *   p = (0.9000000014 - 0.0986664412, -0.4000000015 + 0.0421459751)
 *     = (0.8013335602, -0.3578540264)
 * t = 3: g = (-0.3 + 0.4006667801, 0.4 - 0.1789270132) = (0.1006667801, 0.2210729868)
 *   m = (0.1062000001 + 0.0100666780, -0.0346500001 + 0.0221072987)
 *     = (0.1162666781, -0.0125427014)
 *   v = (7.9121799e-4 + 1.013380e-5, 4.6161542e-4 + 4.887327e-5)
 *     = (8.013518e-4, 5.104887e-4)
 *   mhat = m/0.271 = (0.4290283324, -0.0462830310)
 *   sqrt(vhat) = (sqrt(8.013518e-4/0.002997001), sqrt(5.104887e-4/0.002997001))
 *              = (0.5170924088, 0.4127143955)
 *   p = (0.8013335602 - 0.0829693720, -0.3578540264 + 0.0112142998)
 *     = (0.7183641882, -0.3466397266) */
static void test_adam_weight_decay(void **state)
{
    (void)state;
    const nn_adam_hyper h = { .lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                              .weight_decay = 0.5f };
    const float want_p[3][2] = { { 0.9000000014f, -0.4000000015f },
                                 { 0.8013335602f, -0.3578540264f },
                                 { 0.7183641882f, -0.3466397266f } };
    const float want_m[3][2] = { { 0.07f, -0.065f }, { 0.1180000001f, -0.0385000001f },
                                 { 0.1162666781f, -0.0125427014f } };
    const float want_v[3][2] = { { 4.9e-4f, 4.225e-4f }, { 7.9201e-4f, 4.620775e-4f },
                                 { 8.013518e-4f, 5.104887e-4f } };
    run_adam("adam weight decay", &h, want_p, want_m, want_v);
}

static void test_adam_bad_step(void **state)
{
    (void)state;
    const nn_adam_hyper h = { .lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    float p[1] = { 1 }, g[1] = { 1 }, m[1] = { 0 }, v[1] = { 0 };
    B.last_error[0] = '\0';
    /* t counts from 1: at t = 0 the bias corrections would divide by zero */
    assert_int_equal(B.ops->adam_step(&B, 1, p, g, m, v, &h, 0), -1);
    assert_non_null(strstr(B.last_error, "adam"));
    assert_true(p[0] == 1 && m[0] == 0 && v[0] == 0);
}

/* ------------------------------------------------------------------------ */
/* Many steps against double-precision re-implementations of PyTorch's      */
/* documented algorithms, written here independently of cpu_ref.c.          */

/* torch.optim.Adam, as its documentation states it (amsgrad off):
 *   g = grad + wd * p
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   mhat = m / (1 - b1^t);  vhat = v / (1 - b2^t)
 *   p = p - lr mhat / (sqrt(vhat) + eps)
 * b1^t and b2^t are kept as running products rather than pow(). */
typedef struct adam_ref {
    double lr, b1, b2, eps, wd;
    double b1t, b2t;   /* b1^t, b2^t */
} adam_ref;

static void adam_ref_step(adam_ref *a, size_t n, double *p, const float *grad, double *m,
                          double *v)
{
    a->b1t *= a->b1;
    a->b2t *= a->b2;
    for (size_t i = 0; i < n; i++) {
        double g = (double)grad[i] + a->wd * p[i];
        m[i] = a->b1 * m[i] + (1.0 - a->b1) * g;
        v[i] = a->b2 * v[i] + (1.0 - a->b2) * g * g;
        double mhat = m[i] / (1.0 - a->b1t);
        double vhat = v[i] / (1.0 - a->b2t);
        p[i] -= a->lr * mhat / (sqrt(vhat) + a->eps);
    }
}

/* gradients of parameter i are drawn from (-s, s), s = 10^-(i mod 5) */
static float grad_scale(int i)
{
    static const float s[5] = { 1.0f, 0.1f, 0.01f, 1e-3f, 1e-4f };
    return s[i % 5];
}

static void check_adam_long(const char *what, const nn_adam_hyper *h, int steps, uint64_t seed)
{
    enum { N = 37 };
    nn_rng rng;
    nn_rng_seed(&rng, seed);
    float p[N], g[N], m[N] = { 0 }, v[N] = { 0 };
    double pd[N], md[N] = { 0 }, vd[N] = { 0 };
    /* the float hyper-parameters, widened, so both sides use the same values */
    adam_ref a = { h->lr, h->beta1, h->beta2, h->eps, h->weight_decay, 1.0, 1.0 };
    for (int i = 0; i < N; i++) {
        p[i] = nn_rng_range(&rng, -1, 1);
        pd[i] = p[i];
    }
    double worst = 0.0;
    int worst_i = 0, worst_t = 0;
    for (int t = 1; t <= steps; t++) {
        /* gradients of very different sizes per parameter, so that both the
         * m/sqrt(v) ratio and eps are exercised */
        for (int i = 0; i < N; i++)
            g[i] = nn_rng_range(&rng, -1, 1) * grad_scale(i);
        assert_int_equal(B.ops->adam_step(&B, N, p, g, m, v, h, t), 0);
        adam_ref_step(&a, N, pd, g, md, vd);
        for (int i = 0; i < N; i++) {
            /* relative to the distance travelled, plus float rounding of p */
            double err = fabs(p[i] - pd[i]) / (1e-6 + 1e-5 * fabs(pd[i]));
            if (!(err <= worst)) {
                worst = err;
                worst_i = i;
                worst_t = t;
            }
        }
    }
    if (!(worst <= 1.0))
        fail_msg("%s: parameter %d at step %d is off by %.3g of the tolerance", what, worst_i,
                 worst_t, worst);
    /* m is a running mean of gradients of size s + wd |p| and may be far
     * smaller (they cancel), so its float rounding is measured against that
     * size; v is a mean of squares and has no cancellation. */
    for (int i = 0; i < N; i++) {
        double gsize = grad_scale(i) + h->weight_decay * fabs(pd[i]);
        if (!(fabs(m[i] - md[i]) <= 1e-6 * gsize) ||
            !(fabs(v[i] - vd[i]) <= 1e-5 * vd[i]))
            fail_msg("%s: moments of parameter %d: m %.9g vs %.9g, v %.9g vs %.9g", what, i,
                     (double)m[i], md[i], (double)v[i], vd[i]);
    }
}

static void test_adam_matches_double_reference(void **state)
{
    (void)state;
    /* Keras's defaults for the mnist presets, with decay */
    const nn_adam_hyper h1 = { .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-7f,
                               .weight_decay = 0.01f };
    /* PyTorch's defaults, long enough for the bias corrections to fade */
    const nn_adam_hyper h2 = { .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    /* large lr, short betas, large eps */
    const nn_adam_hyper h3 = { .lr = 0.05f, .beta1 = 0.8f, .beta2 = 0.95f, .eps = 1e-3f,
                               .weight_decay = 0.1f };
    check_adam_long("adam keras defaults + decay", &h1, 50, 81);
    check_adam_long("adam torch defaults", &h2, 300, 82);
    check_adam_long("adam large lr", &h3, 40, 83);
}

/* torch.optim.SGD, as its documentation states it:
 *   g = grad + wd * p
 *   with momentum: buf = g at the first step (no dampening), later
 *                  buf = momentum buf + (1 - dampening) g;
 *                  g = nesterov ? g + momentum buf : buf
 *   p = p - lr g
 * first plays the part of PyTorch's "buffer is None". */
static void sgd_ref_step(const nn_sgd_hyper *h, size_t n, double *p, const float *grad,
                         double *buf, int first)
{
    for (size_t i = 0; i < n; i++) {
        double g = (double)grad[i] + (double)h->weight_decay * p[i];
        if (h->momentum != 0.0f) {
            if (first)
                buf[i] = g;
            else
                buf[i] = (double)h->momentum * buf[i] + (1.0 - (double)h->dampening) * g;
            g = h->nesterov ? g + (double)h->momentum * buf[i] : buf[i];
        }
        p[i] -= (double)h->lr * g;
    }
}

static void test_sgd_matches_double_reference(void **state)
{
    (void)state;
    enum { N = 29, STEPS = 60 };
    const nn_sgd_hyper hs[] = {
        { .lr = 0.01f, .momentum = 0.9f },
        { .lr = 0.01f, .momentum = 0.9f, .weight_decay = 5e-4f, .nesterov = 1 },
        { .lr = 0.05f, .momentum = 0.5f, .dampening = 0.3f, .weight_decay = 0.01f },
        { .lr = 0.1f, .weight_decay = 0.01f },
    };
    for (size_t k = 0; k < sizeof hs / sizeof hs[0]; k++) {
        nn_rng rng;
        nn_rng_seed(&rng, 90 + k);
        float p[N], g[N], vel[N] = { 0 };
        double pd[N], bufd[N] = { 0 };
        for (int i = 0; i < N; i++)
            pd[i] = p[i] = nn_rng_range(&rng, -1, 1);
        for (int t = 1; t <= STEPS; t++) {
            for (int i = 0; i < N; i++)
                g[i] = nn_rng_range(&rng, -1, 1);
            assert_int_equal(B.ops->sgd_step(&B, N, p, g, vel, &hs[k], t), 0);
            sgd_ref_step(&hs[k], N, pd, g, bufd, t == 1);
        }
        for (int i = 0; i < N; i++)
            if (!(fabs(p[i] - pd[i]) <= 1e-5 + 1e-5 * fabs(pd[i])))
                fail_msg("sgd case %zu, parameter %d after %d steps: %.9g vs %.9g", k, i,
                         STEPS, (double)p[i], pd[i]);
    }
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
        cmocka_unit_test(test_sgd_plain),
        cmocka_unit_test(test_sgd_weight_decay_no_momentum),
        cmocka_unit_test(test_sgd_momentum),
        cmocka_unit_test(test_sgd_momentum_weight_decay),
        cmocka_unit_test(test_sgd_nesterov),
        cmocka_unit_test(test_sgd_dampening),
        cmocka_unit_test(test_sgd_first_step_ignores_velocity),
        cmocka_unit_test(test_sgd_bad_step),
        cmocka_unit_test(test_adam),
        cmocka_unit_test(test_adam_weight_decay),
        cmocka_unit_test(test_adam_bad_step),
        cmocka_unit_test(test_adam_matches_double_reference),
        cmocka_unit_test(test_sgd_matches_double_reference),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

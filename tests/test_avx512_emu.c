/* tests/test_avx512_emu.c - the AVX-512 kernels (backends/cpu/cpu_avx512_kernels.inc)
 * compiled against SIMDe's portable _mm512_* intrinsics and run against
 * cpu-ref, so that a machine without AVX-512 (this one, CI) checks their
 * logic: lanes, masks, tails, blocking. It does not check the silicon: the
 * parity suite on a real AVX-512 CPU does that (tests/parity-avx512.sh).
 *
 * The shapes: the presets' (mnist-mlp-128's 784 x 128 at batch 4, the
 * Jacobian's 20-wide input gradient, LeNet's two convolutions) and
 * remainders around the 16-float register (1, 15, 16, 17, 33 ...). The
 * optimisers and the elementwise passes must give cpu-ref's bits; the
 * products the parity suite's tolerances for the cpu backend (SIMDe's
 * _mm512_fmadd_ps, without FMA in this build, rounds twice); and, through
 * tests/test_avx512_emu_fma.c (real FMAs), the twins that are one FMA chain
 * per output the bits of the kernel the backend runs. Buffers are
 * exact-size, so an unmasked read or write past a tail is an ASan error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "avx512_emu.h"
#include "cpu/cpu_conv_direct.h"
#include "cpu_ref/cpu_ref.h"
#include "parity_util.h"

/* The parity suite's tolerances for the cpu backend (tests/parity_suite.c). */
static const parity_tol ELEMENTWISE = { 1e-4, 1e-4 }, REDUCTION = { 1e-3, 1e-3 };

static nn_backend REF;
static uint64_t SEED;

static int group_setup(void **state)
{
    (void)state;
    SEED = parity_seed_init(0x512e5u, "test_avx512_emu");
    return nn_backend_open(&REF, &nn_backend_cpu_ref, NULL) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    nn_backend_close(&REF);
    return 0;
}

static const size_t ODD_SIZES[] = { 1, 7, 15, 16, 17, 31, 33, 100, 16389 };
#define N_ODD (sizeof ODD_SIZES / sizeof ODD_SIZES[0])

static void assert_same_bits(const char *what, size_t n, const float *ref, const float *got)
{
    if (memcmp(ref, got, n * sizeof *ref) != 0) {
        for (size_t i = 0; i < n; i++)
            if (memcmp(&ref[i], &got[i], sizeof *ref) != 0)
                print_error("%s n=%zu: element %zu is %.9g, cpu-ref's %.9g\n", what, n, i,
                            (double)got[i], (double)ref[i]);
        fail();
    }
}

/* ---- optimisers: cpu-ref's bits ---------------------------------------------------------- */

static void test_adam(void **state)
{
    (void)state;
    const nn_adam_hyper h = { .lr = 0.01f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-8f,
                              .weight_decay = 1e-2f };
    for (size_t s = 0; s < N_ODD; s++) {
        size_t n = ODD_SIZES[s];
        nn_rng r;
        nn_rng_seed(&r, case_seed(SEED, 1, (int)s));
        float *ref[4], *got[4];                 /* param, grad, m, v */
        for (int k = 0; k < 4; k++) {
            ref[k] = fbuf(n);
            fill(&r, ref[k], n, k == 3 ? 0.0f : -1.0f, 1.0f);
            got[k] = copy_of(ref[k], n);
        }
        for (long t = 1; t <= 3; t++) {
            expect_ok(&REF, nn_ref_adam_step(&REF, n, ref[0], ref[1], ref[2], ref[3], &h, t),
                      "adam_step");
            const nn_adam_consts c = nn_cpu_adam_consts(&h, t);
            nn_avx512_adam(0, n, got[0], got[1], got[2], got[3], &c);
        }
        for (int k = 0; k < 4; k++) {
            assert_same_bits("adam", n, ref[k], got[k]);
            free(ref[k]);
            free(got[k]);
        }
    }
}

/* Each of sgd_range's cases: no momentum, the first step (plain and
 * Nesterov), later steps (plain and Nesterov), with dampening. */
static void test_sgd(void **state)
{
    (void)state;
    const nn_sgd_hyper cases[] = {
        { .lr = 0.1f, .weight_decay = 1e-3f },
        { .lr = 0.05f, .momentum = 0.9f, .dampening = 0.1f, .weight_decay = 1e-2f },
        { .lr = 0.05f, .momentum = 0.9f, .weight_decay = 1e-2f, .nesterov = 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t s = 0; s < N_ODD; s++) {
            size_t n = ODD_SIZES[s];
            nn_rng r;
            nn_rng_seed(&r, case_seed(SEED, 2, (int)(c * N_ODD + s)));
            float *p = fbuf(n), *g = fbuf(n), *v = fbuf(n);
            fill(&r, p, n, -1, 1);
            fill(&r, g, n, -1, 1);
            fill(&r, v, n, -1, 1);
            float *p2 = copy_of(p, n), *v2 = copy_of(v, n);
            for (long t = 1; t <= 3; t++) {
                expect_ok(&REF, nn_ref_sgd_step(&REF, n, p, g, v, &cases[c], t), "sgd_step");
                const nn_sgd_consts k = nn_cpu_sgd_consts(&cases[c], t);
                nn_avx512_sgd(0, n, p2, g, v2, &k);
            }
            assert_same_bits("sgd param", n, p, p2);
            assert_same_bits("sgd velocity", n, v, v2);
            free(p); free(g); free(v); free(p2); free(v2);
        }
}

/* ---- elementwise passes: cpu-ref's bits, NaN and signed zeros included ------------------ */

static void fill_act_edges(nn_rng *r, float *x, size_t n)
{
    fill_act_inputs(r, x, n);
    static const float edges[] = { 0.0f, -0.0f, NAN, -NAN, INFINITY, -INFINITY, 1e-40f, -1e-40f };
    for (size_t i = 0; i < n && i < sizeof edges / sizeof edges[0]; i++)
        x[(i * 7) % n] = edges[i];
}

static void test_elementwise(void **state)
{
    (void)state;
    for (size_t s = 0; s < N_ODD; s++) {
        size_t n = ODD_SIZES[s];
        nn_rng r;
        nn_rng_seed(&r, case_seed(SEED, 3, (int)s));
        float *x = fbuf(n), *y = fbuf(n), *dy = fbuf(n), *ref = fbuf(n), *got = fbuf(n);
        fill_act_edges(&r, x, n);
        fill(&r, dy, n, -1, 1);
        expect_ok(&REF, nn_ref_act_forward(&REF, NN_ACT_RELU, n, x, ref), "relu forward");
        nn_avx512_relu_fwd(0, n, x, got);
        assert_same_bits("relu forward", n, ref, got);
        expect_ok(&REF, nn_ref_act_backward(&REF, NN_ACT_RELU, n, x, ref, dy, ref), "relu backward");
        nn_avx512_relu_bwd(0, n, x, dy, got);
        assert_same_bits("relu backward", n, ref, got);
        expect_ok(&REF, nn_ref_act_forward(&REF, NN_ACT_TANH, n, x, y), "tanh forward");
        expect_ok(&REF, nn_ref_act_backward(&REF, NN_ACT_TANH, n, x, y, dy, ref), "tanh backward");
        nn_avx512_tanh_bwd(0, n, y, dy, got);
        assert_same_bits("tanh backward", n, ref, got);
        free(x); free(y); free(dy); free(ref); free(got);
    }
}

/* ---- the linear kernels ---------------------------------------------------------------- */

/* The small-batch forward and weight gradient, at batches 1..8, against
 * cpu-ref's linear_forward and linear_backward, rows [lo, hi) of a split. */
static void small_case(int n, int in, int out, uint64_t seed)
{
    nn_rng r;
    nn_rng_seed(&r, seed);
    size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
    float *x = fbuf(nx), *w = fbuf(nw), *bias = fbuf((size_t)out), *dy = fbuf(ny);
    float *y_ref = fbuf(ny), *y = fbuf(ny), *dw_ref = fbuf(nw), *dw = fbuf(nw);
    fill(&r, x, nx, -1, 1);
    fill(&r, w, nw, -1, 1);
    fill(&r, bias, (size_t)out, -1, 1);
    fill(&r, dy, ny, -1, 1);
    expect_ok(&REF, nn_ref_linear_forward(&REF, n, in, out, x, w, bias, y_ref), "linear_forward");
    expect_ok(&REF, nn_ref_linear_backward(&REF, n, in, out, x, w, dy, NULL, dw_ref, NULL),
              "linear_backward");
    int mid = out / 2;          /* two calls, as two threads' shares */
    nn_avx512_small_fwd_rows(n, in, out, x, w, bias, y, 0, mid);
    nn_avx512_small_fwd_rows(n, in, out, x, w, bias, y, mid, out);
    nn_avx512_small_dw_rows(n, in, out, dy, x, dw, 0, mid);
    nn_avx512_small_dw_rows(n, in, out, dy, x, dw, mid, out);
    char shape[64];
    snprintf(shape, sizeof shape, "n=%d in=%d out=%d", n, in, out);
    expect_close("small forward y", shape, seed, y_ref, y, ny, ELEMENTWISE);
    expect_close("small dw", shape, seed, dw_ref, dw, nw, REDUCTION);
    free(x); free(w); free(bias); free(dy); free(y_ref); free(y); free(dw_ref); free(dw);
}

static void test_small_linear(void **state)
{
    (void)state;
    static const int ins[] = { 1, 15, 16, 17, 33, 100 };
    int k = 0;
    for (int n = 1; n <= NN_AVX512_SMALL_MAX_N; n++)
        for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++)
            small_case(n, ins[i], 1 + (k % 13), case_seed(SEED, 4, k)), k++;
    small_case(4, 784, 128, case_seed(SEED, 4, k++));       /* mnist-mlp-128 at batch 4 */
    small_case(4, 128, 10, case_seed(SEED, 4, k++));
}

/* Adam fused into the weight gradient (cpu_linear_adam.c's AVX-512 rows and
 * bias) against the two kernels it fuses, run apart: the same bits, rows
 * split in two as two threads' shares. */
static void dw_adam_case(int n, int in, int out, uint64_t seed)
{
    nn_rng r;
    nn_rng_seed(&r, seed);
    const size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
    const size_t block = nw + (size_t)out;      /* weights, then bias */
    float *x = fbuf(nx), *dy = fbuf(ny), *g = fbuf(block);
    float *p[2], *m[2], *v[2];
    for (int k = 0; k < 2; k++)
        p[k] = fbuf(block), m[k] = fbuf(block), v[k] = fbuf(block);
    fill(&r, x, nx, -1, 1);
    fill(&r, dy, ny, -1, 1);
    fill(&r, p[0], block, -1, 1);
    fill(&r, m[0], block, -0.1, 0.1);
    fill(&r, v[0], block, 0, 0.01);
    memcpy(p[1], p[0], block * sizeof *p[0]);
    memcpy(m[1], m[0], block * sizeof *m[0]);
    memcpy(v[1], v[0], block * sizeof *v[0]);
    const nn_adam_hyper h = { 0.01f, 0.9f, 0.999f, 1e-8f, 0.01f };
    const nn_adam_consts c = nn_cpu_adam_consts(&h, 3);
    int mid = out / 2;
    /* apart: the gradient into memory (the bias's as column sums), then Adam */
    nn_avx512_small_dw_rows(n, in, out, dy, x, g, 0, out);
    for (int o = 0; o < out; o++) {
        g[nw + (size_t)o] = 0.0f;
        for (int k = 0; k < n; k++)
            g[nw + (size_t)o] += dy[(size_t)k * (size_t)out + (size_t)o];
    }
    nn_avx512_adam(0, block, p[0], g, m[0], v[0], &c);
    /* fused */
    nn_avx512_small_dw_adam_rows(n, in, out, dy, x, p[1], m[1], v[1], &c, 0, mid);
    nn_avx512_small_dw_adam_rows(n, in, out, dy, x, p[1], m[1], v[1], &c, mid, out);
    nn_avx512_bias_adam(n, out, dy, p[1] + nw, m[1] + nw, v[1] + nw, &c, 0, out);
    assert_same_bits("fused Adam: parameters", block, p[0], p[1]);
    assert_same_bits("fused Adam: m", block, m[0], m[1]);
    assert_same_bits("fused Adam: v", block, v[0], v[1]);
    free(x); free(dy); free(g);
    for (int k = 0; k < 2; k++)
        free(p[k]), free(m[k]), free(v[k]);
}

static void test_small_dw_adam(void **state)
{
    (void)state;
    static const int ins[] = { 1, 15, 16, 17, 37 };
    int k = 0;
    for (int n = 1; n <= NN_AVX512_SMALL_MAX_N; n++)
        for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++)
            dw_adam_case(n, ins[i], 1 + (k % 19), case_seed(SEED, 8, k)), k++;
    dw_adam_case(4, 784, 128, case_seed(SEED, 8, k++));     /* mnist-mlp-128 at batch 4 */
}

/* An input-gradient kernel run over the whole of dx (n, in). */
typedef void (*dx_kernel)(int n, int in, int out, const float *dy, const float *w, float *dx);

/* dx = dy . w by `kernel` against cpu-ref's linear_backward, random data. */
static void dx_against_ref(const char *what, dx_kernel kernel, int n, int in, int out,
                           uint64_t seed, parity_tol tol)
{
    nn_rng r;
    nn_rng_seed(&r, seed);
    size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
    float *x = fbuf(nx), *w = fbuf(nw), *dy = fbuf(ny), *ref = fbuf(nx), *got = fbuf(nx);
    fill(&r, x, nx, -1, 1);
    fill(&r, w, nw, -1, 1);
    fill(&r, dy, ny, -1, 1);
    expect_ok(&REF, nn_ref_linear_backward(&REF, n, in, out, x, w, dy, ref, NULL, NULL),
              "linear_backward");
    kernel(n, in, out, dy, w, got);
    char shape[64];
    snprintf(shape, sizeof shape, "n=%d in=%d out=%d", n, in, out);
    expect_close(what, shape, seed, ref, got, nx, tol);
    free(x); free(w); free(dy); free(ref); free(got);
}

/* The small-batch kernel's columns in two calls, as two threads' shares (a
 * split at a multiple of 64, as cpu_linear.c's). */
static void small_dx_in_two(int n, int in, int out, const float *dy, const float *w, float *dx)
{
    int mid = in > 64 ? 64 * (in / 128) : 0;
    nn_avx512_small_dx_cols(n, in, out, dy, w, dx, 0, mid);
    nn_avx512_small_dx_cols(n, in, out, dy, w, dx, mid, in);
}

static void narrow_dx_all(int n, int in, int out, const float *dy, const float *w, float *dx)
{
    nn_avx512_narrow_dx(dy, out, w, dx, in, 0, (size_t)n);
}

/* The small-batch input gradient at batches 1..8 (row blocks of 4 and the
 * rest), widths around its 16-float registers and 64-column tiles. */
static void test_small_dx(void **state)
{
    (void)state;
    static const int ins[] = { 1, 15, 16, 17, 33, 63, 64, 65, 100, 129 };
    int k = 0;
    for (int n = 1; n <= NN_AVX512_SMALL_MAX_N; n++)
        for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++, k++)
            dx_against_ref("small dx", small_dx_in_two, n, ins[i], 1 + (k % 17),
                           case_seed(SEED, 9, k), REDUCTION);
    /* LeNet-5's first two linear layers, mnist-mlp-1000's hidden one */
    dx_against_ref("small dx", small_dx_in_two, 4, 400, 120, case_seed(SEED, 9, k++), REDUCTION);
    dx_against_ref("small dx", small_dx_in_two, 4, 120, 84, case_seed(SEED, 9, k++), REDUCTION);
    dx_against_ref("small dx", small_dx_in_two, 4, 1000, 1000, case_seed(SEED, 9, k++), REDUCTION);
}

/* The narrow input gradient at every width it takes (4 .. 24), with row
 * counts off its block of 4. */
static void test_narrow_dx(void **state)
{
    (void)state;
    static const int ns[] = { 1, 3, 4, 5, 9 }, outs[] = { 1, 7, 400 };
    int k = 0;
    for (int in = 4; in <= 24; in += 4)
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
            for (size_t b = 0; b < sizeof outs / sizeof outs[0]; b++, k++)
                dx_against_ref("narrow dx", narrow_dx_all, ns[a], in, outs[b],
                               case_seed(SEED, 5, k), ELEMENTWISE);
}

/* ---- the direct convolution ------------------------------------------------------------ */

/* The AVX-512 taps and weight-gradient kernels in the backend's wide layout
 * (cpu_conv_direct.c's tables, padding, widening and stores), as
 * cpu_conv_direct_run.c runs them on one thread: the forward in two shares
 * of rows, the weight gradient's sweeps in blocks of 256 positions. */
typedef struct conv_bufs {
    dconv_dims d;
    int *offs, *offs_t;
    float *w_t, *xp, *yw, *dyp, *dxp, *acc;
} conv_bufs;

static void conv_bufs_open(conv_bufs *c, const nn_conv_geom *g, const float *w)
{
    nn_direct_conv_dims(g, &c->d);
    const dconv_dims *d = &c->d;
    c->offs = malloc(d->K * sizeof *c->offs);
    c->offs_t = malloc(d->Kt * sizeof *c->offs_t);
    assert_true(c->offs && c->offs_t);
    c->w_t = fbuf((size_t)g->c_in * d->Kt);
    c->xp = fbuf(d->xp_floats);
    c->yw = fbuf(d->yw_floats);
    c->dyp = fbuf(d->dyp_floats);
    c->dxp = fbuf(d->dxp_floats);
    c->acc = fbuf(nn_direct_conv_wgrad_floats(g, d));
    memset(c->acc, 0, nn_direct_conv_wgrad_floats(g, d) * sizeof *c->acc);
    nn_direct_conv_tables(g, d, w, c->offs, c->offs_t, c->w_t);
}

static void conv_bufs_close(conv_bufs *c)
{
    free(c->offs); free(c->offs_t); free(c->w_t); free(c->xp); free(c->yw); free(c->dyp);
    free(c->dxp); free(c->acc);
}

/* One sample's weight-gradient sweeps into c->acc (wgrad_positions). */
static void conv_wgrad_sample(const nn_conv_geom *g, conv_bufs *c)
{
    const dconv_dims *d = &c->d;
    const size_t K = d->K, ld_acc = ((K + 1) & ~(size_t)1) * 8;
    const float *dy0 = c->dyp + d->margin;
    for (size_t q0 = 0; q0 < d->lw_pad; q0 += 256) {
        size_t q1 = q0 + 256 < d->lw_pad ? q0 + 256 : d->lw_pad;
        for (int m0 = 0; m0 < g->c_out; m0 += NN_AVX512_CONV_MR) {
            int mr = g->c_out - m0 < NN_AVX512_CONV_MR ? g->c_out - m0 : NN_AVX512_CONV_MR;
            const float *dym = dy0 + (size_t)m0 * d->dyp_plane + q0;
            nn_avx512_conv_wgrad(mr, K, c->offs, c->xp + q0, dym, d->dyp_plane, q1 - q0,
                                 c->acc + (size_t)m0 * ld_acc, ld_acc);
        }
    }
}

/* One sample: y's rows in two shares, dx through the transposed taps. */
static void conv_sample(const nn_conv_geom *g, conv_bufs *c, const float *x, const float *w,
                        const float *bias, const float *dy, float *y, float *dx)
{
    const dconv_dims *d = &c->d;
    nn_direct_conv_pad_input(g, d, x, c->xp);
    const int rows[3] = { 0, g->h_out / 2, g->h_out };
    for (int share = 0; share < 2; share++) {
        size_t q0, q1;
        nn_direct_conv_rows(d, rows[share], rows[share + 1], &q0, &q1);
        nn_avx512_conv_taps(g->c_out, d->K, w, c->offs, c->xp, c->yw, d->lw_pad, q0, q1);
        nn_direct_conv_store(g, d, c->yw, bias, y, rows[share], rows[share + 1]);
    }
    nn_direct_conv_widen(g, d, dy, c->dyp);
    nn_avx512_conv_taps(g->c_in, d->Kt, c->w_t, c->offs_t, c->dyp, c->dxp, d->dxp_plane, 0,
                        d->dxp_plane);
    for (int ci = 0; ci < g->c_in; ci++)        /* the interior, as nn_direct_conv_input_grad */
        for (int ih = 0; ih < g->h_in; ih++)
            memcpy(dx + ((size_t)ci * (size_t)g->h_in + (size_t)ih) * (size_t)g->w_in,
                   c->dxp + (size_t)ci * d->dxp_plane + (size_t)(ih + g->pad_h) * (size_t)d->pw +
                       (size_t)g->pad_w,
                   (size_t)g->w_in * sizeof *dx);
    conv_wgrad_sample(g, c);
}

/* dw from the lane accumulators: eight lanes a weight, summed. */
static void conv_dw_of(const nn_conv_geom *g, const conv_bufs *c, float *dw)
{
    const size_t K = c->d.K, ld_acc = ((K + 1) & ~(size_t)1) * 8;
    for (size_t co = 0; co < (size_t)g->c_out; co++)
        for (size_t r = 0; r < K; r++) {
            float sum = 0.0f;
            for (int l = 0; l < 8; l++)
                sum += c->acc[co * ld_acc + r * 8 + (size_t)l];
            dw[co * K + r] = sum;
        }
}

static void conv_case(const nn_conv_geom *g, uint64_t seed)
{
    nn_rng r;
    nn_rng_seed(&r, seed);
    const size_t in_s = (size_t)g->c_in * g->h_in * g->w_in;
    const size_t out_s = (size_t)g->c_out * g->h_out * g->w_out;
    const size_t nx = in_s * (size_t)g->n, ny = out_s * (size_t)g->n;
    const size_t nw = (size_t)g->c_out * g->c_in * g->k_h * g->k_w;
    float *x = fbuf(nx), *w = fbuf(nw), *bias = fbuf((size_t)g->c_out), *dy = fbuf(ny);
    float *y_ref = fbuf(ny), *dx_ref = fbuf(nx), *dw_ref = fbuf(nw), *db_ref = fbuf((size_t)g->c_out);
    float *y = fbuf(ny), *dx = fbuf(nx), *dw = fbuf(nw);
    fill(&r, x, nx, -1, 1);
    fill(&r, w, nw, -1, 1);
    fill(&r, bias, (size_t)g->c_out, -1, 1);
    fill(&r, dy, ny, -1, 1);
    size_t bytes = 0;
    expect_ok(&REF, nn_ref_conv2d_workspace(&REF, g, &bytes), "conv2d_workspace");
    void *ws = malloc(bytes ? bytes : 1);
    assert_non_null(ws);
    expect_ok(&REF, nn_ref_conv2d_forward(&REF, g, x, w, bias, y_ref, ws), "conv2d_forward");
    expect_ok(&REF, nn_ref_conv2d_backward(&REF, g, x, w, dy, dx_ref, dw_ref, db_ref, ws),
              "conv2d_backward");
    conv_bufs c;
    conv_bufs_open(&c, g, w);
    for (int s = 0; s < g->n; s++)
        conv_sample(g, &c, x + (size_t)s * in_s, w, bias, dy + (size_t)s * out_s,
                    y + (size_t)s * out_s, dx + (size_t)s * in_s);
    conv_dw_of(g, &c, dw);
    char shape[96];
    conv_shape(shape, sizeof shape, g, "");
    expect_close("direct conv y", shape, seed, y_ref, y, ny, ELEMENTWISE);
    expect_close("direct conv dx", shape, seed, dx_ref, dx, nx, ELEMENTWISE);
    expect_close("direct conv dw", shape, seed, dw_ref, dw, nw, REDUCTION);
    conv_bufs_close(&c);
    free(ws); free(x); free(w); free(bias); free(dy); free(y_ref); free(dx_ref); free(dw_ref);
    free(db_ref); free(y); free(dx); free(dw);
}

/* LeNet's two convolutions, padded ones, every row count up to a block of
 * six and past it (7, 13, 32 channels), widths off the 16-float register. */
static void test_direct_conv(void **state)
{
    (void)state;
    const nn_conv_geom cases[] = {
        conv_geom(2, 3, 32, 32, 6, 5, 1, 0),      /* LeNet's first */
        conv_geom(2, 6, 14, 14, 16, 5, 1, 0),     /* and second */
        conv_geom(1, 1, 28, 28, 1, 3, 1, 1),
        conv_geom(3, 2, 9, 11, 7, 3, 1, 1),
        conv_geom(1, 4, 5, 17, 13, 2, 1, 0),
        conv_geom(1, 3, 20, 20, 32, 3, 1, 2),
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        conv_case(&cases[k], case_seed(SEED, 6, (int)k));
}

/* ---- the AVX2 kernels' bits, with real FMAs --------------------------------------------- */

#ifdef NN_EMU_FMA
#include "cpu/cpu_internal.h"           /* the AVX2 kernels' entry points */
#include "test_avx512_emu_fma.h"

static int cpu_has_fma(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* A small-batch product as both kernels take it: (n, in, out, dy, the other
 * operand, the result, a range of the result's rows or columns). */
typedef void (*small_product_fn)(int n, int in, int out, const float *dy, const float *other,
                                 float *result, int lo, int hi);

/* At batches 1..8 and each width of ins, the kernel the backend runs (AVX2
 * here; the AVX-512 twin itself on an AVX-512 CPU) and the emulated twin
 * give the same bits. dx: the product is the input gradient (the other
 * operand w, out x in; the result n x in, its columns the range), else the
 * weight gradient (x, n x in; the result out x in, its rows the range). */
static void fma_small_product(nn_rng *r, const char *what, small_product_fn backend,
                              small_product_fn emulated, const int *ins, size_t n_ins, int out,
                              int dx)
{
    for (int n = 1; n <= NN_AVX512_SMALL_MAX_N; n++)
        for (size_t i = 0; i < n_ins; i++) {
            int in = ins[i];
            size_t n_other = (size_t)(dx ? out : n) * in, n_result = (size_t)(dx ? n : out) * in;
            float *dy = fbuf((size_t)n * out), *other = fbuf(n_other);
            float *a = fbuf(n_result), *b = fbuf(n_result);
            fill(r, dy, (size_t)n * out, -1, 1);
            fill(r, other, n_other, -1, 1);
            backend(n, in, out, dy, other, a, 0, dx ? in : out);
            emulated(n, in, out, dy, other, b, 0, dx ? in : out);
            assert_same_bits(what, n_result, a, b);
            free(dy); free(other); free(a); free(b);
        }
}

/* dw at widths off the register; dx at widths around both kernels' tiles
 * (24 columns in AVX2, 64 in AVX-512) and a single column. */
static void fma_small_dw_dx(nn_rng *r)
{
    static const int dw_ins[] = { 1, 15, 16, 17, 33, 784 };
    static const int dx_ins[] = { 1, 7, 8, 23, 24, 25, 64, 65, 400 };
    fma_small_product(r, "small dw", nn_cpu_small_dw_rows, emu_fma_small_dw_rows, dw_ins,
                      sizeof dw_ins / sizeof dw_ins[0], 5, 0);
    fma_small_product(r, "small dx", nn_cpu_small_dx_cols, emu_fma_small_dx_cols, dx_ins,
                      sizeof dx_ins / sizeof dx_ins[0], 37, 1);
}

static void fma_narrow_dx(nn_rng *r)
{
    nn_backend cpu;
    assert_int_equal(nn_backend_open(&cpu, &nn_backend_cpu, NULL), 0);
    for (int in = 4; in <= 24; in += 4) {
        const int n = 9, out = 400;
        float *dy = fbuf((size_t)n * out), *w = fbuf((size_t)out * in);
        float *a = fbuf((size_t)n * in), *b = fbuf((size_t)n * in);
        fill(r, dy, (size_t)n * out, -1, 1);
        fill(r, w, (size_t)out * in, -1, 1);
        expect_ok(&cpu, nn_cpu_narrow_dx(&cpu, n, in, out, dy, w, a), "narrow dx");
        emu_fma_narrow_dx(dy, out, w, b, in, 0, (size_t)n);
        assert_same_bits("narrow dx", (size_t)n * in, a, b);
        free(dy); free(w); free(a); free(b);
    }
    nn_backend_close(&cpu);
}

static void fma_conv_forward(nn_rng *r, const nn_conv_geom *g)
{
    const size_t in_s = (size_t)g->c_in * g->h_in * g->w_in;
    const size_t nw = (size_t)g->c_out * g->c_in * g->k_h * g->k_w;
    float *x = fbuf(in_s), *w = fbuf(nw);
    fill(r, x, in_s, -1, 1);
    fill(r, w, nw, -1, 1);
    conv_bufs c;
    conv_bufs_open(&c, g, w);
    float *b = fbuf(c.d.yw_floats);
    nn_direct_conv_pad_input(g, &c.d, x, c.xp);
    nn_direct_conv_forward(g, &c.d, w, c.offs, c.xp, c.yw, 0, c.d.lw_pad);
    emu_fma_conv_taps(g->c_out, c.d.K, w, c.offs, c.xp, b, c.d.lw_pad, 0, c.d.lw_pad);
    assert_same_bits("direct conv forward", c.d.yw_floats, c.yw, b);
    conv_bufs_close(&c);
    free(x); free(w); free(b);
}

static void test_fma_same_bits(void **state)
{
    (void)state;
    if (!cpu_has_fma())
        skip();
    nn_rng r;
    nn_rng_seed(&r, case_seed(SEED, 7, 0));
    fma_small_dw_dx(&r);
    fma_narrow_dx(&r);
    const nn_conv_geom lenet1 = conv_geom(1, 3, 32, 32, 6, 5, 1, 0);
    const nn_conv_geom lenet2 = conv_geom(1, 6, 14, 14, 16, 5, 1, 0);
    const nn_conv_geom odd = conv_geom(1, 2, 9, 11, 7, 3, 1, 1);
    fma_conv_forward(&r, &lenet1);
    fma_conv_forward(&r, &lenet2);
    fma_conv_forward(&r, &odd);
}
#else
static void test_fma_same_bits(void **state)
{
    (void)state;
    skip();                     /* configure: no -mavx2 -mfma build of the emulation */
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adam),
        cmocka_unit_test(test_sgd),
        cmocka_unit_test(test_elementwise),
        cmocka_unit_test(test_small_linear),
        cmocka_unit_test(test_small_dw_adam),
        cmocka_unit_test(test_small_dx),
        cmocka_unit_test(test_narrow_dx),
        cmocka_unit_test(test_direct_conv),
        cmocka_unit_test(test_fma_same_bits),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

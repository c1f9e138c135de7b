/* backends/cpu/cpu_conv_direct.c - see cpu_conv_direct.h. */
#include "cpu_avx512.h"
#include "cpu_conv_direct.h"
#include "cpu_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Outputs per block: two AVX2 vectors. */
#define QB 16
/* Rows (channels) per block: 6 rows x 2 vectors = 12 accumulators, which
 * leaves 4 of the 16 ymm registers for the inputs and a broadcast weight. */
#define MR_MAX 6
_Static_assert(MR_MAX == NN_AVX512_CONV_MR, "the AVX-512 twins block rows as these do");
/* Above this many output channels im2col + sgemm is as good (OpenBLAS's
 * micro-kernel gets full row blocks) and the direct kernel's weight
 * broadcasts no longer pay. */
#define DIRECT_MAX_C_OUT 32
/* Below this share of useful outputs im2col wins. Measured at batch 256
 * (tools in bench/README): LeNet's second convolution, 100 of 144 positions
 * (69%), ran 1.5x faster direct (forward 94 vs 60 GFLOP/s; backward with dx
 * 61-73 vs 39); its first, 784 of 896 (87.5%), twice as fast. */
#define DIRECT_MIN_USEFUL 0.6

static size_t round16(size_t floats)
{
    return (floats + 15) & ~(size_t)15;
}

void nn_direct_conv_dims(const nn_conv_geom *g, dconv_dims *d)
{
    const size_t taps = (size_t)g->k_h * (size_t)g->k_w;
    d->ph = g->h_in + 2 * g->pad_h;
    d->pw = g->w_in + 2 * g->pad_w;
    d->plane = (size_t)d->ph * (size_t)d->pw;
    d->K = (size_t)g->c_in * taps;
    d->Kt = (size_t)g->c_out * taps;
    d->lw = (size_t)g->h_out * (size_t)d->pw;
    d->lw_pad = round16(d->lw);
    /* the last block of the last channel's last tap reads up to here */
    size_t last_tap = ((size_t)g->c_in - 1) * d->plane + (size_t)(g->k_h - 1) * (size_t)d->pw +
                      (size_t)(g->k_w - 1);
    size_t reach = last_tap + d->lw_pad;
    size_t body = (size_t)g->c_in * d->plane;
    d->xp_floats = round16(reach > body ? reach : body);
    d->yw_floats = (size_t)g->c_out * d->lw_pad;
    /* at least the reach of the taps, rounded up so that the rows the weight
     * gradient reads stay 64-byte aligned */
    d->margin = round16((size_t)(g->k_h - 1) * (size_t)d->pw + (size_t)(g->k_w - 1));
    d->dxp_plane = round16(d->plane);
    /* the input gradient's blocks read [p - margin, p + 16) around every
     * position p < dxp_plane: the margin before, the rounding after */
    d->dyp_plane = round16(d->margin + d->dxp_plane);
    d->dyp_floats = (size_t)g->c_out * d->dyp_plane;
    d->dxp_floats = (size_t)g->c_in * d->dxp_plane;
    /* the scatter form adds each wide output position's sums at q + kh*pw
     * + kw of its channel: the last channel's reach can pass the plane */
    size_t scatter_reach = ((size_t)g->c_in - 1) * d->dxp_plane +
                           (size_t)(g->k_h - 1) * (size_t)d->pw + (size_t)(g->k_w - 1) + d->lw_pad;
    d->dxs_floats = round16(scatter_reach > d->dxp_floats ? scatter_reach : d->dxp_floats);
}

/* offs_t[c_out + m] is where row m = (kh, kw, ci) adds its sums (position q
 * goes to q + kh*pw + kw of channel ci). The channels are the inner index
 * so that the rows of one block add into different planes (scatter_rows). */
void nn_direct_conv_scatter_tables(const nn_conv_geom *g, const dconv_dims *d, const float *w,
                                   int *offs_t, float *w_t)
{
    const size_t CO = (size_t)g->c_out;
    for (size_t co = 0; co < CO; co++)
        offs_t[co] = (int)(co * d->dyp_plane + d->margin);
    const size_t taps = (size_t)g->k_h * (size_t)g->k_w;
    size_t m = 0;
    for (int kh = 0; kh < g->k_h; kh++)
        for (int kw = 0; kw < g->k_w; kw++)
            for (int ci = 0; ci < g->c_in; ci++, m++) {
                const size_t tap = (size_t)ci * taps + (size_t)kh * (size_t)g->k_w + (size_t)kw;
                offs_t[CO + m] = (int)((size_t)ci * d->dxp_plane + (size_t)kh * (size_t)d->pw +
                                       (size_t)kw);
                for (size_t co = 0; co < CO; co++)
                    w_t[m * CO + co] = w[co * d->K + tap];
            }
}

void nn_direct_conv_tables(const nn_conv_geom *g, const dconv_dims *d, const float *w,
                           int *offs, int *offs_t, float *w_t)
{
    const int KH = g->k_h, KW = g->k_w;
    const size_t taps = (size_t)KH * (size_t)KW;
    size_t r = 0;
    for (int ci = 0; ci < g->c_in; ci++)
        for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++)
                offs[r++] = (int)((size_t)ci * d->plane + (size_t)kh * (size_t)d->pw + (size_t)kw);
    if (!offs_t)
        return;
    /* input position p gets tap (co, kh, kw) from output position
     * p - kh*pw - kw, which sits at margin + p - kh*pw - kw in the margined
     * channel co */
    r = 0;
    for (int co = 0; co < g->c_out; co++)
        for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++)
                offs_t[r++] = (int)((size_t)co * d->dyp_plane + d->margin -
                                    (size_t)kh * (size_t)d->pw - (size_t)kw);
    for (int ci = 0; ci < g->c_in; ci++)
        for (int co = 0; co < g->c_out; co++)
            memcpy(w_t + (size_t)ci * d->Kt + (size_t)co * taps,
                   w + (size_t)co * d->K + (size_t)ci * taps, taps * sizeof *w_t);
}

void nn_direct_conv_pad_input(const nn_conv_geom *g, const dconv_dims *d, const float *x,
                              float *xp)
{
    const size_t plane_in = (size_t)g->h_in * (size_t)g->w_in;
    const size_t body = (size_t)g->c_in * d->plane;
    if (g->pad_h == 0 && g->pad_w == 0) {
        memcpy(xp, x, body * sizeof *xp);
    } else {
        memset(xp, 0, body * sizeof *xp);
        for (int ci = 0; ci < g->c_in; ci++)
            for (int ih = 0; ih < g->h_in; ih++)
                memcpy(xp + (size_t)ci * d->plane + (size_t)(ih + g->pad_h) * (size_t)d->pw +
                           (size_t)g->pad_w,
                       x + (size_t)ci * plane_in + (size_t)ih * (size_t)g->w_in,
                       (size_t)g->w_in * sizeof *xp);
    }
    memset(xp + body, 0, (d->xp_floats - body) * sizeof *xp);
}

void nn_direct_conv_rows(const dconv_dims *d, int oh0, int oh1, size_t *q0, size_t *q1)
{
    size_t hi = round16((size_t)oh1 * (size_t)d->pw);
    *q0 = (size_t)oh0 * (size_t)d->pw & ~(size_t)15;
    *q1 = hi < d->lw_pad ? hi : d->lw_pad;
}

void nn_direct_conv_store(const nn_conv_geom *g, const dconv_dims *d, const float *yw,
                          const float *bias, float *y, int oh0, int oh1)
{
    const size_t WO = (size_t)g->w_out;
    for (int co = 0; co < g->c_out; co++) {
        const float bv = bias ? bias[co] : 0.0f;
        const float *src = yw + (size_t)co * d->lw_pad + (size_t)oh0 * (size_t)d->pw;
        float *dst = y + ((size_t)co * (size_t)g->h_out + (size_t)oh0) * WO;
        for (int oh = oh0; oh < oh1; oh++, src += d->pw, dst += WO)
            for (size_t ow = 0; ow < WO; ow++)
                dst[ow] = src[ow] + bv;
    }
}

void nn_direct_conv_widen(const nn_conv_geom *g, const dconv_dims *d, const float *dy,
                          float *dyp)
{
    const size_t WO = (size_t)g->w_out, PW = (size_t)d->pw;
    memset(dyp, 0, d->dyp_floats * sizeof *dyp);
    for (int co = 0; co < g->c_out; co++) {
        const float *src = dy + (size_t)co * (size_t)g->h_out * WO;
        float *dst = dyp + (size_t)co * d->dyp_plane + d->margin;
        for (int oh = 0; oh < g->h_out; oh++, src += WO, dst += PW)
            memcpy(dst, src, WO * sizeof *dst);
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))
#define KERNEL static inline __attribute__((always_inline, target("avx2,fma")))

int nn_direct_conv_usable(const nn_conv_geom *g)
{
    /* NNLAB_NO_DIRECT_CONV=1 keeps im2col + sgemm: the parity tests run both
     * paths, and it lets anyone compare them. */
    if (!nn_cpu_switch_on(NN_CPU_SW_DIRECT_CONV))
        return 0;
    if (g->stride_h != 1 || g->stride_w != 1 || (g->k_h == 1 && g->k_w == 1) ||
        g->c_out > DIRECT_MAX_C_OUT)
        return 0;
    /* the share of computed positions that are real outputs: the rest (the
     * extra columns, the rounding to whole blocks) is work thrown away */
    dconv_dims d;
    nn_direct_conv_dims(g, &d);
    return (double)g->h_out * g->w_out >= DIRECT_MIN_USEFUL * (double)d.lw_pad;
}

/* out[row_at[m] + (0 .. 16)] = (or, when add, +=) the sum over taps r of
 * w[m*kr + r] * in[offs[r] + (0 .. 16)], for rows m < mr. mr and add are
 * constants where inlined. */
KERNEL void taps_block(const int mr, size_t kr, const float *w, const int *offs,
                       const float *in, float *out, const size_t *row_at, const int add)
{
    __m256 a0[MR_MAX], a1[MR_MAX];
#pragma GCC unroll 6
    for (int m = 0; m < mr; m++)
        a0[m] = a1[m] = _mm256_setzero_ps();
    for (size_t r = 0; r < kr; r++) {
        const float *src = in + offs[r];
        const __m256 x0 = _mm256_loadu_ps(src), x1 = _mm256_loadu_ps(src + 8);
#pragma GCC unroll 6
        for (int m = 0; m < mr; m++) {
            const __m256 wv = _mm256_broadcast_ss(w + (size_t)m * kr + r);
            a0[m] = _mm256_fmadd_ps(wv, x0, a0[m]);
            a1[m] = _mm256_fmadd_ps(wv, x1, a1[m]);
        }
    }
#pragma GCC unroll 6
    for (int m = 0; m < mr; m++) {
        float *o = out + row_at[m];
        if (add) {
            a0[m] = _mm256_add_ps(a0[m], _mm256_loadu_ps(o));
            a1[m] = _mm256_add_ps(a1[m], _mm256_loadu_ps(o + 8));
        }
        _mm256_storeu_ps(o, a0[m]);
        _mm256_storeu_ps(o + 8, a1[m]);
    }
}

/* taps_block for mr = 1 .. MR_MAX, each a constant. */
KERNEL void taps_block_mr(const int mr, size_t kr, const float *w, const int *offs,
                          const float *in, float *out, const size_t *row_at, const int add)
{
    switch (mr) {
    case 6: taps_block(6, kr, w, offs, in, out, row_at, add); break;
    case 5: taps_block(5, kr, w, offs, in, out, row_at, add); break;
    case 4: taps_block(4, kr, w, offs, in, out, row_at, add); break;
    case 3: taps_block(3, kr, w, offs, in, out, row_at, add); break;
    case 2: taps_block(2, kr, w, offs, in, out, row_at, add); break;
    default: taps_block(1, kr, w, offs, in, out, row_at, add); break;
    }
}

/* Rows [0, rows) in blocks of at most MR_MAX, positions [q0, q1) in blocks
 * of QB: out[m][q] = sum_r w[m][r] in[offs[r] + q]. */
AVX2 static void taps_rows(int rows, size_t kr, const float *w, const int *offs,
                           const float *in, float *out, size_t ld_out, size_t q0, size_t q1)
{
    if (nn_cpu_avx512_kernels()) {       /* 16 outputs a zmm register, 32 a block */
        nn_avx512_conv_taps(rows, kr, w, offs, in, out, ld_out, q0, q1);
        return;
    }
    size_t row_at[MR_MAX];
    for (int m = 0; m < MR_MAX; m++)
        row_at[m] = (size_t)m * ld_out;
    for (int m0 = 0; m0 < rows; m0 += MR_MAX) {
        const int mr = rows - m0 < MR_MAX ? rows - m0 : MR_MAX;
        const float *wm = w + (size_t)m0 * kr;
        float *om = out + (size_t)m0 * ld_out;
        for (size_t q = q0; q < q1; q += QB)
            taps_block_mr(mr, kr, wm, offs, in + q, om + q, row_at, 0);
    }
}

/* The input gradient in scatter form: for every wide output position q in
 * [0, lw_pad) and row m = (kh, kw, ci), out[out_at[m] + q] += sum over the
 * c_out channels co of w_t[m][co] * in[offs[co] + q]. Blocks never hold two
 * rows of one channel: their sums, added at nearby shifted positions, would
 * make each block's loads wait on the stores before them. */
AVX2 static void scatter_rows(const nn_conv_geom *g, const dconv_dims *d, const float *w_t,
                              const int *offs_t, const float *in, float *out)
{
    const size_t CO = (size_t)g->c_out, taps = (size_t)g->k_h * (size_t)g->k_w;
    const int *out_at = offs_t + CO;
    size_t row_at[MR_MAX];
    for (size_t t = 0; t < taps; t++)
        for (int c0 = 0; c0 < g->c_in; c0 += MR_MAX) {
            const int mr = g->c_in - c0 < MR_MAX ? g->c_in - c0 : MR_MAX;
            const size_t m0 = t * (size_t)g->c_in + (size_t)c0;
            for (int m = 0; m < mr; m++)
                row_at[m] = (size_t)out_at[m0 + (size_t)m];
            for (size_t q = 0; q < d->lw_pad; q += QB)
                taps_block_mr(mr, CO, w_t + m0 * CO, offs_t, in + q, out + q, row_at, 1);
        }
}

void nn_direct_conv_forward(const nn_conv_geom *g, const dconv_dims *d, const float *w,
                            const int *offs, const float *xp, float *yw, size_t q0, size_t q1)
{
    taps_rows(g->c_out, d->K, w, offs, xp, yw, d->lw_pad, q0, q1);
}

int nn_direct_conv_dx_scatter(const nn_conv_geom *g, const dconv_dims *d)
{
    int enabled = nn_cpu_switch_on(NN_CPU_SW_DX_SCATTER);
    /* the scatter form computes lw_pad positions a row and adds each row's
     * sums back (about 2 FMAs' worth per position against c_out); the
     * gather form computes every position of the padded plane */
    return enabled && (double)d->lw_pad * (g->c_out + 2.0) < (double)d->dxp_plane * g->c_out;
}

void nn_direct_conv_input_grad(const nn_conv_geom *g, const dconv_dims *d, const float *w_t,
                               const int *offs_t, const float *dyp, float *dxp, float *dx)
{
    if (nn_direct_conv_dx_scatter(g, d)) {
        memset(dxp, 0, d->dxs_floats * sizeof *dxp);
        scatter_rows(g, d, w_t, offs_t, dyp, dxp);
    } else {
        taps_rows(g->c_in, d->Kt, w_t, offs_t, dyp, dxp, d->dxp_plane, 0, d->dxp_plane);
    }
    const size_t plane_in = (size_t)g->h_in * (size_t)g->w_in;
    for (int ci = 0; ci < g->c_in; ci++)
        for (int ih = 0; ih < g->h_in; ih++)
            memcpy(dx + (size_t)ci * plane_in + (size_t)ih * (size_t)g->w_in,
                   dxp + (size_t)ci * d->dxp_plane + (size_t)(ih + g->pad_h) * (size_t)d->pw +
                       (size_t)g->pad_w,
                   (size_t)g->w_in * sizeof *dx);
}

KERNEL float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Positions per block of the weight gradient: 32 vectors, so that a block's
 * input runs (c_in x (QW + the taps' reach)) and output-gradient rows
 * (c_out x QW) stay in L1 while every tap pair sweeps them. Without blocking
 * each sweep streamed the whole sample from L2 and ran at half the speed. */
#define QW 256

/* acc[m][0..8), acc[m][8..16) (rows `ld_acc` apart) += the dot products
 * over positions [0, n) of dy rows m (ld_dy apart) with the runs of x at
 * offsets o0 and o1, lane by lane. */
KERNEL void wgrad_block(const int mr, const float *x0, const float *x1, const float *dy,
                        size_t ld_dy, size_t n, float *acc, size_t ld_acc)
{
    __m256 a0[MR_MAX], a1[MR_MAX];
#pragma GCC unroll 6
    for (int m = 0; m < mr; m++)
        a0[m] = a1[m] = _mm256_setzero_ps();
    for (size_t q = 0; q < n; q += 8) {
        const __m256 v0 = _mm256_loadu_ps(x0 + q), v1 = _mm256_loadu_ps(x1 + q);
#pragma GCC unroll 6
        for (int m = 0; m < mr; m++) {
            __m256 dv = _mm256_loadu_ps(dy + (size_t)m * ld_dy + q);
            /* keep dv in a register: GCC otherwise folds it into both FMAs
             * as a memory operand, 14 loads per 12 FMAs instead of 8 */
            __asm__("" : "+x"(dv));
            a0[m] = _mm256_fmadd_ps(dv, v0, a0[m]);
            a1[m] = _mm256_fmadd_ps(dv, v1, a1[m]);
        }
    }
#pragma GCC unroll 6
    for (int m = 0; m < mr; m++) {
        float *am = acc + (size_t)m * ld_acc;
        _mm256_storeu_ps(am, _mm256_add_ps(_mm256_loadu_ps(am), a0[m]));
        _mm256_storeu_ps(am + 8, _mm256_add_ps(_mm256_loadu_ps(am + 8), a1[m]));
    }
}

/* The lane accumulators of the weight gradient: (c_out, K rounded up to
 * even, 8), the spare tap taking an odd last tap's unused second sums. */
size_t nn_direct_conv_wgrad_floats(const nn_conv_geom *g, const dconv_dims *d)
{
    return (size_t)g->c_out * ((d->K + 1) & ~(size_t)1) * 8;
}

/* One sample's positions [q0, q1) into the lane accumulators acc. */
AVX2 static void wgrad_positions(const nn_conv_geom *g, const dconv_dims *d, const int *offs,
                                 const float *xp, const float *dy0, size_t q0, size_t q1,
                                 float *acc)
{
    const size_t K = d->K, ld_acc = ((K + 1) & ~(size_t)1) * 8;
    const int avx512 = nn_cpu_avx512_kernels();
    for (int m0 = 0; m0 < g->c_out; m0 += MR_MAX) {
        const int mr = g->c_out - m0 < MR_MAX ? g->c_out - m0 : MR_MAX;
        const float *dym = dy0 + (size_t)m0 * d->dyp_plane + q0;
        if (avx512) {       /* every pair of taps in one call */
            nn_avx512_conv_wgrad(mr, K, offs, xp + q0, dym, d->dyp_plane, q1 - q0,
                                 acc + (size_t)m0 * ld_acc, ld_acc);
            continue;
        }
        for (size_t r = 0; r < K; r += 2) {
            /* an odd last tap is paired with itself; its second sum is dropped */
            const float *x0 = xp + offs[r] + q0;
            const float *x1 = r + 1 < K ? xp + offs[r + 1] + q0 : x0;
            float *ar = acc + (size_t)m0 * ld_acc + r * 8;
            switch (mr) {
#define WGRAD(MR) wgrad_block(MR, x0, x1, dym, d->dyp_plane, q1 - q0, ar, ld_acc)
            case 6: WGRAD(6); break;
            case 5: WGRAD(5); break;
            case 4: WGRAD(4); break;
            case 3: WGRAD(3); break;
            case 2: WGRAD(2); break;
            default: WGRAD(1); break;
#undef WGRAD
            }
        }
    }
}

AVX2 void nn_direct_conv_weight_grad(const nn_conv_geom *g, const dconv_dims *d, const int *offs,
                                     const float *xps, const float *dyps, int nb, float *dw,
                                     float *acc)
{
    const size_t K = d->K, ld_acc = ((K + 1) & ~(size_t)1) * 8;
    memset(acc, 0, nn_direct_conv_wgrad_floats(g, d) * sizeof *acc);
    for (int s = 0; s < nb; s++) {
        const float *xp = xps + (size_t)s * d->xp_floats;
        /* positions past lw read zeros of the margined layout: whole vectors */
        const float *dy0 = dyps + (size_t)s * d->dyp_floats + d->margin;
        for (size_t q0 = 0; q0 < d->lw_pad; q0 += QW)
            wgrad_positions(g, d, offs, xp, dy0, q0, q0 + QW < d->lw_pad ? q0 + QW : d->lw_pad,
                            acc);
    }
    for (size_t co = 0; co < (size_t)g->c_out; co++)
        for (size_t r = 0; r < K; r++)
            dw[co * K + r] += hsum8(_mm256_loadu_ps(acc + co * ld_acc + r * 8));
}

#else /* no AVX2 kernels on this architecture: the backend keeps im2col */

int nn_direct_conv_usable(const nn_conv_geom *g)
{
    (void)g;
    return 0;
}

int nn_direct_conv_dx_scatter(const nn_conv_geom *g, const dconv_dims *d)
{
    (void)g, (void)d;
    return 0;
}

/* Never called: nn_direct_conv_usable() is 0 here. */
void nn_direct_conv_forward(const nn_conv_geom *g, const dconv_dims *d, const float *w,
                            const int *offs, const float *xp, float *yw, size_t q0, size_t q1)
{
    (void)g, (void)d, (void)w, (void)offs, (void)xp, (void)yw, (void)q0, (void)q1;
    abort();
}

size_t nn_direct_conv_wgrad_floats(const nn_conv_geom *g, const dconv_dims *d)
{
    (void)g, (void)d;
    return 0;
}

void nn_direct_conv_weight_grad(const nn_conv_geom *g, const dconv_dims *d, const int *offs,
                                const float *xps, const float *dyps, int nb, float *dw,
                                float *acc)
{
    (void)g, (void)d, (void)offs, (void)xps, (void)dyps, (void)nb, (void)dw, (void)acc;
    abort();
}

void nn_direct_conv_input_grad(const nn_conv_geom *g, const dconv_dims *d, const float *w_t,
                               const int *offs_t, const float *dyp, float *dxp, float *dx)
{
    (void)g, (void)d, (void)w_t, (void)offs_t, (void)dyp, (void)dxp, (void)dx;
    abort();
}

#endif

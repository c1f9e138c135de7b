/* backends/cpu/cpu_maxpool.c - maxpool2d_forward and maxpool2d_backward of the
 * fast CPU backend, in items of whole (sample, channel) planes. NaN semantics
 * as cpu-ref and PyTorch: a NaN in the window wins the forward, and the
 * gradient goes to the window's last NaN (among equal maxima, the first).
 */
#include "cpu_internal.h"

#include <stdint.h>
#include <string.h>

#include "geom_check.h"

static int pool_check(nn_backend *b, const char *op, const nn_pool_geom *g)
{
    char why[192];
    return nn_pool_geom_problem(op, g, why, sizeof why) ? nn_backend_fail(b, "%s", why) : 0;
}

/* written without && or || so that it compiles to a select, not a branch */
static inline float max_nan(float best, float v)
{
    return ((v > best) | (v != v)) ? v : best;
}

/* y[ow] = max of the 2x2 window (r0, r1)[2 ow .. 2 ow + 1], in row-major order */
static inline float max2x2(const float *r0, const float *r1, size_t c)
{
    float m = max_nan(r0[c], r0[c + 1]);
    m = max_nan(m, r1[c]);
    return max_nan(m, r1[c + 1]);
}

/* windows [ow, WO) of one output row */
static void max2x2_row(const float *restrict r0, const float *restrict r1, float *restrict y,
                       size_t ow, size_t WO)
{
    for (; ow + 8 <= WO; ow += 8)
        for (size_t j = 0; j < 8; j++)   /* a fixed 8: vectorised at -O2 */
            y[ow + j] = max2x2(r0, r1, 2 * (ow + j));
    for (; ow < WO; ow++)
        y[ow] = max2x2(r0, r1, 2 * ow);
}

/* The AVX2 row below (0 windows where it may not run): the windows it did. */
static size_t forward_row_2x2_avx2(const float *r0, const float *r1, float *y, size_t WO);
static int pool_simd(void);

static void maxpool_forward_planes(const nn_pool_geom *g, const float *x, float *y,
                                   size_t p0, size_t p1)
{
    const int simd = pool_simd();
    const size_t HI = (size_t)g->h_in, WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const size_t SH = (size_t)g->stride_h, SW = (size_t)g->stride_w;
    const size_t KH = (size_t)g->k_h, KW = (size_t)g->k_w;
    for (size_t plane = p0; plane < p1; plane++) {
        const float *xp = x + plane * HI * WI;
        float *yp = y + plane * HO * WO;
        if (KH == 2 && KW == 2 && SH == 2 && SW == 2) {
            for (size_t oh = 0; oh < HO; oh++) {
                const float *r0 = xp + 2 * oh * WI, *r1 = r0 + WI;
                float *yrow = yp + oh * WO;
                max2x2_row(r0, r1, yrow, simd ? forward_row_2x2_avx2(r0, r1, yrow, WO) : 0, WO);
            }
            continue;
        }
        for (size_t oh = 0; oh < HO; oh++)
            for (size_t ow = 0; ow < WO; ow++) {
                const float *win = xp + oh * SH * WI + ow * SW;
                float m = win[0];
                for (size_t kh = 0; kh < KH; kh++)
                    for (size_t kw = 0; kw < KW; kw++)
                        m = max_nan(m, win[kh * WI + kw]);
                yp[oh * WO + ow] = m;
            }
    }
}

/* cond ? v : 0.0f as a bit mask, without a branch (and without 0 * v, which
 * would turn an infinite gradient into NaN) */
static inline float keep_if(int cond, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u &= (uint32_t)0 - (uint32_t)cond;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* The offset (kh * row + kw) of the last NaN of a window: where PyTorch
 * routes the gradient of a window whose maximum is NaN (cpu_ref_conv.c
 * window_argmax). NaN windows are rare, so the loops below branch to it. */
static size_t last_nan(const float *win, size_t row, size_t k_h, size_t k_w)
{
    size_t at = 0;
    for (size_t kh = 0; kh < k_h; kh++)
        for (size_t kw = 0; kw < k_w; kw++)
            if (win[kh * row + kw] != win[kh * row + kw])
                at = kh * row + kw;
    return at;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* Whether forward_row_2x2_avx2 and backward_row_2x2_avx2 may run: AVX2 here
 * and NNLAB_NO_POOL_SIMD unset (the parity tests switch it off to check the
 * scalar loops too). */
static int pool_simd(void)
{
    return nn_cpu_switch_on(NN_CPU_SW_POOL_SIMD);
}

/* max_nan on 8 lanes: v where v > best or v is NaN, else best */
__attribute__((target("avx2"))) static inline __m256 max_nan8(__m256 best, __m256 v)
{
    const __m256 take = _mm256_or_ps(_mm256_cmp_ps(v, best, _CMP_GT_OQ),
                                     _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_ps(best, v, take);
}

/* The windows' maxima of 16 columns, a0|a1 of the first row and b0|b1 of
 * the second, in column order: max2x2's three max_nan in its order, on
 * lanes. The shuffles as the backward's below: windows in the order
 * 0 1 4 5 | 2 3 6 7, put back by one permute. */
__attribute__((target("avx2"))) static inline __m256 max2x2_lanes(__m256 a0, __m256 a1,
                                                                 __m256 b0, __m256 b1)
{
    __m256 m = max_nan8(_mm256_shuffle_ps(a0, a1, 0x88), _mm256_shuffle_ps(a0, a1, 0xDD));
    m = max_nan8(m, _mm256_shuffle_ps(b0, b1, 0x88));
    m = max_nan8(m, _mm256_shuffle_ps(b0, b1, 0xDD));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xD8));
}

/* Windows [0, WO rounded down to 4) of one output row of the forward, 8
 * (then 4: the second half of the columns zeros, the low half of the result
 * stored) at a time, the same bits as max2x2, NaN and signed zeros included.
 * Returns how many windows it did. Why: LeNet's rows are 14 and 5 windows,
 * which the scalar loop's blocks of 8 left mostly to its one-at-a-time
 * tail: 6% of lenet-cifar10's one-thread step at batch 4 (perf). */
__attribute__((target("avx2"))) static size_t forward_row_2x2_avx2(const float *r0,
                                                                   const float *r1, float *y,
                                                                   size_t WO)
{
    size_t ow = 0;
    for (; ow + 8 <= WO; ow += 8) {
        const size_t c = 2 * ow;
        const __m256 m = max2x2_lanes(_mm256_loadu_ps(r0 + c), _mm256_loadu_ps(r0 + c + 8),
                                      _mm256_loadu_ps(r1 + c), _mm256_loadu_ps(r1 + c + 8));
        _mm256_storeu_ps(y + ow, m);
    }
    const __m256 zero = _mm256_setzero_ps();
    for (; ow + 4 <= WO; ow += 4) {
        const size_t c = 2 * ow;
        const __m256 m = max2x2_lanes(_mm256_loadu_ps(r0 + c), zero, _mm256_loadu_ps(r1 + c), zero);
        _mm_storeu_ps(y + ow, _mm256_castps256_ps128(m));
    }
    return ow;
}

/* Windows [0, WO rounded down to 4) of one output row, 8 (then 4) at a time: the
 * same first-equal rule as backward_plane_2x2's scalar loop, on masks.
 * Returns how many windows it did; a block holding a NaN maximum is left
 * to the scalar loop, so it returns at that block. Why: the scalar loop,
 * four compares and four selects a window, was 7% of LeNet's step at batch
 * 256, twice the forward's time over the same memory.
 *
 * The shuffles split 16 columns into even and odd ones with the windows in
 * the order 0 1 4 5 | 2 3 6 7; m and dy are permuted to that order, and
 * unpacking even with odd results gives the columns back in order. */
__attribute__((target("avx2"))) static size_t
backward_row_2x2_avx2(const float *r0, const float *r1, const float *yrow, const float *dyrow,
                      float *d0, float *d1, size_t WO)
{
    size_t ow = 0;
    for (; ow + 8 <= WO; ow += 8) {
        const size_t c = 2 * ow;
        const __m256 m = _mm256_castpd_ps(_mm256_permute4x64_pd(
            _mm256_castps_pd(_mm256_loadu_ps(yrow + ow)), 0xD8));
        if (_mm256_movemask_ps(_mm256_cmp_ps(m, m, _CMP_UNORD_Q)))
            return ow;
        const __m256 d = _mm256_castpd_ps(_mm256_permute4x64_pd(
            _mm256_castps_pd(_mm256_loadu_ps(dyrow + ow)), 0xD8));
        const __m256 a0 = _mm256_loadu_ps(r0 + c), a1 = _mm256_loadu_ps(r0 + c + 8);
        const __m256 b0 = _mm256_loadu_ps(r1 + c), b1 = _mm256_loadu_ps(r1 + c + 8);
        const __m256 e0 = _mm256_shuffle_ps(a0, a1, 0x88), o0 = _mm256_shuffle_ps(a0, a1, 0xDD);
        const __m256 e1 = _mm256_shuffle_ps(b0, b1, 0x88), o1 = _mm256_shuffle_ps(b0, b1, 0xDD);
        const __m256 ka = _mm256_cmp_ps(e0, m, _CMP_EQ_OQ);
        __m256 taken = ka;
        const __m256 kb = _mm256_andnot_ps(taken, _mm256_cmp_ps(o0, m, _CMP_EQ_OQ));
        taken = _mm256_or_ps(taken, kb);
        const __m256 kc = _mm256_andnot_ps(taken, _mm256_cmp_ps(e1, m, _CMP_EQ_OQ));
        taken = _mm256_or_ps(taken, kc);
        const __m256 kd = _mm256_andnot_ps(taken, _mm256_cmp_ps(o1, m, _CMP_EQ_OQ));
        const __m256 ga = _mm256_and_ps(ka, d), gb = _mm256_and_ps(kb, d);
        const __m256 gc = _mm256_and_ps(kc, d), gd = _mm256_and_ps(kd, d);
        _mm256_storeu_ps(d0 + c, _mm256_unpacklo_ps(ga, gb));
        _mm256_storeu_ps(d0 + c + 8, _mm256_unpackhi_ps(ga, gb));
        _mm256_storeu_ps(d1 + c, _mm256_unpacklo_ps(gc, gd));
        _mm256_storeu_ps(d1 + c + 8, _mm256_unpackhi_ps(gc, gd));
    }
    /* then 4 windows in 128-bit registers, whose shuffles keep the order:
     * LeNet's second pool has rows of 5 windows */
    for (; ow + 4 <= WO; ow += 4) {
        const size_t c = 2 * ow;
        const __m128 m = _mm_loadu_ps(yrow + ow);
        if (_mm_movemask_ps(_mm_cmpunord_ps(m, m)))
            return ow;
        const __m128 d = _mm_loadu_ps(dyrow + ow);
        const __m128 a0 = _mm_loadu_ps(r0 + c), a1 = _mm_loadu_ps(r0 + c + 4);
        const __m128 b0 = _mm_loadu_ps(r1 + c), b1 = _mm_loadu_ps(r1 + c + 4);
        const __m128 ka = _mm_cmpeq_ps(_mm_shuffle_ps(a0, a1, 0x88), m);
        __m128 taken = ka;
        const __m128 kb = _mm_andnot_ps(taken, _mm_cmpeq_ps(_mm_shuffle_ps(a0, a1, 0xDD), m));
        taken = _mm_or_ps(taken, kb);
        const __m128 kc = _mm_andnot_ps(taken, _mm_cmpeq_ps(_mm_shuffle_ps(b0, b1, 0x88), m));
        taken = _mm_or_ps(taken, kc);
        const __m128 kd = _mm_andnot_ps(taken, _mm_cmpeq_ps(_mm_shuffle_ps(b0, b1, 0xDD), m));
        const __m128 ga = _mm_and_ps(ka, d), gb = _mm_and_ps(kb, d);
        const __m128 gc = _mm_and_ps(kc, d), gd = _mm_and_ps(kd, d);
        _mm_storeu_ps(d0 + c, _mm_unpacklo_ps(ga, gb));
        _mm_storeu_ps(d0 + c + 4, _mm_unpackhi_ps(ga, gb));
        _mm_storeu_ps(d1 + c, _mm_unpacklo_ps(gc, gd));
        _mm_storeu_ps(d1 + c + 4, _mm_unpackhi_ps(gc, gd));
    }
    return ow;
}
#else
static int pool_simd(void)
{
    return 0;
}

static size_t backward_row_2x2_avx2(const float *r0, const float *r1, const float *yrow,
                                    const float *dyrow, float *d0, float *d1, size_t WO)
{
    (void)r0, (void)r1, (void)yrow, (void)dyrow, (void)d0, (void)d1, (void)WO;
    return 0;
}

static size_t forward_row_2x2_avx2(const float *r0, const float *r1, float *y, size_t WO)
{
    (void)r0, (void)r1, (void)y, (void)WO;
    return 0;
}
#endif

/* Non-overlapping 2x2 windows of stride 2: every dx inside one is written
 * once; only the floor-mode leftovers (odd last row/column) need zeros. */
static void backward_plane_2x2(const nn_pool_geom *g, const float *xp, const float *yp,
                               const float *dyp, float *dxp)
{
    const size_t HI = (size_t)g->h_in, WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const int simd = pool_simd();
    for (size_t oh = 0; oh < HO; oh++) {
        const float *r0 = xp + 2 * oh * WI, *r1 = r0 + WI;
        float *d0 = dxp + 2 * oh * WI, *d1 = d0 + WI;
        size_t ow = simd ? backward_row_2x2_avx2(r0, r1, yp + oh * WO, dyp + oh * WO, d0, d1, WO)
                         : 0;
        for (; ow < WO; ow++) {
            /* branch-free: where the maximum sits is data, and a
             * mispredicted branch per window made this loop 10% of
             * LeNet's step at batch 4 */
            const float m = yp[oh * WO + ow], d = dyp[oh * WO + ow];
            const size_t c = 2 * ow;
            if (m != m) {           /* a NaN window: rare, so a branch is cheap */
                d0[c] = d0[c + 1] = d1[c] = d1[c + 1] = 0.0f;
                d0[c + last_nan(r0 + c, WI, 2, 2)] = d;     /* d1 is d0 + WI */
                continue;
            }
            const int a = r0[c] == m;
            const int bb = (r0[c + 1] == m) & !a;
            const int cc = (r1[c] == m) & !(a | bb);
            const int dd = (r1[c + 1] == m) & !(a | bb | cc);
            d0[c] = keep_if(a, d);
            d0[c + 1] = keep_if(bb, d);
            d1[c] = keep_if(cc, d);
            d1[c + 1] = keep_if(dd, d);
        }
        if (WI > 2 * WO) {
            d0[WI - 1] = 0.0f;
            d1[WI - 1] = 0.0f;
        }
    }
    if (HI > 2 * HO)
        memset(dxp + (HI - 1) * WI, 0, WI * sizeof *dxp);
}

/* Windows that do not overlap (conv1d-regression's 3-wide pool with stride
 * 3): each position is written at most once, so the first match can be
 * selected without a branch (a NaN window, rare, branches to its last NaN).
 * dxp is zero already. */
static void backward_plane_disjoint(const nn_pool_geom *g, const float *xp, const float *yp,
                                    const float *dyp, float *dxp)
{
    const size_t WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const size_t SH = (size_t)g->stride_h, SW = (size_t)g->stride_w;
    const size_t KH = (size_t)g->k_h, KW = (size_t)g->k_w;
    for (size_t oh = 0; oh < HO; oh++)
        for (size_t ow = 0; ow < WO; ow++) {
            const float m = yp[oh * WO + ow], d = dyp[oh * WO + ow];
            const size_t base = oh * SH * WI + ow * SW;
            if (m != m) {
                dxp[base + last_nan(xp + base, WI, KH, KW)] = d;
                continue;
            }
            int found = 0;
            for (size_t kh = 0; kh < KH; kh++)
                for (size_t kw = 0; kw < KW; kw++) {
                    const size_t at = base + kh * WI + kw;
                    const int hit = (xp[at] == m) & !found;
                    dxp[at] = keep_if(hit, d);
                    found |= hit;
                }
        }
}

/* The offset of the first position of a window whose value equals m, or
 * SIZE_MAX when there is none (y not computed from this x). */
static size_t first_equal(const float *win, size_t row, size_t k_h, size_t k_w, float m)
{
    for (size_t kh = 0; kh < k_h; kh++)
        for (size_t kw = 0; kw < k_w; kw++)
            if (win[kh * row + kw] == m)
                return kh * row + kw;
    return SIZE_MAX;
}

/* Overlapping windows: dy goes to the first position in row-major window
 * order whose x equals y, or to the last NaN when y is NaN; windows that
 * share a position add up there. dxp is zero already. */
static void backward_plane_overlapping(const nn_pool_geom *g, const float *xp,
                                       const float *yp, const float *dyp, float *dxp)
{
    const size_t WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const size_t SH = (size_t)g->stride_h, SW = (size_t)g->stride_w;
    const size_t KH = (size_t)g->k_h, KW = (size_t)g->k_w;
    for (size_t oh = 0; oh < HO; oh++)
        for (size_t ow = 0; ow < WO; ow++) {
            const float m = yp[oh * WO + ow];
            const size_t base = oh * SH * WI + ow * SW;
            const size_t at = m != m ? last_nan(xp + base, WI, KH, KW)
                                     : first_equal(xp + base, WI, KH, KW, m);
            if (at != SIZE_MAX)
                dxp[base + at] += dyp[oh * WO + ow];
        }
}

static void maxpool_backward_planes(const nn_pool_geom *g, const float *x, const float *y,
                                    const float *dy, float *dx, size_t p0, size_t p1)
{
    const size_t HI = (size_t)g->h_in, WI = (size_t)g->w_in;
    const size_t HO = (size_t)g->h_out, WO = (size_t)g->w_out;
    const size_t SH = (size_t)g->stride_h, SW = (size_t)g->stride_w;
    const size_t KH = (size_t)g->k_h, KW = (size_t)g->k_w;
    for (size_t plane = p0; plane < p1; plane++) {
        const float *xp = x + plane * HI * WI;
        const float *yp = y + plane * HO * WO, *dyp = dy + plane * HO * WO;
        float *dxp = dx + plane * HI * WI;
        if (KH == 2 && KW == 2 && SH == 2 && SW == 2) {
            backward_plane_2x2(g, xp, yp, dyp, dxp);
            continue;
        }
        memset(dxp, 0, HI * WI * sizeof *dxp);
        if (SH >= KH && SW >= KW)
            backward_plane_disjoint(g, xp, yp, dyp, dxp);
        else
            backward_plane_overlapping(g, xp, yp, dyp, dxp);
    }
}

typedef struct pool_task {
    const nn_pool_geom *g;
    const float *x, *y, *dy;
    float *out;     /* y for forward, dx for backward */
    size_t planes;
    int items;
} pool_task;

static void maxpool_forward_item(void *ctx, int item, int part)
{
    const pool_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_split_range(t->planes, item, t->items, 1, &lo, &hi);
    maxpool_forward_planes(t->g, t->x, t->out, lo, hi);
}

static void maxpool_backward_item(void *ctx, int item, int part)
{
    const pool_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_split_range(t->planes, item, t->items, 1, &lo, &hi);
    maxpool_backward_planes(t->g, t->x, t->y, t->dy, t->out, lo, hi);
}

/* items of about EW_BLOCK input elements; cost: an input element's time
 * against a plain copy's, which sets how many threads pay */
static void pool_run_items(nn_backend *b, pool_task *t, item_fn fn, double cost)
{
    const nn_pool_geom *g = t->g;
    double elems = (double)g->n * g->c * g->h_in * g->w_in;
    t->planes = (size_t)g->n * (size_t)g->c;
    double threads = nn_cpu_threads_for(b, elems * cost, PAR_MIN_ELEMS);
    /* at least one item per thread when the work pays for them */
    double items = elems / EW_BLOCK < threads ? threads : elems / EW_BLOCK;
    t->items = items > (double)t->planes ? (int)t->planes : (int)items;
    nn_cpu_par_for(b, (int)threads, t->items, fn, t);
}

int nn_cpu_maxpool2d_forward(nn_backend *b, const nn_pool_geom *g,
                             const float *x,   /* (n, c, h_in, w_in) */
                             float *y)         /* (n, c, h_out, w_out) */
{
    if (pool_check(b, "maxpool2d_forward", g) != 0)
        return -1;
    pool_task t = { .g = g, .x = x, .out = y };
    pool_run_items(b, &t, maxpool_forward_item, 1.0);
    return 0;
}

int nn_cpu_maxpool2d_backward(nn_backend *b, const nn_pool_geom *g,
                              const float *x, const float *y, const float *dy,
                              float *dx)
{
    if (pool_check(b, "maxpool2d_backward", g) != 0)
        return -1;
    pool_task t = { .g = g, .x = x, .y = y, .dy = dy, .out = dx };
    /* the gradient reads x, y and dy and writes dx: 2.8 times the forward's
     * time at LeNet's first pool (bench/opbench 256) */
    pool_run_items(b, &t, maxpool_backward_item, 2.8);
    return 0;
}

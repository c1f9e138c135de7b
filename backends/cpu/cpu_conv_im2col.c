/* backends/cpu/cpu_conv_im2col.c - the im2col + sgemm convolution path of the
 * fast CPU backend (cpu_conv.c chooses it for any geometry the direct kernels
 * do not take), over chunks of samples or tiles of rows.
 *
 * Per chunk, an im2col matrix
 *   col (K, L),  K = c_in k_h k_w,  L = its output positions
 * and one sgemm per product:
 *   forward   y   (c_out, L)  = w (c_out, K) . col
 *   filter    dw (c_out, K)  += dy (c_out, L) . col^T
 *   data      col (K, L)      = w^T . dy, then col2im into dx
 * The chunk is sized for the cache (COL_TARGET_FLOATS of col):
 *  - small images (LeNet's second convolution, the conv1d presets) batch
 *    nb samples into one gemm, so 16 x 100 x 150 per sample becomes
 *    16 x 400 x 150 and the conv1d's 8 x 16 x 3 becomes 8 x 21840 x 3. y and
 *    dy are then staged through buf, in (c_out, sample, HW) order;
 *  - a sample whose col alone is over the target (16 channels, 5x5 kernel,
 *    20x20 output) is cut into tiles of output rows, each a gemm writing
 *    straight into y's rows; this bounds the workspace for large images.
 *    (LeNet's first convolution, 75 x 784 = 230 KiB per sample, stays whole:
 *    cutting it in two measured no faster.)
 * Forward items are chunks (or tiles); backward items are CONV_SLOTS runs of
 * consecutive chunks, each summing its own partial dw and dbias, added up in
 * slot order at the end. A 1x1 / stride 1 / unpadded convolution of one
 * sample per chunk skips im2col: x itself is the column matrix.
 *
 * Workspace: per thread col (+ buf), then per slot dw + dbias.
 */
#include "cpu_blis.h"
#include "cpu_internal.h"

#include <string.h>

/* Target size of one im2col chunk in floats (256 KiB, half a core's L2), so
 * that the gemm reads the columns im2col has just written from cache.
 * (Overridable at build time only so that the tests can force every path.) */
#ifndef COL_TARGET_FLOATS
#define COL_TARGET_FLOATS 65536
#endif

typedef struct conv_plan {
    size_t K, HW;
    int threads;        /* threads taking part */
    int nb;             /* samples per chunk */
    int chunks;         /* ceil(n / nb) */
    int rows;           /* output rows per tile (h_out: no tiling) */
    int tiles;          /* ceil(h_out / rows); > 1 only when nb = 1 */
    int slots;          /* backward items: min(chunks, CONV_SLOTS) */
    int direct;         /* 1x1 / stride 1 / no pad, one sample: no im2col */
    size_t col_floats;  /* per thread: K nb rows w_out, or 0 */
    size_t buf_floats;  /* per thread: c_out nb HW when nb > 1, else 0 */
    size_t thread_stride;
    size_t slot_floats; /* per slot: dw (c_out K) + dbias (c_out) */
    size_t slot_stride;
} conv_plan;

/* A pure function of the geometry and the thread count, so that the
 * workspace size and the operations agree. */
static conv_plan conv_plan_for(const nn_backend *b, const nn_conv_geom *g)
{
    conv_plan p;
    const size_t WO = (size_t)g->w_out, HO = (size_t)g->h_out;
    p.K = (size_t)g->c_in * (size_t)g->k_h * (size_t)g->k_w;
    p.HW = HO * WO;
    double macs = (double)g->n * (double)g->c_out * (double)p.K * (double)p.HW;
    p.threads = nn_cpu_threads_for(b, macs, PAR_MIN_MACS);
    p.direct = g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 &&
               g->pad_h == 0 && g->pad_w == 0;
    size_t fit = COL_TARGET_FLOATS / (p.K * p.HW);
    if (fit >= 2 && g->n >= 2) {
        /* batch samples, but leave every thread a chunk */
        if (p.threads > g->n)
            p.threads = g->n;
        size_t per_thread = ((size_t)g->n + (size_t)p.threads - 1) / (size_t)p.threads;
        p.nb = (int)(fit < per_thread ? fit : per_thread);
        if (p.nb > 1)
            p.direct = 0;   /* batched: im2col is the transposing copy */
    } else {
        p.nb = 1;
    }
    p.chunks = (g->n + p.nb - 1) / p.nb;
    p.rows = (int)HO;
    if (p.nb == 1 && !p.direct && p.K * p.HW > COL_TARGET_FLOATS) {
        size_t rows = COL_TARGET_FLOATS / (p.K * WO);
        p.rows = rows < 1 ? 1 : (int)rows;
    }
    p.tiles = (g->h_out + p.rows - 1) / p.rows;
    if (p.threads > p.chunks * p.tiles)
        p.threads = p.chunks * p.tiles;
    p.slots = p.chunks < CONV_SLOTS ? p.chunks : CONV_SLOTS;
    p.col_floats = p.direct ? 0 : nn_cpu_round16(p.K * (size_t)p.nb * (size_t)p.rows * WO);
    p.buf_floats = p.nb > 1 ? nn_cpu_round16((size_t)g->c_out * (size_t)p.nb * p.HW) : 0;
    p.thread_stride = p.col_floats + p.buf_floats;
    p.slot_floats = (size_t)g->c_out * p.K + (size_t)g->c_out;
    p.slot_stride = nn_cpu_round16(p.slot_floats);
    return p;
}

static size_t conv_ws_floats(const conv_plan *p)
{
    return (size_t)p->threads * p->thread_stride + (size_t)p->slots * p->slot_stride;
}

/* Copies and zero-fills of short runs (one output row: 28 floats in LeNet).
 * A memcpy call per row costs more than the copy, so whole 8- and 4-float
 * blocks go through fixed-size memcpy, which the compiler inlines as moves. */
static inline void copy_run(float *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        memcpy(d + i, s + i, 8 * sizeof *d);
    if (n & 4) {
        memcpy(d + i, s + i, 4 * sizeof *d);
        i += 4;
    }
    if (n & 2) {
        memcpy(d + i, s + i, 2 * sizeof *d);
        i += 2;
    }
    if (n & 1)
        d[i] = s[i];
}

static inline void zero_run(float *d, size_t n)
{
    static const float zeros[8];
    copy_run(d, zeros, n < 8 ? n : 0);
    if (n >= 8)
        memset(d, 0, n * sizeof *d);
}

/* The output columns [ow0, ow1) whose input column ow*sw + off lies inside
 * [0, w_in), off = kw - pad_w. */
static inline void valid_cols(int w_in, int w_out, int sw, int off, int *ow0, int *ow1)
{
    int lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
    int hi = w_in - 1 - off < 0 ? 0 : (w_in - 1 - off) / sw + 1;
    if (hi > w_out)
        hi = w_out;
    if (lo > hi)
        lo = hi;
    *ow0 = lo;
    *ow1 = hi;
}

/* The im2col of output rows [r0, r1) of samples x[0 .. nb) (each
 * (c_in, h_in, w_in)) into col (K, nb*R*w_out), R = r1 - r0: row (ci, kh, kw),
 * column s*R*w_out + (oh - r0)*w_out + ow. */
static void im2col(const nn_conv_geom *g, const float *x, int nb, int r0, int r1, float *col)
{
    const int WO = g->w_out, HI = g->h_in, WI = g->w_in;
    const int sh = g->stride_h, sw = g->stride_w;
    const size_t RW = (size_t)(r1 - r0) * (size_t)WO, ld = (size_t)nb * RW;
    const size_t plane = (size_t)HI * (size_t)WI, sample = (size_t)g->c_in * plane;
    const size_t step = (size_t)sh * (size_t)WI;
    size_t row = 0;
    for (int ci = 0; ci < g->c_in; ci++)
        for (int kh = 0; kh < g->k_h; kh++)
            for (int kw = 0; kw < g->k_w; kw++, row++) {
                /* output rows [oh0, oh1) and columns [ow0, ow1) read inside the
                 * image; the rest of the row is the zero padding */
                const int offh = kh - g->pad_h, off = kw - g->pad_w;
                int oh0, oh1, ow0, ow1;
                valid_cols(HI, g->h_out, sh, offh, &oh0, &oh1);
                valid_cols(WI, WO, sw, off, &ow0, &ow1);
                oh0 = oh0 < r0 ? r0 : oh0 > r1 ? r1 : oh0;
                oh1 = oh1 > r1 ? r1 : oh1 < oh0 ? oh0 : oh1;
                const int full = sw == 1 && ow0 == 0 && ow1 == WO;
                for (int s = 0; s < nb; s++) {
                    float *dst = col + row * ld + (size_t)s * RW;
                    if (oh0 > r0)
                        zero_run(dst, (size_t)(oh0 - r0) * (size_t)WO);
                    if (oh1 < r1)
                        zero_run(dst + (size_t)(oh1 - r0) * (size_t)WO,
                                 (size_t)(r1 - oh1) * (size_t)WO);
                    if (oh1 <= oh0)
                        continue;
                    dst += (size_t)(oh0 - r0) * (size_t)WO;
                    /* input row oh*sh + offh, column ow*sw + off */
                    const float *src = x + (size_t)s * sample + (size_t)ci * plane +
                                       (size_t)(oh0 * sh + offh) * (size_t)WI;
                    if (full) {
                        for (int oh = oh0; oh < oh1; oh++, dst += WO, src += step)
                            copy_run(dst, src + off, (size_t)WO);
                        continue;
                    }
                    for (int oh = oh0; oh < oh1; oh++, dst += WO, src += step) {
                        if (ow0 > 0)
                            zero_run(dst, (size_t)ow0);
                        if (sw == 1)
                            copy_run(dst + ow0, src + ow0 + off, (size_t)(ow1 - ow0));
                        else
                            for (int ow = ow0; ow < ow1; ow++)
                                dst[ow] = src[ow * sw + off];
                        if (ow1 < WO)
                            zero_run(dst + ow1, (size_t)(WO - ow1));
                    }
                }
            }
}

/* The adjoint of im2col: adds col's entries (laid out as above) into dx at
 * their input positions. dx is not cleared here. */
static void col2im(const nn_conv_geom *g, const float *col, int nb, int r0, int r1, float *dx)
{
    const int WO = g->w_out, HI = g->h_in, WI = g->w_in;
    const int sh = g->stride_h, sw = g->stride_w;
    const size_t RW = (size_t)(r1 - r0) * (size_t)WO, ld = (size_t)nb * RW;
    const size_t plane = (size_t)HI * (size_t)WI, sample = (size_t)g->c_in * plane;
    const size_t step = (size_t)sh * (size_t)WI;
    size_t row = 0;
    for (int ci = 0; ci < g->c_in; ci++)
        for (int kh = 0; kh < g->k_h; kh++)
            for (int kw = 0; kw < g->k_w; kw++, row++) {
                const int offh = kh - g->pad_h, off = kw - g->pad_w;
                int oh0, oh1, ow0, ow1;
                valid_cols(HI, g->h_out, sh, offh, &oh0, &oh1);
                valid_cols(WI, WO, sw, off, &ow0, &ow1);
                if (oh0 < r0)
                    oh0 = r0;
                if (oh1 > r1)
                    oh1 = r1;
                if (oh1 <= oh0 || ow1 <= ow0)
                    continue;
                for (int s = 0; s < nb; s++) {
                    const float *src = col + row * ld + (size_t)s * RW +
                                       (size_t)(oh0 - r0) * (size_t)WO;
                    float *dst = dx + (size_t)s * sample + (size_t)ci * plane +
                                 (size_t)(oh0 * sh + offh) * (size_t)WI;
                    for (int oh = oh0; oh < oh1; oh++, src += WO, dst += step) {
                        if (sw == 1)
                            nn_cpu_add_run(dst + ow0 + off, src + ow0, (size_t)(ow1 - ow0));
                        else
                            for (int ow = ow0; ow < ow1; ow++)
                                dst[ow * sw + off] += src[ow];
                    }
                }
            }
}

typedef struct conv_task {
    const nn_conv_geom *g;
    conv_plan plan;
    const float *x, *w, *bias, *dy;
    float *y, *dx, *dw, *dbias;
    float *ws;
    int lib[NN_BLAS_PRODUCTS];   /* enum nn_blas_lib of each product (cpu_blis.h) */
} conv_task;

/* c (m, n) = alpha op(a) op(b) + beta c, one call of product `which`'s library */
static void conv_gemm(const conv_task *t, int which, int ta, int tb, int m, int n, int k,
                      const float *a, int lda, const float *b, int ldb, float beta, float *c,
                      int ldc)
{
    const nn_blas_shape s = { .m = m, .n = n, .k = k, .ta = ta, .tb = tb };
    nn_blas_sgemm(t->lib[which], &s, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

/* Forward of item = chunk * tiles + tile. */
static void conv_forward_item(void *ctx, int item, int part)
{
    const conv_task *t = ctx;
    const nn_conv_geom *g = t->g;
    const conv_plan *p = &t->plan;
    float *col = t->ws + (size_t)part * p->thread_stride;  /* (K, L) */
    float *buf = col + p->col_floats;                       /* (c_out, nb*HW) */
    const size_t CO = (size_t)g->c_out, HW = p->HW, WO = (size_t)g->w_out;
    const size_t in_sample = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
    const size_t out_sample = CO * HW;
    const size_t s = (size_t)(item / p->tiles) * (size_t)p->nb;
    const int r0 = item % p->tiles * p->rows;
    const int r1 = r0 + p->rows < g->h_out ? r0 + p->rows : g->h_out;
    const int nb = (int)((size_t)g->n - s < (size_t)p->nb ? (size_t)g->n - s : (size_t)p->nb);
    const float *xs = t->x + s * in_sample;
    const float *cols = xs;
    if (!p->direct) {
        im2col(g, xs, nb, r0, r1, col);
        cols = col;
    }
    if (nb == 1) {
        /* straight into rows [r0, r1) of y, the bias preloaded */
        const size_t L = (size_t)(r1 - r0) * WO;
        float *ys = t->y + s * out_sample + (size_t)r0 * WO;
        if (t->bias)
            for (size_t co = 0; co < CO; co++)
                for (size_t i = 0; i < L; i++)
                    ys[co * HW + i] = t->bias[co];
        conv_gemm(t, NN_BLAS_FWD, 0, 0, (int)CO, (int)L, (int)p->K, t->w, (int)p->K, cols,
                  (int)L, t->bias ? 1.0f : 0.0f, ys, (int)HW);
        return;
    }
    const size_t L = (size_t)nb * HW;
    conv_gemm(t, NN_BLAS_FWD, 0, 0, (int)CO, (int)L, (int)p->K, t->w, (int)p->K, cols, (int)L,
              0.0f, buf, (int)L);
    /* buf (c_out, nb, HW) -> y (nb, c_out, HW), adding the bias */
    for (int j = 0; j < nb; j++) {
        float *ys = t->y + (s + (size_t)j) * out_sample;
        for (size_t co = 0; co < CO; co++) {
            const float *src = buf + co * L + (size_t)j * HW;
            float *dst = ys + co * HW;
            const float bv = t->bias ? t->bias[co] : 0.0f;
            for (size_t i = 0; i < HW; i++)
                dst[i] = src[i] + bv;
        }
    }
}

/* What one backward item works on besides the task: its thread's col and
 * buf, its slot's partial dw (the first product overwrites it: beta 0). */
typedef struct conv_bwd_scratch {
    float *col;         /* (K, L) */
    float *buf;         /* dyT (c_out, nb*HW) */
    float *dw_slot;     /* (c_out, K) */
    int first;
} conv_bwd_scratch;

/* dw_slot (+)= a (c_out, L) . b^T (L, K), a and b with leading dimensions lda, ldb */
static void dw_product(const conv_task *t, conv_bwd_scratch *sc, const float *a, int lda,
                       const float *b, int ldb, size_t L)
{
    const int CO = t->g->c_out, K = (int)t->plan.K;
    conv_gemm(t, NN_BLAS_DW, 0, 1, CO, K, (int)L, a, lda, b, ldb, sc->first ? 0.0f : 1.0f,
              sc->dw_slot, K);
    sc->first = 0;
}

/* nb > 1 samples from s: dy (nb, c_out, HW) -> dyT (c_out, nb, HW), one gemm each */
static void backward_batched(const conv_task *t, conv_bwd_scratch *sc, size_t s, int nb)
{
    const nn_conv_geom *g = t->g;
    const size_t CO = (size_t)g->c_out, HW = t->plan.HW, K = t->plan.K;
    const size_t in_sample = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
    const size_t out_sample = CO * HW;
    const float *dys = t->dy + s * out_sample;
    const size_t L = (size_t)nb * HW;
    for (int j = 0; j < nb; j++)
        for (size_t co = 0; co < CO; co++)
            memcpy(sc->buf + co * L + (size_t)j * HW, dys + (size_t)j * out_sample + co * HW,
                   HW * sizeof *sc->buf);
    if (t->dw) {
        im2col(g, t->x + s * in_sample, nb, 0, g->h_out, sc->col);
        dw_product(t, sc, sc->buf, (int)L, sc->col, (int)L, L);
    }
    if (t->dx) {
        float *dxs = t->dx + s * in_sample;
        conv_gemm(t, NN_BLAS_DX, 1, 0, (int)K, (int)L, (int)CO, t->w, (int)K, sc->buf, (int)L,
                  0.0f, sc->col, (int)L);
        memset(dxs, 0, (size_t)nb * in_sample * sizeof *dxs);
        col2im(g, sc->col, nb, 0, g->h_out, dxs);
    }
}

/* One sample s of a 1x1 convolution: dw += dy_s . x_s^T, dx_s = w^T . dy_s */
static void backward_1x1(const conv_task *t, conv_bwd_scratch *sc, size_t s)
{
    const nn_conv_geom *g = t->g;
    const size_t CO = (size_t)g->c_out, HW = t->plan.HW, K = t->plan.K;
    const size_t in_sample = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
    const float *dys = t->dy + s * CO * HW;
    if (t->dw)
        dw_product(t, sc, dys, (int)HW, t->x + s * in_sample, (int)HW, HW);
    if (t->dx)
        conv_gemm(t, NN_BLAS_DX, 1, 0, (int)K, (int)HW, (int)CO, t->w, (int)K, dys, (int)HW,
                  0.0f, t->dx + s * in_sample, (int)HW);
}

/* One sample s in tiles of rows: dy's rows [r0, r1) are a (c_out, L) block of
 * dy_s with leading dimension HW */
static void backward_tiled(const conv_task *t, conv_bwd_scratch *sc, size_t s)
{
    const nn_conv_geom *g = t->g;
    const conv_plan *p = &t->plan;
    const size_t CO = (size_t)g->c_out, HW = p->HW, K = p->K, WO = (size_t)g->w_out;
    const size_t in_sample = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
    const float *xs = t->x + s * in_sample;
    const float *dys = t->dy + s * CO * HW;
    float *dxs = t->dx ? t->dx + s * in_sample : NULL;
    if (dxs)
        memset(dxs, 0, in_sample * sizeof *dxs);
    for (int r0 = 0; r0 < g->h_out; r0 += p->rows) {
        const int r1 = r0 + p->rows < g->h_out ? r0 + p->rows : g->h_out;
        const size_t L = (size_t)(r1 - r0) * WO;
        const float *dyr = dys + (size_t)r0 * WO;
        if (t->dw) {
            im2col(g, xs, 1, r0, r1, sc->col);
            dw_product(t, sc, dyr, (int)HW, sc->col, (int)L, L);
        }
        if (dxs) {
            conv_gemm(t, NN_BLAS_DX, 1, 0, (int)K, (int)L, (int)CO, t->w, (int)K, dyr,
                      (int)HW, 0.0f, sc->col, (int)L);
            col2im(g, sc->col, 1, r0, r1, dxs);
        }
    }
}

/* Backward of slot `item`: its chunks' dx, and its partial dw and dbias. */
static void conv_backward_item(void *ctx, int item, int part)
{
    const conv_task *t = ctx;
    const nn_conv_geom *g = t->g;
    const conv_plan *p = &t->plan;
    conv_bwd_scratch sc;
    sc.col = t->ws + (size_t)part * p->thread_stride;
    sc.buf = sc.col + p->col_floats;
    sc.dw_slot = t->ws + (size_t)p->threads * p->thread_stride + (size_t)item * p->slot_stride;
    sc.first = 1;
    float *db_slot = sc.dw_slot + (size_t)g->c_out * p->K;   /* (c_out) */
    const size_t CO = (size_t)g->c_out, HW = p->HW, out_sample = CO * HW;
    size_t c0, c1;
    nn_cpu_split_range((size_t)p->chunks, item, p->slots, 1, &c0, &c1);
    const size_t s0 = c0 * (size_t)p->nb;
    const size_t s1 = c1 * (size_t)p->nb < (size_t)g->n ? c1 * (size_t)p->nb : (size_t)g->n;

    if (t->dbias) {
        /* per sample and channel in float (short sums), across samples in double */
        for (size_t co = 0; co < CO; co++) {
            double acc = 0.0;
            for (size_t s = s0; s < s1; s++)
                acc += nn_cpu_sum_run(t->dy + s * out_sample + co * HW, HW);
            db_slot[co] = (float)acc;
        }
    }
    for (size_t s = s0; s < s1; s += (size_t)p->nb) {
        const int nb = (int)(s1 - s < (size_t)p->nb ? s1 - s : (size_t)p->nb);
        if (nb > 1)
            backward_batched(t, &sc, s, nb);
        else if (p->direct)
            backward_1x1(t, &sc, s);
        else
            backward_tiled(t, &sc, s);
    }
}

size_t nn_cpu_im2col_workspace(const nn_backend *b, const nn_conv_geom *g)
{
    conv_plan p = conv_plan_for(b, g);
    return conv_ws_floats(&p) * sizeof(float);
}

/* Each product's library, looked up by the layer's whole product at its
 * batch (nn_blas_conv_shapes), every chunk's call on the same one. */
static void conv_pick_libs(const nn_backend *b, conv_task *t)
{
    nn_blas_shape s[NN_BLAS_PRODUCTS];
    nn_blas_conv_shapes(t->g->n, t->g->c_out, (int)t->plan.HW, (int)t->plan.K, s);
    for (int i = 0; i < NN_BLAS_PRODUCTS; i++)
        t->lib[i] = nn_blas_pick(&s[i], b->threads_now);
}

void nn_cpu_im2col_forward(nn_backend *b, const nn_conv_geom *g, const float *x, const float *w,
                           const float *bias, float *y, void *ws)
{
    conv_task t = { .g = g, .plan = conv_plan_for(b, g), .x = x, .w = w, .bias = bias, .y = y,
                    .ws = ws };
    conv_pick_libs(b, &t);
    nn_cpu_par_for(b, t.plan.threads, t.plan.chunks * t.plan.tiles, conv_forward_item, &t);
}

void nn_cpu_im2col_backward(nn_backend *b, const nn_conv_geom *g, const float *x,
                            const float *w, const float *dy, float *dx, float *dw,
                            float *dbias, void *ws)
{
    conv_task t = { .g = g, .plan = conv_plan_for(b, g), .x = x, .w = w, .dy = dy, .dx = dx,
                    .dw = dw, .dbias = dbias, .ws = ws };
    const conv_plan *p = &t.plan;
    conv_pick_libs(b, &t);
    nn_cpu_par_for(b, p->threads, p->slots, conv_backward_item, &t);

    nn_cpu_sum_conv_slots(t.ws + (size_t)p->threads * p->thread_stride, p->slots,
                          p->slot_stride, (size_t)g->c_out, p->K, dw, dbias);
}

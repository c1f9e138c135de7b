/* backends/cpu/cpu_conv_direct_chan.c - the direct convolution's channel form
 * (cpu_conv_direct.h): the forward and the weight gradient vectorised over
 * 16 output channels instead of 16 positions, for geometries whose wide
 * layout wastes much of its work.
 *
 * Why: the position form computes every output row at the padded input's
 * width, rounded up to whole blocks of 16. LeNet's second convolution (a
 * 10 x 10 output of a 14 x 14 input) computes 144 positions for 100 real
 * ones, 31% of its forward and weight gradient thrown away. With 16 output
 * channels a block of 6 positions x 2 vectors of 8 channels is the same 12
 * AVX2 accumulators, fed per tap by two weight loads and six broadcast
 * inputs (the position form: two input loads and six broadcast weights),
 * and only real positions are computed: each block's 6 positions may lie
 * anywhere, through a table of their offsets in the padded input.
 *
 * The weights are read transposed, (K, c_out); outputs come out and output
 * gradients go in position-major, (positions, c_out), and are transposed
 * to and from the NCHW tensors by cpu_conv_direct_run.c. */
#include "cpu_conv_direct.h"
#include "cpu_internal.h"

/* Channels per block (two AVX2 vectors) and positions or taps per block
 * (6 x 2 = 12 accumulators, as the position form). */
#define CB 16
#define PB 6

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))
#define KERNEL static inline __attribute__((always_inline, target("avx2,fma")))

/* out[j][0..16) (rows ld_out apart) = sum over taps r < kr of
 * in[at[j] + offs[r]] * w[r][0..16) (rows ld_w apart), for positions j < np. */
KERNEL void chan_fwd_block(const int np, size_t kr, const float *w, size_t ld_w,
                           const int *offs, const float *in, const int *at, float *out,
                           size_t ld_out)
{
    __m256 a0[PB], a1[PB];
    const float *src[PB];
#pragma GCC unroll 6
    for (int j = 0; j < np; j++) {
        a0[j] = a1[j] = _mm256_setzero_ps();
        src[j] = in + at[j];
    }
    for (size_t r = 0; r < kr; r++) {
        const __m256 w0 = _mm256_loadu_ps(w + r * ld_w), w1 = _mm256_loadu_ps(w + r * ld_w + 8);
        const int o = offs[r];
#pragma GCC unroll 6
        for (int j = 0; j < np; j++) {
            const __m256 xv = _mm256_broadcast_ss(src[j] + o);
            a0[j] = _mm256_fmadd_ps(xv, w0, a0[j]);
            a1[j] = _mm256_fmadd_ps(xv, w1, a1[j]);
        }
    }
#pragma GCC unroll 6
    for (int j = 0; j < np; j++) {
        _mm256_storeu_ps(out + (size_t)j * ld_out, a0[j]);
        _mm256_storeu_ps(out + (size_t)j * ld_out + 8, a1[j]);
    }
}

AVX2 void nn_direct_chan_forward(const nn_conv_geom *g, const dconv_dims *d, const float *wc,
                                 const int *offs, const int *at, const float *xp, float *yc,
                                 size_t p0, size_t p1)
{
    const size_t CO = (size_t)g->c_out;
    for (size_t c0 = 0; c0 < CO; c0 += CB)
        for (size_t p = p0; p < p1; p += PB) {
            const float *w = wc + c0;
            float *out = yc + p * CO + c0;
            switch (p1 - p < PB ? (int)(p1 - p) : PB) {
#define FWD(NP) chan_fwd_block(NP, d->K, w, CO, offs, xp, at + p, out, CO)
            case 6: FWD(6); break;
            case 5: FWD(5); break;
            case 4: FWD(4); break;
            case 3: FWD(3); break;
            case 2: FWD(2); break;
            default: FWD(1); break;
#undef FWD
            }
        }
}

/* acc[j][0..16) (rows ld_acc apart) += sum over positions p < np of
 * in[at[p] + o[j]] * dy[p][0..16) (rows ld_dy apart), for taps j < nt. */
KERNEL void chan_wgrad_block(const int nt, const int *o, const float *in, const int *at,
                             size_t np, const float *dy, size_t ld_dy, float *acc, size_t ld_acc)
{
    __m256 a0[PB], a1[PB];
#pragma GCC unroll 6
    for (int j = 0; j < nt; j++)
        a0[j] = a1[j] = _mm256_setzero_ps();
    for (size_t p = 0; p < np; p++) {
        const __m256 d0 = _mm256_loadu_ps(dy + p * ld_dy), d1 = _mm256_loadu_ps(dy + p * ld_dy + 8);
        const float *src = in + at[p];
#pragma GCC unroll 6
        for (int j = 0; j < nt; j++) {
            const __m256 xv = _mm256_broadcast_ss(src + o[j]);
            a0[j] = _mm256_fmadd_ps(xv, d0, a0[j]);
            a1[j] = _mm256_fmadd_ps(xv, d1, a1[j]);
        }
    }
#pragma GCC unroll 6
    for (int j = 0; j < nt; j++) {
        float *aj = acc + (size_t)j * ld_acc;
        _mm256_storeu_ps(aj, _mm256_add_ps(_mm256_loadu_ps(aj), a0[j]));
        _mm256_storeu_ps(aj + 8, _mm256_add_ps(_mm256_loadu_ps(aj + 8), a1[j]));
    }
}

AVX2 void nn_direct_chan_weight_grad(const nn_conv_geom *g, const dconv_dims *d, const int *offs,
                                     const int *at, const float *xps, const float *dycs, int nb,
                                     float *dwc)
{
    const size_t CO = (size_t)g->c_out, HW = (size_t)g->h_out * (size_t)g->w_out;
    for (int s = 0; s < nb; s++) {
        const float *xp = xps + (size_t)s * d->xp_floats;
        const float *dyc = dycs + (size_t)s * HW * CO;
        for (size_t c0 = 0; c0 < CO; c0 += CB)
            for (size_t r = 0; r < d->K; r += PB) {
                float *acc = dwc + r * CO + c0;
                switch (d->K - r < PB ? (int)(d->K - r) : PB) {
#define WG(NT) chan_wgrad_block(NT, offs + r, xp, at, HW, dyc + c0, CO, acc, CO)
                case 6: WG(6); break;
                case 5: WG(5); break;
                case 4: WG(4); break;
                case 3: WG(3); break;
                case 2: WG(2); break;
                default: WG(1); break;
#undef WG
                }
            }
    }
}

#else /* no AVX2 here: nn_direct_conv_usable() is 0, so these never run */

#include <stdlib.h>

void nn_direct_chan_forward(const nn_conv_geom *g, const dconv_dims *d, const float *wc,
                            const int *offs, const int *at, const float *xp, float *yc,
                            size_t p0, size_t p1)
{
    (void)g, (void)d, (void)wc, (void)offs, (void)at, (void)xp, (void)yc, (void)p0, (void)p1;
    abort();
}

void nn_direct_chan_weight_grad(const nn_conv_geom *g, const dconv_dims *d, const int *offs,
                                const int *at, const float *xps, const float *dycs, int nb,
                                float *dwc)
{
    (void)g, (void)d, (void)offs, (void)at, (void)xps, (void)dycs, (void)nb, (void)dwc;
    abort();
}

#endif

int nn_direct_conv_chan(const nn_conv_geom *g, const dconv_dims *d)
{
    int enabled = nn_cpu_switch_on(NN_CPU_SW_CONV_CHAN);
    /* whole blocks of 16 channels, and a wide layout that wastes over a
     * tenth of the position form's work */
    return enabled && g->c_out % CB == 0 &&
           (double)g->h_out * g->w_out * 1.1 < (double)d->lw_pad;
}

void nn_direct_chan_tables(const nn_conv_geom *g, const dconv_dims *d, const float *w, int *at,
                           float *wc)
{
    size_t p = 0;
    for (int oh = 0; oh < g->h_out; oh++)
        for (int ow = 0; ow < g->w_out; ow++)
            at[p++] = oh * d->pw + ow;
    const size_t CO = (size_t)g->c_out;
    for (size_t co = 0; co < CO; co++)
        for (size_t r = 0; r < d->K; r++)
            wc[r * CO + co] = w[co * d->K + r];
}

void nn_direct_chan_store(const nn_conv_geom *g, const float *yc, const float *bias, float *y,
                          size_t p0, size_t p1)
{
    const size_t CO = (size_t)g->c_out, HW = (size_t)g->h_out * (size_t)g->w_out;
    for (size_t co = 0; co < CO; co++) {
        const float bv = bias ? bias[co] : 0.0f;
        float *dst = y + co * HW;
        for (size_t p = p0; p < p1; p++)
            dst[p] = yc[p * CO + co] + bv;
    }
}

void nn_direct_chan_dy(const nn_conv_geom *g, const float *dy, float *dyc)
{
    const size_t CO = (size_t)g->c_out, HW = (size_t)g->h_out * (size_t)g->w_out;
    for (size_t p = 0; p < HW; p++)
        for (size_t co = 0; co < CO; co++)
            dyc[p * CO + co] = dy[co * HW + p];
}

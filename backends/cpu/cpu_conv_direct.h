/* backends/cpu/cpu_conv_direct.h - direct convolution kernels of the `cpu`
 * backend (run by cpu_conv_direct_run.c) for stride-1 convolutions with few
 * output channels, where im2col + sgemm wastes most of its time copying.
 *
 * Why: LeNet's first convolution is a 6 x 75 x 784 product per sample. The
 * im2col copy expands the 3 KiB input 25-fold, OpenBLAS then packs that copy
 * again, and its micro-kernel, built for 16-row blocks, runs 6 rows. Measured
 * on the 2-core EPYC (perf, batch 256): im2col 18% + packing 20% of the step,
 * and the convolutions at 24-64 GFLOP/s against 150 for a large sgemm.
 *
 * The trick that makes a direct kernel simple: compute every output row at
 * the full (padded) input width PW instead of w_out. Output position
 * q = oh*PW + ow then reads input position q + kh*PW + kw for tap (ci, kh, kw):
 * each tap is one contiguous, shifted run of the input, so a block of 16
 * outputs x up to 6 channels is 12 AVX2 accumulators fed by two unaligned
 * loads and six broadcasts per tap. The PW - w_out extra columns of every row
 * are computed and dropped (4 of 32 in LeNet's first layer).
 *
 * The same wide layout gives the weight gradient (a dot product of the wide
 * output gradient, zero in the extra columns, with each tap's shifted input
 * run) and the input gradient (the forward kernel run over a zero-margined
 * wide output gradient with transposed, flipped taps).
 *
 * The kernels use AVX2 and FMA, chosen at run time: nn_direct_conv_usable()
 * says whether this CPU has them and the geometry suits; otherwise the
 * backend keeps im2col + sgemm. Where the CPU also has AVX-512, the forward
 * and input-gradient taps and the weight gradient's sweeps run
 * cpu_avx512.c's twins: 16 positions a zmm register, blocks of 2 x 16 (a
 * last one of 16), the same wide layout and tables. */
#ifndef NNLAB_CPU_CONV_DIRECT_H
#define NNLAB_CPU_CONV_DIRECT_H

#include <stddef.h>

#include "backend.h"

/* Sizes, in floats, of one sample's areas in the wide layout. Every area is
 * a multiple of 16 floats, so consecutive samples stay 64-byte aligned. */
typedef struct dconv_dims {
    int ph, pw;             /* the padded input: h_in + 2 pad_h, w_in + 2 pad_w */
    size_t plane;           /* ph * pw */
    size_t K;               /* taps per output channel: c_in k_h k_w */
    size_t Kt;              /* taps per input channel of the input gradient: c_out k_h k_w */
    size_t lw;              /* wide output positions: h_out * pw */
    size_t lw_pad;          /* lw rounded up to a whole block of 16 outputs */
    size_t xp_floats;       /* padded input plus the tail the last block reads */
    size_t yw_floats;       /* wide output: c_out * lw_pad */
    size_t margin;          /* zeros before each channel of the output gradient */
    size_t dxp_plane;       /* one channel of the wide input gradient (plane rounded up) */
    size_t dyp_plane;       /* one channel of the margined output gradient */
    size_t dyp_floats;      /* c_out * dyp_plane */
    size_t dxp_floats;      /* c_in * dxp_plane */
    size_t dxs_floats;      /* the input gradient's scratch: dxp_floats, or the scatter's reach */
} dconv_dims;

/* Whether the direct kernels can and should run g: stride 1, a kernel larger
 * than 1 x 1 (those are a plain gemm already), few output channels, and a CPU
 * with AVX2 and FMA. */
int nn_direct_conv_usable(const nn_conv_geom *g);

void nn_direct_conv_dims(const nn_conv_geom *g, dconv_dims *d);

/* Whether the input gradient runs in scatter form here: every wide output
 * position's sums added into the input positions its taps reach (c_in k_h
 * k_w rows of c_out taps over lw_pad positions), instead of the gather form
 * (c_in rows of c_out k_h k_w taps over every position of the padded
 * plane, most of whose taps read the zero margins when the output is small
 * against the input: LeNet's second convolution gathers over 208 positions
 * for 100 outputs, scatters over 144). On the AVX2 path only, and where it
 * does less work; NNLAB_NO_DX_SCATTER=1 keeps the gather form (the parity
 * suite runs both). The AVX-512 path keeps its gather twin. */
int nn_direct_conv_dx_scatter(const nn_conv_geom *g, const dconv_dims *d);

/* The shared tables of one call, built once before the threads start:
 * offs (K entries), the forward taps' offsets into the padded input; and when
 * offs_t is not NULL, the gather form's input-gradient tables: offs_t (Kt),
 * its taps' offsets into the margined output gradient, and w_t (c_in x Kt),
 * the transposed weights. */
void nn_direct_conv_tables(const nn_conv_geom *g, const dconv_dims *d, const float *w,
                           int *offs, int *offs_t, float *w_t);

/* The scatter form's input-gradient tables (in place of the gather form's):
 * offs_t (c_out + K entries), where each channel's wide output gradient
 * starts in the margined layout, then where each row (kh, kw, ci) adds its
 * sums in the scratch; w_t (K x c_out), the weights in that row order. */
void nn_direct_conv_scatter_tables(const nn_conv_geom *g, const dconv_dims *d, const float *w,
                                   int *offs_t, float *w_t);

/* One sample's input (c_in, h_in, w_in) into the padded layout xp. */
void nn_direct_conv_pad_input(const nn_conv_geom *g, const dconv_dims *d, const float *x,
                              float *xp);

/* yw (c_out, lw_pad) = the wide outputs at positions [q0, q1) (multiples of
 * 16, q1 <= lw_pad), without bias. */
void nn_direct_conv_forward(const nn_conv_geom *g, const dconv_dims *d, const float *w,
                            const int *offs, const float *xp, float *yw, size_t q0, size_t q1);

/* The wide positions [q0, q1) (multiples of 16) that hold output rows
 * [oh0, oh1). */
void nn_direct_conv_rows(const dconv_dims *d, int oh0, int oh1, size_t *q0, size_t *q1);

/* Rows [oh0, oh1) of y (c_out, h_out, w_out) = the valid columns of yw plus
 * bias (or NULL). */
void nn_direct_conv_store(const nn_conv_geom *g, const dconv_dims *d, const float *yw,
                          const float *bias, float *y, int oh0, int oh1);

/* One sample's output gradient (c_out, h_out, w_out) into the margined wide
 * layout dyp (c_out, dyp_plane): each channel is `margin` zeros, the wide rows
 * (zero in the extra columns), then zeros. */
void nn_direct_conv_widen(const nn_conv_geom *g, const dconv_dims *d, const float *dy,
                          float *dyp);

/* Floats of the scratch nn_direct_conv_weight_grad needs (any alignment; 64 bytes is fastest). */
size_t nn_direct_conv_wgrad_floats(const nn_conv_geom *g, const dconv_dims *d);

/* dw (c_out, K) += the sum over nb samples of the dot products of the wide
 * output gradient's rows with each tap's shifted run of the padded input.
 * Samples lie d->xp_floats (xps) and d->dyp_floats (dyps) apart. Sums run in
 * 8 lanes per weight, in acc, and are added into dw once at the end. */
void nn_direct_conv_weight_grad(const nn_conv_geom *g, const dconv_dims *d, const int *offs,
                                const float *xps, const float *dyps, int nb, float *dw,
                                float *acc);

/* One sample's dx (c_in, h_in, w_in) from its margined output gradient dyp:
 * the transposed taps (gather or scatter form, as the tables were built)
 * into the scratch dxp (dxs_floats), then the unpadded interior into dx. */
void nn_direct_conv_input_grad(const nn_conv_geom *g, const dconv_dims *d, const float *w_t,
                               const int *offs_t, const float *dyp, float *dxp, float *dx);

/* ---- The channel form (cpu_conv_direct_chan.c) ----
 * The forward and the weight gradient vectorised over blocks of 16 output
 * channels, over the real output positions only: for geometries whose wide
 * layout computes many positions that are thrown away (LeNet's second
 * convolution: 144 for 100). Positions are numbered p = oh * w_out + ow;
 * at[p] = oh * pw + ow is where p's taps start in the padded input. */

/* Whether the forward and the weight gradient take the channel form here:
 * c_out a multiple of 16, the wide layout wasting over a tenth of the
 * position form's work, the AVX2 path (the AVX-512 path keeps its position
 * twins), and NNLAB_NO_CONV_CHAN unset (the parity suite runs both). */
int nn_direct_conv_chan(const nn_conv_geom *g, const dconv_dims *d);

/* at (h_out w_out entries) as above, and wc (K x c_out) = w transposed. */
void nn_direct_chan_tables(const nn_conv_geom *g, const dconv_dims *d, const float *w, int *at,
                           float *wc);

/* yc (positions, c_out) at positions [p0, p1) = the taps of the padded
 * input xp (offs: nn_direct_conv_tables's) times wc, without bias. */
void nn_direct_chan_forward(const nn_conv_geom *g, const dconv_dims *d, const float *wc,
                            const int *offs, const int *at, const float *xp, float *yc,
                            size_t p0, size_t p1);

/* Positions [p0, p1) of one sample's y (c_out, h_out, w_out) = yc + bias
 * (or NULL). */
void nn_direct_chan_store(const nn_conv_geom *g, const float *yc, const float *bias, float *y,
                          size_t p0, size_t p1);

/* One sample's output gradient (c_out, h_out w_out) into dyc (positions,
 * c_out). */
void nn_direct_chan_dy(const nn_conv_geom *g, const float *dy, float *dyc);

/* dwc (K x c_out) += the sum over nb samples (padded inputs d->xp_floats
 * apart, dyc areas h_out w_out c_out apart) of each tap's inputs times the
 * output gradient, over the real positions. */
void nn_direct_chan_weight_grad(const nn_conv_geom *g, const dconv_dims *d, const int *offs,
                                const int *at, const float *xps, const float *dycs, int nb,
                                float *dwc);

#endif

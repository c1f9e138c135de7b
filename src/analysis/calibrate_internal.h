/* src/analysis/calibrate_internal.h - what the measuring files of the
 * calibration share (calibrate.c: the main figures and the orchestration;
 * calibrate_sizes.c: the rate curves and the per-element costs): the
 * buffers every measurement uses and the sizes they are made for. Private
 * to src/analysis. */
#ifndef NNLAB_CALIBRATE_INTERNAL_H
#define NNLAB_CALIBRATE_INTERNAL_H

#include "backend.h"
#include "nnlab/calibrate.h"

#define GEMM_N 1024                  /* sgemm side: 2.1 GFLOP a call */
#define STREAM_FLOATS (8u << 20)     /* 32 MiB in, 32 MiB out: far beyond any cache */
#define UPLOAD_BYTES (64u << 20)
#define REPEAT 5

typedef struct bench_ctx {
    nn_backend *b;
    float *x, *y, *w;                /* device buffers */
    void *host;                      /* UPLOAD_BYTES of host memory */
} bench_ctx;

/* Rate curves of linear layers (at the presets' shapes, the 1024^3 sgemm
 * last) and of LeNet's first convolution, forward and backward; matrix_op_us
 * (a 1x1x1 product) on the way. 0, or -1 with the backend's last_error. */
int nn_cal_linear_curves(nn_backend *b, const bench_ctx *c, nn_calibration *out);
int nn_cal_conv_curves(nn_backend *b, const bench_ctx *c, nn_calibration *out);
/* Nanoseconds per element of every op that is not a product. */
int nn_cal_elem_costs(nn_backend *b, const bench_ctx *c, nn_calibration *out);

#endif

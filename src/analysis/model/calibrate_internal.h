/* src/analysis/model/calibrate_internal.h - what the measuring files of the
 * calibration share (calibrate.c: the main figures, the checks' second
 * measurement and the orchestration; calibrate_sizes.c: the rate curves
 * and the per-element costs; calibrate_timing.c: the clock and the timed
 * batches): the buffers every measurement uses and the sizes they are made
 * for. Private to src/analysis (and the tests). */
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

/* ---- timed batches (calibrate_timing.c) ------------------------------------------------ */

/* One call of what a figure times: 0, or -1 with the backend's last_error. */
typedef int (*nn_cal_call_fn)(nn_backend *b, const bench_ctx *c, const void *arg);

/* How a figure is timed. */
typedef struct nn_cal_timing {
    int host_clock;                  /* 1: the host's clock even where the device has its own
                                        (a round trip: what the host waits for is the figure) */
    int reps;                        /* timed batches; 0: NN_CAL_REPS */
    int min_calls;                   /* calls a batch holds at least (0: 1) */
} nn_cal_timing;

#define NN_CAL_REPS 3                /* timed batches of a figure, at least */
#define NN_CAL_DEVICE_BATCH_S 1e-3   /* a batch on the device's clock: 1 ms of device work */
#define NN_CAL_HOST_BATCH_S 5e-3     /* on the host's: long beside a scheduler's tick */
#define NN_CAL_SLOW_CALL_S 0.25      /* a call this slow is timed once */

/* Times call in batches of calls issued back to back: the batch grows
 * until it takes NN_CAL_*_BATCH_S, then t->reps batches are timed (fewer,
 * down to one, for calls slower than NN_CAL_SLOW_CALL_S). On the device's
 * clock (clock_start, clock_stop) when the backend has one and
 * !t->host_clock, else on the host's with a synchronize before the clock
 * stops. A device's first call is untimed (it pays its library's start-up).
 * *per_call_s: the best batch's seconds a call; *spread: the median batch
 * over the best, less one (0 with one batch). 0, or -1. */
int nn_cal_time(nn_backend *b, const bench_ctx *c, nn_cal_call_fn call, const void *arg, const nn_cal_timing *t,
                double *per_call_s, double *spread);

/* ---- fresh pages (calibrate_pages.c) ---------------------------------------------------- */

/* The host's fresh_page_us (the median of five 64 MiB blocks mapped, each
 * page touched once, unmapped; per 4 KiB: a larger page is counted in 4 KiB
 * parts, as the framework's bytes are) and vector_floats (from the CPU's
 * extensions). -1 when a mapping or unmapping fails: fresh_page_us stays 0, not
 * measured, and the framework way prices no fresh pages. */
int nn_cal_fresh_pages(nn_calibration *out);

/* ---- the curves and per-element costs (calibrate_sizes.c) ------------------------------ */

/* Rate curves of linear layers (at the presets' shapes, the 1024^3 sgemm
 * last) and of LeNet's first convolution, forward and backward; matrix_op_us
 * (a 1x1x1 product) and smallest_product_us on the way; their widest spread
 * into spread[NN_SPREAD_LINEAR], [NN_SPREAD_CONV]. 0, or -1 with the
 * backend's last_error. */
int nn_cal_linear_curves(nn_backend *b, const bench_ctx *c, nn_calibration *out);
int nn_cal_conv_curves(nn_backend *b, const bench_ctx *c, nn_calibration *out);
/* Nanoseconds per element of every op that is not a product. */
int nn_cal_elem_costs(nn_backend *b, const bench_ctx *c, nn_calibration *out);

/* ---- the whole calibration (calibrate.c) ----------------------------------------------- */

/* nn_calibrate on the backend of ops (the tests give a table with a fake
 * clock). */
int nn_calibrate_ops(const nn_backend_ops *ops, int threads, nn_calibration *out, nn_progress_fn progress,
                     void *ctx, char *err, size_t err_len);

#endif

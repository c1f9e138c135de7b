/* src/include/nnlab/calibrate.h - measures what a device can do, through the same op table
 * the training step uses, so that the cost model (cost.h) can turn FLOPs,
 * bytes and launches into predicted microseconds (explain.h).
 *
 * Results are cached per device under $XDG_CACHE_HOME/nnlab/ (default
 * ~/.cache/nnlab/) with the machine's description; a cache written on another
 * machine is ignored. */
#ifndef NNLAB_CALIBRATE_H
#define NNLAB_CALIBRATE_H

#include <stddef.h>

#include "nnlab/cost.h"
#include "util.h"

/* How fast one kind of operation runs as its size grows: small products run
 * far below the sgemm peak (packing, thread wake-ups, short loops), so a
 * step of small layers is priced at the rate measured near its own size.
 * Point i: one call of flops[i] FLOPs (counted as cost.h counts them) ran at
 * gflops[i] once the fixed cost of a call (matrix_op_us) is taken off. */
#define NN_CURVE_POINTS 8
#define NN_ELEM_CALIBRATION 262144

typedef struct nn_rate_curve {
    int n;                               /* points, by increasing flops; 0 = not measured */
    double flops[NN_CURVE_POINTS];
    double gflops[NN_CURVE_POINTS];
} nn_rate_curve;

/* The measurements whose spread is kept: each is repeated (at least 3
 * times, once for a call slower than a quarter second) and its figure is
 * the best repetition; a curve's or a table's spread is that of its widest
 * point. They are also the units a failed check measures again
 * (nn_calibration_check): the rate curves of linear layers hold the fixed
 * cost of a product (matrix_op_us). */
enum nn_spread_figure {
    NN_SPREAD_GEMM, NN_SPREAD_GEMM_1THREAD, NN_SPREAD_MEM, NN_SPREAD_OP, NN_SPREAD_SYNC, NN_SPREAD_HOST_COPY,
    NN_SPREAD_LINEAR, NN_SPREAD_CONV, NN_SPREAD_ELEM,
    NN_SPREADS
};
/* "sgemm", "sgemm on one thread", "streaming", "issue one op", "op + synchronise", "host memcpy",
 * "linear layers", "convolutions", "per element" */
const char *nn_spread_name(int figure);

/* The kinds of call whose fixed time a GPU profile may give (fitted to the
 * recorded H200 run): a convolution's forward and backward (cuDNN), a
 * linear layer's (cuBLAS), and any other op (nnlab's own kernels: the
 * elementwise layers, the loss, the optimiser, the gather). */
enum nn_call_kind {
    NN_CALL_CONV_FWD, NN_CALL_CONV_BWD, NN_CALL_LINEAR_FWD, NN_CALL_LINEAR_BWD, NN_CALL_OTHER,
    NN_CALL_LAYER,               /* a layer of its own kernels (op class none: batch norm, GLU) */
    NN_CALL_KINDS
};

/* A call's costs beyond its work, by kind, which only a GPU profile carries
 * (a measured calibration leaves them 0: priced as before). */
typedef struct nn_call_costs {
    int has;                             /* priced: device times, library host costs, overlap */
    double device_us[NN_CALL_KINDS];     /* the device's time of one call beyond its work: its
                                            kernels' shortest durations and the gaps between them */
    double library_host_us[2];           /* [0] a cuDNN convolution call's host cost beyond one
                                            launch, [1] a cuBLAS product's (eager only) */
    double layer_ns;                     /* per element of a layer with kernels of its own
                                            (op class none: batch norm, GLU, sparsemax) */
    double reduce_us[NN_CALL_KINDS];     /* per call, times the square root of the batch: its
                                            reductions over the batch (a bias gradient, a batch
                                            norm's statistics), which grew so on the H200; a
                                            convolution's backward: times the square root of
                                            its output elements */
    double conv_bwd_slow_flops;          /* a convolution's backward call beyond so many FLOPs */
    double conv_bwd_slow_gflops;         /* pays those beyond at this rate too (0: never) */
} nn_call_costs;

/* One product shape of a preset's layer at its batch (backends/cpu/cpu_blis.h's
 * nn_blas_shape: C (m, n) = op(A) op(B), op(A) (m, k)), the threads the
 * choice holds for, both libraries' rates on one thread, and the library
 * chosen. */
#define NN_MAX_PRODUCTS 128
typedef struct nn_product_choice {
    int m, n, k, ta, tb;
    int threads;
    double openblas_gflops, blis_gflops;   /* 0: not measured (too small to contest, or
                                              BLIS missing) */
    int chosen;                            /* 0 OpenBLAS, 1 BLIS: nn_product_lib_name */
} nn_product_choice;

/* "openblas", "blis" */
const char *nn_product_lib_name(int chosen);

typedef struct nn_calibration {
    char device[16];
    char machine[256];           /* CPU model and cores (and the device's own summary) */
    double gemm_gflops;          /* sgemm (1024^3 through linear_forward), default threads */
    double gemm_gflops_1thread;  /* the same on one thread (CPU devices; 0 otherwise) */
    double mem_gbps;             /* streaming bandwidth of an elementwise op (relu, 32 MiB in + out) */
    double op_us;                /* issuing one tiny operation (a GPU: a kernel launch) */
    double sync_us;              /* a tiny operation plus a synchronise: one round trip */
    double upload_us;            /* copying 4 bytes to the device: the fixed cost of a copy */
    double upload_gbps;          /* copying 64 MiB to the device from pageable host memory */
    double host_copy_gbps;       /* memcpy in host memory */
    long long created;           /* unix time */

    /* Since cache format 2 (an older cache file is stale: see nn_calibration_load). */
    double download_us;          /* copying 4 bytes back to the host: a copy plus the wait for it */
    int has_pinned;              /* the backend has page-locked memory (host_alloc): */
    double pinned_upload_us;     /*   4 bytes to the device from it */
    double pinned_upload_gbps;   /*   64 MiB to the device from it */
    int has_graph;               /* the backend records and replays graphs: */
    double graph_launch_us;      /*   launching a recorded graph (its own bookkeeping node included) */
    double graph_node_us;        /*   each node a replay runs (a tiny kernel) */
    double matrix_op_us;         /* fixed cost of one matrix product: a 1x1x1 linear_forward, or
                                    the smallest preset product where that took less */
    nn_rate_curve linear_fwd;    /* linear_forward at the presets' layer shapes, up to 1024^3 */
    nn_rate_curve linear_bwd;    /* linear_backward (dx, dw, dbias) at the same shapes */
    nn_rate_curve conv_fwd;      /* conv2d_forward of LeNet's first convolution, batch 1..256 */
    nn_rate_curve conv_bwd;      /* conv2d_backward (dx, dw, dbias) of the same */
    /* Nanoseconds per element ([class][0] forward, [1] backward) of the ops
     * that are not matrix products, at NN_ELEM_CALIBRATION elements (about a
     * cache's worth): the cost of their arithmetic (mish's exp, log and tanh,
     * a window's compares), as the bytes they move are priced apart. Rows of
     * views and matrix products stay 0; a loss and an optimiser are one call
     * each, in [class][0]. */
    double elem_ns[NN_OP_CLASSES][2];
    char note[160];              /* what could not be measured, and why ("" when all was) */

    /* Since cache format 3: how far the repetitions of each measurement
     * varied (its median over its best, less one; 0.04 = 4%), and the
     * threads the device ran with, for nn_calibration_quality. */
    int threads;                 /* 0: not a CPU device */
    double spread[NN_SPREADS];   /* enum nn_spread_figure */

    /* Since cache format 4: what the checks compare the figures with
     * (nn_calibration_check). */
    double device_peak_gflops;   /* the device's float32 peak from its facts (a GPU: SMs x FP32
                                    lanes x 2 x clock; a CPU: the FMA estimate of cpu_info.h x
                                    threads); 0 when unknown */
    char device_peak_how[96];    /* how it was made, one line */
    double smallest_product_us;  /* one call of the smallest linear_forward of the curve (its
                                    first point), measured; 0 when unknown (then the curve's
                                    first point gives it back) */
    int device_clock;            /* 1: timed on the device's own clock (clock_start, clock_stop:
                                    CUDA events), 0: on the host's */
    unsigned remeasured;         /* bit k: figure k (enum nn_spread_figure) failed a check and
                                    was measured again */

    /* Since cache format 5: which BLAS library runs each product shape of
     * the CPU device (calibrate_products.c): OpenBLAS's and BLIS's rates on
     * one thread, the faster chosen by nn_blas_choose's margin. */
    double product_call_us[2];   /* a 1x1x1 product's time, [0] OpenBLAS, [1] BLIS (0: not
                                    measured): shapes whose time is within a few such
                                    calls are not contested (OpenBLAS runs them) */
    int n_products;
    nn_product_choice products[NN_MAX_PRODUCTS];

    /* Since cache format 6: the largest batch at which the device does
     * Adam's update inside a linear layer's backward (linear_backward_adam,
     * asked batch by batch from 1; decision 0161), 0 when it never does.
     * The model then prices those layers' gradient as never stored. */
    double fused_adam_max_batch;

    /* Since cache format 7: what a framework's CPU step pays that nnlab's
     * does not (nn_framework_fresh_bytes, docs/ways.md "Fresh pages"): a page
     * of anonymous memory mapped fresh, its first touch timed (the fault and
     * the kernel zeroing it; calibrate_pages.c), and the floats of the CPU's
     * widest vector, the channel block of oneDNN's layouts. 0 on a GPU
     * device (its host's pages are its CPU calibration's). */
    double fresh_page_us;        /* one 4 KiB page's first touch after mmap, microseconds */
    double vector_floats;        /* 16 with AVX-512, 8 with AVX2, 4 otherwise */

    /* Not in the cache file. */
    int profile;                 /* the figures are a GPU profile's (profile.h): what the model
                                    gives with them is predicted for it, never measured */
    nn_call_costs calls;         /* a profile's fixed costs by kind of call (explain.c) */
} nn_calibration;

/* The rate of curve c for one call of `flops` FLOPs: linear in log(FLOPs)
 * between points, the nearest point's rate outside them; 0 when c has no
 * points. */
double nn_curve_gflops(const nn_rate_curve *c, double flops);

/* The device's peak: the fastest rate the calibration measured, the 1024^3
 * sgemm or any point of a rate curve (on a shared machine, or with slow
 * reference loops, a small product can beat the large one). No operation is
 * priced faster than it, so FLOPs at this rate bound every prediction from
 * below. */
double nn_calibration_peak_gflops(const nn_calibration *c);

typedef void (*nn_progress_fn)(void *ctx, double fraction, const char *what);

/* Measures device (opened with `threads`); progress may be NULL. Takes a few
 * seconds. */
int nn_calibrate(const char *device, int threads, nn_calibration *out,
                 nn_progress_fn progress, void *ctx, char *err, size_t err_len);

/* This machine's description ("AMD EPYC ..., 2 cores"). */
void nn_machine_description(char *buf, size_t len);

/* Reads the cached calibration of device; -1 when there is none, it was
 * made on another machine, or it is stale: written in an older format
 * (NN_CALIBRATION_FORMAT; format 3 added the spreads, format 4 the device's
 * peak, the smallest product's time and the figures measured again, format
 * 5 the BLAS library of each product shape, format 6 the fused Adam's
 * batch, format 7 a fresh page's cost and the vector's floats) or
 * missing a figure.
 * A stale cache is measured again rather than read as zeros. Its quality
 * is the caller's to judge (nn_calibration_quality). */
#define NN_CALIBRATION_FORMAT 7
int nn_calibration_load(const char *device, nn_calibration *out);
/* Writes it atomically (temp file, fsync, rename), its spreads with it (a
 * calibration that is not good is cached marked so: the front ends measure
 * it again when they next need it). A profile's figures are never cached. */
int nn_calibration_save(const nn_calibration *c, char *err, size_t err_len);
/* The cache file of device. */
int nn_calibration_path(const char *device, char *path, size_t len);

/* A CPU calibrated at a rank's threads (data-parallel ranks that share the
 * host: nn_ranks_predict_shared), cached beside the device's own in a file
 * of its thread count (calibration-cpu-1threads.txt), so that it never
 * stands in for the device's calibration that every other figure reads. */
int nn_calibration_path_threads(const char *device, int threads, char *path, size_t len);
/* The cached one measured at exactly threads: 0, or -1 as nn_calibration_load. */
int nn_calibration_load_threads(const char *device, int threads, nn_calibration *out);
/* Caches c under its own thread count (c->threads). */
int nn_calibration_save_threads(const nn_calibration *c, char *err, size_t err_len);

/* ---- whether a calibration can be trusted (calibration_quality.c) ------------------------ */

enum nn_cal_quality {
    NN_CAL_GOOD,                 /* every check passed (nn_calibration_check) */
    NN_CAL_NOISY,                /* not given since the checks of format 4 (a figure whose
                                    repetitions disagree is measured again, then contradictory);
                                    kept so that its name stays readable */
    NN_CAL_CONTRADICTORY         /* a figure failed a check twice: figures that cannot all be
                                    true (a rate above the device's peak, a product's fixed cost
                                    above the smallest product's time, one thread faster than all
                                    of them, streaming far below the host's memcpy) or that
                                    disagreed with themselves (repetitions more than
                                    NN_CAL_MAX_SPREAD apart) */
};
#define NN_CAL_MAX_SPREAD 0.10

/* One failed check: the figure to measure again (enum nn_spread_figure)
 * and why, naming the figure, its value and the bound it broke. */
typedef struct nn_cal_failure {
    int figure;
    char why[320];
} nn_cal_failure;

/* The checks every calibration passes, CPU and GPU, fresh or read from the
 * cache: (a) no rate (the sgemm, a curve's point) above the device's peak
 * (device_peak_gflops; a GPU without one: its 1024^3 sgemm's rate + 10%);
 * (b) a product's fixed cost (matrix_op_us) >= 0 and at most the smallest
 * product's measured time + 10%; (c) every figure's repetitions within
 * NN_CAL_MAX_SPREAD; and that one thread is not faster than all of them
 * and streaming not far below the host's memcpy. The failures into
 * out[0..max); returns how many failed (0: all passed). A profile's
 * figures are taken as given. */
int nn_calibration_check(const nn_calibration *c, nn_cal_failure *out, int max);
/* The measured time of one call of the smallest product (smallest_product_us,
 * or, for a calibration that lacks it, what the linear forward curve's first
 * point and matrix_op_us give back); 0 when unknown. */
double nn_calibration_smallest_product_us(const nn_calibration *c);

/* The one rule, for the cache, the CLI and the lab: the calibration's
 * quality, and why (the first failed check, and how many more) when it is
 * not good. A profile's figures (c->profile) are taken as given: good. */
int nn_calibration_quality(const nn_calibration *c, char *why, size_t why_len);
/* "good", "noisy", "contradictory" */
const char *nn_cal_quality_name(int q);
/* Where the figures come from, their age at `now` (unix time) and their
 * quality, in a line: "measured 3 min ago, good (repetitions within 4%)",
 * "measured 2 h ago, contradictory: sgemm: repetitions varied 45% ...",
 * "predicted for T4 (a GPU profile)". */
void nn_calibration_describe(const nn_calibration *c, long long now, char *buf, size_t len);

/* ---- which calibration a front end uses (calibration_store.c) ------------------------- */

/* The calibration of device as the CLI uses it: the cached one when it is
 * good, else (or with remeasure) measured now, here, and cached (marked
 * with its quality: one that is not good is measured again next time). 0,
 * or -1 with the reason; 0 with warning saying why when the one returned
 * was not cached or is not good ("" otherwise). */
int nn_calibration_get(const char *device, int threads, int remeasure, nn_progress_fn progress, void *ctx,
                       nn_calibration *out, char *err, size_t err_len, char *warning, size_t warning_len);
/* The same at a rank's threads (nn_calibration_load_threads, else measured
 * at threads and cached under them). */
int nn_calibration_get_threads(const char *device, int threads, int remeasure, nn_progress_fn progress, void *ctx,
                               nn_calibration *out, char *err, size_t err_len, char *warning, size_t warning_len);

/* The lab's calibrations: which devices have one, in memory or in the
 * cache, and why one has none. The store never measures: the front end
 * runs an engine job of the calibration kind (nnlab/engine.h) for each
 * device nn_cal_store_missing names, which measures off the UI thread and
 * caches its result, and hands each result to nn_cal_store_collect. */
#define NN_CAL_STORE_DEVICES 8

enum nn_cal_state {
    NN_CAL_UNKNOWN,              /* not looked for yet */
    NN_CAL_OK,                   /* cal holds it (from the cache or measured) */
    NN_CAL_MISSING,              /* no cache (or another machine's): measure it */
    NN_CAL_FAILED                /* measuring failed: why (tried again when asked next) */
};

typedef struct nn_cal_entry {
    char device[16];
    int state;                   /* enum nn_cal_state */
    nn_calibration cal;
    char why[NN_ERR_LEN];
} nn_cal_entry;

typedef struct nn_cal_store {
    int n;
    nn_cal_entry e[NN_CAL_STORE_DEVICES];
} nn_cal_store;

/* 1 when device has no calibration in memory or in the cache (the cache is
 * read the first time a device is asked about, and after a failure). */
int nn_cal_store_needed(nn_cal_store *st, const char *device);
/* Those of devices[0..n) that need measuring, in order, into out; returns
 * how many (at most max). */
int nn_cal_store_missing(nn_cal_store *st, const char *const *devices, int n, char out[][16], int max);
/* The calibration of device, or NULL with *why saying why there is none. */
const nn_calibration *nn_cal_store_get(nn_cal_store *st, const char *device, const char **why);
/* Keeps a calibration (cal), or the reason there is none (cal NULL). */
void nn_cal_store_record(nn_cal_store *st, const char *device, const nn_calibration *cal, const char *why);
/* A measurement of device that ended: rc 0 with cal, kept (used this
 * session even if the job could not cache it); rc != 0 with err, kept as
 * the reason. Returns rc. */
int nn_cal_store_collect(nn_cal_store *st, const char *device, int rc, const nn_calibration *cal, const char *err);

#endif

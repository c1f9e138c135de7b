/* src/calibrate.h - measures what a device can do, through the same op table
 * the training step uses, so that the cost model (cost.h) can turn FLOPs,
 * bytes and launches into predicted microseconds (explain.h).
 *
 * Results are cached per device under $XDG_CACHE_HOME/nnlab/ (default
 * ~/.cache/nnlab/) with the machine's description; a cache written on another
 * machine is ignored. */
#ifndef NNLAB_CALIBRATE_H
#define NNLAB_CALIBRATE_H

#include <stddef.h>

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
} nn_calibration;

typedef void (*nn_progress_fn)(void *ctx, double fraction, const char *what);

/* Measures device (opened with `threads`); progress may be NULL. Takes a few
 * seconds. */
int nn_calibrate(const char *device, int threads, nn_calibration *out,
                 nn_progress_fn progress, void *ctx, char *err, size_t err_len);

/* This machine's description ("AMD EPYC ..., 2 cores"). */
void nn_machine_description(char *buf, size_t len);

/* Reads the cached calibration of device; -1 when there is none, or it was
 * made on another machine. */
int nn_calibration_load(const char *device, nn_calibration *out);
/* Writes it atomically (temp file, fsync, rename). */
int nn_calibration_save(const nn_calibration *c, char *err, size_t err_len);
/* The cache file of device. */
int nn_calibration_path(const char *device, char *path, size_t len);

#endif

/* src/include/nnlab/device.h - which devices exist and whether each can be used
 * here, decided in one place for the CLI (`nnlab devices`, calibrate, explain,
 * sweep), the lab's setup screen and the engine; and the rule the GPU
 * switches of a job must keep.
 *
 * Asking whether the GPU is usable loads its module and initialises the CUDA
 * runtime, which can take a while: the lab asks on a thread of its own
 * (nn_device_survey_start) and shows "checking" until the answer is in. */
#ifndef NNLAB_DEVICE_H
#define NNLAB_DEVICE_H

#include <stddef.h>

#include "nnlab/engine.h"
#include "util.h"

#define NN_MAX_DEVICES 4             /* cpu-ref, cpu, gpu, and room for one more */

typedef struct nn_device_status {
    char name[16];               /* "cpu-ref", "cpu", "gpu" */
    int available;               /* it can run a job here */
    int host_memory;             /* it computes in host memory (a CPU); valid when available */
    int on_host_cores;           /* it computes on this machine's CPU cores (a CPU, or the
                                    emulated GPU): two such jobs racing share them */
    /* What the device is, known whether or not it can run here, so that a
     * front end asks these and never a device's name: */
    int gpu;                     /* it computes on a GPU (the GPU module's device, real
                                    or emulated); one not here can be predicted from a
                                    GPU profile (nnlab/profile.h) */
    int reference;               /* the reference backend: plain loops, one thread, the
                                    oracle the others are checked against */
    int threaded;                /* its jobs run on a pool of CPU threads (cfg->threads):
                                    racing, it takes the cores the others leave */
    char summary[NN_TEXT_LEN];   /* available: the backend's one line ("OpenBLAS, ...") */
    char description[NN_ERR_LEN];/* available: the device's own words (the GPU's name, memory,
                                    versions); "" when the backend has none */
    char why[NN_ERR_LEN];        /* unavailable: why (the module not built or not found, a
                                    library missing, no driver, no device, an unknown name) */
} nn_device_status;

/* What a device is, by its name, from the backends' list and without probing
 * it (no module is loaded, so it is cheap on any thread): the kind flags of
 * nn_device_status, for code that holds only a device's name (a sweep's
 * devices, a calibration's, a job's) and must never compare it with "gpu"
 * or "cpu". All zeros for a name nnlab does not know. */
typedef struct nn_device_kind {
    int known;                   /* a device of this build's list ("cpu-ref", "cpu", "gpu") */
    int gpu;                     /* the GPU module's device, here or not */
    int reference;               /* the reference backend, the oracle */
    int threaded;                /* a CPU backend on a pool of threads: the fast one */
    int host_memory;             /* computes in host memory (a CPU backend) */
} nn_device_kind;
nn_device_kind nn_device_kind_of(const char *name);

/* The status of one device, probed now: on a GPU this may initialise the
 * CUDA runtime, so the lab calls it only off its UI thread. Returns 0 when
 * it is available, -1 otherwise (out->why says why). */
int nn_device_status_of(const char *name, nn_device_status *out);

/* Every device nnlab knows, available or not, in the order `nnlab devices`
 * lists them; returns how many (at most max). Probes each: see above. */
int nn_devices_list(nn_device_status *out, int max);

/* 0 when device can run a job here, else -1 with the one-line error a job
 * gives ("unknown device 'x' (expected cpu, cpu-ref or gpu)", "device gpu:
 * not available: <why>"). Probes: see above. */
int nn_device_require(const char *name, char *err, size_t err_len);

/* ---- the survey: nn_devices_list on a thread of its own ------------------------------ */

typedef struct nn_device_survey nn_device_survey;

/* Starts listing the devices on a new thread; NULL with the reason when no
 * thread (or memory) could be had. */
nn_device_survey *nn_device_survey_start(char *err, size_t err_len);
/* -1 while the survey runs; then copies at most max statuses into out and
 * returns how many. Never waits. */
int nn_device_survey_poll(nn_device_survey *sv, nn_device_status *out, int max);
/* Waits for the survey's thread and frees it; NULL is allowed. */
void nn_device_survey_free(nn_device_survey *sv);

/* ---- what the CPU runs on --------------------------------------------------------------- */

/* The processor the CPU devices run on, the vector extensions it and the
 * OS enable, OpenBLAS's build and the kernels it chose, and one core's FMA
 * peak (an estimate from the vendor's tables: backends/cpu/cpu_info.c says
 * which). `nnlab devices`, `nnlab calibrate` and `nnlab bench --json`
 * print it, so that a slow machine says why. */
typedef struct nn_cpu_facts {
    char model[64];              /* "AMD EPYC 9354P 32-Core Processor" */
    int family, model_number;    /* cpuid's */
    char extensions[160];        /* "AVX AVX2 FMA AVX-512(F BW VL DQ VNNI BF16)" */
    int avx512;                  /* the CPU and OS run AVX-512 F, BW, VL and DQ */
    char blas_version[32];       /* OpenBLAS's, "0.3.21" */
    char blas_core[32];          /* the kernels it runs: openblas_get_corename() */
    char blas_coretype_env[32];  /* $OPENBLAS_CORETYPE when set (it overrides the choice) */
    char blas_core_from[32];     /* "" or the core OpenBLAS chose itself, below the CPU's
                                    level, before nnlab made it take blas_core */
    int blas_threads;            /* OpenBLAS's own thread count (nnlab runs it on one,
                                    inside its own pool) */
    double clock_ghz;            /* nominal; 0 unknown */
    int flops_per_cycle;         /* float32 FLOPs a core's FMA units retire a cycle */
    double peak_gflops_core;     /* their product: an estimate; 0 when the clock is unknown */
    double peak_gflops_core_measured;  /* one core's FMA loop, timed (once a process, ~15 ms):
                                    what the core gives, whatever a virtual CPU reports; 0
                                    without FMA */
    char warning[NN_ERR_LEN];    /* "" or: OpenBLAS's kernels are below what the CPU
                                    supports, and the remedy */
    char kernels[8];             /* which of our own kernels run: "avx512", "avx2"
                                    (no AVX-512, or NNLAB_NO_AVX512=1) or "scalar" */
    /* The second BLAS library, BLIS, loaded at run time where it is
     * installed (backends/cpu/cpu_blis.c): each product runs on the faster. */
    char blis_version[32];       /* "0.9.0"; "" when not loaded */
    char blis_arch[32];          /* the kernels its run-time dispatch chose ("zen") */
    int blis_used;               /* loaded, and NNLAB_BLAS is not "openblas" */
    char blis_why[160];          /* why not ("BLIS not used: libblis.so.4 not found"), or how */
} nn_cpu_facts;

void nn_cpu_facts_read(nn_cpu_facts *out);

/* 1 and the warning with its remedy in why when a single-core sgemm rate
 * (a calibration's gemm_gflops_1thread) is below half the core's FMA peak
 * (measured, else estimated); 0 otherwise (why ""). */
int nn_cpu_sgemm_check(const nn_cpu_facts *f, double gflops_1thread, char *why, size_t why_len);

/* ---- the GPU switches ------------------------------------------------------------------- */

/* The rule a job's GPU switches must keep, for the engine, the CLI and the
 * lab alike: page-locked copies (pinned) are copies from host memory, so
 * they need the data set off the device. 0, or -1 with a one-line reason
 * that names the option to add. */
int nn_job_switches_check(const nn_job_config *cfg, char *err, size_t err_len);

#endif

/* backends/cpu/cpu_info.h - what the CPU backend runs on: the processor, the
 * vector extensions it and the operating system support, OpenBLAS's build and
 * the kernels it picked, and an estimate of one core's FMA peak.
 *
 * Why: the same nnlab binary ran at a third of its speed on a machine whose
 * OpenBLAS chose older kernels than the CPU supports, and nothing said so.
 * `nnlab devices` and the calibration print these facts, and warn (with the
 * remedy) when OpenBLAS's kernels are below what the CPU can run.
 */
#ifndef NN_CPU_INFO_H
#define NN_CPU_INFO_H

#include <stddef.h>

/* Vector extensions, each only when both the CPU and the OS (XCR0) have it. */
enum nn_cpu_feature {
    NN_CPU_AVX = 1u << 0,
    NN_CPU_AVX2 = 1u << 1,
    NN_CPU_FMA = 1u << 2,
    NN_CPU_AVX512F = 1u << 3,
    NN_CPU_AVX512BW = 1u << 4,
    NN_CPU_AVX512VL = 1u << 5,
    NN_CPU_AVX512DQ = 1u << 6,
    NN_CPU_AVX512_VNNI = 1u << 7,
    NN_CPU_AVX512_BF16 = 1u << 8,
    NN_CPU_AMX_TILE = 1u << 9,
    NN_CPU_AMX_BF16 = 1u << 10,
    NN_CPU_AMX_INT8 = 1u << 11,
};

/* Instruction-set levels, to compare the CPU with OpenBLAS's kernels. */
enum nn_isa_level {
    NN_ISA_UNKNOWN = -1,
    NN_ISA_SSE = 0,              /* SSE only (Nehalem, Core2, ...) */
    NN_ISA_AVX = 1,              /* AVX without FMA (Sandybridge, Bulldozer) */
    NN_ISA_AVX2 = 2,             /* AVX2 and FMA (Haswell, Zen) */
    NN_ISA_AVX512 = 3,           /* AVX-512 F, BW, VL and DQ (SkylakeX, Cooperlake) */
};

typedef struct nn_cpu_info {
    char model[64];              /* the brand string ("AMD EPYC 9354P ...") */
    char vendor[16];             /* "AuthenticAMD", "GenuineIntel" */
    int family, model_number;    /* cpuid's display family and model */
    unsigned features;           /* enum nn_cpu_feature bits */
    double clock_ghz;            /* nominal clock (cpufreq's max, else /proc/cpuinfo's
                                    "cpu MHz"); 0 when unknown */
    int flops_per_cycle;         /* float32 FLOPs one core's FMA units retire a cycle
                                    (estimated from the vendor, family and extensions) */
    double peak_gflops_core;     /* flops_per_cycle x clock_ghz; 0 when the clock is unknown */
    double peak_gflops_core_measured;  /* nn_cpu_fma_peak_measured() where a caller filled it
                                    in (nn_cpu_info_read does not: it times nothing); 0 unknown */
    char blas_version[32];       /* "0.3.21" */
    char blas_core[32];          /* openblas_get_corename(): the kernels it runs */
    int blas_threads;            /* openblas_get_num_threads() now (we run it on one
                                    thread inside our own pool) */
    char blas_coretype_env[32];  /* $OPENBLAS_CORETYPE when set: it overrides the choice */
    char blas_core_from[32];     /* "" or the core OpenBLAS chose itself, below this CPU's
                                    level, before nnlab raised it: filled by
                                    nn_cpu_info_read_now, left "" by nn_cpu_info_read
                                    (cpu_blas_core.c calls this file: the calls go one way) */
} nn_cpu_info;

/* Reads everything above (cpuid, /proc/cpuinfo, /sys, OpenBLAS) but
 * blas_core_from. Cheap: reads files and executes cpuid; no timing. */
void nn_cpu_info_read(nn_cpu_info *out);

/* nn_cpu_info_read with blas_core_from filled in: the one reading of this
 * process's CPU and kernels that every report (`nnlab devices`, the
 * describe op, the device facts) and their tests use, so that a line built
 * from it is the line those reports print. In cpu_blas_core.c, which knows
 * the raise. */
void nn_cpu_info_read_now(nn_cpu_info *out);

/* The features alone (cpuid and XCR0, as nn_cpu_info_read reads them):
 * what the kernels' dispatch asks (cpu_features.c). */
unsigned nn_cpu_features_now(void);

/* Which path of our own kernels runs (cpu_features.c): "avx512", "avx2"
 * (no AVX-512, or NNLAB_NO_AVX512=1) or "scalar" (no AVX2 and FMA:
 * cpu-ref's loops and OpenBLAS). */
const char *nn_cpu_kernels_name(void);

/* The highest level the features give, and the level an OpenBLAS core name
 * runs (NN_ISA_UNKNOWN for a name it does not know). */
enum nn_isa_level nn_cpu_isa_level(unsigned features);
enum nn_isa_level nn_blas_core_level(const char *corename);
const char *nn_isa_level_name(enum nn_isa_level level);

/* The float32 FLOPs a cycle of one core, from what cpuid tells (see
 * cpu_info.c for the table and its sources). */
int nn_cpu_flops_per_cycle(const char *vendor, int family, int model, unsigned features);

/* "AVX2 FMA AVX-512(F BW VL DQ VNNI BF16) AMX(TILE BF16 INT8)": the features
 * present, into buf. Returns buf. */
char *nn_cpu_features_text(unsigned features, char *buf, size_t len);

/* One line for `nnlab devices`: model, extensions, OpenBLAS, the peak. */
void nn_cpu_info_line(const nn_cpu_info *ci, char *buf, size_t len);

/* 1 and a warning with the remedy in why when OpenBLAS runs kernels below
 * what the CPU supports; 0 (why "") otherwise. */
int nn_cpu_blas_below_cpu(const nn_cpu_info *ci, char *why, size_t why_len);

/* One core's float32 FMA peak in GFLOP/s, measured once per process by a
 * timed loop of independent FMAs (cpu_fma_peak.c; about 15 ms); 0 when the
 * CPU has no FMA. Unlike the estimate it holds where a virtual CPU reports a
 * generic family or a nominal clock. */
double nn_cpu_fma_peak_measured(void);

/* The same loop at the widest vectors our own kernels run: the AVX2 loop's
 * rate, or the AVX-512 one's where it is faster and the AVX-512 kernels run
 * (nn_cpu_avx512_kernels: the CPU has them, NNLAB_NO_AVX512 unset); measured
 * once per process, 0 without FMA. What a rate of our kernels cannot pass. */
double nn_cpu_fma_peak_widest(void);

/* 1 and a warning with the remedy when a measured single-core sgemm rate is
 * below half the core's FMA peak (the measured one when filled in, else the
 * estimate); 0 when it is not or the peak is unknown. */
int nn_cpu_sgemm_below_peak(const nn_cpu_info *ci, double sgemm_gflops_core, char *why,
                            size_t why_len);

/* The backends' describe op (`nnlab devices`): the line above, which of
 * our kernels run, and the warning of nn_cpu_blas_below_cpu when there is
 * one. Always 0. In cpu_features.c, which chooses the kernels. */
int nn_cpu_describe(char *buf, size_t len);

/* Room for a warning of the two checks above. */
#define NN_CPU_WARN_LEN 384

#endif

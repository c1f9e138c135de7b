/* backends/cuda/cuda_probe.h - the GPU module's probe verdict as a pure
 * function of what the probe found (cuda_module.cu gathers the facts from the
 * driver and the runtime): whether there is no GPU here (a skip) or a GPU
 * that cannot be used (something to fix), the reason in words, and the driver
 * a CUDA version needs. Plain C, no CUDA header, so that
 * tests/test_gpu_rules.c checks every verdict on a machine without a GPU. */
#ifndef NNLAB_CUDA_PROBE_H
#define NNLAB_CUDA_PROBE_H

#include <stddef.h>
#include <stdio.h>

#include "backend.h"

/* What cudaGetDeviceCount said. */
enum gpu_count_result {
    GPU_COUNT_OK,
    GPU_COUNT_NO_DEVICE,         /* cudaErrorNoDevice */
    GPU_COUNT_OLD_DRIVER,        /* cudaErrorInsufficientDriver */
    GPU_COUNT_FAILED             /* any other error: count_error says which */
};

/* What the probe found, in the order it looks; a later field is only
 * meaningful when the earlier ones let it look (no driver: nothing else). */
typedef struct gpu_probe_facts {
    const char *no_driver;       /* libcuda.so.1 cannot be loaded: the loader's words; else NULL */
    int driver;                  /* cudaDriverGetVersion: 12020 is CUDA 12.2; 0: none answers */
    int runtime;                 /* the CUDA runtime the module runs with (same encoding) */
    enum gpu_count_result count_result;
    const char *count_error;     /* GPU_COUNT_FAILED: "name: description" */
    int count;                   /* devices, when GPU_COUNT_OK */
    const char *visible;         /* CUDA_VISIBLE_DEVICES, or NULL */
    int code_ok;                 /* the module has code device 0 runs */
    int ptx_too_new;             /* cudaErrorUnsupportedPtxVersion: the driver cannot JIT our PTX */
    const char *code_error;      /* !code_ok: the runtime's words */
    const char *device;          /* device 0's name, for !code_ok */
    int cc_major, cc_minor;
} gpu_probe_facts;

/* "12.2" from 12020 */
static inline void gpu_version_text(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* The oldest Linux driver a CUDA release's programs run on (NVIDIA's CUDA
 * compatibility guide: minor version compatibility within a major release,
 * which needs no PTX JIT: the module carries machine code for every
 * architecture the toolkit knows). NULL for a release this table predates. */
static inline const char *gpu_driver_needed(int cuda_version)
{
    switch (cuda_version / 1000) {
    case 11: return "450.80.02";
    case 12: return "525.60.13";
    case 13: return "580";
    default: return NULL;
    }
}

/* The driver branch a toolkit release shipped with, which its PTX needs to be
 * compiled by the driver (a GPU newer than the module's machine code). NULL
 * where the table does not know the release. */
static inline const char *gpu_driver_branch_of(int cuda_version)
{
    static const struct { int version; const char *branch; } t[] = {
        { 11000, "R450" }, { 11010, "R455" }, { 11020, "R460" }, { 11030, "R465" },
        { 11040, "R470" }, { 11050, "R495" }, { 11060, "R510" }, { 11070, "R515" },
        { 11080, "R520" }, { 12000, "R525" }, { 12010, "R530" }, { 12020, "R535" },
        { 12030, "R545" }, { 12040, "R550" }, { 12050, "R555" }, { 12060, "R560" },
        { 12080, "R570" }, { 12090, "R575" }, { 13000, "R580" },
    };
    int minor = cuda_version / 10 * 10;     /* 12.4.1 is 12041: its release is 12040 */
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].version == minor)
            return t[i].branch;
    return NULL;
}

/* "the NVIDIA driver is too old: ..." naming the driver this module needs, and
 * the toolkit that would run on the driver there is. */
static inline void gpu_old_driver_text(const gpu_probe_facts *f, char *why, size_t len)
{
    char dv[16], rv[16], need_text[48], other[160] = "";
    const char *need = gpu_driver_needed(f->runtime), *have = gpu_driver_needed(f->driver);
    gpu_version_text(f->driver, dv, sizeof dv);
    gpu_version_text(f->runtime, rv, sizeof rv);
    if (need)
        snprintf(need_text, sizeof need_text, "driver %s", need);
    else
        snprintf(need_text, sizeof need_text, "a driver for CUDA %s", rv);
    if (have && f->driver / 1000 < f->runtime / 1000)
        snprintf(other, sizeof other, ", or build nnlab with a CUDA %d toolkit (./configure "
                 "--with-cuda=DIR), which runs on this driver", f->driver / 1000);
    snprintf(why, len, "the NVIDIA driver is too old: it supports CUDA %s, this module was built "
             "with CUDA %s, which needs %s or newer: update the driver%s", dv, rv, need_text, other);
}

/* The module has no code the device runs. With a driver older than the
 * runtime, that is the driver failing to compile our PTX for a GPU newer
 * than the module's machine code. */
static inline void gpu_no_code_text(const gpu_probe_facts *f, char *why, size_t len)
{
    char dv[16], rv[16];
    gpu_version_text(f->driver, dv, sizeof dv);
    gpu_version_text(f->runtime, rv, sizeof rv);
    if (f->ptx_too_new || (f->driver > 0 && f->driver < f->runtime)) {
        const char *branch = gpu_driver_branch_of(f->runtime);
        snprintf(why, len, "this module has no machine code for %s (compute capability %d.%d), and "
                 "the driver (CUDA %s) cannot compile its CUDA %s PTX: update the driver to %s%s "
                 "or newer, or rebuild with a toolkit that knows this GPU (configure builds for "
                 "every architecture the toolkit lists)", f->device ? f->device : "GPU 0",
                 f->cc_major, f->cc_minor, dv, rv, branch ? branch : "one for CUDA ",
                 branch ? "" : rv);
        return;
    }
    snprintf(why, len, "this module has no code for %s (compute capability %d.%d): %s (rebuild with "
             "NVCC_GENCODE for it)", f->device ? f->device : "GPU 0", f->cc_major, f->cc_minor,
             f->code_error ? f->code_error : "no kernel image");
}

/* 0 when the GPU can be used; else NN_PROBE_ABSENT (no driver, no device:
 * nothing to test here) or NN_PROBE_UNUSABLE (a GPU is there and cannot be
 * used: a driver too old, no code for it, the driver failing), with the
 * reason in why, in the order a user would fix them. */
static inline int gpu_probe_verdict(const gpu_probe_facts *f, char *why, size_t len)
{
    char dv[16], rv[16];
    gpu_version_text(f->driver, dv, sizeof dv);
    gpu_version_text(f->runtime, rv, sizeof rv);
    if (f->no_driver) {
        snprintf(why, len, "no NVIDIA driver: libcuda.so.1 cannot be loaded (%s)", f->no_driver);
        return NN_PROBE_ABSENT;
    }
    if (f->driver == 0) {
        snprintf(why, len, "no NVIDIA driver is loaded (libcuda.so.1 is there, but reports no CUDA "
                 "version)");
        return NN_PROBE_ABSENT;
    }
    if (f->count_result == GPU_COUNT_OLD_DRIVER ||
        (f->count_result == GPU_COUNT_OK && f->count == 0 && f->driver < f->runtime)) {
        gpu_old_driver_text(f, why, len);
        return NN_PROBE_UNUSABLE;
    }
    if (f->count_result == GPU_COUNT_NO_DEVICE || (f->count_result == GPU_COUNT_OK && f->count == 0)) {
        snprintf(why, len, "no CUDA device found (driver CUDA %s%s%s)", dv,
                 f->visible ? ", CUDA_VISIBLE_DEVICES=" : "", f->visible ? f->visible : "");
        return NN_PROBE_ABSENT;
    }
    if (f->count_result == GPU_COUNT_FAILED) {
        snprintf(why, len, "cudaGetDeviceCount failed: %s (driver CUDA %s, runtime %s)",
                 f->count_error ? f->count_error : "unknown error", dv, rv);
        return NN_PROBE_UNUSABLE;
    }
    if (!f->code_ok) {
        gpu_no_code_text(f, why, len);
        return NN_PROBE_UNUSABLE;
    }
    if (len)
        why[0] = '\0';
    return 0;
}

#endif

/* backends/cuda/emu/emu_runtime.cc - the emulated GPU's device, errors and
 * faults, the lock, and the seeded generator behind every random choice. */
#include "emu_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

namespace nn_emu {

std::recursive_mutex &lock()
{
    static std::recursive_mutex *m = new std::recursive_mutex;   /* never destroyed: */
    return *m;                          /* a job thread may still call at exit */
}

std::string format(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

void diag(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "# nnlab-cuda-emu: %s\n", buf);
}

double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* ---- the seed ------------------------------------------------------------------------------ */

static uint64_t seed_value, rng_state;
static bool seeded;

static void seed_once(void)
{
    if (seeded)
        return;
    const char *env = getenv("NNLAB_EMU_SEED");
    char *end = NULL;
    unsigned long long v = env && *env ? strtoull(env, &end, 10) : 0;
    if (env && *env && end && *end == '\0') {
        seed_value = v;
    } else {
        if (env && *env)
            diag("NNLAB_EMU_SEED=%s is not a number: seeding from the clock", env);
        seed_value = ((uint64_t)time(NULL) * 1000003u) ^ (uint64_t)getpid();
        seed_value %= 1000000000u;      /* short enough to copy from a log */
    }
    rng_state = seed_value;
    seeded = true;
}

uint64_t seed()
{
    guard g(lock());
    seed_once();
    return seed_value;
}

/* splitmix64 */
uint64_t random_u64()
{
    guard g(lock());
    seed_once();
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

permutation::permutation(uint64_t count) : a(1), b(0), n(count ? count : 1)
{
    if (n < 2)
        return;
    do
        a = 1 + random_u64() % (n - 1);
    while (gcd(a, n) != 1);
    b = random_u64() % n;
}

/* ---- errors ------------------------------------------------------------------------------ */

static thread_local cudaError_t last_error = cudaSuccess;
static cudaError_t sticky_error = cudaSuccess;
static std::string *sticky_text;

cudaError_t record(cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorNotReady)
        last_error = e;
    return e;
}

cudaError_t sticky(void)
{
    return sticky_error;
}

void fault(cudaError_t e, const std::string &why)
{
    guard g(lock());
    if (sticky_error == cudaSuccess) {
        sticky_error = e;
        sticky_text = new std::string(format("%s (emulated GPU: %s; NNLAB_EMU_SEED=%llu)",
                                             cudaGetErrorString(e), why.c_str(),
                                             (unsigned long long)seed()));
        diag("device fault, %s: %s (NNLAB_EMU_SEED=%llu repeats this run)", cudaGetErrorName(e),
             why.c_str(), (unsigned long long)seed());
    }
    drop_all_work();
}

} /* namespace nn_emu */

using namespace nn_emu;

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e != cudaSuccess ? e : sticky();
}

cudaError_t cudaPeekAtLastError(void)
{
    return last_error != cudaSuccess ? last_error : sticky();
}

static const struct {
    cudaError_t e;
    const char *name, *text;
} error_table[] = {
    { cudaSuccess, "cudaSuccess", "no error" },
    { cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument" },
    { cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory" },
    { cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error" },
    { cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument" },
    { cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer" },
    { cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy" },
    { cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
      "CUDA driver version is insufficient for CUDA runtime version" },
    { cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function" },
    { cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected" },
    { cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal" },
    { cudaErrorNoKernelImageForDevice, "cudaErrorNoKernelImageForDevice",
      "no kernel image is available for execution on the device" },
    { cudaErrorUnsupportedPtxVersion, "cudaErrorUnsupportedPtxVersion",
      "the provided PTX was compiled with an unsupported toolchain" },
    { cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle" },
    { cudaErrorIllegalState, "cudaErrorIllegalState", "the operation cannot be performed in the present state" },
    { cudaErrorNotReady, "cudaErrorNotReady", "device not ready" },
    { cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered" },
    { cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure" },
    { cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported" },
    { cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
      "operation not permitted when stream is capturing" },
    { cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
      "operation failed due to a previous error during capture" },
    { cudaErrorStreamCaptureUnmatched, "cudaErrorStreamCaptureUnmatched",
      "capture was not initiated in this stream" },
    { cudaErrorStreamCaptureImplicit, "cudaErrorStreamCaptureImplicit",
      "operation would make the legacy stream depend on a capturing blocking stream" },
    { cudaErrorCapturedEvent, "cudaErrorCapturedEvent",
      "operation not permitted on an event last recorded in a capturing stream" },
    { cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread",
      "attempt to terminate a thread-local capture sequence from another thread" },
    { cudaErrorUnknown, "cudaErrorUnknown", "unknown error" },
};

const char *cudaGetErrorName(cudaError_t e)
{
    for (const auto &t : error_table)
        if (t.e == e)
            return t.name;
    return "cudaErrorUnrecognized";
}

const char *cudaGetErrorString(cudaError_t e)
{
    if (e != cudaSuccess && e == sticky_error && sticky_text)
        return sticky_text->c_str();
    for (const auto &t : error_table)
        if (t.e == e)
            return t.text;
    return "unrecognized error code";
}

/* ---- the device ---------------------------------------------------------------------------- */

/* The API level the emulation follows (CUDA 13.0), reported as both. */
#define EMU_CUDA_VERSION CUDART_VERSION

cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v)
        return record(cudaErrorInvalidValue);
    *v = EMU_CUDA_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v)
        return record(cudaErrorInvalidValue);
    *v = EMU_CUDA_VERSION;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *n)
{
    if (!n)
        return record(cudaErrorInvalidValue);
    *n = 1;
    return cudaSuccess;
}

size_t emu_device_memory(void);   /* emu_memory.cc */

static int emu_multiprocessors(void);

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device)
{
    if (!prop)
        return record(cudaErrorInvalidValue);
    if (device != 0)
        return record(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name,
             "emulated GPU (nnlab-cuda-emu: the CUDA code run on the CPU, seed %llu)",
             (unsigned long long)seed());
    prop->totalGlobalMem = emu_device_memory();
    prop->sharedMemPerBlock = 48 * 1024;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = emu_multiprocessors();
    prop->unifiedAddressing = 1;
    prop->canMapHostMemory = 1;
    return cudaSuccess;
}

/* The emulated GPU's multiprocessors: one a host core, since its kernels
 * and its cuBLAS (OpenBLAS's threads) run on them. */
static int emu_multiprocessors(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < 4096 ? (int)n : 1;
}

/* The emulated GPU's facts, as cudaGetDeviceProperties gives them (compute
 * capability 9.0, a multiprocessor a host core) and a 4 GHz clock: 1 TFLOP/s
 * a core, above what any host core's float32 units retire (256 GFLOP/s with
 * two AVX-512 FMA units at 4 GHz), so that a calibration's rates on it stay
 * below its peak, as they do on a real GPU. */
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (!value)
        return record(cudaErrorInvalidValue);
    if (device != 0)
        return record(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevAttrClockRate: *value = 4000000; break;          /* kHz */
    case cudaDevAttrMultiProcessorCount: *value = emu_multiprocessors(); break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    default: return record(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? sticky() : record(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return record(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *func)
{
    if (!attr)
        return record(cudaErrorInvalidValue);
    if (!func)
        return record(cudaErrorInvalidDeviceFunction);
    memset(attr, 0, sizeof *attr);
    attr->maxThreadsPerBlock = 1024;
    attr->ptxVersion = 90;
    attr->binaryVersion = 90;
    return cudaSuccess;
}

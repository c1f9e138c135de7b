/* backends/cuda/emu/cuda_emu.h - the CUDA the GPU module uses, for the host
 * C++ compiler: the emulated GPU (docs/gpu-backend.md, "The emulated GPU").
 *
 * cuda_backend.h includes this instead of the toolkit's headers when
 * NN_CUDA_EMULATION is defined, so that the .cu files of backends/cuda compile unchanged
 * with g++ and run on the CPU, in nnlab-cuda-emu.so. It declares exactly the
 * part of the CUDA runtime, cuBLAS and cuDNN that the module calls, with the
 * toolkit's names and (where it matters to a reader) values; anything else
 * does not compile. The runtime is in emu_*.cc:
 *   emu_memory.cc   device and page-locked memory, the allocation registry
 *   emu_stream.cc   streams, events, copies, deferred execution, errors, device
 *   emu_graph.cc    stream capture and graphs
 *   emu_threads.cc  blocks and threads: fibers, __syncthreads, shared memory
 *   emu_blas.cc     cuBLAS stand-in (cublasSgemm)
 *   emu_dnn.cc      cuDNN stand-in: handle, descriptors, algorithm queries
 *   emu_dnn_run.cc  the cuDNN calls that compute, and their checks
 *   emu_dnn_conv.cc their arithmetic
 * Functions have C++ linkage (and hidden visibility, as all of the module), so
 * none can be confused with a real libcudart symbol. */
#ifndef NNLAB_CUDA_EMU_H
#define NNLAB_CUDA_EMU_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

/* The module's file (its FMA build gives its own name). */
#ifndef NN_GPU_EMU_MODULE_FILE
#define NN_GPU_EMU_MODULE_FILE "nnlab-cuda-emu.so"
#endif

/* ---- CUDA C's keywords and built-in variables, as host C++ -------------------- */

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
/* One instance per block as on a GPU: blocks run one at a time, and every
 * variable in this section is overwritten with garbage before each block
 * (emu_threads.cc), as shared memory starts undefined. */
#define __shared__ __attribute__((section("nn_emu_shared"))) static

struct uint3 {
    unsigned x, y, z;
};

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

/* Set by the scheduler each time it switches to a thread (emu_threads.cc). */
extern uint3 nn_emu_thread_idx, nn_emu_block_idx;
extern dim3 nn_emu_block_dim, nn_emu_grid_dim;
#define threadIdx nn_emu_thread_idx
#define blockIdx nn_emu_block_idx
#define blockDim nn_emu_block_dim
#define gridDim nn_emu_grid_dim

/* A real barrier: the thread waits until every thread of its block is
 * there; a thread that leaves the kernel while others wait is an error. */
void __syncthreads(void);

/* Threads run one at a time and switch only at __syncthreads, so a fence
 * only has to stop the compiler from moving memory accesses across it. */
static inline void __threadfence(void) { __asm__ __volatile__("" ::: "memory"); }
static inline void __threadfence_block(void) { __asm__ __volatile__("" ::: "memory"); }
static inline void __threadfence_system(void) { __asm__ __volatile__("" ::: "memory"); }

/* Atomics: no thread runs between the read and the write here. */
static inline unsigned atomicInc(unsigned *p, unsigned limit)
{
    unsigned old = *p;
    *p = old >= limit ? 0u : old + 1u;
    return old;
}

template <typename T> static inline T atomicCAS(T *p, T compare, T value)
{
    T old = *p;
    if (old == compare)
        *p = value;
    return old;
}

template <typename T> static inline T atomicAdd(T *p, T value)
{
    T old = *p;
    *p = old + value;
    return old;
}

/* CUDA's integer min and max (device functions, not in C++'s global scope). */
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }

/* ---- the CUDA runtime: types ---------------------------------------------------- */

/* The API level the emulation follows (CUDA 13.0), as cuda_runtime_api.h
 * defines it. */
#define CUDART_VERSION 13000

enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInsufficientDriver = 35,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorNoKernelImageForDevice = 209,
    cudaErrorUnsupportedPtxVersion = 222,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchFailure = 719,
    cudaErrorNotSupported = 801,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureUnmatched = 903,
    cudaErrorStreamCaptureImplicit = 906,
    cudaErrorCapturedEvent = 907,
    cudaErrorStreamCaptureWrongThread = 908,
    cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;

typedef struct nn_emu_stream *cudaStream_t;
typedef struct nn_emu_event *cudaEvent_t;
typedef struct nn_emu_graph *cudaGraph_t;
typedef struct nn_emu_graph_exec *cudaGraphExec_t;
typedef struct nn_emu_graph_node *cudaGraphNode_t;

#define cudaStreamDefault 0x00u
#define cudaStreamNonBlocking 0x01u
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaEventDefault 0x00u
#define cudaEventBlockingSync 0x01u
#define cudaEventDisableTiming 0x02u
#define cudaHostAllocDefault 0x00u
#define cudaHostAllocPortable 0x01u
#define cudaHostAllocMapped 0x02u
#define cudaHostAllocWriteCombined 0x04u

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2,
};

enum cudaStreamCaptureStatus {
    cudaStreamCaptureStatusNone = 0,
    cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2,
};

enum cudaGraphNodeType {
    cudaGraphNodeTypeKernel = 0x00,
    cudaGraphNodeTypeMemcpy = 0x01,
    cudaGraphNodeTypeMemset = 0x02,
    cudaGraphNodeTypeHost = 0x03,
    cudaGraphNodeTypeGraph = 0x04,
    cudaGraphNodeTypeEmpty = 0x05,
    cudaGraphNodeTypeWaitEvent = 0x06,
    cudaGraphNodeTypeEventRecord = 0x07,
};

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int warpSize;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int major, minor;
    int multiProcessorCount;
    int unifiedAddressing;
    int canMapHostMemory;
};

/* The attributes nnlab asks cudaDeviceGetAttribute for (CUDA's numbers). */
enum cudaDeviceAttr {
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
};

struct cudaFuncAttributes {
    size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
    int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion;
};

struct cudaKernelNodeParams {
    void *func;
    dim3 gridDim;
    dim3 blockDim;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
};

/* ---- the CUDA runtime: functions ------------------------------------------------- */

cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorName(cudaError_t e);
const char *cudaGetErrorString(cudaError_t e);

cudaError_t cudaDriverGetVersion(int *v);
cudaError_t cudaRuntimeGetVersion(int *v);
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *func);
cudaError_t cudaDeviceSynchronize(void);

cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaFree(void *p);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaHostGetDevicePointer(void **dev, void *host, unsigned int flags);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t stream);

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);

cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus *status);
cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *count);
cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType *type);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags = 0);
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags);
cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t s);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s);
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const cudaKernelNodeParams *p);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t g);

/* ---- kernel launches (NN_LAUNCH in cuda_backend.h) ---------------------------------- */

/* The emulator's per-thread dispatch is not checked by the sanitizers (the
 * kernels it calls are): it runs once per thread, millions of times a step. */
#define NN_EMU_UNCHECKED __attribute__((no_sanitize_address, no_sanitize_undefined))

namespace nn_emu {

/* One launch: the kernel and its arguments, copied when it is launched as a
 * GPU copies them, so that the caller's variables may change at once. */
struct kernel_call {
    const void *func;
    const char *name;
    virtual ~kernel_call() {}
    virtual void run() = 0;                         /* one thread's body */
    virtual kernel_call *clone() const = 0;
    virtual void set_params(void **params) = 0;     /* cudaKernelNodeParams.kernelParams */
    /* The pointer arguments (checked against the allocation registry). */
    virtual int pointers(const void **out, int max) const = 0;
};

template <typename T> static inline void note_pointer(const T &, const void **, int, int *) {}
template <typename T> static inline void note_pointer(T *const &p, const void **out, int max, int *n)
{
    if (*n < max)
        out[*n] = (const void *)p;
    (*n)++;
}

template <typename... P> struct typed_call : kernel_call {
    void (*fn)(P...);
    std::tuple<typename std::decay<P>::type...> args;

    template <typename... A>
    typed_call(void (*f)(P...), const char *kernel_name, A &&...a) : fn(f), args(std::forward<A>(a)...)
    {
        func = (const void *)f;
        name = kernel_name;
    }
    NN_EMU_UNCHECKED void run() override { call(std::index_sequence_for<P...>()); }
    kernel_call *clone() const override { return new typed_call(*this); }
    void set_params(void **params) override { set_from(params, std::index_sequence_for<P...>()); }
    int pointers(const void **out, int max) const override
    {
        int n = 0;
        std::apply([&](const auto &...a) { (note_pointer(a, out, max, &n), ...); }, args);
        return n;
    }

private:
    template <size_t... I> NN_EMU_UNCHECKED void call(std::index_sequence<I...>)
    {
        fn(std::get<I>(args)...);
    }
    template <size_t... I> void set_from(void **params, std::index_sequence<I...>)
    {
        ((std::get<I>(args) =
              *static_cast<typename std::tuple_element<I, decltype(args)>::type *>(params[I])),
         ...);
    }
};

/* Checks the launch, then queues it on the stream (or records it while the
 * stream captures). Errors go where a <<<>>> launch puts them: cudaGetLastError. */
void launch(kernel_call *call, dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream);

} /* namespace nn_emu */

template <typename... P, typename... A>
static inline void nn_emu_launch(void (*kernel)(P...), const char *name, dim3 grid, dim3 block,
                                 size_t shared_bytes, cudaStream_t stream, A &&...args)
{
    static_assert(sizeof...(P) == sizeof...(A), "NN_LAUNCH: not as many arguments as the kernel has");
    nn_emu::launch(new nn_emu::typed_call<P...>(kernel, name, std::forward<A>(args)...), grid, block,
                   shared_bytes, stream);
}

#include "emu_blas.h"
#include "emu_dnn.h"

#endif

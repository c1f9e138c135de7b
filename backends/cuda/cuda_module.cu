/* backends/cuda/cuda_module.cu - the GPU backend as a run-time module: the
 * probe that says why there is no GPU, opening and closing the device, memory
 * and copies, page-locked buffers, the op table, and the module's only two
 * exported symbols (backend.h); step graphs, counters and timing are in
 * cuda_graph.cu, the error messages in cuda_report.cu, the probe's verdict
 * in cuda_probe.h:
 *   const int nn_backend_module_abi;            == NN_BACKEND_ABI
 *   const nn_backend_ops *nn_backend_module_ops(void);
 * nnlab dlopens this file (backends/backend.c), so the program itself links no
 * CUDA library; this module links the CUDA runtime, cuBLAS and cuDNN. */
#include "cuda_backend.h"
#include "cuda_probe.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NN_EXPORT extern "C" __attribute__((visibility("default")))

/* After a wait: a failure a kernel described (the only one so far: a label
 * out of range), reported once and cleared. */
static int check_fault(nn_backend *b, const char *op)
{
    gpu_state *s = gpu_of(b);
    if (!s->fault_host[0])
        return 0;
    int sample = s->fault_host[1], value = s->fault_host[2], limit = s->fault_host[3];
    s->fault_host[0] = 0;
    cudaMemsetAsync(s->fault_claim, 0, sizeof(int), s->stream);
    return gpu_fail(b, "%s: softmax_xent found label %d of sample %d outside [0, %d)", op, value,
                    sample, limit);
}

/* ---- probe and describe --------------------------------------------------------------------- */

__global__ void probe_kernel(int *p)
{
    if (p)
        *p = 0;
}

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_rc;
static char probe_why[NN_BACKEND_ERROR_LEN];

/* Whether the module has code device 0 runs (machine code, or PTX the
 * driver compiles): the attributes of a kernel need its image loaded. */
static void probe_code(gpu_probe_facts *f, char *err, size_t err_len, cudaDeviceProp *prop)
{
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, (const void *)probe_kernel);
    f->code_ok = e == cudaSuccess;
    if (f->code_ok)
        return;
    f->ptx_too_new = e == cudaErrorUnsupportedPtxVersion;
    snprintf(err, err_len, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    f->code_error = err;
    cudaGetLastError();
    memset(prop, 0, sizeof *prop);
    if (cudaGetDeviceProperties(prop, 0) == cudaSuccess) {
        f->device = prop->name;
        f->cc_major = prop->major;
        f->cc_minor = prop->minor;
    }
    cudaGetLastError();
}

/* Gathers what gpu_probe_verdict (cuda_probe.h) judges, in the order a user
 * would fix it: the driver library, its version against the runtime's, the
 * devices, code for device 0. Probed once: the answer does not change while
 * nnlab runs. */
static void probe_once_fn(void)
{
    gpu_probe_facts f;
    char count_err[160], code_err[160];
    cudaDeviceProp prop;
    memset(&f, 0, sizeof f);
    f.runtime = CUDART_VERSION;          /* the toolkit built with, unless the runtime says */
#ifndef NN_CUDA_EMULATION     /* the emulated GPU has no driver to look for */
    /* The driver is the one library the CUDA runtime loads itself; without it
     * cudart says only "insufficient driver", so look first. */
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        f.no_driver = e ? e : "not found";
        probe_rc = gpu_probe_verdict(&f, probe_why, sizeof probe_why);
        return;
    }
#endif
    int rt = 0;
    cudaDriverGetVersion(&f.driver);
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess && rt > 0)
        f.runtime = rt;
    if (f.driver == 0) {                 /* a library, but no driver behind it */
        probe_rc = gpu_probe_verdict(&f, probe_why, sizeof probe_why);
        return;
    }
    f.visible = getenv("CUDA_VISIBLE_DEVICES");
    cudaError_t e = cudaGetDeviceCount(&f.count);
    f.count_result = e == cudaSuccess ? GPU_COUNT_OK
                     : e == cudaErrorNoDevice ? GPU_COUNT_NO_DEVICE
                     : e == cudaErrorInsufficientDriver ? GPU_COUNT_OLD_DRIVER : GPU_COUNT_FAILED;
    snprintf(count_err, sizeof count_err, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    f.count_error = count_err;
    cudaGetLastError();
    if (f.count_result == GPU_COUNT_OK && f.count > 0)
        probe_code(&f, code_err, sizeof code_err, &prop);
    probe_rc = gpu_probe_verdict(&f, probe_why, sizeof probe_why);
}

int gpu_probe(char *why, size_t why_len)
{
    pthread_once(&probe_once, probe_once_fn);
    if (why && why_len)
        snprintf(why, why_len, "%s", probe_why);
    return probe_rc;
}

int gpu_describe(char *buf, size_t len)
{
    cudaDeviceProp prop;
    int count = 0, drv = 0, rt = 0, blas_major = 0, blas_minor = 0, blas_patch = 0;
    char dv[16], rv[16];
    size_t dnn = cudnnGetVersion();
    if (cudaGetDeviceCount(&count) != cudaSuccess || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        cudaGetLastError();
        snprintf(buf, len, "a CUDA device (its properties could not be read)");
        return -1;
    }
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    gpu_version_text(drv, dv, sizeof dv);
    gpu_version_text(rt, rv, sizeof rv);
    cublasGetProperty(MAJOR_VERSION, &blas_major);
    cublasGetProperty(MINOR_VERSION, &blas_minor);
    cublasGetProperty(PATCH_LEVEL, &blas_patch);
    snprintf(buf, len, "%s (GPU 0 of %d), %.1f GiB, compute capability %d.%d, %d SMs; driver CUDA %s, "
             "runtime %s, cuBLAS %d.%d.%d, cuDNN %zu.%zu.%zu", prop.name, count,
             (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), prop.major, prop.minor,
             prop.multiProcessorCount, dv, rv, blas_major, blas_minor, blas_patch, dnn / 10000,
             (dnn % 10000) / 100, dnn % 100);
    return 0;
}

/* ---- open and close ----------------------------------------------------------------------- */

static void timing_release(gpu_state *s)
{
    for (int i = 0; i < s->slots_made; i++)
        for (int m = 0; m < NN_TIMING_MARKS; m++)
            cudaEventDestroy(s->slots[i].ev[m]);
    s->slots_made = 0;
    if (s->clock_made) {
        cudaEventDestroy(s->clock_ev[0]);
        cudaEventDestroy(s->clock_ev[1]);
        s->clock_made = 0;
    }
}

void gpu_close(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    if (!s)
        return;
    gpu_ranks_close(b);
    if (s->stream)
        cudaStreamSynchronize(s->stream);
    if (s->capturing) {
        cudaGraph_t g = NULL;
        cudaStreamEndCapture(s->stream, &g);
        if (g)
            cudaGraphDestroy(g);
        s->capturing = 0;
    }
    gpu_graph_drop(b);
    gpu_plans_destroy(s);
    gpu_choices_close(b);
    timing_release(s);
    for (int i = 0; i < GPU_PINNED; i++)
        if (s->pinned[i].p) {
            cudaEventDestroy(s->pinned[i].read);
            cudaFreeHost(s->pinned[i].p);
        }
    if (s->dnn)
        cudnnDestroy(s->dnn);
    if (s->blas)
        cublasDestroy(s->blas);
    cudaFree(s->blas_ws);
    cudaFree(s->partials);
    cudaFree(s->bias_partials);
    cudaFree(s->blocks_done);
    cudaFree(s->fault_claim);
    cudaFree(s->step_dev);
    if (s->fault_host)
        cudaFreeHost((void *)s->fault_host);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    cudaGetLastError();
    free(s);
    b->impl = NULL;
}

/* cudaMalloc and zero, for the backend's own buffers. */
static int own_buffer(nn_backend *b, void **p, size_t bytes, const char *what)
{
    gpu_state *s = gpu_of(b);
    if (gpu_cuda(b, cudaMalloc(p, bytes), "open", "cudaMalloc", "allocating %s (%zu bytes)", what, bytes) ||
        gpu_cuda(b, cudaMemsetAsync(*p, 0, bytes, s->stream), "open", "cudaMemsetAsync",
                 "clearing %s", what))
        return -1;
    return 0;
}

/* NNLAB_GPU_INJECT: a comma-separated list of enum gpu_inject's names; an
 * unknown name is an error, so that a test cannot ask for nothing. */
static int read_inject(nn_backend *b, unsigned *out)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        { "capture-strict", GPU_INJECT_CAPTURE_STRICT }, { "capture", GPU_INJECT_CAPTURE },
        { "algo-first", GPU_INJECT_ALGO_FIRST }, { "algo-all", GPU_INJECT_ALGO_ALL },
    };
    const char *env = getenv("NNLAB_GPU_INJECT");
    *out = 0;
    for (const char *p = env; p && *p;) {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        while (i < sizeof names / sizeof names[0] &&
               !(strlen(names[i].name) == len && strncmp(names[i].name, p, len) == 0))
            i++;
        if (i == sizeof names / sizeof names[0])
            return gpu_fail(b, "open: NNLAB_GPU_INJECT=%s: unknown fault '%.*s' (capture-strict, "
                            "capture, algo-first, algo-all)", env, (int)len, p);
        *out |= names[i].bit;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* The device, the stream, cuBLAS (with a workspace of its own, so that a
 * recorded graph allocates nothing) and cuDNN, bound to the stream. */
static int open_libraries(nn_backend *b, gpu_state *s)
{
    if (gpu_cuda(b, cudaSetDevice(s->device), "open", "cudaSetDevice", "selecting GPU %d", s->device) ||
        gpu_cuda(b, cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), "open",
                 "cudaStreamCreateWithFlags", "creating the stream"))
        return -1;
    if (gpu_blas(b, cublasCreate(&s->blas), "open", "cublasCreate", "creating the cuBLAS handle") ||
        gpu_blas(b, cublasSetStream(s->blas, s->stream), "open", "cublasSetStream", "binding cuBLAS to the stream") ||
        /* after SetStream, which resets it */
        own_buffer(b, &s->blas_ws, GPU_BLAS_WORKSPACE, "the cuBLAS workspace") ||
        gpu_blas(b, cublasSetWorkspace(s->blas, s->blas_ws, GPU_BLAS_WORKSPACE), "open",
                 "cublasSetWorkspace", "giving cuBLAS %zu bytes of workspace", GPU_BLAS_WORKSPACE) ||
        /* FP32 products stay FP32 (no TF32) unless the job asked for TF32 */
        gpu_blas(b, cublasSetMathMode(s->blas, s->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
                 "open", "cublasSetMathMode", "choosing %s math", s->tf32 ? "TF32" : "FP32"))
        return -1;
    return gpu_dnn(b, cudnnCreate(&s->dnn), "open", "cudnnCreate", "creating the cuDNN handle") ||
           gpu_dnn(b, cudnnSetStream(s->dnn, s->stream), "open", "cudnnSetStream", "binding cuDNN to the stream");
}

/* The module's own small device buffers, and the fault report in mapped
 * host memory that a kernel writes and the host reads without a copy. */
static int open_buffers(nn_backend *b, gpu_state *s)
{
    void *host = NULL, *dev = NULL;
    if (own_buffer(b, (void **)&s->partials, GPU_RED_BLOCKS * 2 * sizeof(double), "the loss partial sums") ||
        own_buffer(b, (void **)&s->bias_partials, GPU_BIAS_PARTIALS * sizeof(float),
                   "the bias gradient's partial sums") ||
        own_buffer(b, (void **)&s->blocks_done, sizeof(unsigned int), "the reduction counter") ||
        own_buffer(b, (void **)&s->fault_claim, sizeof(int), "the fault flag") ||
        own_buffer(b, (void **)&s->step_dev, sizeof(gpu_step_values), "the step values of graphs"))
        return -1;
    if (gpu_cuda(b, cudaHostAlloc(&host, 4 * sizeof(int), cudaHostAllocMapped), "open", "cudaHostAlloc",
                 "allocating the fault report") ||
        gpu_cuda(b, cudaHostGetDevicePointer(&dev, host, 0), "open", "cudaHostGetDevicePointer",
                 "mapping the fault report"))
        return -1;
    memset(host, 0, 4 * sizeof(int));
    s->fault_host = (volatile int *)host;
    s->fault_dev = (int *)dev;
    return 0;
}

/* The timing slots' events; slots_made counts the whole slots (close
 * destroys those). */
static int open_timing(nn_backend *b, gpu_state *s)
{
    for (; s->slots_made < GPU_TIMING_SLOTS; s->slots_made++) {
        gpu_timing_slot *t = &s->slots[s->slots_made];
        for (int m = 0; m < NN_TIMING_MARKS; m++)
            if (gpu_cuda(b, cudaEventCreate(&t->ev[m]), "open", "cudaEventCreate", "creating timing events")) {
                for (int k = 0; k < m; k++)
                    cudaEventDestroy(t->ev[k]);
                return -1;
            }
    }
    return 0;
}

/* One rank a GPU: a data-parallel rank takes its local rank modulo the GPUs
 * it sees (CUDA_VISIBLE_DEVICES still picks which those are); a plain job
 * the first. */
static int rank_device(const nn_backend_config *cfg)
{
    int count = 0;
    if (!cfg || cfg->local_rank <= 0 || cudaGetDeviceCount(&count) != cudaSuccess || count < 1)
        return 0;
    return cfg->local_rank % count;
}

int gpu_open(nn_backend *b, const nn_backend_config *cfg)
{
    gpu_state *s = (gpu_state *)calloc(1, sizeof *s);
    if (!s)
        return gpu_fail(b, "open: out of host memory for the GPU backend's state");
    b->impl = s;
    s->count = &s->live;
    s->tf32 = cfg ? cfg->tf32 : 0;
    s->deterministic = cfg ? cfg->deterministic : 0;
    s->device = rank_device(cfg);
    if (read_inject(b, &s->inject) == 0 && open_libraries(b, s) == 0 && open_buffers(b, s) == 0 &&
        gpu_choices_open(b, cfg) == 0 &&
        open_timing(b, s) == 0 &&
        gpu_cuda(b, cudaStreamSynchronize(s->stream), "open", "cudaStreamSynchronize", "finishing the set-up") == 0)
        return 0;
    /* close frees whatever was made; the message survives it */
    char why[NN_BACKEND_ERROR_LEN];
    memcpy(why, b->last_error, sizeof why);
    gpu_close(b);
    memcpy(b->last_error, why, sizeof why);
    return -1;
}

/* ---- memory and copies ------------------------------------------------------------------- */

int gpu_alloc(nn_backend *b, size_t bytes, void **out)
{
    gpu_state *s = gpu_of(b);
    size_t want = bytes ? bytes : 1;   /* a real pointer even for 0 bytes: NULL means "skipped" */
    *out = NULL;
    cudaError_t e = cudaMalloc(out, want);
    if (e == cudaErrorMemoryAllocation) {
        size_t free_b = 0, total = 0;
        cudaGetLastError();
        cudaMemGetInfo(&free_b, &total);
        *out = NULL;
        return gpu_fail(b, "out of GPU memory: cudaMalloc of %zu bytes (%.1f MiB) failed with "
                        "%.1f MiB free of %.1f MiB", bytes, (double)bytes / 1048576.0,
                        (double)free_b / 1048576.0, (double)total / 1048576.0);
    }
    if (gpu_cuda(b, e, "alloc", "cudaMalloc", "allocating %zu bytes", bytes)) {
        *out = NULL;
        return -1;
    }
    /* zeroed, as the contract says: in stream order, before any use */
    if (gpu_cuda(b, cudaMemsetAsync(*out, 0, want, s->stream), "alloc", "cudaMemsetAsync",
                 "zeroing %zu new bytes", bytes)) {
        cudaFree(*out);
        *out = NULL;
        return -1;
    }
    s->count->kernels++;
    return 0;
}

void gpu_free(nn_backend *b, void *p)
{
    (void)b;
    if (p)
        cudaFree(p);   /* waits for the device: never inside a step */
}

static gpu_pinned *pinned_of(gpu_state *s, const void *p)
{
    const char *c = (const char *)p;
    for (int i = 0; i < GPU_PINNED; i++)
        if (s->pinned[i].p && c >= s->pinned[i].p && c < s->pinned[i].p + s->pinned[i].bytes)
            return &s->pinned[i];
    return NULL;
}

int gpu_upload(nn_backend *b, void *dst, const void *src, size_t bytes)
{
    gpu_state *s = gpu_of(b);
    if (bytes == 0)
        return 0;
    /* From pageable memory the runtime stages the bytes before it returns, so
     * src may be reused at once; from page-locked memory the copy runs later,
     * and an event tells host_wait when it has. */
    if (gpu_cuda(b, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s->stream), "upload",
                 "cudaMemcpyAsync", "copying %zu bytes to the GPU", bytes))
        return -1;
    s->count->h2d_copies++;
    s->count->h2d_bytes += bytes;
    gpu_pinned *pin = pinned_of(s, src);
    if (pin) {
        if (gpu_cuda(b, cudaEventRecord(pin->read, s->stream), "upload", "cudaEventRecord",
                     "marking the end of a copy from page-locked memory"))
            return -1;
        pin->pending = 1;
    }
    return 0;
}

int gpu_download(nn_backend *b, void *dst, const void *src, size_t bytes)
{
    gpu_state *s = gpu_of(b);
    if (bytes == 0)
        return 0;
    if (gpu_cuda(b, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s->stream), "download",
                 "cudaMemcpyAsync", "copying %zu bytes from the GPU", bytes) ||
        gpu_cuda(b, cudaStreamSynchronize(s->stream), "download", "cudaStreamSynchronize",
                 "waiting for %zu bytes from the GPU (an earlier operation may have failed)", bytes))
        return -1;
    s->count->d2h_copies++;
    s->count->d2h_bytes += bytes;
    s->count->syncs++;
    return check_fault(b, "download");
}

int gpu_zero(nn_backend *b, void *p, size_t bytes)
{
    gpu_state *s = gpu_of(b);
    if (bytes == 0)
        return 0;
    if (gpu_cuda(b, cudaMemsetAsync(p, 0, bytes, s->stream), "zero", "cudaMemsetAsync",
                 "zeroing %zu bytes", bytes))
        return -1;
    s->count->kernels++;
    return 0;
}

int gpu_synchronize(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    if (gpu_cuda(b, cudaStreamSynchronize(s->stream), "synchronize", "cudaStreamSynchronize",
                 "waiting for the GPU (an earlier operation may have failed)"))
        return -1;
    s->count->syncs++;
    return check_fault(b, "synchronize");
}

/* ---- page-locked host memory ------------------------------------------------------------- */

int gpu_host_alloc(nn_backend *b, size_t bytes, void **out)
{
    gpu_state *s = gpu_of(b);
    gpu_pinned *slot = NULL;
    *out = NULL;
    for (int i = 0; i < GPU_PINNED && !slot; i++)
        if (!s->pinned[i].p)
            slot = &s->pinned[i];
    if (!slot)
        return gpu_fail(b, "host_alloc: more than %d page-locked buffers", GPU_PINNED);
    if (gpu_cuda(b, cudaEventCreateWithFlags(&slot->read, cudaEventDisableTiming), "host_alloc",
                 "cudaEventCreateWithFlags", "creating the event of a page-locked buffer"))
        return -1;
    cudaError_t e = cudaHostAlloc((void **)&slot->p, bytes ? bytes : 1, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        cudaEventDestroy(slot->read);
        slot->p = NULL;
        cudaGetLastError();
        return gpu_fail(b, "out of page-locked host memory: cudaHostAlloc of %zu bytes failed: %s",
                        bytes, cudaGetErrorString(e));
    }
    memset(slot->p, 0, bytes ? bytes : 1);
    slot->bytes = bytes ? bytes : 1;
    slot->pending = 0;
    *out = slot->p;
    return 0;
}

void gpu_host_free(nn_backend *b, void *p)
{
    gpu_state *s = gpu_of(b);
    gpu_pinned *pin = p ? pinned_of(s, p) : NULL;
    if (!pin)
        return;
    cudaEventSynchronize(pin->read);
    cudaEventDestroy(pin->read);
    cudaFreeHost(pin->p);
    memset(pin, 0, sizeof *pin);
}

int gpu_host_wait(nn_backend *b, const void *p)
{
    gpu_state *s = gpu_of(b);
    gpu_pinned *pin = pinned_of(s, p);
    if (!pin || !pin->pending)
        return 0;
    cudaError_t e = cudaEventQuery(pin->read);
    if (e == cudaErrorNotReady) {
        cudaGetLastError();
        e = cudaEventSynchronize(pin->read);
        s->count->syncs++;
    }
    if (gpu_cuda(b, e, "host_wait", "cudaEventSynchronize", "waiting for a copy from page-locked memory"))
        return -1;
    pin->pending = 0;
    return 0;
}

/* ---- the table and the exports ----------------------------------------------------------------- */

static nn_backend_ops gpu_ops;
static pthread_once_t ops_once = PTHREAD_ONCE_INIT;

/* Filled field by field: C++ has no C99 designated initialisers in nvcc's
 * default dialect. */
static void ops_init(void)
{
    nn_backend_ops *o = &gpu_ops;
    memset(o, 0, sizeof *o);
    o->name = "gpu";
    o->summary = NN_GPU_SUMMARY;
    o->host_memory = 0;
    /* gpu_<op> in every slot of backend_ops.def but the fast CPU backend's own */
#define NN_GPU_SLOT_own(op) o->op = gpu_##op;
#define NN_GPU_SLOT_ref NN_GPU_SLOT_own
#define NN_GPU_SLOT_none NN_GPU_SLOT_own
#define NN_GPU_SLOT_cpu NN_GPU_SLOT_own
#define NN_GPU_SLOT_host(op)
#define NN_OP(ret, op, params, cpu) NN_GPU_SLOT_##cpu(op)
#include "backend_ops.def"
}

NN_EXPORT const int nn_backend_module_abi = NN_BACKEND_ABI;

NN_EXPORT const nn_backend_ops *nn_backend_module_ops(void)
{
    pthread_once(&ops_once, ops_init);
    return &gpu_ops;
}

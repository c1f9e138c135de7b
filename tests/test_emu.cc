/* tests/test_emu.cc - the emulated GPU's own rules (backends/cuda/emu/): each
 * thing the emulator claims to catch is caught, so that the GPU suite
 * passing on it means something. A GPU program that breaks a rule must
 * fail here as it would on a GPU (or more reliably): a barrier that some
 * threads skip, a write past an allocation, a host pointer given to a
 * kernel, a result read before waiting, a capture doing what capture
 * forbids, cuBLAS and cuDNN called against their documented conventions.
 *
 * A fault is sticky (every later call fails, as after a real device
 * fault), so each case that provokes one runs in a child process. */
#include "emu/cuda_emu.h"
#include "test_emu.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include <cmocka.h>
}

#define LAUNCH(kernel, grid, block, stream, ...) \
    nn_emu_launch(kernel, #kernel, grid, block, 0, stream, __VA_ARGS__)

/* ---- kernels ------------------------------------------------------------------------------ */

__global__ void fill_kernel(float *p, int n, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v;
}

/* Thread 0 leaves before the barrier: every other thread waits for it. */
__global__ void early_exit_kernel(float *p)
{
    if (threadIdx.x == 0)
        return;
    __syncthreads();
    p[threadIdx.x] = 1.0f;
}

/* A block sum that needs its barrier; `skip` leaves it out. Each block
 * writes its own sum. */
__global__ void block_sum_kernel(const float *x, float *out, int skip)
{
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    if (!skip)
        __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int i = 0; i < 64; i++)
            t += s[i];
        out[blockIdx.x] = t;
    }
}

/* What shared memory holds before a block writes it. */
__global__ void read_shared_kernel(unsigned *out)
{
    __shared__ unsigned s[4];
    out[blockIdx.x] = s[blockIdx.x % 4];
    s[blockIdx.x % 4] = 0;
}

/* The order blocks ran in. */
__global__ void order_kernel(unsigned *count, unsigned *order)
{
    if (threadIdx.x == 0)
        order[atomicAdd(count, 1u)] = blockIdx.x;
}

__global__ void append_kernel(unsigned *count, float *values, float v)
{
    values[atomicAdd(count, 1u)] = v;
}

/* ---- helpers ------------------------------------------------------------------------------- */

/* Runs fn in a child process; its exit status (0 when fn returned 0). */
static int in_child(int (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fn() == 0 ? 0 : 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

float *device_floats(size_t n)
{
    void *p = NULL;
    assert_int_equal(cudaMalloc(&p, n * sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMemsetAsync(p, 0, n * sizeof(float), 0), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    return (float *)p;
}

cudaStream_t new_stream(void)
{
    cudaStream_t s = NULL;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    return s;
}

/* ---- threads and blocks -------------------------------------------------------------------- */

static int early_exit_faults(void)
{
    float *p = NULL;
    if (cudaMalloc((void **)&p, 64 * sizeof(float)) != cudaSuccess)
        return 2;
    LAUNCH(early_exit_kernel, 1, 64, 0, p);
    if (cudaGetLastError() != cudaSuccess)
        return 3;               /* the launch itself is fine; running it is not */
    return cudaStreamSynchronize(0) == cudaErrorLaunchFailure &&
           cudaMalloc((void **)&p, 4) == cudaErrorLaunchFailure ? 0 : 1;   /* and it sticks */
}

static void test_barrier_left_early(void **state)
{
    (void)state;
    assert_int_equal(in_child(early_exit_faults), 0);
}

/* The barrier orders shared memory; without it a block's sum reads what
 * threads not yet run have not written (garbage), unless thread 0 happens
 * to start last: 16 blocks, each in its own random order. */
static void test_barrier_orders_shared_memory(void **state)
{
    (void)state;
    float x[64], sum = 0.0f, got[16];
    for (int i = 0; i < 64; i++) {
        x[i] = (float)(i + 1);
        sum += x[i];
    }
    float *dx = device_floats(64), *out = device_floats(16);
    assert_int_equal(cudaMemcpyAsync(dx, x, sizeof x, cudaMemcpyHostToDevice, 0), cudaSuccess);
    for (int skip = 0; skip < 2; skip++) {
        LAUNCH(block_sum_kernel, 16, 64, 0, dx, out, skip);
        assert_int_equal(cudaGetLastError(), cudaSuccess);
        assert_int_equal(cudaMemcpyAsync(got, out, sizeof got, cudaMemcpyDeviceToHost, 0), cudaSuccess);
        assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
        int right = 0;
        for (int b = 0; b < 16; b++)
            right += got[b] == sum;
        if (skip)
            assert_true(right < 16);
        else
            assert_int_equal(right, 16);
    }
    cudaFree(dx);
    cudaFree(out);
}

static void test_shared_memory_starts_undefined(void **state)
{
    (void)state;
    unsigned *out = NULL, got[8];
    assert_int_equal(cudaMalloc((void **)&out, sizeof got), cudaSuccess);
    LAUNCH(read_shared_kernel, 8, 1, 0, out);
    assert_int_equal(cudaMemcpyAsync(got, out, sizeof got, cudaMemcpyDeviceToHost, 0), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    for (int i = 0; i < 8; i++)
        assert_int_equal(got[i], 0xffffffffu);   /* not the 0 the block before left */
    cudaFree(out);
}

/* The order 64 blocks ran in, in a fresh process (the seed is read once per
 * process): this program run with --block-order SEED, its answer on a pipe. */
static int block_order(const char *seed, unsigned *out)
{
    unsigned *count = NULL, *order = NULL;
    setenv("NNLAB_EMU_SEED", seed, 1);
    if (cudaMalloc((void **)&count, 4) || cudaMalloc((void **)&order, 64 * 4) ||
        cudaMemsetAsync(count, 0, 4, 0))
        return 1;
    LAUNCH(order_kernel, 64, 32, 0, count, order);
    return cudaMemcpyAsync(out, order, 64 * 4, cudaMemcpyDeviceToHost, 0) || cudaStreamSynchronize(0);
}

static void order_in_new_process(const char *seed, unsigned out[64])
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execl("/proc/self/exe", "test_emu", "--block-order", seed, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t r;
    while (got < 64 * 4 && (r = read(fd[0], (char *)out + got, 64 * 4 - got)) > 0)
        got += (size_t)r;
    close(fd[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(got, 64 * 4);
}

static void test_block_order_random_and_seeded(void **state)
{
    (void)state;
    unsigned a[64], again[64], other[64], in_order = 1;
    unsigned long long present = 0;
    order_in_new_process("1", a);
    order_in_new_process("1", again);
    order_in_new_process("2", other);
    for (int i = 0; i < 64; i++) {
        in_order &= a[i] == (unsigned)i;
        present |= 1ull << a[i];
    }
    assert_true(present == ~0ull);                 /* every block ran once */
    assert_false(in_order);                        /* not in index order */
    assert_memory_equal(a, again, sizeof a);       /* the seed repeats it */
    assert_true(memcmp(a, other, sizeof a) != 0);  /* another seed does not */
}

/* ---- memory -------------------------------------------------------------------------------- */

static int overrun_faults(void)
{
    float *p = NULL;
    if (cudaMalloc((void **)&p, 100 * sizeof(float)) != cudaSuccess)
        return 2;
    LAUNCH(fill_kernel, 1, 128, 0, p, 101, 1.0f);      /* one element too many */
    return cudaStreamSynchronize(0) == cudaErrorIllegalAddress ? 0 : 1;
}

static int host_pointer_faults(void)
{
    static float host[4];
    LAUNCH(fill_kernel, 1, 4, 0, host, 4, 1.0f);
    return cudaStreamSynchronize(0) == cudaErrorIllegalAddress ? 0 : 1;
}

static void test_memory_faults(void **state)
{
    (void)state;
    assert_int_equal(in_child(overrun_faults), 0);
    assert_int_equal(in_child(host_pointer_faults), 0);
}

/* Work runs when the host waits for it; a query says "not ready" first. */
static void test_deferred_execution(void **state)
{
    (void)state;
    cudaStream_t s = new_stream();
    cudaEvent_t done;
    float *p = device_floats(4);
    assert_int_equal(cudaEventCreate(&done), cudaSuccess);
    LAUNCH(fill_kernel, 1, 4, s, p, 4, 3.0f);
    assert_int_equal(cudaEventRecord(done, s), cudaSuccess);
    assert_true(p[0] == 0.0f);          /* device memory is host memory here: not yet run */
    assert_int_equal(cudaEventQuery(done), cudaErrorNotReady);
    assert_int_equal(cudaEventQuery(done), cudaSuccess);
    assert_true(p[0] == 3.0f);
    cudaEventDestroy(done);
    cudaStreamDestroy(s);
    cudaFree(p);
}

/* A pageable source is taken at the call, a page-locked one when the copy runs. */
static void test_copy_sources(void **state)
{
    (void)state;
    cudaStream_t s = new_stream();
    float *d = device_floats(2), pageable = 1.0f, *pinned = NULL, back[2];
    assert_int_equal(cudaHostAlloc((void **)&pinned, 4, cudaHostAllocDefault), cudaSuccess);
    *pinned = 1.0f;
    assert_int_equal(cudaMemcpyAsync(d, &pageable, 4, cudaMemcpyHostToDevice, s), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(d + 1, pinned, 4, cudaMemcpyHostToDevice, s), cudaSuccess);
    pageable = 2.0f;
    *pinned = 2.0f;                     /* reused before waiting for the copy */
    assert_int_equal(cudaMemcpyAsync(back, d, 8, cudaMemcpyDeviceToHost, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_true(back[0] == 1.0f);
    assert_true(back[1] == 2.0f);
    cudaFreeHost(pinned);
    cudaStreamDestroy(s);
    cudaFree(d);
}

/* ---- capture and graphs -------------------------------------------------------------------- */

/* Records fill_kernel around `between`; the status EndCapture returns. */
static cudaError_t capture_around(cudaStream_t s, cudaStreamCaptureMode mode, float *p,
                                  void (*between)(cudaStream_t))
{
    cudaGraph_t g = NULL;
    assert_int_equal(cudaStreamBeginCapture(s, mode), cudaSuccess);
    LAUNCH(fill_kernel, 1, 4, s, p, 4, 1.0f);
    between(s);
    cudaError_t e = cudaStreamEndCapture(s, &g);
    if (e == cudaSuccess) {
        assert_non_null(g);
        cudaGraphDestroy(g);
    } else {
        assert_null(g);
    }
    cudaGetLastError();
    return e;
}

static void allocate(cudaStream_t)
{
    void *q = NULL;
    if (cudaMalloc(&q, 16) == cudaSuccess)
        cudaFree(q);
}
static void wait_for_it(cudaStream_t s) { cudaStreamSynchronize(s); }
static void query_it(cudaStream_t s) { cudaStreamQuery(s); }
static void use_legacy(cudaStream_t) { LAUNCH(fill_kernel, 1, 1, 0, (float *)NULL, 0, 0.0f); }
static void nothing(cudaStream_t) {}

static void test_capture_rules(void **state)
{
    (void)state;
    cudaStream_t s = new_stream();
    float *p = device_floats(4);
    assert_int_equal(capture_around(s, cudaStreamCaptureModeThreadLocal, p, nothing), cudaSuccess);
    assert_int_equal(capture_around(s, cudaStreamCaptureModeThreadLocal, p, allocate),
                     cudaErrorStreamCaptureInvalidated);
    assert_int_equal(capture_around(s, cudaStreamCaptureModeRelaxed, p, allocate), cudaSuccess);
    assert_int_equal(capture_around(s, cudaStreamCaptureModeRelaxed, p, wait_for_it),
                     cudaErrorStreamCaptureInvalidated);
    assert_int_equal(capture_around(s, cudaStreamCaptureModeGlobal, p, query_it),
                     cudaErrorStreamCaptureInvalidated);
    assert_int_equal(capture_around(s, cudaStreamCaptureModeThreadLocal, p, use_legacy),
                     cudaErrorStreamCaptureInvalidated);
    assert_true(p[0] == 0.0f);          /* nothing recorded ran */
    cudaStreamDestroy(s);
    cudaFree(p);
}

/* Each launch replays the node's arguments as they were set for it. */
static void test_graph_arguments_per_launch(void **state)
{
    (void)state;
    cudaStream_t s = new_stream();
    unsigned *count = NULL;
    float *values = device_floats(3), v = 5.0f;
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    cudaGraphNode_t root = NULL;
    size_t n = 1;
    assert_int_equal(cudaMalloc((void **)&count, 4), cudaSuccess);
    assert_int_equal(cudaMemsetAsync(count, 0, 4, s), cudaSuccess);
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    LAUNCH(append_kernel, 1, 1, s, count, values, 1.0f);
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
    assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    assert_int_equal(cudaGraphGetRootNodes(g, &root, &n), cudaSuccess);
    assert_int_equal(n, 1);
    void *args[3] = { &count, &values, &v };
    cudaKernelNodeParams kp = cudaKernelNodeParams();
    kp.func = (void *)append_kernel;
    kp.kernelParams = args;
    for (int i = 0; i < 2; i++) {
        v = 5.0f + 2.0f * (float)i;
        assert_int_equal(cudaGraphExecKernelNodeSetParams(x, root, &kp), cudaSuccess);
        assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
    }
    v = 9.0f;                           /* set after the last launch: reaches none */
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_true(values[0] == 5.0f && values[1] == 7.0f && values[2] == 0.0f);
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    cudaFree(count);
    cudaFree(values);
}

/* ---- cuBLAS --------------------------------------------------------------------------------- */

/* Column-major C (2x2) = A^T (2x3 from A 3x2) . B (3x2); C starts NaN, beta 0. */
static void test_sgemm(void **state)
{
    (void)state;
    cublasHandle_t h;
    const float a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 1, 0, 2, 0, 1, 1 }, one = 1, zero = 0;
    float c[4], nan4[4];
    memset(nan4, 0xff, sizeof nan4);
    float *da = device_floats(6), *db = device_floats(6), *dc = device_floats(4);
    cudaMemcpyAsync(da, a, sizeof a, cudaMemcpyHostToDevice, 0);
    cudaMemcpyAsync(db, b, sizeof b, cudaMemcpyHostToDevice, 0);
    cudaMemcpyAsync(dc, nan4, sizeof nan4, cudaMemcpyHostToDevice, 0);
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &one, da, 3, db, 3, &zero, dc, 2),
                     CUBLAS_STATUS_SUCCESS);
    cudaMemcpyAsync(c, dc, sizeof c, cudaMemcpyDeviceToHost, 0);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    /* A^T rows (1 2 3), (4 5 6); B columns (1 0 2), (0 1 1) */
    assert_true(c[0] == 7 && c[1] == 16 && c[2] == 5 && c[3] == 11);
    /* lda must cover op(A)'s rows: k = 3 for a transposed A */
    assert_int_equal(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &one, da, 2, db, 3, &zero, dc, 2),
                     CUBLAS_STATUS_INVALID_VALUE);
    assert_int_equal(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, da, 2, db, 3, &zero, dc, 1),
                     CUBLAS_STATUS_INVALID_VALUE);
    cublasDestroy(h);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
}

static int sgemm_overrun_faults(void)
{
    cublasHandle_t h;
    const float one = 1, zero = 0;
    float *a = NULL, *c = NULL;
    if (cudaMalloc((void **)&a, 6 * 4) || cudaMalloc((void **)&c, 4 * 4) || cublasCreate(&h))
        return 2;
    /* A is 3 x 3 with lda 3: 9 floats, 6 allocated */
    if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 3, 1, 3, &one, a, 3, a, 3, &zero, c, 3) !=
        CUBLAS_STATUS_EXECUTION_FAILED)
        return 1;
    return cudaStreamSynchronize(0) == cudaErrorIllegalAddress ? 0 : 1;
}

static void test_sgemm_bounds(void **state)
{
    (void)state;
    assert_int_equal(in_child(sgemm_overrun_faults), 0);
}

/* A captured call needs a workspace of the caller's; cublasSetStream drops it. */
static void test_sgemm_capture_workspace(void **state)
{
    (void)state;
    cudaStream_t s = new_stream();
    cublasHandle_t h;
    cudaGraph_t g = NULL;
    const float one = 1, zero = 0;
    float *a = device_floats(4), *c = device_floats(2), *ws = device_floats(1024);
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    for (int with_ws = 0; with_ws < 3; with_ws++) {
        assert_int_equal(cublasSetStream(h, s), CUBLAS_STATUS_SUCCESS);
        if (with_ws == 1)
            assert_int_equal(cublasSetWorkspace(h, ws, 4096), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 1, 2, &one, a, 2, a, 2, &zero, c, 2);
        cudaError_t e = cudaStreamEndCapture(s, &g);
        assert_int_equal(e, with_ws == 1 ? cudaSuccess : cudaErrorStreamCaptureInvalidated);
        if (g)
            cudaGraphDestroy(g);
        g = NULL;
    }
    cublasDestroy(h);
    cudaStreamDestroy(s);
    cudaFree(a);
    cudaFree(c);
    cudaFree(ws);
}

/* With NNLAB_EMU_LAZY_INIT=1 (run in a fresh process: the variable is read
 * once), a routine's first call inside a capture spoils it; once it has run
 * eagerly, recording it works. 0 when both hold. */
static int lazy_init_case(void)
{
    setenv("NNLAB_EMU_LAZY_INIT", "1", 1);
    cudaStream_t s = NULL;
    cublasHandle_t h;
    cudaGraph_t g = NULL;
    const float one = 1, zero = 0;
    float *a = NULL, *c = NULL, *ws = NULL;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) || cudaMalloc((void **)&a, 16) ||
        cudaMalloc((void **)&c, 8) || cudaMalloc((void **)&ws, 4096) || cublasCreate(&h) ||
        cublasSetStream(h, s) || cublasSetWorkspace(h, ws, 4096))
        return 2;
    cudaError_t first = cudaSuccess, second = cudaSuccess;
    for (int round = 0; round < 2; round++) {
        if (round == 1)   /* the warm-up: once eagerly */
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 1, 2, &one, a, 2, a, 2, &zero, c, 2);
        cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 1, 2, &one, a, 2, a, 2, &zero, c, 2);
        (round ? second : first) = cudaStreamEndCapture(s, &g);
        if (g)
            cudaGraphDestroy(g);
        g = NULL;
    }
    return first == cudaErrorStreamCaptureInvalidated && second == cudaSuccess ? 0 : 1;
}

static void test_lazy_init_option(void **state)
{
    (void)state;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "test_emu", "--lazy-init", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--block-order") == 0) {
        unsigned order[64];
        if (block_order(argv[2], order) != 0)
            return 1;
        return fwrite(order, sizeof order, 1, stdout) == 1 ? 0 : 1;
    }
    if (argc == 2 && strcmp(argv[1], "--lazy-init") == 0)
        return lazy_init_case();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_barrier_left_early),
        cmocka_unit_test(test_barrier_orders_shared_memory),
        cmocka_unit_test(test_shared_memory_starts_undefined),
        cmocka_unit_test(test_block_order_random_and_seeded),
        cmocka_unit_test(test_memory_faults),
        cmocka_unit_test(test_deferred_execution),
        cmocka_unit_test(test_copy_sources),
        cmocka_unit_test(test_capture_rules),
        cmocka_unit_test(test_graph_arguments_per_launch),
        cmocka_unit_test(test_sgemm),
        cmocka_unit_test(test_sgemm_bounds),
        cmocka_unit_test(test_sgemm_capture_workspace),
        cmocka_unit_test(test_lazy_init_option),
        cmocka_unit_test(test_conv_forward),
        cmocka_unit_test(test_conv_algorithms),
        cmocka_unit_test(test_conv_find),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

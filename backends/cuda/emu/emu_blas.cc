/* backends/cuda/emu/emu_blas.cc - a stand-in for the cuBLAS the GPU module
 * calls, written from the cuBLAS documentation:
 *
 * - cublasSgemm: C = alpha op(A) op(B) + beta C on column-major matrices,
 *   op(A) m x k, op(B) k x n, C m x n; CUBLAS_STATUS_INVALID_VALUE when
 *   m, n or k < 0, an operation is unknown, lda < max(1, m) for op N and
 *   max(1, k) otherwise, ldb < max(1, k) for op N and max(1, n) otherwise,
 *   or ldc < max(1, m). alpha and beta are read from host memory when the
 *   call is made (the default pointer mode); when beta is 0, C is not read
 *   (it may hold NaN). The arithmetic is OpenBLAS's sgemm, in FP32 whatever
 *   the math mode (TF32 is accepted and ignored).
 * - every matrix, as far as its leading dimension reaches, must lie in one
 *   allocation of the emulated device, checked when the call is made and
 *   again when it runs (a graph may replay it after a buffer was freed);
 *   C may not overlap A or B (cuBLAS does not promise a result then; the
 *   stand-in refuses it).
 * - cublasSetStream resets the workspace to cuBLAS's own pool, as the
 *   documentation says; a call captured into a graph without a workspace
 *   the caller set (cublasSetWorkspace) may allocate, which capture forbids:
 *   it invalidates the capture unless that was begun in relaxed mode. The
 *   workspace is overwritten by each call, as a library's scratch memory is.
 */
#include "emu_internal.h"

#include <cblas.h>
#include <string.h>

struct nn_emu_blas {
    cudaStream_t stream = nullptr;     /* the legacy stream until cublasSetStream */
    void *workspace = nullptr;
    size_t workspace_bytes = 0;
    bool own_workspace = false;        /* set by cublasSetWorkspace since cublasSetStream */
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    std::set<std::string> used;        /* routines run (NNLAB_EMU_LAZY_INIT) */
};

namespace nn_emu {
namespace {

std::set<nn_emu_blas *> &handles()
{
    static std::set<nn_emu_blas *> *h = new std::set<nn_emu_blas *>;
    return *h;
}

bool valid(cublasHandle_t h)
{
    return handles().count(h) != 0;
}

cublasStatus_t invalid(const std::string &why)
{
    diag("cublasSgemm: %s", why.c_str());
    return CUBLAS_STATUS_INVALID_VALUE;
}

/* Elements of a column-major rows x cols matrix with leading dimension ld,
 * as far as the last one. */
size_t extent(int rows, int cols, int ld)
{
    return rows && cols ? ((size_t)cols - 1) * (size_t)ld + (size_t)rows : 0;
}

bool overlap(const void *a, size_t na, const void *b, size_t nb)
{
    const char *x = (const char *)a, *y = (const char *)b;
    return na && nb && x < y + nb && y < x + na;
}

struct gemm {
    cublasOperation_t ta, tb;
    int m, n, k, lda, ldb, ldc;
    float alpha, beta;
    const float *A, *B;
    float *C;
    size_t a_bytes, b_bytes, c_bytes;
    void *ws;
    size_t ws_bytes;

    int check(std::string *why) const
    {
        return (a_bytes && check_range(A, a_bytes, MEM_ANY, "cublasSgemm's A", why)) ||
               (b_bytes && check_range(B, b_bytes, MEM_ANY, "cublasSgemm's B", why)) ||
               check_range(C, c_bytes, MEM_ANY, "cublasSgemm's C", why) ||
               (ws_bytes && check_range(ws, ws_bytes, MEM_DEVICE, "cuBLAS's workspace", why));
    }

    cudaError_t run(std::string *why) const
    {
        if (check(why))
            return cudaErrorIllegalAddress;
        if (ws_bytes)
            memset(ws, 0x5a, ws_bytes < 4096 ? ws_bytes : 4096);   /* scratch: not kept */
        for (int j = 0; j < n; j++) {                   /* C = beta C; not read when beta is 0 */
            float *col = C + (size_t)j * ldc;
            for (int i = 0; i < m; i++)
                col[i] = beta == 0.0f ? 0.0f : beta * col[i];
        }
        if (k > 0 && alpha != 0.0f)
            cblas_sgemm(CblasColMajor, ta == CUBLAS_OP_N ? CblasNoTrans : CblasTrans,
                        tb == CUBLAS_OP_N ? CblasNoTrans : CblasTrans, m, n, k, alpha, A, lda, B,
                        ldb, 1.0f, C, ldc);
        return cudaSuccess;
    }
};

bool known_op(cublasOperation_t t)
{
    return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C;
}

/* The documented argument checks; "" when they pass. */
std::string argument_problem(const gemm &g)
{
    int a_rows = g.ta == CUBLAS_OP_N ? g.m : g.k, b_rows = g.tb == CUBLAS_OP_N ? g.k : g.n;
    if (!known_op(g.ta) || !known_op(g.tb))
        return format("unknown operation (%d, %d)", (int)g.ta, (int)g.tb);
    if (g.m < 0 || g.n < 0 || g.k < 0)
        return format("m=%d n=%d k=%d: a size is negative", g.m, g.n, g.k);
    if (g.lda < (a_rows > 1 ? a_rows : 1))
        return format("lda=%d < max(1, %d) (transa=%d)", g.lda, a_rows, (int)g.ta);
    if (g.ldb < (b_rows > 1 ? b_rows : 1))
        return format("ldb=%d < max(1, %d) (transb=%d)", g.ldb, b_rows, (int)g.tb);
    if (g.ldc < (g.m > 1 ? g.m : 1))
        return format("ldc=%d < max(1, m=%d)", g.ldc, g.m);
    return "";
}

/* Queues g on the handle's stream (or records it); the status to return. */
cublasStatus_t issue(nn_emu_blas *h, const gemm &g)
{
    cudaError_t e = cudaSuccess;
    nn_emu_stream *st = stream_of(h->stream, &e);
    if (!st)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    if (st->capturing && !h->own_workspace && st->mode != cudaStreamCaptureModeRelaxed) {
        invalidate_capture(st, "cublasSgemm without a workspace set by cublasSetWorkspace");
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    if (first_use_spoils_capture(st, &h->used, "cublasSgemm"))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    e = enqueue(st, library_op([g](std::string *why) { return g.run(why); }));
    return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

} /* namespace */
} /* namespace nn_emu */

using namespace nn_emu;

cublasStatus_t cublasCreate(cublasHandle_t *handle)
{
    guard g(lock());
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new nn_emu_blas;
    handles().insert(*handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle)
{
    guard g(lock());
    if (!handles().erase(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    if (!valid(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!stream_of(stream, &e))
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->stream = stream;
    handle->workspace = nullptr;          /* "unconditionally resets the workspace" */
    handle->workspace_bytes = 0;
    handle->own_workspace = false;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void *workspace, size_t bytes)
{
    guard g(lock());
    if (!valid(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    std::string why;
    if (bytes && ((uintptr_t)workspace % 256 != 0 ||
                  check_range(workspace, bytes, MEM_DEVICE, "the workspace", &why) != 0)) {
        diag("cublasSetWorkspace: %s", why.empty() ? "not 256-byte aligned" : why.c_str());
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    handle->workspace = bytes ? workspace : nullptr;
    handle->workspace_bytes = bytes;
    handle->own_workspace = true;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    guard g(lock());
    if (!valid(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    int base = (int)mode & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    if (base != CUBLAS_DEFAULT_MATH && base != CUBLAS_PEDANTIC_MATH && base != CUBLAS_TF32_TENSOR_OP_MATH)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->math = mode;                  /* TF32 accepted; products stay FP32 */
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
    if (!value || type < MAJOR_VERSION || type > PATCH_LEVEL)
        return CUBLAS_STATUS_INVALID_VALUE;
    *value = type == MAJOR_VERSION ? 13 : 0;     /* the API the stand-in follows */
    return CUBLAS_STATUS_SUCCESS;
}

static const struct {
    cublasStatus_t st;
    const char *name, *text;
} status_table[] = {
    { CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success" },
    { CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED", "the library was not initialized" },
    { CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed" },
    { CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE", "an invalid numeric value was used as an argument" },
    { CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH", "an absent device architectural feature is required" },
    { CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed" },
    { CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute" },
    { CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed" },
    { CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported" },
};

const char *cublasGetStatusName(cublasStatus_t status)
{
    for (const auto &t : status_table)
        if (t.st == status)
            return t.name;
    return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    for (const auto &t : status_table)
        if (t.st == status)
            return t.text;
    return "unknown status";
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                           int m, int n, int k, const float *alpha, const float *A, int lda,
                           const float *B, int ldb, const float *beta, float *C, int ldc)
{
    guard g(lock());
    if (!valid(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    gemm op = {};
    op.ta = transa;
    op.tb = transb;
    op.m = m;
    op.n = n;
    op.k = k;
    op.lda = lda;
    op.ldb = ldb;
    op.ldc = ldc;
    std::string why = argument_problem(op);
    if (!why.empty())
        return invalid(why);
    if (!alpha || !beta)
        return invalid("alpha or beta is NULL");
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS;     /* nothing to compute */
    op.alpha = *alpha;
    op.beta = *beta;
    op.A = A;
    op.B = B;
    op.C = C;
    bool products = k > 0 && op.alpha != 0.0f;
    op.a_bytes = products ? 4 * (transa == CUBLAS_OP_N ? extent(m, k, lda) : extent(k, m, lda)) : 0;
    op.b_bytes = products ? 4 * (transb == CUBLAS_OP_N ? extent(k, n, ldb) : extent(n, k, ldb)) : 0;
    op.c_bytes = 4 * extent(m, n, ldc);
    op.ws = handle->workspace;
    op.ws_bytes = handle->workspace_bytes;
    if (overlap(C, op.c_bytes, A, op.a_bytes) || overlap(C, op.c_bytes, B, op.b_bytes))
        return invalid("C overlaps A or B");
    if (op.check(&why)) {
        fault(cudaErrorIllegalAddress, why);
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    return issue(handle, op);
}

/* backends/cuda/cuda_report.cu - the GPU module's error messages: one line
 * naming the operation, the library call, its status in words and what was
 * being done (cuda_backend.h declares them), and the count of own kernel
 * launches a launch check keeps. */
#include "cuda_backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int vfail(nn_backend *b, const char *fmt, va_list ap)
{
    if (b)
        vsnprintf(b->last_error, sizeof b->last_error, fmt, ap);
    return -1;
}

int gpu_fail(nn_backend *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(b, fmt, ap);
    va_end(ap);
    return -1;
}

/* "op: fn failed: what (while doing)" */
static int status_fail(nn_backend *b, const char *op, const char *fn, const char *what,
                       const char *doing, va_list ap)
{
    char while_[256];
    vsnprintf(while_, sizeof while_, doing, ap);
    return gpu_fail(b, "%s: %s failed: %s (while %s)", op, fn, what, while_);
}

int gpu_cuda(nn_backend *b, cudaError_t e, const char *op, const char *fn, const char *doing, ...)
{
    char what[192];
    if (e == cudaSuccess)
        return 0;
    /* reported here: take it out of the runtime's last error, so that the
     * next launch check does not report it again against another kernel */
    cudaGetLastError();
    snprintf(what, sizeof what, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    va_list ap;
    va_start(ap, doing);
    status_fail(b, op, fn, what, doing, ap);
    va_end(ap);
    return -1;
}

int gpu_blas(nn_backend *b, cublasStatus_t st, const char *op, const char *fn, const char *doing, ...)
{
    char what[192];
    if (st == CUBLAS_STATUS_SUCCESS)
        return 0;
    snprintf(what, sizeof what, "%s: %s", cublasGetStatusName(st), cublasGetStatusString(st));
    va_list ap;
    va_start(ap, doing);
    status_fail(b, op, fn, what, doing, ap);
    va_end(ap);
    return -1;
}

int gpu_dnn(nn_backend *b, cudnnStatus_t st, const char *op, const char *fn, const char *doing, ...)
{
    char what[320], detail[256] = "";
    if (st == CUDNN_STATUS_SUCCESS)
        return 0;
#if CUDNN_MAJOR >= 9
    cudnnGetLastErrorString(detail, sizeof detail);   /* cuDNN 9: the reason, when it kept one */
#endif
    snprintf(what, sizeof what, "%s%s%s", cudnnGetErrorString(st), detail[0] ? ": " : "", detail);
    va_list ap;
    va_start(ap, doing);
    status_fail(b, op, fn, what, doing, ap);
    va_end(ap);
    return -1;
}

int gpu_launched(nn_backend *b, const char *op, const char *kernel)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return gpu_fail(b, "%s: launching %s failed: %s: %s", op, kernel, cudaGetErrorName(e),
                        cudaGetErrorString(e));
    gpu_of(b)->count->kernels++;
    return 0;
}


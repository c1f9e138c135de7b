// One-off diagnostic: every cuDNN backward-data / backward-filter / forward
// algorithm, FMA and default math, on a few geometries, against a double CPU
// reference. Prints status, workspace, max |diff|, time.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("cuda %s line %d\n", cudaGetErrorString(e_), __LINE__); exit(1);} } while (0)
#define DK(x) do { cudnnStatus_t e_ = (x); if (e_ != CUDNN_STATUS_SUCCESS) { printf("cudnn %s line %d\n", cudnnGetErrorString(e_), __LINE__); exit(1);} } while (0)

static unsigned long long st = 88172645463325252ull;
static float rnd() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (float)((st >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1; }

struct G { int n, c, h, w, k, r, s, pad, stride; };

static void run(G g, cudaStream_t stream, cudnnHandle_t h, int use_stream)
{
    int ho = (g.h + 2 * g.pad - g.r) / g.stride + 1, wo = (g.w + 2 * g.pad - g.s) / g.stride + 1;
    size_t nx = (size_t)g.n * g.c * g.h * g.w, nw = (size_t)g.k * g.c * g.r * g.s, ny = (size_t)g.n * g.k * ho * wo;
    float *x = (float *)malloc(nx * 4), *w = (float *)malloc(nw * 4), *dy = (float *)malloc(ny * 4);
    for (size_t i = 0; i < nx; i++) x[i] = rnd();
    for (size_t i = 0; i < nw; i++) w[i] = rnd();
    for (size_t i = 0; i < ny; i++) dy[i] = rnd();
    double *dx = (double *)calloc(nx, 8), *dw = (double *)calloc(nw, 8), *y = (double *)calloc(ny, 8);
    for (int n = 0; n < g.n; n++) for (int k = 0; k < g.k; k++) for (int oy = 0; oy < ho; oy++) for (int ox = 0; ox < wo; ox++) {
        size_t yi = (((size_t)n * g.k + k) * ho + oy) * wo + ox;
        for (int c = 0; c < g.c; c++) for (int r = 0; r < g.r; r++) for (int s = 0; s < g.s; s++) {
            int iy = oy * g.stride - g.pad + r, ix = ox * g.stride - g.pad + s;
            if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
            size_t xi = (((size_t)n * g.c + c) * g.h + iy) * g.w + ix, wi = (((size_t)k * g.c + c) * g.r + r) * g.s + s;
            y[yi] += (double)x[xi] * w[wi];
            dx[xi] += (double)dy[yi] * w[wi];
            dw[wi] += (double)dy[yi] * x[xi];
        }
    }
    float *dX, *dW, *dDY, *dOut; void *ws;
    CK(cudaMalloc(&dX, nx * 4)); CK(cudaMalloc(&dW, nw * 4)); CK(cudaMalloc(&dDY, ny * 4));
    size_t nmax = nx > nw ? nx : nw; if (ny > nmax) nmax = ny;
    CK(cudaMalloc(&dOut, nmax * 4));
    CK(cudaMemcpy(dX, x, nx * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dW, w, nw * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dDY, dy, ny * 4, cudaMemcpyHostToDevice));
    cudnnTensorDescriptor_t tx, ty; cudnnFilterDescriptor_t fw; cudnnConvolutionDescriptor_t cv;
    DK(cudnnCreateTensorDescriptor(&tx)); DK(cudnnCreateTensorDescriptor(&ty));
    DK(cudnnCreateFilterDescriptor(&fw)); DK(cudnnCreateConvolutionDescriptor(&cv));
    DK(cudnnSetTensor4dDescriptor(tx, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, g.n, g.c, g.h, g.w));
    DK(cudnnSetTensor4dDescriptor(ty, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, g.n, g.k, ho, wo));
    DK(cudnnSetFilter4dDescriptor(fw, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, g.k, g.c, g.r, g.s));
    DK(cudnnSetConvolution2dDescriptor(cv, g.pad, g.pad, g.stride, g.stride, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    printf("== n=%d c=%d %dx%d -> k=%d %dx%d r=%d pad=%d stride=%d (stream %s)\n", g.n, g.c, g.h, g.w, g.k, ho, wo, g.r, g.pad, g.stride,
           use_stream ? "nonblocking" : "default");
    const float one = 1, zero = 0;
    float *host = (float *)malloc(nmax * 4);
    for (int math = 0; math < 2; math++) {
        cudnnMathType_t mt = math ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
        for (int dir = 0; dir < 3; dir++) {
            int count = dir == 0 ? 8 : dir == 1 ? 6 : 7;
            // heuristics' list
            DK(cudnnSetConvolutionMathType(cv, mt));
            int got = 0;
            if (dir == 1) {
                cudnnConvolutionBwdDataAlgoPerf_t p[8];
                DK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, fw, ty, cv, tx, 6, &got, p));
                printf("  v7 data (%s):", math ? "default" : "fma");
                for (int i = 0; i < got; i++) printf(" [%d st%d mem%zu det%d math%d]", p[i].algo, p[i].status, p[i].memory, p[i].determinism, p[i].mathType);
                printf("\n");
            }
            for (int a = 0; a < count; a++) {
                DK(cudnnSetConvolutionMathType(cv, mt));
                size_t wsb = 0; cudnnStatus_t s;
                if (dir == 0) s = cudnnGetConvolutionForwardWorkspaceSize(h, tx, fw, cv, ty, (cudnnConvolutionFwdAlgo_t)a, &wsb);
                else if (dir == 1) s = cudnnGetConvolutionBackwardDataWorkspaceSize(h, fw, ty, cv, tx, (cudnnConvolutionBwdDataAlgo_t)a, &wsb);
                else s = cudnnGetConvolutionBackwardFilterWorkspaceSize(h, tx, ty, cv, fw, (cudnnConvolutionBwdFilterAlgo_t)a, &wsb);
                if (s != CUDNN_STATUS_SUCCESS) { printf("  %s dir%d algo%d: ws query %s\n", math ? "def" : "fma", dir, a, cudnnGetErrorString(s)); continue; }
                ws = NULL; if (wsb) CK(cudaMalloc(&ws, wsb));
                size_t nout = dir == 0 ? ny : dir == 1 ? nx : nw;
                double maxd = 0, maxr = 0;
                for (int rep = 0; rep < 2; rep++) {
                    // poison the output with 7.0
                    for (size_t i = 0; i < nout; i++) host[i] = 7.0f;
                    CK(cudaMemcpy(dOut, host, nout * 4, cudaMemcpyHostToDevice));
                    if (dir == 0) s = cudnnConvolutionForward(h, &one, tx, dX, fw, dW, cv, (cudnnConvolutionFwdAlgo_t)a, ws, wsb, &zero, ty, dOut);
                    else if (dir == 1) s = cudnnConvolutionBackwardData(h, &one, fw, dW, ty, dDY, cv, (cudnnConvolutionBwdDataAlgo_t)a, ws, wsb, &zero, tx, dOut);
                    else s = cudnnConvolutionBackwardFilter(h, &one, tx, dX, ty, dDY, cv, (cudnnConvolutionBwdFilterAlgo_t)a, ws, wsb, &zero, fw, dOut);
                    cudaError_t ce = cudaStreamSynchronize(use_stream ? stream : 0);
                    if (s != CUDNN_STATUS_SUCCESS || ce != cudaSuccess) { printf("  %s dir%d algo%d: run %s / %s\n", math ? "def" : "fma", dir, a, cudnnGetErrorString(s), cudaGetErrorString(ce)); cudaGetLastError(); break; }
                    CK(cudaMemcpy(host, dOut, nout * 4, cudaMemcpyDeviceToHost));
                    const double *ref = dir == 0 ? y : dir == 1 ? dx : dw;
                    for (size_t i = 0; i < nout; i++) { double d = fabs(host[i] - ref[i]); if (d > maxd) maxd = d; if (fabs(ref[i]) > maxr) maxr = fabs(ref[i]); }
                }
                printf("  %s dir%d algo%d ws %zu: max|diff| %.3g (max|ref| %.3g)%s\n", math ? "def" : "fma", dir, a, wsb, maxd, maxr, maxd > 1e-3 ? "   <<<< WRONG" : "");
                if (ws) cudaFree(ws);
            }
        }
    }
    cudaFree(dX); cudaFree(dW); cudaFree(dDY); cudaFree(dOut);
    free(x); free(w); free(dy); free(dx); free(dw); free(y); free(host);
}

int main()
{
    cudnnHandle_t h; cudaStream_t stream;
    DK(cudnnCreate(&h));
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    DK(cudnnSetStream(h, stream));
    printf("cudnn %zu\n", (size_t)cudnnGetVersion());
    G gs[] = { {1, 3, 32, 32, 6, 5, 5, 0, 1}, {4, 3, 32, 32, 6, 5, 5, 0, 1}, {1, 6, 14, 14, 16, 5, 5, 0, 1}, {1, 2, 30, 30, 13, 3, 3, 1, 1} };
    for (unsigned i = 0; i < sizeof gs / sizeof gs[0]; i++) run(gs[i], stream, h, 1);
    return 0;
}

/* backends/cuda/cuda_conv_algo.cu - which algorithm each convolution runs.
 *
 * Chosen by measurement: the first call of a direction outside a recording
 * times every candidate the plan kept (cuda_dense.cu: those that fit the
 * workspace, deterministic ones only with the switch) and runs the fastest.
 * Timed by cuDNN's cudnnFind*AlgorithmEx rather than our own event trials:
 * it runs each algorithm on the call's own buffers and workspace, times it
 * the way cuDNN's heuristics are tuned against, reports one that fails with
 * its status instead of leaving an error behind, and is PyTorch's benchmark
 * mode (cudnn.benchmark), whose choices we want to meet. It synchronises,
 * which is why it runs only in a plan's first eager call (never captured).
 *
 * Kept per geometry, direction and switches (TF32, deterministic) for the
 * process, and in a file (nn_backend_config.conv_cache_path) so that the next
 * run skips the trials. The file's first lines are its key: the GPU's name,
 * the driver's and cuDNN's versions; a file with another key is ignored (and
 * replaced when this run chooses). One line per choice:
 *   n c_in h_in w_in c_out h_out w_out k_h k_w stride_h stride_w pad_h pad_w
 *   dir tf32 deterministic algo math algo_deterministic ms
 * Written atomically (src/common/atomic_file.h) at close, when a choice was
 * added. */
#include "cuda_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "atomic_file.h"
}

#define CACHE_MAGIC "nnlab conv algorithms 1"

/* ---- names -------------------------------------------------------------------------------- */

const char *gpu_conv_algo_name(int d, int algo)
{
    static const char *const fwd[] = { "FWD_IMPLICIT_GEMM", "FWD_IMPLICIT_PRECOMP_GEMM", "FWD_GEMM",
                                       "FWD_DIRECT", "FWD_FFT", "FWD_FFT_TILING", "FWD_WINOGRAD",
                                       "FWD_WINOGRAD_NONFUSED" };
    static const char *const data[] = { "BWD_DATA_ALGO_0", "BWD_DATA_ALGO_1", "BWD_DATA_FFT",
                                        "BWD_DATA_FFT_TILING", "BWD_DATA_WINOGRAD",
                                        "BWD_DATA_WINOGRAD_NONFUSED" };
    static const char *const filter[] = { "BWD_FILTER_ALGO_0", "BWD_FILTER_ALGO_1", "BWD_FILTER_FFT",
                                          "BWD_FILTER_ALGO_3", "BWD_FILTER_WINOGRAD",
                                          "BWD_FILTER_WINOGRAD_NONFUSED", "BWD_FILTER_FFT_TILING" };
    const char *const *names[GPU_CONV_DIRS] = { fwd, data, filter };
    const int counts[GPU_CONV_DIRS] = { 8, 6, 7 };
    if (d < 0 || d >= GPU_CONV_DIRS || algo < 0 || algo >= counts[d])
        return "unknown";
    return names[d][algo];
}

/* ---- the file ----------------------------------------------------------------------------- */

/* This machine's key: what makes a timing from another run valid here. */
static void cache_key(const gpu_state *s, char *key, size_t len)
{
    cudaDeviceProp prop;
    int driver = 0;
    memset(&prop, 0, sizeof prop);
    if (cudaGetDeviceProperties(&prop, s->device) != cudaSuccess)
        strcpy(prop.name, "unknown");
    cudaDriverGetVersion(&driver);
    cudaGetLastError();
    prop.name[sizeof prop.name - 1] = '\0';
    for (char *c = prop.name; *c; c++)
        if (*c == '\n')
            *c = ' ';
    snprintf(key, len, "gpu %s\ndriver %d\ncudnn %zu", prop.name, driver, (size_t)cudnnGetVersion());
}

static int read_choice(const char *line, gpu_conv_choice *c)
{
    nn_conv_geom *g = &c->g;
    memset(c, 0, sizeof *c);
    int got = sscanf(line, "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %f", &g->n,
                     &g->c_in, &g->h_in, &g->w_in, &g->c_out, &g->h_out, &g->w_out, &g->k_h,
                     &g->k_w, &g->stride_h, &g->stride_w, &g->pad_h, &g->pad_w, &c->dir, &c->tf32,
                     &c->deterministic, &c->algo, &c->math, &c->algo_deterministic, &c->ms);
    return got == 20 && c->dir >= 0 && c->dir < GPU_CONV_DIRS ? 0 : -1;
}

/* The file's choices when its key is this machine's; anything else (no file,
 * another GPU, driver or cuDNN, a damaged line) leaves what it could not use. */
static void cache_read(gpu_state *s)
{
    char key[400], line[512], head[400] = "";
    FILE *f = fopen(s->conv_cache_path, "r");
    if (!f)
        return;
    cache_key(s, key, sizeof key);
    if (fgets(line, sizeof line, f) && strncmp(line, CACHE_MAGIC, strlen(CACHE_MAGIC)) == 0) {
        for (int i = 0; i < 3 && fgets(line, sizeof line, f); i++)
            strncat(head, line, sizeof head - strlen(head) - 1);
        size_t hl = strlen(head);
        if (hl && head[hl - 1] == '\n')
            head[hl - 1] = '\0';
        while (strcmp(head, key) == 0 && s->n_choices < GPU_CONV_CHOICES &&
               fgets(line, sizeof line, f))
            if (read_choice(line, &s->choices[s->n_choices]) == 0)
                s->n_choices++;
    }
    fclose(f);
}

static int cache_fill(FILE *f, const void *ctx)
{
    const gpu_state *s = (const gpu_state *)ctx;
    char key[400];
    cache_key(s, key, sizeof key);
    if (fprintf(f, "%s\n%s\n", CACHE_MAGIC, key) < 0)
        return -1;
    for (int i = 0; i < s->n_choices; i++) {
        const gpu_conv_choice *c = &s->choices[i];
        const nn_conv_geom *g = &c->g;
        if (fprintf(f, "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %.6g\n", g->n,
                    g->c_in, g->h_in, g->w_in, g->c_out, g->h_out, g->w_out, g->k_h, g->k_w,
                    g->stride_h, g->stride_w, g->pad_h, g->pad_w, c->dir, c->tf32,
                    c->deterministic, c->algo, c->math, c->algo_deterministic, c->ms) < 0)
            return -1;
    }
    return 0;
}

int gpu_choices_open(nn_backend *b, const nn_backend_config *cfg)
{
    gpu_state *s = gpu_of(b);
    s->choices = (gpu_conv_choice *)calloc(GPU_CONV_CHOICES, sizeof *s->choices);
    if (!s->choices)
        return gpu_fail(b, "open: out of host memory for the convolution algorithm choices");
    if (cfg && cfg->conv_cache_path && cfg->conv_cache_path[0]) {
        s->conv_cache_path = strdup(cfg->conv_cache_path);
        if (!s->conv_cache_path)
            return gpu_fail(b, "open: out of host memory");
        cache_read(s);
    }
    return 0;
}

/* Writes the file when this run chose something new; the choices go either
 * way. A file that cannot be written costs the next run its trials only:
 * reported (close cannot fail, so in last_error). */
int gpu_choices_close(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    int rc = 0;
    char err[NN_BACKEND_ERROR_LEN];
    if (s->conv_cache_path && s->choices_added &&
        nn_write_atomic(s->conv_cache_path, cache_fill, s, err, sizeof err) != 0)
        rc = gpu_fail(b, "close: the convolution algorithms were not kept: %s", err);
    free(s->choices);
    free(s->conv_cache_path);
    s->choices = NULL;
    s->conv_cache_path = NULL;
    s->n_choices = 0;
    return rc;
}

/* ---- remembering ----------------------------------------------------------------------------- */

static gpu_conv_choice *choice_of(gpu_state *s, const nn_conv_geom *g, int d)
{
    for (int i = 0; i < s->n_choices; i++) {
        gpu_conv_choice *c = &s->choices[i];
        if (c->dir == d && c->tf32 == s->tf32 && c->deterministic == s->deterministic &&
            memcmp(&c->g, g, sizeof *g) == 0)
            return c;
    }
    return NULL;
}

int gpu_choice_find(gpu_state *s, gpu_conv_plan *p, int d)
{
    gpu_conv_choice *c = s->choices ? choice_of(s, &p->g, d) : NULL;
    gpu_conv_dir *dir = &p->dir[d];
    if (!c)
        return -1;
    for (int k = 0; k < dir->n; k++)
        if (dir->cand[k].algo == c->algo && (int)dir->cand[k].math == c->math) {
            c->ran = 1;
            dir->ms = c->ms;
            dir->trials = c->trials;
            return k;
        }
    return -1;      /* no longer offered (a smaller workspace): chosen again */
}

void gpu_choice_keep(gpu_state *s, const gpu_conv_plan *p, int d, int k)
{
    const gpu_conv_dir *dir = &p->dir[d];
    gpu_conv_choice *c = choice_of(s, &p->g, d);
    if (!s->choices)
        return;
    if (!c) {
        if (s->n_choices == GPU_CONV_CHOICES)
            return;     /* full: still chosen for the plan, not remembered */
        c = &s->choices[s->n_choices++];
    }
    c->g = p->g;
    c->dir = d;
    c->tf32 = s->tf32;
    c->deterministic = s->deterministic;
    c->algo = dir->cand[k].algo;
    c->math = (int)dir->cand[k].math;
    c->algo_deterministic = dir->cand[k].deterministic;
    c->ms = dir->ms;
    c->trials = dir->trials;
    c->ran = 1;
    s->choices_added = 1;
}

/* ---- timing ------------------------------------------------------------------------------------ */

/* ms[k] from cuDNN's answer: the time of the candidate with the same
 * algorithm (the math of every candidate is set on the descriptor by the
 * find's own choice; with TF32 off it is FMA for all). */
#define TIMES_OF(perf, got, dir, ms)                                                        \
    for (int i_ = 0; i_ < (got); i_++)                                                      \
        for (int k_ = 0; k_ < (dir)->n; k_++)                                               \
            if ((perf)[i_].status == CUDNN_STATUS_SUCCESS && (perf)[i_].time >= 0 &&        \
                (int)(perf)[i_].algo == (dir)->cand[k_].algo && (ms)[k_] < 0)               \
                (ms)[k_] = (perf)[i_].time;

int gpu_conv_time(gpu_state *s, gpu_conv_plan *p, int d, const void *x, const void *w,
                  const void *dy, void *out, void *ws, float ms[GPU_ALGO_CANDIDATES])
{
    gpu_conv_dir *dir = &p->dir[d];
    int got = 0;
    cudnnStatus_t st;
    for (int k = 0; k < GPU_ALGO_CANDIDATES; k++)
        ms[k] = -1.0f;
    if (cudnnSetConvolutionMathType(p->conv, s->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH) !=
        CUDNN_STATUS_SUCCESS)
        return -1;
    if (d == GPU_CONV_FWD) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        st = cudnnFindConvolutionForwardAlgorithmEx(s->dnn, p->x, x, p->w, w, p->conv, p->y, out,
                                                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf,
                                                    ws, p->ws);
        if (st == CUDNN_STATUS_SUCCESS)
            TIMES_OF(perf, got, dir, ms);
    } else if (d == GPU_CONV_BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        st = cudnnFindConvolutionBackwardDataAlgorithmEx(s->dnn, p->w, w, p->y, dy, p->conv, p->x,
                                                         out, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                         &got, perf, ws, p->ws);
        if (st == CUDNN_STATUS_SUCCESS)
            TIMES_OF(perf, got, dir, ms);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        st = cudnnFindConvolutionBackwardFilterAlgorithmEx(s->dnn, p->x, x, p->y, dy, p->conv, p->w,
                                                           out,
                                                           CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                           &got, perf, ws, p->ws);
        if (st == CUDNN_STATUS_SUCCESS)
            TIMES_OF(perf, got, dir, ms);
    }
    cudaGetLastError();
    if (st != CUDNN_STATUS_SUCCESS)
        return -1;
    int timed = 0;
    for (int k = 0; k < dir->n; k++)
        timed += ms[k] >= 0;
    return timed;
}

/* ---- the query --------------------------------------------------------------------------------- */

int gpu_conv_algorithms(nn_backend *b, nn_conv_choice *out, int cap)
{
    gpu_state *s = gpu_of(b);
    int n = 0;
    if (s->capturing)
        return gpu_fail(b, "conv_algorithms: not while recording");
    for (int i = 0; i < s->n_choices; i++) {
        const gpu_conv_choice *c = &s->choices[i];
        if (!c->ran || c->tf32 != s->tf32 || c->deterministic != s->deterministic)
            continue;
        if (n < cap) {
            nn_conv_choice *o = &out[n];
            memset(o, 0, sizeof *o);
            o->g = c->g;
            o->direction = (enum nn_conv_direction)c->dir;
            snprintf(o->algorithm, sizeof o->algorithm, "%s", gpu_conv_algo_name(c->dir, c->algo));
            o->deterministic = c->algo_deterministic;
            o->time_us = c->ms >= 0 ? c->ms * 1000.0 : -1.0;
            o->trials = c->trials;
        }
        n++;
    }
    return n;
}

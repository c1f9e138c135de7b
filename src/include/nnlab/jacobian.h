/* src/include/nnlab/jacobian.h - the Jacobian job (seed 002's write-up): the
 * Jacobian of a small tanh MLP with respect to its input batch, as
 * torch.autograd.functional.jacobian(net, x) returns it, by four methods.
 *
 * The network is the preset's chain of linear and tanh layers (mlp-jacobian:
 * 1 -> 20 -> tanh -> 20 -> tanh -> 400), initialised as PyTorch's nn.Linear;
 * x is (val, in), uniform in [0, 1), reproducible from the seed. PyTorch
 * returns J of shape (val, out, val, in); sample i's outputs do not depend
 * on sample j's input, so J[i,k,j,d] = 0 for j != i and only the diagonal
 * blocks J[i,k,i,d] are kept: blocks (val, out, in). Methods that compute
 * the zero blocks (rows, batched) check them: offdiag_max is the largest
 * |J[i,k,j,d]|, j != i, they produced (0 when the algebra holds).
 *
 *   rows        PyTorch's vectorize=False, literally: val*out reverse passes,
 *               each over the whole batch with a one-hot cotangent. Work grows
 *               with val^2; all but 1/val of it multiplies zeros.
 *   batched     vectorize=True's analogue: the same one-hot cotangents, many
 *               stacked into one reverse pass over (chunk*val) rows. Same
 *               FLOPs as rows, far fewer calls.
 *   per-sample  independence exploited: out reverse passes, cotangent e_k on
 *               every sample at once. Work linear in val.
 *   forward     forward mode: one tangent per input dimension (in = 1: a
 *               single pass) carried through the layers. */
#ifndef NNLAB_JACOBIAN_H
#define NNLAB_JACOBIAN_H

#include <stddef.h>
#include <stdio.h>

#include "nnlab/calibrate.h"
#include "nnlab/preset.h"

enum nn_jac_method {
    NN_JAC_ROWS,
    NN_JAC_BATCHED,
    NN_JAC_PER_SAMPLE,
    NN_JAC_FORWARD,
    NN_JAC_METHOD_COUNT
};

/* "rows", "batched", "per-sample", "forward" ("?" out of range). */
const char *nn_jac_method_name(enum nn_jac_method m);
/* The method named s, or -1. */
int nn_jac_method_find(const char *s);
/* "rows, batched, per-sample or forward": for messages. */
const char *nn_jac_method_list(void);

#define NN_JAC_MAX_LINEAR 16
#define NN_JAC_MAX_VAL 100000

/* The network as the Jacobian job sees it: linear layer l maps width[l] to
 * width[l+1]; tanh_after[l] says a tanh follows it. */
typedef struct nn_jac_shape {
    int n_linear;
    int width[NN_JAC_MAX_LINEAR + 1];
    int tanh_after[NN_JAC_MAX_LINEAR];
} nn_jac_shape;

/* The preset's layers as such a chain; -1 and "FILE: [layerN] type = relu: a
 * jacobian task takes linear and tanh layers" otherwise (where: the file). */
int nn_jac_shape_from_preset(const nn_preset *p, const char *where, nn_jac_shape *s, char *err,
                             size_t err_len);
size_t nn_jac_shape_params(const nn_jac_shape *s);

/* What a method computes (src/analysis/jacobian_cost.c). FLOPs count a
 * multiply-add as 2, a tanh or its derivative as 1 per element (cost.h's
 * rules); the bias adds are counted. zero: the FLOPs spent on rows of the
 * batch whose cotangent (or tangent) is zero: J's zero blocks. */
typedef struct nn_jac_flops {
    double forward;              /* the forward pass every method starts with */
    double derivative;           /* the reverse (or tangent) passes */
    double total;                /* forward + derivative */
    double zero;                 /* of derivative: on J's zero blocks */
    double passes;               /* reverse passes (rows: val*out; forward: tangents) */
    double pass_rows;            /* batch rows each pass runs over */
} nn_jac_flops;

void nn_jac_flops_of(const nn_jac_shape *s, long val, enum nn_jac_method m, nn_jac_flops *out);

/* The rows of J a group of the rows and batched methods covers: rows, one
 * sample's outputs (out); batched, as many one-hot cotangents as fit in
 * 4M floats (16 MB), a divisor of val*out so that every group is whole;
 * the others 1. */
int nn_jac_chunk(const nn_jac_shape *s, long val, enum nn_jac_method m);

/* Predicted seconds of a method at val on a device with calibration cal (a
 * GPU profile's, nn_profile_calibration, or a measured one): every product
 * and tanh derivative priced as one call (its launch or op cost, its FLOPs
 * at the calibrated rate, its bytes at the bandwidth, whichever is
 * slowest); a device backend's read-backs as copies; rows on a device with
 * graphs replays a group's passes as one graph (graph: 1). */
double nn_jac_predict_s(const nn_jac_shape *s, long val, enum nn_jac_method m,
                        const nn_calibration *cal, int graph);

/* The same as a deep-learning framework runs it in eager mode (PyTorch's
 * torch.autograd.functional.jacobian; rows is its vectorize=False): no
 * recorded graph, every operation paying the framework's host cost on this
 * device (framework_op_us: nnlab/profile.h's figures), each pass issuing the
 * operations PyTorch's does (views around the kernels, the output element
 * read, its cotangent made as a zero tensor of the output's size) and the
 * result left on the device. batched is priced in nnlab's 16 MB groups
 * (vectorize=True builds the whole val*out square basis at once). */
double nn_jac_predict_framework_s(const nn_jac_shape *s, long val, enum nn_jac_method m,
                                  const nn_calibration *cal, double framework_op_us);

/* A framework's host cost per operation in eager mode on each device (a GPU
 * profile's framework_op_us, and nn_profile_framework_gpu_us). */
typedef struct nn_jac_framework {
    double cpu_op_us, gpu_op_us;
} nn_jac_framework;

/* The two ways of issuing the passes the sweep prices. */
enum nn_jac_way { NN_JAC_WAY_NNLAB, NN_JAC_WAY_FRAMEWORK, NN_JAC_WAYS };
/* "nnlab", "framework eager" */
const char *nn_jac_way_name(enum nn_jac_way w);

/* The val sweep: each method's predicted time on the CPU and on the GPU at
 * each val, each way (nnlab's passes; a framework's eager ones), and per
 * way and method the first val at which the GPU is faster and stays so to
 * the end of the sweep (0: never within it). Both sides come from the
 * cost model: predicted, never measured (gpu_name names the profile when
 * the GPU's figures are a profile's). */
#define NN_JAC_SWEEP_MAX 16
typedef struct nn_jac_sweep {
    int n;
    long val[NN_JAC_SWEEP_MAX];
    nn_jac_framework framework;  /* the framework's per-operation costs the sweep used */
    double cpu_s[NN_JAC_WAYS][NN_JAC_METHOD_COUNT][NN_JAC_SWEEP_MAX];
    double gpu_s[NN_JAC_WAYS][NN_JAC_METHOD_COUNT][NN_JAC_SWEEP_MAX];
    long gpu_overtakes[NN_JAC_WAYS][NN_JAC_METHOD_COUNT];
    char gpu_name[NN_NAME_LEN];  /* "T4 (profile)" or the GPU's calibration */
} nn_jac_sweep;

/* vals: n (<= NN_JAC_SWEEP_MAX) rising values; NULL: 10, 20, 50, 100, 200,
 * 500, 1000, 2000, 5000. */
void nn_jac_sweep_predict(const nn_jac_shape *s, const long *vals, int n, const nn_calibration *cpu,
                          const nn_calibration *gpu, const nn_jac_framework *fw, nn_jac_sweep *out);

/* The sweep's verdict for method m in words, for Explain (the CLI and the
 * lab print it as is): where the GPU overtakes the CPU run by a framework
 * and by nnlab, with both framework figures at the sweep's val nearest
 * above val. One paragraph, no line breaks. */
void nn_jac_sweep_verdict(const nn_jac_sweep *sw, enum nn_jac_method m, long val, char *buf, size_t len);

/* The waste in words, for Explain (the CLI and the lab print it as is):
 * "99% of these FLOPs multiply zeros: ... per-sample and forward remove it".
 * One paragraph, no line breaks. */
void nn_jac_explain(const nn_jac_shape *s, long val, enum nn_jac_method m, char *buf, size_t len);

/* The rows of J the job counts as its progress: val*out for every method
 * (a method that makes many rows in one pass advances by all of them). */
long nn_jac_rows_total(const nn_jac_shape *s, long val);

/* A finished Jacobian job's result (nn_job_jacobian). Host memory, owned. */
typedef struct nn_jac_result {
    enum nn_jac_method method;
    nn_jac_shape shape;
    int val, in, out;
    float *x;                    /* (val, in) */
    float *params;               /* PyTorch's order: w1 (out,in), b1 (out), w2, b2, ... */
    size_t n_params;
    float *blocks;               /* (val, out, in): J[i,k,i,d] */
    double offdiag_max;          /* largest |J[i,k,j,d]|, j != i, computed; valid when */
    int offdiag_checked;         /*   the method computes those blocks (rows, batched) */
    double seconds;              /* the forward pass and the method, read back included */
    double forward_s;            /* the forward pass */
    double warmup_s;             /* the untimed warm-up before them (not in seconds):
                                    library handles, each op's first call, plan
                                    trials; on a GPU a whole pass of the method, on a
                                    CPU the forward pass */
    double rows_per_s;           /* rows of J (val*out) per second */
    int lanes;                   /* rows on a CPU: host threads that ran whole passes side by
                                    side (1: one, its ops maybe split over the threads) */
    nn_jac_flops flops;
} nn_jac_result;

void nn_jac_result_free(nn_jac_result *r);

/* A Jacobian job's (nnlab/engine.h, kind NN_JOB_JACOBIAN) result once its
 * state is NN_JOB_DONE: 0 and a copy in *out (free it with
 * nn_jac_result_free), or -1 (not done, cancelled, failed, another kind, or
 * no memory for the copy). */
typedef struct nn_job nn_job;
int nn_job_jacobian(nn_job *job, nn_jac_result *out);
/* Largest |a - b| over the blocks; -1 when the shapes differ. */
double nn_jac_max_diff(const nn_jac_result *a, const nn_jac_result *b);

/* ---- memory: what a job of (s, val, m) allocates ----------------------------------- */

/* The buffers of a Jacobian job, in floats, as jac_prepare and the method
 * allocate them: src/core/jacobian.c and jacobian_methods.c take their
 * sizes from nn_jac_sizes_of, so the estimate and the allocation are one
 * function and cannot drift apart. */
typedef struct nn_jac_sizes {
    int chunk;                   /* rows of J per group (nn_jac_chunk) */
    long pass_rows;              /* rows a reverse pass runs over: val, batched chunk*val */
    /* on the backend (a device's own memory, host memory on a CPU) */
    size_t params;               /* w1, b1, w2, b2, ... */
    size_t acts;                 /* every layer's input and pre-tanh output over val rows */
    size_t rep;                  /* batched: the same over chunk*val rows; others 0 */
    size_t scratch;              /* each of the two ping-pong buffers: (pass_rows, widest) */
    size_t dx;                   /* a group's input gradients or tangents (host_dx alike) */
    size_t onehot;               /* the cotangent buffer: rows val*out + chunk - 1;
                                    batched (chunk+1)*val*out - chunk; per-sample
                                    val*out + out - 1; forward val*in (a tangent) */
    /* in host memory */
    size_t x;                    /* (val, in) */
    size_t blocks;               /* (val, out, in): J's diagonal blocks */
    size_t host_params;          /* the parameters' host copy */
    size_t host_dx;              /* dx read back */
    size_t staging;              /* the largest buffer held only while uploading: the
                                    one-hot buffer built on the host, batched's
                                    layer to repeat, forward's tangent */
} nn_jac_sizes;

/* Sizes of a job at val (1..NN_JAC_MAX_VAL) by method m. */
void nn_jac_sizes_of(const nn_jac_shape *s, long val, enum nn_jac_method m, nn_jac_sizes *z);

/* The same in bytes: device is what the backend holds (host memory too on a
 * CPU device), params its part the parameters take; host what host memory
 * holds besides; result a copy of the finished job's result (nn_job_jacobian:
 * x, the parameters, the blocks). */
typedef struct nn_jac_memory {
    double device;
    double params;
    double host;
    double result;
    double lane_host;            /* each further lane of rows on a CPU of several threads (it runs
                                    whole passes on buffers of its own): its host arrays, the
                                    blocks excepted (the lanes share them); its backend buffers
                                    are `device` again */
} nn_jac_memory;

void nn_jac_memory_of(const nn_jac_shape *s, long val, enum nn_jac_method m, nn_jac_memory *out);

/* ---- export: the one writer of `nnlab jacobian --json` and the lab's `x` ---------------- */

/* What a Jacobian run exports (src/jobs/jacobian/jacobian_export.c). The
 * method, val and network are the job's even before it ends; the result,
 * the compared method and the sweep only when there are. */
typedef struct nn_jac_export {
    const char *preset, *device;
    enum nn_jac_method method;
    long val;
    nn_jac_shape shape;
    const char *state;           /* "done", "cancelled", "running", ... */
    long rows_done;              /* rows of J done (all of them when done) */
    double elapsed_s;            /* the job's clock so far (result: its seconds) */
    const nn_jac_result *result; /* NULL: not done */
    const nn_jac_result *other;  /* the method compared with (NULL: none) */
    double max_difference;       /*   its largest difference */
    const nn_jac_sweep *sweep;   /* the predicted val sweep (NULL: none) */
} nn_jac_export;

/* JSON: preset, device, method, val, state, rows, rows_done, seconds (the
 * result's, else null) and elapsed_s, forward_s, warmup_s, rows_per_s,
 * lanes, flops, zero_block_flops, waste (the share of FLOPs on J's zero
 * blocks), explain (the waste in words), offdiag_max, compared_with and
 * max_difference (when compared), and the sweep (when given): vals, the
 * GPU's name, each way's CPU and GPU seconds per method, where the GPU
 * overtakes. Every key present, null when not known. */
int nn_jac_export_json(FILE *f, const nn_jac_export *x);
/* CSV, one row per time, measured or predicted:
 * source,way,method,device,val,seconds,flops,zero_block_flops,waste,rows,state
 * (source: measured for the job's own row, predicted for the sweep's). */
int nn_jac_export_csv(FILE *f, const nn_jac_export *x);
/* Both, as nn_export_files writes a run's: DIR/PRESET-jacobian-TIME.{csv,json}. */
int nn_jac_export_files(const char *dir, const nn_jac_export *x, long long now, char *csv_path, char *json_path,
                        size_t path_len, char *err, size_t err_len);

#endif

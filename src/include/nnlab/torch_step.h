/* src/include/nnlab/torch_step.h - the framework way measured for real:
 * PyTorch's training step of a preset's network, timed by a helper program
 * (tools/nnlab-torch-step.py, installed in pkglibexecdir) that a python3
 * with torch runs in a process of its own.
 *
 * The python3: $NNLAB_PYTHON when set (then only it), else `python3` on
 * PATH, then /usr/bin/python3; the first that imports torch is used,
 * found once per process (nn_torch_find caches the answer). The helper:
 * $NNLAB_TORCH_HELPER when set, else the source tree's for a program run
 * from its build tree, else the installed one.
 *
 * The step is the write-ups', the framework way (docs/ways.md: the batch
 * copied from pageable host memory with .to(device), zero_grad, forward,
 * loss, backward, step, loss.item()), its median over the timed
 * steps the figure. A result is checked: the network PyTorch built must
 * have as many parameters as nnlab's (nn_cost_model), or it is refused as
 * not the same network. Its points say "measured with PyTorch X.Y"
 * (nn_torch_result.python.label). Nothing here needs torch to build. */
#ifndef NNLAB_TORCH_STEP_H
#define NNLAB_TORCH_STEP_H

#include <stddef.h>

#define NN_TORCH_PATH_LEN 1024
#define NN_TORCH_TIMEOUT_S 600.0     /* a request's default limit */
#define NN_TORCH_PROBE_TIMEOUT_S 120.0 /* importing torch on a busy machine */

/* What went wrong, for a caller that must tell "not installed" (offer
 * nothing) from "failed" (say why). */
enum nn_torch_status {
    NN_TORCH_OK = 0,
    NN_TORCH_NO_PYTHON,          /* no python3 could be started */
    NN_TORCH_NO_TORCH,           /* python3 runs, but none imports torch */
    NN_TORCH_NO_HELPER,          /* the helper program is not where it should be */
    NN_TORCH_NO_DEVICE,          /* the GPU asked for, but PyTorch sees no CUDA device */
    NN_TORCH_PRESET,             /* the preset does not load, or the helper cannot build a
                                    layer of it (the message names file, [layerN], key) */
    NN_TORCH_MISMATCH,           /* built, but not the same network: the parameter counts differ */
    NN_TORCH_FAILED,             /* the step failed, or the helper's answer was not understood */
    NN_TORCH_TIMEOUT,
    NN_TORCH_CANCELLED,
};

/* The python3 that imports torch, and which torch. */
typedef struct nn_torch_python {
    char path[NN_TORCH_PATH_LEN];
    char version[48];            /* torch.__version__: "2.11.0+cu130" */
    char label[64];              /* "PyTorch 2.11": the source of its points */
    int cuda;                    /* torch.cuda.is_available() */
} nn_torch_python;

typedef struct nn_torch_request {
    const char *preset_path;     /* the preset's file (nn_preset_find) */
    const char *device;          /* nnlab's name: "gpu" runs on cuda, "cpu" (and cpu-ref) on the CPU */
    int batch;                   /* >= 1 */
    long steps, warmup;          /* timed steps (>= 1) after untimed ones (>= 0) */
    int threads;                 /* torch.set_num_threads; 0: PyTorch's default */
    const char *way;             /* NULL: the framework way above; "graph": PyTorch's whole step
                                    captured as one CUDA graph, "compile": torch.compile's
                                    reduce-overhead (CUDA only; the helper's --way) */
    double timeout_s;            /* 0: NN_TORCH_TIMEOUT_S */
    /* Polled every 100 ms while the helper runs: nonzero stops it (NULL: never). */
    int (*cancelled)(void *ctx);
    void *ctx;
} nn_torch_request;

typedef struct nn_torch_result {
    nn_torch_python python;
    double us_per_step;          /* the median step: the figure */
    double us_per_step_mean;
    long steps;
    int batch, threads;          /* threads: PyTorch's, as it reported them */
    size_t params;               /* PyTorch's parameter count, equal to nnlab's */
    char device[16];             /* "cpu" or "cuda" */
    char device_name[128];       /* "NVIDIA H200", "cpu" */
    char way[48];                /* the helper's: "framework", "pytorch-cuda-graph", ... */
    /* What the process asked of the kernel per timed step (getrusage; the
     * eager ways report them, -1 where the helper did not): pages it mapped
     * fresh, each faulted and zeroed (docs/ways.md, "Fresh pages"), and its
     * system time, which at more than one thread also holds its pools'
     * threads yielding while they wait. */
    double minor_faults_per_step, system_us_per_step;
} nn_torch_result;

/* The python3 with torch (cached after the first call in the process, until
 * $NNLAB_PYTHON changes): NN_TORCH_OK, or another status with a one-line
 * message naming each python3 tried and why it failed. */
enum nn_torch_status nn_torch_find(nn_torch_python *py, char *err, size_t err_len);

/* Runs the helper for req and checks its answer: NN_TORCH_OK with out
 * filled, or another status with a one-line message. Blocks (up to the
 * timeout); call it from a job's thread, never the lab's UI thread. */
enum nn_torch_status nn_torch_step(const nn_torch_request *req, nn_torch_result *out, char *err,
                                   size_t err_len);

/* A request run on a thread of its own, for a caller that must never wait
 * (the lab polls from its UI loop; the sweep's runner between points). */
typedef struct nn_torch_job nn_torch_job;

/* Starts req (its preset path and device copied): the job, or NULL with err
 * said (out of memory, no thread). */
nn_torch_job *nn_torch_job_start(const nn_torch_request *req, char *err, size_t err_len);
/* 1 when the job has ended: *status, *out (with NN_TORCH_OK) and err (its
 * one-line reason otherwise) filled; 0 while it runs. */
int nn_torch_job_done(nn_torch_job *j, enum nn_torch_status *status, nn_torch_result *out, char *err,
                      size_t err_len);
/* Asks the helper to stop (it ends within 0.1 s, NN_TORCH_CANCELLED). */
void nn_torch_job_cancel(nn_torch_job *j);
/* Waits for the job's end (nn_torch_job_done then says so). */
void nn_torch_job_wait(nn_torch_job *j);
/* Waits for the job's end and frees it; NULL is fine. */
void nn_torch_job_free(nn_torch_job *j);

/* "no python", "no torch", ...: a status as words. */
const char *nn_torch_status_name(enum nn_torch_status s);

/* "measured with PyTorch 2.11": how a point measured by it is labelled. */
void nn_torch_source(const nn_torch_python *py, char *buf, size_t len);

#endif

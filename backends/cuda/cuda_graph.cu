/* backends/cuda/cuda_graph.cu - the GPU module's step graphs (record one
 * training step with stream capture, replay it with the step's values from
 * set_step), its counters, and phase timing with events on the device's own
 * clock. The rest of the module (probe, open, memory) is cuda_module.cu. */
#include "cuda_backend.h"

#include <stdio.h>
#include <string.h>

/* ---- step graphs -------------------------------------------------------------------------- */

int gpu_set_step(nn_backend *b, const nn_step_values *v)
{
    gpu_state *s = gpu_of(b);
    if (s->capturing)
        return gpu_fail(b, "set_step: called while recording a step");
    if (v->opt_t < 1)
        return gpu_fail(b, "set_step: step %ld, steps count from 1", v->opt_t);
    s->step = *v;       /* eager calls carry their own values; graph_launch passes these on */
    return 0;
}

/* Ends a recording that went wrong and discards what it captured. */
static void abandon_capture(gpu_state *s)
{
    cudaGraph_t g = NULL;
    cudaStreamEndCapture(s->stream, &g);
    if (g)
        cudaGraphDestroy(g);
    cudaGetLastError();
    s->capturing = 0;
    s->count = &s->live;
    gpu_plans_unpin(s);
}

/* Strict: CUDA's thread-local capture mode, where a call that is unsafe while
 * recording (an allocation, a library initialising itself, a synchronous
 * copy) fails the recording. Relaxed: such calls run, unrecorded; the
 * engine tries it once when a strict recording fails (backend.h). */
int gpu_graph_begin(nn_backend *b, int relaxed)
{
    gpu_state *s = gpu_of(b);
    if (s->capturing || s->exec)
        return gpu_fail(b, "graph_begin: %s", s->capturing ? "already recording" : "a recording exists (drop it first)");
    if ((s->inject & GPU_INJECT_CAPTURE) || ((s->inject & GPU_INJECT_CAPTURE_STRICT) && !relaxed))
        return gpu_fail(b, "graph_begin: a %s recording refused on purpose (NNLAB_GPU_INJECT)",
                        relaxed ? "relaxed" : "strict");
    cudaStreamCaptureMode mode = relaxed ? cudaStreamCaptureModeRelaxed : cudaStreamCaptureModeThreadLocal;
    if (gpu_cuda(b, cudaStreamBeginCapture(s->stream, mode), "graph_begin", "cudaStreamBeginCapture",
                 "starting to record a step (%s mode)", relaxed ? "relaxed" : "strict"))
        return -1;
    memset(&s->recorded, 0, sizeof s->recorded);
    s->count = &s->recorded;
    s->capturing = 1;
    /* the first node, so that every recorded kernel runs after it */
    if (gpu_write_step_values(b) != 0) {
        abandon_capture(s);
        return -1;
    }
    return 0;
}

/* The recording's first node, which graph_begin made: a capture on one
 * stream is a chain, so it is the graph's only root. */
static int find_step_node(nn_backend *b, cudaGraph_t g)
{
    gpu_state *s = gpu_of(b);
    cudaGraphNode_t root = NULL;
    cudaGraphNodeType type;
    size_t n = 0;
    if (gpu_cuda(b, cudaGraphGetRootNodes(g, NULL, &n), "graph_end", "cudaGraphGetRootNodes",
                 "counting the recording's first nodes"))
        return -1;
    if (n != 1)
        return gpu_fail(b, "graph_end: the recorded step has %zu first nodes, expected its step "
                        "values alone", n);
    if (gpu_cuda(b, cudaGraphGetRootNodes(g, &root, &n), "graph_end", "cudaGraphGetRootNodes",
                 "finding the recording's first node") ||
        gpu_cuda(b, cudaGraphNodeGetType(root, &type), "graph_end", "cudaGraphNodeGetType",
                 "checking the recording's first node"))
        return -1;
    if (n != 1 || !root || type != cudaGraphNodeTypeKernel)
        return gpu_fail(b, "graph_end: the recorded step does not begin with its step values");
    s->step_node = root;
    return 0;
}

int gpu_graph_end(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    cudaGraph_t g = NULL;
    if (!s->capturing)
        return gpu_fail(b, "graph_end: not recording");
    cudaError_t e = cudaStreamEndCapture(s->stream, &g);
    s->capturing = 0;
    s->count = &s->live;
    if (e != cudaSuccess || !g) {
        if (g)
            cudaGraphDestroy(g);
        cudaGetLastError();
        gpu_plans_unpin(s);
        return gpu_cuda(b, e != cudaSuccess ? e : cudaErrorStreamCaptureInvalidated, "graph_end",
                        "cudaStreamEndCapture", "finishing the recording of a step");
    }
    if (find_step_node(b, g) != 0) {
        cudaGraphDestroy(g);
        s->step_node = NULL;
        gpu_plans_unpin(s);
        return -1;
    }
    /* ...WithFlags: the same call in CUDA 11.4 to 13 (cudaGraphInstantiate
     * itself took five arguments before CUDA 12) */
    e = cudaGraphInstantiateWithFlags(&s->exec, g, 0);
    if (e != cudaSuccess) {
        cudaGraphDestroy(g);
        s->exec = NULL;
        s->step_node = NULL;
        gpu_plans_unpin(s);
        return gpu_cuda(b, e, "graph_end", "cudaGraphInstantiateWithFlags",
                        "instantiating the recorded step");
    }
    s->graph = g;
    if (gpu_cuda(b, cudaGraphUpload(s->exec, s->stream), "graph_end", "cudaGraphUpload",
                 "uploading the recorded step")) {
        gpu_graph_drop(b);
        return -1;
    }
    return 0;
}

/* The recording runs as the step set last: its first node writes that step's
 * values (launches already issued keep the values they were given). */
int gpu_graph_launch(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    gpu_step_node_args args;
    cudaKernelNodeParams p;
    if (!s->exec)
        return gpu_fail(b, "graph_launch: nothing recorded");
    gpu_step_node_params(s, &args, &p);
    if (gpu_cuda(b, cudaGraphExecKernelNodeSetParams(s->exec, s->step_node, &p), "graph_launch",
                 "cudaGraphExecKernelNodeSetParams", "giving the recorded step its values") ||
        gpu_cuda(b, cudaGraphLaunch(s->exec, s->stream), "graph_launch", "cudaGraphLaunch",
                 "replaying the recorded step"))
        return -1;
    s->live.graph_launches++;
    s->live.graph_nodes += s->recorded.kernels + s->recorded.library_calls;
    return 0;
}

void gpu_graph_drop(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    if (s->exec)
        cudaGraphExecDestroy(s->exec);
    if (s->graph)
        cudaGraphDestroy(s->graph);
    s->exec = NULL;
    s->graph = NULL;
    s->step_node = NULL;
    gpu_plans_unpin(s);     /* the recording's convolution plans may go now */
}

/* ---- counters and timing --------------------------------------------------------------------- */

void gpu_counters(nn_backend *b, nn_backend_counters *out)
{
    *out = gpu_of(b)->live;
}

/* Adds the intervals of slot k into us/n. */
static int fold_slot(nn_backend *b, gpu_timing_slot *t, double *us, long *n)
{
    int prev = 0;
    for (int m = 1; m < NN_TIMING_MARKS; m++) {
        if (!(t->marks & (1u << m)))
            continue;
        float ms = 0.0f;
        if (gpu_cuda(b, cudaEventElapsedTime(&ms, t->ev[prev], t->ev[m]), "timing_collect",
                     "cudaEventElapsedTime", "reading the time of a step's phase"))
            return -1;
        us[m] += (double)ms * 1000.0;
        n[m]++;
        prev = m;
    }
    return 0;
}

/* Mark 0 starts a step in the next slot of the ring. When every slot holds a
 * step the device has not finished or nobody collected, the new step is not
 * timed (t_dropping: its marks are ignored) rather than the host waiting for
 * the oldest: such a wait was a sync nobody counted, charged to the copy
 * phase of the step that made it, so the phase split was wrong exactly where
 * it matters (small batches under a graph, the host far ahead). */
int gpu_timing_mark(nn_backend *b, int mark)
{
    gpu_state *s = gpu_of(b);
    if (s->capturing || mark < 0 || mark >= NN_TIMING_MARKS)
        return 0;
    if (mark == 0) {
        s->t_dropping = s->t_head - s->t_tail == GPU_TIMING_SLOTS;
        if (s->t_dropping)
            return 0;
        s->slots[s->t_head % GPU_TIMING_SLOTS].marks = 0;
        s->t_head++;
    } else if (s->t_head == s->t_tail || s->t_dropping) {
        return 0;           /* no step started, or this one goes untimed */
    }
    gpu_timing_slot *t = &s->slots[(s->t_head - 1) % GPU_TIMING_SLOTS];
    if (gpu_cuda(b, cudaEventRecord(t->ev[mark], s->stream), "timing_mark", "cudaEventRecord",
                 "marking phase %d of a step", mark))
        return -1;
    t->marks |= 1u << mark;
    return 0;
}

int gpu_timing_collect(nn_backend *b, int wait, double us[NN_TIMING_MARKS], long n[NN_TIMING_MARKS])
{
    gpu_state *s = gpu_of(b);
    long steps = 0;
    while (s->t_tail < s->t_head) {
        gpu_timing_slot *t = &s->slots[s->t_tail % GPU_TIMING_SLOTS];
        int last = 0;
        for (int m = 0; m < NN_TIMING_MARKS; m++)
            if (t->marks & (1u << m))
                last = m;
        cudaError_t e = wait ? cudaEventSynchronize(t->ev[last]) : cudaEventQuery(t->ev[last]);
        if (e == cudaErrorNotReady) {
            cudaGetLastError();
            break;          /* later steps are later in the stream */
        }
        if (gpu_cuda(b, e, "timing_collect", wait ? "cudaEventSynchronize" : "cudaEventQuery",
                     "reading a step's timing"))
            return -1;
        if (fold_slot(b, t, us, n) != 0)
            return -1;
        steps++;
        s->t_tail++;
    }
    return (int)(steps > 0x7fffffff ? 0x7fffffff : steps);
}

/* ---- the calibration's clock and the device's peak ---------------------------------------------- */

int gpu_clock_start(nn_backend *b)
{
    gpu_state *s = gpu_of(b);
    if (s->capturing)
        return gpu_fail(b, "clock_start: not while recording");
    if (!s->clock_made) {
        if (gpu_cuda(b, cudaEventCreate(&s->clock_ev[0]), "clock_start", "cudaEventCreate", "the clock's first mark"))
            return -1;
        if (gpu_cuda(b, cudaEventCreate(&s->clock_ev[1]), "clock_start", "cudaEventCreate", "the clock's second mark")) {
            cudaEventDestroy(s->clock_ev[0]);
            return -1;
        }
        s->clock_made = 1;
    }
    return gpu_cuda(b, cudaEventRecord(s->clock_ev[0], s->stream), "clock_start", "cudaEventRecord",
                    "marking the start of a timed batch");
}

int gpu_clock_stop(nn_backend *b, double *us)
{
    gpu_state *s = gpu_of(b);
    float ms = 0.0f;
    if (!s->clock_made)
        return gpu_fail(b, "clock_stop: no clock_start before it");
    if (gpu_cuda(b, cudaEventRecord(s->clock_ev[1], s->stream), "clock_stop", "cudaEventRecord",
                 "marking the end of a timed batch") ||
        gpu_cuda(b, cudaEventSynchronize(s->clock_ev[1]), "clock_stop", "cudaEventSynchronize",
                 "waiting for a timed batch") ||
        gpu_cuda(b, cudaEventElapsedTime(&ms, s->clock_ev[0], s->clock_ev[1]), "clock_stop",
                 "cudaEventElapsedTime", "reading a timed batch"))
        return -1;
    *us = (double)ms * 1000.0;
    return 0;
}

/* FP32 lanes (results of a float multiply-add a clock) of one
 * multiprocessor, from the CUDA C++ Programming Guide's table "Throughput
 * of Native Arithmetic Instructions": 64 on compute capability 6.0, 7.x and
 * 8.0 (P100, V100, T4, A100, H100's predecessors), 128 on 5.x, 6.1, 6.2,
 * 8.6, 8.7, 8.9, 9.0 (H100, H200) and later. */
static int fp32_lanes(int major, int minor)
{
    if ((major == 6 && minor == 0) || major == 7 || (major == 8 && minor == 0))
        return 64;
    return 128;
}

int gpu_peak_gflops(nn_backend *b, double *gflops, char *how, size_t how_len)
{
    gpu_state *s = gpu_of(b);
    int khz = 0, sms = 0, major = 0, minor = 0;
    if (gpu_cuda(b, cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, s->device), "peak_gflops",
                 "cudaDeviceGetAttribute", "the clock rate") ||
        gpu_cuda(b, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, s->device), "peak_gflops",
                 "cudaDeviceGetAttribute", "the multiprocessors") ||
        gpu_cuda(b, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, s->device), "peak_gflops",
                 "cudaDeviceGetAttribute", "the compute capability") ||
        gpu_cuda(b, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, s->device), "peak_gflops",
                 "cudaDeviceGetAttribute", "the compute capability"))
        return -1;
    if (khz <= 0 || sms <= 0)
        return gpu_fail(b, "peak_gflops: the device gives no clock (%d kHz) or multiprocessors (%d)", khz, sms);
    int lanes = fp32_lanes(major, minor);
    *gflops = (double)sms * lanes * 2.0 * khz * 1e-6;
    snprintf(how, how_len, "%d SMs x %d FP32 lanes (sm_%d%d) x 2 x %.0f MHz", sms, lanes, major, minor, khz * 1e-3);
    return 0;
}

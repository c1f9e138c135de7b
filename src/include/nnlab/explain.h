/* src/include/nnlab/explain.h - why a step takes the time it takes: the cost model (cost.h)
 * priced with a device's calibration (calibrate.h), split into fixed
 * overheads (operations issued, copies, synchronisation, the fixed cost of
 * each matrix product) and work (per op the larger of FLOPs at the rate
 * measured for calls of its size and bytes at the streaming bandwidth, a
 * roofline), and the regime named with the numbers behind it.
 *
 * The regime's rule, the same on a CPU and a GPU: the part of the step a
 * larger batch would amortise (the fixed costs, the optimiser's pass, and
 * how much slower the matrix products run than larger calls of their kind,
 * because they are small) is its overhead. When that is at least half the predicted step the
 * step is overhead-bound; otherwise memory-bound when its bytes at the
 * bandwidth take longer than its arithmetic, else compute-bound. */
#ifndef NNLAB_EXPLAIN_H
#define NNLAB_EXPLAIN_H

#include "nnlab/calibrate.h"
#include "nnlab/cost.h"
#include "nnlab/engine.h"
#include "nnlab/preset.h"

typedef enum nn_regime {
    NN_REGIME_OVERHEAD,          /* what a larger batch amortises is at least half the step */
    NN_REGIME_MEMORY,            /* the work is bytes moved more than FLOPs */
    NN_REGIME_COMPUTE
} nn_regime;

/* The job being explained. Zero everywhere is a GPU-style job issuing every
 * operation itself and copying each batch from pageable memory; the switches
 * mean what they mean in nn_job_config (engine.h). */
typedef struct nn_explain_options {
    int host_memory;             /* the device computes in host memory (CPU) */
    int data_on_device;          /* GPU: the data set is resident, batches gathered there */
    int sync_every_step;         /* the loss is read back every step */
    int launches_per_step;       /* measured by the backend (kernels, library calls and graph
                                    launches); 0 = estimate one per op */
    int graph;                   /* GPU: forward, loss, backward and optimiser replayed as one
                                    recorded graph (priced so when the calibration has graphs) */
    int pinned;                  /* GPU, data not on the device: batches copied from page-locked
                                    memory (priced so when the calibration has pinned figures) */
    int graph_nodes_per_step;    /* with graph: nodes replayed, measured; 0 = one per op */
    int framework;               /* GPU: a deep-learning framework in eager mode issues the step
                                    (nnlab/framework.h's GPU form, the figures below) */
    double framework_op_us;      /* its host cost per operation beyond the launch */
    double framework_step_us;    /* its fixed host cost per step */
    double framework_conv_us;    /* its further host cost per convolution layer (cuDNN) */
    double framework_device_ratio; /* the share of nnlab's device time its step adds */
    int unfused;                 /* price Adam's pass apart even where the device fuses it
                                    into the backward (the calibration's
                                    fused_adam_max_batch): a framework's kernels, a rank of
                                    several (they sum the gradients first) */
} nn_explain_options;

/* The three ways a GPU step can be run, which a GPU profile predicts side
 * by side (profile.h): as a framework runs it eagerly (the write-ups' loop:
 * each step a batch copied from pageable host memory as `.to(device)` does,
 * forward, backward, the optimiser's step, the loss read back with
 * `loss.item()`; priced by nnlab/framework.h's GPU form), nnlab eager (data
 * on the device, no read-back) and nnlab with the step replayed as one CUDA
 * graph and the data on the device (nnlab's default). */
typedef enum nn_gpu_way { NN_WAY_FRAMEWORK, NN_WAY_EAGER, NN_WAY_GRAPH, NN_GPU_WAYS } nn_gpu_way;

/* A framework's figures on a GPU (a profile's [framework] gpu_* keys;
 * nnlab/framework.h, docs/ways.md). */
typedef struct nn_framework_gpu {
    double step_us;              /* fixed host cost per step (Python, the optimiser's bookkeeping) */
    double op_us;                /* host cost per operation beyond the launch */
    double conv_us;              /* further host cost per convolution layer (cuDNN's calls) */
    double device_ratio;         /* the share of nnlab's device time its step adds to the host's */
} nn_framework_gpu;

/* A framework's figures on the CPU (a profile's [framework] cpu_* keys;
 * nnlab/framework.h, docs/ways.md): each multiplies a term priced from the
 * CPU's calibration, so that the step ports to another machine. */
typedef struct nn_framework_cpu {
    double step_us;              /* fixed cost per step (the Python loop, loss.item()) */
    double op_ratio;             /* its dispatch of one op, in the calibration's op_us */
    double elem_passes;          /* its elementwise traffic, in nnlab's bytes at mem_gbps */
    double param_passes;         /* its optimiser's and zeroing's passes over the parameters */
    double work_ratio;           /* its kernels against nnlab's predicted step */
    double thread_op_ratio;      /* what each thread beyond the first adds to an op's dispatch
                                    (its thread pool woken per op), in op_us */
    double thread_work_ratio;    /* and to work_ratio: its kernels gain less from more threads
                                    than the calibration's rates (nnlab's) do */
    double arith_ratio;          /* its per-element layers' arithmetic (activations, dropout,
                                    pools) against nnlab's calibrated ns an element: its mish
                                    costs 3-8x nnlab's where its relu costs nnlab's */
} nn_framework_cpu;

/* "framework eager", "nnlab eager", "nnlab graph" */
const char *nn_gpu_way_name(nn_gpu_way w);
/* "framework", "eager", "graph": the word CSV and JSON use */
const char *nn_gpu_way_key(nn_gpu_way w);
/* The options of way w on a GPU; fw is the framework's figures (used by
 * NN_WAY_FRAMEWORK only; may be NULL for the others). */
void nn_gpu_way_options(nn_gpu_way w, const nn_framework_gpu *fw, nn_explain_options *opt);

/* Operations a framework issues for one step of p in eager mode (as
 * PyTorch's autograd runs it): per working layer its forward and, for a
 * layer with parameters, a bias kernel; per backward an input gradient (but
 * the first working layer's) and, with parameters, weight and bias
 * gradients; the loss forward and backward, two each; per parameter tensor
 * the optimiser's update (SGD 1, SGD with momentum 3, Adam 6) and the
 * zeroing of its gradient; a batch norm over ghost batches (virtual_batch)
 * a forward and a backward more for each chunk beyond the first at c's
 * batch. */
int nn_framework_ops(const nn_preset *p, const nn_cost *c);

/* Convolution layers of the step (each a cuDNN forward and backward in the
 * framework: the GPU form's conv_us). */
int nn_framework_conv_layers(const nn_cost *c);

typedef struct nn_explanation {
    nn_cost cost;
    int ops;                     /* operations issued per step (launches on a GPU; a graph is one) */
    double issue_us;             /* issuing them: ops x the cost of one, or with a graph its
                                    launch + nodes x the replay cost of a node */
    double copy_us;              /* the batch to the device: fixed cost + bytes / bandwidth */
    double sync_us;              /* one round trip when the loss is read every step */
    double compute_us;           /* all FLOPs at the peak (peak_gflops): a floor of the work */
    double memory_us;            /* all bytes at the streaming bandwidth: a floor of the work */
    double work_us;              /* sum over ops of max(arithmetic, bytes/bandwidth): the
                                    arithmetic at the rate measured for calls of that size (or
                                    the cost per element measured for its kind), never faster
                                    than the peak */
    double predicted_us;         /* issue + copy + sync + fixed + work (+ calls_us, or with
                                    overlapped the longer of issue and fixed + calls + work);
                                    never below compute_us or memory_us */
    nn_regime regime;
    char why[640];               /* the numbers behind the regime */
    char advice[512];            /* the change that would help most */

    /* Added with the rate curves and the graph and pinned figures. */
    int matrix_calls;            /* linear and convolution calls per step */
    double fixed_us;             /* matrix_calls x their fixed cost beyond issuing one op */
    double sized_compute_us;     /* the arithmetic of every op as the work prices it: the one
                                    FLOP time the explanation's text gives */
    int graph_nodes;             /* nodes of the replayed graph (0 without one) */
    int priced_graph;            /* issue_us is a graph replay (opt->graph and calibrated) */
    int priced_pinned;           /* copy_us is from page-locked memory (opt->pinned and calibrated) */
    double graph_saving_us;      /* what replaying the step as a graph would save, from the
                                    calibration; 0 when priced as one already or not calibrated */
    double peak_gflops;          /* the rate of compute_us (nn_calibration_peak_gflops) */

    /* The overhead-bound regime's rule: what a larger batch would amortise. */
    double products_us;          /* the matrix products' work */
    double shortfall_us;         /* the matrix products' time beyond what they would take at the
                                    rate larger calls reach (the best rate calibrated at their
                                    size or above): what a larger batch would amortise */
    double optimizer_us;         /* the optimiser's pass: one per step, whatever the batch */
    double class_work_us[NN_OP_CLASSES];   /* work_us by the class of its op (the loss's and
                                    the optimiser's included): the terms a framework's
                                    kernels can be priced by, class by class */
    double overhead_us;          /* fixed costs (issue, sync, the products' fixed cost, the
                                    copies' fixed cost) + shortfall + optimiser */
    double scaling_us;           /* the rest: the work that grows with the batch */

    /* Fitted to the recorded H200 run: a profile's costs by kind of call
     * (nn_calibration.calls); all 0 without them. */
    double calls_us;             /* the device's fixed time of every call, by its kind */
    int library_calls[2];        /* cuDNN convolution and cuBLAS product calls per step */
    double library_us;           /* their host cost beyond the launches (eager: in issue_us) */
    int overlapped;              /* eager on a GPU: the host's issuing and the device's kernels
                                    overlap; the step waits for the longer (issue_us against
                                    calls_us + work_us) */
    /* A line when the calibration priced with failed its checks
     * (nn_calibration_check): "" otherwise. */
    char caveat[448];
} nn_explanation;

void nn_explain(const nn_preset *p, int batch, const nn_calibration *cal,
                const nn_explain_options *opt, nn_explanation *out);

const char *nn_regime_name(nn_regime r);

/* A convolution's shape as Explain names it: "6x5x5 on 3x32x32" (its
 * filters on one sample's input). */
void nn_conv_shape_text(const nn_conv_algorithm_info *a, char *buf, size_t len);
/* Explain's line for the algorithm a device chose for a convolution (the
 * lesson: which one, whether it repeats, what it cost): "conv 6x5x5 on
 * 3x32x32, backward-filter: BWD_FILTER_ALGO_0 (not deterministic), 12.3 us
 * measured (timed now)". */
void nn_conv_algorithm_text(const nn_conv_algorithm_info *a, char *buf, size_t len);

#endif

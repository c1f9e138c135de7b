/* src/include/nnlab/framework.h - a deep-learning framework's step on the
 * CPU, predicted: the `framework` way on the CPU (docs/ways.md).
 *
 * The write-ups ran PyTorch or Keras eagerly on both devices; nnlab's own CPU
 * step is 1.5-70x faster than theirs, so a crossover between nnlab's CPU and
 * a framework's GPU is neither the write-ups' nor nnlab's. The framework's
 * CPU step is priced from this machine's CPU calibration by one form, each
 * term what PyTorch is measured doing, priced by the figure of the
 * calibration that bounds it:
 *
 *     step = step_us                                  the Python loop, loss.item()
 *          + (op_ratio + thread_op_ratio x (threads - 1)) x ops x op_us
 *                                                     its dispatch of every op
 *          + elem_passes x elementwise bytes / mem_gbps   its unfused elementwise ops
 *          + param_passes x 4 params / mem_gbps       its optimiser's and zeroing's passes
 *          + (work_ratio + thread_work_ratio x (threads - 1)) x nnlab's step
 *                                                     its kernels
 *          + arith_ratio x per-element arithmetic     its activations' and pools' arithmetic
 *          + fresh bytes / 4096 x fresh_page_us       the memory it maps anew
 *
 * ops: nn_framework_ops (the operations PyTorch's autograd issues for one
 * step of the preset); op_us and mem_gbps: the calibration's cost of issuing
 * one op (the host's single-thread speed) and its streaming bandwidth;
 * elementwise bytes: nnlab's cost model's for every layer that is not a
 * matrix product; nnlab's step: its model's prediction from the same
 * calibration; fresh bytes: nn_framework_fresh_bytes, priced by the
 * calibration's fresh_page_us (not fitted: 0 where the calibration has no
 * such figure); threads: the calibration's (PyTorch's pool wakes them for
 * every op, and its kernels gain less from them than nnlab's calibrated
 * rates do). The eight figures are fitted together by least squares on
 * relative errors (nn_framework_fit_cpu) to PyTorch's measured CPU steps on
 * the hosts whose calibration describes the nnlab that ran beside PyTorch
 * and whose PyTorch ran the threads it was given (one, two and sixteen;
 * the data: tests/fixtures/framework-cpu-fit.csv, which says which hosts
 * and why, tools/fit_framework_cpu.py; docs/decisions/0168;
 * the figures and their sources: the GPU profiles' [framework] section,
 * profiles/t4.ini, read into nn_gpu_profile's framework_cpu). */
/*
 * On a GPU (the write-ups' loop: each step a batch copied from pageable host
 * memory as `.to(device)` does, forward, backward, the optimiser's step, the
 * loss read back with `loss.item()`), PyTorch's host issues every operation
 * while the device runs them; its step is priced by nn_explain with the
 * framework way's options (nn_gpu_way_options, NN_WAY_FRAMEWORK):
 *
 *     step = gpu_step_us + ops x (launch + gpu_op_us) + conv_layers x gpu_conv_us
 *            + the loss read back + gpu_device_ratio x nnlab's device time
 *            + the batch's copy from pageable memory (the profile's copy_us, copy_gbps)
 *
 * The figures are fitted (nn_framework_fit_gpu) to PyTorch 2.11's measured
 * steps on the recorded H200 with the batch already on the device
 * (tests/fixtures/framework-gpu-h200.csv, the h200 profile), so the fit
 * leaves the copy out and the framework way adds it.
 */
#ifndef NNLAB_FRAMEWORK_H
#define NNLAB_FRAMEWORK_H

#include "nnlab/calibrate.h"
#include "nnlab/explain.h"
#include "nnlab/preset.h"
#include "nnlab/profile.h"

/* The fitted figures (what a profile without a [framework] section reads;
 * profiles/t4.ini carries them with their source). */
#define NN_FRAMEWORK_CPU_STEP_US 66.42
#define NN_FRAMEWORK_CPU_OP_RATIO 420.47
#define NN_FRAMEWORK_CPU_ELEM_PASSES 3.8789
#define NN_FRAMEWORK_CPU_PARAM_PASSES 14.2989
#define NN_FRAMEWORK_CPU_WORK_RATIO 0.9881
#define NN_FRAMEWORK_CPU_THREAD_OP_RATIO 108.65
#define NN_FRAMEWORK_CPU_THREAD_WORK_RATIO 0.0297
#define NN_FRAMEWORK_CPU_ARITH_RATIO 3.0508

/* The GPU form's fitted figures (what a profile without them reads). */
#define NN_FRAMEWORK_GPU_STEP_US 168.42
#define NN_FRAMEWORK_GPU_FW_OP_US 16.854
#define NN_FRAMEWORK_GPU_CONV_US 182.34
#define NN_FRAMEWORK_GPU_DEVICE_RATIO 0.2306

/* One CPU step's terms, from nnlab's model on a CPU's calibration: the
 * framework's operations and the calibration's cost of issuing one, the
 * elementwise layers' bytes and one pass over the parameters (4 bytes each)
 * at its streaming bandwidth, nnlab's predicted step, the calibration's
 * threads; framework_us, the measured step, for a fit. */
typedef struct nn_framework_sample {
    int ops, threads;
    double op_us, elem_us, param_us, nnlab_us;
    /* nnlab's predicted work split by the kind of op (nn_explanation's
     * class_work_us): matrix products of linear layers, convolutions, the
     * ops with a calibrated cost per element (activations, dropout, pools,
     * the loss), the layers priced by their bytes (batch norms, GLUs,
     * sparsemax, adds). Not in the form: tools/fit_framework_cpu.py
     * --form split fits a ratio to each (docs/ways.md, "Split by kind"). */
    double linear_us, conv_us, act_us, other_us;
    /* nnlab's calibrated arithmetic of the per-element layers (activations,
     * dropout, pools: elements x the calibration's ns an element, forward
     * and backward), their bytes apart: what arith_ratio multiplies
     * (PyTorch's mish costs 3-8x nnlab's where its relu costs nnlab's). */
    double arith_us;
    /* The pages PyTorch maps fresh each step, priced: nn_framework_fresh_bytes
     * / 4096 x the calibration's fresh_page_us (0 where it has none). */
    double fresh_us;
    double framework_us;
} nn_framework_sample;

/* The bytes one training step of PyTorch on the CPU maps fresh from the
 * kernel, every page of them faulted and zeroed again each step (docs/ways.md,
 * "Fresh pages"). glibc's malloc serves a block of 32 MiB or more
 * (DEFAULT_MMAP_THRESHOLD_MAX on 64 bits, the most its dynamic threshold
 * grows to) with a mapping of its own and unmaps it on free, whatever came
 * before; PyTorch's convolutions (oneDNN) keep their output, and their
 * output's and input's gradients, in a blocked layout whose channels are
 * padded to the CPU's vector (vector_floats: 16 with AVX-512, 8 with AVX2:
 * LeNet's 6 channels as 16, a 51 MB output at batch 1024). Each such tensor
 * of 32 MiB or more counts: the output in the forward, its gradient in the
 * backward, the input's gradient where the layer computes one. A lower
 * bound: smaller blocks that the heap gives back when its top is trimmed
 * are not counted (their pattern follows the allocator's history, not the
 * network). 0 without convolutions, or with vector_floats 0. */
double nn_framework_fresh_bytes(const nn_preset *p, const nn_cost *c, double vector_floats);

typedef struct nn_framework_fit {
    nn_framework_cpu fc;
    int n;                       /* samples fitted */
    double rms_rel;              /* root mean square of (predicted - measured) / measured */
    double max_rel;              /* the largest |relative error| */
} nn_framework_fit;

/* The terms of p's CPU step at batch from cpu_cal; nnlab_out (may be NULL)
 * gets nnlab's predicted step they are built on. -1 when they cannot be
 * priced (no usable calibration). */
int nn_framework_cpu_sample_of(const nn_preset *p, int batch, const nn_calibration *cpu_cal,
                               nn_framework_sample *out, nn_explanation *nnlab_out);

/* The fitted figures above as a struct (what a profile without a
 * [framework] section reads). */
nn_framework_cpu nn_framework_cpu_shipped(void);

/* The form itself. */
double nn_framework_cpu_form(const nn_framework_sample *s, const nn_framework_cpu *fc);

/* The form's eight figures by least squares on relative errors (each
 * sample's row divided by its measured step, so a 1 ms and a 100 ms step
 * weigh alike), none negative (a figure whose estimate is negative is held
 * at 0 and the others fitted again). The two thread figures multiply the
 * threads beyond the first, so they are fitted only where the samples ran
 * more than one thread count; samples of one count leave them 0 (op_ratio
 * and work_ratio then hold that count's share). -1 with fewer samples than
 * figures or a singular system. */
int nn_framework_fit_cpu(const nn_framework_sample *s, int n, nn_framework_fit *out);

/* The framework's CPU step of p at batch, priced with the CPU's calibration
 * and prof's [framework] figures; nnlab_out (may be NULL) gets nnlab's
 * predicted step it is built on. Returns the step in microseconds (0
 * without a usable calibration). */
double nn_framework_cpu_step_us(const nn_preset *p, int batch, const nn_calibration *cpu_cal,
                                const nn_gpu_profile *prof, nn_explanation *nnlab_out);

/* One GPU step's terms, from nnlab's model on a GPU's calibration (a
 * profile's): the operations, the convolution layers, the launch of one op,
 * what the form takes as given (the loss read back, and the batch's copy
 * where the step copied it) and nnlab's device time (its kernels' fixed
 * times and work); framework_us, the measured step, for a fit. */
typedef struct nn_framework_gpu_sample {
    int ops, conv_layers;
    double launch_us, given_us, device_us;
    double framework_us;
} nn_framework_gpu_sample;

typedef struct nn_framework_gpu_fit {
    nn_framework_gpu fw;
    int n;
    double rms_rel, max_rel;
} nn_framework_gpu_fit;

/* How the measured step had its batch: already on the device (the helper's
 * framework-data-on-device way, what the recorded H200 run measured), or
 * copied from pageable host memory each step (the framework way itself). */
typedef enum nn_framework_batch {
    NN_FRAMEWORK_BATCH_ON_DEVICE,
    NN_FRAMEWORK_BATCH_COPIED
} nn_framework_batch;

/* The terms of p's step at batch with its batch as `batch_way` says (the
 * copy, priced from the calibration, is then given); -1 when they cannot be
 * priced. */
int nn_framework_gpu_sample_of(const nn_preset *p, int batch, const nn_calibration *gpu_cal,
                               nn_framework_batch batch_way, nn_framework_gpu_sample *out);

/* The GPU form: the sample's given terms (the read-back, a copy where the
 * sample has one) and the host's or the device's time. */
double nn_framework_gpu_form(const nn_framework_gpu_sample *s, const nn_framework_gpu *fw);

/* The GPU form's least-squares fit on relative errors, no figure negative;
 * -1 with fewer than four samples or a singular system. */
int nn_framework_fit_gpu(const nn_framework_gpu_sample *s, int n, nn_framework_gpu_fit *out);

#endif

/* src/include/nnlab/framework.h - a deep-learning framework's step on the
 * CPU, predicted: the `framework` way on the CPU (docs/ways.md).
 *
 * The write-ups ran PyTorch or Keras eagerly on both devices; nnlab's own CPU
 * step is 1.5-70x faster than theirs, so a crossover between nnlab's CPU and
 * a framework's GPU is neither the write-ups' nor nnlab's. The framework's
 * CPU step is priced from this machine's CPU calibration by one form:
 *
 *     step = step_us + ops x op_us + work_ratio x nnlab's step
 *
 * ops: nn_framework_ops (the operations PyTorch's autograd issues for one
 * step of the preset); nnlab's step: its model's prediction from the CPU's
 * calibration; op_us (the framework's host cost per operation on the CPU),
 * step_us (its fixed cost per step: the Python loop, zero_grad's and
 * step()'s bookkeeping, loss.item()) and work_ratio (its arithmetic against
 * nnlab's, for the same work) are fitted by least squares to PyTorch's
 * measured CPU steps beside nnlab's on the same host
 * (nn_framework_fit_cpu; the data: tests/fixtures/framework-cpu-fit.csv;
 * the figures and their sources: the GPU profiles' [framework] section,
 * profiles/t4.ini, read into nn_gpu_profile's framework_cpu_* fields). */
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
#define NN_FRAMEWORK_CPU_OP_US 12.53
#define NN_FRAMEWORK_CPU_STEP_US 0.0
#define NN_FRAMEWORK_CPU_WORK_RATIO 1.563

/* The GPU form's fitted figures (what a profile without them reads). */
#define NN_FRAMEWORK_GPU_STEP_US 168.42
#define NN_FRAMEWORK_GPU_FW_OP_US 16.854
#define NN_FRAMEWORK_GPU_CONV_US 182.34
#define NN_FRAMEWORK_GPU_DEVICE_RATIO 0.2306

/* One measured pair: the framework's step and nnlab's, the same preset and
 * batch on the same host, and the framework's operations for that preset. */
typedef struct nn_framework_sample {
    int ops;
    double nnlab_us, framework_us;
} nn_framework_sample;

typedef struct nn_framework_fit {
    double op_us, step_us, work_ratio;
    int n;                       /* samples fitted */
    double rms_rel;              /* root mean square of (predicted - measured) / measured */
    double max_rel;              /* the largest |relative error| */
} nn_framework_fit;

/* The form's least-squares fit on relative errors (each sample's row
 * divided by its measured step, so a 1 ms and a 100 ms step weigh alike);
 * -1 with fewer than three samples or a singular system. */
int nn_framework_fit_cpu(const nn_framework_sample *s, int n, nn_framework_fit *out);

/* The form itself. */
double nn_framework_cpu_form(int ops, double nnlab_us, double op_us, double step_us, double work_ratio);

/* The framework's CPU step of p at batch, priced with the CPU's calibration
 * and prof's [framework] figures; nnlab_out (may be NULL) gets nnlab's
 * predicted step it is built on. Returns the step in microseconds (0
 * without a usable calibration). */
double nn_framework_cpu_step_us(const nn_preset *p, int batch, const nn_calibration *cpu_cal,
                                const nn_gpu_profile *prof, nn_explanation *nnlab_out);

/* One GPU step's terms, from nnlab's model on a GPU's calibration (a
 * profile's): the operations, the convolution layers, the launch of one op,
 * what the form takes as given (the loss read back) and nnlab's device time
 * (its kernels' fixed times and work); framework_us, the measured step, for
 * a fit. */
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

/* The terms of p's step at batch with the batch on the device (what the
 * recorded run measured); -1 when they cannot be priced. */
int nn_framework_gpu_sample_of(const nn_preset *p, int batch, const nn_calibration *gpu_cal,
                               nn_framework_gpu_sample *out);

/* The GPU form with the batch on the device (no copy). */
double nn_framework_gpu_form(const nn_framework_gpu_sample *s, const nn_framework_gpu *fw);

/* The GPU form's least-squares fit on relative errors, no figure negative;
 * -1 with fewer than four samples or a singular system. */
int nn_framework_fit_gpu(const nn_framework_gpu_sample *s, int n, nn_framework_gpu_fit *out);

#endif

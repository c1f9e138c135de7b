/* backends/cpu_blas.c - the fast CPU backend ("cpu"): its op table. OpenBLAS
 * sgemm for every matrix product, direct or im2col convolution, our own
 * vectorised loops, and a small thread pool of our own that runs every
 * parallel loop. Each operation lives in the file named after it
 * (backends/cpu_internal.h has the map); memory and the losses are
 * cpu-ref's functions (cpu_ref.c).
 */
#include "cpu_internal.h"
#include "cpu_ref.h"

const nn_backend_ops nn_backend_cpu = {
    .name = "cpu",
    .summary = "OpenBLAS sgemm and im2col, the free cores (own thread pool)",
    .host_memory = 1,
    .probe = nn_cpu_probe,
    .open = nn_cpu_open,
    .close = nn_cpu_close,

    .alloc = nn_ref_alloc,
    .free = nn_ref_free,
    .upload = nn_ref_upload,
    .download = nn_ref_download,
    .zero = nn_ref_zero,
    .synchronize = nn_ref_synchronize,

    .linear_forward = nn_cpu_linear_forward,
    .linear_backward = nn_cpu_linear_backward,
    .conv2d_workspace = nn_cpu_conv2d_workspace,
    .conv2d_forward = nn_cpu_conv2d_forward,
    .conv2d_backward = nn_cpu_conv2d_backward,
    .maxpool2d_forward = nn_cpu_maxpool2d_forward,
    .maxpool2d_backward = nn_cpu_maxpool2d_backward,
    .act_forward = nn_cpu_act_forward,
    .act_backward = nn_cpu_act_backward,
    .batchnorm_forward = nn_cpu_batchnorm_forward,
    .batchnorm_backward = nn_cpu_batchnorm_backward,
    .glu_forward = nn_cpu_glu_forward,
    .glu_backward = nn_cpu_glu_backward,
    .sparsemax_forward = nn_cpu_sparsemax_forward,
    .sparsemax_backward = nn_cpu_sparsemax_backward,
    .sparsemax_entropy = nn_ref_sparsemax_entropy,
    .dropout_forward = nn_cpu_dropout_forward,
    .dropout_backward = nn_cpu_dropout_backward,
    .softmax_xent = nn_ref_softmax_xent,
    .mse = nn_ref_mse,
    .sgd_step = nn_cpu_sgd_step,
    .adam_step = nn_cpu_adam_step,
    .add_forward = nn_cpu_add_forward,
    .add_backward = nn_cpu_add_backward,
    .mul_forward = nn_cpu_mul_forward,
    .mul_backward = nn_cpu_mul_backward,
    .slice_forward = nn_ref_slice_forward,
    .slice_backward = nn_ref_slice_backward,
    .accumulate = nn_cpu_accumulate,
};

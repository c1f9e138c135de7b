/* backends/cpu/cpu_blas.c - the fast CPU backend ("cpu"): its op table. OpenBLAS
 * sgemm for every matrix product, direct or im2col convolution, our own
 * vectorised loops, and a small thread pool of our own that runs every
 * parallel loop. Each operation lives in the file named after it
 * (backends/cpu/cpu_internal.h has the map); memory, the losses, slice and the
 * sparsity term are cpu-ref's functions (cpu_ref.c): backend_ops.def's
 * `ref` entries.
 */
#include "cpu_info.h"
#include "cpu_internal.h"
#include "cpu_ref/cpu_ref.h"

const nn_backend_ops nn_backend_cpu = {
    .name = "cpu",
    .summary = "OpenBLAS sgemm and im2col, the free cores (own thread pool)",
    .host_memory = 1,
    /* nn_cpu_<op> where backend_ops.def says `own`, cpu-ref's nn_ref_<op>
     * where it says `ref`, NULL where `none`, nn_cpu_<op> where `cpu` */
#define NN_CPU_SLOT_own(op) .op = nn_cpu_##op,
#define NN_CPU_SLOT_ref(op) .op = nn_ref_##op,
#define NN_CPU_SLOT_none(op)
#define NN_CPU_SLOT_cpu(op) .op = nn_cpu_##op,
#define NN_CPU_SLOT_host NN_CPU_SLOT_cpu
#define NN_OP(ret, op, params, cpu) NN_CPU_SLOT_##cpu(op)
#include "backend_ops.def"
};

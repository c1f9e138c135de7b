/* backends/cpu_ref/cpu_ref.h - the reference backend's operations, exported so that
 * the OpenBLAS backend can use the ones where plain loops are already the best
 * a CPU can do (memory, losses, slice, the sparsity term): the entries of
 * backend_ops.def marked `ref`. Each has the signature of its slot in
 * nn_backend_ops (backends/backend.h). */
#ifndef NNLAB_CPU_REF_H
#define NNLAB_CPU_REF_H

#include "backend.h"

/* nn_ref_<op> for every operation of backend_ops.def but the optional
 * (`none`) ones: cpu_ref.c (the table, memory, linear, activations,
 * dropout, losses, optimisers), cpu_ref_conv.c (convolution, max pooling),
 * cpu_ref_graph.c (add, mul, slice, accumulate), cpu_ref_tab.c (batch
 * norm, GLU, sparsemax). */
#define NN_REF_PROTO_own(ret, op, params) ret nn_ref_##op params;
#define NN_REF_PROTO_ref NN_REF_PROTO_own
#define NN_REF_PROTO_none(ret, op, params)
#define NN_REF_PROTO_cpu(ret, op, params)
#define NN_REF_PROTO_host(ret, op, params)
#define NN_OP(ret, op, params, cpu) NN_REF_PROTO_##cpu(ret, op, params)
#include "backend_ops.def"

#endif

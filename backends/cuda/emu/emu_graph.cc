/* backends/cuda/emu/emu_graph.cc - stream capture and graphs on the emulated
 * GPU.
 *
 * A capturing stream records what is queued on it instead of running it;
 * cudaStreamEndCapture turns the record into a graph (one stream: a chain,
 * whose first node is its only root). An instantiated graph holds copies of
 * the nodes, whose kernel arguments cudaGraphExecKernelNodeSetParams may
 * change; each cudaGraphLaunch queues a snapshot of them, so that a change
 * made after a launch does not reach it, as on a GPU.
 *
 * What capture forbids (the runtime's rules, docs/gpu-backend.md): waiting
 * for the capturing stream (synchronize, query, cudaDeviceSynchronize) in
 * any mode; and, unless the capture was begun in relaxed mode, the calls
 * that are unsafe during capture: allocating or freeing memory, querying or
 * waiting for an event, work on the legacy stream, cuDNN's algorithm
 * queries and cuBLAS without a workspace of the caller's (both may allocate).
 * Each invalidates the capture: it goes on recording nothing, and
 * cudaStreamEndCapture returns cudaErrorStreamCaptureInvalidated. Optionally
 * (NNLAB_EMU_LAZY_INIT=1) so does the first use of a library routine. */
#include "emu_internal.h"

#include <stdlib.h>
#include <string.h>

struct nn_emu_graph_node {
    nn_emu_graph *graph;
    size_t index;
};

struct nn_emu_graph {
    std::vector<std::unique_ptr<nn_emu::op>> ops;
    std::vector<std::unique_ptr<nn_emu_graph_node>> nodes;
};

struct nn_emu_graph_exec {
    std::vector<std::unique_ptr<nn_emu::op>> ops;
    std::map<const nn_emu_graph_node *, size_t> index;   /* the source graph's nodes */
};

namespace nn_emu {

namespace {

struct graphs {
    std::set<nn_emu_graph *> live;
    std::set<nn_emu_graph_exec *> execs;
    std::set<nn_emu_graph_node *> nodes;
};

graphs &all()
{
    static graphs *g = new graphs;   /* never destroyed, as lock() */
    return *g;
}

/* A launched graph: the nodes as they were at cudaGraphLaunch. */
struct launch_node : op {
    std::vector<std::unique_ptr<op>> ops;
    cudaError_t exec(std::string *why) override
    {
        for (auto &o : ops) {
            cudaError_t e = o->exec(why);
            if (e != cudaSuccess) {
                *why = "in a graph: " + *why;
                return e;
            }
        }
        return cudaSuccess;
    }
    op *clone() const override
    {
        launch_node *c = new launch_node;
        for (auto &o : ops)
            c->ops.emplace_back(o->clone());
        return c;
    }
    cudaGraphNodeType node_type() const override { return cudaGraphNodeTypeGraph; }
};

/* Does st's capture forbid unsafe calls from this thread? */
bool strict_for_me(const nn_emu_stream *st)
{
    if (!st->capturing || st->mode == cudaStreamCaptureModeRelaxed)
        return false;
    return st->mode == cudaStreamCaptureModeGlobal || st->thread == std::this_thread::get_id();
}

} /* namespace */

bool strict_capture_active(void)
{
    for (nn_emu_stream *st : live_streams())
        if (strict_for_me(st))
            return true;
    return false;
}

bool any_stream_capturing(void)
{
    for (nn_emu_stream *st : live_streams())
        if (st->capturing)
            return true;
    return false;
}

void invalidate_capture(nn_emu_stream *st, const char *why)
{
    if (st->invalidated)
        return;
    st->invalidated = true;
    st->captured.clear();
    diag("stream capture invalidated by %s (cudaStreamEndCapture will return "
         "cudaErrorStreamCaptureInvalidated, as on a GPU)", why);
}

cudaError_t unsafe_during_capture(const char *what)
{
    bool hit = false;
    for (nn_emu_stream *st : live_streams())
        if (strict_for_me(st)) {
            invalidate_capture(st, what);
            hit = true;
        }
    return hit ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

bool first_use_spoils_capture(nn_emu_stream *st, std::set<std::string> *used, const std::string &key)
{
    static int lazy = -1;
    if (lazy < 0) {
        const char *e = getenv("NNLAB_EMU_LAZY_INIT");
        lazy = e && strcmp(e, "1") == 0;
    }
    if (!st->capturing) {
        used->insert(key);
        return false;
    }
    if (!lazy || used->count(key) || st->mode == cudaStreamCaptureModeRelaxed)
        return false;
    invalidate_capture(st, format("the first use of %s (NNLAB_EMU_LAZY_INIT=1: a library may "
                                  "initialise a routine on its first call)", key.c_str()).c_str());
    return true;
}

void end_capture_quietly(nn_emu_stream *st)
{
    st->capturing = false;
    st->invalidated = false;
    st->captured.clear();
}

} /* namespace nn_emu */

using namespace nn_emu;

/* ---- capture ---------------------------------------------------------------------------------- */

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    nn_emu_stream *st = stream_of(s, &e);
    if (!st)
        return record(e);
    if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
        mode != cudaStreamCaptureModeRelaxed)
        return record(cudaErrorInvalidValue);
    if (st->legacy)
        return record(cudaErrorStreamCaptureUnsupported);
    if (st->capturing)
        return record(cudaErrorIllegalState);
    if (sticky())
        return record(sticky());
    st->capturing = true;
    st->invalidated = false;
    st->mode = mode;
    st->thread = std::this_thread::get_id();
    st->captured.clear();
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    nn_emu_stream *st = stream_of(s, &e);
    if (!st)
        return record(e);
    if (!graph)
        return record(cudaErrorInvalidValue);
    *graph = nullptr;
    if (!st->capturing)
        return record(cudaErrorIllegalState);
    if (st->mode != cudaStreamCaptureModeRelaxed && st->thread != std::this_thread::get_id())
        return record(cudaErrorStreamCaptureWrongThread);
    bool invalid = st->invalidated;
    nn_emu_graph *gr = invalid ? nullptr : new nn_emu_graph;
    if (gr) {
        gr->ops = std::move(st->captured);
        for (size_t i = 0; i < gr->ops.size(); i++) {
            gr->nodes.emplace_back(new nn_emu_graph_node{ gr, i });
            all().nodes.insert(gr->nodes.back().get());
        }
        all().live.insert(gr);
    }
    end_capture_quietly(st);
    *graph = gr;
    return record(invalid ? cudaErrorStreamCaptureInvalidated : sticky());
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus *status)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    nn_emu_stream *st = stream_of(s, &e);
    if (!st || !status)
        return record(st ? cudaErrorInvalidValue : e);
    *status = !st->capturing ? cudaStreamCaptureStatusNone
              : st->invalidated ? cudaStreamCaptureStatusInvalidated
                                : cudaStreamCaptureStatusActive;
    return record(sticky());
}

/* ---- graphs ----------------------------------------------------------------------------------- */

cudaError_t cudaGraphGetRootNodes(cudaGraph_t gr, cudaGraphNode_t *nodes, size_t *count)
{
    guard g(lock());
    if (!all().live.count(gr))
        return record(cudaErrorInvalidResourceHandle);
    if (!count)
        return record(cudaErrorInvalidValue);
    size_t roots = gr->nodes.empty() ? 0 : 1;    /* a chain */
    if (!nodes) {
        *count = roots;
        return cudaSuccess;
    }
    size_t filled = 0;
    for (size_t i = 0; i < *count; i++)
        nodes[i] = i < roots ? gr->nodes[i].get() : nullptr;
    filled = *count < roots ? *count : roots;
    *count = filled;
    return cudaSuccess;
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType *type)
{
    guard g(lock());
    if (!all().nodes.count(node))
        return record(cudaErrorInvalidResourceHandle);
    if (!type)
        return record(cudaErrorInvalidValue);
    *type = node->graph->ops[node->index]->node_type();
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t gr, unsigned long long flags)
{
    guard g(lock());
    if (!exec)
        return record(cudaErrorInvalidValue);
    *exec = nullptr;
    if (!all().live.count(gr))
        return record(cudaErrorInvalidResourceHandle);
    if (flags != 0) {
        diag("cudaGraphInstantiate: flags %llu are not emulated", flags);
        return record(cudaErrorInvalidValue);
    }
    nn_emu_graph_exec *x = new nn_emu_graph_exec;
    for (size_t i = 0; i < gr->ops.size(); i++) {
        x->ops.emplace_back(gr->ops[i]->clone());
        x->index[gr->nodes[i].get()] = i;
    }
    all().execs.insert(x);
    *exec = x;
    return record(sticky());
}

cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t s)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    if (!all().execs.count(exec))
        return record(cudaErrorInvalidResourceHandle);
    nn_emu_stream *st = stream_of(s, &e);
    if (!st)
        return record(e);
    if (st->capturing) {
        invalidate_capture(st, "cudaGraphUpload");
        return record(cudaErrorStreamCaptureUnsupported);
    }
    return record(sticky());        /* nothing to upload to: the nodes are here */
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    if (!all().execs.count(exec))
        return record(cudaErrorInvalidResourceHandle);
    nn_emu_stream *st = stream_of(s, &e);
    if (!st)
        return record(e);
    if (st->capturing) {
        diag("cudaGraphLaunch into a capturing stream (a child graph) is not emulated");
        invalidate_capture(st, "cudaGraphLaunch");
        return record(cudaErrorStreamCaptureUnsupported);
    }
    launch_node *l = new launch_node;
    for (auto &o : exec->ops)
        l->ops.emplace_back(o->clone());
    return record(enqueue(st, std::unique_ptr<op>(l)));
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const cudaKernelNodeParams *p)
{
    guard g(lock());
    if (!all().execs.count(exec))
        return record(cudaErrorInvalidResourceHandle);
    auto it = exec->index.find(node);
    if (it == exec->index.end() || !p)
        return record(cudaErrorInvalidValue);
    op *o = exec->ops[it->second].get();
    kernel_call *k = o->call();
    std::string why;
    if (!k)
        why = "the node is not a kernel launched with NN_LAUNCH (a library call, a copy or a memset)";
    else if (p->func != k->func)
        why = format("changing the node's kernel (%s) is not emulated", k->name);
    else if (!p->kernelParams || p->extra)
        why = "the arguments must be given in kernelParams (extra is not emulated)";
    else if (p->sharedMemBytes)
        why = "dynamic shared memory is not emulated";
    else
        check_launch(p->gridDim, p->blockDim, &why);
    if (!why.empty()) {
        diag("cudaGraphExecKernelNodeSetParams: %s", why.c_str());
        return record(cudaErrorInvalidValue);
    }
    k->set_params(p->kernelParams);     /* copied now, as the runtime does */
    o->configure(p->gridDim, p->blockDim);
    return record(sticky());
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    guard g(lock());
    if (!all().execs.erase(exec))
        return record(cudaErrorInvalidResourceHandle);
    delete exec;                    /* launches queued hold their own copies */
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t gr)
{
    guard g(lock());
    if (!all().live.erase(gr))
        return record(cudaErrorInvalidResourceHandle);
    for (auto &n : gr->nodes)
        all().nodes.erase(n.get());
    delete gr;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t gr, unsigned long long flags)
{
    return cudaGraphInstantiate(exec, gr, flags);
}

/* backends/cuda/emu/emu_stream.cc - streams, events and copies of the
 * emulated GPU, with deferred execution (emu_internal.h): an operation runs
 * when the host waits for it, in stream order.
 *
 * What makes a host wait: cudaStreamSynchronize, cudaEventSynchronize,
 * cudaDeviceSynchronize, cudaFree and cudaFreeHost (implicit), and a queue
 * grown past what a device accepts. A query of unfinished work answers
 * cudaErrorNotReady, and the device then catches up (the next query finds
 * it done), so that both answers are exercised and a polling loop ends.
 *
 * Copies follow the runtime's rules for pageable and page-locked memory:
 * from pageable memory the bytes are taken when cudaMemcpyAsync returns (the
 * runtime stages them); from page-locked memory, and into any host memory,
 * when the copy runs, so that a host that reuses a buffer before waiting
 * for the copy sends or reads the wrong bytes, as it would on a GPU. */
#include "emu_internal.h"

#include <string.h>

namespace nn_emu {

namespace {

const size_t QUEUE_MAX = 1024;                 /* operations a stream holds */
const size_t STAGED_MAX = (size_t)256 << 20;   /* bytes of pageable uploads held */

struct kernel_node : op {
    std::unique_ptr<kernel_call> k;
    dim3 grid, block;
    kernel_node(kernel_call *c, dim3 g, dim3 b) : k(c), grid(g), block(b) {}
    cudaError_t exec(std::string *why) override { return run_kernel(*k, grid, block, why); }
    op *clone() const override { return new kernel_node(k->clone(), grid, block); }
    cudaGraphNodeType node_type() const override { return cudaGraphNodeTypeKernel; }
    kernel_call *call() override { return k.get(); }
    void configure(dim3 g, dim3 b) override
    {
        grid = g;
        block = b;
    }
};

struct library_node : op {
    std::function<cudaError_t(std::string *)> body;
    explicit library_node(std::function<cudaError_t(std::string *)> f) : body(std::move(f)) {}
    cudaError_t exec(std::string *why) override { return body(why); }
    op *clone() const override { return new library_node(body); }
    cudaGraphNodeType node_type() const override { return cudaGraphNodeTypeKernel; }
};

/* Buffers for the bytes of pageable uploads, kept for reuse: a batch copied
 * every step would otherwise map and clear fresh pages each time. */
std::vector<std::vector<char>> &spare_staging()
{
    static std::vector<std::vector<char>> *s = new std::vector<std::vector<char>>;
    return *s;
}

/* A copy; staged holds the bytes of a pageable source, taken at the call. */
struct copy_node : op {
    void *dst;
    const void *src;
    size_t bytes;
    int dst_kinds, src_kinds;    /* 0: pageable host memory, not checked */
    bool is_staged = false;
    std::vector<char> staged;
    copy_node() = default;
    copy_node(const copy_node &) = default;
    ~copy_node() override
    {
        if (is_staged && spare_staging().size() < 4)
            spare_staging().push_back(std::move(staged));
    }
    void stage(const void *from)
    {
        const char *s = (const char *)from;
        for (auto it = spare_staging().begin(); it != spare_staging().end(); ++it)
            if (it->capacity() >= bytes) {
                staged = std::move(*it);
                spare_staging().erase(it);
                break;
            }
        staged.assign(s, s + bytes);
        is_staged = true;
    }
    cudaError_t exec(std::string *why) override
    {
        if ((dst_kinds && check_range(dst, bytes, dst_kinds, "cudaMemcpyAsync's destination", why)) ||
            (src_kinds && !is_staged && check_range(src, bytes, src_kinds, "cudaMemcpyAsync's source", why)))
            return cudaErrorIllegalAddress;
        memcpy(dst, is_staged ? staged.data() : src, bytes);
        return cudaSuccess;
    }
    op *clone() const override { return new copy_node(*this); }
    cudaGraphNodeType node_type() const override { return cudaGraphNodeTypeMemcpy; }
    size_t staged_bytes() const override { return is_staged ? bytes : 0; }
};

struct set_node : op {
    void *p;
    int value;
    size_t bytes;
    cudaError_t exec(std::string *why) override
    {
        if (check_range(p, bytes, MEM_ANY, "cudaMemsetAsync's destination", why))
            return cudaErrorIllegalAddress;
        memset(p, value, bytes);
        return cudaSuccess;
    }
    op *clone() const override { return new set_node(*this); }
    cudaGraphNodeType node_type() const override { return cudaGraphNodeTypeMemset; }
};

struct record_node : op {
    std::shared_ptr<nn_emu_event> ev;   /* the event may be destroyed before this runs */
    uint64_t number;
    cudaError_t exec(std::string *) override
    {
        ev->done = number;
        ev->ms = now_ms();
        return cudaSuccess;
    }
    op *clone() const override { return new record_node(*this); }
    cudaGraphNodeType node_type() const override { return cudaGraphNodeTypeEventRecord; }
};

struct streams {
    nn_emu_stream legacy;
    std::set<nn_emu_stream *> live;
    std::map<nn_emu_event *, std::shared_ptr<nn_emu_event>> events;
    streams() { legacy.legacy = true; }
};

streams &all()
{
    static streams *s = new streams;   /* never destroyed, as lock() */
    return *s;
}

bool blocking(const nn_emu_stream *st)
{
    return !st->legacy && !(st->flags & cudaStreamNonBlocking);
}

/* The legacy stream waits for the blocking streams and they for it: their
 * earlier work runs first. */
cudaError_t implicit_order(nn_emu_stream *st)
{
    if (st->legacy) {
        for (nn_emu_stream *s : all().live)
            if (blocking(s) && run_stream(s, UINT64_MAX) != cudaSuccess)
                return sticky();
    } else if (blocking(st)) {
        return run_stream(&all().legacy, UINT64_MAX);
    }
    return cudaSuccess;
}

nn_emu_event *event_of(cudaEvent_t e)
{
    return all().events.count(e) ? e : nullptr;
}

bool complete(const nn_emu_event *ev)
{
    return ev->done == ev->records;
}

} /* namespace */

std::unique_ptr<op> kernel_op(kernel_call *k, dim3 grid, dim3 block)
{
    return std::unique_ptr<op>(new kernel_node(k, grid, block));
}

std::unique_ptr<op> library_op(std::function<cudaError_t(std::string *)> body)
{
    return std::unique_ptr<op>(new library_node(std::move(body)));
}

nn_emu_stream *stream_of(cudaStream_t s, cudaError_t *e)
{
    if (!s || s == cudaStreamLegacy)
        return &all().legacy;
    if (all().live.count(s))
        return s;
    *e = cudaErrorInvalidResourceHandle;
    return nullptr;
}

cudaError_t enqueue(nn_emu_stream *st, std::unique_ptr<op> o)
{
    if (sticky())
        return sticky();
    if (st->legacy && strict_capture_active()) {
        unsafe_during_capture("work on the legacy stream");
        return cudaErrorStreamCaptureImplicit;
    }
    if (st->capturing) {
        if (st->invalidated)
            return cudaErrorStreamCaptureInvalidated;
        st->captured.push_back(std::move(o));
        return cudaSuccess;
    }
    if (implicit_order(st) != cudaSuccess)
        return sticky();
    st->staged += o->staged_bytes();
    st->queue.emplace_back(st->next_seq++, std::move(o));
    /* A device takes only so much work ahead: the host then waits while the
     * oldest half runs. */
    if (st->queue.size() > QUEUE_MAX || st->staged > STAGED_MAX)
        return run_stream(st, st->queue[st->queue.size() / 2].first);
    return cudaSuccess;
}

cudaError_t run_stream(nn_emu_stream *st, uint64_t seq)
{
    while (!st->queue.empty() && st->queue.front().first <= seq && !sticky()) {
        std::unique_ptr<op> o = std::move(st->queue.front().second);
        st->queue.pop_front();
        st->staged -= o->staged_bytes();
        std::string why;
        cudaError_t e = o->exec(&why);
        if (e != cudaSuccess)
            fault(e, why);
    }
    return sticky();
}

cudaError_t run_all(void)
{
    run_stream(&all().legacy, UINT64_MAX);
    for (nn_emu_stream *s : all().live)
        run_stream(s, UINT64_MAX);
    return sticky();
}

void drop_all_work(void)
{
    all().legacy.queue.clear();
    all().legacy.staged = 0;
    for (nn_emu_stream *s : all().live) {
        s->queue.clear();
        s->staged = 0;
    }
}

std::set<nn_emu_stream *> &live_streams(void)
{
    return all().live;
}

} /* namespace nn_emu */

using namespace nn_emu;

/* ---- streams --------------------------------------------------------------------------------- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    guard g(lock());
    if (!s || (flags & ~cudaStreamNonBlocking))
        return record(cudaErrorInvalidValue);
    nn_emu_stream *st = new nn_emu_stream;
    st->flags = flags;
    all().live.insert(st);
    *s = st;
    return record(sticky());
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    nn_emu_stream *st = stream_of(s, &e);
    if (!st || st->legacy)
        return record(cudaErrorInvalidResourceHandle);
    if (st->capturing)
        end_capture_quietly(st);
    run_stream(st, UINT64_MAX);       /* its work still completes */
    all().live.erase(st);
    delete st;
    return record(sticky());
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    nn_emu_stream *st = stream_of(s, &e);
    if (!st)
        return record(e);
    if (st->capturing) {
        invalidate_capture(st, "cudaStreamSynchronize of the capturing stream");
        return record(cudaErrorStreamCaptureUnsupported);
    }
    if (st->legacy && (e = unsafe_during_capture("cudaStreamSynchronize of the legacy stream")))
        return record(e);
    return record(run_stream(st, UINT64_MAX));
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    nn_emu_stream *st = stream_of(s, &e);
    if (!st)
        return record(e);
    if (st->capturing) {
        invalidate_capture(st, "cudaStreamQuery of the capturing stream");
        return record(cudaErrorStreamCaptureUnsupported);
    }
    if (st->legacy && (e = unsafe_during_capture("cudaStreamQuery of the legacy stream")))
        return record(e);
    if (st->queue.empty())
        return record(sticky());
    run_stream(st, UINT64_MAX);
    return sticky() ? record(sticky()) : cudaErrorNotReady;
}

cudaError_t cudaDeviceSynchronize(void)
{
    guard g(lock());
    if (any_stream_capturing()) {
        /* it would wait for the capturing stream, in every mode */
        for (nn_emu_stream *s : all().live)
            if (s->capturing)
                invalidate_capture(s, "cudaDeviceSynchronize");
        return record(cudaErrorStreamCaptureUnsupported);
    }
    return record(run_all());
}

/* ---- events ---------------------------------------------------------------------------------- */

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    guard g(lock());
    if (!e || (flags & ~(cudaEventBlockingSync | cudaEventDisableTiming)))
        return record(cudaErrorInvalidValue);
    auto ev = std::make_shared<nn_emu_event>();
    ev->flags = flags;
    all().events[ev.get()] = ev;
    *e = ev.get();
    return record(sticky());
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    return cudaEventCreateWithFlags(e, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    guard g(lock());
    if (!event_of(e))
        return record(cudaErrorInvalidResourceHandle);
    all().events.erase(e);
    return record(sticky());
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    guard g(lock());
    cudaError_t err = cudaSuccess;
    nn_emu_stream *st = stream_of(s, &err);
    nn_emu_event *ev = event_of(e);
    if (!st || !ev)
        return record(cudaErrorInvalidResourceHandle);
    if (st->capturing) {
        /* joins the capture (for waits inside it); it is no timing point */
        if (st->invalidated)
            return record(cudaErrorStreamCaptureInvalidated);
        ev->captured = true;
        ev->stream = st;
        return cudaSuccess;
    }
    record_node *r = new record_node;
    r->ev = all().events[e];
    r->number = ev->records + 1;
    uint64_t seq = st->next_seq;
    err = enqueue(st, std::unique_ptr<op>(r));
    if (err != cudaSuccess)
        return record(err);
    ev->records++;
    ev->captured = false;
    ev->stream = st;
    ev->seq = seq;
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
    guard g(lock());
    nn_emu_event *ev = event_of(e);
    if (!ev)
        return record(cudaErrorInvalidResourceHandle);
    if (ev->captured)
        return record(cudaErrorCapturedEvent);
    if (cudaError_t err = unsafe_during_capture("cudaEventQuery"))
        return record(err);
    if (complete(ev))
        return record(sticky());
    run_stream(ev->stream, ev->seq);
    return sticky() ? record(sticky()) : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    guard g(lock());
    nn_emu_event *ev = event_of(e);
    if (!ev)
        return record(cudaErrorInvalidResourceHandle);
    if (ev->captured)
        return record(cudaErrorCapturedEvent);
    if (cudaError_t err = unsafe_during_capture("cudaEventSynchronize"))
        return record(err);
    if (!complete(ev))
        run_stream(ev->stream, ev->seq);
    return record(sticky());
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    guard g(lock());
    nn_emu_event *a = event_of(start), *b = event_of(end);
    if (!ms)
        return record(cudaErrorInvalidValue);
    if (!a || !b || !a->records || !b->records ||
        ((a->flags | b->flags) & cudaEventDisableTiming))
        return record(cudaErrorInvalidResourceHandle);
    if (a->captured || b->captured)
        return record(cudaErrorCapturedEvent);
    if (!complete(a) || !complete(b))
        return cudaErrorNotReady;
    *ms = (float)(b->ms - a->ms);
    return record(sticky());
}

/* ---- copies ---------------------------------------------------------------------------------- */

/* The kinds each side of a copy must be; 0: pageable host memory. -1 when
 * kind and pointers disagree (why set). */
static int copy_sides(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, int *dst_kinds,
                      int *src_kinds, std::string *why)
{
    bool dst_dev = find_region(dst, bytes, MEM_DEVICE) != nullptr;
    bool src_dev = find_region(src, bytes, MEM_DEVICE) != nullptr;
    if (kind == cudaMemcpyDefault)
        kind = dst_dev ? (src_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                       : (src_dev ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    switch (kind) {
    case cudaMemcpyHostToDevice:
        *dst_kinds = MEM_DEVICE;
        *src_kinds = find_region(src, bytes, MEM_PINNED) ? MEM_PINNED : 0;
        if (src_dev || check_range(dst, bytes, MEM_DEVICE, "the destination", why))
            return src_dev ? (*why = "the source of a host-to-device copy is device memory", -1) : -1;
        return 0;
    case cudaMemcpyDeviceToHost:
        *src_kinds = MEM_DEVICE;
        *dst_kinds = find_region(dst, bytes, MEM_PINNED) ? MEM_PINNED : 0;
        if (dst_dev || check_range(src, bytes, MEM_DEVICE, "the source", why))
            return dst_dev ? (*why = "the destination of a device-to-host copy is device memory", -1) : -1;
        return 0;
    case cudaMemcpyDeviceToDevice:
        *dst_kinds = *src_kinds = MEM_DEVICE;
        return check_range(dst, bytes, MEM_DEVICE, "the destination", why) ||
                       check_range(src, bytes, MEM_DEVICE, "the source", why) ? -1 : 0;
    default:
        *why = "host-to-host copies are not emulated (the module makes none)";
        return -1;
    }
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    nn_emu_stream *st = stream_of(stream, &e);
    if (!st)
        return record(e);
    if (bytes == 0)
        return record(sticky());
    copy_node *c = new copy_node;
    std::unique_ptr<op> o(c);
    std::string why;
    c->dst = dst;
    c->src = src;
    c->bytes = bytes;
    if (copy_sides(dst, src, bytes, kind, &c->dst_kinds, &c->src_kinds, &why) != 0) {
        diag("cudaMemcpyAsync of %zu bytes: %s", bytes, why.c_str());
        return record(cudaErrorInvalidValue);
    }
    bool pageable = (kind != cudaMemcpyDeviceToDevice) && (!c->dst_kinds || !c->src_kinds);
    if (pageable && st->capturing) {
        /* a graph would read or write that host memory at each replay */
        invalidate_capture(st, "a copy to or from pageable host memory");
        return record(cudaErrorStreamCaptureUnsupported);
    }
    if (!c->src_kinds)
        c->stage(src);
    return record(enqueue(st, std::move(o)));
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t stream)
{
    guard g(lock());
    cudaError_t e = cudaSuccess;
    nn_emu_stream *st = stream_of(stream, &e);
    if (!st)
        return record(e);
    if (bytes == 0)
        return record(sticky());
    std::string why;
    if (check_range(p, bytes, MEM_ANY, "the destination", &why) != 0) {
        diag("cudaMemsetAsync of %zu bytes: %s", bytes, why.c_str());
        return record(cudaErrorInvalidValue);
    }
    set_node *n = new set_node;
    n->p = p;
    n->value = value;
    n->bytes = bytes;
    return record(enqueue(st, std::unique_ptr<op>(n)));
}

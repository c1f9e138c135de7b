/* backends/cuda/emu/emu_internal.h - what the emulated GPU's runtime files
 * share: the lock, errors and faults, the allocation registry, the work
 * queued on streams and the objects behind the handles.
 *
 * Execution is deferred: work queued on a stream runs only when the host
 * waits for it (a synchronize, a query, a blocking copy, a full queue), in
 * the host thread that waits, so that a missing wait shows as wrong data
 * instead of being hidden by work that happened to be done. Every entry point
 * takes the one lock: one host thread at a time queues or runs emulated work. */
#ifndef NNLAB_EMU_INTERNAL_H
#define NNLAB_EMU_INTERNAL_H

#include "cuda_emu.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace nn_emu {

typedef std::lock_guard<std::recursive_mutex> guard;
std::recursive_mutex &lock();

/* ---- diagnostics, the seed (emu_stream.cc) -------------------------------------------- */

/* One line on stderr, "# nnlab-cuda-emu: ..." (a TAP comment): faults and
 * invalidated captures, the things a developer needs to see in a test log. */
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* NNLAB_EMU_SEED, or one from the clock; every random choice of the
 * emulator (orders of blocks, threads and barrier releases, the summing
 * order of non-deterministic cuDNN algorithms) comes from it. */
uint64_t seed();
uint64_t random_u64();
/* A random permutation of 0..n-1 as i -> (a*i + b) mod n: no storage. */
struct permutation {
    uint64_t a, b, n;
    explicit permutation(uint64_t count);
    uint64_t at(uint64_t i) const { return (a * i + b) % n; }
};

double now_ms(void);

/* ---- errors ------------------------------------------------------------------------------ */

/* Keeps e as the thread's last error (not cudaErrorNotReady, which is no
 * error); returns e. */
cudaError_t record(cudaError_t e);
/* The error a fault left (every later call returns it, as after a real
 * device fault), or cudaSuccess. */
cudaError_t sticky(void);
/* The device is broken: drops all queued work, prints why, and makes e
 * sticky. */
void fault(cudaError_t e, const std::string &why);

/* ---- memory (emu_memory.cc) ----------------------------------------------------------------- */

enum { MEM_DEVICE = 1, MEM_PINNED = 2, MEM_ANY = 3 };

struct region {
    char *base;
    size_t bytes;
    int kind;
    unsigned flags;          /* cudaHostAlloc's */
};

/* The allocation of one of `kinds` holding all of [p, p + bytes), or NULL. */
const region *find_region(const void *p, size_t bytes, int kinds);
/* 0 when [p, p + bytes) lies in one allocation of `kinds`; else -1 and why. */
int check_range(const void *p, size_t bytes, int kinds, const char *what, std::string *why);
/* 0 when the guard bytes around the allocation holding p are intact. */
int check_guards(const void *p, std::string *why);

/* ---- work (emu_stream.cc) ------------------------------------------------------------------- */

/* One operation on a stream, or a node of a graph. */
struct op {
    virtual ~op() {}
    /* Runs it; a fault returns its error and says why. */
    virtual cudaError_t exec(std::string *why) = 0;
    virtual op *clone() const = 0;
    virtual cudaGraphNodeType node_type() const = 0;
    virtual size_t staged_bytes() const { return 0; }
    /* Kernel nodes of our own kernels (cudaGraphExecKernelNodeSetParams). */
    virtual kernel_call *call() { return nullptr; }
    virtual void configure(dim3, dim3) {}
};

std::unique_ptr<op> kernel_op(kernel_call *k, dim3 grid, dim3 block);
/* A cuBLAS or cuDNN call: a kernel node in a graph. */
std::unique_ptr<op> library_op(std::function<cudaError_t(std::string *)> body);

} /* namespace nn_emu */

struct nn_emu_stream {
    unsigned flags = 0;
    bool legacy = false;
    std::deque<std::pair<uint64_t, std::unique_ptr<nn_emu::op>>> queue;
    uint64_t next_seq = 1;       /* the number the next queued op gets */
    size_t staged = 0;           /* bytes of pageable uploads held by queued ops */
    /* stream capture (emu_graph.cc) */
    bool capturing = false, invalidated = false;
    cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
    std::thread::id thread;
    std::vector<std::unique_ptr<nn_emu::op>> captured;
};

struct nn_emu_event {
    unsigned flags = 0;
    uint64_t records = 0;        /* cudaEventRecord calls so far */
    uint64_t done = 0;           /* the last record that has run */
    nn_emu_stream *stream = nullptr;
    uint64_t seq = 0;            /* the op of the last record on stream */
    bool captured = false;       /* last recorded while its stream captured */
    double ms = 0.0;             /* when the last record ran */
};

namespace nn_emu {

/* The stream behind a handle (0 and cudaStreamLegacy: the legacy stream), or
 * NULL with *e set. */
nn_emu_stream *stream_of(cudaStream_t s, cudaError_t *e);
/* Queues o on st, or records it while st captures. */
cudaError_t enqueue(nn_emu_stream *st, std::unique_ptr<op> o);
/* Runs st's queue up to and including op number seq (all of it: UINT64_MAX). */
cudaError_t run_stream(nn_emu_stream *st, uint64_t seq);
/* Runs every stream's queue (an implicit device synchronisation). */
cudaError_t run_all(void);
/* Drops every queued operation (after a fault nothing more runs). */
void drop_all_work(void);
/* The streams created (not the legacy one). */
std::set<nn_emu_stream *> &live_streams(void);

/* ---- capture (emu_graph.cc) -------------------------------------------------------------------- */

/* A call that stream capture forbids unless it was begun in relaxed mode
 * (from this thread in thread-local mode, any thread in global mode):
 * invalidates those captures and returns cudaErrorStreamCaptureUnsupported. */
cudaError_t unsafe_during_capture(const char *what);
/* A library routine (cuBLAS or cuDNN, per function and algorithm: `key`)
 * queued on st through a handle that has used the routines in `used`. With
 * NNLAB_EMU_LAZY_INIT=1 its first use inside a strict capture invalidates
 * it, as a library that initialises on first use would (the GPU's
 * first-run risk: record only after a warm-up step); true then. */
bool first_use_spoils_capture(nn_emu_stream *st, std::set<std::string> *used, const std::string &key);
/* Marks st's capture invalid (each later capture call and EndCapture fail). */
void invalidate_capture(nn_emu_stream *st, const char *why);
/* Some stream captures, not in relaxed mode, affecting this thread. */
bool strict_capture_active(void);
bool any_stream_capturing(void);
/* Ends st's capture and drops what it recorded (the stream is destroyed). */
void end_capture_quietly(nn_emu_stream *st);

/* ---- kernels (emu_threads.cc) ------------------------------------------------------------------- */

/* 0 when grid and block are a valid launch; else why. */
int check_launch(dim3 grid, dim3 block, std::string *why);
/* Runs every block (in a random order) and thread of a launch. */
cudaError_t run_kernel(kernel_call &k, dim3 grid, dim3 block, std::string *why);

} /* namespace nn_emu */

#endif

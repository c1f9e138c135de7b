/* backends/cuda/emu/emu_threads.cc - how the emulated GPU runs a kernel:
 * blocks one after another in a random order (seeded: emu_runtime.cc), the
 * threads of a block as fibers (user-level contexts) with a real barrier.
 *
 * A fiber runs threads one after another as plain calls until one of them
 * reaches __syncthreads; that thread keeps the fiber (its stack) and a new
 * fiber goes on with the next thread, so a kernel without barriers costs one
 * switch per block. When every thread of the block has started, the threads
 * waiting at the barrier are resumed in a random order, each until its next
 * barrier or its end; a thread that returns while others wait is a fault
 * (the CUDA programming guide: __syncthreads must be reached by every
 * thread of the block).
 *
 * Threads start in a random order too, and shared memory (`__shared__`, one
 * section of statics: cuda_emu.h) is overwritten with garbage before each
 * block, so that a missing barrier or an uninitialised shared variable gives
 * wrong numbers instead of happening to work.
 *
 * On x86-64 a fiber switch is a few instructions (below); elsewhere (or
 * with -DNN_EMU_UCONTEXT) it is swapcontext, correct but slower (a system
 * call per switch). */
#include "emu_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_ASAN 1
#endif
#endif
#ifdef EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__x86_64__) && defined(__linux__) && !defined(NN_EMU_UCONTEXT)
#define EMU_ASM_SWITCH 1
#else
#include <ucontext.h>
#endif

uint3 nn_emu_thread_idx, nn_emu_block_idx;
dim3 nn_emu_block_dim, nn_emu_grid_dim;

/* The linker's bounds of the section that `__shared__` puts variables in
 * (absent when no kernel has any). */
extern char __start_nn_emu_shared[] __attribute__((weak, visibility("hidden")));
extern char __stop_nn_emu_shared[] __attribute__((weak, visibility("hidden")));

#ifdef EMU_ASM_SWITCH
/* nn_emu_swap(save, next): saves the callee-saved registers, the SSE and x87
 * control words and the stack pointer into *save, and resumes next.
 * nn_emu_fiber_start: a new fiber's first "return" address: calls r13(r12). */
extern "C" void nn_emu_swap(void **save, void *next);
extern "C" void nn_emu_fiber_start(void);
__asm__(".text\n"
        ".p2align 4\n"
        ".globl nn_emu_swap\n"
        ".hidden nn_emu_swap\n"
        ".type nn_emu_swap,@function\n"
        "nn_emu_swap:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size nn_emu_swap,.-nn_emu_swap\n"
        ".p2align 4\n"
        ".globl nn_emu_fiber_start\n"
        ".hidden nn_emu_fiber_start\n"
        ".type nn_emu_fiber_start,@function\n"
        "nn_emu_fiber_start:\n"
        "  movq %r12, %rdi\n  callq *%r13\n  ud2\n"
        ".size nn_emu_fiber_start,.-nn_emu_fiber_start\n");
#endif

namespace nn_emu {

namespace {

const size_t STACK_BYTES = 256 * 1024;   /* kernels are shallow; AddressSanitizer's frames are not */

struct fiber {
    char *stack = nullptr;       /* the page below it is a guard page */
    size_t size = 0;
    void *asan_fake = nullptr;
#ifdef EMU_ASM_SWITCH
    void *sp = nullptr;
#else
    ucontext_t uc;
#endif
};

struct waiter {
    fiber *f;
    unsigned tid;
};

/* The block being run. */
struct block_run {
    kernel_call *k = nullptr;
    unsigned n = 0;              /* threads */
    unsigned start = 0, step = 1; /* threads start in the order start + i step (mod n) */
    unsigned next = 0;           /* threads started */
    std::vector<waiter> buf[2];  /* two lists of n: one filled while the other is resumed */
    waiter *waiting = nullptr;   /* threads at the barrier: waiting[0 .. nwait) */
    size_t nwait = 0;
    int side = 0;
    fiber *running = nullptr;
    bool parked = false;         /* running's thread stopped at the barrier */
};

block_run *cur;
fiber host;                      /* the host thread's own stack */
#ifdef EMU_ASM_SWITCH
uint64_t fp_control;             /* the host's SSE and x87 control words, for new fibers */
#endif
std::vector<fiber *> &spare_list()
{
    static std::vector<fiber *> *s = new std::vector<fiber *>;   /* never destroyed: the */
    return *s;                                   /* fibers stay reachable to the end */
}

void worker_main(void *);
#ifndef EMU_ASM_SWITCH
void worker_entry(void)
{
    worker_main(nullptr);
}
#endif

fiber *fiber_new(void)
{
    if (!spare_list().empty()) {
        fiber *f = spare_list().back();
        spare_list().pop_back();
        return f;
    }
    long page = sysconf(_SC_PAGESIZE);
    fiber *f = new fiber;
    void *m = mmap(nullptr, STACK_BYTES + (size_t)page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        diag("cannot map a stack for an emulated thread: out of memory");
        abort();
    }
    mprotect(m, (size_t)page, PROT_NONE);    /* an overflow faults instead of corrupting */
    f->stack = (char *)m + page;             /* the usable stack, above the guard page */
    f->size = STACK_BYTES;
    return f;
}

/* Ready to start worker_main from the top of its stack. */
void fiber_make(fiber *f)
{
#ifdef EMU_ASM_SWITCH
    uintptr_t top = ((uintptr_t)f->stack + f->size) & ~(uintptr_t)15;
    void **sp = (void **)(top - 80);         /* 16-aligned: after the pops and ret, too */
    memcpy(&sp[0], &fp_control, sizeof fp_control);
    sp[1] = nullptr;                         /* r15 */
    sp[2] = nullptr;                         /* r14 */
    sp[3] = (void *)worker_main;             /* r13: what nn_emu_fiber_start calls */
    sp[4] = nullptr;                         /* r12: its argument */
    sp[5] = nullptr;                         /* rbx */
    sp[6] = nullptr;                         /* rbp */
    sp[7] = (void *)nn_emu_fiber_start;
    f->sp = sp;
#else
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = f->stack;
    f->uc.uc_stack.ss_size = f->size;
    f->uc.uc_link = nullptr;
    makecontext(&f->uc, worker_entry, 0);
#endif
}

#ifdef EMU_ASAN
/* Back in fiber f (or starting it: f NULL): tells AddressSanitizer, and
 * learns the host stack from a switch that came from it (each host thread
 * that waits for the device has its own). */
void arrived(fiber *f)
{
    const void *bottom = nullptr;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(f ? f->asan_fake : nullptr, &bottom, &size);
    if (f != &host) {
        host.stack = (char *)bottom;
        host.size = size;
    }
}
#endif

/* From one fiber to another; `dies`: from is never resumed (it is made
 * anew before it runs again). */
void fiber_switch(fiber *from, fiber *to, bool dies)
{
#ifdef EMU_ASAN
    __sanitizer_start_switch_fiber(dies ? nullptr : &from->asan_fake, to->stack, to->size);
#else
    (void)dies;
#endif
#ifdef EMU_ASM_SWITCH
    nn_emu_swap(&from->sp, to->sp);
#else
    swapcontext(&from->uc, &to->uc);
#endif
#ifdef EMU_ASAN
    arrived(from);
#endif
}

/* A fiber whose frames never returned (a block that failed): its stack
 * must not keep AddressSanitizer's marks of those frames. */
void fiber_abandon(fiber *f)
{
#ifdef EMU_ASAN
    ASAN_UNPOISON_MEMORY_REGION(f->stack, f->size);
#endif
    spare_list().push_back(f);
}

NN_EMU_UNCHECKED void set_thread(unsigned tid)
{
    unsigned bx = nn_emu_block_dim.x, by = nn_emu_block_dim.y;
    if (bx == cur->n) {                      /* a 1-d block: no divisions */
        nn_emu_thread_idx.x = tid;
        nn_emu_thread_idx.y = 0;
        nn_emu_thread_idx.z = 0;
        return;
    }
    nn_emu_thread_idx.x = tid % bx;
    nn_emu_thread_idx.y = (tid / bx) % by;
    nn_emu_thread_idx.z = tid / (bx * by);
}

/* Starts threads until none is left; a thread that stops at a barrier
 * keeps this fiber, and the scheduler starts another. */
NN_EMU_UNCHECKED void worker_main(void *)
{
#ifdef EMU_ASAN
    arrived(nullptr);
#endif
    while (cur->next < cur->n) {
        unsigned tid = cur->start;          /* order.at(next), one step at a time */
        cur->next++;
        cur->start += cur->step;
        if (cur->start >= cur->n)
            cur->start -= cur->n;
        set_thread(tid);
        cur->k->run();
    }
    cur->parked = false;
    fiber_switch(cur->running, &host, true);
    abort();                                 /* never resumed */
}

/* Runs f until its thread stops at a barrier or every thread it may start
 * has ended; then f is spare again unless a thread waits on it. */
NN_EMU_UNCHECKED void resume(block_run *b, fiber *f)
{
    b->running = f;
    b->parked = false;
    fiber_switch(&host, f, false);
    if (!b->parked)
        spare_list().push_back(f);
}

/* 0, or -1 with why: the barrier's rule was broken. (Which __syncthreads a
 * thread waits at is not compared: the host compiler may duplicate a call,
 * and on a GPU every __syncthreads of a block is the same barrier.) */
int release_barrier(block_run *b, std::string *why)
{
    size_t waiting = b->nwait;
    if (waiting != b->n) {
        *why = format("%zu of its %u threads wait at __syncthreads while %zu have returned from the "
                      "kernel (every thread of a block must reach each barrier)",
                      waiting, b->n, b->n - waiting);
        for (size_t i = 0; i < waiting; i++)
            fiber_abandon(b->waiting[i].f);
        b->nwait = 0;
        return -1;
    }
    const waiter *now = b->waiting;      /* the next barrier fills the other list */
    b->side ^= 1;
    b->waiting = b->buf[b->side].data();
    b->nwait = 0;
    permutation order(waiting);
    for (size_t i = 0; i < waiting; i++) {
        const waiter &w = now[order.at(i)];
        set_thread(w.tid);
        resume(b, w.f);
    }
    return 0;
}

int run_block(block_run *b, std::string *why)
{
    permutation order(b->n);
    b->next = 0;
    b->start = (unsigned)order.b;
    b->step = (unsigned)order.a;
    while (b->next < b->n) {
        fiber *f = fiber_new();
        fiber_make(f);
        resume(b, f);
    }
    while (b->nwait)
        if (release_barrier(b, why) != 0)
            return -1;
    return 0;
}

/* Shared memory starts undefined: garbage (0xff bytes: NaN as floats, -1 as
 * integers) before each block. Volatile stores, not memset, which
 * AddressSanitizer would check against the padding it may put between these
 * statics. */
NN_EMU_UNCHECKED void poison_shared(void)
{
    char *p = __start_nn_emu_shared, *end = __stop_nn_emu_shared;
    for (; p < end && ((uintptr_t)p & 7); p++)
        *(volatile char *)p = (char)0xff;
    for (; p + 8 <= end; p += 8)
        *(volatile uint64_t *)p = ~(uint64_t)0;
    for (; p < end; p++)
        *(volatile char *)p = (char)0xff;
}

/* A kernel's pointer arguments must be memory the device can reach. */
int check_pointers(const kernel_call &k, const void *const *ptrs, int n, std::string *why)
{
    for (int i = 0; i < n; i++)
        if (ptrs[i] && !find_region(ptrs[i], 0, MEM_ANY)) {
            *why = format("kernel %s: pointer argument %d (%p) is not memory of the emulated device "
                          "(host memory, or freed)", k.name, i + 1, ptrs[i]);
            return -1;
        }
    return 0;
}

} /* namespace */

int check_launch(dim3 grid, dim3 block, std::string *why)
{
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || !threads)
        *why = format("grid (%u, %u, %u) or block (%u, %u, %u) has a zero dimension", grid.x, grid.y,
                      grid.z, block.x, block.y, block.z);
    else if (threads > 1024 || block.z > 64)
        *why = format("a block of (%u, %u, %u) threads: at most 1024, and 64 along z", block.x,
                      block.y, block.z);
    else if (grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
        *why = format("a grid of (%u, %u, %u) blocks is beyond the limits", grid.x, grid.y, grid.z);
    else
        return 0;
    return -1;
}

cudaError_t run_kernel(kernel_call &k, dim3 grid, dim3 block, std::string *why)
{
    const void *ptrs[32];
    int n = k.pointers(ptrs, 32);
    n = n > 32 ? 32 : n;
    if (check_pointers(k, ptrs, n, why) != 0)
        return cudaErrorIllegalAddress;
    nn_emu_grid_dim = grid;
    nn_emu_block_dim = block;
#ifdef EMU_ASM_SWITCH
    uint32_t csr;
    uint16_t cw;
    __asm__ __volatile__("stmxcsr %0" : "=m"(csr));
    __asm__ __volatile__("fnstcw %0" : "=m"(cw));
    fp_control = csr | ((uint64_t)cw << 32);
#endif
    block_run b;
    b.k = &k;
    b.n = block.x * block.y * block.z;
    b.buf[0].resize(b.n);
    b.buf[1].resize(b.n);
    b.waiting = b.buf[0].data();
    cur = &b;
    uint64_t blocks = (uint64_t)grid.x * grid.y * grid.z;
    if (blocks >= ((uint64_t)1 << 32)) {     /* valid on a GPU, beyond a CPU's patience */
        *why = format("kernel %s: a grid of %llu blocks is not emulated", k.name,
                      (unsigned long long)blocks);
        return cudaErrorLaunchFailure;
    }
    permutation order(blocks);
    for (uint64_t i = 0; i < blocks; i++) {
        uint64_t id = order.at(i);
        nn_emu_block_idx.x = (unsigned)(id % grid.x);
        nn_emu_block_idx.y = (unsigned)(id / grid.x % grid.y);
        nn_emu_block_idx.z = (unsigned)(id / ((uint64_t)grid.x * grid.y));
        poison_shared();
        std::string broken;
        if (run_block(&b, &broken) != 0) {
            *why = format("kernel %s, block (%u, %u, %u): %s", k.name, nn_emu_block_idx.x,
                          nn_emu_block_idx.y, nn_emu_block_idx.z, broken.c_str());
            cur = nullptr;
            return cudaErrorLaunchFailure;
        }
    }
    cur = nullptr;
    for (int i = 0; i < n; i++) {
        std::string guard_why;
        if (ptrs[i] && check_guards(ptrs[i], &guard_why) != 0) {
            *why = format("kernel %s wrote outside an allocation (pointer argument %d): %s", k.name,
                          i + 1, guard_why.c_str());
            return cudaErrorIllegalAddress;
        }
    }
    return cudaSuccess;
}

void launch(kernel_call *call, dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream)
{
    guard g(lock());
    std::unique_ptr<kernel_call> k(call);
    cudaError_t e = cudaSuccess;
    std::string why;
    nn_emu_stream *st = stream_of(stream, &e);
    if (!st) {
        record(e);
        return;
    }
    if (check_launch(grid, block, &why) != 0) {
        diag("launching %s: %s", k->name, why.c_str());
        record(cudaErrorInvalidConfiguration);
        return;
    }
    if (shared_bytes) {
        diag("launching %s: dynamic shared memory is not emulated", k->name);
        record(cudaErrorInvalidValue);
        return;
    }
    record(enqueue(st, kernel_op(k.release(), grid, block)));
}

} /* namespace nn_emu */

/* The barrier (cuda_emu.h). */
NN_EMU_UNCHECKED void __syncthreads(void)
{
    using namespace nn_emu;
    block_run *b = cur;
    if (!b) {
        diag("__syncthreads called outside a kernel");
        abort();
    }
    unsigned tid = nn_emu_thread_idx.x +
                   nn_emu_block_dim.x * (nn_emu_thread_idx.y + nn_emu_block_dim.y * nn_emu_thread_idx.z);
    b->waiting[b->nwait++] = waiter{ b->running, tid };
    b->parked = true;
    fiber_switch(b->running, &host, false);
}

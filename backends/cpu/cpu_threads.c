/* backends/cpu/cpu_threads.c - the fast CPU backend's threads: opening and
 * closing the backend, a small thread pool of our own, the parallel loops
 * every operation runs on it, and whether our own AVX2 kernels may run
 * (cpu_internal.h lists the other files).
 *
 * Why our own threads rather than OpenBLAS's: the gemms of a training step are
 * mostly small (LeNet's first convolution is 6 x 784 x 75 per sample), and
 * OpenBLAS either keeps them on one thread or splits them badly (a
 * 4 x 1000 x 784 product runs slower on two threads than on one). Splitting
 * the *batch* between threads, each running im2col and a one-thread sgemm on
 * data that stays in its own L2 cache, scales; and the same pool runs the
 * pooling, activation, dropout and optimiser loops. So OpenBLAS is set to one
 * thread and every parallel region is ours.
 *
 * Every parallel operation is a list of items that the threads claim one at a
 * time, the caller included: a worker that wakes late, or shares its core
 * with another program, just does fewer. And the caller waits only for the
 * workers that joined the operation in time, never for one that was not
 * running when it began (its core taken by another program): that worker
 * finds the operation closed when it wakes and skips it. Waiting for every
 * worker instead made each operation as slow as the slowest one to be
 * scheduled, which on a busy machine is a time slice of the other program's.
 *
 * A waiting thread spins briefly (what keeps a quiet machine's steps as fast
 * as they are: the next operation comes within microseconds), yielding its
 * core after a moment, then blocks on a condition variable.
 *
 * How many threads (threads = 0, the default): the cores this process may
 * run on less those other programs keep busy, revised while the job runs
 * (cpu_thread_choice.c). The pool starts a thread per core it may use; those
 * beyond the count now are parked on a condition variable of their own and
 * take no part until the count grows again. A busy competitor on one of two
 * cores gives one thread, as fast as two on a quiet machine's step and never
 * slower than --threads 1. Each operation plans for the largest count and
 * uses as many threads as its size is worth (nn_cpu_threads_for:
 * PAR_MIN_MACS or PAR_MIN_ELEMS each); the parked ones just claim nothing.
 */
#define _GNU_SOURCE             /* sched_getaffinity, CPU_COUNT */
#include "cpu_blis.h"
#include "cpu_internal.h"

#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define MAX_THREADS 64
/* A waiting thread spins this long before it sleeps on a condition variable:
 * longer than the gap between two operations of a step, short enough not to
 * hold a core for long once the trainer stops. After SPIN_PAUSE_NS it yields
 * the core on every round, so a UI thread is not kept waiting. */
#define SPIN_NS 200000
#define SPIN_PAUSE_NS 20000

/* ------------------------------------------------------------------------ */
/* The thread pool.                                                          */

/* A task runs as fn(ctx, part, parts) on the caller (part 0) and on each
 * worker that joins it while it is open. */
typedef void (*task_fn)(void *ctx, int part, int parts);

typedef struct pool {
    int n;                        /* threads, the caller included */
    int started;                  /* workers actually created */
    pthread_t workers[MAX_THREADS];
    pthread_mutex_t mu;
    pthread_cond_t wake;          /* a new task (epoch moved) or quit */
    pthread_cond_t done;          /* inside reached 0 */
    atomic_uint epoch;            /* bumped once per task (never 0 once one ran) */
    atomic_uint open;             /* the epoch workers may still join; 0: closed */
    atomic_int inside;            /* workers running (or about to check) a task */
    atomic_int quit;
    atomic_int held;              /* tests: workers do not join (nn_cpu_hold_workers) */
    atomic_int active;            /* threads taking part, the caller included; workers
                                     with part >= active are parked */
    pthread_cond_t parked;        /* active grew, or quit */
    task_fn fn;                   /* written by the caller before the epoch moves */
    void *ctx;
} pool;

typedef struct worker_arg {
    pool *p;
    int part;
} worker_arg;

typedef struct cpu_state {
    int threads;                  /* the pool's threads: the largest count (sizes plan for it) */
    nn_thread_choice *choice;     /* how many take part now */
    pool pool;
    worker_arg args[MAX_THREADS];
} cpu_state;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static double now_ns(void)
{
    return nn_now() * 1e9;
}

/* The spin phase of a wait: pause for SPIN_PAUSE_NS, then yield the core to
 * anything else runnable (the UI thread) until SPIN_NS; returns 1 when the
 * waiter should block instead. */
typedef struct spinner {
    double start;
    unsigned rounds;
} spinner;

static int spin_then_block(spinner *sp)
{
    cpu_relax();
    if ((++sp->rounds & 63) != 0)
        return 0;
    double elapsed = now_ns() - sp->start;
    if (elapsed > SPIN_NS)
        return 1;
    if (elapsed > SPIN_PAUSE_NS)
        sched_yield();
    return 0;
}

/* Waits (spinning, then blocking) until the epoch moves from seen or the
 * pool quits; returns the epoch. */
static unsigned wait_for_task(pool *p, unsigned seen)
{
    spinner sp = { now_ns(), 0 };
    unsigned e;
    while ((e = atomic_load_explicit(&p->epoch, memory_order_acquire)) == seen &&
           !atomic_load_explicit(&p->quit, memory_order_relaxed)) {
        if (spin_then_block(&sp)) {
            /* The caller moves the epoch under the mutex, so checking it
             * again under the mutex cannot miss a wake-up. */
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->epoch) == seen && !atomic_load(&p->quit))
                pthread_cond_wait(&p->wake, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return e;
}

/* Leaves a task; the last worker out wakes a caller waiting for it. */
static void leave_task(pool *p)
{
    if (atomic_fetch_sub(&p->inside, 1) == 1) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* A worker beyond the count: blocks, without spinning, until the count
 * includes it again; 1 when the pool quits meanwhile. */
static int park(pool *p, int part)
{
    pthread_mutex_lock(&p->mu);
    while (part >= atomic_load(&p->active) && !atomic_load(&p->quit))
        pthread_cond_wait(&p->parked, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return atomic_load(&p->quit);
}

/* Sets how many threads take part (the caller included), waking the parked
 * ones it now includes. Called between operations, on the caller's thread. */
static void pool_set_active(pool *p, int active)
{
    if (active < 1)
        active = 1;
    if (active > p->n)
        active = p->n;
    int was = atomic_exchange(&p->active, active);
    if (active > was) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->parked);
        pthread_mutex_unlock(&p->mu);
    }
}

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    pool *p = wa->p;
    unsigned seen = 0;      /* the epoch pool_start began with, before any task */
    for (;;) {
        if (wa->part >= atomic_load(&p->active) && park(p, wa->part))
            return NULL;
        unsigned e = wait_for_task(p, seen);
        while (atomic_load(&p->held) && !atomic_load(&p->quit))
            sched_yield();           /* as if another program had this core */
        if (atomic_load(&p->quit))
            return NULL;
        seen = e;
        /* Join only a task still open. inside goes up before open is read
         * and the caller closes before it reads inside (both sequentially
         * consistent): either this worker sees the task closed, or the
         * caller sees it inside and waits for it. */
        atomic_fetch_add(&p->inside, 1);
        if (atomic_load(&p->open) == e)
            p->fn(p->ctx, wa->part, p->n);
        leave_task(p);
    }
}

/* Runs fn on the caller and on each worker that joins in time, and returns
 * when every one that joined is done. fn must get its work done whichever
 * threads take part (the parallel loops below claim items). */
static void pool_run(pool *p, task_fn fn, void *ctx)
{
    if (p->n <= 1 || atomic_load_explicit(&p->active, memory_order_relaxed) <= 1) {
        fn(ctx, 0, p->n);        /* the caller claims every item */
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    unsigned e = atomic_load_explicit(&p->epoch, memory_order_relaxed) + 1;
    if (e == 0)
        e = 1;              /* 0 means closed */
    atomic_store(&p->open, e);
    pthread_mutex_lock(&p->mu);
    atomic_store_explicit(&p->epoch, e, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);

    fn(ctx, 0, p->n);       /* returns once every item is claimed */

    atomic_store(&p->open, 0u);
    spinner sp = { now_ns(), 0 };
    while (atomic_load(&p->inside) != 0) {
        if (spin_then_block(&sp)) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->inside) != 0)
                pthread_cond_wait(&p->done, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void pool_stop(pool *p)
{
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->quit, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_cond_broadcast(&p->parked);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->workers[i], NULL);
    p->started = 0;
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->parked);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
}

/* n threads in all: n - 1 workers. Returns 0, or an errno value. */
static int pool_start(cpu_state *s, int n)
{
    pool *p = &s->pool;
    p->n = n;
    p->started = 0;
    atomic_init(&p->epoch, 0);
    atomic_init(&p->open, 0);
    atomic_init(&p->inside, 0);
    atomic_init(&p->quit, 0);
    atomic_init(&p->held, 0);
    atomic_init(&p->active, n);
    p->fn = NULL;
    p->ctx = NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    pthread_cond_init(&p->parked, NULL);

    /* Workers never take signals: those belong to the UI thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = 0;
    for (int i = 1; i < n; i++) {
        s->args[i].p = p;
        s->args[i].part = i;
        err = pthread_create(&p->workers[i - 1], NULL, worker_main, &s->args[i]);
        if (err)
            break;
        p->started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err)
        pool_stop(p);
    return err;
}

static cpu_state *state(nn_backend *b)
{
    return b->impl;
}

int nn_cpu_threads_for(const nn_backend *b, double work, double min_per_thread)
{
    const cpu_state *s = b->impl;
    int t = s->threads;
    if (t > 1 && work < min_per_thread * t)
        t = (int)(work / min_per_thread);
    return t < 1 ? 1 : t;
}

void nn_cpu_hold_workers(nn_backend *b, int hold)
{
    atomic_store(&state(b)->pool.held, hold);
}

/* A parallel loop's shared state: the next item to claim. */
typedef struct par_loop {
    item_fn fn;
    void *ctx;
    int count, parts;
    atomic_int next;
} par_loop;

static void par_loop_part(void *arg, int part, int parts)
{
    par_loop *l = arg;
    (void)parts;
    if (part >= l->parts)
        return;
    int i;
    while ((i = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed)) < l->count)
        l->fn(l->ctx, i, part);
}

/* Between operations: the count revised (cpu_thread_choice.c, at most once a
 * window), and what the backend says of it (b->threads_now, threads_why). */
static void revise_threads(nn_backend *b)
{
    cpu_state *s = state(b);
    if (!nn_cpu_choice_tick(s->choice))
        return;
    b->threads_now = nn_cpu_choice_now(s->choice, b->threads_why, sizeof b->threads_why);
    if (b->threads_now != atomic_load_explicit(&s->pool.active, memory_order_relaxed))
        pool_set_active(&s->pool, b->threads_now);
}

/* A training step starts: the count the steps measure fastest
 * (cpu_thread_choice.c), set between two steps, never inside one. */
int nn_cpu_set_step(nn_backend *b, const nn_step_values *v)
{
    cpu_state *s = state(b);
    (void)v;                         /* the values are for graphs; ours run eagerly */
    if (nn_cpu_choice_step(s->choice) <= 0)
        return 0;                    /* asked for (never revised), or nothing new: most steps */
    b->threads_now = nn_cpu_choice_now(s->choice, b->threads_why, sizeof b->threads_why);
    if (b->threads_now != atomic_load_explicit(&s->pool.active, memory_order_relaxed))
        pool_set_active(&s->pool, b->threads_now);
    return 0;
}

void nn_cpu_par_for(nn_backend *b, int parts, int count, item_fn fn, void *ctx)
{
    if (parts > count)
        parts = count;
    if (parts <= 1) {
        for (int i = 0; i < count; i++)
            fn(ctx, i, 0);
        return;
    }
    par_loop l = { .fn = fn, .ctx = ctx, .count = count, .parts = parts };
    atomic_init(&l.next, 0);
    revise_threads(b);
    pool_run(&state(b)->pool, par_loop_part, &l);
}

void nn_cpu_split_range(size_t len, int part, int parts, size_t align, size_t *lo, size_t *hi)
{
    size_t units = (len + align - 1) / align;
    size_t u0 = units * (size_t)part / (size_t)parts;
    size_t u1 = units * (size_t)(part + 1) / (size_t)parts;
    *lo = u0 * align < len ? u0 * align : len;
    *hi = u1 * align < len ? u1 * align : len;
}

void nn_cpu_ew_run(nn_backend *b, size_t n, double cost, item_fn fn, void *ctx)
{
    const size_t block = nn_cpu_ew_block(n);
    int items = (int)((n + block - 1) / block);
    nn_cpu_par_for(b, nn_cpu_threads_for(b, (double)n * cost, PAR_MIN_ELEMS), items, fn, ctx);
}

/* ------------------------------------------------------------------------ */
/* Lifetime.                                                                 */

int nn_cpu_probe(char *why, size_t why_len)
{
    /* linked at build time: if we are running, OpenBLAS is here */
    if (why && why_len)
        why[0] = '\0';
    return 0;
}

int nn_cpu_open(nn_backend *b, const nn_backend_config *cfg)
{
    int asked = cfg ? cfg->threads : 0;
    if (asked < 0)
        return nn_backend_fail(b, "cpu: %d threads asked for", asked);
    cpu_state *s = calloc(1, sizeof *s);
    if (!s || !(s->choice = nn_cpu_choice_open(asked, MAX_THREADS))) {
        free(s);
        return nn_backend_fail(b, "cpu: out of memory");
    }
    int threads = nn_cpu_choice_largest(s->choice);
    s->threads = threads;
    /* OpenBLAS and BLIS run inside our threads, one thread each (see the
     * top); BLIS only where it is installed (cpu_blis.c). */
    openblas_set_num_threads(1);
    nn_blis_set_threads(1);
    int err = pool_start(s, threads);
    if (err) {
        nn_cpu_choice_close(s->choice);
        free(s);
        return nn_backend_fail(b, "cpu: cannot start %d threads: %s", threads, strerror(err));
    }
    b->impl = s;
    b->host_threads = threads;
    b->threads_now = nn_cpu_choice_now(s->choice, b->threads_why, sizeof b->threads_why);
    pool_set_active(&s->pool, b->threads_now);
    return 0;
}

void nn_cpu_close(nn_backend *b)
{
    cpu_state *s = b->impl;
    if (s) {
        pool_stop(&s->pool);
        nn_cpu_choice_close(s->choice);
        free(s);
    }
    b->impl = NULL;
}

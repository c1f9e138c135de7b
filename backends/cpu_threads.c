/* backends/cpu_threads.c - the fast CPU backend's threads: opening and
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
 * run on (sched_getaffinity) less those other programs keep busy, measured
 * over PROBE_MS from /proc/stat on those cores (a core counts as taken from
 * half its time used); at least one. A busy competitor on one of two cores
 * gives one thread, as fast as two on a quiet machine's step and never
 * slower than --threads 1. Each operation then uses as many of them as its
 * size is worth (nn_cpu_threads_for: PAR_MIN_MACS or PAR_MIN_ELEMS each).
 */
#define _GNU_SOURCE             /* sched_getaffinity, CPU_COUNT */
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
    task_fn fn;                   /* written by the caller before the epoch moves */
    void *ctx;
} pool;

typedef struct worker_arg {
    pool *p;
    int part;
} worker_arg;

typedef struct cpu_state {
    int threads;
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

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    pool *p = wa->p;
    unsigned seen = 0;      /* the epoch pool_start began with, before any task */
    for (;;) {
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
    if (p->n <= 1) {
        fn(ctx, 0, 1);
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
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->workers[i], NULL);
    p->started = 0;
    pthread_cond_destroy(&p->done);
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
    p->fn = NULL;
    p->ctx = NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);

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
    int items = (int)((n + EW_BLOCK - 1) / EW_BLOCK);
    nn_cpu_par_for(b, nn_cpu_threads_for(b, (double)n * cost, PAR_MIN_ELEMS), items, fn, ctx);
}

/* ------------------------------------------------------------------------ */
/* How many threads: the cores free now (see the top).                       */

/* How long the load is measured: /proc/stat counts in ticks of 10 ms, so
 * 5 ticks a core. A result is reused for PROBE_REUSE_S (a sweep starts a
 * job after another). */
#define PROBE_MS 50
#define PROBE_REUSE_S 2.0

/* Busy and total ticks of each CPU in set, from /proc/stat; -1 unreadable. */
static int read_ticks(const cpu_set_t *set, double busy[], double total[], int max)
{
    char line[512];
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v[8] = { 0 };
        int cpu;
        if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7]) < 5 || cpu < 0 || cpu >= max ||
            !CPU_ISSET(cpu, set))
            continue;
        /* user nice system idle iowait irq softirq steal */
        busy[cpu] = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
        total[cpu] = busy[cpu] + (double)(v[3] + v[4]);
    }
    fclose(f);
    return 0;
}

/* This process's own user and system ticks (/proc/self/stat: utime and
 * stime, the 14th and 15th fields, in the same ticks as /proc/stat); -1
 * when unreadable. Its own threads (a pool of a backend just closed, still
 * spinning down; a calibration's) are not another program's load. */
static double own_ticks(void)
{
    char line[1024];
    unsigned long long ut, st;
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return -1;
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    const char *p = got ? strrchr(line, ')') : NULL;   /* the name may hold blanks */
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st);
}

double nn_cpu_others_busy(int cores, const double busy[], const double total[], double own)
{
    double sum = 0, ticks = 0;
    for (int c = 0; c < cores; c++) {
        sum += busy[c] / total[c];
        ticks += total[c];
    }
    if (cores > 0 && ticks > 0)
        sum -= own / (ticks / cores);       /* our own share, in cores */
    return sum > 0 ? sum : 0;
}

/* The cores of set other programs kept busy over PROBE_MS (each core's busy
 * share, added up); 0 when /proc/stat cannot tell. */
static double busy_cores(const cpu_set_t *set)
{
    enum { MAXC = CPU_SETSIZE };
    static double b0[MAXC], t0[MAXC], b1[MAXC], t1[MAXC];   /* under probe_lock */
    static double busy[MAXC], total[MAXC];
    struct timespec ts = { 0, PROBE_MS * 1000000L };
    memset(t0, 0, sizeof t0);
    memset(t1, 0, sizeof t1);
    double own0 = own_ticks();
    if (read_ticks(set, b0, t0, MAXC) != 0)
        return 0;
    nanosleep(&ts, NULL);
    if (read_ticks(set, b1, t1, MAXC) != 0)
        return 0;
    double own1 = own_ticks();
    int cores = 0;
    for (int c = 0; c < MAXC; c++)
        if (t1[c] > t0[c]) {
            busy[cores] = b1[c] - b0[c];
            total[cores++] = t1[c] - t0[c];
        }
    return nn_cpu_others_busy(cores, busy, total, own0 >= 0 && own1 >= own0 ? own1 - own0 : 0);
}

/* The rule at the top: the cores this process may use less those taken. */
static int free_cores(void)
{
    static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
    static double probed_at = -1e9;
    static int probed = 1;
    cpu_set_t set;
    int allowed;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        allowed = CPU_COUNT(&set);
    } else {
        long procs = sysconf(_SC_NPROCESSORS_ONLN);
        allowed = procs > 0 ? (int)procs : 1;
        for (int c = 0; c < allowed && c < CPU_SETSIZE; c++)
            CPU_SET(c, &set);
    }
    if (allowed <= 1)
        return 1;
    pthread_mutex_lock(&probe_lock);
    if (nn_now() - probed_at > PROBE_REUSE_S) {
        int taken = (int)(busy_cores(&set) + 0.5);
        probed = allowed - taken > 1 ? allowed - taken : 1;
        probed_at = nn_now();
    }
    int n = probed;
    pthread_mutex_unlock(&probe_lock);
    return n;
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
    int threads = cfg ? cfg->threads : 0;
    if (threads < 0)
        return nn_backend_fail(b, "cpu: %d threads asked for", threads);
    if (threads == 0)
        threads = free_cores();
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;

    cpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return nn_backend_fail(b, "cpu: out of memory");
    s->threads = threads;
    /* OpenBLAS runs inside our threads, one thread each (see the top). */
    openblas_set_num_threads(1);
    int err = pool_start(s, threads);
    if (err) {
        free(s);
        return nn_backend_fail(b, "cpu: cannot start %d threads: %s", threads, strerror(err));
    }
    b->impl = s;
    b->host_threads = threads;
    return 0;
}

void nn_cpu_close(nn_backend *b)
{
    cpu_state *s = b->impl;
    if (s) {
        pool_stop(&s->pool);
        free(s);
    }
    b->impl = NULL;
}

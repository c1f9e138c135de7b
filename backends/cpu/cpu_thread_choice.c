/* backends/cpu/cpu_thread_choice.c - how many of the fast CPU backend's threads
 * take part in its operations, when the caller left it to us (threads = 0).
 *
 * The cores this process may run on (sched_getaffinity), less those other
 * programs keep busy, at least one. What "keep busy" means is the point:
 * the first version looked once, for 50 ms, when the backend opened, and a
 * program starting beside nnlab (a `| python3` reading its JSON) was busy in
 * exactly those 50 ms: the whole job then ran on one thread, at half speed.
 *
 * So the choice is revised while the job runs. Every WINDOW_S of the job,
 * on the thread that issues the operations, the other programs' busy cores
 * over that window are read from /proc/stat (each core's busy share added
 * up, less this process's own ticks: nn_cpu_others_busy). A core counts as
 * taken only when it was busy in each of the last TAKEN_WINDOWS windows, and
 * given back as soon as one window finds it free (nn_cpu_thread_rule): a
 * burst shorter than ~1 s (a program starting or ending, a pipe's reader)
 * costs at most a window at the smaller count, while a program that keeps
 * a core busy gets it after ~1 s, for the rest of the job or until it ends.
 * The opening probe stays (PROBE_MS) so that a job started beside a busy
 * program does not fight it for its first second; its answer is only the
 * first window, and the next one corrects it.
 *
 * The load says how many cores are ours, not how many threads a step is
 * worth: on a virtual machine whose other vCPU the host takes now and then,
 * two threads' step at batch 4 ran 3x one thread's for seconds at a time
 * with /proc/stat calling both cores free (bench/results/threads-2c-
 * 2026-11-29*.md), and on 16 cores TabNet at 64 ran 652 us on all of them
 * against 412 on one. So where the engine marks its training steps
 * (set_step), the count is also measured (nn_thread_trial below): the
 * steps are timed at the load's count, then (a step under 5 ms: a larger one
 * is work every thread shares) at the powers of two below it while a smaller
 * count is faster; the fastest is kept, and the trial is
 * run again every few seconds (a regime of the host ends) or when the
 * load's count changes. Jobs without training steps keep the load's count.
 *
 * The threads beyond the count are parked (cpu_threads.c), never spun: a
 * parked worker leaves its core to the other program. Sizes planned for the
 * largest count (workspaces) stay valid, as every parallel loop lets
 * whichever threads take part claim its items.
 */
#define _GNU_SOURCE             /* sched_getaffinity, CPU_COUNT */
#include "cpu_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* /proc/stat counts in ticks of 10 ms: 5 ticks a core for the opening probe,
 * reused for PROBE_REUSE_S (a sweep starts a job after another). */
#define PROBE_MS 50
#define PROBE_REUSE_S 2.0
/* The revision's window, and how many in a row must find a core busy. */
#define WINDOW_S 0.35
#define TAKEN_WINDOWS 3

/* ---- reading the load ------------------------------------------------------------------ */

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
        if (strncmp(line, "cpu", 3) != 0)
            break;                       /* the per-CPU lines come first */
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

/* A window's start: every CPU's ticks and our own. */
typedef struct load_mark {
    double busy[CPU_SETSIZE], total[CPU_SETSIZE];
    double own;
    int ok;
} load_mark;

static void mark_load(const cpu_set_t *set, load_mark *m)
{
    memset(m->total, 0, sizeof m->total);
    m->own = own_ticks();
    m->ok = read_ticks(set, m->busy, m->total, CPU_SETSIZE) == 0;
}

/* Other programs' busy cores since m0 (then m0 becomes now); -1 when
 * /proc/stat cannot tell or no tick went by. */
static double others_since(const cpu_set_t *set, load_mark *m0, load_mark *scratch)
{
    mark_load(set, scratch);
    if (!m0->ok || !scratch->ok) {
        *m0 = *scratch;
        return -1;
    }
    double busy[CPU_SETSIZE], total[CPU_SETSIZE];
    int cores = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (scratch->total[c] > m0->total[c]) {
            busy[cores] = scratch->busy[c] - m0->busy[c];
            total[cores++] = scratch->total[c] - m0->total[c];
        }
    double own = m0->own >= 0 && scratch->own >= m0->own ? scratch->own - m0->own : 0;
    *m0 = *scratch;
    return cores ? nn_cpu_others_busy(cores, busy, total, own) : -1;
}

/* ---- the rule ---------------------------------------------------------------------------- */

int nn_cpu_thread_rule(int allowed, const double others[], int n, char *why, size_t why_len)
{
    double least = 0;
    int windows = n < TAKEN_WINDOWS ? n : TAKEN_WINDOWS;
    /* taken: busy in every one of the last windows (a burst is not) */
    for (int i = 0; i < windows; i++) {
        double v = others[n - 1 - i];
        least = i == 0 || v < least ? v : least;
    }
    int taken = windows > 0 ? (int)(least + 0.5) : 0;
    int threads = allowed - taken > 1 ? allowed - taken : 1;
    if (why && why_len) {
        if (taken == 0)
            snprintf(why, why_len, "%d core%s free", allowed, allowed == 1 ? "" : "s");
        else
            snprintf(why, why_len, "%d of %d cores kept busy by other programs (%s)", taken,
                     allowed, windows == 1 ? "at the last check" : windows == 2
                         ? "at each of the last 2 checks" : "at each of the last 3 checks");
    }
    return threads;
}

/* ---- the measured choice ------------------------------------------------------------------ */

/* Steps timed at each count tried (their fastest is the count's figure: noise only slows). */
#define TRIAL_SAMPLES 3
/* A smaller count is kept only when this much faster (less: not worth a change). */
#define TRIAL_GAIN 0.97
/* The next trial starts TRIAL_EVERY_S after one ends, and never sooner than
 * TRIAL_COST_RATIO x that trial's own time: each costs a few steps at a worse
 * count, at most ~1/TRIAL_COST_RATIO of the job's. */
#define TRIAL_EVERY_S 2.0
#define TRIAL_COST_RATIO 40.0
/* A step this long at the load's count is not tried at fewer: such a step is
 * work, which every thread shares (LeNet at 1024 on two threads: 21 ms, 38 on
 * one), and a timed run's few steps at a worse count would weigh in its mean
 * (arithmetic: 3 of explain's default 20 steps at twice the time, +15%). The counts that win below the load's are small
 * steps' (TabNet at 64: 412 us on one thread of 16, 652 on all). */
#define TRIAL_MAX_STEP_S 0.005

static void trial_begin(nn_thread_trial *t, int cap, double now)
{
    t->trying = cap;
    t->best = 0;
    t->best_s = 0;
    t->try_s = 0;
    t->samples = 0;
    t->began = now;
}

static void trial_end(nn_thread_trial *t, double now)
{
    t->pick = t->best;
    t->pick_s = t->best_s;
    t->trying = 0;
    double cost = now - t->began;
    t->next = now + (TRIAL_EVERY_S > TRIAL_COST_RATIO * cost ? TRIAL_EVERY_S : TRIAL_COST_RATIO * cost);
}

/* The count tried has its figure: keep it when it is the first or enough
 * faster than the best, then go on down (the power of two below it: 6, 4,
 * 2, 1), else the trial ends. */
static void trial_next_count(nn_thread_trial *t, double now)
{
    int faster = t->best == 0 || t->try_s < t->best_s * TRIAL_GAIN;
    if (faster) {
        t->best = t->trying;
        t->best_s = t->try_s;
    }
    int lower = 1;
    while (lower * 2 < t->trying)
        lower *= 2;
    if (faster && lower < t->trying && t->try_s <= TRIAL_MAX_STEP_S) {
        t->trying = lower;
        t->try_s = 0;
        t->samples = 0;
    } else {
        trial_end(t, now);
    }
}

int nn_thread_trial_step(nn_thread_trial *t, int cap, double now)
{
    double took = t->last_start > 0 ? now - t->last_start : -1;
    int ran = t->running;                /* the count the step just ended ran at */
    t->last_start = now;
    t->steps++;
    if (cap < 1)
        cap = 1;
    if (cap != t->cap) {                 /* the load's count moved: measure again below it */
        t->cap = cap;
        if (t->steps > 1)
            trial_begin(t, cap, now);
    }
    if (t->steps == 2 && !t->trying)     /* step 1 (first touches, allocations) was not timed */
        trial_begin(t, cap, now);
    else if (t->trying && took > 0 && ran == t->trying) {
        t->try_s = t->samples == 0 || took < t->try_s ? took : t->try_s;
        if (++t->samples >= TRIAL_SAMPLES)
            trial_next_count(t, now);
    } else if (!t->trying && t->steps > 2 && now >= t->next) {
        trial_begin(t, cap, now);
    }
    int count = t->trying ? t->trying : t->pick > 0 && t->pick < cap ? t->pick : cap;
    t->running = count;
    return count;
}

/* ---- a backend's choice ------------------------------------------------------------------ */

struct nn_thread_choice {
    cpu_set_t set;
    int allowed;                 /* the cores this process may run on */
    int threads;                 /* the current count */
    int load_threads;            /* the load's count (nn_cpu_thread_rule): the most threads now */
    int automatic;               /* 0: asked for explicitly, never revised */
    nn_thread_trial trial;       /* the count measured, from the steps the engine marks */
    double window_end;           /* nn_now() when the current window ends */
    double others[TAKEN_WINDOWS];
    int n_others;
    load_mark start, scratch;
    char why[128];
    pthread_mutex_t lock;        /* why and threads for readers (nn_cpu_thread_choice_why) */
};

static int allowed_cores(cpu_set_t *set)
{
    CPU_ZERO(set);
    if (sched_getaffinity(0, sizeof *set, set) == 0)
        return CPU_COUNT(set);
    long procs = sysconf(_SC_NPROCESSORS_ONLN);
    int n = procs > 0 ? (int)procs : 1;
    for (int c = 0; c < n && c < CPU_SETSIZE; c++)
        CPU_SET(c, set);
    return n;
}

/* The last opening probe: when it ran (nn_now) and what it found.
 * Process-wide, not a backend's: the backends opened within PROBE_REUSE_S
 * of each other (a sweep's jobs, the lanes') share one probe rather than
 * each sleeping PROBE_MS; the lock makes the others wait for it. */
static struct {
    pthread_mutex_t lock;
    double at, others;
} last_probe = { PTHREAD_MUTEX_INITIALIZER, -1e9, 0 };

/* The opening probe: other programs' busy cores over PROBE_MS, shared as
 * last_probe says; m0 and m1 are the opening backend's own marks, free
 * until its first window starts. */
static double opening_probe(const cpu_set_t *set, load_mark *m0, load_mark *m1)
{
    pthread_mutex_lock(&last_probe.lock);
    if (nn_now() - last_probe.at > PROBE_REUSE_S) {
        struct timespec ts = { 0, PROBE_MS * 1000000L };
        mark_load(set, m0);
        nanosleep(&ts, NULL);
        last_probe.others = others_since(set, m0, m1);
        last_probe.at = nn_now();
    }
    double v = last_probe.others;
    pthread_mutex_unlock(&last_probe.lock);
    return v;
}

nn_thread_choice *nn_cpu_choice_open(int asked, int max_threads)
{
    nn_thread_choice *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->allowed = allowed_cores(&c->set);
    c->automatic = asked == 0 && c->allowed > 1;
    if (asked > 0) {
        c->threads = asked;
        snprintf(c->why, sizeof c->why, "%d asked for", asked);
    } else if (!c->automatic) {
        c->threads = 1;
        snprintf(c->why, sizeof c->why, "one core to run on");
    } else {
        double first = opening_probe(&c->set, &c->start, &c->scratch);
        if (first >= 0)
            c->others[c->n_others++] = first;
        c->threads = nn_cpu_thread_rule(c->allowed, c->others, c->n_others, c->why, sizeof c->why);
        c->load_threads = c->threads;
        mark_load(&c->set, &c->start);
        c->window_end = nn_now() + WINDOW_S;
    }
    if (c->allowed > max_threads)
        c->allowed = max_threads;
    if (c->threads > max_threads)
        c->threads = max_threads;
    if (c->load_threads > max_threads)
        c->load_threads = max_threads;
    return c;
}

void nn_cpu_choice_close(nn_thread_choice *c)
{
    if (c) {
        pthread_mutex_destroy(&c->lock);
        free(c);
    }
}

int nn_cpu_choice_largest(const nn_thread_choice *c)
{
    return c->automatic ? c->allowed : c->threads;
}

int nn_cpu_choice_tick(nn_thread_choice *c)
{
    if (!c->automatic || nn_now() < c->window_end)
        return 0;
    double v = others_since(&c->set, &c->start, &c->scratch);
    c->window_end = nn_now() + WINDOW_S;
    if (v < 0)
        return 0;
    if (c->n_others == TAKEN_WINDOWS) {
        memmove(c->others, c->others + 1, (TAKEN_WINDOWS - 1) * sizeof c->others[0]);
        c->n_others--;
    }
    c->others[c->n_others++] = v;
    char why[sizeof c->why];
    int t = nn_cpu_thread_rule(c->allowed, c->others, c->n_others, why, sizeof why);
    pthread_mutex_lock(&c->lock);
    c->load_threads = t;
    /* below the load's count stays what the steps measured, till the next step says */
    if (c->threads > t || !c->trial.steps)
        c->threads = t;
    memcpy(c->why, why, sizeof why);
    pthread_mutex_unlock(&c->lock);
    return 1;
}

int nn_cpu_choice_step(nn_thread_choice *c)
{
    if (!c->automatic)
        return -1;
    const nn_thread_trial was = c->trial;
    int t = nn_thread_trial_step(&c->trial, c->load_threads, nn_now());
    /* the words (nn_cpu_choice_now) follow the trial where the count stays */
    int said = c->trial.trying != was.trying || c->trial.pick != was.pick || c->trial.pick_s != was.pick_s;
    if (t == c->threads)
        return said;                 /* most steps: nothing to lock, print or wake */
    pthread_mutex_lock(&c->lock);
    c->threads = t;
    pthread_mutex_unlock(&c->lock);
    return 1;
}

int nn_cpu_choice_now(nn_thread_choice *c, char *why, size_t why_len)
{
    pthread_mutex_lock(&c->lock);
    int t = c->threads;
    const nn_thread_trial *tr = &c->trial;
    if (!why || !why_len)
        ;
    else if (tr->trying)
        snprintf(why, why_len, "revised while it runs: %s; timing %d thread%s a step", c->why, t, t == 1 ? "" : "s");
    else if (c->automatic && tr->pick > 0 && t < c->load_threads)
        snprintf(why, why_len, "revised while it runs: %s; %d measured faster a step (%.0f us)", c->why, t,
                 tr->pick_s * 1e6);
    else
        snprintf(why, why_len, "%s%s", c->automatic ? "revised while it runs: " : "", c->why);
    pthread_mutex_unlock(&c->lock);
    return t;
}

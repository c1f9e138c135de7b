/* tests/test_threads.c - the fast CPU backend's thread pool on a busy machine:
 * with another program keeping one of this process's cores busy, the default
 * thread count leaves that core to it (the busy program is a child spinning
 * on a core of its own, sched_setaffinity); and with workers that are not
 * running when an operation begins (held, as if their cores were taken),
 * every operation still ends, runs each of its items exactly once, and does
 * not wait for them.
 */
#define _GNU_SOURCE             /* sched_setaffinity, CPU_* */
#include <sched.h>
#include <setjmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend.h"
#include "cpu/cpu_internal.h"
#include "util.h"

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* The first two CPUs this process may run on; -1 when it has fewer. */
static int two_cpus(int cpu[2])
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, &set))
            cpu[n++] = c;
    return n == 2 ? 0 : -1;
}

static void pin(pid_t pid, int a, int b)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(a, &set);
    if (b >= 0)
        CPU_SET(b, &set);
    assert_int_equal(sched_setaffinity(pid, sizeof set, &set), 0);
}

/* A child spinning on cpu; the caller kills it. */
static pid_t busy_child(int cpu)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    return pid;
}

static void stop_child(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* The threads a backend opened with cfg runs an operation of unbounded size on. */
static int opened_threads(nn_backend *b)
{
    return nn_cpu_threads_for(b, 1e18, 1.0);
}

/* This process on two cores, a busy program on one of them: the default
 * count is one thread (the first thing this program opens, so the probe is
 * fresh), where it was every core; threads asked for are given. */
static void test_default_threads_leave_a_busy_core(void **state)
{
    (void)state;
    int cpu[2];
    nn_backend b;
    nn_backend_config dflt = { .threads = 0 }, two = { .threads = 2 };
    if (two_cpus(cpu) != 0) {
        print_message("# SKIP: fewer than two CPUs\n");
        skip();
    }
    pin(0, cpu[0], cpu[1]);
    pid_t child = busy_child(cpu[1]);
    sleep_ms(100);                           /* spinning by now */
    int rc = nn_backend_open(&b, &nn_backend_cpu, &dflt);
    int got = rc == 0 ? b.threads_now : -1;
    char why[sizeof b.threads_why];
    snprintf(why, sizeof why, "%s", rc == 0 ? b.threads_why : "");
    if (rc == 0)
        nn_backend_close(&b);
    stop_child(child);
    print_message("# a busy program on one of 2 cores: %d thread(s) by default (%s)\n", got, why);
    assert_int_equal(got, 1);
    assert_non_null(strstr(why, "kept busy by other programs"));
    assert_int_equal(nn_backend_open(&b, &nn_backend_cpu, &two), 0);
    assert_int_equal(opened_threads(&b), 2);
    assert_int_equal(b.threads_now, 2);
    assert_non_null(strstr(b.threads_why, "2 asked for"));
    nn_backend_close(&b);
}

/* The rule on simulated loads (other programs' busy cores per window,
 * the latest last): a core is taken only when it was busy in each of the
 * last 3 windows, and given back as soon as one finds it free. */
static void test_thread_rule_on_simulated_loads(void **state)
{
    (void)state;
    char why[128];
    const double none[1] = { 0 };
    assert_int_equal(nn_cpu_thread_rule(2, none, 0, why, sizeof why), 2);     /* nothing read */
    assert_string_equal(why, "2 cores free");
    /* a reader starting beside the job (a pipe): busy at the opening probe
     * only, then gone: one window at one thread, then both again */
    const double pipe[2] = { 1.0, 0.05 };
    assert_int_equal(nn_cpu_thread_rule(2, pipe, 1, why, sizeof why), 1);
    assert_int_equal(nn_cpu_thread_rule(2, pipe, 2, why, sizeof why), 2);
    /* a short burst in the middle of a job is not a taken core */
    const double burst[3] = { 0, 1.0, 0.9 };
    assert_int_equal(nn_cpu_thread_rule(2, burst, 3, why, sizeof why), 2);
    /* a program that keeps a core busy: taken after 3 windows in a row */
    const double busy[4] = { 0, 0.95, 1.0, 0.98 };
    assert_int_equal(nn_cpu_thread_rule(2, busy, 3, why, sizeof why), 2);
    assert_int_equal(nn_cpu_thread_rule(2, busy, 4, why, sizeof why), 1);
    assert_non_null(strstr(why, "1 of 2 cores kept busy by other programs"));
    /* ... and given back the first window it has ended */
    const double ended[4] = { 1.0, 1.0, 1.0, 0.02 };
    assert_int_equal(nn_cpu_thread_rule(2, ended, 4, why, sizeof why), 2);
    /* more cores: two of 8 taken; every core taken still leaves one thread */
    const double two_of_8[3] = { 2.1, 1.9, 2.2 }, all[3] = { 2, 2, 2 };
    assert_int_equal(nn_cpu_thread_rule(8, two_of_8, 3, why, sizeof why), 6);
    assert_int_equal(nn_cpu_thread_rule(2, all, 3, why, sizeof why), 1);
    /* half a core busy (a program sleeping half its time) is not taken */
    const double half[3] = { 0.45, 0.4, 0.49 };
    assert_int_equal(nn_cpu_thread_rule(2, half, 3, why, sizeof why), 2);
}

/* Simulated steps through the measured choice (nn_thread_trial_step): the
 * step at count k takes step_us[k] us. Runs `steps` steps from *now and
 * returns the count the last one ran at; *slower counts the steps run at
 * more than the fastest count's time. */
static int run_steps(nn_thread_trial *t, int cap, const double *step_us, int steps, double *now, int *slower)
{
    double fastest = 0;
    for (int k = 1; k <= cap; k++)
        fastest = k == 1 || step_us[k] < fastest ? step_us[k] : fastest;
    int count = 0;
    for (int i = 0; i < steps; i++) {
        count = nn_thread_trial_step(t, cap, *now);
        assert_true(count >= 1 && count <= cap);
        if (slower && step_us[count] > fastest * 1.001)
            (*slower)++;
        *now += step_us[count] * 1e-6;
    }
    return count;
}

/* The measured choice on simulated steps: it keeps the fastest count on
 * the halving path whatever the load says, pays a few steps a trial, and
 * follows a regime change of the host at the next trial. */
static void test_thread_trial_on_simulated_steps(void **state)
{
    (void)state;
    double now = 1.0;
    int slower = 0;
    /* 2 cores, a small step: two threads 3x one's (a host taking the other vCPU) */
    const double two_slow[3] = { 0, 33, 107 };
    nn_thread_trial t = { 0 };
    assert_int_equal(run_steps(&t, 2, two_slow, 100, &now, &slower), 1);
    assert_true(slower <= 4);                /* the trial's steps at 2: three, and step 1 */
    /* the regime ends: two threads faster again, found at the next trial */
    const double two_fast[3] = { 0, 33, 28 };
    slower = 0;
    now += 2.5;                              /* past the next trial's time */
    assert_int_equal(run_steps(&t, 2, two_fast, 100, &now, &slower), 2);
    assert_true(slower <= 3);
    /* a large step (work every thread shares): never tried at fewer threads */
    nn_thread_trial big = { 0 };
    const double scales[3] = { 0, 82000, 43000 };
    slower = 0;
    now = 1.0;
    assert_int_equal(run_steps(&big, 2, scales, 200, &now, &slower), 2);
    assert_int_equal(slower, 0);
    /* one just under the bound is: 3 ms at 2, 2.5 ms at 1 thread */
    nn_thread_trial mid = { 0 };
    const double mid_us[3] = { 0, 2500, 3000 };
    now = 1.0;
    assert_int_equal(run_steps(&mid, 2, mid_us, 40, &now, NULL), 1);
    /* 16 cores: 4 threads fastest (TabNet at 64: 652 us on 16, 412 on 1) */
    double sixteen[17] = { 0 };
    for (int k = 1; k <= 16; k++)
        sixteen[k] = k == 16 ? 652 : k == 8 ? 500 : k == 4 ? 380 : k == 2 ? 395 : k == 1 ? 412 : 600;
    nn_thread_trial many = { 0 };
    now = 1.0;
    assert_int_equal(run_steps(&many, 16, sixteen, 60, &now, NULL), 4);
    /* the load takes cores: at most its count, measured again below it */
    assert_int_equal(run_steps(&many, 3, sixteen, 20, &now, NULL), 2);
    /* noise only slows: one slow sample of the best count does not lose it */
    nn_thread_trial noisy = { 0 };
    const double even[3] = { 0, 50, 30 };
    now = 1.0;
    assert_int_equal(nn_thread_trial_step(&noisy, 2, now), 2);      /* step 1: not timed */
    now += 500e-6;
    assert_int_equal(nn_thread_trial_step(&noisy, 2, now), 2);      /* the trial: 2 first */
    now += 300e-6;                                                  /* a slow sample (preempted) */
    assert_int_equal(nn_thread_trial_step(&noisy, 2, now), 2);
    now += 30e-6;
    assert_int_equal(run_steps(&noisy, 2, even, 20, &now, NULL), 2);
}

/* The probe's arithmetic (nn_cpu_others_busy): a core kept busy by a thread
 * of this process is not another program's (a calibration's pool still
 * spinning made the next job's backend take one thread on an idle machine);
 * one kept busy by another program still counts. Ticks as /proc/stat gives
 * them over a 50 ms probe: 5 per core. */
static void test_own_ticks_are_not_another_programs(void **state)
{
    (void)state;
    const double total[2] = { 5, 5 };
    const double our_spin[2] = { 5, 0 }, other_spin[2] = { 0, 5 }, both[2] = { 5, 5 };
    assert_true(nn_cpu_others_busy(2, our_spin, total, 5) < 0.5);     /* free cores: 2 */
    assert_true(nn_cpu_others_busy(2, our_spin, total, 4) < 0.5);     /* ticks land unevenly */
    assert_true(nn_cpu_others_busy(2, other_spin, total, 0) > 0.5);   /* free cores: 1 */
    assert_true(nn_cpu_others_busy(2, both, total, 5) > 0.5);
    assert_true(nn_cpu_others_busy(2, both, total, 5) < 1.5);
    assert_true(nn_cpu_others_busy(2, our_spin, total, 6) == 0);      /* never below 0 */
    assert_true(nn_cpu_others_busy(0, NULL, NULL, 3) == 0);
}

/* ---- operations with late workers ------------------------------------------------ */

typedef struct count_task {
    atomic_int *runs;            /* (count) times each item ran */
    atomic_int by_worker;        /* items run by a thread other than the caller */
} count_task;

static void count_item(void *ctx, int item, int part)
{
    count_task *t = ctx;
    double until = nn_now() + 20e-6;         /* an item of real work: 20 us */
    while (nn_now() < until)
        ;
    atomic_fetch_add(&t->runs[item], 1);
    if (part != 0)
        atomic_fetch_add(&t->by_worker, 1);
}

/* Runs OPS operations of a few 20-us items on 4 threads, each item checked
 * to run exactly once; sets done when finished. */
typedef struct op_run {
    nn_backend *b;
    int ops;
    long workers_ran;
    char failure[128];
    atomic_int done;
} op_run;

static void *run_ops(void *arg)
{
    op_run *r = arg;
    enum { MAX_ITEMS = 8 };
    atomic_int runs[MAX_ITEMS];
    for (int op = 0; op < r->ops && !r->failure[0]; op++) {
        int count = 1 + op % MAX_ITEMS;
        count_task t = { runs, 0 };
        for (int i = 0; i < count; i++)
            atomic_init(&runs[i], 0);
        atomic_init(&t.by_worker, 0);
        nn_cpu_par_for(r->b, 4, count, count_item, &t);
        for (int i = 0; i < count; i++)
            if (atomic_load(&runs[i]) != 1)
                snprintf(r->failure, sizeof r->failure, "operation %d: item %d ran %d times", op, i,
                         atomic_load(&runs[i]));
        r->workers_ran += atomic_load(&t.by_worker);
    }
    atomic_store(&r->done, 1);
    return NULL;
}

/* Runs the operations on a thread of their own; 1 when they ended within
 * seconds (else the workers are let go, so that they can). */
static int ops_end_in_time(op_run *r, double seconds)
{
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, run_ops, r), 0);
    double t0 = nn_now();
    while (!atomic_load(&r->done) && nn_now() - t0 < seconds)
        sleep_ms(5);
    int in_time = atomic_load(&r->done);
    nn_cpu_hold_workers(r->b, 0);
    pthread_join(th, NULL);
    return in_time;
}

/* Workers that are not running when an operation begins (their cores taken
 * by other programs, held here) are not waited for: the caller runs every
 * item, and the operation ends. Waiting for every worker, each operation
 * lasted as long as the slowest worker took to be scheduled. Then, with the
 * workers free again, they share the items; every item runs exactly once. */
static void test_operations_never_wait_for_absent_workers(void **state)
{
    (void)state;
    nn_backend b;
    nn_backend_config four = { .threads = 4 };
    assert_int_equal(nn_backend_open(&b, &nn_backend_cpu, &four), 0);

    op_run held = { .b = &b, .ops = 300 };
    nn_cpu_hold_workers(&b, 1);
    int in_time = ops_end_in_time(&held, 10.0);
    print_message("# workers held: %s, %ld items run by workers\n", in_time ? "ended" : "stuck",
                  held.workers_ran);
    assert_true(in_time);
    assert_string_equal(held.failure, "");
    assert_int_equal(held.workers_ran, 0);

    op_run free_run = { .b = &b, .ops = 3000 };
    assert_true(ops_end_in_time(&free_run, 60.0));
    print_message("# workers free: %ld items run by workers\n", free_run.workers_ran);
    assert_string_equal(free_run.failure, "");
    nn_backend_close(&b);
}

/* An elementwise loop's items (nn_cpu_ew_block, nn_cpu_ew_range): they
 * cover [0, n) in order, none empty, each starting on a multiple of 16
 * floats; an array under two EW_BLOCKs is two items (one below 17 floats),
 * a longer one EW_BLOCK items. The lengths tried sit on every boundary. */
static void test_elementwise_items_cover_the_array(void **state)
{
    (void)state;
    const size_t B = EW_BLOCK;
    const size_t lengths[] = { 1, 2, 15, 16, 17, 31, 32, 33, 3000, B - 1, B, B + 1, 2 * B - 1,
                               2 * B, 2 * B + 1, 5 * B + 7 };
    for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
        const size_t n = lengths[k], block = nn_cpu_ew_block(n);
        const size_t items = (n + block - 1) / block;
        size_t next = 0;
        for (size_t i = 0; i < items; i++) {
            size_t lo, hi;
            nn_cpu_ew_range(n, (int)i, &lo, &hi);
            if (lo != next || hi <= lo || lo % 16 != 0)
                fail_msg("n %zu: item %zu is [%zu, %zu), the last ended at %zu", n, i, lo, hi, next);
            next = hi;
        }
        if (next != n)
            fail_msg("n %zu: the items end at %zu", n, next);
        const size_t want = n >= 2 * B ? (n + B - 1) / B : n > 16 ? 2 : 1;
        if (items != want)
            fail_msg("n %zu: %zu items, not %zu", n, items, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_threads_leave_a_busy_core),
        cmocka_unit_test(test_own_ticks_are_not_another_programs),
        cmocka_unit_test(test_thread_rule_on_simulated_loads),
        cmocka_unit_test(test_thread_trial_on_simulated_steps),
        cmocka_unit_test(test_operations_never_wait_for_absent_workers),
        cmocka_unit_test(test_elementwise_items_cover_the_array),
    };
    return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}

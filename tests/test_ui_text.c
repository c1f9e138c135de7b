/* tests/test_ui_text.c - the lab's text and data helpers as pure functions:
 * progress and phase bars, durations and SI numbers, the job status line,
 * the preset-name sanitiser, the batch list and crossover finder of the
 * sweep, and the /proc/stat parser on sample text. One cmocka group. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "format.h"
#include "sweep.h"
#include "sysinfo.h"

static void assert_bar(int width, double frac, int utf8, const char *want)
{
    char buf[256];
    int n = ui_bar_text(buf, sizeof buf, width, frac, utf8);
    assert_string_equal(buf, want);
    assert_int_equal(n, (int)strlen(want));
}

static void test_progress_bar(void **state)
{
    (void)state;
    assert_bar(10, 0.45, 0, "####------");
    assert_bar(10, 0, 0, "----------");
    assert_bar(10, 1, 0, "##########");
    assert_bar(10, 1.5, 0, "##########");
    assert_bar(10, NAN, 0, "----------");
    assert_bar(10, -2, 0, "----------");
    assert_bar(4, 0.5, 1, "\u2588\u2588\u2591\u2591");
    assert_bar(4, 0.4, 1, "\u2588\u258c\u2591\u2591");    /* 1.6 cells: a full one and a half */
    assert_bar(4, 0.03125, 1, "\u258f\u2591\u2591\u2591"); /* one eighth of a cell */
    assert_bar(0, 0.5, 1, "");
    char small[8];                                       /* never past the buffer */
    assert_true(ui_bar_text(small, sizeof small, 10, 1, 1) <= 7);
    assert_string_equal(small, "\u2588\u2588");
}

static void test_phase_split(void **state)
{
    int cols[5];
    (void)state;
    assert_int_equal(ui_phase_split((const double[]){ 10, 20, 30, 40, 0 }, 5, 10, cols), 10);
    assert_memory_equal(cols, ((const int[]){ 1, 2, 3, 4, 0 }), sizeof cols);
    assert_int_equal(ui_phase_split((const double[]){ 1, 1, 1, 0, 0 }, 5, 10, cols), 10);
    assert_memory_equal(cols, ((const int[]){ 4, 3, 3, 0, 0 }), sizeof cols);
    assert_int_equal(ui_phase_split((const double[]){ 0, 0, 0, 0, 0 }, 5, 10, cols), 0);
    assert_int_equal(ui_phase_split((const double[]){ 16, 178, 191, 129, 0.1 }, 5, 40, cols), 40);
    assert_int_equal(cols[4], 0);                        /* 0.1 us of sync gets no column */
}

static void test_durations_and_numbers(void **state)
{
    static const struct { double v; const char *s; } d[] = {
        { 7, "0:07" }, { 723, "12:03" }, { 3723, "1:02:03" }, { 0.4, "0:00" }, { -1, "--:--" },
        { NAN, "--:--" }, { INFINITY, "--:--" },
    }, si[] = {
        { 950, "950" }, { 61820, "61.8k" }, { 1.5e6, "1.5M" }, { 0.25, "0.25" }, { 999999, "1.0M" },
        { 12.34, "12.3" }, { 101770, "101.8k" }, { 999.7, "1.0k" }, { NAN, "n/a" },
    };
    char buf[32];
    (void)state;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        ui_fmt_duration(d[i].v, buf, sizeof buf);
        assert_string_equal(buf, d[i].s);
    }
    for (size_t i = 0; i < sizeof si / sizeof si[0]; i++) {
        ui_fmt_si(si[i].v, buf, sizeof buf);
        assert_string_equal(buf, si[i].s);
    }
}

static void test_job_status(void **state)
{
    nn_snapshot s;
    char buf[256];
    (void)state;
    memset(&s, 0, sizeof s);
    s.state = NN_JOB_RUNNING;
    s.epoch = 1;
    s.epochs = 3;
    s.step = 845;
    s.total_steps = 5625;
    s.has_rate = 1;
    s.samples_per_s = 61820;
    s.eta_s = 3.2;
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_string_equal(buf, "epoch 1/3  step 845/5625  61.8k samples/s  ETA 0:03");
    ui_fmt_job_status(&s, buf, sizeof buf, 1);
    assert_string_equal(buf, "ep 1/3  845/5625  61.8k/s  ETA 0:03");
    s.state = NN_JOB_PAUSED;
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_string_equal(buf, "epoch 1/3  step 845/5625  61.8k samples/s  ETA --:--");
    s.has_rate = 0;
    s.state = NN_JOB_RUNNING;
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_string_equal(buf, "epoch 1/3  step 845/5625  - samples/s  ETA --:--");
    s.state = NN_JOB_PREPARING;
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_non_null(strstr(buf, "preparing"));
    s.state = NN_JOB_FAILED;
    strcpy(s.error, "out of memory");
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_string_equal(buf, "failed: out of memory");
}

static void assert_name(const char *in, const char *want)
{
    char out[64];
    if (!want) {
        assert_int_equal(ui_sanitize_name(in, out, sizeof out), -1);
        return;
    }
    assert_int_equal(ui_sanitize_name(in, out, sizeof out), 0);
    assert_string_equal(out, want);
}

static void test_sanitize_name(void **state)
{
    char long_in[200], small[6];
    (void)state;
    assert_name("my test/preset", "my-test-preset");
    assert_name("../../etc/passwd", "etc-passwd");
    assert_name("lenet5-cifar10", "lenet5-cifar10");
    assert_name("name.ini", "name");
    assert_name("a--b", "a-b");
    assert_name("-x", "x");
    assert_name(".hidden.", "hidden");
    assert_name("Mnist_MLP v2!", "Mnist_MLP-v2");
    assert_name("\xc3\x89t\xc3\xa9 2024", "t-2024");   /* "Été 2024": non-ASCII becomes '-' */
    assert_name("", NULL);
    assert_name("   ", NULL);
    assert_name("/", NULL);
    assert_name(".ini", "ini");                   /* a dot file no more */
    memset(long_in, 'a', sizeof long_in - 1);
    long_in[sizeof long_in - 1] = '\0';
    char out[64];
    assert_int_equal(ui_sanitize_name(long_in, out, sizeof out), 0);
    assert_int_equal(strlen(out), 48);
    assert_int_equal(ui_sanitize_name("abcdefgh", small, sizeof small), 0);
    assert_string_equal(small, "abcde");
}

static void test_sweep_batches(void **state)
{
    int b[32];
    (void)state;
    assert_int_equal(ui_sweep_batches(1, 4096, b, 32), 13);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[12], 4096);
    assert_int_equal(ui_sweep_batches(3, 20, b, 32), 3);
    assert_memory_equal(b, ((const int[]){ 4, 8, 16 }), 3 * sizeof(int));
    assert_int_equal(ui_sweep_batches(0, 0, b, 32), 0);
    assert_int_equal(ui_sweep_batches(1, 1 << 30, b, 5), 5);
}

static void test_crossover(void **state)
{
    const double base[] = { 10, 10, 10, 10, 10 };
    (void)state;
    assert_int_equal(ui_sweep_crossover(base, (const double[]){ 1, 5, 20, 30, 40 }, 5), 2);
    assert_int_equal(ui_sweep_crossover(base, (const double[]){ 20, 30, 40, 50, 60 }, 5), 0);
    assert_int_equal(ui_sweep_crossover(base, (const double[]){ 1, 2, 3, 4, 5 }, 5), -1);
    /* ahead, behind, then ahead for good: the lead that lasts starts at 3 */
    assert_int_equal(ui_sweep_crossover(base, (const double[]){ 1, 20, 5, 30, 40 }, 5), 3);
    /* ahead and then behind at the end: no crossover */
    assert_int_equal(ui_sweep_crossover(base, (const double[]){ 1, 20, 30, 40, 5 }, 5), -1);
    /* equal is not ahead */
    assert_int_equal(ui_sweep_crossover(base, (const double[]){ 1, 10, 10, 10, 11 }, 5), 4);
    /* unmeasured points (a cancelled sweep) say nothing */
    assert_int_equal(ui_sweep_crossover(base, (const double[]){ 1, NAN, 20, 30, NAN }, 5), 2);
    assert_int_equal(ui_sweep_crossover((const double[]){ 10, 10, 10, NAN, NAN },
                                        (const double[]){ 1, 20, 30, 40, 50 }, 5), 1);
    assert_int_equal(ui_sweep_crossover(base, (const double[]){ NAN, NAN, NAN, NAN, NAN }, 5), -1);
    assert_int_equal(ui_sweep_crossover(base, base, 0), -1);
}

static const char proc_stat[] =
    "cpu  100 0 50 800 10 0 5 0 0 0\n"
    "cpu0 60 0 30 400 5 0 3 0 0 0\n"
    "cpu1 40 0 20 400 5 0 2 0 0 0\n"
    "intr 12345 1 2 3\n"
    "ctxt 999\n"
    "btime 1700000000\n";

static void test_proc_stat(void **state)
{
    ui_cpu_times t[4], later[4];
    double pct[4];
    (void)state;
    assert_int_equal(ui_proc_stat_parse(proc_stat, t, 4), 2);
    assert_int_equal(t[0].busy, 60 + 30 + 3);            /* user + system + softirq */
    assert_int_equal(t[0].total, 93 + 400 + 5);          /* + idle + iowait */
    assert_int_equal(t[1].busy, 62);
    assert_int_equal(t[1].total, 467);
    /* 100 jiffies later: core 0 busy for 50 of them, core 1 for all */
    assert_int_equal(ui_proc_stat_parse("cpu0 110 0 30 450 5 0 3 0 0 0\ncpu1 140 0 20 400 5 0 2 0 0 0\n",
                                        later, 4), 2);
    ui_cpu_percent(t, later, 2, pct);
    assert_true(fabs(pct[0] - 50.0) < 1e-9);
    assert_true(fabs(pct[1] - 100.0) < 1e-9);
    ui_cpu_percent(t, t, 2, pct);                        /* no time passed */
    assert_true(pct[0] == 0.0 && pct[1] == 0.0);
    /* a Linux 2.4 line has four fields */
    assert_int_equal(ui_proc_stat_parse("cpu0 1 2 3 4\n", t, 4), 1);
    assert_int_equal(t[0].busy, 6);
    assert_int_equal(t[0].total, 10);
    /* cores beyond max are left out; a gap in the numbering keeps the index */
    assert_int_equal(ui_proc_stat_parse("cpu0 1 1 1 1\ncpu3 1 1 1 1\n", t, 4), 4);
    assert_int_equal(ui_proc_stat_parse("cpu0 1 1 1 1\ncpu9 1 1 1 1\n", t, 4), 1);
    assert_int_equal(ui_proc_stat_parse("cpu0 abc\n", t, 4), -1);
    assert_int_equal(ui_proc_stat_parse("cpu0 1 2\n", t, 4), -1);
    assert_int_equal(ui_proc_stat_parse("intr 1 2 3\n", t, 4), -1);
    assert_int_equal(ui_proc_stat_parse("", t, 4), -1);
}

static void test_sysinfo_reasons(void **state)
{
    static ui_sysinfo si;
    (void)state;
    ui_sysinfo_open(&si);
    /* NVML answers, or the reason why not is kept for the screen */
    assert_true(si.gpu.valid || si.gpu.why[0] != '\0');
    ui_sysinfo_sample(&si);
    if (si.n_cpus > 0) {
        assert_true(si.has_cpu);
        for (int i = 0; i < si.n_cpus; i++)
            assert_true(si.cpu_pct[i] >= 0.0 && si.cpu_pct[i] <= 100.0);
    }
    ui_sysinfo_close(&si);
    assert_false(si.gpu.valid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_bar),
        cmocka_unit_test(test_phase_split),
        cmocka_unit_test(test_durations_and_numbers),
        cmocka_unit_test(test_job_status),
        cmocka_unit_test(test_sanitize_name),
        cmocka_unit_test(test_sweep_batches),
        cmocka_unit_test(test_crossover),
        cmocka_unit_test(test_proc_stat),
        cmocka_unit_test(test_sysinfo_reasons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

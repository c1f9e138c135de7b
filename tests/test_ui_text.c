/* tests/test_ui_text.c - the lab's text and data helpers as pure functions:
 * progress and phase bars, durations and SI numbers, the job status line,
 * the preset-name sanitiser, the /proc/stat parser on sample text, and the
 * Explain panel: text wrapping, the panel's lines at every size, and the
 * calibration thread's failure path. What the
 * panel explains and the sweep's rules are the analysis layer's
 * (tests/test_analysis.c, tests/test_front_ends.c). One cmocka group. */
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "text/calib.h"
#include "text/explain_text.h"
#include "text/format.h"
#include "text/scroll.h"
#include "text/overlay.h"
#include "text/sysinfo.h"

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
    s.elapsed_s = 18.2;              /* 21.5 ms a step: 4780 steps left take 102.8 s */
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_string_equal(buf, "epoch 1/3  step 845/5625  61.8k samples/s  00:18<01:43  22ms/step");
    ui_fmt_job_status(&s, buf, sizeof buf, 1);
    assert_string_equal(buf, "ep 1/3  845/5625  61.8k/s  00:18<01:43 22ms/step");
    s.state = NN_JOB_PAUSED;         /* a paused job's end is not coming */
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_string_equal(buf, "epoch 1/3  step 845/5625  61.8k samples/s  00:18<?  22ms/step");
    s.has_rate = 0;
    s.state = NN_JOB_RUNNING;
    s.step = 0;
    s.elapsed_s = 0;
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_string_equal(buf, "epoch 1/3  step 0/5625  - samples/s  00:00<?  -/step");
    /* a finished job's headline is its time */
    s.state = NN_JOB_DONE;
    s.step = 5625;
    s.elapsed_s = 52.3;
    s.has_rate = 1;
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_string_equal(buf, "done in 00:52 (52s 9ms/step)  61.8k samples/s");
    s.state = NN_JOB_PREPARING;
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_non_null(strstr(buf, "preparing"));
    s.state = NN_JOB_FAILED;
    strcpy(s.error, "out of memory");
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_string_equal(buf, "failed: out of memory");
    /* a job stopped by a NaN loss says so, not a step count and an ETA */
    s.state = NN_JOB_DIVERGED;
    strcpy(s.error, "loss became NaN at step 2 (lr 1e+30): training stopped");
    ui_fmt_job_status(&s, buf, sizeof buf, 0);
    assert_string_equal(buf, "diverged: loss became NaN at step 2 (lr 1e+30): training stopped");
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

/* An earlier run's label names its preset when the runs on the chart are
 * of different presets, and only then. */
static void test_overlay_labels(void **state)
{
    static ui_overlay o;
    (void)state;
    o.n = 2;
    for (int i = 0; i < 2; i++) {
        char label[64];              /* its own buffer: -O1's restrict check sees o as one object */
        snprintf(label, sizeof label, "cpu, batch %d, lr 0.001", 32 << i);
        snprintf(o.run[i].label, sizeof o.run[i].label, "%s", label);
        snprintf(o.run[i].preset, sizeof o.run[i].preset, "%s", "mnist-mlp-128");
        snprintf(o.run[i].label_preset, sizeof o.run[i].label_preset, "mnist-mlp-128: %s", label);
    }
    assert_string_equal(ui_overlay_label(&o, 0, "mnist-mlp-128"), "cpu, batch 32, lr 0.001");
    assert_string_equal(ui_overlay_label(&o, 1, "lenet5"), "mnist-mlp-128: cpu, batch 64, lr 0.001");
    snprintf(o.run[1].preset, sizeof o.run[1].preset, "%s", "lenet5");   /* the kept runs differ */
    assert_string_equal(ui_overlay_label(&o, 0, "mnist-mlp-128"), "mnist-mlp-128: cpu, batch 32, lr 0.001");
    nn_svg_past past[UI_OVERLAY_MAX];
    assert_int_equal(ui_overlay_svg(&o, "mnist-mlp-128", past, UI_OVERLAY_MAX), 2);
    assert_string_equal(past[0].label, "mnist-mlp-128: cpu, batch 32, lr 0.001");
}

static void test_sysinfo_reasons(void **state)
{
    static ui_sysinfo si;
    (void)state;
    ui_sysinfo_open(&si);
    /* NVML answers, or the reason why not is kept for the screen */
    assert_true(si.gpu.valid || si.gpu.why[0] != '\0');
    /* no driver: one row's words, not dlerror's two rows */
    assert_null(strstr(si.gpu.why, "cannot open shared object file"));
    char why[256];
    ui_nvml_why_not_loaded("libnvidia-ml.so.1: cannot open shared object file: No such file or directory", why,
                           sizeof why);
    assert_string_equal(why, "no NVIDIA driver");
    ui_nvml_why_not_loaded("libnvidia-ml.so.1: undefined symbol: x", why, sizeof why);   /* another: as it is */
    assert_string_equal(why, "libnvidia-ml.so.1: undefined symbol: x");
    ui_sysinfo_sample(&si);
    if (si.n_cpus > 0) {
        assert_true(si.has_cpu);
        for (int i = 0; i < si.n_cpus; i++)
            assert_true(si.cpu_pct[i] >= 0.0 && si.cpu_pct[i] <= 100.0);
    }
    ui_sysinfo_close(&si);
    assert_false(si.gpu.valid);
}


/* ---- the Explain panel ------------------------------------------------------------ */

static void test_wrap_next(void **state)
{
    const char *next;
    (void)state;
    assert_int_equal(ui_wrap_next("the quick brown fox", 10, &next), 9);   /* "the quick" */
    assert_string_equal(next, "brown fox");
    assert_int_equal(ui_wrap_next("brown fox", 10, &next), 9);            /* fits whole */
    assert_string_equal(next, "");
    assert_int_equal(ui_wrap_next("abcdefghijkl mn", 5, &next), 5);       /* a long word is cut */
    assert_string_equal(next, "fghijkl mn");
    assert_int_equal(ui_wrap_next("abcde fgh", 5, &next), 5);             /* a space right after the row */
    assert_string_equal(next, "fgh");
    /* a path longer than the row breaks after a '/', its file name whole */
    assert_int_equal(ui_wrap_next("/work/presets/mnist-mlp-128.ini", 24, &next), 14);
    assert_string_equal(next, "mnist-mlp-128.ini");
    assert_int_equal(ui_wrap_next("/usr/share/datasets/fashion-mnist)", 32, &next), 20);
    assert_string_equal(next, "fashion-mnist)");
    assert_int_equal(ui_wrap_next("", 5, &next), 0);
    assert_int_equal(ui_wrap_next("abc", 0, &next), 0);
    assert_int_equal(ui_text_rows(10, "the quick brown fox"), 2);
    assert_int_equal(ui_text_rows(10, ""), 0);
}

/* A number keeps its unit and the word that names it on its row. */
static void test_wrap_keeps_units(void **state)
{
    const char *next;
    (void)state;
    /* "predicted 1098 us/step": the row ends before the number, not before its unit */
    assert_int_equal(ui_wrap_next("predicted 1098 us/step for T4", 17, &next), 9);
    assert_string_equal(next, "1098 us/step for T4");
    /* "+ work 1069": the label goes down with its value */
    assert_int_equal(ui_wrap_next("calls 0.6 + work 1069", 19, &next), 11);
    assert_string_equal(next, "work 1069");
    /* "24.0 GB" whole, and a comma after the unit still counts */
    assert_int_equal(ui_wrap_next("needs ~363 MB of 24.0 GB, free", 23, &next), 13);
    assert_string_equal(next, "of 24.0 GB, free");
    /* when only a worse break fits: the label rule gives way before the unit's */
    assert_int_equal(ui_wrap_next("at 10 s", 5, &next), 2);
    assert_string_equal(next, "10 s");
    assert_int_equal(ui_wrap_next("10 s", 3, &next), 2);   /* and a unit's before a hard cut */
    /* columns, not bytes: "784→128" is 7 columns */
    assert_int_equal(ui_wrap_next("784\u2192128 relu", 7, &next), 9);
    assert_string_equal(next, "relu");
}

/* A value and its unit in the columns there are: decimals go, the unit never. */
static void test_quantity(void **state)
{
    char buf[32];
    (void)state;
    assert_int_equal(ui_fmt_quantity(61834, "/s", 10, buf, sizeof buf), 0);
    assert_string_equal(buf, "61.8k/s");
    assert_int_equal(ui_fmt_quantity(61834, "/s", 5, buf, sizeof buf), 0);
    assert_string_equal(buf, "62k/s");
    assert_int_equal(ui_fmt_quantity(3.14159, "ms", 6, buf, sizeof buf), 0);
    assert_string_equal(buf, "3.14ms");
    assert_int_equal(ui_fmt_quantity(3.14159, "ms", 3, buf, sizeof buf), 0);
    assert_string_equal(buf, "3ms");
    assert_int_equal(ui_fmt_quantity(3.14159, "ms/step", 3, buf, sizeof buf), -1);
    assert_non_null(strstr(buf, "ms/step"));          /* never "3m" */
    assert_int_equal(ui_fmt_quantity(950, " samples/s", 20, buf, sizeof buf), 0);
    assert_string_equal(buf, "950 samples/s");
    assert_int_equal(ui_text_cols("\u25BC 3"), 3);
}

/* A title gives way between its words; the status keys by whole groups. */
static void test_fit_words_and_keys(void **state)
{
    char buf[128];
    (void)state;
    ui_fit_words("loss, training smoothed (EMA 0.6)", 40, buf, sizeof buf);
    assert_string_equal(buf, "loss, training smoothed (EMA 0.6)");
    ui_fit_words("loss, training smoothed (EMA 0.6)", 20, buf, sizeof buf);
    assert_string_equal(buf, "loss, training");
    ui_fit_words("loss, training smoothed (EMA 0.6)", 6, buf, sizeof buf);
    assert_string_equal(buf, "loss");                  /* no dangling comma */
    const char *keys = "p pause  c cancel  l log  s smooth  e explain  x export  Esc back  ? help  q quit";
    ui_fit_key_groups(keys, 81, buf, sizeof buf);
    assert_string_equal(buf, keys);
    ui_fit_key_groups(keys, 78, buf, sizeof buf);
    assert_true(ui_text_cols(buf) <= 78);
    assert_non_null(strstr(buf, "q quit"));            /* not "q q" */
    assert_non_null(strstr(buf, "? help"));
    assert_null(strstr(buf, "Esc back"));              /* the group that did not fit, whole */
    assert_int_equal(buf[strlen(buf) - 1], 't');
}

/* A setting's value said shorter, never cut mid-word; a path loses its
 * head, its file name whole. */
static void test_fit_value_and_path(void **state)
{
    char buf[256];
    const char *msg = "exported /tmp/tmp.vqTtHDgOn3/data/nnlab/exports/mnist-mlp-128-run-20261128-121128.{csv,json,svg}";
    (void)state;
    ui_fit_value("cpu + gpu (predicted)", 19, 1, buf, sizeof buf);
    assert_string_equal(buf, "cpu + gpu (pred.)");
    ui_fit_value("cpu + gpu (predicted)", 30, 1, buf, sizeof buf);
    assert_string_equal(buf, "cpu + gpu (predicted)");
    ui_fit_value("(default: Space to type one)", 19, 1, buf, sizeof buf);
    assert_string_equal(buf, "default: Space sets");
    ui_fit_value("T4 (predicts a GPU not here)", 19, 1, buf, sizeof buf);
    assert_string_equal(buf, "T4 (predicted)");
    ui_fit_value("/home/teacher/datasets/cifar-10-batches-bin", 19, 0, buf, sizeof buf);
    assert_string_equal(buf, ".../cifar-10-batches-bin");   /* the name alone is over: kept whole */
    ui_fit_value("/home/teacher/datasets/cifar10", 20, 0, buf, sizeof buf);
    assert_string_equal(buf, ".../datasets/cifar10");   /* whole directories go, from the head */
    ui_fit_value("/home/teacher/datasets/cifar10", 19, 0, buf, sizeof buf);
    assert_string_equal(buf, ".../cifar10");
    assert_int_equal(ui_fit_path(msg, 78, 1, buf, sizeof buf), 0);
    assert_true(ui_text_cols(buf) <= 78);
    assert_int_equal(strncmp(buf, "exported \u2026/", 12), 0);
    assert_non_null(strstr(buf, "/mnist-mlp-128-run-20261128-121128.{csv,json,svg}"));
    assert_int_equal(ui_fit_path("no path here at all", 5, 1, buf, sizeof buf), -1);
}

/* The job line in the columns the dashboard leaves it: parts go whole. */
static void test_job_status_fit(void **state)
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
    s.elapsed_s = 5.2;               /* 6.2 ms a step */
    for (int w = 60; w >= 8; w--) {
        ui_fmt_job_status_fit(&s, w, buf, sizeof buf);
        assert_non_null(strstr(buf, "6ms/step"));      /* the per-step figure, unit and all */
        if (w >= 16)
            assert_true(ui_text_cols(buf) <= w);
    }
    ui_fmt_job_status_fit(&s, 42, buf, sizeof buf);
    assert_string_equal(buf, "845/5625  61.8k/s  00:05<00:29  6ms/step");
    ui_fmt_job_status_fit(&s, 29, buf, sizeof buf);
    assert_string_equal(buf, "00:05<00:29  6ms/step");
    s.state = NN_JOB_DONE;
    s.step = 5625;
    s.elapsed_s = 52.3;
    ui_fmt_job_status_fit(&s, 34, buf, sizeof buf);
    assert_string_equal(buf, "done in 00:52 (52s 9ms/step)");
    /* a headline too long for its columns keeps its time and step whole,
     * never "(15s 785us/step, validation" */
    s.val_s = 6.0;
    ui_fmt_job_status_fit(&s, 30, buf, sizeof buf);
    assert_true(ui_text_cols(buf) <= 30);
    assert_null(strchr(buf, '('));
    assert_non_null(strstr(buf, "done in 00:52"));
}

/* A panel's rows seen a view at a time: clamped, paged, and marked. */
static void test_scroll(void **state)
{
    ui_scroll s = { 0, 0, 0 };
    char m[64];
    (void)state;
    assert_int_equal(ui_scroll_clamp(&s, 5, 10), 0);           /* it all fits */
    assert_int_equal(ui_scroll_marker(&s, 5, 10, 1, "PgDn", "PgUp", m, sizeof m), 0);
    assert_string_equal(m, "");
    assert_int_equal(ui_scroll_below(&s, 30, 10), 20);
    ui_scroll_marker(&s, 30, 10, 1, "PgDn", "PgUp", m, sizeof m);
    assert_string_equal(m, "\u25BC 20 more (PgDn)");
    assert_int_equal(ui_scroll_marker(&s, 30, 10, 0, "PgDn", "PgUp", m, sizeof m), 16);
    assert_string_equal(m, "v 20 more (PgDn)");
    assert_true(ui_scroll_move(&s, UI_SCROLL_PAGE_DOWN, 30, 10));
    assert_int_equal(s.top, 9);                                  /* a row of the last page kept */
    assert_false(ui_scroll_move(&s, UI_SCROLL_LINE_UP, 30, 10) && s.top != 8);
    assert_true(ui_scroll_move(&s, UI_SCROLL_BOTTOM, 30, 10));
    assert_int_equal(s.top, 20);                                 /* the last row is the view's last */
    assert_int_equal(ui_scroll_below(&s, 30, 10), 0);
    ui_scroll_marker(&s, 30, 10, 1, "PgDn", "PgUp", m, sizeof m);
    assert_string_equal(m, "\u25B2 top (PgUp)");
    assert_false(ui_scroll_move(&s, UI_SCROLL_PAGE_DOWN, 30, 10));   /* at the end: stays */
    assert_true(ui_scroll_move(&s, UI_SCROLL_TOP, 30, 10));
    assert_int_equal(s.top, 0);
    assert_false(ui_scroll_move(&s, UI_SCROLL_LINE_UP, 30, 10));
    s.top = 25;                                                  /* the text got shorter */
    assert_int_equal(ui_scroll_clamp(&s, 12, 10), 2);
}

static void test_text_wrap(void **state)
{
    static ui_text t;
    (void)state;
    t.n = 0;
    assert_int_equal(ui_text_wrap(&t, UI_TS_OK, 10, 5, "the quick brown fox jumps"), 3);
    assert_string_equal(t.line[0], "the quick");
    assert_string_equal(t.line[1], "brown fox");
    assert_string_equal(t.line[2], "jumps");
    assert_int_equal(t.style[2], UI_TS_OK);
    t.n = 0;                                     /* cut short: the last row says so */
    assert_int_equal(ui_text_wrap(&t, UI_TS_NORMAL, 10, 2, "the quick brown fox jumps"), 2);
    assert_string_equal(t.line[1], "brown f...");
    t.n = 0;
    assert_int_equal(ui_text_wrap(&t, UI_TS_NORMAL, 10, 0, "text"), 0);
}

/* A calibration with round numbers: 100 GFLOP/s, 10 GB/s, 1 us an op. */
static void fake_calibration(nn_calibration *c, const char *device)
{
    memset(c, 0, sizeof *c);
    snprintf(c->device, sizeof c->device, "%s", device);
    nn_machine_description(c->machine, sizeof c->machine);
    c->gemm_gflops = 100;
    c->gemm_gflops_1thread = 50;
    c->mem_gbps = 10;
    c->op_us = 1;
    c->sync_us = 10;
    c->upload_us = 5;
    c->upload_gbps = 5;
    c->host_copy_gbps = 10;
    c->created = 1;
}

static void load_preset(const char *name, nn_preset *p)
{
    char path[512], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void running_snapshot(nn_snapshot *s, const char *device, int batch)
{
    memset(s, 0, sizeof *s);
    s->state = NN_JOB_RUNNING;
    snprintf(s->device, sizeof s->device, "%s", device);
    s->batch = batch;
}

/* The panel at (width, rows): within both, the head first with the regime,
 * why and advice present when there are five rows or more. */
static void check_panel(const nn_explainer *x, int width, int rows, const nn_step_measure *m)
{
    static ui_text t;
    int n = ui_explain_format(x, "cpu", 32, m, width, rows, &t);
    int why = 0, advice = 0;
    assert_int_equal(n, t.n);
    assert_true(n >= 1 && n <= rows);
    for (int i = 0; i < n; i++) {
        if ((int)strlen(t.line[i]) > width)
            fail_msg("%dx%d: row %d is %zu wide: '%s'", width, rows, i, strlen(t.line[i]), t.line[i]);
        why |= strncmp(t.line[i], "why: ", 5) == 0;
        advice |= strncmp(t.line[i], "advice: ", 8) == 0;
    }
    /* the head, wrapped at words over its bold rows when there is room,
     * else cut at a word with "..." */
    char head[64], joined[256] = "";
    snprintf(head, sizeof head, "cpu, batch 32: %s", nn_regime_name(x->e.regime));
    for (int i = 0; i < n && t.style[i] == UI_TS_BOLD; i++)
        snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", i ? " " : "", t.line[i]);
    if ((int)strlen(head) <= width)
        assert_string_equal(t.line[0], head);
    else if (strcmp(joined, head) != 0) {
        assert_memory_equal(t.line[0], head, strlen(t.line[0]) - 3);
        assert_string_equal(t.line[0] + strlen(t.line[0]) - 3, "...");
    }
    assert_int_equal(t.style[0], UI_TS_BOLD);
    if (rows >= 5) {
        assert_true(why);
        assert_true(advice);
    }
}

static int find_row(const ui_text *t, const char *needle)
{
    for (int i = 0; i < t->n; i++)
        if (strstr(t->line[i], needle))
            return i;
    return -1;
}

/* A measured step of `us` microseconds over 20 steps, its parts copy 14 and
 * forward 90 (and the rest unmeasured: only the text is tested here). */
static nn_step_measure measured(double us)
{
    nn_step_measure m;
    memset(&m, 0, sizeof m);
    if (us <= 0)
        return m;
    m.timed_steps = 20;
    m.step_us = us;
    m.part_us[NN_PHASE_COPY] = 14;
    m.part_us[NN_PHASE_FORWARD] = 90;
    m.part_valid = (1u << NN_PHASE_COPY) | (1u << NN_PHASE_FORWARD);
    return m;
}

static void test_explain_panel_text(void **state)
{
    static nn_preset p;
    static nn_explainer x;
    static ui_text t;
    static const int widths[] = { 24, 38, 42, 58, 72, 120 }, heights[] = { 1, 2, 4, 5, 6, 8, 11, 14, 22, 40 };
    nn_calibration cal;
    nn_snapshot s;
    nn_explain_inputs in;
    nn_step_measure none = measured(0), m100 = measured(100);
    char want[64], work[96];
    (void)state;
    load_preset("mnist-mlp-128", &p);
    fake_calibration(&cal, "cpu");
    nn_explainer_reset(&x, &cal, NULL);
    running_snapshot(&s, "cpu", 32);
    assert_int_equal(nn_observe_inputs(&s, &in), 0);
    nn_explainer_update(&x, &p, &in);
    nn_step_measure twice = measured(2.0 * x.e.predicted_us);
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
        for (size_t h = 0; h < sizeof heights / sizeof heights[0]; h++) {
            check_panel(&x, widths[w], heights[h], &twice);
            check_panel(&x, widths[w], heights[h], &none);
            check_panel(&x, widths[w], heights[h], NULL);
        }
    /* tall and wide: everything, in order, and the measured step against the model */
    ui_explain_format(&x, "cpu", 32, &twice, 72, 40, &t);
    snprintf(want, sizeof want, "cpu, batch 32: %s", nn_regime_name(x.e.regime));
    assert_string_equal(t.line[0], want);
    assert_int_equal(find_row(&t, "predicted "), 1);
    assert_int_equal(find_row(&t, "  issue "), 2);
    assert_true(find_row(&t, "ops a step (one per op, estimated)") > 2);
    /* one FLOP time: the arithmetic as the work and why price it */
    snprintf(work, sizeof work, "  work: FLOPs %.0f us", x.e.sized_compute_us);
    assert_true(find_row(&t, work) > 2);
    assert_int_equal(find_row(&t, "at peak"), -1);
    int m = find_row(&t, "measured  ");
    assert_true(m > 2);
    assert_non_null(strstr(t.line[m], "(2.0x the model), mean of 20"));
    assert_int_equal(find_row(&t, "  copy 14  fwd 90"), m + 1);
    assert_true(find_row(&t, "why: ") > m);
    assert_true(find_row(&t, "advice: ") > find_row(&t, "why: "));
    assert_int_equal(t.style[find_row(&t, "advice: ")], UI_TS_OK);
    /* everything, for a panel that scrolls: each row whole (no "..."), the
     * conclusion first, the details after it */
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        ui_explain_format(&x, "cpu", 32, &twice, widths[w], UI_TEXT_ROWS, &t);
        for (int i = 0; i < t.n; i++) {
            size_t len = strlen(t.line[i]);
            assert_true((int)len <= widths[w]);
            if (len >= 3 && strcmp(t.line[i] + len - 3, "...") == 0)
                fail_msg("width %d: row %d cut: '%s'", widths[w], i, t.line[i]);
        }
        assert_true(find_row(&t, "why: ") > find_row(&t, "measured  "));
        assert_true(find_row(&t, "advice: ") > find_row(&t, "why: "));
        if (widths[w] >= 42)         /* a narrower row may cut "  issue" from its figures */
            assert_true(find_row(&t, "  issue ") > find_row(&t, "advice: "));
        assert_int_equal(t.style[t.n - 1], UI_TS_DIM);   /* a detail last, not the advice cut */
    }
    /* short: the details go before why and advice do */
    ui_explain_format(&x, "cpu", 32, &m100, 72, 5, &t);
    assert_int_equal(t.n, 5);
    assert_int_equal(find_row(&t, "  issue "), -1);
    assert_int_equal(find_row(&t, "why: "), 3);
    assert_int_equal(find_row(&t, "advice: "), 4);
    /* shorter still: a row each for the head, the figures and the advice */
    ui_explain_format(&x, "cpu", 32, &m100, 72, 4, &t);
    assert_int_equal(t.n, 4);
    assert_int_equal(find_row(&t, "predicted "), 1);
    assert_int_equal(find_row(&t, "measured  100 us/step"), 2);
    assert_int_equal(find_row(&t, "advice: "), 3);
    assert_int_equal(ui_explain_format(&x, "cpu", 32, &m100, 72, 2, &t), 2);
    /* no step timed yet */
    ui_explain_format(&x, "cpu", 32, &none, 72, 40, &t);
    assert_true(find_row(&t, "measured  - (no step timed yet)") > 0);
    /* no calibration: the reason, and the measurement still */
    nn_step_measure m250 = measured(250);
    nn_explainer_reset(&x, NULL, "calibrating cpu: out of memory");
    ui_explain_format(&x, "cpu", 32, &m250, 40, 10, &t);
    assert_string_equal(t.line[0], "cpu, batch 32");
    assert_int_equal(find_row(&t, "no calibration: calibrating cpu:"), 1);
    assert_int_equal(t.style[1], UI_TS_ERROR);
    assert_true(find_row(&t, "measured  250 us/step, mean of 20") > 1);
    ui_explain_format(NULL, "gpu", 4, NULL, 40, 10, &t);
    assert_int_equal(find_row(&t, "no calibration: none measured"), 1);
    /* calibrated, the job not started */
    nn_explainer_reset(&x, &cal, NULL);
    ui_explain_format(&x, "cpu", 32, &none, 40, 10, &t);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.line[1], "waiting for the job to start");
    assert_int_equal(ui_explain_format(&x, "cpu", 32, &none, 40, 0, &t), 0);
}

static void test_regime_short_and_phases(void **state)
{
    nn_step_measure m;
    char buf[128];
    (void)state;
    assert_string_equal(ui_regime_short(NN_REGIME_OVERHEAD, 0), "ovh");
    assert_string_equal(ui_regime_short(NN_REGIME_MEMORY, 0), "mem");
    assert_string_equal(ui_regime_short(NN_REGIME_COMPUTE, 1), "c");
    assert_string_equal(ui_regime_short((nn_regime)7, 0), "?");
    memset(&m, 0, sizeof m);
    ui_fmt_phase_list(&m, buf, sizeof buf);
    assert_string_equal(buf, "");
    m.timed_steps = 20;
    m.step_us = 241.44;
    m.part_valid = 0x1f;
    m.part_us[NN_PHASE_COPY] = 16;
    m.part_us[NN_PHASE_FORWARD] = 94.4;
    m.part_us[NN_PHASE_BACKWARD] = 100;
    m.part_us[NN_PHASE_OPTIMIZER] = 31;
    m.part_us[NN_PHASE_SYNC] = 0.04;
    ui_fmt_phase_list(&m, buf, sizeof buf);
    assert_string_equal(buf, "copy 16  fwd 94  bwd 100  opt 31  sync 0.0");
    /* a CUDA graph holds forward, backward and optimizer */
    m.part_valid = (1u << NN_PHASE_COPY) | (1u << NN_PHASE_SYNC) | (1u << NN_PART_GRAPH);
    m.part_us[NN_PART_GRAPH] = 250;
    ui_fmt_phase_list(&m, buf, sizeof buf);
    assert_string_equal(buf, "copy 16  sync 0.0  graph 250");
    char small[12];
    ui_fmt_phase_list(&m, small, sizeof small);  /* cut, never past the buffer */
    assert_true(strlen(small) < sizeof small);
}

/* The lab's calibration is an engine job: an unknown device is refused
 * when it starts, and finishing or polling with nothing running is safe. */
static void test_calib_job_failure(void **state)
{
    ui_calib_run run;
    nn_calibration cal;
    char note[NN_ERR_LEN], err[NN_ERR_LEN], what[64];
    double fraction = -1;
    (void)state;
    assert_int_equal(ui_calib_start(&run, "no-such-device", 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown device 'no-such-device'"));
    assert_null(run.job);
    assert_int_equal(ui_calib_finish(&run, &cal, note, sizeof note, err, sizeof err), -1);
    assert_int_equal(ui_calib_poll(&run, &fraction, what, sizeof what), 1);
}

/* A title keeps whole parts: never "loss ever" for "loss every 500 steps". */
static void test_fit_parts(void **state)
{
    (void)state;
    char buf[256];
    const char *t = "nnlab - mnist-mlp-128 on cpu (1 thread), batch 32, loss every 500 steps  data: x";
    ui_fit_parts(t, 59, buf, sizeof buf);
    assert_string_equal(buf, "nnlab - mnist-mlp-128 on cpu (1 thread), batch 32");
    ui_fit_parts(t, 200, buf, sizeof buf);
    assert_string_equal(buf, t);
    ui_fit_parts(t, 72, buf, sizeof buf);
    assert_string_equal(buf, "nnlab - mnist-mlp-128 on cpu (1 thread), batch 32, loss every 500 steps");
    ui_fit_parts("one-long-part-without-separators here", 20, buf, sizeof buf);
    assert_true(ui_text_cols(buf) <= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_parts),
        cmocka_unit_test(test_progress_bar),
        cmocka_unit_test(test_phase_split),
        cmocka_unit_test(test_durations_and_numbers),
        cmocka_unit_test(test_job_status),
        cmocka_unit_test(test_sanitize_name),
        cmocka_unit_test(test_proc_stat),
        cmocka_unit_test(test_sysinfo_reasons),
        cmocka_unit_test(test_overlay_labels),
        cmocka_unit_test(test_wrap_next),
        cmocka_unit_test(test_text_wrap),
        cmocka_unit_test(test_wrap_keeps_units),
        cmocka_unit_test(test_quantity),
        cmocka_unit_test(test_fit_words_and_keys),
        cmocka_unit_test(test_job_status_fit),
        cmocka_unit_test(test_fit_value_and_path),
        cmocka_unit_test(test_scroll),
        cmocka_unit_test(test_explain_panel_text),
        cmocka_unit_test(test_regime_short_and_phases),
        cmocka_unit_test(test_calib_job_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

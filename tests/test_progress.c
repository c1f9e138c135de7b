/* tests/test_progress.c - the figures a class reads on screen, worked out once
 * (nnlab/progress.h): tqdm's elapsed<remaining, Keras's time per step, a
 * finished job's headline, a race's ratio, the per-epoch history; and the
 * export writers (nnlab/export.h): a run's CSV and JSON read back, the files
 * and their folder. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "nnlab/export.h"
#include "nnlab/progress.h"
#include "test_tmp.h"
#include "util.h"

static void test_clock(void **state)
{
    static const struct { double s; const char *want; } c[] = {
        { 0, "00:00" }, { 18.2, "00:18" }, { 59.6, "01:00" }, { 723, "12:03" }, { 3723, "1:02:03" },
        { -1, "?" }, { NAN, "?" }, { INFINITY, "?" },
    };
    char buf[32];
    (void)state;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        nn_format_clock(c[i].s, buf, sizeof buf);
        assert_string_equal(buf, c[i].want);
    }
}

static void test_per_step(void **state)
{
    static const struct { double s; const char *want; } c[] = {
        { 0.028, "28ms/step" }, { 0.00045, "450us/step" }, { 2.2, "2s/step" }, { 0.001, "1ms/step" },
        { 0, "-/step" }, { NAN, "-/step" },
    };
    char buf[32];
    (void)state;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        nn_format_per_step(c[i].s, buf, sizeof buf);
        assert_string_equal(buf, c[i].want);
    }
}

static void test_times(void **state)
{
    nn_job_times t;
    char buf[64];
    (void)state;
    /* 52.3 s for 1875 of 3750 steps: 27.9 ms a step, as many again to go */
    nn_job_times_at(52.3, 1875, 3750, 0, &t);
    assert_true(t.has_per_step && t.has_remaining);
    assert_true(fabs(t.per_step_s - 52.3 / 1875) < 1e-12);
    assert_true(fabs(t.remaining_s - 52.3) < 1e-9);
    assert_true(fabs(t.total_s - 104.6) < 1e-9);
    nn_format_elapsed_remaining(&t, buf, sizeof buf);
    assert_string_equal(buf, "00:52<00:52");
    nn_format_keras(&t, buf, sizeof buf);
    assert_string_equal(buf, "52s 28ms/step");
    /* ended: nothing remains, whatever the step count (a cancelled job) */
    nn_job_times_at(7.0, 100, 3750, 1, &t);
    assert_true(t.has_remaining && t.remaining_s == 0 && t.total_s == 7.0);
    nn_format_elapsed_remaining(&t, buf, sizeof buf);
    assert_string_equal(buf, "00:07<00:00");
    /* no step yet: no rate, remaining unknown */
    nn_job_times_at(0.0, 0, 3750, 0, &t);
    assert_false(t.has_per_step || t.has_remaining);
    nn_format_elapsed_remaining(&t, buf, sizeof buf);
    assert_string_equal(buf, "00:00<?");
    nn_format_keras(&t, buf, sizeof buf);
    assert_string_equal(buf, "0s -/step");
}

static nn_snapshot snap(nn_job_state st, const char *device, double elapsed, long step, long total)
{
    nn_snapshot s;
    memset(&s, 0, sizeof s);
    s.state = st;
    snprintf(s.device, sizeof s.device, "%s", device);
    s.elapsed_s = elapsed;
    s.step = step;
    s.total_steps = total;
    return s;
}

static void test_headline(void **state)
{
    char buf[160];
    (void)state;
    nn_snapshot s = snap(NN_JOB_DONE, "cpu", 52.3, 1875, 1875);
    nn_format_headline(&s, buf, sizeof buf);
    assert_string_equal(buf, "done in 00:52 (52s 28ms/step)");
    s = snap(NN_JOB_CANCELLED, "cpu", 7.2, 100, 1875);
    nn_format_headline(&s, buf, sizeof buf);
    assert_string_equal(buf, "cancelled after 00:07 (7s 72ms/step, 100 of 1875 steps)");
    s = snap(NN_JOB_RUNNING, "cpu", 18.2, 845, 5625);
    nn_format_headline(&s, buf, sizeof buf);
    assert_string_equal(buf, "running 00:18<01:43");
    s.state = NN_JOB_PAUSED;         /* paused: its end is not coming */
    nn_job_times t;
    nn_job_times_of(&s, &t);
    assert_false(t.has_remaining);
}

/* A calibration has no steps: its pace is its fraction done. */
static void test_calibration_times(void **state)
{
    nn_job_times t;
    char buf[64];
    (void)state;
    nn_snapshot s = snap(NN_JOB_RUNNING, "cpu", 3.0, 0, 0);
    s.kind = NN_JOB_CALIBRATE;
    s.fraction_done = 0.25;          /* a quarter in 3 s: 9 s to go */
    nn_job_times_of(&s, &t);
    assert_true(t.has_remaining && fabs(t.remaining_s - 9.0) < 1e-9 && fabs(t.total_s - 12.0) < 1e-9);
    assert_false(t.has_per_step);
    nn_format_elapsed_remaining(&t, buf, sizeof buf);
    assert_string_equal(buf, "00:03<00:09");
    s.fraction_done = 0;             /* no pace yet */
    nn_job_times_of(&s, &t);
    assert_false(t.has_remaining);
    s.state = NN_JOB_DONE;
    nn_job_times_of(&s, &t);
    assert_true(t.has_remaining && t.remaining_s == 0 && t.total_s == 3.0);
}

static void test_race_ratio(void **state)
{
    int faster = -1;
    (void)state;
    nn_snapshot a = snap(NN_JOB_DONE, "cpu", 10.0, 500, 500), b = snap(NN_JOB_DONE, "cpu-ref", 25.0, 500, 500);
    /* the ratio is of the times shown: 25 s / 10 s */
    assert_true(fabs(nn_race_ratio(&a, &b, &faster) - 2.5) < 1e-12);
    assert_int_equal(faster, 0);
    assert_true(fabs(nn_race_ratio(&b, &a, &faster) - 2.5) < 1e-12);
    assert_int_equal(faster, 1);
    b.state = NN_JOB_CANCELLED;      /* cut short: unequal work, no ratio */
    assert_true(nn_race_ratio(&a, &b, &faster) == 0.0);
    b = snap(NN_JOB_DONE, "cpu-ref", 0.0, 500, 500);
    assert_true(nn_race_ratio(&a, &b, &faster) == 0.0);
}

/* The race: 17.684 s against 1.8675 s is shown "17.68 / 1.87", so
 * its ratio is 9.45 (17.68 / 1.87), not the unrounded 9.47; a race under a
 * second keeps three digits of the faster time. */
static void test_race_ratio_shown(void **state)
{
    int faster = -1;
    char shown[64];
    (void)state;
    nn_snapshot a = snap(NN_JOB_DONE, "cpu", 1.8675, 500, 500), b = snap(NN_JOB_DONE, "cpu-ref", 17.684, 500, 500);
    int d = nn_race_decimals(&a, &b);
    assert_int_equal(d, 2);
    double r = nn_race_ratio(&a, &b, &faster);
    assert_int_equal(faster, 0);
    snprintf(shown, sizeof shown, "%.2fx: %.*f/%.*f", r, d, 17.684, d, 1.8675);
    assert_string_equal(shown, "9.45x: 17.68/1.87");
    a = snap(NN_JOB_DONE, "cpu", 0.01234, 500, 500);
    b = snap(NN_JOB_DONE, "cpu-ref", 0.05678, 500, 500);
    d = nn_race_decimals(&a, &b);
    assert_int_equal(d, 4);
    assert_true(fabs(nn_race_ratio(&a, &b, &faster) - 0.0568 / 0.0123) < 1e-12);
    assert_true(fabs(nn_shown_ratio(2.004, 0.004, 2)) == 0.0);   /* 0.00: no ratio */
}

/* One rule: the per-step time and samples/s of a headline are the training
 * steps' (the timed mean, the phase bar's statistic); validation apart. */
static void test_training_apart(void **state)
{
    char buf[160];
    nn_job_times t;
    (void)state;
    nn_snapshot s = snap(NN_JOB_DONE, "cpu", 12.4, 18750, 18750);
    s.val_s = 1.1;
    s.timed_steps = 18750;
    s.us_per_step = 604.0;           /* 18750 x 604 us = 11.3 s of training */
    s.has_rate = 1;
    s.samples_per_s = 32 / 604e-6;
    nn_job_times_of(&s, &t);
    assert_true(fabs(t.train_s - 11.3) < 1e-9 && fabs(t.val_s - 1.1) < 1e-9);
    assert_true(fabs(t.per_step_s - 604e-6) < 1e-12);
    nn_format_headline(&s, buf, sizeof buf);
    assert_string_equal(buf, "done in 00:12 (11s 604us/step, validation 1s)");
    nn_format_steps_line(&s, buf, sizeof buf);
    assert_string_equal(buf, "18750 steps: training 11.30 s (52980 samples/s), validation 1.10 s");
    /* remaining at the pace so far, validations in */
    s.state = NN_JOB_RUNNING;
    s.step = 9375;
    s.elapsed_s = 6.2;
    s.val_s = 0.55;
    nn_job_times_of(&s, &t);
    assert_true(fabs(t.remaining_s - 6.2) < 1e-9);
    s.val_s = 0;                     /* no validation: nothing said of it */
    s.state = NN_JOB_DONE;
    nn_format_steps_line(&s, buf, sizeof buf);
    assert_null(strstr(buf, "validation"));
}

/* Epoch 1: three points over 25 steps, then validation; epoch 2: one point,
 * no validation (cancelled, say). */
static const nn_loss_point pts[] = {
    { 10, 1, 10, 2.0f, 1.0 }, { 20, 1, 20, 1.0f, 2.0 }, { 25, 1, 25, 4.0f, 2.5 }, { 35, 2, 10, 0.5f, 4.0 },
};
static const nn_epoch_result eps[] = { { 1, 25, 0.9f, 0.75f, 1, 3.0, 0.0 } };

static void test_epoch_history(void **state)
{
    nn_epoch_row r[4];
    (void)state;
    int n = nn_epoch_history(pts, 4, eps, 1, r, 4);
    assert_int_equal(n, 2);
    /* the epoch's mean: (2.0 x 10 + 1.0 x 10 + 4.0 x 5) / 25 steps = 2.0; the
     * last point alone (4.0) or the points' plain mean (2.33) would differ */
    assert_int_equal(r[0].epoch, 1);
    assert_true(r[0].has_train_loss && fabs(r[0].train_loss - 2.0) < 1e-9);
    assert_true(r[0].has_val && fabs(r[0].val_loss - 0.9) < 1e-6);
    assert_true(r[0].has_accuracy && fabs(r[0].val_accuracy - 0.75) < 1e-6);
    assert_int_equal(r[0].step, 25);
    assert_true(r[0].time_s == 3.0 && r[0].seconds == 3.0);   /* validation's time in */
    assert_int_equal(r[1].epoch, 2);
    assert_true(r[1].has_train_loss && fabs(r[1].train_loss - 0.5) < 1e-9);
    assert_false(r[1].has_val);
    assert_true(r[1].time_s == 4.0 && r[1].seconds == 1.0);
    assert_int_equal(nn_epoch_history(pts, 4, eps, 1, r, 1), 1);   /* max is kept */
    assert_int_equal(nn_epoch_history(NULL, 0, eps, 1, r, 4), 1);   /* validation alone */
    assert_false(r[0].has_train_loss);
}

/* A sweep's times count the jobs it runs: a predicted device runs none. */
static void test_sweep_times(void **state)
{
    static nn_sweep sw;
    nn_job_times t;
    (void)state;
    memset(&sw, 0, sizeof sw);
    sw.n_devices = 2;
    sw.n_batches = 3;
    sw.predicted[1] = 1;             /* its points are DONE at once, and no job */
    for (int i = 0; i < 3; i++)
        sw.pt[1][i].state = NN_POINT_DONE;
    sw.pt[0][0].state = NN_POINT_DONE;
    sw.pt[0][1].state = NN_POINT_FAILED;   /* ran, and took its time */
    sw.pt[0][2].state = NN_POINT_RUNNING;
    nn_sweep_times(&sw, 110.0, &t);
    assert_true(t.elapsed_s == 0 && !t.has_remaining);   /* not started */
    sw.started = 1;
    sw.t_start = 100.0;
    nn_sweep_times(&sw, 110.0, &t);
    assert_int_equal(t.steps, 2);
    assert_int_equal(t.total_steps, 3);
    assert_true(t.elapsed_s == 10.0 && t.has_remaining && t.remaining_s == 5.0);
    sw.finished = 1;
    sw.t_end = 112.0;                /* ended: its own end, whatever the clock says */
    nn_sweep_times(&sw, 500.0, &t);
    assert_true(t.elapsed_s == 12.0 && t.remaining_s == 0.0);
}

static nn_export_run two_jobs(nn_snapshot *a, nn_snapshot *b)
{
    *a = snap(NN_JOB_DONE, "cpu", 10.0, 35, 35);
    *b = snap(NN_JOB_DONE, "cpu-ref", 25.0, 35, 35);
    nn_export_run run = { "mnist-mlp-128", 2, 0, { { a, pts, 4, eps, 1, 1, NULL }, { b, pts, 2, NULL, 0, 1, NULL } }, NULL, 0 };
    return run;
}

/* Splits a CSV line at commas into at most max fields; returns the count. */
static int csv_fields(char *line, char **field, int max)
{
    int n = 0;
    for (char *p = line; n < max;) {
        field[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
}

static void test_run_csv(void **state)
{
    nn_snapshot a, b;
    nn_export_run run = two_jobs(&a, &b);
    char *text = NULL, *save = NULL, *f[16];
    size_t len = 0;
    int rows = 0, epochs = 0;
    (void)state;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    assert_int_equal(nn_export_run_csv(m, &run), 0);
    fclose(m);
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), rows++) {
        int n = csv_fields(line, f, 16);
        assert_int_equal(n, 12);     /* every row has every column */
        if (rows == 0) {
            assert_string_equal(f[0], "device");
            assert_string_equal(f[8], "val_accuracy");
            assert_string_equal(f[9], "way");
            assert_string_equal(f[10], "source");
            assert_string_equal(f[11], "us_per_step");
            continue;
        }
        assert_string_equal(f[9], "nnlab");         /* no job here applied GPU switches */
        assert_string_equal(f[10], "measured");     /* a job's rows: measured, whatever races beside */
        if (!strcmp(f[1], "epoch") && !strcmp(f[0], "cpu") && !strcmp(f[2], "1")) {
            epochs++;
            assert_true(fabs(strtod(f[6], NULL) - 2.0) < 1e-9);    /* the epoch's mean */
            assert_true(fabs(strtod(f[8], NULL) - 0.75) < 1e-6);
            assert_true(strtod(f[4], NULL) == 3.0);
        }
    }
    /* a header, 4 + 2 loss rows, cpu's 2 epochs and cpu-ref's 1 */
    assert_int_equal(rows, 1 + 6 + 3);
    assert_int_equal(epochs, 1);
    free(text);
}

static void test_run_json(void **state)
{
    nn_snapshot a, b;
    nn_export_run run = two_jobs(&a, &b);
    char *text = NULL;
    size_t len = 0;
    (void)state;
    a.threads = 0;                   /* the engine's choice, which took one thread: the title's "(1 thread)" */
    a.threads_now = 1;
    FILE *m = open_memstream(&text, &len);
    assert_int_equal(nn_export_run_json(m, &run), 0);
    fclose(m);
    assert_non_null(strstr(text, "\"side_by_side\": \"raced\""));
    assert_non_null(strstr(text, "\"headline\": \"done in 00:10 (10s 286ms/step)\""));
    assert_non_null(strstr(text, "\"ratio\": {\"faster\": \"cpu\", \"times\": 2.5}"));
    assert_non_null(strstr(text, "{\"epoch\": 1, \"step\": 25, \"train_loss\": 2, \"val_loss\": 0.9"));
    assert_non_null(strstr(text, "\"val_accuracy\": null, \"time_s\": 4, \"seconds\": 1}"));
    assert_non_null(strstr(text, "\"threads\": 1, \"threads_asked\": 0,"));   /* those it ran with */
    free(text);
}

/* A race of ranks: the ratios name each job as the lab labels it, its own
 * name where the run gave one ("cpu 1 rank"), else device and ranks. */
static void test_run_json_names(void **state)
{
    nn_snapshot a, b;
    nn_export_run run = two_jobs(&a, &b);
    char *text = NULL, name[64];
    size_t len = 0;
    (void)state;
    strcpy(b.device, "cpu");
    b.launched_ranks = 2;
    run.job[0].name = "cpu 1 rank";
    nn_export_job_name(&run.job[1], name, sizeof name);
    assert_string_equal(name, "cpu 2 ranks");
    FILE *m = open_memstream(&text, &len);
    assert_int_equal(nn_export_run_json(m, &run), 0);
    fclose(m);
    assert_non_null(strstr(text, "{\"faster\": \"cpu 1 rank\", \"than\": \"cpu 2 ranks\", \"times\": 2.5}"));
    assert_non_null(strstr(text, "\"way\": \"ranks\", \"ranks\": 2"));
    free(text);
}

/* JSON that python3's own parser takes; skipped where there is no python3. */
static void assert_json_parses(const char *path)
{
    char cmd[800];
    if (system("python3 -c '' 2>/dev/null") != 0)
        return;
    snprintf(cmd, sizeof cmd, "python3 -m json.tool '%s' >/dev/null", path);
    assert_int_equal(system(cmd), 0);
}

static void test_export_files(void **state)
{
    char root[512], dir[600], csv[700], json[700], err[256];
    nn_snapshot a, b;
    nn_export_run run = two_jobs(&a, &b);
    (void)state;
    assert_int_equal(test_tmp_create(root, sizeof root, "progress"), 0);
    snprintf(dir, sizeof dir, "%s/deep/exports", root);   /* made when missing */
    assert_int_equal(nn_export_files(dir, &run, NULL, 1800000000LL, csv, json, sizeof csv, err, sizeof err), 0);
    assert_non_null(strstr(csv, "/mnist-mlp-128-run-"));
    assert_int_equal(access(csv, R_OK), 0);
    assert_int_equal(access(json, R_OK), 0);
    assert_json_parses(json);
    run.n_jobs = 1;                  /* one job: no ratio */
    assert_int_equal(nn_export_files(dir, &run, NULL, 1800000001LL, csv, json, sizeof csv, err, sizeof err), 0);
    assert_json_parses(json);
    /* a folder that cannot be made: the message names the file */
    snprintf(dir, sizeof dir, "%s/deep/exports/%s", root, strrchr(csv, '/') + 1);
    assert_int_equal(nn_export_files(dir, &run, NULL, 1800000002LL, csv, json, sizeof csv, err, sizeof err), -1);
    assert_non_null(strstr(err, dir));
    assert_int_equal(test_tmp_remove(root), 0);
}

/* A file name from data is one name in its folder. */
static void test_file_stem(void **state)
{
    char out[NN_STEM_MAX + 1], small[6];
    (void)state;
    assert_string_equal(nn_file_stem("mnist-mlp-128", "x", out, sizeof out), "mnist-mlp-128");
    assert_string_equal(nn_file_stem("lenet5.v2_b", "x", out, sizeof out), "lenet5.v2_b");
    assert_string_equal(nn_file_stem("../../tmp/x/owned", "x", out, sizeof out), "______tmp_x_owned");
    assert_string_equal(nn_file_stem(".hidden", "x", out, sizeof out), "_hidden");
    assert_string_equal(nn_file_stem("a..b.", "x", out, sizeof out), "a_.b_");
    assert_string_equal(nn_file_stem("t\x1b]0;T\x07 \\ \xc3\xa9", "x", out, sizeof out), "t__0_T______");
    assert_string_equal(nn_file_stem("", "nnlab", out, sizeof out), "nnlab");
    assert_string_equal(nn_file_stem(NULL, "nnlab", out, sizeof out), "nnlab");
    assert_string_equal(nn_file_stem("abcdefgh", "x", small, sizeof small), "abcde");
    char very_long[300];
    memset(very_long, 'a', sizeof very_long - 1);
    very_long[sizeof very_long - 1] = '\0';
    assert_int_equal(strlen(nn_file_stem(very_long, "x", out, sizeof out)), NN_STEM_MAX);
}

/* A preset named to climb out of the export folder writes inside it, and
 * makes no folder elsewhere; a JSON that cannot be written takes its CSV
 * with it (both or neither). */
static void test_export_stays_home(void **state)
{
    char root[512], dir[600], name[800], outside[700], csv[900], json[900], keep[1000], err[256];
    nn_snapshot a, b;
    nn_export_run run = two_jobs(&a, &b);
    (void)state;
    assert_int_equal(test_tmp_create(root, sizeof root, "export-home"), 0);
    snprintf(dir, sizeof dir, "%s/exports", root);
    snprintf(outside, sizeof outside, "%s/x", root);
    snprintf(name, sizeof name, "../../../../../../../..%s/owned", outside);
    run.preset = name;
    assert_int_equal(nn_export_files(dir, &run, NULL, 1800000000LL, csv, json, sizeof csv, err, sizeof err), 0);
    assert_true(strncmp(csv, dir, strlen(dir)) == 0 && strchr(csv + strlen(dir) + 1, '/') == NULL);
    assert_true(strncmp(json, dir, strlen(dir)) == 0 && strchr(json + strlen(dir) + 1, '/') == NULL);
    assert_int_equal(access(csv, R_OK), 0);
    assert_int_not_equal(access(outside, F_OK), 0);
    /* both or neither: the JSON's name taken by a folder */
    assert_int_equal(unlink(csv), 0);
    assert_int_equal(unlink(json), 0);
    assert_int_equal(mkdir(json, 0755), 0);
    snprintf(keep, sizeof keep, "%s/keep", json);
    assert_int_equal(mkdir(keep, 0755), 0);
    assert_int_equal(nn_export_files(dir, &run, NULL, 1800000000LL, csv, json, sizeof csv, err, sizeof err), -1);
    assert_int_not_equal(access(csv, F_OK), 0);
    assert_int_equal(test_tmp_remove(root), 0);
}

/* The path of the file in dir whose name holds `part`, into out; 0 when
 * there is one. */
static int find_entry(const char *dir, const char *part, char *out, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = -1;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, part)) {
            snprintf(out, len, "%s/%s", dir, e->d_name);
            found = 0;
        }
    closedir(d);
    return found;
}

/* kill -9 between the two renames (NNLAB_TEST_KILL_BETWEEN_RENAMES, in a
 * child): the JSON may be there, never the CSV alone; the next export into
 * the folder, once the CSV's temp is stale, removes that JSON and the temp. */
static void test_export_killed_between_renames(void **state)
{
    char root[512], dir[600], csv[900], json[900], csv2[900], json2[900], tmpf[1200], err[256];
    nn_snapshot a, b;
    nn_export_run run = two_jobs(&a, &b);
    (void)state;
    assert_int_equal(test_tmp_create(root, sizeof root, "export-kill"), 0);
    snprintf(dir, sizeof dir, "%s/exports", root);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("NNLAB_TEST_KILL_BETWEEN_RENAMES", "1", 1);
        nn_export_files(dir, &run, NULL, 1800000000LL, csv, json, sizeof csv, err, sizeof err);
        _exit(0);                    /* not reached: killed between the renames */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* what the child left: the JSON and the CSV's temp, no CSV */
    assert_int_equal(find_entry(dir, ".json", json, sizeof json), 0);
    assert_int_equal(find_entry(dir, ".csv.nnlab-tmp.", tmpf, sizeof tmpf), 0);
    snprintf(csv, sizeof csv, "%.*s.csv", (int)(strlen(json) - 5), json);
    assert_int_not_equal(access(csv, F_OK), 0);
    /* the temp an hour old: its writer is gone */
    struct timespec old[2] = { { time(NULL) - 3600, 0 }, { time(NULL) - 3600, 0 } };
    assert_int_equal(utimensat(AT_FDCWD, tmpf, old, 0), 0);
    assert_int_equal(nn_export_files(dir, &run, NULL, 1800000100LL, csv2, json2, sizeof csv2, err, sizeof err), 0);
    assert_int_not_equal(access(json, F_OK), 0);
    assert_int_not_equal(access(tmpf, F_OK), 0);
    assert_int_equal(access(csv2, F_OK), 0);
    assert_int_equal(access(json2, F_OK), 0);
    assert_int_equal(test_tmp_remove(root), 0);
}

static void test_export_dir(void **state)
{
    char dir[512];
    (void)state;
    setenv("XDG_DATA_HOME", "/x/data", 1);
    setenv("HOME", "/home/u", 1);
    assert_int_equal(nn_export_dir(dir, sizeof dir), 0);
    assert_string_equal(dir, "/x/data/nnlab/exports");
    setenv("XDG_DATA_HOME", "relative", 1);   /* the XDG spec: ignored */
    assert_int_equal(nn_export_dir(dir, sizeof dir), 0);
    assert_string_equal(dir, "/home/u/.local/share/nnlab/exports");
    unsetenv("XDG_DATA_HOME");
    unsetenv("HOME");
    assert_int_equal(nn_export_dir(dir, sizeof dir), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock),
        cmocka_unit_test(test_per_step),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_headline),
        cmocka_unit_test(test_calibration_times),
        cmocka_unit_test(test_race_ratio),
        cmocka_unit_test(test_race_ratio_shown),
        cmocka_unit_test(test_training_apart),
        cmocka_unit_test(test_epoch_history),
        cmocka_unit_test(test_sweep_times),
        cmocka_unit_test(test_run_csv),
        cmocka_unit_test(test_run_json),
        cmocka_unit_test(test_run_json_names),
        cmocka_unit_test(test_export_files),
        cmocka_unit_test(test_export_dir),
        cmocka_unit_test(test_file_stem),
        cmocka_unit_test(test_export_stays_home),
        cmocka_unit_test(test_export_killed_between_renames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* tests/test_estimate_peak.c - the memory estimate against measured peaks
 * (tests/fixtures/measured-peaks.txt, from bench/estimate-peak.sh): for
 * every shipped training preset and the deep ones (ten linear 4096
 * layers, SGD and Adam), the estimate plus what the process held when it
 * checked must hold the measured peak and be at most 15% above it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnlab/engine.h"
#include "nnlab/preset.h"

#define MAX_ROWS 32

typedef struct peak_row {
    char name[64];
    double peak_mb, at_check_mb;
} peak_row;

static int read_rows(peak_row *rows, int max)
{
    char line[256];
    int n = 0;
    FILE *f = fopen(FIXTURES_DIR "/measured-peaks.txt", "r");
    if (!f)
        fail_msg("cannot open measured-peaks.txt");
    while (n < max && fgets(line, sizeof line, f))
        if (line[0] != '#' && sscanf(line, "%63s %lf %lf", rows[n].name, &rows[n].peak_mb,
                                     &rows[n].at_check_mb) == 3)
            n++;
    fclose(f);
    return n;
}

/* Ten linear 4096 layers, as bench/estimate-peak.sh writes them. */
static void deep_preset(const char *name, nn_preset *p)
{
    char path[] = "/tmp/nnlab-deep-XXXXXX", err[NN_ERR_LEN];
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        fail_msg("cannot write a deep preset");
    fprintf(f, "[preset]\nname = \"%s\"\n[data]\nset = random\nrows = 2048\nval_rows = 256\n"
            "features = 4096\ntargets = 4096\n[train]\nloss = mse\nbatch = 64\nepochs = 1\n"
            "[optimizer]\ntype = %s\n", name, strcmp(name, "deep-adam") == 0 ? "adam" : "sgd");
    for (int i = 1; i <= 10; i++)
        fprintf(f, "[layer%d]\ntype = linear\nout = 4096\n", i);
    assert_int_equal(fclose(f), 0);
    int rc = nn_preset_load(path, p, err, sizeof err);
    remove(path);
    if (rc != 0)
        fail_msg("%s", err);
}

static double estimate_mb(const char *name)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_preset p;
    nn_job_config cfg;
    nn_memory_estimate m;
    if (strncmp(name, "deep-", 5) == 0) {
        deep_preset(name, &p);
    } else {
        snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
        if (nn_preset_load(path, &p, err, sizeof err) != 0)
            fail_msg("%s", err);
    }
    nn_job_config_init(&cfg, &p);
    cfg.threads = 1;                 /* as measured */
    nn_job_memory_estimate(&cfg, &m);
    return m.host / 1e6;
}

static void test_estimate_holds_each_measured_peak(void **state)
{
    (void)state;
    peak_row rows[MAX_ROWS];
    int n = read_rows(rows, MAX_ROWS);
    assert_true(n >= 8);
    for (int i = 0; i < n; i++) {
        double sum = estimate_mb(rows[i].name) + rows[i].at_check_mb;
        print_message("# %-18s estimate + at the check %7.1f MB, measured peak %7.1f MB (%.3f)\n",
                      rows[i].name, sum, rows[i].peak_mb, sum / rows[i].peak_mb);
        if (sum < rows[i].peak_mb || sum > 1.15 * rows[i].peak_mb)
            fail_msg("%s: estimate + at the check %.1f MB against a measured peak of %.1f MB: "
                     "expected %.1f..%.1f", rows[i].name, sum, rows[i].peak_mb, rows[i].peak_mb,
                     1.15 * rows[i].peak_mb);
    }
}

/* A shipped training preset without a measured peak is a gap in the table
 * (a Jacobian's few KB are the process's, not the estimate's). */
static void test_every_shipped_training_preset_is_measured(void **state)
{
    (void)state;
    peak_row rows[MAX_ROWS];
    int n = read_rows(rows, MAX_ROWS), checked = 0;
    DIR *d = opendir(PRESETS_SRCDIR);
    struct dirent *e;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char name[64], path[NN_PATH_LEN], err[NN_ERR_LEN];
        size_t len = strlen(e->d_name);
        nn_preset p;
        if (len < 5 || len - 4 >= sizeof name || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(len - 4), e->d_name);
        snprintf(path, sizeof path, "%s/%s", PRESETS_SRCDIR, e->d_name);
        assert_int_equal(nn_preset_load(path, &p, err, sizeof err), 0);
        if (p.task != NN_TASK_TRAIN)
            continue;
        int found = 0;
        for (int i = 0; i < n && !found; i++)
            found = strcmp(rows[i].name, name) == 0;
        if (!found)
            fail_msg("%s: no measured peak in measured-peaks.txt (run bench/estimate-peak.sh)", name);
        checked++;
    }
    closedir(d);
    assert_true(checked >= 6);
}

/* The parts: no byte per value of a real set's files besides its floats
 * (the readers stream them), and the job's fixed pages counted. */
static void test_estimate_parts(void **state)
{
    (void)state;
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_preset p;
    nn_job_config cfg;
    nn_memory_estimate m;
    snprintf(path, sizeof path, "%s/mnist-mlp-128.ini", PRESETS_SRCDIR);
    assert_int_equal(nn_preset_load(path, &p, err, sizeof err), 0);
    nn_job_config_init(&cfg, &p);
    cfg.threads = 1;
    nn_job_memory_estimate(&cfg, &m);
    /* 70,000 images of 784 floats, their labels, the order of 60,000 */
    assert_true(m.data == 70000.0 * (784 * 4 + 4) + 60000.0 * 4);
    assert_true(m.fixed == NN_JOB_FIXED_BYTES);
    assert_true(m.host == m.params + m.batch + m.workspace + m.data + m.fixed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate_holds_each_measured_peak),
        cmocka_unit_test(test_every_shipped_training_preset_is_measured),
        cmocka_unit_test(test_estimate_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

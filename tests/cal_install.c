/* tests/cal_install.c - a recorded CPU calibration made this machine's
 * cached one, so that a front end's verdicts (the race of ways, the sweep,
 * Explain) rest on fixed figures whatever machine runs the test and however
 * busy it is (docs/testing.md, "A recorded calibration").
 *
 *   cal_install FIXTURE     writes tests/fixtures/FIXTURE as the CPU's cache
 *                           under $XDG_CACHE_HOME (nn_calibration_save), the
 *                           machine's name and the time made this machine's
 *   cal_install             (as a test, TAP) installs the 2-core fixture in a
 *                           temporary cache and reads it back with
 *                           nn_calibration_load: the figures equal, its
 *                           quality good (else a front end measures again)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cal_fixture.h"
#include "util.h"

#define DEV2 "calibration-cpu-dev2.txt"

/* The fixture as this machine's CPU calibration, cached; 0 or -1 (said). */
static int install(const char *fixture)
{
    nn_calibration c;
    char err[NN_ERR_LEN];
    if (cal_fixture_load(fixture, &c) != 0) {
        fprintf(stderr, "cal_install: %s: cannot read the fixture\n", fixture);
        return -1;
    }
    nn_machine_description(c.machine, sizeof c.machine);
    nn_strlcpy(c.device, "cpu", sizeof c.device);
    snprintf(c.note, sizeof c.note, "recorded: tests/fixtures/%s", fixture);
    c.created = (long long)time(NULL);
    if (nn_calibration_save(&c, err, sizeof err) != 0) {
        fprintf(stderr, "cal_install: %s\n", err);
        return -1;
    }
    return 0;
}

static int self_test(void)
{
    char dir[] = "/tmp/nnlab-cal-install-XXXXXX", why[256];
    nn_calibration want, got;
    int n = 0, failed = 0;
    if (!mkdtemp(dir) || setenv("XDG_CACHE_HOME", dir, 1) != 0)
        return 99;
    int installed = install(DEV2) == 0 && cal_fixture_load(DEV2, &want) == 0;
    printf("%sok %d - the fixture installed\n", installed ? "" : "not ", ++n);
    failed += !installed;
    int loaded = installed && nn_calibration_load("cpu", &got) == 0;
    printf("%sok %d - read back by the cache's reader\n", loaded ? "" : "not ", ++n);
    failed += !loaded;
    int same = loaded && fabs(got.gemm_gflops - want.gemm_gflops) < 1e-9 && got.threads == want.threads &&
               got.linear_fwd.n == want.linear_fwd.n && fabs(got.spread[0] - want.spread[0]) < 1e-9;
    printf("%sok %d - the same figures and spreads\n", same ? "" : "not ", ++n);
    failed += !same;
    int good = loaded && nn_calibration_quality(&got, why, sizeof why) == NN_CAL_GOOD;
    printf("%sok %d - its quality good (else a front end measures again)%s%s\n", good ? "" : "not ", ++n,
           good ? "" : ": ", good ? "" : why);
    failed += !good;
    printf("1..%d\n", n);
    char path[NN_PATH_LEN];
    if (nn_calibration_path("cpu", path, sizeof path) == 0)
        unlink(path);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return install(argv[1]) == 0 ? 0 : 1;
    return self_test();
}

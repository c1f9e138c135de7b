/* tests/test_torch_step.c - the PyTorch runner (nnlab/torch_step.h):
 *  - the JSON reader it reads the helper's answer with (src/common/json_flat.h);
 *  - every status, over a stand-in helper that needs no torch
 *    (tests/fixtures/torch-helper-stub.py, run by any python3): the answer
 *    taken, the parameter count checked against nnlab's, the helper's
 *    error, a crash, garbage, a timeout, a cancel, a GPU PyTorch cannot see;
 *  - no python (NNLAB_PYTHON=/nonexistent), no helper, and no torch (the
 *    real helper under a python3 without torch, where there is one);
 *  - the real helper over every shipped preset, one step on the CPU, its
 *    network the same as nnlab's by the parameter count: skipped where no
 *    python3 imports torch. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1      /* setenv */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json_flat.h"
#include "nnlab/cost.h"
#include "nnlab/preset.h"
#include "nnlab/torch_step.h"

#define STUB FIXTURES_DIR "/torch-helper-stub.py"
#define PRESET PRESETS_SRCDIR "/mnist-mlp-128.ini"

static const char *const shipped[] = {
    "conv1d-regression", "lenet-cifar10", "lenet5-cifar10", "mlp-jacobian",
    "mnist-mlp-1000", "mnist-mlp-128", "tabnet-regression",
};

static char python3[1024];           /* python3 on PATH, "" when none */

static void find_python3(void)
{
    const char *p = getenv("PATH");
    python3[0] = '\0';
    while (p && *p && !python3[0]) {
        size_t n = strcspn(p, ":");
        snprintf(python3, sizeof python3, "%.*s/python3", (int)n, p);
        if (n == 0 || access(python3, X_OK) != 0)
            python3[0] = '\0';
        p += n + (p[n] == ':');
    }
}

static size_t nnlab_params(const char *path)
{
    static nn_preset p;
    static nn_cost c;
    char err[512];
    assert_int_equal(nn_preset_load(path, &p, err, sizeof err), 0);
    nn_cost_model(&p, 4, &c);
    return c.params;
}

static nn_torch_request request(const char *path, const char *device)
{
    return (nn_torch_request){ .preset_path = path, .device = device, .batch = 4, .steps = 2,
                               .warmup = 1 };
}

/* The stand-in helper, run by python3 on PATH, answering in `mode`. */
static void use_stub(const char *mode)
{
    if (!python3[0])
        skip();
    setenv("NNLAB_PYTHON", python3, 1);
    setenv("NNLAB_TORCH_HELPER", STUB, 1);
    setenv("NNLAB_TORCH_STUB", mode, 1);
    unsetenv("NNLAB_TORCH_TIMEOUT_S");
}

static enum nn_torch_status run_stub(const char *mode, nn_torch_result *r, char *err, size_t len)
{
    nn_torch_request req = request(PRESET, "cpu");
    use_stub(mode);
    return nn_torch_step(&req, r, err, len);
}

/* ---- the JSON reader ---------------------------------------------------------------- */

static void test_json_reads_fields_and_paths(void **state)
{
    nn_json_flat j;
    char err[256];
    double v;
    (void)state;
    assert_int_equal(nn_json_flat_parse(" {\"a\": \"x\\\"y\\u00e9\\ud83d\\ude00\", \"n\": -1.5e3, "
                                        "\"t\": true, \"z\": null, \"e\": {\"k\": \"v\", \"m\": {}}}\n",
                                        &j, err, sizeof err), 0);
    assert_string_equal(nn_json_flat_string(&j, "a"), "x\"y\xc3\xa9\xf0\x9f\x98\x80");
    assert_int_equal(nn_json_flat_number(&j, "n", &v), 0);
    assert_true(v == -1500.0);
    assert_int_equal(nn_json_flat_get(&j, "t")->type, NN_JSON_TRUE);
    assert_int_equal(nn_json_flat_get(&j, "z")->type, NN_JSON_NULL);
    assert_string_equal(nn_json_flat_string(&j, "e.k"), "v");
    assert_null(nn_json_flat_string(&j, "n"));
    assert_int_equal(nn_json_flat_number(&j, "a", &v), -1);
    nn_json_flat_free(&j);
}

/* nnlab's own --json holds arrays (a run's history): read to their end,
 * left out, the fields after them kept. */
static void test_json_arrays_left_out(void **state)
{
    nn_json_flat j;
    char err[256];
    double v;
    (void)state;
    assert_int_equal(nn_json_flat_parse("{\"a\": 1, \"history\": [{\"epoch\": 1, \"x\": [2, \"s\", null]}, []], "
                                        "\"b\": {\"c\": [true, false]}, \"d\": 4}", &j, err, sizeof err), 0);
    assert_int_equal(j.n, 2);
    assert_int_equal(nn_json_flat_number(&j, "d", &v), 0);
    assert_true(v == 4.0);
    assert_null(nn_json_flat_get(&j, "history"));
    assert_null(nn_json_flat_get(&j, "[].epoch"));
    nn_json_flat_free(&j);
}

static void test_json_refuses_what_is_not_json(void **state)
{
    static const char *const bad[] = {
        "", "[1]", "{\"a\": 1,}", "{\"a\": 1} x", "{\"a\" 1}", "{\"a\": 01}", "{\"a\": \"\\q\"}",
        "{\"a\": tru}", "{\"a\": \"open}", "{a: 1}", "{\"a\": \"\\u12\"}",
        "{\"a\": [1,]}", "{\"a\": [1 2]}", "{\"a\": [{\"b\": 1,}]}", "{\"a\": [\"open]}",
        "{\"a\": [[[[[[1]]]]]]}",
    };
    char err[256];
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nn_json_flat j;
        err[0] = '\0';
        assert_int_equal(nn_json_flat_parse(bad[i], &j, err, sizeof err), -1);
        assert_non_null(strstr(err, "offset"));
        nn_json_flat_free(&j);
    }
}

/* ---- over the stand-in helper ------------------------------------------------------- */

static void test_stub_result_taken_and_labelled(void **state)
{
    nn_torch_result r;
    char err[512] = "", source[96], params[32];
    (void)state;
    snprintf(params, sizeof params, "%zu", nnlab_params(PRESET));
    setenv("NNLAB_TORCH_STUB_PARAMS", params, 1);
    assert_int_equal(run_stub("ok", &r, err, sizeof err), NN_TORCH_OK);
    assert_string_equal(r.python.label, "PyTorch 9.9");
    assert_string_equal(r.python.version, "9.9.1+stub");
    assert_string_equal(r.python.path, python3);
    assert_true(r.us_per_step == 123.5 && r.us_per_step_mean == 130.25);
    assert_true(r.minor_faults_per_step == 25088.0 && r.system_us_per_step == 41019.5);
    assert_int_equal(r.batch, 4);            /* the arguments reached it as given */
    assert_int_equal(r.steps, 2);
    assert_int_equal(r.threads, 7);
    assert_int_equal(r.params, nnlab_params(PRESET));
    assert_string_equal(r.device, "cpu");
    assert_string_equal(r.device_name, "stub \xc3\xa9");
    nn_torch_source(&r.python, source, sizeof source);
    assert_string_equal(source, "measured with PyTorch 9.9");
    /* a helper that does not report them (an older one, or a graph way): -1, not 0 */
    setenv("NNLAB_TORCH_STUB_NO_FAULTS", "1", 1);
    assert_int_equal(run_stub("ok", &r, err, sizeof err), NN_TORCH_OK);
    unsetenv("NNLAB_TORCH_STUB_NO_FAULTS");
    assert_true(r.minor_faults_per_step == -1 && r.system_us_per_step == -1);
}

static void test_stub_other_network_refused(void **state)
{
    nn_torch_result r;
    char err[512] = "", params[32];
    (void)state;
    snprintf(params, sizeof params, "%zu", nnlab_params(PRESET) + 1);
    setenv("NNLAB_TORCH_STUB_PARAMS", params, 1);
    assert_int_equal(run_stub("ok", &r, err, sizeof err), NN_TORCH_MISMATCH);
    assert_non_null(strstr(err, params));
    assert_non_null(strstr(err, "not the same network"));
}

static void test_stub_preset_error_named(void **state)
{
    nn_torch_result r;
    char err[512] = "";
    (void)state;
    assert_int_equal(run_stub("preset", &r, err, sizeof err), NN_TORCH_PRESET);
    assert_non_null(strstr(err, "mnist-mlp-128.ini: [layer2] type: layer kind 'frob'"));
}

static void test_stub_crash_and_garbage_fail(void **state)
{
    nn_torch_result r;
    char err[512] = "";
    (void)state;
    assert_int_equal(run_stub("crash", &r, err, sizeof err), NN_TORCH_FAILED);
    assert_non_null(strstr(err, "exit 1: RuntimeError: boom"));
    assert_int_equal(run_stub("garbage", &r, err, sizeof err), NN_TORCH_FAILED);
    assert_non_null(strstr(err, "exit 0"));
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_stub_timeout_stops_it(void **state)
{
    nn_torch_result r;
    char err[512] = "";
    double t0;
    (void)state;
    use_stub("sleep");
    setenv("NNLAB_TORCH_TIMEOUT_S", "1", 1);
    nn_torch_request req = request(PRESET, "cpu");
    t0 = now_s();
    assert_int_equal(nn_torch_step(&req, &r, err, sizeof err), NN_TORCH_TIMEOUT);
    assert_true(now_s() - t0 < 20.0);        /* not the stub's 60 s */
    assert_non_null(strstr(err, "no answer in time"));
    unsetenv("NNLAB_TORCH_TIMEOUT_S");
}

static double cancel_at;
static int cancel_when_due(void *ctx)
{
    (void)ctx;
    return now_s() >= cancel_at;
}

static void test_stub_cancel_stops_it(void **state)
{
    nn_torch_result r;
    char err[512] = "";
    (void)state;
    use_stub("sleep");
    nn_torch_request req = request(PRESET, "cpu");
    req.cancelled = cancel_when_due;
    cancel_at = now_s() + 0.3;
    assert_int_equal(nn_torch_step(&req, &r, err, sizeof err), NN_TORCH_CANCELLED);
    assert_true(now_s() - cancel_at < 10.0);
    assert_non_null(strstr(err, "cancelled"));
}

/* On a thread of its own (nn_torch_job): the caller polls, never waits;
 * the result is the same as nn_torch_step's; a cancel ends a sleeping
 * helper; the request's strings were copied (the caller's may go). */
static void test_job_polled_and_cancelled(void **state)
{
    nn_torch_result r;
    enum nn_torch_status status = NN_TORCH_FAILED;
    char err[512] = "", params[32], path[] = PRESET, device[] = "cpu";
    (void)state;
    snprintf(params, sizeof params, "%zu", nnlab_params(PRESET));
    setenv("NNLAB_TORCH_STUB_PARAMS", params, 1);
    use_stub("ok");
    nn_torch_request req = request(path, device);
    nn_torch_job *j = nn_torch_job_start(&req, err, sizeof err);
    assert_non_null(j);
    path[0] = device[0] = '\0';
    double until = now_s() + 60;
    while (!nn_torch_job_done(j, &status, &r, err, sizeof err) && now_s() < until)
        nn_torch_job_wait(j);
    assert_int_equal(status, NN_TORCH_OK);
    assert_true(r.us_per_step == 123.5);
    assert_string_equal(r.device, "cpu");
    nn_torch_job_free(j);

    use_stub("sleep");
    req = request(PRESET, "cpu");
    j = nn_torch_job_start(&req, err, sizeof err);
    assert_non_null(j);
    assert_int_equal(nn_torch_job_done(j, &status, &r, err, sizeof err), 0);   /* it sleeps 60 s */
    double t0 = now_s();
    nn_torch_job_cancel(j);
    nn_torch_job_wait(j);
    assert_int_equal(nn_torch_job_done(j, &status, &r, err, sizeof err), 1);
    assert_int_equal(status, NN_TORCH_CANCELLED);
    assert_true(now_s() - t0 < 10.0);
    nn_torch_job_free(j);
    nn_torch_job_free(NULL);
}

static void test_stub_gpu_without_cuda(void **state)
{
    nn_torch_result r;
    char err[512] = "";
    (void)state;
    use_stub("ok");
    nn_torch_request req = request(PRESET, "gpu");
    assert_int_equal(nn_torch_step(&req, &r, err, sizeof err), NN_TORCH_NO_DEVICE);
    assert_non_null(strstr(err, "sees no CUDA device"));
}

/* ---- the programs missing ----------------------------------------------------------- */

static void test_no_python(void **state)
{
    nn_torch_python py;
    char err[1024] = "";
    (void)state;
    setenv("NNLAB_PYTHON", "/nonexistent/python3", 1);
    unsetenv("NNLAB_TORCH_HELPER");
    assert_int_equal(nn_torch_find(&py, err, sizeof err), NN_TORCH_NO_PYTHON);
    assert_non_null(strstr(err, "/nonexistent/python3: cannot run: No such file or directory"));
    assert_string_equal(nn_torch_status_name(NN_TORCH_NO_PYTHON), "no python");
}

static void test_no_helper(void **state)
{
    nn_torch_python py;
    char err[1024] = "";
    (void)state;
    unsetenv("NNLAB_PYTHON");
    setenv("NNLAB_TORCH_HELPER", "/nonexistent/helper.py", 1);
    assert_int_equal(nn_torch_find(&py, err, sizeof err), NN_TORCH_NO_HELPER);
    assert_non_null(strstr(err, "NNLAB_TORCH_HELPER=/nonexistent/helper.py"));
}

/* The real helper under python3 on PATH, when that one has no torch (here:
 * pyenv's; on CI: the system's). */
static void test_no_torch(void **state)
{
    nn_torch_python py;
    char err[2048] = "", cmd[1200];
    (void)state;
    snprintf(cmd, sizeof cmd, "'%s' -c 'import torch' >/dev/null 2>&1", python3);
    if (!python3[0] || system(cmd) == 0)
        skip();                              /* none without torch to try */
    setenv("NNLAB_PYTHON", python3, 1);
    unsetenv("NNLAB_TORCH_HELPER");
    assert_int_equal(nn_torch_find(&py, err, sizeof err), NN_TORCH_NO_TORCH);
    assert_non_null(strstr(err, "PyTorch is not installed for any python3 tried"));
    assert_non_null(strstr(err, "cannot import torch"));
}

/* ---- the real helper, every shipped preset ------------------------------------------ */

static void test_every_preset_builds_the_same_network(void **state)
{
    nn_torch_python py;
    char err[2048] = "";
    (void)state;
    unsetenv("NNLAB_PYTHON");
    unsetenv("NNLAB_TORCH_HELPER");
    unsetenv("NNLAB_TORCH_TIMEOUT_S");
    enum nn_torch_status s = nn_torch_find(&py, err, sizeof err);
    if (s == NN_TORCH_NO_PYTHON || s == NN_TORCH_NO_TORCH)
        skip();                              /* CI without python3-torch */
    assert_int_equal(s, NN_TORCH_OK);
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        char path[512];
        nn_torch_result r;
        snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, shipped[i]);
        nn_torch_request req = { .preset_path = path, .device = "cpu", .batch = 2, .steps = 1,
                                 .warmup = 0, .threads = 1 };
        s = nn_torch_step(&req, &r, err, sizeof err);
        if (s != NN_TORCH_OK)
            fail_msg("%s: %s: %s", shipped[i], nn_torch_status_name(s), err);
        assert_int_equal(r.params, nnlab_params(path));
        assert_true(r.us_per_step > 0);
        assert_int_equal(r.threads, 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_reads_fields_and_paths),
        cmocka_unit_test(test_json_arrays_left_out),
        cmocka_unit_test(test_json_refuses_what_is_not_json),
        cmocka_unit_test(test_stub_result_taken_and_labelled),
        cmocka_unit_test(test_stub_other_network_refused),
        cmocka_unit_test(test_stub_preset_error_named),
        cmocka_unit_test(test_stub_crash_and_garbage_fail),
        cmocka_unit_test(test_stub_timeout_stops_it),
        cmocka_unit_test(test_stub_cancel_stops_it),
        cmocka_unit_test(test_job_polled_and_cancelled),
        cmocka_unit_test(test_stub_gpu_without_cuda),
        cmocka_unit_test(test_no_python),
        cmocka_unit_test(test_no_helper),
        cmocka_unit_test(test_no_torch),
        cmocka_unit_test(test_every_preset_builds_the_same_network),
    };
    find_python3();
    return cmocka_run_group_tests(tests, NULL, NULL);
}

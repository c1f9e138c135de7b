/* tests/jacobian_check.c - see jacobian_check.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jacobian_check.h"
#include "util.h"

#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif

nn_snapshot jac_check_last;

static void load_preset(nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    const char *dir = getenv("NNLAB_PRESETS_DIR");
    snprintf(path, sizeof path, "%s/mlp-jacobian.ini", dir && *dir ? dir : PRESETS_SRCDIR);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

void jac_check_run(const char *device, int val, enum nn_jac_method m, int graph, nn_jac_result *r)
{
    jac_check_run_threads(device, val, m, graph, 0, r);
}

void jac_check_run_threads(const char *device, int val, enum nn_jac_method m, int graph, int threads,
                           nn_jac_result *r)
{
    nn_preset p;
    nn_job_config cfg;
    nn_snapshot s;
    char err[NN_ERR_LEN] = "";
    load_preset(&p);
    nn_job_config_init(&cfg, &p);
    assert_int_equal(cfg.kind, NN_JOB_JACOBIAN);
    nn_strlcpy(cfg.device, device, sizeof cfg.device);
    cfg.jac_val = val;
    cfg.jac_method = (int)m;
    cfg.graph = graph;
    cfg.seed = 7;
    cfg.threads = threads;
    nn_job *job = nn_job_start(&cfg, err, sizeof err);
    if (!job)
        fail_msg("%s: %s", device, err);
    nn_job_wait(job);
    nn_job_snapshot(job, &s);
    if (s.state != NN_JOB_DONE)
        fail_msg("%s %s: %s: %s", device, nn_jac_method_name(m), nn_job_state_name(s.state), s.error);
    jac_check_last = s;
    assert_int_equal(s.kind, NN_JOB_JACOBIAN);
    assert_int_equal(s.step, s.total_steps);
    assert_int_equal(s.total_steps, (long)val * 400);
    assert_true(s.fraction_done == 1.0);
    assert_int_equal(nn_job_jacobian(job, r), 0);
    nn_job_free(job);
}

/* The network in double: sample x (in) to out (out). */
static void net_double(const nn_jac_result *r, const double *x, double *out)
{
    double a[512], b[512];
    const float *p = r->params;
    const nn_jac_shape *s = &r->shape;
    memcpy(a, x, (size_t)s->width[0] * sizeof *a);
    for (int l = 0; l < s->n_linear; l++) {
        int in = s->width[l], o = s->width[l + 1];
        const float *w = p, *bias = p + (size_t)o * (size_t)in;
        for (int k = 0; k < o; k++) {
            double v = bias[k];
            for (int j = 0; j < in; j++)
                v += (double)w[(size_t)k * (size_t)in + (size_t)j] * a[j];
            b[k] = s->tanh_after[l] ? tanh(v) : v;
        }
        memcpy(a, b, (size_t)o * sizeof *a);
        p = bias + o;
    }
    memcpy(out, a, (size_t)s->width[s->n_linear] * sizeof *out);
}

/* Central differences, h = 1e-4 in double: truncation ~1e-9, far below
 * float32's rounding of the methods. Tolerance abs + rel*|fd|. */
static void check_finite_differences(const nn_jac_result *r, const char *what)
{
    double x[16], up[512], dn[512];
    const double h = 1e-4;
    assert_true(r->in <= 16 && r->out <= 512);
    for (int i = 0; i < r->val; i++)
        for (int d = 0; d < r->in; d++) {
            for (int e = 0; e < r->in; e++)
                x[e] = r->x[(size_t)i * (size_t)r->in + (size_t)e];
            x[d] += h;
            net_double(r, x, up);
            x[d] -= 2 * h;
            net_double(r, x, dn);
            for (int k = 0; k < r->out; k++) {
                double fd = (up[k] - dn[k]) / (2 * h);
                double got = r->blocks[((size_t)i * (size_t)r->out + (size_t)k) * (size_t)r->in + (size_t)d];
                if (!(fabs(got - fd) <= 1e-5 + 1e-4 * fabs(fd)))
                    fail_msg("%s: J[%d,%d,%d,%d] = %.9g, finite differences %.9g", what, i, k, i, d, got, fd);
            }
        }
}

void jac_check_device(const char *device, int val)
{
    nn_jac_result r[NN_JAC_METHOD_COUNT];
    char what[64];
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++) {
        snprintf(what, sizeof what, "%s %s val %d", device, nn_jac_method_name((enum nn_jac_method)m), val);
        jac_check_run(device, val, (enum nn_jac_method)m, 1, &r[m]);
        assert_int_equal(r[m].method, m);
        check_finite_differences(&r[m], what);
        if (m == NN_JAC_ROWS || m == NN_JAC_BATCHED) {
            assert_true(r[m].offdiag_checked);
            if (r[m].offdiag_max != 0)
                fail_msg("%s: off-diagonal block entry %g, expected 0", what, r[m].offdiag_max);
        }
    }
    for (int a = 0; a < NN_JAC_METHOD_COUNT; a++)
        for (int b = a + 1; b < NN_JAC_METHOD_COUNT; b++) {
            double d = nn_jac_max_diff(&r[a], &r[b]);
            if (!(d >= 0 && d <= 1e-5))
                fail_msg("%s val %d: %s and %s differ by %g", device, val,
                         nn_jac_method_name((enum nn_jac_method)a), nn_jac_method_name((enum nn_jac_method)b), d);
        }
    for (int m = 0; m < NN_JAC_METHOD_COUNT; m++)
        nn_jac_result_free(&r[m]);
}

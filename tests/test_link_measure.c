/* tests/test_link_measure.c - a link's calibration (src/analysis/model/link_measure.c)
 * on a comm table of the test's own: two ranks that sum nothing, whose
 * mean time (the one figure the measurement averages over the ranks) is
 * made up from the last sum's size by a known ring, so that the fit must
 * give that ring's figures back exactly; every size timed the same number
 * of times on every rank, a barrier before each round; a sum that fails
 * named with its size; one rank refused. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "link_measure.h"

typedef struct fake {
    size_t last_floats;          /* the size of the last sum */
    long sums, barriers;
    long sums_of_size[NN_LINK_SIZES];
    int fail_at;                 /* the sum that fails (0: none) */
} fake;

static const nn_link made_up = { .bandwidth_gbps = 2.5, .hop_us = 3.25 };

static int f_sum(nn_comm *c, float *buf, size_t n)
{
    fake *f = c->impl;
    (void)buf;
    f->last_floats = n;
    f->sums++;
    for (int s = 0; s < NN_LINK_SIZES; s++)
        if (n == (size_t)1 << 2 * s)
            f->sums_of_size[s]++;
    if (f->fail_at && f->sums == f->fail_at) {
        snprintf(c->last_error, sizeof c->last_error, "MPI_Allreduce: the peer hung up");
        return -1;
    }
    return 0;
}

/* The ranks' times summed: as if each had taken the made-up ring's time. */
static int f_sum_f64(nn_comm *c, double *buf, size_t n)
{
    fake *f = c->impl;
    assert_int_equal(n, 1);
    buf[0] = c->size * nn_allreduce_us(&made_up, c->size, 4.0 * (double)f->last_floats);
    return 0;
}

static int f_barrier(nn_comm *c)
{
    ((fake *)c->impl)->barriers++;
    return 0;
}

static const nn_comm_ops fake_ops = { .abi = NN_COMM_ABI, .name = "fake", .allreduce_sum = f_sum,
                                      .allreduce_sum_f64 = f_sum_f64, .barrier = f_barrier };

static void init(nn_comm *c, fake *f, int size)
{
    memset(c, 0, sizeof *c);
    memset(f, 0, sizeof *f);
    c->ops = &fake_ops;
    c->size = size;
    c->rank = 1;
    c->impl = f;
    snprintf(c->transport, sizeof c->transport, "shared memory");
    snprintf(c->host, sizeof c->host, "here");
    snprintf(c->library, sizeof c->library, "Fake MPI 1.0");
}

static void fit_gives_the_ring_back(void **state)
{
    (void)state;
    nn_comm c;
    fake f;
    nn_link_measurement m;
    char err[512];
    init(&c, &f, 2);
    assert_int_equal(nn_link_measure(&c, &m, err, sizeof err), 0);
    assert_int_equal(m.n, NN_LINK_SIZES);
    assert_int_equal(m.ranks, 2);
    assert_int_equal(m.rank, 1);
    assert_float_equal(m.bytes[0], 4, 0);
    assert_float_equal(m.bytes[NN_LINK_SIZES - 1], 16.0 * 1024 * 1024, 0);
    assert_float_equal(m.link.hop_us, 3.25, 1e-9);
    assert_float_equal(m.link.bandwidth_gbps, 2.5, 1e-9);
    assert_true(m.rms_error < 1e-9);
    assert_true(m.link.measured);
    assert_string_equal(m.link.name, "shared memory");
    assert_non_null(strstr(m.link.description, "2 ranks on here, Fake MPI 1.0 over shared memory"));
    /* 3 rounds of every size, each after a barrier; a size's count alike
     * on every rank (from its size alone) */
    assert_int_equal(f.barriers, 3 * NN_LINK_SIZES);
    for (int s = 0; s < NN_LINK_SIZES; s++)
        assert_true(f.sums_of_size[s] >= 3 * 4 && f.sums_of_size[s] % 3 == 0);
}

static void a_failed_sum_named(void **state)
{
    (void)state;
    nn_comm c;
    fake f;
    nn_link_measurement m;
    char err[512];
    init(&c, &f, 2);
    f.fail_at = 1;
    assert_int_equal(nn_link_measure(&c, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "timing a 4-byte all-reduce: MPI_Allreduce: the peer hung up"));
}

static void one_rank_refused(void **state)
{
    (void)state;
    nn_comm c;
    fake f;
    nn_link_measurement m;
    char err[512];
    init(&c, &f, 1);
    assert_int_equal(nn_link_measure(&c, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "at least 2 ranks"));
    assert_int_equal(f.sums, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fit_gives_the_ring_back),
        cmocka_unit_test(a_failed_sum_named),
        cmocka_unit_test(one_rank_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

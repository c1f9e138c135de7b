/* tests/test_allreduce.c - the ring all-reduce's price and its fit
 * (nnlab/link.h), the shipped link profiles and a broken one's messages, a
 * calibrated link written and read back, and the step of N ranks predicted
 * from the recorded 2-core calibration (tests/fixtures/calibration-cpu-dev2.txt):
 * more ranks do not pay where the sum outweighs the work they split, and
 * do where it does not. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nnlab/link.h"
#include "nnlab/ranks_sweep.h"
#include "cal_fixture.h"
#include "util.h"

static nn_link link_of(double gbps, double hop)
{
    nn_link l;
    memset(&l, 0, sizeof l);
    l.bandwidth_gbps = gbps;
    l.hop_us = hop;
    return l;
}

/* 4 ranks: 6 hops, and 2 x 3/4 of the bytes. Worked by hand. */
static void ring_price(void **state)
{
    (void)state;
    nn_link l = link_of(25, 0.6);
    assert_float_equal(nn_allreduce_hops_us(&l, 4), 3.6, 1e-9);
    assert_float_equal(nn_allreduce_bytes_us(&l, 4, 1e6), 60.0, 1e-9);
    assert_float_equal(nn_allreduce_us(&l, 4, 1e6), 63.6, 1e-9);
    assert_float_equal(nn_allreduce_us(&l, 1, 1e6), 0.0, 0);
    /* two ranks send each byte once each way: 2 x 1/2 */
    assert_float_equal(nn_allreduce_bytes_us(&l, 2, 25e3), 1.0, 1e-12);
}

static void fit_recovers_figures(void **state)
{
    (void)state;
    nn_link truth = link_of(3.7, 4.2), got = link_of(0, 0);
    double bytes[8], us[8], rms;
    for (int i = 0; i < 8; i++) {
        bytes[i] = 4.0 * pow(8.0, i);             /* 4 B .. 8 MB */
        us[i] = nn_allreduce_us(&truth, 2, bytes[i]);
    }
    assert_int_equal(nn_link_fit(bytes, us, 8, 2, &got, &rms), 0);
    assert_float_equal(got.hop_us, 4.2, 1e-6);
    assert_float_equal(got.bandwidth_gbps, 3.7, 1e-6);
    assert_true(rms < 1e-9);
    /* a few per cent of noise moves the figures a few per cent */
    for (int i = 0; i < 8; i++)
        us[i] *= i % 2 ? 1.03 : 0.97;
    assert_int_equal(nn_link_fit(bytes, us, 8, 2, &got, &rms), 0);
    assert_true(fabs(got.hop_us / 4.2 - 1) < 0.06);
    assert_true(fabs(got.bandwidth_gbps / 3.7 - 1) < 0.06);
    assert_true(rms > 0.01 && rms < 0.05);
}

static void fit_refuses_what_it_cannot_fit(void **state)
{
    (void)state;
    nn_link l = link_of(0, 0);
    double one_size[3] = { 64, 64, 64 }, t[3] = { 5, 5.1, 4.9 };
    double bytes[3] = { 4, 4096, 1 << 20 }, bad[3] = { 5, -1, 40 }, falling[3] = { 50, 20, 10 };
    assert_int_equal(nn_link_fit(one_size, t, 3, 2, &l, NULL), -1);
    assert_int_equal(nn_link_fit(bytes, bad, 3, 2, &l, NULL), -1);
    assert_int_equal(nn_link_fit(bytes, falling, 3, 2, &l, NULL), -1);   /* a negative bandwidth */
    assert_int_equal(nn_link_fit(bytes, t, 3, 1, &l, NULL), -1);         /* one rank sums nothing */
}

/* ---- link profiles ------------------------------------------------------------------------- */

static void shipped_profiles_load(void **state)
{
    (void)state;
    nn_link all[32];
    int n = nn_link_list(all, 32);
    assert_true(n >= 6);
    for (int i = 0; i < n; i++) {
        assert_true(all[i].name[0] && all[i].description[0]);
        assert_true(all[i].bandwidth_gbps > 0 && all[i].hop_us >= 0);
    }
    nn_link l;
    char err[NN_ERR_LEN];
    assert_int_equal(nn_link_find("infiniband-hdr", &l, err, sizeof err), 0);
    assert_string_equal(l.name, "InfiniBand HDR");
    assert_float_equal(l.bandwidth_gbps, 25, 0);
    assert_false(l.measured);
    assert_int_equal(nn_link_find("token-ring", &l, err, sizeof err), -1);
    assert_non_null(strstr(err, "no link profile 'token-ring'"));
    assert_non_null(strstr(err, "token-ring.ini"));
}

/* A file with `text` in a fresh folder; its path in path. */
static void write_file(const char *dir, const char *name, const char *text, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void expect_error(const char *dir, const char *text, const char *words)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_link l;
    write_file(dir, "broken.ini", text, path, sizeof path);
    assert_int_equal(nn_link_load(path, &l, err, sizeof err), -1);
    if (!strstr(err, words) || !strstr(err, "broken.ini"))
        fail_msg("expected '%s' and the file's name in: %s", words, err);
}

static void broken_profiles_named(void **state)
{
    (void)state;
    char dir[] = "/tmp/nnlab-links-XXXXXX";
    assert_non_null(mkdtemp(dir));
    expect_error(dir, "[link]\nbandwidth_gbps = 25\nhop_us = 1\nlatency = 3\n", "[link] latency: unknown key");
    expect_error(dir, "[link]\nhop_us = 1\n", "[link] bandwidth_gbps: missing");
    expect_error(dir, "[link]\nbandwidth_gbps = fast\nhop_us = 1\n", "bandwidth_gbps = fast: not a number");
    expect_error(dir, "[link]\nbandwidth_gbps = 0\nhop_us = 1\n", "bandwidth_gbps = 0: must be in");
    expect_error(dir, "[wire]\nspeed = 1\n", "[wire]: unknown section");
    expect_error(dir, "[link\nbandwidth_gbps = 2\n", "line 2: bandwidth_gbps: key outside any section");
    expect_error(dir, "[link]\nbandwidth_gbps = 2\nhop_us = 1\nmeasured = maybe\n", "expected true or false");
    char path[NN_PATH_LEN];
    snprintf(path, sizeof path, "%s/broken.ini", dir);
    unlink(path);
    rmdir(dir);
}

static void calibrated_link_round_trip(void **state)
{
    (void)state;
    char dir[] = "/tmp/nnlab-links-XXXXXX", path[NN_PATH_LEN], err[NN_ERR_LEN];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/here.ini", dir);
    nn_link l = link_of(7.25, 1.875), back;
    snprintf(l.name, sizeof l.name, "shared memory here");
    snprintf(l.description, sizeof l.description, "2 ranks on host \"x\", Open MPI vader");
    l.measured = 1;
    assert_int_equal(nn_link_save(path, &l, "calibrated by nnlab calibrate --link", err, sizeof err), 0);
    assert_int_equal(nn_link_load(path, &back, err, sizeof err), 0);
    assert_string_equal(back.id, "here");
    assert_string_equal(back.name, l.name);
    assert_string_equal(back.description, l.description);
    assert_true(back.measured);
    /* a text that neither quote can hold is refused, not written wrong */
    snprintf(l.description, sizeof l.description, "host \"x\", Open MPI's");
    assert_int_equal(nn_link_save(path, &l, "", err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot be stored"));
    assert_float_equal(back.bandwidth_gbps, 7.25, 1e-9);
    assert_float_equal(back.hop_us, 1.875, 1e-9);
    unlink(path);
    rmdir(dir);
}

/* ---- a step of N ranks ----------------------------------------------------------------------- */

static void load_preset(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static const nn_explain_options cpu_way = { .host_memory = 1, .data_on_device = 1 };

static void one_rank_is_one_rank(void **state)
{
    (void)state;
    nn_calibration cal;
    nn_preset p;
    nn_ranks_prediction r;
    nn_link l = link_of(25, 0.6);
    assert_int_equal(cal_fixture_load("calibration-cpu-dev2.txt", &cal), 0);
    load_preset("mnist-mlp-128", &p);
    nn_ranks_predict(&p, 32, 1, &cal, &cpu_way, &l, 1, &r);
    assert_float_equal(r.allreduce_us, 0, 0);
    assert_float_equal(r.step_us, r.one_rank_us, 1e-9);
    assert_float_equal(r.speedup, 1.0, 1e-12);
    /* the gradients are the parameters' */
    assert_float_equal(r.gradient_bytes, 4.0 * 101770, 0);
}

/* The sequel's lesson in numbers: MNIST's small MLP at batch 4 a rank over
 * Ethernet-like figures loses to one rank; LeNet at 512 a rank over
 * InfiniBand gains. */
static void where_ranks_pay(void **state)
{
    (void)state;
    nn_calibration cal;
    nn_preset mlp, lenet;
    nn_ranks_prediction slow, fast, hidden;
    nn_link ethernet = link_of(1.17, 20), ib = link_of(25, 0.6);
    char words[256];
    assert_int_equal(cal_fixture_load("calibration-cpu-dev2.txt", &cal), 0);
    load_preset("mnist-mlp-128", &mlp);
    load_preset("lenet-cifar10", &lenet);
    nn_ranks_predict(&mlp, 4, 2, &cal, &cpu_way, &ethernet, 0, &slow);
    assert_true(slow.speedup < 1.0);
    assert_float_equal(slow.exposed_us, slow.allreduce_us, 0);
    assert_float_equal(slow.step_us, slow.rank_step_us + slow.allreduce_us, 1e-9);
    nn_ranks_words(&slow, words, sizeof words);
    assert_non_null(strstr(words, "2 ranks are 0."));
    assert_non_null(strstr(words, "same 8 samples"));
    nn_ranks_predict(&lenet, 512, 4, &cal, &cpu_way, &ib, 0, &fast);
    assert_true(fast.speedup > 2.0 && fast.speedup <= 4.0 + 1e-9);
    assert_true(fast.efficiency > 0.5 && fast.efficiency <= 1.0 + 1e-9);
    nn_ranks_words(&fast, words, sizeof words);
    assert_non_null(strstr(words, "as fast as one rank on the same 2048 samples"));
    /* overlap hides behind backward, never the last hops */
    nn_ranks_predict(&mlp, 4, 2, &cal, &cpu_way, &ethernet, 1, &hidden);
    assert_true(hidden.exposed_us <= slow.exposed_us);
    assert_true(hidden.exposed_us >= hidden.hops_us);
    assert_true(hidden.backward_us > 0 && hidden.backward_us < hidden.rank_step_us);
}

/* Ranks sharing one host's cores: the engine's threads a rank, their turns
 * on a core past one a core, and the step priced with the rank's own
 * calibration, slowed by its turns, nothing hidden behind the backward on a
 * CPU (the ranks' cores add the sums up). */
static void ranks_sharing_a_host(void **state)
{
    (void)state;
    double ts;
    assert_int_equal(nn_ranks_threads_each(1, 16, &ts), 16);
    assert_float_equal(ts, 1.0, 0);
    assert_int_equal(nn_ranks_threads_each(3, 16, &ts), 5);
    assert_float_equal(ts, 1.0, 0);
    assert_int_equal(nn_ranks_threads_each(2, 2, &ts), 1);
    assert_float_equal(ts, 1.0, 0);
    assert_int_equal(nn_ranks_threads_each(3, 2, &ts), 1);
    assert_float_equal(ts, 1.5, 1e-12);
    assert_int_equal(nn_ranks_threads_each(4, 0, &ts), 1);     /* no cores known: one */
    assert_float_equal(ts, 4.0, 1e-12);

    nn_calibration cal, slow_cal;
    nn_preset mlp;
    nn_ranks_prediction own, shared, turns;
    nn_link shm = link_of(8, 0.13);
    assert_int_equal(cal_fixture_load("calibration-cpu-dev2.txt", &cal), 0);
    load_preset("mnist-mlp-128", &mlp);
    slow_cal = cal;                  /* a rank's calibration: half the rates of the host's */
    slow_cal.gemm_gflops /= 2;
    slow_cal.mem_gbps /= 2;
    for (int i = 0; i < slow_cal.linear_fwd.n; i++)
        slow_cal.linear_fwd.gflops[i] /= 2;
    for (int i = 0; i < slow_cal.linear_bwd.n; i++)
        slow_cal.linear_bwd.gflops[i] /= 2;
    nn_ranks_predict(&mlp, 64, 2, &cal, &cpu_way, &shm, 1, &own);
    nn_ranks_predict_shared(&mlp, 64, 2, &cal, &slow_cal, 1.0, &cpu_way, &shm, 1, &shared);
    assert_true(shared.rank_step_us > own.rank_step_us);
    assert_float_equal(shared.one_rank_us, own.one_rank_us, 1e-9);     /* one rank: every core */
    assert_float_equal(shared.exposed_us, shared.allreduce_us, 1e-9);   /* nothing hidden on a CPU */
    assert_true(own.exposed_us < own.allreduce_us);
    nn_ranks_predict_shared(&mlp, 64, 3, &cal, &slow_cal, 1.5, &cpu_way, &shm, 0, &turns);
    nn_ranks_predict_shared(&mlp, 64, 3, &cal, &slow_cal, 1.0, &cpu_way, &shm, 0, &shared);
    assert_float_equal(turns.rank_step_us, 1.5 * shared.rank_step_us, 1e-9);
    assert_float_equal(turns.step_us, turns.rank_step_us + turns.allreduce_us, 1e-9);
}

/* ---- the ranks' sweep's rules ---------------------------------------------------------------- */

static void rank_counts_read(void **state)
{
    (void)state;
    int counts[NN_RANKS_MAX_COUNTS], n;
    char err[256];
    assert_int_equal(nn_ranks_parse_counts("1,2,4", counts, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(counts[2], 4);
    static const char *const bad[][2] = {
        { "1,,2", "empty" }, { "2,1", "counts must rise" }, { "1,x", "'x' is not a rank count" },
        { "0", "'0' is not" }, { "1,2,", "trailing" }, { "1,2,3,4,5,6,7,8,9", "at most 8" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(nn_ranks_parse_counts(bad[i][0], counts, &n, err, sizeof err), -1);
        if (!strstr(err, bad[i][1]))
            fail_msg("%s: expected '%s' in: %s", bad[i][0], bad[i][1], err);
    }
}

/* A sweep of made-up measured runs: speedup and efficiency from the two
 * runs of each cell, and the sentence that names where ranks stop paying. */
static void where_measured_ranks_stop_paying(void **state)
{
    (void)state;
    static nn_ranks_sweep sw;
    char words[512];
    memset(&sw, 0, sizeof sw);
    sw.n_counts = 3;
    sw.counts[0] = 1, sw.counts[1] = 2, sw.counts[2] = 4;
    sw.n_batches = 2;
    sw.batches[0] = 4, sw.batches[1] = 256;
    /* at 4: one rank at 8 takes 50 us, two ranks at 4 take 80: no pay */
    const double ranks_us[3][2] = { { 40, 1000 }, { 80, 600 }, { 120, 700 } };
    const double one_us[3][2] = { { 40, 1000 }, { 50, 1900 }, { 60, 3800 } };
    for (int c = 0; c < 3; c++)
        for (int b = 0; b < 2; b++) {
            nn_ranks_cell *cell = &sw.cell[c][b];
            cell->ranks.state = cell->one.state = NN_RANKS_DONE;
            cell->ranks.step_us = ranks_us[c][b];
            cell->ranks.allreduce_us = c ? 20 : 0;
            cell->one.step_us = one_us[c][b];
            nn_ranks_cell_finish(&sw, c, b);
        }
    assert_float_equal(sw.cell[1][1].speedup, 1900.0 / 600, 1e-12);
    assert_float_equal(sw.cell[2][1].efficiency, 3800.0 / 700 / 4, 1e-12);
    assert_float_equal(sw.cell[1][0].allreduce_share, 0.25, 1e-12);
    nn_ranks_sweep_words(&sw, 0, words, sizeof words);
    assert_non_null(strstr(words, "at 4 a rank, ranks do not pay: the best, 2 ranks, are 0.62x one rank on the "
                                  "same 8 samples"));
    nn_ranks_sweep_words(&sw, 1, words, sizeof words);
    assert_non_null(strstr(words, "ranks pay up to 4: 5.43x"));
    /* 4 ranks slower than 2 at 256: said */
    sw.cell[2][1].ranks.step_us = 1500;
    nn_ranks_cell_finish(&sw, 2, 1);
    nn_ranks_sweep_words(&sw, 1, words, sizeof words);
    assert_non_null(strstr(words, "ranks pay up to 2: 3.17x one rank on the same 512 samples"));
    assert_non_null(strstr(words, "4 are slower than 2 (2.53x)"));
    /* a failed run is no figure */
    sw.cell[1][1].ranks.state = sw.cell[2][1].ranks.state = NN_RANKS_FAILED;
    nn_ranks_cell_finish(&sw, 1, 1);
    nn_ranks_cell_finish(&sw, 2, 1);
    nn_ranks_sweep_words(&sw, 1, words, sizeof words);
    assert_non_null(strstr(words, "no run of more than one rank measured"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_price),
        cmocka_unit_test(fit_recovers_figures),
        cmocka_unit_test(fit_refuses_what_it_cannot_fit),
        cmocka_unit_test(shipped_profiles_load),
        cmocka_unit_test(broken_profiles_named),
        cmocka_unit_test(calibrated_link_round_trip),
        cmocka_unit_test(one_rank_is_one_rank),
        cmocka_unit_test(where_ranks_pay),
        cmocka_unit_test(ranks_sharing_a_host),
        cmocka_unit_test(rank_counts_read),
        cmocka_unit_test(where_measured_ranks_stop_paying),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* tests/test_ranks_lines.c - the ranks' progress lines read back
 * (src/jobs/ranks_lines.c): a line as `nnlab train --progress-lines`
 * prints it, nulls before anything is timed, the ways a line is not one
 * (other text, broken JSON, a rank out of range, an unknown state), and a
 * stream cut anywhere: every whole line once, a line too long dropped
 * whole, never read as two. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ranks_lines.h"

/* As cli_progress_line prints it, with a failure's error. */
static const char *const full =
    "{\"progress\": 1, \"rank\": 1, \"ranks\": 2, \"state\": \"running\", \"step\": 180, \"steps\": 400, "
    "\"epoch\": 1, \"loss\": 0.8125, \"elapsed_s\": 0.061, \"samples_per_s\": 201000, \"us_per_step\": 319, "
    "\"allreduce_us\": 85.5, \"eta_s\": 0.07, \"loss_points\": 3, \"epochs_done\": 1, \"steps_per_epoch\": 938, "
    "\"val_loss\": 0.5, \"val_accuracy\": 0.8, \"timed_steps\": 179, "
    "\"parts\": {\"copy_us\": 20, \"forward_us\": 75, \"backward_us\": 87, \"optimizer_us\": 51, \"sync_us\": 0.5, "
    "\"allreduce_us\": 85.5}}";

static void a_full_line(void **state)
{
    (void)state;
    ranks_line l;
    assert_int_equal(ranks_line_parse(full, 16, &l), 0);
    assert_int_equal(l.rank, 1);
    assert_int_equal(l.ranks, 2);
    assert_int_equal(l.state, NN_JOB_RUNNING);
    assert_int_equal(l.step, 180);
    assert_int_equal(l.steps, 400);
    assert_true(l.has_loss);
    assert_float_equal(l.loss, 0.8125, 1e-12);
    assert_true(l.has_rate);
    assert_float_equal(l.us_per_step, 319, 1e-9);
    assert_true(l.has_allreduce);
    assert_float_equal(l.allreduce_us, 85.5, 1e-9);
    assert_int_equal(l.loss_points, 3);
    assert_int_equal(l.steps_per_epoch, 938);
    assert_true(l.has_val && l.has_accuracy);
    assert_int_equal(l.timed_steps, 179);
    /* every part, and they add up to the step (as the rank measured them) */
    double sum = 0;
    for (int p = 0; p < NN_PHASE_COUNT; p++) {
        assert_true(l.part_valid & (1u << p));
        sum += l.part_us[p];
    }
    assert_float_equal(sum, 319, 1e-9);
}

/* Before a step is timed: nulls, nothing made up. */
static void nulls_before_timing(void **state)
{
    (void)state;
    ranks_line l;
    const char *line = "{\"progress\": 1, \"rank\": 0, \"ranks\": 3, \"state\": \"preparing\", \"step\": 0, "
                       "\"steps\": 0, \"epoch\": 0, \"loss\": null, \"elapsed_s\": 0, \"samples_per_s\": null, "
                       "\"us_per_step\": null, \"allreduce_us\": null, \"eta_s\": null, \"parts\": {}}";
    assert_int_equal(ranks_line_parse(line, 16, &l), 0);
    assert_int_equal(l.state, NN_JOB_PREPARING);
    assert_false(l.has_loss);
    assert_false(l.has_rate);
    assert_false(l.has_allreduce);
    assert_float_equal(l.us_per_step, 0, 0);
    assert_int_equal(l.part_valid, 0);
}

static void a_failure_says_why(void **state)
{
    (void)state;
    ranks_line l;
    const char *line = "{\"progress\": 1, \"rank\": 0, \"ranks\": 2, \"state\": \"failed\", \"step\": 3, "
                       "\"steps\": 9, \"epoch\": 1, \"error\": \"rank 1: out of \\\"memory\\\"\"}";
    assert_int_equal(ranks_line_parse(line, 16, &l), 0);
    assert_int_equal(l.state, NN_JOB_FAILED);
    assert_string_equal(l.error, "rank 1: out of \"memory\"");
}

static void not_progress_lines(void **state)
{
    (void)state;
    ranks_line l;
    const char *const bad[] = {
        "",
        "done in 00:01: trained on 2 ranks of cpu",
        "{\"progress\": 1, \"rank\": 0, \"ranks\": 2, \"state\": \"running\"",   /* cut */
        "{\"rank\": 0, \"ranks\": 2, \"state\": \"running\"}",                   /* not progress */
        "{\"progress\": 1, \"rank\": 2, \"ranks\": 2, \"state\": \"running\"}",  /* rank out of range */
        "{\"progress\": 1, \"rank\": -1, \"ranks\": 2, \"state\": \"running\"}",
        "{\"progress\": 1, \"rank\": 0.5, \"ranks\": 2, \"state\": \"running\"}",
        "{\"progress\": 1, \"rank\": 0, \"ranks\": 17, \"state\": \"running\"}", /* beyond the cap */
        "{\"progress\": 1, \"rank\": 0, \"ranks\": 2, \"state\": \"sleeping\"}", /* no such state */
        "{\"progress\": 1, \"rank\": 0, \"ranks\": 2}",
        "{\"progress\": 1, \"rank\": \"0\", \"ranks\": 2, \"state\": \"running\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (ranks_line_parse(bad[i], 16, &l) == 0)
            fail_msg("read as a progress line: %s", bad[i]);
    }
}

typedef struct seen {
    int n;
    char line[8][RANKS_LINE_MAX + 1];
} seen;

static void keep(const char *line, void *ctx)
{
    seen *s = ctx;
    if (s->n < 8)
        snprintf(s->line[s->n], sizeof s->line[s->n], "%s", line);
    s->n++;
}

/* The same stream fed in pieces of every size from 1 byte: the same lines. */
static void a_stream_cut_anywhere(void **state)
{
    (void)state;
    char stream[4096];
    snprintf(stream, sizeof stream, "%s\nmpirun says hello\n%s\n", full, full);
    size_t len = strlen(stream);
    for (size_t piece = 1; piece <= len; piece += piece < 16 ? 1 : 97) {
        ranks_line_buffer b;
        seen s;
        memset(&b, 0, sizeof b);
        memset(&s, 0, sizeof s);
        for (size_t at = 0; at < len; at += piece)
            ranks_line_feed(&b, stream + at, at + piece <= len ? piece : len - at, keep, &s);
        assert_int_equal(s.n, 3);
        assert_string_equal(s.line[0], full);
        assert_string_equal(s.line[1], "mpirun says hello");
        assert_string_equal(s.line[2], full);
    }
}

/* A line longer than the buffer is dropped whole; the next one comes through. */
static void a_line_too_long(void **state)
{
    (void)state;
    static char big[RANKS_LINE_MAX * 2 + 64];
    ranks_line_buffer b;
    seen s;
    memset(&b, 0, sizeof b);
    memset(&s, 0, sizeof s);
    memset(big, 'x', RANKS_LINE_MAX + 10);
    big[0] = '{';
    ranks_line_feed(&b, big, RANKS_LINE_MAX + 10, keep, &s);
    ranks_line_feed(&b, "}\nshort\n", 8, keep, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.line[0], "short");
    /* a partial line at the end of the stream is not a line */
    ranks_line_feed(&b, "{\"progress\": 1", 14, keep, &s);
    assert_int_equal(s.n, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_full_line),
        cmocka_unit_test(nulls_before_timing),
        cmocka_unit_test(a_failure_says_why),
        cmocka_unit_test(not_progress_lines),
        cmocka_unit_test(a_stream_cut_anywhere),
        cmocka_unit_test(a_line_too_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

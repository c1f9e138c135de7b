/* tests/test_ui_chart.c - the lab's charts as pure functions: braille and
 * ASCII rasters of known data, clipping, axis ranges, tick values and their
 * labels, log scales. One cmocka group. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "text/chart.h"

static ui_chart *chart;              /* 77 KB: one, on the heap */

static int setup(void **state)
{
    (void)state;
    chart = malloc(sizeof *chart);
    return chart ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(chart);
    return 0;
}

static void assert_cell(int col, int row, const char *want)
{
    char buf[8];
    ui_chart_cell(chart, col, row, buf, sizeof buf);
    assert_string_equal(buf, want);
}

static void assert_ticks(const ui_axis *a, int max_ticks, const double *want, int n)
{
    double got[32];
    assert_int_equal(ui_axis_ticks(a, max_ticks, got, 32), n);
    for (int i = 0; i < n; i++)
        assert_true(fabs(got[i] - want[i]) <= 1e-9 * fabs(want[i]) + 1e-12);
}

/* ---- rasters ------------------------------------------------------------------- */

static void test_braille_diagonal(void **state)
{
    /* 2x1 cells = 4x4 dots; y = x from (0,0) to (3,3) lights the anti-diagonal
     * of the dot grid: dots (0,3), (1,2) in the first cell, (2,1), (3,0) in the second */
    const double x[] = { 0, 1, 2, 3 }, y[] = { 0, 1, 2, 3 };
    ui_axis ax = { 0, 3, 0 }, ay = { 0, 3, 0 };
    (void)state;
    ui_chart_init(chart, 2, 1, 1);
    ui_chart_plot(chart, 0, x, y, 4, &ax, &ay, 0);
    assert_int_equal(chart->dots[0][0], 0x40 | 0x20);   /* dot 7 (left, bottom) + dot 6 (right, row 2) */
    assert_int_equal(chart->dots[0][1], 0x02 | 0x08);   /* dot 2 (left, row 1) + dot 4 (right, top) */
    assert_cell(0, 0, "\u2860");
    assert_cell(1, 0, "\u280a");
    /* connected, the same four dots: the segments run through them */
    ui_chart_init(chart, 2, 1, 1);
    ui_chart_plot(chart, 0, x, y, 2, &ax, &ay, 0);
    ui_chart_plot(chart, 0, (const double[]){ 0, 3 }, (const double[]){ 0, 3 }, 2, &ax, &ay, 1);
    assert_cell(0, 0, "\u2860");
    assert_cell(1, 0, "\u280a");
}

static void test_braille_horizontal_line(void **state)
{
    const double x[] = { 0, 10 }, y[] = { 1, 1 };
    ui_axis ax = { 0, 10, 0 }, ay = { 0, 1, 0 };
    (void)state;
    ui_chart_init(chart, 3, 2, 1);
    ui_chart_plot(chart, 0, x, y, 2, &ax, &ay, 1);
    for (int c = 0; c < 3; c++) {
        assert_cell(c, 0, "\u2809");   /* dots 1 and 4: the top row of the cell */
        assert_cell(c, 1, "");
    }
}

static void test_ascii_marks_and_sharing(void **state)
{
    const double x[] = { 0, 3 }, y0[] = { 0, 3 }, y1[] = { 3, 0 };
    ui_axis ax = { 0, 3, 0 }, ay = { 0, 3, 0 };
    char buf[8];
    (void)state;
    ui_chart_init(chart, 4, 4, 0);
    ui_chart_plot(chart, 0, x, y0, 2, &ax, &ay, 1);
    assert_cell(0, 3, "*");
    assert_cell(1, 2, "*");
    assert_cell(3, 0, "*");
    assert_cell(0, 0, "");
    ui_chart_plot(chart, 1, x, y1, 2, &ax, &ay, 1);
    assert_cell(0, 0, "+");
    assert_cell(3, 3, "+");
    /* with four dot columns the two diagonals meet in no cell; a third series does */
    ui_chart_plot(chart, 2, (const double[]){ 0 }, (const double[]){ 0 }, 1, &ax, &ay, 0);
    assert_int_equal(ui_chart_cell(chart, 0, 3, buf, sizeof buf), 1u | 4u);
    assert_string_equal(buf, "#");
}

static void test_clipping_and_gaps(void **state)
{
    const double x[] = { -100, 5, 1e300, 7, NAN, 9 }, y[] = { 0.5, 0.5, 0.5, 0.5, 0.5, 0.5 };
    ui_axis ax = { 0, 9, 0 }, ay = { 0, 1, 0 };
    (void)state;
    ui_chart_init(chart, 10, 3, 0);
    ui_chart_plot(chart, 0, x, y, 6, &ax, &ay, 1);
    /* the segment from x = -100 enters at the left edge and runs to 5 */
    for (int c = 0; c <= 9; c++)
        assert_cell(c, 1, "*");
    assert_cell(0, 0, "");
    /* nothing lands outside the chart */
    for (int r = 0; r < UI_CHART_MAX_H; r++)
        for (int c = 0; c < UI_CHART_MAX_W; c++)
            if (r >= 3 || c >= 10)
                assert_int_equal(chart->dots[r][c], 0);
}

static void test_vline(void **state)
{
    ui_axis ax = { 1, 16, 2 };
    (void)state;
    ui_chart_init(chart, 5, 2, 0);
    ui_chart_vline(chart, 3, 4, &ax);    /* log2: 4 is halfway from 1 to 16 */
    assert_cell(2, 0, "x");
    assert_cell(2, 1, "");               /* dotted: every other row */
    ui_chart_vline(chart, 3, 100, &ax);  /* outside: nothing */
    assert_cell(4, 0, "");
}

/* ---- axes ------------------------------------------------------------------------ */

static void test_axis_finish(void **state)
{
    ui_axis a;
    (void)state;
    ui_axis_begin(&a, 0);
    ui_axis_include(&a, 0.3);
    ui_axis_include(&a, 2.3);
    ui_axis_include(&a, NAN);
    ui_axis_finish(&a, 0);
    assert_true(a.lo == 0.0 && a.hi == 2.5);         /* outwards to steps of 0.5 */

    ui_axis_begin(&a, 0);
    ui_axis_include(&a, 40);
    ui_axis_include(&a, 90);
    ui_axis_finish(&a, 1);
    assert_true(a.lo == 0.0 && a.hi == 100.0);       /* from zero, steps of 20 */

    ui_axis_begin(&a, 0);
    ui_axis_finish(&a, 0);
    assert_true(a.lo == 0.0 && a.hi == 1.0);         /* no data */

    ui_axis_begin(&a, 0);
    ui_axis_include(&a, 2.0);
    ui_axis_finish(&a, 0);
    assert_true(a.lo < 2.0 && a.hi > 2.0);           /* one value: a range around it */

    ui_axis_begin(&a, 10);
    ui_axis_include(&a, -1);
    ui_axis_include(&a, 0);
    ui_axis_finish(&a, 0);
    assert_true(a.lo == 1.0 && a.hi == 10.0);        /* a log axis ignores <= 0 */

    ui_axis_begin(&a, 10);
    ui_axis_include(&a, 100);
    ui_axis_include(&a, 10000);
    ui_axis_finish(&a, 0);
    assert_true(a.lo < 100 && a.lo > 70 && a.hi > 10000 && a.hi < 13000);   /* 5% of the decades */
}

static void test_log_scale(void **state)
{
    ui_axis a = { 1, 100, 10 }, b = { 1, 4096, 2 };
    (void)state;
    assert_true(fabs(ui_axis_frac(&a, 10) - 0.5) < 1e-12);
    assert_true(fabs(ui_axis_frac(&b, 64) - 0.5) < 1e-12);
    assert_true(isnan(ui_axis_frac(&a, 0)));
    assert_true(isnan(ui_axis_frac(&a, -5)));
    assert_true(isnan(ui_axis_frac(&a, INFINITY)));
    assert_int_equal(ui_axis_cell(&a, 10, 11), 5);
    assert_int_equal(ui_axis_cell(&b, 4096, 13), 12);
    assert_int_equal(ui_axis_cell(&b, 8192, 13), -1);
    ui_axis lin = { 0, 10, 0 };
    assert_int_equal(ui_axis_cell(&lin, 5, 11), 5);
    assert_int_equal(ui_axis_cell(&lin, -1, 11), -1);
}

static void test_ticks(void **state)
{
    (void)state;
    assert_ticks(&(ui_axis){ 0, 1, 0 }, 6, (const double[]){ 0, 0.2, 0.4, 0.6, 0.8, 1 }, 6);
    assert_ticks(&(ui_axis){ 0, 2.5, 0 }, 6, (const double[]){ 0, 0.5, 1, 1.5, 2, 2.5 }, 6);
    assert_ticks(&(ui_axis){ -1, 1, 0 }, 3, (const double[]){ -1, 0, 1 }, 3);
    assert_ticks(&(ui_axis){ 0.25, 18750, 0 }, 5, (const double[]){ 5000, 10000, 15000 }, 3);
    assert_ticks(&(ui_axis){ 1, 1e4, 10 }, 8, (const double[]){ 1, 10, 100, 1000, 10000 }, 5);
    /* 13 powers of two into 7 ticks: every other one */
    assert_ticks(&(ui_axis){ 1, 4096, 2 }, 7, (const double[]){ 1, 4, 16, 64, 256, 1024, 4096 }, 7);
    /* less than a decade: 2x and 5x */
    assert_ticks(&(ui_axis){ 0.3, 2, 10 }, 8, (const double[]){ 0.5, 1, 2 }, 3);
    /* samples/s of a sweep: 3.3k..150k holds only 10k and 100k */
    assert_ticks(&(ui_axis){ 3300, 150000, 10 }, 8, (const double[]){ 5000, 10000, 20000, 50000, 100000 }, 5);
    /* too many subticks for the height: the powers alone */
    assert_ticks(&(ui_axis){ 3300, 150000, 10 }, 3, (const double[]){ 10000, 100000 }, 2);
    /* within one decade and too short for subticks: round linear steps */
    assert_ticks(&(ui_axis){ 0.3, 2, 10 }, 2, (const double[]){ 2 }, 1);
    double none[4];
    assert_int_equal(ui_axis_ticks(&(ui_axis){ 1, 1, 0 }, 5, none, 4), 0);
}

static void test_tick_format(void **state)
{
    static const struct { double v; const char *s; } cases[] = {
        { 0, "0" }, { 0.25, "0.25" }, { 2.5, "2.5" }, { 1, "1" }, { 4096, "4096" }, { 10000, "10k" },
        { 61820, "61.8k" }, { 1.5e6, "1.5M" }, { 2e9, "2G" }, { 1e-4, "1e-04" }, { -0.5, "-0.5" },
        { 0.125, "0.125" },
    };
    char buf[32];
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ui_format_tick(cases[i].v, buf, sizeof buf);
        assert_string_equal(buf, cases[i].s);
        assert_true(strlen(buf) <= 6);
    }
}

/* Ticks 0.05 apart about 74.9 (a validation accuracy's axis): each label
 * its own, at the fewest digits that tell them apart. */
static void test_tick_labels_distinct(void **state)
{
    const double close[] = { 74.8, 74.85, 74.9, 74.95, 75 }, apart[] = { 0, 25, 50, 75, 100 };
    char a[32], b[32];
    (void)state;
    int sig = ui_tick_sig(close, 5);
    assert_true(sig > 3 && sig <= 8);
    for (int i = 1; i < 5; i++) {
        ui_format_tick_sig(close[i - 1], sig, a, sizeof a);
        ui_format_tick_sig(close[i], sig, b, sizeof b);
        assert_string_not_equal(a, b);
    }
    ui_format_tick_sig(74.85, sig, a, sizeof a);
    assert_string_equal(a, "74.85");
    assert_int_equal(ui_tick_sig(apart, 5), 3);   /* round ticks keep the short labels */
    const double big[] = { 10000, 10050, 10100 };
    sig = ui_tick_sig(big, 3);
    ui_format_tick_sig(big[0], sig, a, sizeof a);
    ui_format_tick_sig(big[1], sig, b, sizeof b);
    assert_string_not_equal(a, b);
    /* the x axis's row at those digits: five labels, none twice */
    ui_axis ax = { 74.8, 75, 0 };
    char row[128];
    assert_true(ui_axis_label_row(&ax, close, 5, 80, row) >= 2);
    assert_null(strstr(row, "74.9 ") && strstr(strstr(row, "74.9 ") + 1, "74.9 ") ? row : NULL);
}

static void test_label_row(void **state)
{
    const double t[] = { 0, 50, 100 };
    ui_axis a = { 0, 100, 0 };
    char row[64];
    (void)state;
    assert_int_equal(ui_axis_label_row(&a, t, 3, 21, row), 3);
    assert_string_equal(row, "0        50       100");
    /* too narrow for all three: the middle label would touch the first */
    assert_int_equal(ui_axis_label_row(&a, t, 3, 5, row), 2);
    assert_string_equal(row, "0 100");
    /* a log2 axis of batch sizes */
    const double b[] = { 1, 16, 256, 4096 };
    ui_axis l = { 1, 4096, 2 };
    assert_int_equal(ui_axis_label_row(&l, b, 4, 25, row), 4);
    assert_string_equal(row, "1      16      256   4096");
}

/* TensorBoard's smoothing: each value moves the average by 1 - w of the way */
static void test_ema(void **state)
{
    double y[5] = { 1.0, 0.0, NAN, 0.0, 1.0 }, out[5];
    (void)state;
    ui_ema(y, 5, 0.6, out);
    assert_true(out[0] == 1.0);
    assert_true(fabs(out[1] - 0.6) < 1e-12);         /* 0.6 x 1 + 0.4 x 0 */
    assert_true(isnan(out[2]));                      /* copied; the average waits */
    assert_true(fabs(out[3] - 0.36) < 1e-12);        /* 0.6 x 0.6 */
    assert_true(fabs(out[4] - 0.616) < 1e-12);       /* 0.6 x 0.36 + 0.4 */
    ui_ema(y, 2, 0.0, out);                          /* weight 0: the data itself */
    assert_true(out[0] == 1.0 && out[1] == 0.0);
    ui_ema(y, 2, 0.6, y);                            /* in place */
    assert_true(fabs(y[1] - 0.6) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_braille_diagonal),
        cmocka_unit_test(test_braille_horizontal_line),
        cmocka_unit_test(test_ascii_marks_and_sharing),
        cmocka_unit_test(test_clipping_and_gaps),
        cmocka_unit_test(test_vline),
        cmocka_unit_test(test_axis_finish),
        cmocka_unit_test(test_log_scale),
        cmocka_unit_test(test_ticks),
        cmocka_unit_test(test_tick_format),
        cmocka_unit_test(test_label_row),
        cmocka_unit_test(test_tick_labels_distinct),
        cmocka_unit_test(test_ema),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

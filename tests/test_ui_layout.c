/* tests/test_ui_layout.c - the lab's layout as a pure function of the
 * terminal size: every panel inside the screen, no two panels overlapping,
 * the exact split at 100x30, "too small" below 80x24, where the Explain
 * panel goes (beside the charts when wide, tall, or in the chart's place
 * when toggled) and the sweep table's cell width. One cmocka group. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "text/layout.h"

static void assert_rect(ui_rect r, int x, int y, int w, int h)
{
    assert_int_equal(r.x, x);
    assert_int_equal(r.y, y);
    assert_int_equal(r.w, w);
    assert_int_equal(r.h, h);
}

/* Every shown panel lies inside cols x rows and overlaps no other. */
static void check_sound(int cols, int rows, enum ui_screen screen, int n_jobs)
{
    ui_layout l;
    assert_int_equal(ui_layout_compute(cols, rows, screen, n_jobs, &l), 0);
    assert_false(l.too_small);
    ui_rect all[] = { l.title, l.status, l.presets, l.fields, l.details, l.chart, l.side, l.jobs, l.sys,
                      l.explain };
    int n = (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < n; i++) {
        if (all[i].w == 0 && all[i].h == 0)
            continue;
        assert_true(all[i].x >= 0 && all[i].y >= 0);
        assert_true(all[i].w > 0 && all[i].h > 0);
        assert_true(all[i].x + all[i].w <= cols);
        assert_true(all[i].y + all[i].h <= rows);
        for (int j = i + 1; j < n; j++)
            assert_true(ui_rect_disjoint(all[i], all[j]));
    }
    assert_rect(l.title, 0, 0, cols, 1);
    assert_rect(l.status, 0, rows - 1, cols, 1);
}

static void test_every_size_is_sound(void **state)
{
    static const int sizes[][2] = { { 80, 24 }, { 100, 30 }, { 200, 60 }, { 81, 25 }, { 132, 43 }, { 300, 100 },
                                    { 129, 35 }, { 130, 36 }, { 150, 40 }, { 130, 24 } };
    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_sound(sizes[i][0], sizes[i][1], UI_SETUP, 1);
        check_sound(sizes[i][0], sizes[i][1], UI_RUN, 1);
        check_sound(sizes[i][0], sizes[i][1], UI_RUN, 2);
        check_sound(sizes[i][0], sizes[i][1], UI_RUN, 3);   /* a CPU and a GPU's two ways */
        check_sound(sizes[i][0], sizes[i][1], UI_RUN, 4);   /* two lanes and four ranks' rows */
        check_sound(sizes[i][0], sizes[i][1], UI_SWEEP, 1);
    }
}

static void test_setup_80x24(void **state)
{
    ui_layout l;
    (void)state;
    assert_int_equal(ui_layout_compute(80, 24, UI_SETUP, 1, &l), 0);
    /* the fields keep their full height; the list gets the rest of the left column */
    assert_rect(l.fields, 0, 8, 38, UI_SETUP_FIELD_ROWS + 2);
    assert_rect(l.presets, 0, 1, 38, 7);
    assert_rect(l.details, 38, 1, 42, 22);
    assert_true(ui_rect_inner(l.presets).h >= 5);    /* five shipped presets visible */
}

static void test_run_100x30(void **state)
{
    ui_layout l;
    (void)state;
    assert_int_equal(ui_layout_compute(100, 30, UI_RUN, 1, &l), 0);
    assert_rect(l.chart, 0, 1, 74, 19);
    assert_rect(l.side, 74, 1, 26, 19);
    assert_rect(l.jobs, 0, 20, 100, 4);              /* two rows for the one job */
    assert_rect(l.sys, 0, 24, 100, 5);
    /* side by side: two more job rows, taken from the chart */
    assert_int_equal(ui_layout_compute(100, 30, UI_RUN, 2, &l), 0);
    assert_rect(l.jobs, 0, 18, 100, 6);
    assert_int_equal(l.chart.h, 17);
}

static void test_run_200x60(void **state)
{
    ui_layout l;
    (void)state;
    assert_int_equal(ui_layout_compute(200, 60, UI_RUN, 1, &l), 0);
    /* the Explain panel on the right (at most 60 wide), the side panel a
     * quarter of the rest, the chart what is left; all as tall as the chart */
    assert_rect(l.explain, 140, 1, 60, 48);
    assert_rect(l.side, 105, 1, 35, 48);
    assert_rect(l.chart, 0, 1, 105, 48);
    assert_int_equal(l.sys.h, 6);                    /* one more row for many cores */
    assert_int_equal(l.sys.y + l.sys.h, 59);
}

static void test_sweep_80x24(void **state)
{
    ui_layout l;
    (void)state;
    assert_int_equal(ui_layout_compute(80, 24, UI_SWEEP, 1, &l), 0);
    assert_rect(l.chart, 0, 1, 44, 19);
    assert_rect(l.side, 44, 1, 36, 19);
    assert_rect(l.jobs, 0, 20, 80, 3);
    /* the table holds 13 batch sizes (1..4096), a header and three lines below */
    assert_true(ui_rect_inner(l.side).h >= 13 + 1 + 3);
}

static void test_explain_beside_or_toggled(void **state)
{
    ui_layout l;
    ui_rect r;
    int replaces = -1;
    (void)state;
    /* narrow: no room of its own; shown, it takes the chart's place */
    assert_int_equal(ui_layout_compute(100, 30, UI_RUN, 1, &l), 0);
    assert_int_equal(l.explain.w, 0);
    r = ui_explain_rect(&l, 0, &replaces);
    assert_int_equal(r.w, 0);
    assert_int_equal(replaces, 0);
    r = ui_explain_rect(&l, 1, &replaces);
    assert_rect(r, l.chart.x, l.chart.y, l.chart.w, l.chart.h);
    assert_int_equal(replaces, 1);
    assert_int_equal(ui_layout_compute(UI_EXPLAIN_BESIDE_COLS - 1, 40, UI_RUN, 2, &l), 0);
    assert_int_equal(l.explain.w, 0);
    /* from 130 columns: beside the chart and the side panel, whatever the toggle */
    assert_int_equal(ui_layout_compute(UI_EXPLAIN_BESIDE_COLS, 30, UI_RUN, 1, &l), 0);
    assert_rect(l.explain, 86, 1, 44, 19);
    assert_rect(l.side, 60, 1, 26, 19);
    assert_rect(l.chart, 0, 1, 60, 19);
    for (int shown = 0; shown < 2; shown++) {
        r = ui_explain_rect(&l, shown, &replaces);
        assert_rect(r, 86, 1, 44, 19);
        assert_int_equal(replaces, 0);
    }
    assert_true(ui_rect_inner(l.explain).w >= 42);  /* a predicted line, a phase list */
    /* the sweep: under the chart from 36 rows, in the chart's column */
    assert_int_equal(ui_layout_compute(100, UI_EXPLAIN_BELOW_ROWS - 1, UI_SWEEP, 1, &l), 0);
    assert_int_equal(l.explain.h, 0);
    assert_int_equal(ui_layout_compute(100, UI_EXPLAIN_BELOW_ROWS, UI_SWEEP, 1, &l), 0);
    assert_rect(l.explain, 0, 22, 60, 10);
    assert_rect(l.chart, 0, 1, 60, 21);
    assert_int_equal(l.side.h, 31);                  /* the table keeps the whole height */
    assert_int_equal(ui_layout_compute(120, 60, UI_SWEEP, 1, &l), 0);
    assert_int_equal(l.explain.h, 14);               /* at most 14 rows: the chart keeps the rest */
    assert_int_equal(l.chart.h + l.explain.h, 60 - 2 - 3);
    /* too small: nowhere */
    assert_int_equal(ui_layout_compute(60, 20, UI_RUN, 1, &l), -1);
    r = ui_explain_rect(&l, 1, &replaces);
    assert_int_equal(r.w, 0);
    assert_int_equal(replaces, 0);
}

static void test_sweep_cell_width(void **state)
{
    (void)state;
    assert_int_equal(ui_sweep_cell_width(34, 1, 0), UI_SWEEP_CELL_WIDE);      /* 6 + 11 */
    assert_int_equal(ui_sweep_cell_width(34, 2, 1), UI_SWEEP_CELL_NARROW);    /* 6 + 22 + 9 = 37 */
    assert_int_equal(ui_sweep_cell_width(37, 2, 1), UI_SWEEP_CELL_WIDE);
    assert_int_equal(ui_sweep_cell_width(47, 3, 1), UI_SWEEP_CELL_NARROW);    /* 48 needed */
    assert_int_equal(ui_sweep_cell_width(58, 3, 1), UI_SWEEP_CELL_WIDE);
    assert_int_equal(ui_sweep_cell_width(0, 1, 0), UI_SWEEP_CELL_NARROW);
}

static void test_too_small(void **state)
{
    static const int sizes[][2] = { { 79, 24 }, { 80, 23 }, { 60, 20 }, { 0, 0 }, { 1000, 5 } };
    ui_layout l;
    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        assert_int_equal(ui_layout_compute(sizes[i][0], sizes[i][1], UI_RUN, 1, &l), -1);
        assert_true(l.too_small);
        assert_int_equal(l.chart.w, 0);
        assert_int_equal(l.cols, sizes[i][0]);
    }
}

/* The loss and the accuracy charts share the chart's rect: beside each
 * other when both fit, else stacked, else the loss alone; never overlapping. */
static void test_split_charts(void **state)
{
    ui_rect loss, acc;
    (void)state;
    ui_split_charts((ui_rect){ 0, 1, 74, 19 }, &loss, &acc);   /* 100x30's chart */
    assert_int_equal(loss.w + acc.w, 74);
    assert_true(loss.w >= UI_CHART_MIN_W && acc.w >= UI_ACC_CHART_MIN_W);
    assert_int_equal(acc.x, loss.w);
    assert_int_equal(acc.h, 19);
    assert_true(ui_rect_disjoint(loss, acc));
    ui_split_charts((ui_rect){ 0, 1, 200, 40 }, &loss, &acc);
    assert_int_equal(acc.w, 80);                                /* two fifths */
    ui_split_charts((ui_rect){ 0, 1, 54, 20 }, &loss, &acc);   /* narrow, tall: stacked */
    assert_int_equal(loss.w, 54);
    assert_int_equal(acc.w, 54);
    assert_int_equal(loss.h + acc.h, 20);
    assert_int_equal(acc.y, 1 + loss.h);
    assert_true(ui_rect_disjoint(loss, acc));
    ui_split_charts((ui_rect){ 0, 1, 54, 13 }, &loss, &acc);   /* 80x24's: the loss alone */
    assert_int_equal(loss.w, 54);
    assert_int_equal(loss.h, 13);
    assert_int_equal(acc.w, 0);
}

static void test_rect_helpers(void **state)
{
    (void)state;
    ui_rect a = { 0, 0, 10, 5 }, b = { 10, 0, 5, 5 }, c = { 9, 4, 3, 3 }, z = { 3, 3, 0, 0 };
    assert_true(ui_rect_disjoint(a, b));
    assert_false(ui_rect_disjoint(a, c));
    assert_true(ui_rect_disjoint(a, z));
    assert_rect(ui_rect_inner(a), 1, 1, 8, 3);
    assert_rect(ui_rect_inner((ui_rect){ 5, 5, 1, 1 }), 5, 5, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_size_is_sound),
        cmocka_unit_test(test_split_charts),
        cmocka_unit_test(test_setup_80x24),
        cmocka_unit_test(test_run_100x30),
        cmocka_unit_test(test_run_200x60),
        cmocka_unit_test(test_sweep_80x24),
        cmocka_unit_test(test_explain_beside_or_toggled),
        cmocka_unit_test(test_sweep_cell_width),
        cmocka_unit_test(test_too_small),
        cmocka_unit_test(test_rect_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

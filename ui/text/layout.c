/* ui/text/layout.c - panel rectangles as a pure function of the terminal size;
 * see layout.h. Every screen shares a title row on top and a status row at
 * the bottom; the body between them is split per screen. */
#include "layout.h"

#include <string.h>

static int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static ui_rect rect(int x, int y, int w, int h)
{
    ui_rect r = { x, y, w, h };
    return r;
}

ui_rect ui_rect_inner(ui_rect r)
{
    if (r.w < 2 || r.h < 2)
        return rect(r.x, r.y, 0, 0);
    return rect(r.x + 1, r.y + 1, r.w - 2, r.h - 2);
}

int ui_rect_disjoint(ui_rect a, ui_rect b)
{
    if (a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0)
        return 1;
    return a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
}

/* Left: the preset list above the fields (the fields keep their full height,
 * the list scrolls); right: the details of the selected preset. */
static void layout_setup(ui_layout *l, int body_y, int body_h)
{
    int left_w = clamp(l->cols * 2 / 5, 38, 56);
    int fields_h = UI_SETUP_FIELD_ROWS + 2;
    l->fields = rect(0, body_y + body_h - fields_h, left_w, fields_h);
    l->presets = rect(0, body_y, left_w, body_h - fields_h);
    l->details = rect(left_w, body_y, l->cols - left_w, body_h);
}

/* Chart and side panel on top, the job rows and the system box below: the
 * chart takes whatever height is left, so a taller terminal gives it all.
 * A wide terminal adds the Explain panel at the right of the chart and the
 * side panel, with their height: it is read beside the loss curve. */
static void layout_run(ui_layout *l, int body_y, int body_h, int n_jobs)
{
    int explain_w = l->cols >= UI_EXPLAIN_BESIDE_COLS ? clamp(l->cols * 3 / 10, 44, 60) : 0;
    int rest = l->cols - explain_w;
    int side_w = clamp(rest / 4, 26, 44);
    int jobs_h = 2 * n_jobs + 2;
    int sys_h = l->rows >= 40 ? 6 : 5;
    int chart_h = body_h - jobs_h - sys_h;
    l->chart = rect(0, body_y, rest - side_w, chart_h);
    l->side = rect(rest - side_w, body_y, side_w, chart_h);
    if (explain_w)
        l->explain = rect(rest, body_y, explain_w, chart_h);
    l->jobs = rect(0, body_y + chart_h, l->cols, jobs_h);
    l->sys = rect(0, body_y + chart_h + jobs_h, l->cols, sys_h);
}

/* Chart on the left, the results table on the right (wide enough for one
 * column per device and the ratio), one progress row below. A tall
 * terminal puts the Explain panel under the chart. */
static void layout_sweep(ui_layout *l, int body_y, int body_h)
{
    int side_w = clamp(l->cols * 2 / 5, 36, 60);
    int jobs_h = 3, top_h = body_h - jobs_h;
    int explain_h = l->rows >= UI_EXPLAIN_BELOW_ROWS ? clamp(top_h / 3, 10, 14) : 0;
    l->chart = rect(0, body_y, l->cols - side_w, top_h - explain_h);
    if (explain_h)
        l->explain = rect(0, body_y + top_h - explain_h, l->cols - side_w, explain_h);
    l->side = rect(l->cols - side_w, body_y, side_w, top_h);
    l->jobs = rect(0, body_y + top_h, l->cols, jobs_h);
}

ui_rect ui_explain_rect(const ui_layout *l, int shown, int *replaces_chart)
{
    *replaces_chart = 0;
    if (l->too_small)
        return rect(0, 0, 0, 0);
    if (l->explain.w > 0 && l->explain.h > 0)
        return l->explain;
    if (!shown)
        return rect(0, 0, 0, 0);
    *replaces_chart = 1;
    return l->chart;
}

int ui_sweep_cell_width(int inner_w, int n_devices, int ratio)
{
    int wide = 6 + n_devices * UI_SWEEP_CELL_WIDE + (ratio ? 9 : 0);
    return wide <= inner_w ? UI_SWEEP_CELL_WIDE : UI_SWEEP_CELL_NARROW;
}

int ui_layout_compute(int cols, int rows, enum ui_screen screen, int n_jobs, ui_layout *out)
{
    memset(out, 0, sizeof *out);
    out->cols = cols;
    out->rows = rows;
    if (cols < UI_MIN_COLS || rows < UI_MIN_ROWS) {
        out->too_small = 1;
        return -1;
    }
    out->title = rect(0, 0, cols, 1);
    out->status = rect(0, rows - 1, cols, 1);
    int body_y = 1, body_h = rows - 2;
    switch (screen) {
    case UI_SETUP: layout_setup(out, body_y, body_h); break;
    /* UI_RUN_MAX_JOBS rows a pair; from 40 rows one pair more, for the rows of
     * a job's ranks (ui/panels/rank_rows.c: 4 fit then) */
    case UI_RUN: layout_run(out, body_y, body_h, clamp(n_jobs, 1, rows >= 40 ? 4 : 3)); break;
    case UI_SWEEP: layout_sweep(out, body_y, body_h); break;
    case UI_LESSON: break;           /* one box, the body whole (ui/screens/lesson_screen.c) */
    case UI_N_SCREENS: break;        /* a count, not a screen */
    }
    return 0;
}

void ui_split_charts(ui_rect chart, ui_rect *loss, ui_rect *acc)
{
    *loss = chart;
    *acc = rect(0, 0, 0, 0);
    if (chart.w >= UI_CHART_MIN_W + UI_ACC_CHART_MIN_W) {
        int aw = clamp(chart.w * 2 / 5, UI_ACC_CHART_MIN_W, chart.w - UI_CHART_MIN_W);
        loss->w = chart.w - aw;
        *acc = rect(chart.x + loss->w, chart.y, aw, chart.h);
    } else if (chart.h >= 2 * UI_CHART_MIN_H) {
        loss->h = chart.h - chart.h / 2;
        *acc = rect(chart.x, chart.y + loss->h, chart.w, chart.h / 2);
    }
}

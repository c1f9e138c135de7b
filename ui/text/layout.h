/* ui/text/layout.h - where each panel of each screen goes, as a pure function of
 * the terminal size (nvtop's interface_layout_selection habit): no curses
 * here, so tests/test_ui_layout.c checks every size without a terminal. */
#ifndef NNLAB_UI_LAYOUT_H
#define NNLAB_UI_LAYOUT_H

#define UI_MIN_COLS 80
#define UI_MIN_ROWS 24

typedef struct ui_rect {
    int x, y, w, h;              /* top-left corner and size, in cells; w = h = 0: not shown */
} ui_rect;

enum ui_screen { UI_SETUP, UI_RUN, UI_SWEEP, UI_LESSON, UI_N_SCREENS };

typedef struct ui_layout {
    int cols, rows;
    int too_small;               /* below UI_MIN_COLS x UI_MIN_ROWS: nothing else is set */
    ui_rect title;               /* the top row */
    ui_rect status;              /* the bottom row: keys, messages */
    /* setup */
    ui_rect presets;             /* the preset list (boxed) */
    ui_rect fields;              /* device, batch, ... (boxed) */
    ui_rect details;             /* description, data, network summary (boxed) */
    /* run and sweep */
    ui_rect chart;               /* boxed; the plot area is inside, less the axis labels */
    ui_rect side;                /* run: epochs, accuracy, summary; sweep: the table (boxed) */
    ui_rect jobs;                /* run: two rows per job (progress, phases); sweep: one row */
    ui_rect sys;                 /* run: CPU per core, GPU (boxed) */
    ui_rect explain;             /* run, sweep: the Explain panel (boxed) when there is room
                                    for it beside the others; w = h = 0: it takes the
                                    chart's place when asked for (ui_explain_rect) */
} ui_layout;

/* The run screen shows the Explain panel beside the chart and the side
 * panel from this width on; the sweep screen under its chart from this
 * height on. */
#define UI_EXPLAIN_BESIDE_COLS 130
#define UI_EXPLAIN_BELOW_ROWS 36

/* Number of setup fields the fields box must hold (ui/screens/setup_screen.c): the
 * most a preset shows (ui_field_shown: a training preset's 13). */
#define UI_SETUP_FIELD_ROWS 13

/* Lays out `screen` on a cols x rows terminal; n_jobs (1 to 3) sizes the
 * run screen's job box. Returns 0, or -1 with out->too_small set. */
int ui_layout_compute(int cols, int rows, enum ui_screen screen, int n_jobs, ui_layout *out);

/* Where the Explain panel goes: its own rect when the layout has one,
 * else the chart's when `shown` (toggled on), else nowhere. *replaces_chart
 * says whether the chart is hidden. */
ui_rect ui_explain_rect(const ui_layout *l, int shown, int *replaces_chart);

/* The sweep table's cell per device: samples/s in 7 columns, a space and
 * the regime, three letters (UI_SWEEP_CELL_WIDE) when the batch column
 * (6), n_devices cells and the ratio column (9, when shown) fit in inner_w,
 * else one letter (UI_SWEEP_CELL_NARROW). */
#define UI_SWEEP_CELL_WIDE 11
#define UI_SWEEP_CELL_NARROW 9
int ui_sweep_cell_width(int inner_w, int n_devices, int ratio);

/* The run screen's chart rect shared by the loss and the validation
 * accuracy charts: side by side when the loss keeps 40 columns and the
 * accuracy gets 28 (two fifths of the width, at most), else one above the
 * other when each gets 9 rows, else the loss alone (*acc is 0 x 0). */
#define UI_CHART_MIN_W 40
#define UI_ACC_CHART_MIN_W 28
#define UI_CHART_MIN_H 9
void ui_split_charts(ui_rect chart, ui_rect *loss, ui_rect *acc);

/* The inside of a boxed rect (one cell of border on each side). */
ui_rect ui_rect_inner(ui_rect r);

/* 1 when a and b share no cell, or either is empty. */
int ui_rect_disjoint(ui_rect a, ui_rect b);

#endif

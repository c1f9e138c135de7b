/* ui/layout.h - where each panel of each screen goes, as a pure function of
 * the terminal size (nvtop's interface_layout_selection habit): no curses
 * here, so tests/test_ui_layout.c checks every size without a terminal. */
#ifndef NNLAB_UI_LAYOUT_H
#define NNLAB_UI_LAYOUT_H

#define UI_MIN_COLS 80
#define UI_MIN_ROWS 24

typedef struct ui_rect {
    int x, y, w, h;              /* top-left corner and size, in cells; w = h = 0: not shown */
} ui_rect;

enum ui_screen { UI_SETUP, UI_RUN, UI_SWEEP };

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
} ui_layout;

/* Number of setup fields the fields box must hold (ui/setup_screen.c). */
#define UI_SETUP_FIELD_ROWS 13

/* Lays out `screen` on a cols x rows terminal; n_jobs (1 or 2) sizes the
 * run screen's job box. Returns 0, or -1 with out->too_small set. */
int ui_layout_compute(int cols, int rows, enum ui_screen screen, int n_jobs, ui_layout *out);

/* The inside of a boxed rect (one cell of border on each side). */
ui_rect ui_rect_inner(ui_rect r);

/* 1 when a and b share no cell, or either is empty. */
int ui_rect_disjoint(ui_rect a, ui_rect b);

#endif

/* ui/text/chart.h - line charts rasterised into a grid of cells, as pure
 * functions of the data (nvtop's plot.c habit): braille patterns (2x4 dots
 * per cell) when the terminal speaks UTF-8, one ASCII mark per cell
 * otherwise. The screens blit the cells and the tick labels; nothing here
 * knows about curses, so tests/test_ui_chart.c checks it on known data. */
#ifndef NNLAB_UI_CHART_H
#define NNLAB_UI_CHART_H

#include <stddef.h>

#define UI_CHART_MAX_W 320       /* cells; a wider plot area is cut to this */
#define UI_CHART_MAX_H 120
#define UI_CHART_SERIES 8        /* owner bits per cell */

typedef struct ui_axis {
    double lo, hi;               /* the range shown */
    int log;                     /* 0: linear; else the logarithm's base (2, 10) */
} ui_axis;

typedef struct ui_chart {
    int w, h;                    /* cells */
    int braille;                 /* 1: 2x4 dots per cell; 0: one dot per cell */
    char mark[UI_CHART_SERIES];  /* ASCII mode: the mark of each series */
    unsigned char dots[UI_CHART_MAX_H][UI_CHART_MAX_W];   /* braille bits, or 1 */
    unsigned char owner[UI_CHART_MAX_H][UI_CHART_MAX_W];  /* bit s: series s drew here */
} ui_chart;

/* ---- axes ---------------------------------------------------------------- */

/* Starts an empty range; ui_axis_include widens it; ui_axis_finish makes it
 * presentable. Non-finite values, and values <= 0 on a log axis, are left out. */
void ui_axis_begin(ui_axis *a, int log_base);
void ui_axis_include(ui_axis *a, double v);
/* Empty: [0, 1] (log: [1, base]). Linear: widened outwards to a round tick
 * step (from 0 when from_zero). Log: padded by 5% of the decades. */
void ui_axis_finish(ui_axis *a, int from_zero);

/* Where v falls, 0 at lo and 1 at hi (log axes in log space); NAN when it
 * cannot be shown (non-finite, or <= 0 on a log axis). */
double ui_axis_frac(const ui_axis *a, double v);
/* The cell (0 = left or bottom) of v on an axis `cells` long; -1 outside. */
int ui_axis_cell(const ui_axis *a, double v, int cells);

/* Round tick values inside [lo, hi], at most max_ticks of them: 1, 2, 5 x
 * 10^k steps on a linear axis, powers of the base on a log axis (with 2x and
 * 5x when a base-10 axis holds fewer than three powers). Returns the count. */
int ui_axis_ticks(const ui_axis *a, int max_ticks, double *out, int max);

/* "0", "0.25", "4096", "61.8k", "1.5M", "1e-04": at most 6 characters. */
void ui_format_tick(double v, char *buf, size_t len);
/* The same with sig significant digits (3 above). */
void ui_format_tick_sig(double v, int sig, char *buf, size_t len);
/* The digits (3 at least, 8 at most) at which the n ticks' labels differ
 * from each other: 74.85 and 74.9 print as "74.85" and "74.9", not "74.9"
 * twice. Every chart formats its ticks at it. */
int ui_tick_sig(const double *ticks, int n);

/* The x-axis label row (at ui_tick_sig's digits): row[0..w) gets each tick's label centred under its
 * cell (kept inside the row), skipping a label that would touch the one
 * before; row[w] = '\0'. Returns how many labels were placed. */
int ui_axis_label_row(const ui_axis *a, const double *ticks, int n, int w, char *row);

/* ---- smoothing ------------------------------------------------------------- */

/* The smoothing weight the run screen's `s` key applies (TensorBoard's
 * slider, at its default). */
#define UI_SMOOTH_WEIGHT 0.6

/* An exponential moving average of y into out (out may be y): out[0] =
 * y[0], out[i] = w out[i-1] + (1 - w) y[i]. A non-finite y[i] is copied and
 * leaves the average where it was; w is clamped to [0, 1). */
void ui_ema(const double *y, int n, double w, double *out);

/* ---- the raster ------------------------------------------------------------- */

/* Clears the chart for w x h cells (cut to the maximum); ASCII marks default
 * to "*+ox#%@&". */
void ui_chart_init(ui_chart *c, int w, int h, int braille);

/* Draws points (x[i], y[i]) of `series` (0..UI_CHART_SERIES-1); with connect,
 * line segments join consecutive points that can be shown. Parts outside the
 * axes are clipped. */
void ui_chart_plot(ui_chart *c, int series, const double *x, const double *y, int n,
                   const ui_axis *ax, const ui_axis *ay, int connect);

/* A dotted vertical line at x (every other dot row), e.g. a crossover. */
void ui_chart_vline(ui_chart *c, int series, double x, const ui_axis *ax);

/* The text of cell (col, row), row 0 at the top: a braille character (UTF-8)
 * or the series' ASCII mark ('#' when several series share the cell); ""
 * when empty. Returns the owner bits (0: empty). */
unsigned ui_chart_cell(const ui_chart *c, int col, int row, char *buf, size_t len);

/* Dot grid size (2w x 4h in braille, w x h in ASCII). */
int ui_chart_dots_w(const ui_chart *c);
int ui_chart_dots_h(const ui_chart *c);

#endif

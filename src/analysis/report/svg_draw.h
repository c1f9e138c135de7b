/* src/analysis/report/svg_draw.h - the SVG writers' drawing and layout: text
 * measured with a conservative width per glyph class (no font is read: the
 * slide names DejaVu Sans or the generic sans-serif) and kept inside the
 * canvas, shrunk within limits, then shortened with an ellipsis; ticks,
 * axes, curves and a legend that wraps inside the frame. Only the SVG
 * writers (export_svg.c) include it. tests/svg_layout.py measures the files
 * with the same table. */
#ifndef NNLAB_SVG_DRAW_H
#define NNLAB_SVG_DRAW_H

#include <stddef.h>
#include <stdio.h>

#include "nnlab/export_svg.h"

#define SVG_TITLE_PX 34
#define SVG_LABEL_PX 28
#define SVG_TICK_PX 22
#define SVG_MIN_PX 20            /* no text is shrunk below this: legible from the back row */
#define SVG_LINE_PX 4
#define SVG_MAX_TICKS 16            /* batch 1 to 32768 on a log2 axis */
#define SVG_MARGIN 12.0          /* no text nearer the canvas's edge */

/* A plot's frame in pixels and the ranges its axes show. */
typedef struct svg_plot {
    double x0, y0, w, h;
    double xmin, xmax, ymin, ymax;
    int xlog, ylog;              /* base-2 batches, base-10 rates */
    int xwhole;                  /* x counts whole things (epochs): whole ticks */
} svg_plot;

/* A text's box: left, top, right, bottom. */
typedef struct svg_box {
    double l, t, r, b;
} svg_box;

typedef struct svg_style {
    const char *colour;
    const char *dash;            /* stroke-dasharray, or NULL: solid */
    int dimmed;
    const char *label;
} svg_style;

void svg_escaped(FILE *f, const char *s);
/* s's width at px (bold: a tenth wider), never less than a DejaVu Sans glyph's. */
double svg_text_width(const char *s, double px, int bold);
/* The box of a text of width w drawn at (x, y) with this anchor. */
svg_box svg_text_box(double x, double y, double px, double w, const char *anchor);
int svg_boxes_overlap(const svg_box *a, const svg_box *b);

/* Text at (x, y) kept between left and right: moved in, shrunk down to
 * min_px, then cut at a word with an ellipsis. Returns its box. */
svg_box svg_text_fit(FILE *f, double x, double y, int px, int min_px, const char *anchor, double left,
                     double right, const char *extra, const char *s);
/* s fitted into width at px (shrunk to min_px, then cut): the size it takes
 * and, in out, the text drawn. */
int svg_fit(const char *s, double width, int px, int min_px, int bold, char *out, size_t len);
/* The lines of s wrapped at its spaces within width at px, each at most
 * line_len bytes; returns the count (at most max_lines, the last cut). */
int svg_wrap(const char *s, double width, int px, char (*lines)[160], int max_lines);

double svg_px_x(const svg_plot *p, double x);
double svg_px_y(const svg_plot *p, double y);
int svg_log_ticks(double lo, double hi, int base, double *t, int max);
void svg_tick_label(double v, char *buf, size_t len);
void svg_range_add(double v, double *lo, double *hi);
void svg_range_finish(double *lo, double *hi, int is_log);

/* The canvas and its title, fitted to the width. */
void svg_open(FILE *f, const char *title);
/* The frame, the ticks with their labels (a label that would touch the one
 * before it is left out) and both axes' labels fitted to the plot. */
void svg_axes(FILE *f, const svg_plot *p, const char *xlabel, const char *ylabel);
/* x tick labels on a plot's bottom edge at ticks t (the race panel's too). */
void svg_x_tick_labels(FILE *f, const svg_plot *p, const double *t, int n);
void svg_curve(FILE *f, const svg_plot *p, const double *xs, const double *ys, int n, const svg_style *s);

/* A legend laid out in rows from (left, top) inside right, each entry a
 * swatch and its label: returns the rows; draw 0 only measures. */
int svg_legend(FILE *f, const svg_style *s, int n, double left, double right, double top, int draw);
#define SVG_LEGEND_ROW 32.0

#endif

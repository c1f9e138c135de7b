/* ui/panels/chart_view.c - a boxed chart: the raster of ui/text/chart.c with its y tick
 * labels and axis line, the x tick labels below, the x axis title on the
 * bottom edge and a legend on the top edge (what does not fit there on the
 * frame's first row inside). */
#include "panels/chart_view.h"
#include "draw.h"
#include "lab_state.h"
#include "text/format.h"

#include <stdio.h>
#include <string.h>

/* Widest y label, so that the plot starts right after the labels. */
static int label_width(const double *ticks, int n)
{
    int w = 1, sig = ui_tick_sig(ticks, n);
    for (int i = 0; i < n; i++) {
        char buf[32];
        ui_format_tick_sig(ticks[i], sig, buf, sizeof buf);
        if ((int)strlen(buf) > w)
            w = (int)strlen(buf);
    }
    return w;
}

/* The legend's columns: each series' mark (mark_w columns for a line) and name. */
static int legend_cols(const ui_lab *lab, const ui_series *s, int ns, int mark_w)
{
    int cols = 0;
    for (int i = 0; i < ns; i++)
        cols += 1 + (lab->utf8 && s[i].connect ? mark_w : 1) + 2 + (int)strlen(s[i].name);
    return cols;
}

/* One entry's columns: a blank, its mark, a blank, its name, a blank. */
static int entry_cols(const ui_lab *lab, const ui_series *s, int mark_w)
{
    return 1 + (lab->utf8 && s->connect ? mark_w : 1) + 2 + (int)strlen(s->name);
}

/* The entries from `from` on that fit whole on row y from x to end, drawn
 * when draw is set; returns the first entry left over. */
static int legend_entries(ui_lab *lab, int y, int x, int end, const ui_series *s, int from, int ns, int mark_w,
                          int draw)
{
    int i = from;
    for (; i < ns && x + entry_cols(lab, &s[i], mark_w) <= end; i++) {
        char mark[8];
        int cols = 1;
        if (!lab->utf8)
            snprintf(mark, sizeof mark, "%c", lab->chart.mark[i]);
        else if (s[i].connect && s[i].dashed)   /* predicted: dashed, as on the slide */
            snprintf(mark, sizeof mark, "%s", mark_w == 2 ? "\u254d\u254d" : "\u254d"), cols = mark_w;
        else if (s[i].connect)
            snprintf(mark, sizeof mark, "%s", mark_w == 2 ? "\u2501\u2501" : "\u2501"), cols = mark_w;
        else
            snprintf(mark, sizeof mark, "\u2022");
        if (draw) {
            ui_put(y, x + 1, end - x - 1, ui_attr(lab, s[i].role), mark);
            ui_putf(y, x + 1 + cols, end - x - 1 - cols, A_NORMAL, " %s ", s[i].name);
        }
        x += entry_cols(lab, &s[i], mark_w);
    }
    return i;
}

/* The title whole, then the legend: on the top edge the entries that fit
 * whole (the lines' marks one column where that makes them all fit), the
 * rest on the frame's first row inside where `inside` allows it, and what
 * still does not fit counted (" +2"). Returns the rows it took inside the
 * frame, 0 or 1. */
static int draw_legend(ui_lab *lab, ui_rect box, const char *title, const ui_series *s, int ns, int inside,
                       int draw)
{
    int x = box.x + 2, end = box.x + box.w - 2, mark_w = 2;
    ui_rect in = ui_rect_inner(box);
    char fitted[160];
    if ((int)strlen(title) + 2 + legend_cols(lab, s, ns, 2) > end - x)
        mark_w = 1;
    ui_fit_words(title, end - x - 2, fitted, sizeof fitted);
    if (draw)
        ui_putf(box.y, x, end - x, A_BOLD, " %s ", fitted);
    x += (int)strlen(fitted) + 2;
    int i = legend_entries(lab, box.y, x, end, s, 0, ns, mark_w, 0);
    if (i == ns) {
        legend_entries(lab, box.y, x, end, s, 0, ns, mark_w, draw);
        return 0;
    }
    i = legend_entries(lab, box.y, x, inside ? end : end - 4, s, 0, ns, mark_w, draw);
    int y = box.y, at = end - 4;
    if (inside) {                    /* the rest on the first row inside */
        i = legend_entries(lab, in.y, in.x, in.x + in.w - 4, s, i, ns, mark_w, draw);
        y = in.y;
        at = in.x + in.w - 4;
    }
    if (i < ns && draw)
        ui_putf(y, at, 4, ui_attr(lab, UI_DIM), " +%d", ns - i);
    return inside;
}

static void draw_cells(ui_lab *lab, int px, int py, const ui_series *s, int ns)
{
    const ui_chart *c = &lab->chart;
    for (int row = 0; row < c->h; row++)
        for (int col = 0; col < c->w; col++) {
            char cell[8];
            unsigned owner = ui_chart_cell(c, col, row, cell, sizeof cell);
            if (!owner)
                continue;
            attr_t a = A_BOLD;       /* several series share the cell */
            for (int i = 0; i <= ns; i++)
                if (owner == 1u << i)
                    a = i < ns ? ui_attr(lab, s[i].role) : ui_attr(lab, UI_ERROR);
            attron(a);
            mvaddstr(py + row, px + col, cell);
            attroff(a);
        }
}

static void draw_y_axis(ui_lab *lab, int x, int lw, int py, int ph, const ui_axis *ay,
                        const double *ticks, int n)
{
    attr_t dim = ui_attr(lab, UI_DIM);
    int sig = ui_tick_sig(ticks, n);
    attron(dim);
    mvvline(py, x + lw, ACS_VLINE, ph);
    attroff(dim);
    for (int i = 0; i < n; i++) {
        int cell = ui_axis_cell(ay, ticks[i], ph);
        char buf[32];
        if (cell < 0)
            continue;
        ui_format_tick_sig(ticks[i], sig, buf, sizeof buf);
        ui_putf(py + ph - 1 - cell, x, lw, A_NORMAL, "%*s", lw, buf);
        attron(dim);
        mvaddch(py + ph - 1 - cell, x + lw, ACS_RTEE);
        attroff(dim);
    }
}

void ui_chart_view(ui_lab *lab, ui_rect box, const char *title, const char *x_title,
                   const ui_axis *ax, const ui_axis *ay, const ui_series *s, int ns,
                   const double *vlines, int nv)
{
    ui_chart_view_text(lab, box, title, x_title, ax, ay, s, ns, vlines, nv, "waiting for the first loss point");
}

void ui_chart_view_text(ui_lab *lab, ui_rect box, const char *title, const char *x_title,
                        const ui_axis *ax, const ui_axis *ay, const ui_series *s, int ns,
                        const double *vlines, int nv, const char *empty)
{
    ui_rect in = ui_rect_inner(box);
    double yt[16], xt[24];
    char row[UI_CHART_MAX_W + 1];
    ui_box(lab, box, NULL);
    if (in.w < 16 || in.h < 4)
        return;
    int inside = in.h >= 8, legend_rows = draw_legend(lab, box, title, s, ns, inside, 0);
    in.y += legend_rows;             /* the legend's second row: the plot starts under it */
    in.h -= legend_rows;
    int ph = in.h - 1;               /* the last inside row holds the x labels */
    int nyt = ui_axis_ticks(ay, ph / 2 > 2 ? (ph / 2 < 8 ? ph / 2 : 8) : 2, yt, 16);
    int lw = label_width(yt, nyt);
    int px = in.x + lw + 1, pw = in.w - lw - 1;
    ui_chart_init(&lab->chart, pw, ph, lab->utf8);
    for (int i = 0; i < ns && i < UI_CHART_SERIES - 1; i++)
        if (s[i].glyph)
            lab->chart.mark[i] = s[i].glyph;
    lab->chart.mark[ns < UI_CHART_SERIES ? ns : UI_CHART_SERIES - 1] = '|';
    draw_legend(lab, box, title, s, ns, inside, 1);
    int points = 0;
    for (int i = 0; i < ns && i < UI_CHART_SERIES - 1; i++) {
        ui_chart_plot(&lab->chart, i, s[i].x, s[i].y, s[i].n, ax, ay, s[i].connect);
        points += s[i].n;
    }
    for (int i = 0; i < nv; i++)
        ui_chart_vline(&lab->chart, ns, vlines[i], ax);
    draw_y_axis(lab, in.x, lw, in.y, ph, ay, yt, nyt);
    draw_cells(lab, px, in.y, s, ns);
    int nxt = ui_axis_ticks(ax, pw / 10 > 2 ? pw / 10 : 2, xt, 24);
    if (pw > UI_CHART_MAX_W)
        pw = UI_CHART_MAX_W;
    ui_axis_label_row(ax, xt, nxt, pw, row);
    ui_put(in.y + ph, px, pw, A_NORMAL, row);
    char fitted[160];                /* cut between its words when the edge is short */
    if (x_title && ui_fit_words(x_title, box.w - 5, fitted, sizeof fitted) > 0)
        ui_putf(box.y + box.h - 1, box.x + box.w - (int)strlen(fitted) - 4, (int)strlen(fitted) + 2,
                A_BOLD, " %s ", fitted);
    int ew = (int)strlen(empty);
    if (points == 0)
        ui_put(in.y + ph / 2, px + (pw > ew ? (pw - ew) / 2 : 0), pw, ui_attr(lab, UI_DIM), empty);
}

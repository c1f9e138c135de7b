/* ui/panels/chart_view.h - a boxed chart with axes, labels and a legend
 * (ui/panels/chart_view.c), drawn from a ui_chart raster (ui/text/chart.h):
 * the run screen's loss and accuracy, the sweep's samples/s. */
#ifndef NNLAB_UI_CHART_VIEW_H
#define NNLAB_UI_CHART_VIEW_H

#include "draw.h"
#include "text/chart.h"

typedef struct ui_series {
    const double *x, *y;
    int n;
    int connect;
    int role;                        /* UI_SERIES0.., or UI_PALETTE0 + a series */
    const char *name;
    char glyph;                      /* its ASCII mark; 0: the chart's default */
    int dashed;                      /* predicted: a dashed mark in the legend */
} ui_series;
void ui_chart_view(ui_lab *lab, ui_rect box, const char *title, const char *x_title,
                   const ui_axis *ax, const ui_axis *ay, const ui_series *s, int ns,
                   const double *vlines, int nv);
/* The same, saying `empty` in the plot while no series has a point. */
void ui_chart_view_text(ui_lab *lab, ui_rect box, const char *title, const char *x_title,
                        const ui_axis *ax, const ui_axis *ay, const ui_series *s, int ns,
                        const double *vlines, int nv, const char *empty);

#endif

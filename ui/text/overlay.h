/* ui/text/overlay.h - the session's earlier runs behind the current one, as
 * TensorBoard overlays runs: when a run is left, each of its jobs that
 * published loss points is kept (its points thinned to a bound, its epoch
 * results, a label of its settings: "cpu, batch 32, lr 0.001"), the oldest
 * dropped past UI_OVERLAY_MAX. `o` on the run screen shows them dimmed on
 * the loss chart; `x` draws them dimmed in the SVG. Kept for the session
 * only (lab->past), never saved. No curses here. */
#ifndef NNLAB_UI_OVERLAY_H
#define NNLAB_UI_OVERLAY_H

#include "nnlab/engine.h"
#include "nnlab/export_svg.h"

#define UI_OVERLAY_MAX 4             /* earlier runs kept */
#define UI_OVERLAY_POINTS 400        /* loss points kept of each (thinned evenly) */

typedef struct ui_past_run {
    char label[96];                  /* "cpu, batch 32, lr 0.001" */
    char preset[64];                 /* the run's preset: "mnist-mlp-128" */
    char label_preset[160];          /* both: "mnist-mlp-128: cpu, batch 32, lr 0.001" */
    nn_loss_point *pts;
    long n_pts;
    nn_epoch_result *eps;
    int n_eps;
} ui_past_run;

typedef struct ui_overlay {
    int shown;                       /* `o`: drawn on the loss chart */
    int n;                           /* kept, oldest first */
    ui_past_run run[UI_OVERLAY_MAX];
} ui_overlay;

struct ui_run;
/* Keeps each job of r that published loss points (the oldest dropped when
 * full); lr is the run's learning rate, for the label. */
void ui_overlay_keep(ui_overlay *o, const struct ui_run *r, double lr);
void ui_overlay_free(ui_overlay *o);
/* Run i's label beside a run of now_preset: its settings, with its preset
 * first when any kept run is of another preset than now_preset. */
const char *ui_overlay_label(const ui_overlay *o, int i, const char *now_preset);
/* The kept runs as the SVG writer takes them (at most max), labelled beside
 * a run of now_preset; returns how many. */
int ui_overlay_svg(const ui_overlay *o, const char *now_preset, nn_svg_past *out, int max);

#endif

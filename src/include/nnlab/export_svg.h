/* src/include/nnlab/export_svg.h - what a screen shows, as an SVG for a
 * slide: a run's loss and accuracy curves (with the session's earlier runs
 * dimmed behind them, labelled by their settings), or a sweep's samples/s by
 * batch with its crossovers marked. Self-contained (no fonts, scripts or
 * links from outside; the generic sans-serif family), legible on a
 * projector (1280x720, 20-34 px text, 4 px lines), every text kept inside
 * the canvas and clear of the others, each axis labelled with its unit, a
 * legend in the colours of nnlab/palette.h, and a title naming the preset,
 * the devices and the batch. The lab's `x` and the CLI's --svg write through these. */
#ifndef NNLAB_EXPORT_SVG_H
#define NNLAB_EXPORT_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "nnlab/export.h"
#include "nnlab/sweep.h"

#define NN_SVG_WIDTH 1280
#define NN_SVG_HEIGHT 720
/* Earlier runs drawn at most (the lab keeps as many). */
#define NN_SVG_MAX_PAST 6

/* An earlier run of the session, drawn dimmed behind the current one. */
typedef struct nn_svg_past {
    const nn_loss_point *pts;
    long n_pts;
    const nn_epoch_result *eps;
    int n_eps;
    const char *label;           /* its settings: "cpu, batch 64, lr 0.01" */
} nn_svg_past;

/* The run (its jobs' loss points against the step; validation accuracy, or
 * without one validation loss, against the epoch), lr its learning rate (0:
 * not said), and n_past earlier runs dimmed. 0, or -1 when a write failed. */
int nn_export_run_svg(FILE *f, const nn_export_run *run, double lr, const nn_svg_past *past, int n_past);
/* The sweep: samples/s by batch (both on log scales), one curve per device
 * (a predicted one dashed, its legend entry starred and a note saying what
 * each star covers), each matching pair's crossover (nn_sweep_pairs, as the
 * screen and the JSON) ringed, the pairs crossing at one batch under one
 * label. */
int nn_export_sweep_svg(FILE *f, const nn_sweep *sw);

/* Writes path atomically: the run (run != NULL) or the sweep. 0, or -1 with
 * a one-line message naming the file. */
int nn_export_svg_file(const char *path, const nn_export_run *run, double lr, const nn_svg_past *past, int n_past,
                       const nn_sweep *sw, char *err, size_t err_len);

#endif

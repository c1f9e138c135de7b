/* ui/text/sweep.h - the sweep screen's words for the results of the analysis
 * layer's sweep (nnlab/sweep.h: the runner, the crossover and the doubling
 * rules): the crossover line and a point's table cell. Pure functions, no
 * curses (tests/test_ui_text.c, tests/test_front_ends.c); ui/screens/sweep_screen.c
 * draws them. */
#ifndef NNLAB_UI_SWEEP_H
#define NNLAB_UI_SWEEP_H

#include <stddef.h>

#include "nnlab/sweep.h"

/* The lab marks where the GPU overtakes the CPU (the sweep's device c, the
 * baseline the caller found by its flags; -1 when there is none): the index
 * of nn_sweep_crossover(c, gpu), -1 when it does not, -2 when either device
 * is not in the sweep. The GPU is the measured one, else the predicted
 * nnlab graph way (nn_sweep_gpu_index). */
int ui_sweep_gpu_crossover(const nn_sweep *sw, int c);

/* The line under the table that says so: each matching pair's crossover
 * (nn_sweep_pairs) in the CLI's words (nn_sweep_crossover_words), "framework:
 * gpu fw* overtakes from batch 16 on; nnlab: gpu gr* is faster at every
 * batch swept"; returns its style (enum ui_text_style: UI_TS_OK, or
 * UI_TS_DIM when there is nothing to compare). */
int ui_sweep_crossover_text(const nn_sweep *sw, int c, char *buf, size_t len);

/* A device's column name in the table and its series in the chart, at most
 * 7 characters: "cpu", "gpu" (one way on it); with several ways on a
 * device its way's two letters, "gpu gr", "gpu ea", "cpu fw", and a star
 * when predicted, "gpu fw*" (the legend says what * means:
 * ui_sweep_predicted_note); nnlab's own CPU step stays "cpu". */
void ui_sweep_column_name(const nn_sweep *sw, int d, char *buf, size_t len);
/* "* predicted, not measured: gpu for T4 (a GPU profile), no GPU here; cpu
 * fw from this CPU's calibration"; "" without a predicted or external device. */
void ui_sweep_predicted_note(const nn_sweep *sw, char *buf, size_t len);

/* The table's columns in the order they are drawn (and dropped from the
 * right when the table is too narrow; the chart keeps every curve): the
 * devices nnlab measured, then the framework ways (their pair is the
 * write-ups' lesson), then nnlab's graph and eager ways predicted.
 * Returns n_devices. */
int ui_sweep_column_order(const nn_sweep *sw, int *order);

/* Point (d, i)'s cell, `cell` columns: samples/s (or the point's state)
 * and, once measured with a calibration, its regime (ovh, mem, cmp; one
 * letter when cell < UI_SWEEP_CELL_WIDE; none below UI_SWEEP_CELL_NARROW). */
void ui_sweep_cell_text(const nn_sweep *sw, int d, int i, int cell, char *buf, size_t len);

#endif

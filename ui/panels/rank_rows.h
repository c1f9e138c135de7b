/* ui/panels/rank_rows.h - the run screen's rows of a job over ranks
 * (NN_JOB_RANKS, a race of 1 rank against N): under its bar and phases,
 * one progress bar per rank (its steps, its share of the samples a
 * second, its ETA) and the all-reduce's share of its step, every figure
 * the rank's own, measured (its progress lines: nnlab/engine.h
 * nn_rank_progress). Where fewer rows than ranks fit, the last row sums
 * up the rest. */
#ifndef NNLAB_UI_RANK_ROWS_H
#define NNLAB_UI_RANK_ROWS_H

#include "lab_state.h"

/* At most this many rows for one job's ranks (80x24 has room for 2, a
 * terminal of 40 rows or more for 4: ui/text/layout.c). */
#define UI_RANK_ROWS_MAX 4

/* The rows job k of the run wants for its ranks: 0 for a job that is not
 * over ranks. */
int ui_rank_rows_wanted(const ui_run *r, int k);
/* The rows every job of the run wants. */
int ui_rank_rows_total(const ui_run *r);
/* Draws job j's rank rows from y, in at most rows rows, w wide. */
void ui_rank_rows_draw(ui_lab *lab, const ui_run_job *j, int y, int x, int w, int rows);

#endif

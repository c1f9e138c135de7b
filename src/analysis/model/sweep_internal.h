/* src/analysis/model/sweep_internal.h - what the sweep's files share inside
 * src/analysis (sweep.c records, sweep_noise.c judges the repetitions). */
#ifndef NNLAB_SWEEP_INTERNAL_H
#define NNLAB_SWEEP_INTERNAL_H

#include "nnlab/sweep.h"

/* Adds measurement m (median_us: the job's median step, 0 when its steps
 * were not waited for one by one) to point pt as one more repetition
 * (first: its first), and recomputes its spread; returns 1 when m is now
 * the point's median repetition (its measured step), else 0. */
int nn_sweep_add_repetition(nn_sweep_point *pt, const nn_step_measure *m, double median_us, int first);

/* Point (d, i) of a predicted device of way sw->way[d], priced by the
 * model with sw->cal[d] (a profile's figures, or a GPU's own) and the
 * framework's host cost per op from sw->prof. */
void nn_sweep_predict_point(nn_sweep *sw, int d, int i);

#endif

/* src/include/nnlab/divergence.h - a training job that diverged, or is on
 * its way: one rule and one sentence for every front end. The engine stops
 * a job whose loss became NaN or inf (NN_JOB_DIVERGED); before that, a loss
 * that grew far beyond where it started is already a lost run (a learning
 * rate of 1000 takes a few steps to reach NaN). The lab's banner, the CLI's
 * line and the exports all read nn_divergence_of and nn_divergence_text, and
 * the validation tables print a loss through nn_format_loss, which keeps its
 * width whatever the value (nan, inf, 3.1e+17). */
#ifndef NNLAB_DIVERGENCE_H
#define NNLAB_DIVERGENCE_H

#include <stddef.h>

#include "nnlab/engine.h"

/* A loss point this many times its job's first point (and above
 * NN_BLOWUP_FLOOR) is a blow-up: no learning rate that trains goes there. */
#define NN_BLOWUP_FACTOR 1000.0
#define NN_BLOWUP_FLOOR 1.0
/* A first loss point above this is a blow-up by itself (a run that logs
 * once may log only after it was lost). */
#define NN_BLOWUP_ABS 1e6

typedef struct nn_divergence {
    int diverged;                /* the job stopped: its loss became NaN or inf */
    int blowing_up;              /* not stopped, but a loss point is a blow-up */
    long step;                   /* the global step (1-based) where it was seen */
    int exact;                   /* diverged: that very step (else by that step) */
    double loss;                 /* the loss then: NaN, inf, or the blown-up value */
    double start_loss;           /* blowing_up: the job's first loss point (NAN: that
                                    point is the blow-up) */
} nn_divergence;

/* Whether the job of snapshot s (with its loss points pts[0..n_pts))
 * diverged or is blowing up: 1 with d filled, else 0 (d zeroed). */
int nn_divergence_of(const nn_snapshot *s, const nn_loss_point *pts, long n_pts, nn_divergence *d);

/* The sentence, the finding then " - " and what to do: "diverged at step
 * 12: loss nan - lower the learning rate", "loss blowing up by step 40:
 * 3.1e+08 - lower the learning rate (2.3 at the start)". */
void nn_divergence_text(const nn_divergence *d, char *buf, size_t len);

/* A loss in exactly `width` columns, right-aligned: four decimals while they
 * fit ("   2.3026"), else three significant digits ("  3.1e+17"), "nan" and
 * "inf" as words; the table's columns stay where they are. */
void nn_format_loss(double v, int width, char *buf, size_t len);

#endif

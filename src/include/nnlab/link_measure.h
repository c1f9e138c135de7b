/* src/include/nnlab/link_measure.h - a link calibrated on the ranks an MPI
 * launcher started: all-reduces of 4 bytes to 16 MiB timed, and the ring's
 * figures (nnlab/link.h) fitted to them, marked measured: `nnlab calibrate
 * --link NAME` runs it and saves the link profile NAME. The timing is
 * src/analysis/model/link_measure.c's nn_link_measure, over the ranks' comm
 * table. */
#ifndef NNLAB_LINK_MEASURE_H
#define NNLAB_LINK_MEASURE_H

#include <stddef.h>

#include "nnlab/link.h"

/* 4, 16, 64, ... 16 MiB: every fourth power of two; the presets' gradients are
 * at most 7.2 MB (mnist-mlp-1000), and a sum past the caches (64 MiB)
 * would pull the fit towards DRAM copies no preset makes */
#define NN_LINK_SIZES 12

typedef struct nn_link_measurement {
    int ranks;                   /* the ranks that summed */
    int rank;                    /* this process's (0 prints and saves) */
    int n;                       /* sizes timed */
    double bytes[NN_LINK_SIZES];
    double us[NN_LINK_SIZES];    /* each the median of 3 rounds of the ranks' mean */
    nn_link link;                /* the fit: measured, named after the transport */
    double rms_error;            /* the fit's, relative */
} nn_link_measurement;

/* Times and fits the link between this process's ranks (every rank calls
 * it; joined first with nn_ranks_join): 0, or -1 with the reason in err
 * (fewer than 2 ranks, a sum that failed, times that fit no ring). */
int nn_link_calibrate(nn_link_measurement *out, char *err, size_t err_len);

#endif

/* src/include/nnlab/link_measure.h - a link calibrated on the ranks an MPI
 * launcher started: all-reduces of 4 bytes to 64 MiB timed, and the ring's
 * figures (nnlab/link.h) fitted to them, marked measured. The timing is
 * src/analysis/model/link_measure.c's nn_link_measure, over the ranks' comm
 * table; the command that runs it on joined ranks (`nnlab calibrate
 * --link`) is not built yet. */
#ifndef NNLAB_LINK_MEASURE_H
#define NNLAB_LINK_MEASURE_H

#include <stddef.h>

#include "nnlab/link.h"

/* 4, 16, 64, ... 64 MiB: every fourth power of two */
#define NN_LINK_SIZES 13

typedef struct nn_link_measurement {
    int ranks;                   /* the ranks that summed */
    int rank;                    /* this process's (0 prints and saves) */
    int n;                       /* sizes timed */
    double bytes[NN_LINK_SIZES];
    double us[NN_LINK_SIZES];    /* each the median of 3 rounds of the ranks' mean */
    nn_link link;                /* the fit: measured, named after the transport */
    double rms_error;            /* the fit's, relative */
} nn_link_measurement;

#endif

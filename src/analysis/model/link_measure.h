/* src/analysis/model/link_measure.h - a link timed on ranks already joined,
 * given their comm table (a test hands it one of its own:
 * tests/test_link_measure.c). */
#ifndef NNLAB_MODEL_LINK_MEASURE_H
#define NNLAB_MODEL_LINK_MEASURE_H

#include "comm/comm.h"
#include "nnlab/link_measure.h"

/* Times every size on c's ranks (every rank calls it, the same sums in the
 * same order) and fits; 0, or -1 with the reason in err. */
int nn_link_measure(nn_comm *c, nn_link_measurement *out, char *err, size_t err_len);

#endif

/* src/jobs/link_calibrate.c - the link between this process's ranks
 * calibrated (nnlab/link_measure.h): the ranks a launcher started, once
 * joined (nn_ranks_join), time their sums through the comm table they
 * train with (src/analysis/model/link_measure.c does the timing and fit). */
#include "engine_internal.h"
#include "model/link_measure.h"
#include "nnlab/link_measure.h"
#include "util.h"

int nn_link_calibrate(nn_link_measurement *out, char *err, size_t err_len)
{
    nn_comm *c = engine_comm();
    if (!c)
        return nn_errorf(err, err_len, "a link is timed between ranks: start 2 or more (--ranks N, "
                         "or under mpirun or srun)");
    return nn_link_measure(c, out, err, err_len);
}

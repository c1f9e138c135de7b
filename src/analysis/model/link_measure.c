/* src/analysis/model/link_measure.c - a link calibrated: all-reduces of
 * 4 bytes to 16 MiB timed on the ranks a launcher started (the comm module,
 * backends/comm/comm.h), each size's time the median of three rounds of
 * the ranks' mean, and the ring's figures fitted to them (nn_link_fit); see
 * nnlab/link_measure.h. */
#include "link_measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define ROUNDS 3
/* Each size summed back to back this many times (the same count on every
 * rank: a rank that called once more would wait for ever): many for the
 * small sums, whose time is a few microseconds, fewer for the large. */
#define CALL_BYTES (64.0 * 1024 * 1024)
#define MIN_CALLS 4
#define MAX_CALLS 400

static int calls_for(double bytes)
{
    double n = CALL_BYTES / bytes;
    return n < MIN_CALLS ? MIN_CALLS : n > MAX_CALLS ? MAX_CALLS : (int)n;
}

/* The mean over the ranks of one rank's microseconds a sum of `floats`. */
static int time_size(nn_comm *c, float *buf, size_t floats, double *us)
{
    int calls = calls_for(4.0 * (double)floats);
    if (c->ops->barrier(c) != 0)
        return -1;
    double t0 = nn_now();
    for (int i = 0; i < calls; i++)
        if (c->ops->allreduce_sum(c, buf, floats) != 0)
            return -1;
    double mine = (nn_now() - t0) * 1e6 / calls;
    if (c->ops->allreduce_sum_f64(c, &mine, 1) != 0)
        return -1;
    *us = mine / c->size;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int nn_link_measure(nn_comm *c, nn_link_measurement *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    if (c->size < 2)
        return nn_errorf(err, err_len, "a link needs at least 2 ranks to measure (this job has %d)", c->size);
    size_t max_floats = (size_t)1 << (NN_LINK_SIZES - 1) * 2;     /* 4^(SIZES-1) floats */
    float *buf = calloc(max_floats, sizeof *buf);
    if (!buf)
        return nn_errorf(err, err_len, "out of memory for a %zu-byte sum", max_floats * sizeof *buf);
    for (int s = 0; s < NN_LINK_SIZES; s++) {
        size_t floats = (size_t)1 << 2 * s;
        double round_us[ROUNDS];
        for (int r = 0; r < ROUNDS; r++)
            if (time_size(c, buf, floats, &round_us[r]) != 0) {
                free(buf);
                return nn_errorf(err, err_len, "timing a %zu-byte all-reduce: %s", floats * 4, c->last_error);
            }
        qsort(round_us, ROUNDS, sizeof round_us[0], by_value);
        out->bytes[s] = 4.0 * (double)floats;
        out->us[s] = round_us[ROUNDS / 2];
    }
    free(buf);
    out->n = NN_LINK_SIZES;
    out->ranks = c->size;
    out->rank = c->rank;
    if (nn_link_fit(out->bytes, out->us, out->n, out->ranks, &out->link, &out->rms_error) != 0)
        return nn_errorf(err, err_len, "the timed sums do not fit a ring (%d ranks): a busy machine? "
                         "measure again", c->size);
    out->link.measured = 1;
    snprintf(out->link.name, sizeof out->link.name, "%s", c->transport[0] ? c->transport : "MPI");
    /* each part cut to fit the description whole (the fields are longer together) */
    snprintf(out->link.description, sizeof out->link.description, "%d ranks on %.40s, %.100s over %.60s",
             c->size, c->host, c->library, c->transport[0] ? c->transport : "its default transport");
    return 0;
}

/* src/jobs/jacobian/jacobian_result.c - a Jacobian job's result, once the
 * job handed it over (nn_job_jacobian): freed, and two compared. */
#include "nnlab/jacobian.h"

#include <math.h>
#include <stdlib.h>

void nn_jac_result_free(nn_jac_result *r)
{
    if (!r)
        return;
    free(r->x);
    free(r->params);
    free(r->blocks);
    r->x = r->params = r->blocks = NULL;
}

double nn_jac_max_diff(const nn_jac_result *a, const nn_jac_result *b)
{
    if (a->val != b->val || a->in != b->in || a->out != b->out || !a->blocks || !b->blocks)
        return -1;
    size_t n = (size_t)a->val * (size_t)a->out * (size_t)a->in;
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a->blocks[i] - (double)b->blocks[i]);
        if (d > m || isnan(d))
            m = isnan(d) ? INFINITY : d;
    }
    return m;
}

/* src/jobs/jacobian/jacobian_lanes.c - the rows method over several host threads.
 *
 * Why: rows is val * out reverse passes, each a handful of small products
 * (100 x 400 . 400 x 20 at val 100). Splitting every one of them over the
 * CPU backend's threads hands each thread a few microseconds of work per
 * operation, and the operations too small to split leave the other threads
 * idle. The passes themselves are independent, so each thread instead runs
 * whole groups of them (one sample's outputs a group) on a backend of one
 * thread of its own: no hand-off inside a pass. Lane L of N takes groups L,
 * L+N, ...; every lane writes its groups' rows of the one result (disjoint
 * rows) and counts them into one shared total, which lane 0, on the job's
 * thread, reports. Only where ops run on host threads and no graph is
 * recorded: a GPU runs the passes as one graph a group instead. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "jacobian_internal.h"
#include "util.h"

int jac_lanes_count(const nn_backend *b, enum nn_jac_method m, int graph, int val)
{
    int n = b->host_threads;
    if (m != NN_JAC_ROWS || (graph && b->ops->graph_begin) || n < 2)
        return 1;
    if (n > JAC_MAX_LANES)
        n = JAC_MAX_LANES;
    return n < val ? n : val;            /* val groups in all */
}

int jac_lanes_open(jac_lanes *l, int n, jac_run *r0, uint64_t seed, char *err, size_t err_len)
{
    nn_backend_config one = { .threads = 1 };
    memset(l, 0, sizeof *l);
    r0->lane = 0;
    r0->lanes = n;
    l->n = 1;
    for (int k = 1; k < n; k++) {
        jac_run *r = &l->run[k];
        if (nn_backend_open(&l->b[k], r0->b->ops, &one) != 0)
            return nn_errorf(err, err_len, "jacobian: lane %d on %s: %s", k, r0->b->ops->name, l->b[k].last_error);
        if (jac_prepare(r, &l->b[k], &r0->s, r0->val, r0->method, seed, 0, err, err_len) != 0) {
            jac_release(r);
            nn_backend_close(&l->b[k]);
            return -1;
        }
        l->n = k + 1;                    /* lanes 1..k are whole: close releases them */
        free(r->blocks);                 /* every lane writes lane 0's */
        r->blocks = r0->blocks;
        r->lane = k;
        r->lanes = n;
        r->shared = r0->shared;
        r->hold = r0->hold;
        r->ctx = r0->ctx;
    }
    l->n = n;
    return 0;
}

typedef struct lane_arg {
    jac_run *r;
    run_result rc;
} lane_arg;

static void *lane_main(void *p)
{
    lane_arg *a = p;
    a->rc = jac_forward(a->r, &a->r->acts) != 0 ? RUN_ERROR : jac_run_method(a->r);
    if (a->rc != RUN_GO_ON)
        atomic_store(&a->r->shared->stop, 1);
    return NULL;
}

/* A failed lane's message into lane 0's backend, where the job reads it. */
static run_result lane_failed(jac_run *r0, const jac_run *r, int k)
{
    nn_backend_fail(r0->b, "lane %d: %s", k, r->b->last_error);
    return RUN_ERROR;
}

run_result jac_lanes_run(jac_lanes *l, jac_run *r0)
{
    pthread_t th[JAC_MAX_LANES];
    lane_arg arg[JAC_MAX_LANES];
    int started = 1;
    for (int k = 1; k < l->n; k++, started++) {
        arg[k] = (lane_arg){ &l->run[k], RUN_GO_ON };
        if (pthread_create(&th[k], NULL, lane_main, &arg[k]) != 0) {
            atomic_store(&r0->shared->stop, 1);
            nn_backend_fail(r0->b, "jacobian: cannot start lane %d", k);
            break;
        }
    }
    run_result rc = started == l->n ? jac_run_method(r0) : RUN_ERROR;
    if (rc != RUN_GO_ON)
        atomic_store(&r0->shared->stop, 1);
    /* an error anywhere wins over a cancel, a cancel over done */
    for (int k = 1; k < started; k++) {
        pthread_join(th[k], NULL);
        jac_run *r = &l->run[k];
        if (arg[k].rc == RUN_ERROR && rc != RUN_ERROR)
            rc = lane_failed(r0, r, k);
        else if (arg[k].rc == RUN_CANCELLED && rc == RUN_GO_ON)
            rc = RUN_CANCELLED;
        if (r->offdiag_checked && !(r->offdiag_max <= r0->offdiag_max))
            r0->offdiag_max = r->offdiag_max;
    }
    return rc;
}

void jac_lanes_close(jac_lanes *l)
{
    for (int k = 1; k < l->n; k++) {
        l->run[k].blocks = NULL;         /* lane 0's */
        jac_release(&l->run[k]);
        nn_backend_close(&l->b[k]);
    }
    l->n = 0;
}

/* src/jobs/train/engine_host.c - one training step on a host-memory (CPU) backend:
 * the batch gathered straight into the network's inputs, then forward, loss
 * and backward, the gradients summed over the ranks (when there are), the
 * optimiser, and the loss read back when asked for, each phase timed on the
 * host's clock; see engine_internal.h. */
#include "train_internal.h"

int engine_host_step(nn_job *job, long pos, int n, long step, double t[NN_PHASE_COUNT])
{
    nn_net *net = &job->net;
    nn_backend *b = &job->backend;
    const nn_dataset *d = &job->data;
    double t0 = nn_now(), t1, t2, t3, t3s, t4;

    /* a rank past the end of the epoch's last global batch has no samples:
     * its gradients count as zeros in the sum */
    if (n > 0 &&
        engine_load_batch(job, d->train_x, d->train_y, d->train_t, job->order + pos, 0, n) != 0)
        return -1;
    t1 = nn_now();
    const float *out = n > 0 ? nn_net_forward(net, n, 1, step) : net->x;
    if (!out)
        return -1;
    t2 = nn_now();
    if (engine_ranks_begin_step(job, n) != 0)
        return -1;
    /* Adam in the backward where a layer can take it (the same bits); never
     * with ranks, whose sum must see the gradients first */
    if (!job->comm)
        nn_net_fuse_adam(net, &job->cfg.preset, (float)job->cfg.lr);
    if (n > 0 && (nn_net_loss(net, n, out, nn_net_dout(net)) != 0 ||
                  nn_net_backward(net, n, step, nn_net_dout(net)) != 0))
        return -1;
    t3 = nn_now();
    if (engine_ranks_reduce_grads(job, n) != 0)
        return -1;
    t3s = nn_now();
    if (nn_net_optimize(net, &job->cfg.preset, (float)job->cfg.lr) != 0 ||
        engine_ranks_check_same(job) != 0)
        return -1;
    t4 = nn_now();
    if (b->ops->synchronize(b) != 0 ||
        (job->cfg.sync_every_step &&
         b->ops->download(b, job->step_stats, net->stats, sizeof job->step_stats) != 0))
        return -1;
    double t5 = nn_now();
    t[NN_PHASE_COPY] += t1 - t0;
    t[NN_PHASE_FORWARD] += t2 - t1;
    t[NN_PHASE_BACKWARD] += t3 - t2;
    t[NN_PHASE_OPTIMIZER] += t4 - t3s;
    t[NN_PHASE_SYNC] += t5 - t4;
    t[NN_PHASE_ALLREDUCE] += t3s - t3;      /* the scaling too: the phases add up */
    return 0;
}

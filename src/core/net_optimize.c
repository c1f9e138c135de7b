/* src/core/net_optimize.c - the optimiser's step over a network's parameter
 * arena (net.h: nn_net_optimize), and Adam fused into the backward where a
 * layer takes it (nn_net_fuse_adam; the backward's side is net.c's
 * offer_adam, the op is backend_ops.def's linear_backward_adam, decision
 * 0161). */
#include "net.h"

#include <string.h>

void nn_net_fuse_adam(nn_net *net, const nn_preset *p, float lr)
{
    net->fuse_adam = p->opt == NN_OPT_ADAM && net->b->ops->linear_backward_adam &&
                     !net->grads_ready;
    net->fused_h = (nn_adam_hyper){ lr, p->beta1, p->beta2, p->eps, p->weight_decay };
    net->fused_t = net->opt_t + 1;
    /* what a backward fused is counted again by the next (a step without one
     * must not skip blocks on an earlier step's word) */
    net->fused_layers = 0;
    memset(net->adam_done, 0, sizeof net->adam_done);
}

/* Adam over the arena but the blocks the backward updated (adam_done):
 * elementwise, so the same bits as one pass over the whole. Owners' blocks
 * lie in layer order in the arena, padding between them. */
static int adam_rest(nn_net *net, const nn_adam_hyper *h)
{
    nn_backend *b = net->b;
    size_t from = 0;
    for (int i = 0; i <= net->n_layers; i++) {
        size_t to = net->n_params, end = net->n_params;
        if (i < net->n_layers) {
            const nn_layer *l = &net->layers[i];
            if (!net->adam_done[i])
                continue;
            to = l->param_offset;
            end = l->param_offset + l->n_weights + l->n_bias;
        }
        if (to > from && b->ops->adam_step(b, to - from, net->params + from, net->grads + from,
                                           net->opt_a + from, net->opt_b + from, h,
                                           net->opt_t) != 0)
            return -1;
        from = end;
    }
    return 0;
}

int nn_net_optimize(nn_net *net, const nn_preset *p, float lr)
{
    nn_backend *b = net->b;
    int fused = net->fuse_adam && net->fused_layers > 0;
    net->opt_t++;
    net->fuse_adam = 0;              /* asked for again before each backward */
    if (p->opt == NN_OPT_ADAM) {
        nn_adam_hyper h = { lr, p->beta1, p->beta2, p->eps, p->weight_decay };
        if (fused)
            return adam_rest(net, &h);
        return b->ops->adam_step(b, net->n_params, net->params, net->grads, net->opt_a,
                                 net->opt_b, &h, net->opt_t);
    }
    nn_sgd_hyper h = { lr, p->momentum, p->dampening, p->weight_decay, p->nesterov };
    return b->ops->sgd_step(b, net->n_params, net->params, net->grads, net->opt_a, &h,
                            net->opt_t);
}

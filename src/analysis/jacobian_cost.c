/* src/analysis/jacobian_cost.c - what each Jacobian method computes
 * (nnlab/jacobian.h): FLOPs of the forward pass and of the derivative
 * passes, and the part spent on J's zero blocks, the waste the lesson is
 * about.
 *
 * Counting rules (cost.h's): a multiply-add is 2 FLOPs; a bias add 1 per
 * output; tanh 1 per element forward; its derivative from the saved output
 * 3 per element (y*y, 1 - that, times the incoming gradient). A reverse pass
 * computes the input gradient only (no parameter gradients: autograd.grad
 * with inputs = x prunes them), so its linear layers cost 2*n*in*out each. */
#include "nnlab/jacobian.h"

#include <string.h>

static double forward_flops(const nn_jac_shape *s, double n)
{
    double f = 0;
    for (int l = 0; l < s->n_linear; l++) {
        double in = s->width[l], out = s->width[l + 1];
        f += n * (2 * in * out + out);
        if (s->tanh_after[l])
            f += n * out;
    }
    return f;
}

/* One reverse (or tangent) pass over n rows: the same products and tanh
 * derivatives either way. */
static double pass_flops(const nn_jac_shape *s, double n)
{
    double f = 0;
    for (int l = 0; l < s->n_linear; l++) {
        double in = s->width[l], out = s->width[l + 1];
        f += n * 2 * in * out;
        if (s->tanh_after[l])
            f += n * 3 * out;
    }
    return f;
}

void nn_jac_flops_of(const nn_jac_shape *s, long val, enum nn_jac_method m, nn_jac_flops *out)
{
    double v = (double)val, in = s->width[0], k = s->width[s->n_linear];
    memset(out, 0, sizeof *out);
    out->forward = forward_flops(s, v);
    out->pass_rows = v;
    switch (m) {
    case NN_JAC_ROWS:
    case NN_JAC_BATCHED:
        /* one one-hot cotangent per row of J, each over the whole batch:
         * only sample i's row of a pass is non-zero */
        out->passes = v * k;
        out->derivative = out->passes * pass_flops(s, v);
        out->zero = out->passes * pass_flops(s, v - 1);
        break;
    case NN_JAC_PER_SAMPLE:
        out->passes = k;
        out->derivative = k * pass_flops(s, v);
        break;
    case NN_JAC_FORWARD:
        out->passes = in;
        out->derivative = in * pass_flops(s, v);
        break;
    default:
        break;
    }
    out->total = out->forward + out->derivative;
}

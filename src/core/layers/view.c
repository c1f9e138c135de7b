/* src/core/layers/view.c - flatten and reshape: views. They relabel the axes
 * of contiguous NCHW data, so the network aliases their input buffer, passes
 * the gradient through untouched, and the cost model counts nothing.
 * flatten: any -> (features). reshape: key shape ("1x16"), the same count. */
#include "layer_kind.h"

static int infer_flatten(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    long n = nn_shape_count(&in);
    return nn_layer_out_shape(c, i, l, 1, &n, out);
}

static int infer_reshape(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    long want = nn_shape_count(&l->shape), have = nn_shape_count(&in);
    char s[64];
    if (want == have) {
        *out = l->shape;
        return 0;
    }
    nn_shape_format(&in, s, sizeof s);
    if (in.rank == 1)
        return nn_layer_error(c, i, l, "shape", "holds %ld values, but %s %s", want, nn_layer_from(i), s);
    return nn_layer_error(c, i, l, "shape", "holds %ld values, but %s %s = %ld", want, nn_layer_from(i),
                          s, have);
}

const nn_layer_def nn_layer_flatten_def = {
    .name = "flatten",
    .view = 1,
    .infer = infer_flatten,
};

const nn_layer_def nn_layer_reshape_def = {
    .name = "reshape",
    .keys = NN_KEY(NN_KEY_SHAPE),
    .required = NN_KEY(NN_KEY_SHAPE),
    .view = 1,
    .infer = infer_reshape,
};

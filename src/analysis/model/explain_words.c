/* src/analysis/model/explain_words.c - the names Explain and its readers
 * print: the GPU's ways (their names, keys and the options each sets), the
 * regimes, and the convolution algorithms a device chose. See explain.h. */
#include "nnlab/explain.h"

#include <stdio.h>
#include <string.h>

const char *nn_gpu_way_name(nn_gpu_way w)
{
    static const char *const names[NN_GPU_WAYS] = { "framework eager", "nnlab eager", "nnlab graph" };
    return (unsigned)w < NN_GPU_WAYS ? names[w] : "?";
}

const char *nn_gpu_way_key(nn_gpu_way w)
{
    static const char *const keys[NN_GPU_WAYS] = { "framework", "eager", "graph" };
    return (unsigned)w < NN_GPU_WAYS ? keys[w] : "?";
}

void nn_gpu_way_options(nn_gpu_way w, const nn_framework_gpu *fw, nn_explain_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->data_on_device = w != NN_WAY_FRAMEWORK;
    opt->sync_every_step = w == NN_WAY_FRAMEWORK;
    opt->graph = w == NN_WAY_GRAPH;
    opt->framework = w == NN_WAY_FRAMEWORK;
    if (opt->framework && fw) {
        opt->framework_op_us = fw->op_us;
        opt->framework_step_us = fw->step_us;
        opt->framework_conv_us = fw->conv_us;
        opt->framework_device_ratio = fw->device_ratio;
    }
}

const char *nn_regime_name(nn_regime r)
{
    static const char *const names[] = { "overhead-bound", "memory-bound", "compute-bound" };
    return (unsigned)r < 3 ? names[r] : "?";
}

/* ---- the convolution algorithms a device chose --------------------------------- */

void nn_conv_shape_text(const nn_conv_algorithm_info *a, char *buf, size_t len)
{
    snprintf(buf, len, "%dx%dx%d on %dx%dx%d", a->c_out, a->k_h, a->k_w, a->c_in, a->h_in, a->w_in);
}

void nn_conv_algorithm_text(const nn_conv_algorithm_info *a, char *buf, size_t len)
{
    char shape[64];
    nn_conv_shape_text(a, shape, sizeof shape);
    snprintf(buf, len, "conv %s, %s: %s (%s), %.1f us measured (%s)", shape, a->direction, a->algorithm,
             a->deterministic ? "deterministic" : "not deterministic", a->time_us,
             a->from_cache ? "from the cache" : "timed now");
}

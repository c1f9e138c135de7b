/* tests/net_check.c - see net_check.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "net_check.h"
#include "rng.h"
#include "util.h"

nn_preset *net_check_load(const char *path)
{
    char err[NN_ERR_LEN];
    nn_preset *p = malloc(sizeof *p);
    assert_non_null(p);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
    return p;
}

void net_check_open(nn_net *net, nn_backend *b, const nn_backend_ops *ops, const nn_preset *p, int batch)
{
    char err[NN_ERR_LEN];
    nn_backend_config cfg = { .threads = 2 };
    assert_int_equal(nn_backend_open(b, ops, &cfg), 0);
    if (nn_net_create(net, b, p, batch, 7, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(net->graph);
}

void net_check_fill(nn_net *net, int batch, uint64_t seed, float range)
{
    nn_rng r;
    nn_rng_seed(&r, seed);
    for (size_t i = 0; i < (size_t)batch * net->sample_floats; i++)
        net->x[i] = nn_rng_range(&r, -range, range);
    for (int i = 0; i < batch * net->target_width; i++)
        net->targets[i] = nn_rng_range(&r, -range, range);
}

double net_check_loss(nn_net *net, int batch, int grads)
{
    float *out = nn_net_forward(net, batch, 1, 0);
    assert_non_null(out);
    net->stats[0] = net->stats[1] = 0;
    assert_int_equal(nn_net_loss(net, batch, out, grads ? nn_net_dout(net) : NULL), 0);
    if (grads)
        assert_int_equal(nn_net_backward(net, batch, 0, nn_net_dout(net)), 0);
    return net->stats[0];
}

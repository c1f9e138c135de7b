/* tests/net_check.h - a whole network from a preset on one backend, for the
 * tests that step graph networks through nn_net (tests/test_graph.c,
 * tests/test_tabnet.c): load the preset, open the network, fill a batch, a
 * batch's loss with or without its gradients. Each fails the running test
 * on an error. Include after <cmocka.h>. */
#ifndef NNLAB_TEST_NET_CHECK_H
#define NNLAB_TEST_NET_CHECK_H

#include <stdint.h>

#include "backend.h"
#include "net.h"
#include "nnlab/preset.h"

/* The preset at path, on the heap (free it). */
nn_preset *net_check_load(const char *path);
/* p's network for `batch` rows on ops (two threads where it has them, seed
 * 7), a graph network. */
void net_check_open(nn_net *net, nn_backend *b, const nn_backend_ops *ops, const nn_preset *p, int batch);
/* `batch` rows and targets uniform in [-range, range] from seed: the same
 * on every backend. */
void net_check_fill(nn_net *net, int batch, uint64_t seed, float range);
/* The batch's loss (stats[0] of one call), and with grads the gradients. */
double net_check_loss(nn_net *net, int batch, int grads);

#endif

/* src/cli/cli_sweep_ranks.h - nnlab sweep --ranks: the ranks' sweep run and
 * printed (cli_sweep_ranks.c; the rules are nnlab/ranks_sweep.h's). */
#ifndef NNLAB_CLI_SWEEP_RANKS_H
#define NNLAB_CLI_SWEEP_RANKS_H

#include "cli_common.h"

/* p loaded from o->preset, batches parsed and checked by the sweep; the
 * exit status. */
int cli_sweep_ranks(const cli_options *o, const nn_preset *p, const int *batches, int nb);

#endif

/* src/cli/cli_explain_ranks.h - nnlab explain --ranks's part: the link the
 * options name and the N ranks' predicted step printed (cli_explain_ranks.c). */
#ifndef NNLAB_CLI_EXPLAIN_RANKS_H
#define NNLAB_CLI_EXPLAIN_RANKS_H

#include "cli_common.h"
#include "nnlab/link.h"

/* --link, else shm for the CPU's ranks and pcie4 for a GPU's; 0, or -1
 * after a one-line error. */
int cli_ranks_link(const cli_options *o, int gpu, nn_link *l);
void cli_ranks_print_text(const nn_ranks_prediction *r, const nn_link *l, int overlap);
/* "  \"ranks\": {...},\n" */
void cli_ranks_print_json(const nn_ranks_prediction *r, const nn_link *l, int overlap);

#endif

/* src/cli/cli_explain_ranks.c - nnlab explain --ranks: the step of N
 * data-parallel ranks, each at the explained batch, their gradients summed
 * by a ring all-reduce over a link profile (nnlab/link.h), printed after
 * the one rank's explanation; every figure predicted. */
#include "cli_explain_ranks.h"

#include <stdio.h>

#include "util.h"

int cli_ranks_link(const cli_options *o, int gpu, nn_link *l)
{
    char err[NN_ERR_LEN];
    const char *name = o->link ? o->link : nn_link_default_name(gpu);
    if (nn_link_find(name, l, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "nnlab: --link: %s\n", err);
    return -1;
}

void cli_ranks_print_text(const nn_ranks_prediction *r, const nn_link *l, int overlap)
{
    char words[320];
    printf("  ranks:     %d ranks at batch %d each (global batch %d) over %s, each rank a device of its own, "
           "the all-reduce %s: predicted\n",
           r->ranks, r->rank_batch, r->global_batch, nn_safe(l->name),
           overlap ? "during backward" : "after backward");
    printf("             link: %.4g GB/s each way, %.3g us a hop (%s)\n", l->bandwidth_gbps, l->hop_us,
           nn_link_origin(l));
    printf("             all-reduce: %.4g MB of gradients in %.1f us (%d hops %.1f us + bytes %.1f us), "
           "%.1f us of it waited for\n", r->gradient_bytes / 1e6, r->allreduce_us,
           r->ranks > 1 ? 2 * (r->ranks - 1) : 0, r->hops_us, r->bytes_us, r->exposed_us);
    printf("             step: %d ranks %.1f us (one rank's %.1f + all-reduce %.1f); one rank at batch %d: "
           "%.1f us\n", r->ranks, r->step_us, r->rank_step_us, r->exposed_us, r->global_batch, r->one_rank_us);
    nn_ranks_words(r, words, sizeof words);
    printf("             %s\n", words);
}

void cli_ranks_print_json(const nn_ranks_prediction *r, const nn_link *l, int overlap)
{
    printf("  \"ranks\": {\"source\": \"predicted\", \"ranks\": %d, \"rank_batch\": %d, \"global_batch\": %d, "
           "\"overlap\": %s,\n    \"link\": ", r->ranks, r->rank_batch, r->global_batch, overlap ? "true" : "false");
    cli_json_string(stdout, l->id);
    printf(", \"link_name\": ");
    cli_json_string(stdout, l->name);
    printf(", \"link_measured\": %s, \"bandwidth_gbps\": %.6g, \"hop_us\": %.6g,\n", l->measured ? "true" : "false",
           l->bandwidth_gbps, l->hop_us);
    printf("    \"gradient_bytes\": %.0f, \"allreduce_us\": %.6g, \"hops_us\": %.6g, \"bytes_us\": %.6g, "
           "\"exposed_us\": %.6g,\n", r->gradient_bytes, r->allreduce_us, r->hops_us, r->bytes_us, r->exposed_us);
    printf("    \"rank_step_us\": %.6g, \"step_us\": %.6g, \"one_rank_us\": %.6g, \"speedup\": %.6g, "
           "\"efficiency\": %.6g, \"allreduce_share\": %.6g},\n", r->rank_step_us, r->step_us, r->one_rank_us,
           r->speedup, r->efficiency, r->allreduce_share);
}

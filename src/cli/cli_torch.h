/* src/cli/cli_torch.h - nnlab bench --with-pytorch: PyTorch's step of the
 * same preset, at the same batch, on the same device, for as many steps
 * and threads, measured by the runner (nnlab/torch_step.h) before nnlab's
 * own job starts, then shown beside nnlab's step, labelled "measured with
 * PyTorch X.Y". */
#ifndef NNLAB_CLI_TORCH_H
#define NNLAB_CLI_TORCH_H

#include "cli_common.h"
#include "nnlab/torch_step.h"

typedef struct cli_torch {
    int done;                    /* measured: r and source hold its result */
    nn_torch_result r;
    char source[96];             /* "measured with PyTorch 2.11" */
    /* On a GPU, nnlab's graph way beside PyTorch's: its whole step captured
     * as one CUDA graph (the helper's --way graph), where it could be */
    int graph_done;
    nn_torch_result graph;
    char graph_why[256];         /* why not, when it was tried and failed */
} cli_torch;

/* Measures PyTorch's step for the bench the options and cfg describe,
 * progress on stderr unless quiet; a stop signal stops it. 0, or the exit
 * status after a one-line error: CLI_EXIT_USAGE when it cannot be measured
 * here (no python3, no torch, no helper, no CUDA device for PyTorch) or
 * the preset cannot be built in PyTorch, 128 + the signal when stopped, 1
 * when it failed (its step, its answer, another network, the time limit). */
int cli_torch_measure(const cli_options *o, const nn_job_config *cfg, cli_torch *t);

/* The two steps side by side on stderr: nnlab's figure (us, stat: "median"
 * or "mean", its threads; 0: not known) and PyTorch's median, and how many
 * times nnlab's PyTorch's is. */
void cli_torch_text(const cli_torch *t, double nnlab_us, const char *stat, long steps, int threads);

/* `  "pytorch": {...},` for bench --json, and on a GPU with nnlab's graph
 * way `  "pytorch_graph": {...}|null,` (its why when it failed). */
void cli_torch_json(const cli_torch *t);

#endif

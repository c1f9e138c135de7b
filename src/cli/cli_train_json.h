/* src/cli/cli_train_json.h - nnlab train's and bench's --json result
 * (cli_train_json.c). */
#ifndef NNLAB_CLI_TRAIN_JSON_H
#define NNLAB_CLI_TRAIN_JSON_H

#include "cli_torch.h"
#include "nnlab/engine.h"
#include "nnlab/race_ways.h"

/* bench reports the median step, unless steps were not waited for one by one
 * (a GPU without --sync-every-step): then the mean, which includes every
 * wait, is the rate. */
int cli_bench_uses_median(const nn_snapshot *s);

/* The result object on stdout: ways, when given, the --race-predicted lanes. */
void cli_train_json(nn_job *job, const nn_job_config *cfg, const nn_snapshot *s, int bench,
                    const cli_torch *torch, const nn_race_ways *ways);

#endif

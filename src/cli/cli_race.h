/* src/cli/cli_race.h - `nnlab train --race` (cli_race.c), called by
 * cli_train.c once the options and the preset are read. */
#ifndef NNLAB_CLI_RACE_H
#define NNLAB_CLI_RACE_H

#include "cli_common.h"

/* Runs base's job on a CPU device and on the GPU, one after the other
 * (with no GPU switch given, the GPU twice: eager and graph), prints each
 * job, the pairs' ratios and the framework way predicted; the process's
 * exit status (2 with no GPU here). */
int cli_race(const cli_options *o, const nn_preset *p, const nn_job_config *base);

#endif

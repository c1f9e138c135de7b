/* src/cli/cli_race.h - `nnlab train --race` (cli_race.c), called by
 * cli_train.c once the options and the preset are read. */
#ifndef NNLAB_CLI_RACE_H
#define NNLAB_CLI_RACE_H

#include "cli_common.h"
#include "nnlab/race_ways.h"

/* Runs base's job on a CPU device and on the GPU, one after the other
 * (with no GPU switch given, the GPU twice: eager and graph), prints each
 * job, the pairs' ratios and the framework way predicted; the process's
 * exit status (2 with no GPU here). */
int cli_race(const cli_options *o, const nn_preset *p, const nn_job_config *base);

/* The race's four lanes predicted (cli_ways.c) for cfg's job: the CPU
 * device cpu's calibration (the cached one, else measured now and cached:
 * the framework way is priced from it), the GPU's from its calibration the
 * same way (gpu_here) or else prof, nnlab's GPU in gpu_way. 0, or -1 when the CPU could not be
 * calibrated (said; its lanes then say why they are not priced). */
int cli_ways_predict(const cli_options *o, const nn_job_config *cfg, const char *cpu, int gpu_here,
                     const nn_gpu_profile *prof, nn_gpu_way gpu_way, nn_race_ways *w);
/* The framework way measured with PyTorch where a python3 imports torch
 * (nnlab/torch_step.h): on the CPU device cpu, and on the GPU when one is
 * here and PyTorch sees CUDA; each lane measured says so, one that cannot be
 * measured stays predicted (a line says why). Returns the lanes measured. */
int cli_ways_measure_torch(const cli_options *o, const nn_job_config *cfg, const char *cpu, int gpu_here,
                           nn_race_ways *w);
/* The lanes, a row each (the step, the time of steps of it, the source),
 * then the two verdicts, the framework pair's first; on stderr. */
void cli_ways_print(const nn_race_ways *w, const char *preset, long steps);

#endif

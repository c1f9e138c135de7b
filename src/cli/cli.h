/* src/cli/cli.h - the headless commands, one function each, which main.c
 * dispatches to; and the sweep's printer, which tests/test_front_ends.c
 * checks against the lab's words for the same results. Every command takes
 * the arguments after its name (argv[0] is the command) and returns the
 * process's exit status. */
#ifndef NNLAB_CLI_H
#define NNLAB_CLI_H

#include <stdio.h>

#include "nnlab/sweep.h"

int nn_cli_train(int argc, char **argv);       /* cli_train.c */
int nn_cli_bench(int argc, char **argv);
int nn_cli_presets(int argc, char **argv);     /* main.c */
int nn_cli_devices(int argc, char **argv);
int nn_cli_calibrate(int argc, char **argv);   /* cli_analyze.c */
int nn_cli_explain(int argc, char **argv);     /* cli_explain.c */
int nn_cli_sweep(int argc, char **argv);       /* cli_sweep.c */
int nn_cli_jacobian(int argc, char **argv);    /* cli_jacobian.c */
int nn_cli_lesson(int argc, char **argv);      /* cli_lesson.c */

enum cli_sweep_format { CLI_SWEEP_TEXT, CLI_SWEEP_CSV, CLI_SWEEP_JSON };

/* The measured points (failed ones left out) with their mean step, samples/s,
 * doubling ratio, predicted step and regime, then where each device after
 * the first overtakes the first (nn_sweep_crossover). */
void cli_sweep_print(FILE *f, const nn_sweep *sw, enum cli_sweep_format format);

#endif

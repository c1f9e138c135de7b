/* src/cli/cli.h - the headless commands beyond train and bench (src/main.c). */
#ifndef NNLAB_CLI_H
#define NNLAB_CLI_H

#include "nnlab/preset.h"

/* Shared by every command (src/main.c): a whole-number option >= min, or a
 * one-line error naming it; a preset by name or path, or a one-line error. */
int nn_cli_parse_count(const char *opt, const char *arg, long min, long *out);
int nn_cli_load_preset(const char *name, nn_preset *p);
/* Prints s as a JSON string, quotes included. */
void nn_cli_json_string(const char *s);

/* Each takes the arguments after its command name (argv[0] is the command). */
int nn_cli_calibrate(int argc, char **argv);
int nn_cli_explain(int argc, char **argv);
int nn_cli_sweep(int argc, char **argv);

#endif

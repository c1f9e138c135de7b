/* src/cli.h - the headless commands beyond train and bench (src/main.c). */
#ifndef NNLAB_CLI_H
#define NNLAB_CLI_H

/* Each takes the arguments after its command name (argv[0] is the command). */
int nn_cli_calibrate(int argc, char **argv);
int nn_cli_explain(int argc, char **argv);
int nn_cli_sweep(int argc, char **argv);

#endif

/* src/cli/cli_calibrate_link.h - `nnlab calibrate --link NAME`: the link
 * between MPI ranks timed and saved as a link profile (cli_calibrate_link.c). */
#ifndef NNLAB_CLI_CALIBRATE_LINK_H
#define NNLAB_CLI_CALIBRATE_LINK_H

#include "cli_common.h"

/* Starts the ranks (--ranks N, default 2) under mpirun, or joins them when
 * a launcher started this process; rank 0 prints the timed sums and the
 * ring's fit and saves them as the user's link profile o->link. argv is
 * the command's (argv[0] its name). Returns the exit status. */
int cli_calibrate_link(cli_options *o, int argc, char **argv);

#endif

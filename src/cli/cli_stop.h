/* src/cli/cli_stop.h - the stop signals of a command that runs a job (train,
 * bench, jacobian): SIGINT, SIGTERM and SIGHUP cancel the job; a job that
 * has not ended CLI_GRACE_MS after its cancel (its thread stuck inside a
 * library, e.g. OpenBLAS retrying a buffer it cannot map under ulimit -v)
 * is left behind: the command says what it can and exits with 128 + the
 * signal's number, as a shell reports it, without waiting for the thread. */
#ifndef NNLAB_CLI_STOP_H
#define NNLAB_CLI_STOP_H

#include "nnlab/engine.h"

/* How long a cancelled job is given to end before the command stops waiting. */
#define CLI_GRACE_MS 2000

/* Catches SIGINT, SIGTERM and SIGHUP from now on. */
void cli_catch_stop_signals(void);

/* The signal caught (SIGINT, SIGTERM or SIGHUP), or 0. */
int cli_stop_signal(void);

/* Called between polls of a running job: cancels it once a stop signal has
 * come; 1 when CLI_GRACE_MS have passed since and the job still runs (the
 * caller stops waiting for it: cli_exit_abandoned), else 0. */
int cli_job_abandoned(nn_job *job);

/* Exits with 128 + the signal's number after checking the output, without
 * joining the job's thread or running the libraries' exit handlers (a
 * thread stuck in OpenBLAS holds what they would wait for). */
_Noreturn void cli_exit_abandoned(void);

#endif

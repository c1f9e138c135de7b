/* src/cli/cli_stop.c - the stop signals of the commands that run a job; see
 * cli_stop.h. */
#include "config.h"

#include "cli_stop.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"

static volatile sig_atomic_t caught;

/* When the stop cancelled the job (now_ms; -1: not yet). Process-wide, as
 * the signal it answers: a stop cancels once, and its grace counts from
 * that cancel however often the polling loop asks. */
static double stop_cancelled_at = -1;

static void on_stop(int sig)
{
    caught = sig;
}

void cli_catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    /* every one checked: a handler that did not take would leave the
     * signal's default, which ends the process anyway */
    (void)sigaction(SIGINT, &sa, NULL);
    (void)sigaction(SIGTERM, &sa, NULL);
    (void)sigaction(SIGHUP, &sa, NULL);   /* the terminal closed: still leave the result */
}

int cli_stop_signal(void)
{
    return caught;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int cli_job_abandoned(nn_job *job)
{
    if (!caught)
        return 0;
    if (stop_cancelled_at < 0) {
        nn_job_cancel(job);
        stop_cancelled_at = now_ms();
    }
    return now_ms() - stop_cancelled_at >= CLI_GRACE_MS;
}

_Noreturn void cli_exit_abandoned(void)
{
    int code = CLI_EXIT_SIGNAL + caught;
    fflush(stderr);
    _exit(cli_output_checked(code));
}

/* src/analysis/model/job_state.c - the words for a job's states and phases
 * (nnlab/engine.h), which every reader of a snapshot shares: the engine,
 * the times and headlines (progress.c), the exports and the front ends.
 * Here, below the jobs, so that analysis reads a snapshot without calling
 * up into the engine. */
#include "nnlab/engine.h"

const char *nn_job_state_name(nn_job_state s)
{
    static const char *const names[] = { "preparing", "running", "paused", "done", "cancelled", "failed",
                                         "diverged" };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

int nn_job_state_ended(nn_job_state s)
{
    return s == NN_JOB_DONE || s == NN_JOB_CANCELLED || s == NN_JOB_FAILED || s == NN_JOB_DIVERGED;
}

const char *nn_phase_name(enum nn_phase p)
{
    static const char *const names[] = { "copy", "forward", "backward", "optimizer", "sync",
                                         "all-reduce" };
    _Static_assert(sizeof names / sizeof names[0] == NN_PHASE_COUNT, "a phase without a name");
    return (unsigned)p < NN_PHASE_COUNT ? names[p] : "?";
}

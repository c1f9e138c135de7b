/* src/jobs/job_kinds.c - the list of job kinds (job_kind.h), and what the
 * front ends ask of a kind through the public API (nnlab/engine.h): its
 * traits, and the kind a preset describes. */
#include "nnlab/engine.h"

#include "engine_internal.h"
#include "job_kind.h"

/* Every kind, each its own file's entry. */
static const nn_job_kind_def *const kinds[] = { &job_kind_train, &job_kind_calibrate, &job_kind_jacobian,
                                                     &job_kind_ranks };
#define N_KINDS (sizeof kinds / sizeof kinds[0])

const nn_job_kind_def *job_kind_of(enum nn_job_kind kind)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (kinds[i]->traits.kind == kind)
            return kinds[i];
    return NULL;
}

enum nn_job_kind job_kind_run_as(const nn_job_config *cfg)
{
    return cfg->kind == NN_JOB_TRAIN && cfg->ranks > 1 ? NN_JOB_RANKS : cfg->kind;
}

/* A value that names no kind reads as training, the default (as a config
 * that does not set its kind is one). */
const nn_job_traits *nn_job_traits_of(enum nn_job_kind kind)
{
    const nn_job_kind_def *d = job_kind_of(kind);
    return d ? &d->traits : &job_kind_train.traits;
}

enum nn_job_kind nn_job_kind_of_preset(const nn_preset *p)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (kinds[i]->preset_task >= 0 && kinds[i]->preset_task == (int)p->task)
            return kinds[i]->traits.kind;
    return NN_JOB_TRAIN;
}

int job_check_threads(const nn_job_config *c, char *err, size_t err_len)
{
    if (c->threads < 0)
        return nn_errorf(err, err_len, "threads %d: expected 0 (all cores) or more", c->threads);
    return 0;
}

/* src/core/job_traits.c - what a front end needs to know of each job kind
 * (nnlab/engine.h: nn_job_traits), so that it asks the kind's traits and
 * never compares kinds. One entry per kind, in the enum's order. */
#include "nnlab/engine.h"
#include "nnlab/jacobian.h"

#define TRAIN_BATCH_MAX 1048576L     /* the data set bounds it first */

static const nn_job_traits traits[] = {
    { NN_JOB_TRAIN, "train", 1, 0, "batch", "[train] batch", TRAIN_BATCH_MAX },
    { NN_JOB_CALIBRATE, "calibrate", 0, 0, "batch", "[train] batch", TRAIN_BATCH_MAX },
    { NN_JOB_JACOBIAN, "jacobian", 0, 1, "val", "[task] val", NN_JAC_MAX_VAL },
};

const nn_job_traits *nn_job_traits_of(enum nn_job_kind kind)
{
    for (size_t i = 0; i < sizeof traits / sizeof traits[0]; i++)
        if (traits[i].kind == kind)
            return &traits[i];
    return &traits[0];
}

enum nn_job_kind nn_job_kind_of_preset(const nn_preset *p)
{
    return p->task == NN_TASK_JACOBIAN ? NN_JOB_JACOBIAN : NN_JOB_TRAIN;
}

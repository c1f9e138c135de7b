/* src/jobs/job_kind.h - the table of job kinds, as src/core/layer_kind.h is
 * the layers': one definition per kind (nnlab/engine.h enum nn_job_kind),
 * each in a file of its own, listed in job_kinds.c. The engine (engine.c,
 * job_memory.c) looks a job's kind up here and calls its entry; it never
 * compares kinds. A kind's file may call the engine's services
 * (engine_internal.h).
 *
 *   job_train.c               training (and the bench): the step machinery in train/
 *   job_calibrate.c           a device's calibration (src/analysis/model/calibrate.c)
 *   jacobian/job_jacobian.c   the Jacobian of the preset's MLP (jacobian/)
 *   job_ranks.c               training over ranks it starts (a child under mpirun)
 *
 * Adding a kind: its enum value in nnlab/engine.h, its file with one
 * nn_job_kind_def, and its line in job_kinds.c. */
#ifndef NNLAB_JOB_KIND_H
#define NNLAB_JOB_KIND_H

#include <stddef.h>

#include "backend.h"
#include "nnlab/engine.h"

typedef struct nn_job_kind_def {
    nn_job_traits traits;        /* what a front end asks (nn_job_traits_of) */
    int preset_task;             /* the preset [task] that describes this kind
                                    (enum nn_task_kind), -1: none */
    /* Completes cfg from its preset (the device is set already) and checks
     * it: 0, or -1 with a message. */
    int (*resolve)(nn_job_config *cfg, char *err, size_t err_len);
    /* What a job of cfg will hold: m's parts (m zeroed, and its available
     * filled after, by the caller). ops: the device's table (NULL: not a
     * device known here, counted as host memory); b: the open backend, or
     * NULL before it is. NULL: the kind takes no memory worth a check. */
    void (*estimate)(const nn_job_config *cfg, const nn_backend_ops *ops, nn_backend *b,
                     nn_memory_estimate *m);
    /* nn_job_check_sizes for the kind (size_key names its size as the
     * caller's user gave it); NULL: nothing to refuse. */
    int (*check_sizes)(const nn_job_config *cfg, const nn_memory_estimate *m, const char *size_key,
                       char *err, size_t err_len);
    /* The job thread's body, once the device is known usable: it ends with
     * the job's final state published (engine_end, engine_fail). */
    void (*run)(nn_job *job);
    /* Frees what run kept for the job's readers, once the thread has
     * ended (the engine closes the backend after it); NULL: nothing. */
    void (*release)(nn_job *job);
    /* The seconds a job of cfg is predicted to take on a device whose ops
     * table is ops (NULL: unknown) and whose figures are cal, from the cost
     * model (nn_job_predict_s); -1 when it cannot say. NULL: the kind
     * predicts nothing (a calibration). */
    double (*predict_s)(const nn_job_config *cfg, const nn_backend_ops *ops, const nn_calibration *cal);
} nn_job_kind_def;

extern const nn_job_kind_def job_kind_train;
extern const nn_job_kind_def job_kind_calibrate;
extern const nn_job_kind_def job_kind_jacobian;
extern const nn_job_kind_def job_kind_ranks;

/* The kind's entry; NULL for a value that names none. */
const nn_job_kind_def *job_kind_of(enum nn_job_kind kind);
/* The kind cfg runs as: training over ranks (ranks > 1) from a process that
 * is not one of them runs as NN_JOB_RANKS, the ranks' launcher; else cfg's. */
enum nn_job_kind job_kind_run_as(const nn_job_config *cfg);

#endif

/* src/jobs/run_result.h - the named results of a job thread's loops (the
 * training loop's steps and epochs, the Jacobian's methods and lanes), so
 * that no loop returns or tests a bare 1 or 2. */
#ifndef NNLAB_RUN_RESULT_H
#define NNLAB_RUN_RESULT_H

/* What the job thread's loops return, from a step up to the kind's run:
 * go on, or why they stop. Values as the loops returned them before they
 * had names (0, 1, 2, -1). */
typedef enum run_result {
    RUN_ERROR = -1,              /* a backend error: the backend's last_error says why */
    RUN_GO_ON = 0,               /* nothing stopped it (at the end: done) */
    RUN_CANCELLED = 1,           /* the job was cancelled */
    RUN_DIVERGED = 2             /* the training loss became NaN or inf */
} run_result;

#endif

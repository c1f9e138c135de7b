/* src/core/preset_task.h - a preset's [task] kinds, one entry each: the one
 * place that says a kind's name, its method key and names, and its own
 * check of a loaded preset. The reader, the checker and the writer
 * (preset_read.c, preset_schema.c, preset_write.c) walk this table and name
 * no task; the job kinds (src/jobs/job_kind.h's preset_task) map onto it. A
 * new [task] kind is a line in preset_task.c and its check. */
#ifndef NNLAB_CORE_PRESET_TASK_H
#define NNLAB_CORE_PRESET_TASK_H

#include <stddef.h>

#include "nnlab/preset.h"

#define NN_TASK_MAX_KINDS 8       /* room the reader keeps for the names */
#define NN_TASK_MAX_METHODS 16

typedef struct nn_task_def {
    enum nn_task_kind task;
    const char *name;            /* [task] kind = NAME */
    int n_methods;               /* [task] method = one of method_name(0 .. n_methods - 1); 0: none */
    const char *(*method_name)(int method);
    int default_method;
    int takes_val;               /* reads [task] val (its size: a Jacobian's rows) */
    /* Its own check of a loaded preset (the layers can run it): 0, or -1 with
     * err naming the file (where) and the key; NULL: nothing more to check. */
    int (*check)(const nn_preset *p, const char *where, char *err, size_t err_len);
} nn_task_def;

/* The kinds, the default (train) first, and how many. */
extern const nn_task_def *const nn_task_defs[];
extern const int nn_task_count;

/* The entry of a kind; NULL for a value no entry has. */
const nn_task_def *nn_task_def_of(enum nn_task_kind task);
/* "train or jacobian", for messages. */
void nn_task_names(char *buf, size_t len);
/* "rows, batched, per-sample or forward": a kind's methods, for messages. */
void nn_task_method_list(const nn_task_def *t, char *buf, size_t len);
/* "kind = jacobian": the kinds that read [task] val (takes_val), the
 * condition messages give for that key. */
void nn_task_val_kinds(char *buf, size_t len);
/* The name of the first kind with methods ("jacobian"), for the message of
 * a method given to a kind that has none. */
const char *nn_task_with_methods(void);

#endif

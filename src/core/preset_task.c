/* src/core/preset_task.c - the [task] kinds a preset may name; see
 * preset_task.h. */
#include "preset_task.h"

#include <stdio.h>
#include <string.h>

#include "nnlab/jacobian.h"
#include "preset_values.h"

static const char *jacobian_method(int method)
{
    return nn_jac_method_name((enum nn_jac_method)method);
}

/* The network must be one the Jacobian job differentiates (linear layers,
 * each optionally followed by a tanh): said here, at load, not when a job
 * starts. */
static int jacobian_check(const nn_preset *p, const char *where, char *err, size_t err_len)
{
    nn_jac_shape s;
    return nn_jac_shape_from_preset(p, where, &s, err, err_len);
}

static const nn_task_def task_train = { .task = NN_TASK_TRAIN, .name = "train" };

static const nn_task_def task_jacobian = {
    .task = NN_TASK_JACOBIAN,
    .name = "jacobian",
    .n_methods = NN_JAC_METHOD_COUNT,
    .method_name = jacobian_method,
    .default_method = NN_JAC_ROWS,
    .takes_val = 1,
    .check = jacobian_check,
};

const nn_task_def *const nn_task_defs[] = { &task_train, &task_jacobian };
const int nn_task_count = (int)(sizeof nn_task_defs / sizeof nn_task_defs[0]);

const nn_task_def *nn_task_def_of(enum nn_task_kind task)
{
    for (int i = 0; i < nn_task_count; i++)
        if (nn_task_defs[i]->task == task)
            return nn_task_defs[i];
    return NULL;
}

void nn_task_names(char *buf, size_t len)
{
    const char *names[NN_TASK_MAX_KINDS];
    int n = nn_task_count < NN_TASK_MAX_KINDS ? nn_task_count : NN_TASK_MAX_KINDS;
    for (int i = 0; i < n; i++)
        names[i] = nn_task_defs[i]->name;
    nn_join_names(names, n, buf, len);
}

void nn_task_method_list(const nn_task_def *t, char *buf, size_t len)
{
    const char *names[NN_TASK_MAX_METHODS];
    int n = t->n_methods < NN_TASK_MAX_METHODS ? t->n_methods : NN_TASK_MAX_METHODS;
    for (int m = 0; m < n; m++)
        names[m] = t->method_name(m);
    nn_join_names(names, n, buf, len);
}

void nn_task_val_kinds(char *buf, size_t len)
{
    const char *names[NN_TASK_MAX_KINDS];
    int n = 0;
    for (int i = 0; i < nn_task_count && n < NN_TASK_MAX_KINDS; i++)
        if (nn_task_defs[i]->takes_val)
            names[n++] = nn_task_defs[i]->name;
    char list[NN_TASK_MAX_KINDS * 24];
    nn_join_names(names, n, list, sizeof list);
    snprintf(buf, len, "kind = %s", list);
}

const char *nn_task_with_methods(void)
{
    for (int i = 0; i < nn_task_count; i++)
        if (nn_task_defs[i]->n_methods > 0)
            return nn_task_defs[i]->name;
    return "none";
}

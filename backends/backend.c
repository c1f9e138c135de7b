/* backends/backend.c - the list of compiled-in backends and the few helpers
 * every backend and the engine share (see backend.h). */
#include "backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* An explicit list rather than self-registration: the order is the order
 * `nnlab devices` shows, and a reader sees every backend in one place. The GPU
 * backend is a run-time module, so it is not listed here. */
const nn_backend_ops *const nn_builtin_backends[] = {
    &nn_backend_cpu_ref,
    &nn_backend_cpu,
    NULL,
};

const nn_backend_ops *nn_backend_find(const char *name)
{
    if (!name)
        return NULL;
    for (const nn_backend_ops *const *p = nn_builtin_backends; *p; p++)
        if ((*p)->name && strcmp((*p)->name, name) == 0)
            return *p;
    return NULL;
}

int nn_backend_fail(nn_backend *b, const char *fmt, ...)
{
    /* The arguments must not point into b->last_error itself (vsnprintf's
     * source and destination may not overlap). */
    if (b) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->last_error, sizeof b->last_error, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int nn_backend_open(nn_backend *b, const nn_backend_ops *ops, const nn_backend_config *cfg)
{
    static const nn_backend_config defaults = { .threads = 0 };
    char why[NN_BACKEND_ERROR_LEN];

    b->ops = NULL;
    b->impl = NULL;
    b->last_error[0] = '\0';
    if (!ops)
        return nn_backend_fail(b, "no backend given");
    if (!cfg)
        cfg = &defaults;

    /* Probe first, so that "GPU unavailable: no libcudart.so.12" reaches the
     * UI without a half-opened backend to clean up. A table without a probe
     * is always available. */
    if (ops->probe) {
        why[0] = '\0';
        if (ops->probe(why, sizeof why) != 0)
            return nn_backend_fail(b, "%s: %s", ops->name ? ops->name : "backend",
                                   why[0] ? why : "not available here");
    }

    b->ops = ops;
    if (ops->open && ops->open(b, cfg) != 0) {
        b->ops = NULL;
        b->impl = NULL;
        if (b->last_error[0] == '\0')
            nn_backend_fail(b, "%s: open failed", ops->name ? ops->name : "backend");
        return -1;
    }
    return 0;
}

void nn_backend_close(nn_backend *b)
{
    if (!b || !b->ops)
        return;
    if (b->ops->close)
        b->ops->close(b);
    b->ops = NULL;
    b->impl = NULL;
}

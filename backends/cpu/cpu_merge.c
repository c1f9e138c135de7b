/* backends/cpu/cpu_merge.c - add, mul and accumulate of the fast CPU backend:
 * cpu-ref's vectorised loops (cpu_ref_graph.c) run over items of EW_BLOCK
 * elements by the thread pool, which takes more threads only for arrays
 * large enough to pay for them (nn_cpu_ew_run). Each element is computed as
 * cpu-ref computes it, so the results are bit-identical. slice is cpu-ref's
 * (row copies: memcpy is already as fast as a core streams). */
#include "cpu_internal.h"

#include "cpu_ref/cpu_ref.h"

enum merge_op { ADD_FWD, ADD_BWD, MUL_FWD, MUL_BWD, ACCUMULATE };

typedef struct merge_task {
    enum merge_op op;
    size_t n;
    float scale;
    const float *a, *c, *dy;
    float *y, *da, *dc;
} merge_task;

/* one item: the same call as cpu-ref's on the item's range */
static void merge_item(void *ctx, int item, int part)
{
    const merge_task *t = ctx;
    size_t lo, hi;
    (void)part;
    nn_cpu_ew_range(t->n, item, &lo, &hi);
    const float *a = t->a ? t->a + lo : NULL, *c = t->c ? t->c + lo : NULL;
    const float *dy = t->dy ? t->dy + lo : NULL;
    float *y = t->y ? t->y + lo : NULL, *da = t->da ? t->da + lo : NULL;
    float *dc = t->dc ? t->dc + lo : NULL;
    switch (t->op) {
    case ADD_FWD:    nn_ref_add_forward(NULL, hi - lo, t->scale, a, c, y); break;
    case ADD_BWD:    nn_ref_add_backward(NULL, hi - lo, t->scale, dy, da, dc); break;
    case MUL_FWD:    nn_ref_mul_forward(NULL, hi - lo, a, c, y); break;
    case MUL_BWD:    nn_ref_mul_backward(NULL, hi - lo, a, c, dy, da, dc); break;
    case ACCUMULATE: nn_ref_accumulate(NULL, hi - lo, a, y); break;
    }
}

static int run(nn_backend *b, merge_task *t)
{
    if (t->n > 0)
        nn_cpu_ew_run(b, t->n, 1.0, merge_item, t);
    return 0;
}

int nn_cpu_add_forward(nn_backend *b, size_t n, float scale, const float *a, const float *c,
                       float *y)
{
    merge_task t = { .op = ADD_FWD, .n = n, .scale = scale, .a = a, .c = c, .y = y };
    return run(b, &t);
}

int nn_cpu_add_backward(nn_backend *b, size_t n, float scale, const float *dy, float *da,
                        float *dc)
{
    merge_task t = { .op = ADD_BWD, .n = n, .scale = scale, .dy = dy, .da = da, .dc = dc };
    return run(b, &t);
}

int nn_cpu_mul_forward(nn_backend *b, size_t n, const float *a, const float *c, float *y)
{
    merge_task t = { .op = MUL_FWD, .n = n, .a = a, .c = c, .y = y };
    return run(b, &t);
}

int nn_cpu_mul_backward(nn_backend *b, size_t n, const float *a, const float *c, const float *dy,
                        float *da, float *dc)
{
    merge_task t = { .op = MUL_BWD, .n = n, .a = a, .c = c, .dy = dy, .da = da, .dc = dc };
    return run(b, &t);
}

int nn_cpu_accumulate(nn_backend *b, size_t n, const float *src, float *dst)
{
    merge_task t = { .op = ACCUMULATE, .n = n, .a = src, .y = dst };
    return run(b, &t);
}

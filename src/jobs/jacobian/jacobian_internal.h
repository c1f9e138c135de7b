/* src/jobs/jacobian/jacobian_internal.h - the Jacobian job's computation, shared by
 * jacobian.c (the network on a backend: forward pass, reverse and tangent
 * passes through the op table), jacobian_methods.c (the four methods) and
 * job_jacobian.c (the job's thread). Private to src/jobs/jacobian.
 *
 * Everything is allocated by jac_prepare before the first pass; a pass
 * allocates nothing, and a one-hot cotangent is a window into a buffer that
 * holds its single 1 (no upload per pass, no per-row allocation). */
#ifndef NNLAB_JACOBIAN_INTERNAL_H
#define NNLAB_JACOBIAN_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "backend.h"
#include "nnlab/jacobian.h"
#include "run_result.h"

/* Activations of the network over n rows: a[0] the input (n, width[0]),
 * a[l+1] layer l's output after its tanh (n, width[l+1]); pre[l] its output
 * before the tanh (only for layers with one). Backend memory. */
typedef struct jac_acts {
    int n;
    float *a[NN_JAC_MAX_LINEAR + 1];
    float *pre[NN_JAC_MAX_LINEAR];
} jac_acts;

/* Called after a group of rows of J is done; nonzero cancels. */
typedef int (*jac_progress_fn)(void *ctx, long rows_done);
/* A lane of its own thread calls it instead after each group: waits while
 * the job is paused, nonzero when it is cancelled (it publishes nothing:
 * lane 0, on the job's thread, does). */
typedef int (*jac_hold_fn)(void *ctx);

/* What the lanes of one rows run share (jacobian_lanes.c): lane L of N
 * takes groups L, L+N, L+2N, ... on a backend of one thread of its own. */
typedef struct jac_shared {
    atomic_long rows_done;       /* rows of J done by every lane */
    atomic_int stop;             /* a lane was cancelled or failed: the others stop too */
} jac_shared;

typedef struct jac_run {
    nn_backend *b;
    nn_jac_shape s;
    enum nn_jac_method method;
    int val, in, out;
    int use_graph;               /* rows on a backend with step graphs: record a chunk */
    char note[256];              /* why a graph asked for was not used ("" none) */
    float *params;               /* backend: w1, b1, w2, b2, ... (PyTorch's order) */
    float *w[NN_JAC_MAX_LINEAR], *bias[NN_JAC_MAX_LINEAR];
    jac_acts acts;               /* over the batch (val rows) */
    jac_acts rep;                /* batched: the batch repeated chunk times */
    nn_jac_sizes sz;             /* every buffer's size (nn_jac_sizes_of: the size check's) */
    int chunk;                   /* rows of J per group (rows, batched) */
    float *onehot;               /* the buffer the cotangent windows read (see each method) */
    float *s0, *s1;              /* (max rows, max width) scratch, ping-pong */
    float *dx;                   /* backend: a group's input gradients or tangents */
    float *host_dx;              /* host copy of dx */
    size_t dx_floats;
    /* host results */
    float *x;                    /* (val, in) */
    float *host_params;
    size_t n_params;
    float *blocks;               /* (val, out, in) */
    double offdiag_max;
    int offdiag_checked;
    double forward_s;
    jac_progress_fn progress;
    jac_hold_fn hold;
    jac_hold_fn cancelled;       /* nonzero once the job is cancelled; never waits */
    void *ctx;
    /* rows over lanes (jacobian_lanes.c): this run is lane `lane` of
     * `lanes` (0 of 1 alone); lanes after the first write lane 0's blocks */
    int lane, lanes;
    long one_at;                 /* rows: where the cotangent buffer's 1 is */
    double checked_at;           /* rows: when a pass last looked for a cancel (nn_now) */
    int recording;               /* rows: recording a group's graph (no look between passes) */
    double beat_at;              /* rows, lane 0: when it last published between passes */
    jac_shared own;
    jac_shared *shared;          /* &own, or lane 0's */
} jac_run;

/* jacobian.c: sets up run for (s, val, method) on the open backend b:
 * parameters initialised as nn.Linear and x uniform in [0, 1) from seed,
 * uploaded; every buffer the method needs allocated. graph: allow a step
 * graph for rows. -1 with a message. */
int jac_prepare(jac_run *r, nn_backend *b, const nn_jac_shape *s, int val, enum nn_jac_method m,
                uint64_t seed, int graph, char *err, size_t err_len);
void jac_release(jac_run *r);
/* The forward pass over acts' n rows (acts->a[0] filled). */
int jac_forward(jac_run *r, jac_acts *acts);
/* One reverse pass over n rows of acts: cotangent g (n, out) to the input
 * gradient dx (n, in); no parameter gradient. */
int jac_reverse(jac_run *r, const jac_acts *acts, int n, const float *g, float *dx);
/* One tangent pass over the batch: t (val, in) to (val, out) in r->dx. */
int jac_tangent(jac_run *r, const float *t);
/* Downloads the first floats of r->dx into r->host_dx. */
int jac_read_dx(jac_run *r, size_t floats);
/* Adds a group's input gradients (host_dx: count cotangents of val*in each,
 * the first for flat row p0 = i*out + k of J) to the blocks, and checks the
 * zero blocks. */
void jac_take_rows(jac_run *r, long p0, int count);

/* jacobian_methods.c: runs r's method: RUN_GO_ON, RUN_CANCELLED or RUN_ERROR. */
run_result jac_run_method(jac_run *r);

/* jacobian_lanes.c: the rows method split over host threads. When method
 * is rows, b runs ops on several host threads and records no graph, the
 * lanes reopen b with one thread and open one more backend of one thread
 * per further lane, each with a jac_run of its own; lane 0 is run itself.
 * jac_lanes_count says how many (1: run alone). */
#define JAC_MAX_LANES 16
typedef struct jac_lanes {
    int n;                       /* lanes, lane 0 being the caller's run */
    nn_backend b[JAC_MAX_LANES];     /* b[0] unused: lane 0 keeps the caller's */
    jac_run run[JAC_MAX_LANES];
} jac_lanes;

int jac_lanes_count(const nn_backend *b, enum nn_jac_method m, int graph, int val);
/* Opens lanes 1..n-1 for r0 (prepared on a backend of one thread); their
 * runs share r0's blocks and progress. -1 with a message. */
int jac_lanes_open(jac_lanes *l, int n, jac_run *r0, uint64_t seed, char *err, size_t err_len);
/* Runs every lane (lane 0 on this thread, after its forward pass, which
 * the caller has made): RUN_GO_ON, RUN_CANCELLED, or RUN_ERROR with r0's
 * backend's message. */
run_result jac_lanes_run(jac_lanes *l, jac_run *r0);
void jac_lanes_close(jac_lanes *l);

#endif

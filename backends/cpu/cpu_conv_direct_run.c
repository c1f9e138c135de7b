/* backends/cpu/cpu_conv_direct_run.c - the direct convolution path of the fast
 * CPU backend (cpu_conv.c chooses it): runs the AVX2 kernels of
 * cpu_conv_direct.c on the thread pool. Stride 1, few output channels.
 *
 * Forward items are (sample, share of its output rows); backward items are
 * CONV_SLOTS runs of consecutive chunks of samples, each with its own partial
 * dw and dbias, added in slot order at the end (as for im2col).
 *
 * Workspace: the shared tables (tap offsets; the transposed weights for dx),
 * then one area per thread (padded inputs, wide outputs or output gradients),
 * then the slots of partial weight gradients.
 */
#include "cpu_internal.h"

#include <string.h>

#include "cpu_conv_direct.h"

/* Floats of padded input and margined output gradient per backward chunk:
 * half a core's L2, so the weight-gradient sweeps read them from cache. */
#define DIRECT_CHUNK_FLOATS 32768

typedef struct dconv_plan {
    dconv_dims d;
    int threads;
    int row_parts;        /* forward items per sample (rows split when n < threads) */
    int nb;               /* backward samples per chunk */
    int chunks, slots;
    int chan;             /* the forward and dw in channel form (nn_direct_conv_chan) */
    size_t hw;            /* output positions of a sample: h_out w_out */
    size_t table_floats;  /* offs (K ints), offs_t (gather: Kt, scatter: c_out + K ints),
                           * w_t (c_in Kt); channel form: at (hw ints), wc (K c_out) */
    size_t chan_at;       /* channel form: where its tables, at then wc, start */
    size_t thread_stride; /* max(forward: xp + yw, backward: nb (xp + dyp [+ dyc]) + dxs + acc) */
    size_t slot_stride;   /* dw (c_out K) + dbias (c_out) */
} dconv_plan;

static dconv_plan dconv_plan_for(const nn_backend *b, const nn_conv_geom *g)
{
    dconv_plan p;
    nn_direct_conv_dims(g, &p.d);
    const dconv_dims *d = &p.d;
    double macs = (double)g->n * (double)g->c_out * (double)d->K * (double)g->h_out * g->w_out;
    p.threads = nn_cpu_threads_for(b, macs, PAR_MIN_MACS);
    /* fewer samples than threads: split each sample's output rows too */
    p.row_parts = g->n < p.threads ? (p.threads + g->n - 1) / g->n : 1;
    if (p.row_parts > g->h_out)
        p.row_parts = g->h_out;
    p.chan = nn_direct_conv_chan(g, d);
    p.hw = (size_t)g->h_out * (size_t)g->w_out;
    /* the channel form's dw reads the output gradient position-major (dyc) */
    size_t per_sample = d->xp_floats + d->dyp_floats + (p.chan ? p.hw * (size_t)g->c_out : 0);
    size_t fit = DIRECT_CHUNK_FLOATS / per_sample;
    size_t per_thread = ((size_t)g->n + (size_t)p.threads - 1) / (size_t)p.threads;
    p.nb = (int)(fit < 1 ? 1 : fit < per_thread ? fit : per_thread);
    p.chunks = (g->n + p.nb - 1) / p.nb;
    p.slots = p.chunks < CONV_SLOTS ? p.chunks : CONV_SLOTS;
    p.chan_at = nn_cpu_round16(d->K + d->Kt + d->K + (size_t)g->c_in * d->Kt);
    p.table_floats = p.chan_at;
    if (p.chan)
        p.table_floats += nn_cpu_round16(p.hw) + nn_cpu_round16(d->K * (size_t)g->c_out);
    size_t fwd = d->xp_floats + d->yw_floats;
    size_t bwd = (size_t)p.nb * per_sample + d->dxs_floats + nn_direct_conv_wgrad_floats(g, d);
    p.thread_stride = nn_cpu_round16(fwd > bwd ? fwd : bwd);
    p.slot_stride = nn_cpu_round16((size_t)g->c_out * d->K + (size_t)g->c_out);
    return p;
}

size_t nn_cpu_direct_workspace(const nn_backend *b, const nn_conv_geom *g)
{
    dconv_plan p = dconv_plan_for(b, g);
    size_t floats = p.table_floats + (size_t)p.threads * p.thread_stride +
                    (size_t)p.slots * p.slot_stride;
    return floats * sizeof(float);
}

typedef struct dconv_task {
    const nn_conv_geom *g;
    dconv_plan plan;
    const float *x, *w, *bias, *dy;
    float *y, *dx, *dw, *dbias;
    const int *offs, *offs_t;
    const float *w_t;
    const int *at;        /* channel form: where each output position's taps start */
    const float *wc;      /* channel form: w transposed (K, c_out) */
    float *threads_ws, *slots_ws;
} dconv_task;

static void dconv_task_layout(dconv_task *t, void *ws, int with_dx)
{
    float *f = ws;
    int *offs = ws;
    const dconv_dims *d = &t->plan.d;
    float *w_t = f + d->K + d->Kt + d->K;
    const int scatter = with_dx && nn_direct_conv_dx_scatter(t->g, d);
    nn_direct_conv_tables(t->g, d, t->w, offs, with_dx && !scatter ? offs + d->K : NULL,
                          with_dx && !scatter ? w_t : NULL);
    if (scatter)
        nn_direct_conv_scatter_tables(t->g, d, t->w, offs + d->K, w_t);
    t->offs = offs;
    t->offs_t = offs + d->K;
    t->w_t = w_t;
    if (t->plan.chan) {
        int *at = (int *)(f + t->plan.chan_at);
        float *wc = f + t->plan.chan_at + nn_cpu_round16(t->plan.hw);
        nn_direct_chan_tables(t->g, d, t->w, at, wc);
        t->at = at;
        t->wc = wc;
    }
    t->threads_ws = f + t->plan.table_floats;
    t->slots_ws = t->threads_ws + (size_t)t->plan.threads * t->plan.thread_stride;
}

/* Forward of item = sample * row_parts + part: its output rows. */
static void dconv_forward_item(void *ctx, int item, int part)
{
    const dconv_task *t = ctx;
    const nn_conv_geom *g = t->g;
    const dconv_plan *p = &t->plan;
    const dconv_dims *d = &p->d;
    float *xp = t->threads_ws + (size_t)part * p->thread_stride;
    float *yw = xp + d->xp_floats;
    const size_t s = (size_t)(item / p->row_parts);
    const int rp = item % p->row_parts;
    const int oh0 = g->h_out * rp / p->row_parts, oh1 = g->h_out * (rp + 1) / p->row_parts;
    const size_t in_sample = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
    const size_t out_sample = (size_t)g->c_out * (size_t)g->h_out * (size_t)g->w_out;
    nn_direct_conv_pad_input(g, d, t->x + s * in_sample, xp);
    if (p->chan) {
        const size_t p0 = (size_t)oh0 * (size_t)g->w_out, p1 = (size_t)oh1 * (size_t)g->w_out;
        nn_direct_chan_forward(g, d, t->wc, t->offs, t->at, xp, yw, p0, p1);
        nn_direct_chan_store(g, yw, t->bias, t->y + s * out_sample, p0, p1);
        return;
    }
    size_t q0, q1;
    nn_direct_conv_rows(d, oh0, oh1, &q0, &q1);
    nn_direct_conv_forward(g, d, t->w, t->offs, xp, yw, q0, q1);
    nn_direct_conv_store(g, d, yw, t->bias, t->y + s * out_sample, oh0, oh1);
}

void nn_cpu_direct_forward(nn_backend *b, const nn_conv_geom *g, const float *x,
                           const float *w, const float *bias, float *y, void *ws)
{
    dconv_task t = { .g = g, .plan = dconv_plan_for(b, g), .x = x, .w = w, .bias = bias, .y = y };
    dconv_task_layout(&t, ws, 0);
    nn_cpu_par_for(b, t.plan.threads, g->n * t.plan.row_parts, dconv_forward_item, &t);
}

/* Backward of slot `item`: its chunks' dx, and its partial dw and dbias. */
static void dconv_backward_item(void *ctx, int item, int part)
{
    const dconv_task *t = ctx;
    const nn_conv_geom *g = t->g;
    const dconv_plan *p = &t->plan;
    const dconv_dims *d = &p->d;
    float *xps = t->threads_ws + (size_t)part * p->thread_stride;
    float *dyps = xps + (size_t)p->nb * d->xp_floats;
    float *dycs = dyps + (size_t)p->nb * d->dyp_floats;   /* channel form only */
    float *dxp = dycs + (p->chan ? (size_t)p->nb * p->hw * (size_t)g->c_out : 0);
    float *acc = dxp + d->dxs_floats;
    float *dw_slot = t->slots_ws + (size_t)item * p->slot_stride;
    float *db_slot = dw_slot + (size_t)g->c_out * d->K;
    const size_t CO = (size_t)g->c_out, HW = (size_t)g->h_out * (size_t)g->w_out;
    const size_t in_sample = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
    const size_t out_sample = CO * HW;
    size_t c0, c1;
    nn_cpu_split_range((size_t)p->chunks, item, p->slots, 1, &c0, &c1);
    const size_t s0 = c0 * (size_t)p->nb;
    const size_t s1 = c1 * (size_t)p->nb < (size_t)g->n ? c1 * (size_t)p->nb : (size_t)g->n;

    if (t->dbias)
        for (size_t co = 0; co < CO; co++) {
            double acc = 0.0;
            for (size_t s = s0; s < s1; s++)
                acc += nn_cpu_sum_run(t->dy + s * out_sample + co * HW, HW);
            db_slot[co] = (float)acc;
        }
    memset(dw_slot, 0, CO * d->K * sizeof *dw_slot);
    if (p->chan)              /* dw (K, c_out) summed here, transposed at the end */
        memset(acc, 0, CO * d->K * sizeof *acc);
    for (size_t s = s0; s < s1; s += (size_t)p->nb) {
        const int nb = (int)(s1 - s < (size_t)p->nb ? s1 - s : (size_t)p->nb);
        for (int j = 0; j < nb; j++) {
            const float *dy = t->dy + (s + (size_t)j) * out_sample;
            nn_direct_conv_pad_input(g, d, t->x + (s + (size_t)j) * in_sample,
                                     xps + (size_t)j * d->xp_floats);
            if (t->dx || !p->chan)
                nn_direct_conv_widen(g, d, dy, dyps + (size_t)j * d->dyp_floats);
            if (t->dw && p->chan)
                nn_direct_chan_dy(g, dy, dycs + (size_t)j * p->hw * CO);
        }
        if (t->dw && p->chan)
            nn_direct_chan_weight_grad(g, d, t->offs, t->at, xps, dycs, nb, acc);
        else if (t->dw)
            nn_direct_conv_weight_grad(g, d, t->offs, xps, dyps, nb, dw_slot, acc);
        if (t->dx)
            for (int j = 0; j < nb; j++)
                nn_direct_conv_input_grad(g, d, t->w_t, t->offs_t, dyps + (size_t)j * d->dyp_floats,
                                          dxp, t->dx + (s + (size_t)j) * in_sample);
    }
    if (t->dw && p->chan)
        for (size_t co = 0; co < CO; co++)
            for (size_t r = 0; r < d->K; r++)
                dw_slot[co * d->K + r] = acc[r * CO + co];
}

void nn_cpu_direct_backward(nn_backend *b, const nn_conv_geom *g, const float *x,
                            const float *w, const float *dy, float *dx, float *dw,
                            float *dbias, void *ws)
{
    dconv_task t = { .g = g, .plan = dconv_plan_for(b, g), .x = x, .w = w, .dy = dy, .dx = dx,
                     .dw = dw, .dbias = dbias };
    const dconv_plan *p = &t.plan;
    dconv_task_layout(&t, ws, dx != NULL);
    nn_cpu_par_for(b, p->threads, p->slots, dconv_backward_item, &t);

    nn_cpu_sum_conv_slots(t.slots_ws, p->slots, p->slot_stride, (size_t)g->c_out, p->d.K, dw,
                          dbias);
}

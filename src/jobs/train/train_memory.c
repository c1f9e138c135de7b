/* src/jobs/train/train_memory.c - what a training job will hold (the
 * network's plan from net.c, the data set from its kind and sizes), and the
 * refusal of a batch larger than the training set or of more memory than
 * there is (job_memory.c adds what the machine has): the training kind's
 * estimate and size check (job_kind.h). */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "data.h"
#include "layer_kind.h"
#include "net.h"
#include "train_internal.h"
#include "util.h"

/* ---- what the job will hold ---------------------------------------------------------- */

/* The data set in host memory: float samples, labels or targets, the
 * epoch's order. No copy of the files' bytes: the IDX reader inflates a
 * chunk at a time and the CIFAR-10 reader reads a record at a time into
 * the floats (counting a byte per value besides put the estimate 20-23%
 * above the measured peak of Fashion-MNIST's and synthetic CIFAR's jobs). */
static double data_bytes(const nn_preset *p, long train, long val)
{
    nn_shape in = nn_preset_input_shape(p);
    double floats = (double)nn_shape_count(&in);
    double label = p->data == NN_DATA_RANDOM ? 4.0 * p->targets : 4.0;
    return (double)(train + val) * (4.0 * floats + label) + 4.0 * (double)train;
}

/* The engine's host staging of one batch (engine_batch.c), doubled in
 * page-locked memory when a device copies from there. */
static double staging_bytes(const nn_job_config *c, int batch)
{
    nn_shape in = nn_preset_input_shape(&c->preset);
    double label = c->preset.data == NN_DATA_RANDOM ? 4.0 * c->preset.targets : 4.0;
    double one = (double)batch * (4.0 * (double)nn_shape_count(&in) + label);
    return c->pinned && !c->data_on_device ? 3.0 * one : one;
}

void train_estimate(const nn_job_config *cfg, const nn_backend_ops *ops, nn_backend *b,
                    nn_memory_estimate *m)
{
    const nn_preset *p = &cfg->preset;
    int batch = cfg->batch > 0 ? cfg->batch : p->batch;
    long val;
    nn_net_bytes nb;
    m->train_rows = nn_preset_data_rows(p, &val);
    nn_net_bytes_of(p, batch, b, &nb);
    m->params = nb.params + (ops && !ops->host_memory ? 0.0 : nb.init_host);
    m->batch = nb.batch + staging_bytes(cfg, batch);
    m->workspace = nb.workspace;
    m->fixed = NN_JOB_FIXED_BYTES;
    m->data = data_bytes(p, m->train_rows, val);
    m->big_layer = nb.big_layer;
    m->big_layer_bytes = nb.big_layer_bytes;
    /* an unknown device counts as host memory: the larger figure */
    m->device = ops && !ops->host_memory;
    if (m->device)                   /* the initial parameters are drawn on the host */
        m->host = m->data + staging_bytes(cfg, batch) + nb.init_host + m->fixed;
    else
        m->host = m->params + m->batch + m->workspace + m->data + m->fixed;
}

/* ---- the checks ------------------------------------------------------------------------ */

/* "--batch 1000000", "x.ini: [train] batch = 1000000" or "batch 1000000". */
static void batch_text(const char *batch_key, int batch, char *buf, size_t len)
{
    snprintf(buf, len, "%s %d", batch_key ? batch_key : "batch", batch);
}

int engine_check_batch_rows(const char *batch_key, int batch, long rows, const char *what,
                            char *err, size_t err_len)
{
    char b[NN_TEXT_LEN];
    if (batch <= rows)
        return 0;
    batch_text(batch_key, batch, b, sizeof b);
    return nn_errorf(err, err_len, "%s: larger than the training set (%ld samples%s%s): expected 1..%ld",
                     b, rows, what ? " of " : "", what ? what : "", rows);
}

/* What drives the total, as the user would change it: a layer's key when its
 * parameters are the largest part, [data] rows when random rows are, else
 * the batch. */
static void culprit(const nn_job_config *cfg, const nn_memory_estimate *m, const char *batch_key,
                    char *buf, size_t len)
{
    const nn_preset *p = &cfg->preset;
    double batch_part = m->batch + m->workspace;
    if (m->big_layer >= 0 && m->params >= batch_part && m->params >= m->data) {
        const nn_layer_spec *l = &p->layers[m->big_layer];
        const nn_layer_def *d = nn_layer_def_of(l->kind);
        char label[64] = "";
        if (d && d->label)
            d->label(l, label, sizeof label);
        int wide_in = l->kind == NN_LAYER_LINEAR && l->in > l->out;
        snprintf(buf, len, "[layer%d] %s = %d (%s)", m->big_layer + 1, wide_in ? "in" : "out",
                 wide_in ? l->in : l->out, label[0] ? label : nn_layer_kind_name(l->kind));
    } else if (p->data == NN_DATA_RANDOM && m->data > batch_part) {
        snprintf(buf, len, "[data] rows = %ld", p->rows);
    } else {
        batch_text(batch_key, cfg->batch > 0 ? cfg->batch : p->batch, buf, len);
    }
}

int train_check_sizes(const nn_job_config *cfg, const nn_memory_estimate *m, const char *batch_key,
                      char *err, size_t err_len)
{
    char what[NN_TEXT_LEN], need[16], avail[16], parts[4][16];
    int batch = cfg->batch > 0 ? cfg->batch : cfg->preset.batch;
    if (engine_check_batch_rows(batch_key, batch, m->train_rows, NULL, err, err_len) != 0)
        return -1;
    if (m->available <= 0 || m->host <= m->available)
        return 0;
    if (m->device)                   /* only the data set and the staging are the host's */
        snprintf(what, sizeof what, "%s", cfg->preset.data == NN_DATA_RANDOM ? "[data] rows" : "the data set");
    else
        culprit(cfg, m, batch_key, what, sizeof what);
    nn_format_bytes(m->host, need, sizeof need);
    nn_format_bytes(m->available, avail, sizeof avail);
    nn_format_bytes(m->params, parts[0], sizeof parts[0]);
    nn_format_bytes(m->batch + m->workspace, parts[1], sizeof parts[1]);
    nn_format_bytes(m->data, parts[2], sizeof parts[2]);
    nn_format_bytes(m->fixed, parts[3], sizeof parts[3]);
    char ranks[48] = "";             /* N ranks on this host: the parts are each one's */
    if (m->copies > 1)
        snprintf(ranks, sizeof ranks, "%d ranks, each: ", m->copies);
    if (m->device)
        return nn_errorf(err, err_len, "%s: needs ~%s of host memory (%sdata %s), %s available", what,
                         need, ranks, parts[2], avail);
    return nn_errorf(err, err_len, "%s: needs ~%s of memory (%sparameters %s, a batch %s, data %s, "
                     "the job's own %s), %s available", what, need, ranks, parts[0], parts[1], parts[2],
                     parts[3], avail);
}

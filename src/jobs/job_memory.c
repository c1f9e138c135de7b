/* src/core/engine_memory.c - sizes checked before memory is taken: what a
 * training job will hold (the network's plan from net.c, the data set from
 * its kind and sizes), what the machine has available, and the refusal of a
 * batch larger than the training set or of more memory than there is; see
 * engine.h. The CLI, the lab and the engine all call these, so that they
 * give the same answer. */
#include "nnlab/engine.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend.h"
#include "data.h"
#include "engine_internal.h"
#include "layer_kind.h"
#include "net.h"
#include "util.h"

void nn_format_bytes(double bytes, char *buf, size_t len)
{
    if (bytes >= 1e12)
        snprintf(buf, len, "%.1f TB", bytes / 1e12);
    else if (bytes >= 1e9)
        snprintf(buf, len, "%.1f GB", bytes / 1e9);
    else if (bytes >= 1e6)
        snprintf(buf, len, "%.0f MB", bytes / 1e6);
    else
        snprintf(buf, len, "%.0f KB", bytes / 1e3);
}

/* ---- what the machine has ---------------------------------------------------------- */

/* The first number after `key` in file path (a /proc or /sys file); -1 when absent. */
static double read_number(const char *path, const char *key)
{
    char line[256];
    double v = -1;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        size_t k = strlen(key);
        if (strncmp(line, key, k) == 0 && sscanf(line + k, "%lf", &v) == 1)
            break;
        v = -1;
    }
    fclose(f);
    return v;
}

/* A cgroup's limit less what it uses: v2 (memory.max) or v1
 * (memory.limit_in_bytes), as mounted for this process; -1 when none. */
static double cgroup_room(void)
{
    double max = read_number("/sys/fs/cgroup/memory.max", "");
    double cur = read_number("/sys/fs/cgroup/memory.current", "");
    if (max < 0) {
        max = read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes", "");
        cur = read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes", "");
    }
    /* "max", or v1's "no limit" (a page-rounded 2^63) */
    if (max < 0 || cur < 0 || max > 1e18)
        return -1;
    return max > cur ? max - cur : 0;
}

/* An address-space limit (ulimit -v) less what the process maps already. */
static double rlimit_room(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return -1;
    double pages = read_number("/proc/self/statm", "");
    double used = pages > 0 ? pages * (double)sysconf(_SC_PAGESIZE) : 0;
    return (double)rl.rlim_cur > used ? (double)rl.rlim_cur - used : 0;
}

/* Host memory a job may take now: MemAvailable (what can be had without
 * swapping), or the free pages where the kernel does not say, lowered to a
 * cgroup's or ulimit's room; 0 when nothing tells. */
static double available_bytes(void)
{
    double kb = read_number("/proc/meminfo", "MemAvailable:");
    double avail = kb >= 0 ? kb * 1024.0 : -1;
    if (avail < 0) {
        long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        avail = pages > 0 && size > 0 ? (double)pages * (double)size : 0;
    }
    double limits[2] = { cgroup_room(), rlimit_room() };
    for (int i = 0; i < 2; i++)
        if (limits[i] >= 0 && (avail <= 0 || limits[i] < avail))
            avail = limits[i] > 0 ? limits[i] : 1;   /* 0 would read as "unknown" */
    return avail;
}

/* ---- what the job will hold ---------------------------------------------------------- */

/* Training and validation samples the preset's data gives: the real sets'
 * sizes (their synthetic stand-ins have the same), or the random rows. */
static long data_rows(const nn_preset *p, long *val)
{
    switch (p->data) {
    case NN_DATA_MNIST: *val = MNIST_VAL; return MNIST_TRAIN;
    case NN_DATA_CIFAR10: *val = CIFAR_VAL; return CIFAR_TRAIN;
    default: *val = p->val_rows; return p->rows;
    }
}

/* The data set in host memory: float samples, labels or targets, the
 * epoch's order; the real sets' readers hold the file's bytes (one per
 * value) besides the floats while converting. */
static double data_bytes(const nn_preset *p, long train, long val)
{
    nn_shape in = nn_preset_input_shape(p);
    double floats = (double)nn_shape_count(&in);
    double label = p->data == NN_DATA_RANDOM ? 4.0 * p->targets : 4.0;
    double per_sample = 4.0 * floats + label + (p->data == NN_DATA_RANDOM ? 0.0 : floats);
    return (double)(train + val) * per_sample + 4.0 * (double)train;
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

void engine_memory_estimate(const nn_job_config *cfg, const nn_backend_ops *ops, nn_backend *b,
                            nn_memory_estimate *m)
{
    const nn_preset *p = &cfg->preset;
    int batch = cfg->batch > 0 ? cfg->batch : p->batch;
    long val;
    nn_net_bytes nb;
    memset(m, 0, sizeof *m);
    if (cfg->kind == NN_JOB_JACOBIAN) {
        /* an unknown device counts as host memory, as below */
        engine_jacobian_estimate(cfg, !ops || ops->host_memory, m);
        m->available = available_bytes();
        return;
    }
    m->train_rows = data_rows(p, &val);
    nn_net_bytes_of(p, batch, b, &nb);
    m->params = nb.params;
    m->batch = nb.batch + staging_bytes(cfg, batch);
    m->workspace = nb.workspace;
    m->data = data_bytes(p, m->train_rows, val);
    m->big_layer = nb.big_layer;
    m->big_layer_bytes = nb.big_layer_bytes;
    /* an unknown device counts as host memory: the larger figure */
    m->device = ops && !ops->host_memory;
    if (m->device)
        m->host = m->data + staging_bytes(cfg, batch);
    else
        m->host = m->params + m->batch + m->workspace + m->data;
    m->available = available_bytes();
}

/* The table of a built-in device by name. The GPU module is not loaded for
 * an estimate (the lab asks on its UI thread, and loading the module's CUDA
 * libraries takes a while): a stand-in says only that its memory is its own. */
static const nn_backend_ops *ops_for_estimate(const char *name)
{
    static const nn_backend_ops device_memory = { .name = "gpu", .host_memory = 0 };
    for (const nn_backend_ops *const *p = nn_builtin_backends; *p; p++)
        if (strcmp((*p)->name, name) == 0)
            return *p;
    return strcmp(name, "gpu") == 0 ? &device_memory : NULL;
}

void nn_job_memory_estimate(const nn_job_config *cfg, nn_memory_estimate *m)
{
    const char *dev = cfg->device[0] ? cfg->device : cfg->preset.device;
    engine_memory_estimate(cfg, ops_for_estimate(dev), NULL, m);
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

int nn_job_check_sizes(const nn_job_config *cfg, const nn_memory_estimate *m, const char *batch_key,
                       char *err, size_t err_len)
{
    char what[NN_TEXT_LEN], need[16], avail[16], parts[3][16];
    int batch = cfg->batch > 0 ? cfg->batch : cfg->preset.batch;
    if (cfg->kind == NN_JOB_JACOBIAN)
        return engine_jacobian_check_sizes(cfg, m, batch_key, err, err_len);
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
    if (m->device)
        return nn_errorf(err, err_len, "%s: needs ~%s of host memory (data %s), %s available", what,
                         need, parts[2], avail);
    return nn_errorf(err, err_len, "%s: needs ~%s of memory (parameters %s, a batch %s, data %s), "
                     "%s available", what, need, parts[0], parts[1], parts[2], avail);
}

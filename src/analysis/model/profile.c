/* src/analysis/model/profile.c - GPU profiles: reading one (iniparser for the
 * structure, our own strict number parsing for the values, as presets),
 * finding one by name, listing them, and what one stands for: a
 * calibration the cost model prices, and the three ways of running a step
 * predicted side by side. Writing one is profile_write.c. See profile.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "nnlab/profile.h"
#include "profile_fields.h"
#include "profile_find.h"
#include "nnlab/framework.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <iniparser/iniparser.h>

#include "util.h"
#include "preset_file.h"
#include "xdg.h"

#define PF(f) offsetof(nn_gpu_profile, f)
const nn_profile_field nn_profile_fields[] = {
    { "gpu", "fp32_gflops", PF(fp32_gflops), 1, 1e7, "FP32 peak, GFLOP/s", 0, 0 },
    { "gpu", "mem_gbps", PF(mem_gbps), 1, 1e5, "memory bandwidth, GB/s", 0, 0 },
    { "link", "copy_us", PF(copy_us), 0, 1e4, "a 4-byte copy to the device from pageable memory, us", 0, 0 },
    { "link", "copy_gbps", PF(copy_gbps), 0.01, 1e4, "a large copy to the device from pageable memory, GB/s", 0, 0 },
    { "link", "pinned_copy_us", PF(pinned_copy_us), 0, 1e4, "the same from page-locked memory, us", 0, 0 },
    { "link", "pinned_copy_gbps", PF(pinned_copy_gbps), 0.01, 1e4, "the same from page-locked memory, GB/s", 0, 0 },
    { "link", "download_us", PF(download_us), 0, 1e4, "4 bytes back to the host and the wait, us", 0, 0 },
    { "launch", "launch_us", PF(launch_us), 0, 1e4, "one kernel launch, back to back, us", 0, 0 },
    { "launch", "graph_launch_us", PF(graph_launch_us), 0, 1e4, "launching a recorded graph, us", 0, 0 },
    { "launch", "graph_node_us", PF(graph_node_us), 0, 1e3, "each node a graph replays, us", 0, 0 },
    { "launch", "sync_us", PF(sync_us), 0, 1e4, "a tiny kernel and a synchronise, us", 0, 0 },
    { "host", "framework_op_us", PF(framework_op_us), 0, 1e4, "a framework's host cost per op in eager mode, us", 0, 0 },
    { "host", "framework_gpu_op_us", PF(framework_gpu_op_us), 0, 1e4,
      "a framework's further host cost per op on a GPU tensor, us", 1, NN_FRAMEWORK_GPU_OP_US },
    { "host", "host_copy_gbps", PF(host_copy_gbps), 0.01, 1e4, "memcpy in host memory, GB/s", 0, 0 },
    /* the framework's step on the CPU (nnlab/framework.h), fitted: optional */
    { "framework", "cpu_step_us", PF(framework_cpu.step_us), 0, 1e6,
      "a framework's fixed cost per step on the CPU, us", 1, NN_FRAMEWORK_CPU_STEP_US },
    { "framework", "cpu_op_ratio", PF(framework_cpu.op_ratio), 0, 1e5,
      "a framework's dispatch of an op on the CPU, in the calibration's op_us", 1, NN_FRAMEWORK_CPU_OP_RATIO },
    { "framework", "cpu_elem_passes", PF(framework_cpu.elem_passes), 0, 100,
      "a framework's elementwise traffic on the CPU, in nnlab's bytes", 1, NN_FRAMEWORK_CPU_ELEM_PASSES },
    { "framework", "cpu_param_passes", PF(framework_cpu.param_passes), 0, 100,
      "a framework's passes over the parameters a step on the CPU", 1, NN_FRAMEWORK_CPU_PARAM_PASSES },
    { "framework", "cpu_work_ratio", PF(framework_cpu.work_ratio), 0, 20,
      "a framework's kernels on the CPU against nnlab's predicted step", 1, NN_FRAMEWORK_CPU_WORK_RATIO },
    { "framework", "cpu_thread_op_ratio", PF(framework_cpu.thread_op_ratio), 0, 1e4,
      "what each thread beyond the first adds to a framework's dispatch of an op on the CPU, in op_us", 1,
      NN_FRAMEWORK_CPU_THREAD_OP_RATIO },
    { "framework", "cpu_thread_work_ratio", PF(framework_cpu.thread_work_ratio), 0, 20,
      "what each thread beyond the first adds to a framework's kernels on the CPU, against nnlab's step", 1,
      NN_FRAMEWORK_CPU_THREAD_WORK_RATIO },
    { "framework", "cpu_arith_ratio", PF(framework_cpu.arith_ratio), 0, 100,
      "a framework's per-element arithmetic on the CPU against nnlab's calibrated ns an element", 1,
      NN_FRAMEWORK_CPU_ARITH_RATIO },
    { "framework", "gpu_step_us", PF(framework_gpu.step_us), 0, 1e6,
      "a framework's fixed host cost per step on a GPU, us", 1, NN_FRAMEWORK_GPU_STEP_US },
    { "framework", "gpu_op_us", PF(framework_gpu.op_us), 0, 1e4,
      "a framework's host cost per op on a GPU beyond the launch, us", 1, NN_FRAMEWORK_GPU_FW_OP_US },
    { "framework", "gpu_conv_us", PF(framework_gpu.conv_us), 0, 1e5,
      "a framework's further host cost per convolution layer on a GPU, us", 1, NN_FRAMEWORK_GPU_CONV_US },
    { "framework", "gpu_device_ratio", PF(framework_gpu.device_ratio), 0, 20,
      "the share of nnlab's device time a framework's GPU step adds", 1, NN_FRAMEWORK_GPU_DEVICE_RATIO },
    /* fitted to the recorded H200 run; optional, 0 (not priced) when absent */
    { "kernels", "conv_forward_us", PF(conv_forward_us), 0, 1e4,
      "a convolution's forward call: the device's fixed time beyond its work, us", 1, 0 },
    { "kernels", "conv_backward_us", PF(conv_backward_us), 0, 1e4,
      "a convolution's backward call: the device's fixed time beyond its work, us", 1, 0 },
    { "kernels", "linear_forward_us", PF(linear_forward_us), 0, 1e4,
      "a linear layer's forward call: the device's fixed time beyond its work, us", 1, 0 },
    { "kernels", "linear_backward_us", PF(linear_backward_us), 0, 1e4,
      "a linear layer's backward call: the device's fixed time beyond its work, us", 1, 0 },
    { "kernels", "other_op_us", PF(other_op_us), 0, 1e4,
      "any other op (own kernels): the device's fixed time beyond its work, us", 1, 0 },
    { "kernels", "conv_forward_gflops", PF(conv_forward_gflops), 0, 1e7,
      "the rate a convolution's forward reaches, GFLOP/s (0: the peak)", 1, 0 },
    { "kernels", "conv_backward_gflops", PF(conv_backward_gflops), 0, 1e7,
      "the rate a convolution's backward reaches, GFLOP/s (0: the peak)", 1, 0 },
    { "kernels", "linear_gflops", PF(linear_gflops), 0, 1e7,
      "the rate a linear layer's products reach, GFLOP/s (0: the peak)", 1, 0 },
    { "kernels", "layer_ns", PF(layer_ns), 0, 1e3,
      "per element of a layer of its own kernels (batch norm, GLU, sparsemax), ns", 1, 0 },
    { "kernels", "pool_ns", PF(pool_ns), 0, 1e3, "per element of a pooling layer, ns", 1, 0 },
    { "kernels", "cudnn_call_us", PF(cudnn_call_us), 0, 1e4,
      "eager: a cuDNN convolution call's host cost beyond one launch, us", 1, 0 },
    { "kernels", "cublas_call_us", PF(cublas_call_us), 0, 1e4,
      "eager: a cuBLAS product's host cost beyond one launch, us", 1, 0 },
    { "kernels", "layer_op_us", PF(layer_op_us), 0, 1e4,
      "a layer of its own kernels (batch norm, GLU): the device's fixed time beyond its work, us", 1, 0 },
    { "kernels", "conv_backward_reduce_us", PF(conv_backward_reduce_us), 0, 1e4,
      "a convolution's backward: its bias gradient's reduction, us x sqrt(its output elements)", 1, 0 },
    { "kernels", "linear_backward_reduce_us", PF(linear_backward_reduce_us), 0, 1e4,
      "a linear layer's backward: its reductions over the batch, us x sqrt(batch)", 1, 0 },
    { "kernels", "layer_reduce_us", PF(layer_reduce_us), 0, 1e4,
      "a layer of its own kernels: its reductions over the batch, us x sqrt(batch)", 1, 0 },
    { "kernels", "conv_backward_slow_flops", PF(conv_backward_slow_flops), 0, 1e15,
      "a convolution's backward call beyond so many FLOPs pays those beyond at the slow rate too", 1, 0 },
    { "kernels", "conv_backward_slow_gflops", PF(conv_backward_slow_gflops), 0, 1e7,
      "that slow rate (cuDNN's deterministic filter gradient at large sizes), GFLOP/s (0: none)", 1, 0 },
};
const size_t nn_n_profile_fields = sizeof nn_profile_fields / sizeof nn_profile_fields[0];

static const char *const sections[] = { "profile", "gpu", "link", "launch", "host", "framework", "kernels" };
#define N_SECTIONS (sizeof sections / sizeof sections[0])
static const char *const text_keys[] = { "profile:name", "profile:description", "profile:measured",
                                         "link:pcie_gen" };
#define N_TEXT_KEYS (sizeof text_keys / sizeof text_keys[0])

/* ---- reading one ------------------------------------------------------------------------ */

static int known_section(const char *s)
{
    for (size_t i = 0; i < N_SECTIONS; i++)
        if (!strcmp(sections[i], s))
            return 1;
    return 0;
}

static int known_key(const char *entry)
{
    for (size_t i = 0; i < N_TEXT_KEYS; i++)
        if (!strcmp(text_keys[i], entry))
            return 1;
    for (size_t i = 0; i < nn_n_profile_fields; i++) {
        char full[64];
        snprintf(full, sizeof full, "%s:%s", nn_profile_fields[i].section, nn_profile_fields[i].key);
        if (!strcmp(full, entry))
            return 1;
    }
    return 0;
}

/* Every section and key known: a typo is an error, not a silent default. */
static int check_entries(const dictionary *d, const char *path, char *err, size_t err_len)
{
    for (ssize_t i = 0; i < d->size; i++) {
        const char *key = d->key[i];
        if (!key)
            continue;
        if (key[0] == ':')
            return nn_errorf(err, err_len, "%s: %s: key outside any section", path, key + 1);
        if (!d->val[i] && !known_section(key))
            return nn_errorf(err, err_len, "%s: [%s]: unknown section (expected [profile], [gpu], [link], "
                             "[launch], [host], [framework] or [kernels])", path, key);
        if (d->val[i] && !known_key(key)) {
            const char *colon = strchr(key, ':');
            return nn_errorf(err, err_len, "%s: [%.*s] %s: unknown key", path, (int)(colon - key), key,
                             colon + 1);
        }
    }
    return 0;
}

static const char *raw(const dictionary *d, const char *section, const char *key)
{
    char full[64];
    snprintf(full, sizeof full, "%s:%s", section, key);
    return iniparser_getstring((dictionary *)d, full, NULL);
}

/* Every figure, strictly parsed and in range. */
static int read_fields(const dictionary *d, const char *path, nn_gpu_profile *p, char *err, size_t err_len)
{
    for (size_t i = 0; i < nn_n_profile_fields; i++) {
        const nn_profile_field *f = &nn_profile_fields[i];
        const char *s = raw(d, f->section, f->key);
        double v;
        if (!s && f->optional) {
            *(double *)((char *)p + f->off) = f->if_missing;
            continue;
        }
        if (!s)
            return nn_errorf(err, err_len, "%s: [%s] %s: missing (%s)", path, f->section, f->key, f->what);
        if (nn_parse_double(s, &v) != 0)
            return nn_errorf(err, err_len, "%s: [%s] %s = %s: not a number", path, f->section, f->key, s);
        if (!(v >= f->lo && v <= f->hi))
            return nn_errorf(err, err_len, "%s: [%s] %s = %s: must be in %g..%g", path, f->section, f->key, s,
                             f->lo, f->hi);
        *(double *)((char *)p + f->off) = v;
    }
    return 0;
}

static int read_texts(const dictionary *d, const char *path, nn_gpu_profile *p, char *err, size_t err_len)
{
    const char *name = raw(d, "profile", "name"), *desc = raw(d, "profile", "description");
    const char *measured = raw(d, "profile", "measured"), *gen = raw(d, "link", "pcie_gen");
    long g;
    if (name && nn_strlcpy(p->name, name, sizeof p->name) >= sizeof p->name)
        return nn_errorf(err, err_len, "%s: [profile] name: too long", path);
    if (name && !name[0])
        return nn_errorf(err, err_len, "%s: [profile] name: must not be empty", path);
    if (desc)
        nn_strlcpy(p->description, desc, sizeof p->description);
    if (measured && strcasecmp(measured, "true") && strcasecmp(measured, "false"))
        return nn_errorf(err, err_len, "%s: [profile] measured = %s: expected true or false", path, measured);
    p->measured = measured && !strcasecmp(measured, "true");
    if (!gen)
        return nn_errorf(err, err_len, "%s: [link] pcie_gen: missing (the PCI Express generation, 1..6)", path);
    if (nn_parse_long(gen, &g) != 0 || g < 1 || g > 6)
        return nn_errorf(err, err_len, "%s: [link] pcie_gen = %s: expected a whole number 1..6", path, gen);
    p->pcie_gen = (int)g;
    return 0;
}

/* "t4" from ".../t4.ini" */
void nn_profile_id_of_path(const char *path, char *out, size_t len)
{
    const char *base = strrchr(path, '/');
    nn_strlcpy(out, base ? base + 1 : path, len);
    size_t n = strlen(out);
    if (n > 4 && !strcmp(out + n - 4, ".ini"))
        out[n - 4] = '\0';
}

/* The file through the presets' reader and caps (src/core/preset_file.h: at
 * most 1 MiB, 256 sections, 4096 keys, counted in one linear pass, a key
 * given twice refused) before iniparser, whose dictionary is quadratic in
 * its entries: a 1 MB profile of 115,000 sections took 8.33 s, a 4.9 MB one
 * over 120 s. */
static int load_capped(const char *path, dictionary **d, char *err, size_t err_len)
{
    return nn_ini_load(path, "GPU profile", d, err, err_len);
}

int nn_profile_load(const char *path, nn_gpu_profile *out, char *err, size_t err_len)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    if (stat(path, &st) != 0)
        return nn_errorf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return nn_errorf(err, err_len, "%s: not a regular file", path);
    dictionary *d = NULL;
    if (load_capped(path, &d, err, err_len) != 0)
        return -1;
    nn_profile_id_of_path(path, out->id, sizeof out->id);
    nn_strlcpy(out->name, out->id, sizeof out->name);
    int rc = check_entries(d, path, err, err_len) || read_fields(d, path, out, err, err_len) ||
             read_texts(d, path, out, err, err_len);
    iniparser_freedict(d);
    return rc ? -1 : 0;
}

/* ---- what a profile stands for ------------------------------------------------------------ */

double nn_profile_framework_gpu_us(const nn_gpu_profile *p)
{
    return p->framework_op_us + p->framework_gpu_op_us;
}

/* A rate a profile gives for a kind of product, as a curve of one point:
 * every call of that kind at that rate (0: none, the peak). */
static void one_rate(nn_rate_curve *c, double gflops)
{
    c->n = gflops > 0;
    c->flops[0] = 1;
    c->gflops[0] = gflops;
}

/* The [kernels] figures: the fixed time of each kind of call, the rates the
 * libraries reach, the per-element costs of layers of their own kernels. */
static void profile_call_costs(const nn_gpu_profile *p, nn_calibration *out)
{
    nn_call_costs *c = &out->calls;
    c->device_us[NN_CALL_CONV_FWD] = p->conv_forward_us;
    c->device_us[NN_CALL_CONV_BWD] = p->conv_backward_us;
    c->device_us[NN_CALL_LINEAR_FWD] = p->linear_forward_us;
    c->device_us[NN_CALL_LINEAR_BWD] = p->linear_backward_us;
    c->device_us[NN_CALL_OTHER] = p->other_op_us;
    c->device_us[NN_CALL_LAYER] = p->layer_op_us;
    c->reduce_us[NN_CALL_CONV_BWD] = p->conv_backward_reduce_us;
    c->reduce_us[NN_CALL_LINEAR_BWD] = p->linear_backward_reduce_us;
    c->reduce_us[NN_CALL_LAYER] = p->layer_reduce_us;
    c->library_host_us[0] = p->cudnn_call_us;
    c->library_host_us[1] = p->cublas_call_us;
    c->layer_ns = p->layer_ns;
    c->conv_bwd_slow_flops = p->conv_backward_slow_flops;
    c->conv_bwd_slow_gflops = p->conv_backward_slow_gflops;
    c->has = 0;
    for (int k = 0; k < NN_CALL_KINDS; k++)
        c->has |= c->device_us[k] > 0;
    one_rate(&out->conv_fwd, p->conv_forward_gflops);
    one_rate(&out->conv_bwd, p->conv_backward_gflops);
    one_rate(&out->linear_fwd, p->linear_gflops);
    one_rate(&out->linear_bwd, p->linear_gflops);
    out->elem_ns[NN_OP_POOL][0] = out->elem_ns[NN_OP_POOL][1] = p->pool_ns;
}

void nn_profile_calibration(const nn_gpu_profile *p, nn_calibration *out)
{
    memset(out, 0, sizeof *out);
    nn_strlcpy(out->device, "gpu", sizeof out->device);
    snprintf(out->machine, sizeof out->machine, "profile %s", p->name);
    snprintf(out->note, sizeof out->note, "predicted for %s", p->name);
    out->gemm_gflops = p->fp32_gflops;   /* every product at the peak: a profile has no curves */
    out->mem_gbps = p->mem_gbps;
    out->op_us = p->launch_us;
    out->matrix_op_us = p->launch_us;    /* no fixed cost beyond the launch */
    out->sync_us = p->sync_us;
    out->upload_us = p->copy_us;
    out->upload_gbps = p->copy_gbps;
    out->download_us = p->download_us;
    out->host_copy_gbps = p->host_copy_gbps;
    out->has_pinned = 1;
    out->pinned_upload_us = p->pinned_copy_us;
    out->pinned_upload_gbps = p->pinned_copy_gbps;
    out->has_graph = 1;
    out->graph_launch_us = p->graph_launch_us;
    out->graph_node_us = p->graph_node_us;
    out->profile = 1;
    profile_call_costs(p, out);
}

int nn_writeup_predict(const nn_preset *p, const nn_gpu_profile *prof, nn_writeup *out)
{
    nn_explanation e[NN_GPU_WAYS];
    memset(out, 0, sizeof *out);
    if (!(p->measured_cpu_s > 0) && !(p->measured_gpu_s > 0))
        return -1;
    /* the experiment's own job, whatever batch and epochs the preset now has */
    out->batch = p->measured_batch > 0 ? p->measured_batch : p->batch;
    out->epochs = p->measured_epochs > 0 ? p->measured_epochs : p->epochs;
    out->steps = nn_preset_steps_per_epoch(p, out->batch) * out->epochs;
    out->cpu_s = p->measured_cpu_s;
    out->gpu_s = p->measured_gpu_s;
    out->cpu_max_s = p->measured_cpu_max_s;
    out->gpu_max_s = p->measured_gpu_max_s;
    if (!prof)
        return 0;
    nn_profile_predict(p, out->batch, prof, e);
    for (int w = 0; w < NN_GPU_WAYS; w++)
        out->way_s[w] = out->steps * e[w].predicted_us * 1e-6;
    return 0;
}

void nn_profile_predict(const nn_preset *p, int batch, const nn_gpu_profile *prof,
                        nn_explanation out[NN_GPU_WAYS])
{
    nn_calibration cal;
    nn_profile_calibration(prof, &cal);
    for (int w = 0; w < NN_GPU_WAYS; w++) {
        nn_explain_options opt;
        nn_gpu_way_options((nn_gpu_way)w, &prof->framework_gpu, &opt);
        nn_explain(p, batch, &cal, &opt, &out[w]);
    }
}

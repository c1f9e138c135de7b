/* src/analysis/model/profile_write.c - a GPU profile written as a file (our own
 * writer, through a temp file, fsync and rename, as presets), and a real
 * GPU's calibration turned into one; see profile.h. */
#include "nnlab/profile.h"
#include "nnlab/device.h"
#include "profile_fields.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "atomic_file.h"
#include "util.h"

typedef struct profile_out {
    const nn_gpu_profile *p;
    const char *origin;          /* the first comment: where the figures came from */
} profile_out;

/* A text stored quoted (INI has no escapes: ' when it holds ") */
static int put_text(FILE *f, const char *key, const char *s)
{
    char q = strchr(s, '"') ? '\'' : '"';
    return fprintf(f, "%s = %c%s%c\n", key, q, s, q) < 0 ? -1 : 0;
}

/* The two figures nnlab cannot measure say so. */
static const char *source_of(const nn_gpu_profile *p, const nn_profile_field *fd)
{
    const char *key = fd->key;
    if (!p->measured)
        return "given";
    if (!strcmp(fd->section, "kernels"))
        return "not measured by nnlab calibrate (fitted to measured steps; 0: not priced)";
    if (!strcmp(key, "framework_op_us") || !strcmp(key, "framework_gpu_op_us"))
        return "an estimate (nnlab runs no framework): the default profile's";
    if (!strncmp(key, "cpu_", 4))
        return "fitted to PyTorch's CPU steps (nnlab(1), WAYS): the default profile's";
    if (!strncmp(key, "gpu_", 4))
        return "fitted to PyTorch's GPU steps on the recorded H200 (nnlab(1), WAYS): the default profile's";
    return "measured by nnlab calibrate";
}

static int fill_profile(FILE *f, const void *ctx)
{
    const profile_out *o = ctx;
    const nn_gpu_profile *p = o->p;
    const char *section = "";
    if (fprintf(f, "; %s\n; The format is described in nnlab(1), GPU PROFILES.\n\n[profile]\n", o->origin) < 0 ||
        put_text(f, "name", p->name) || put_text(f, "description", p->description) ||
        fprintf(f, "measured = %s\n", p->measured ? "true" : "false") < 0)
        return -1;
    for (size_t i = 0; i < nn_n_profile_fields; i++) {
        const nn_profile_field *fd = &nn_profile_fields[i];
        if (strcmp(fd->section, section) != 0) {
            section = fd->section;
            if (fprintf(f, "\n[%s]\n", section) < 0)
                return -1;
            if (!strcmp(section, "link") &&
                fprintf(f, "; an estimate (nnlab cannot read it): the default profile's\npcie_gen = %d\n",
                        p->pcie_gen) < 0)
                return -1;
        }
        if (fprintf(f, "; %s: %s\n%s = %.6g\n", fd->what, source_of(p, fd), fd->key,
                    *(const double *)((const char *)p + fd->off)) < 0)
            return -1;
    }
    return 0;
}

int nn_profile_save(const char *path, const nn_gpu_profile *p, const char *origin, char *err, size_t err_len)
{
    profile_out o = { p, origin && origin[0] ? origin : "a GPU profile of nnlab" };
    if (strchr(p->name, '\n') || strchr(p->description, '\n') ||
        (strchr(p->name, '"') && strchr(p->name, '\'')))
        return nn_errorf(err, err_len, "%s: the name or description cannot be stored", path);
    return nn_write_atomic(path, fill_profile, &o, err, err_len);
}

int nn_profile_from_calibration(const nn_calibration *cal, const char *name, const nn_gpu_profile *estimates,
                                nn_gpu_profile *out, char *err, size_t err_len)
{
    if (!nn_device_kind_of(cal->device).gpu || cal->profile)
        return nn_errorf(err, err_len, "a profile is made from a real GPU's calibration, not %s's",
                         cal->profile ? "a profile" : cal->device);
    if (!cal->has_graph || !cal->has_pinned)
        return nn_errorf(err, err_len, "the calibration of %s has no %s figures: %s", cal->device,
                         !cal->has_graph ? "graph" : "pinned-copy", cal->note[0] ? cal->note : "not measured");
    memset(out, 0, sizeof *out);
    if (nn_strlcpy(out->name, name, sizeof out->name) >= sizeof out->name || !name[0])
        return nn_errorf(err, err_len, "profile name '%.32s': expected 1 to %zu characters", name,
                         sizeof out->name - 1);
    snprintf(out->description, sizeof out->description, "measured: %.200s", cal->machine);
    out->measured = 1;
    out->fp32_gflops = nn_calibration_peak_gflops(cal);
    out->mem_gbps = cal->mem_gbps;
    out->pcie_gen = estimates->pcie_gen;
    out->copy_us = cal->upload_us;
    out->copy_gbps = cal->upload_gbps;
    out->pinned_copy_us = cal->pinned_upload_us;
    out->pinned_copy_gbps = cal->pinned_upload_gbps;
    out->download_us = cal->download_us;
    out->launch_us = cal->op_us;
    out->graph_launch_us = cal->graph_launch_us;
    out->graph_node_us = cal->graph_node_us;
    out->sync_us = cal->sync_us;
    out->framework_op_us = estimates->framework_op_us;
    out->framework_gpu_op_us = estimates->framework_gpu_op_us;
    out->host_copy_gbps = cal->host_copy_gbps;
    out->framework_cpu = estimates->framework_cpu;               /* the framework on the CPU: fitted */
    out->framework_gpu = estimates->framework_gpu;               /* and on a GPU: fitted */
    return 0;
}

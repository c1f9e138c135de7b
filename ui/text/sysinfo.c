/* ui/text/sysinfo.c - CPU use from /proc/stat and GPU state from NVML (dlopen);
 * see sysinfo.h. */
#include "sysinfo.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- /proc/stat --------------------------------------------------------------- */

/* Parses one "cpuN f1 f2 ..." line (p after "cpu"); 0 on success. */
static int parse_cpu_line(const char *p, long *index, ui_cpu_times *t)
{
    unsigned long long f[8] = { 0 };
    char *end;
    errno = 0;
    *index = strtol(p, &end, 10);
    if (end == p || errno || *index < 0)
        return -1;
    p = end;
    int n = 0;
    for (; n < 8; n++) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p < '0' || *p > '9')
            break;
        f[n] = strtoull(p, &end, 10);
        if (errno)
            return -1;
        p = end;
    }
    if (n < 4)                       /* user nice system idle at least (Linux 2.4) */
        return -1;
    /* user nice system idle iowait irq softirq steal; guest is already in user */
    t->busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
    t->total = t->busy + f[3] + f[4];
    return 0;
}

int ui_proc_stat_parse(const char *text, ui_cpu_times *cores, int max)
{
    int count = 0;
    const char *line = text;
    while (line && *line) {
        /* "cpuN": one core; "cpu " is the total line, and other lines are not ours */
        if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
            long idx;
            ui_cpu_times t;
            if (parse_cpu_line(line + 3, &idx, &t) != 0)
                return -1;
            if (idx < max) {
                cores[idx] = t;
                if (idx + 1 > count)
                    count = (int)idx + 1;
            }
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return count > 0 ? count : -1;
}

void ui_cpu_percent(const ui_cpu_times *prev, const ui_cpu_times *cur, int n, double *pct)
{
    for (int i = 0; i < n; i++) {
        unsigned long long dt = cur[i].total - prev[i].total, db = cur[i].busy - prev[i].busy;
        if (cur[i].total < prev[i].total || cur[i].busy < prev[i].busy || dt == 0)
            pct[i] = 0.0;            /* a core that came back online restarts its counters */
        else
            pct[i] = 100.0 * (double)db / (double)dt;
        if (pct[i] > 100.0)
            pct[i] = 100.0;
    }
}

/* Reads /proc/stat into buf (UI_PROC_STAT_BYTES, the sampler's: the cpu
 * lines come first, the rest may be cut) and parses its cores. */
static int read_proc_stat(char *buf, ui_cpu_times *cores, int max, char *why, size_t why_len)
{
    if (!buf) {
        snprintf(why, why_len, "/proc/stat: out of memory");
        return -1;
    }
    FILE *f = fopen("/proc/stat", "r");
    if (!f) {
        snprintf(why, why_len, "/proc/stat: %s", strerror(errno));
        return -1;
    }
    size_t n = fread(buf, 1, UI_PROC_STAT_BYTES - 1, f);
    int failed = ferror(f);
    fclose(f);
    buf[n] = '\0';
    int count = failed ? -1 : ui_proc_stat_parse(buf, cores, max);
    if (count < 0)
        snprintf(why, why_len, "/proc/stat: %s", failed ? "read error" : "no per-core cpu lines");
    return count;
}

/* ---- NVML ------------------------------------------------------------------------- */

/* The few NVML types we use, as nvml.h declares them (the header is not needed
 * to build). */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
typedef struct { unsigned int gpu, memory; } nvml_utilization;
typedef struct { unsigned long long total, free, used; } nvml_memory;
enum { NVML_OK = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

struct ui_nvml {
    void *lib;
    int initialised;             /* nvmlInit succeeded: nvmlShutdown is owed */
    nvml_device dev;
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    nvml_return (*count)(unsigned int *);
    nvml_return (*handle)(unsigned int, nvml_device *);
    const char *(*error_string)(nvml_return);
    nvml_return (*name)(nvml_device, char *, unsigned int);
    nvml_return (*util)(nvml_device, nvml_utilization *);       /* optional */
    nvml_return (*mem)(nvml_device, nvml_memory *);             /* optional */
    nvml_return (*clock)(nvml_device, int, unsigned int *);     /* optional */
};

/* POSIX: a data pointer from dlsym converts to a function pointer this way. */
#define LOOKUP(nv, field, sym) (*(void **)(&(nv)->field) = dlsym((nv)->lib, sym))

/* NVML's words for rc, else its number in buf. */
static const char *nvml_error(const struct ui_nvml *nv, nvml_return rc, char *buf, size_t len)
{
    if (nv->error_string)
        return nv->error_string(rc);
    snprintf(buf, len, "error %d", rc);
    return buf;
}

void ui_nvml_why_not_loaded(const char *dlerror_text, char *why, size_t why_len)
{
    const char *e = dlerror_text;
    if (!e || strstr(e, "cannot open shared object file"))
        snprintf(why, why_len, "no NVIDIA driver");
    else
        snprintf(why, why_len, "%s", e);
}

static int nvml_load(struct ui_nvml *nv, char *why, size_t why_len)
{
    nv->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nv->lib) {
        ui_nvml_why_not_loaded(dlerror(), why, why_len);
        return -1;
    }
    LOOKUP(nv, error_string, "nvmlErrorString");
    LOOKUP(nv, util, "nvmlDeviceGetUtilizationRates");
    LOOKUP(nv, mem, "nvmlDeviceGetMemoryInfo");
    LOOKUP(nv, clock, "nvmlDeviceGetClockInfo");
    if (!LOOKUP(nv, init, "nvmlInit_v2") || !LOOKUP(nv, shutdown, "nvmlShutdown") ||
        !LOOKUP(nv, count, "nvmlDeviceGetCount_v2") ||
        !LOOKUP(nv, handle, "nvmlDeviceGetHandleByIndex_v2") || !LOOKUP(nv, name, "nvmlDeviceGetName")) {
        snprintf(why, why_len, "libnvidia-ml.so.1 lacks a required symbol (driver too old?)");
        return -1;
    }
    char num[32];
    nvml_return rc = nv->init();
    if (rc != NVML_OK) {
        snprintf(why, why_len, "nvmlInit: %s", nvml_error(nv, rc, num, sizeof num));
        return -1;
    }
    nv->initialised = 1;
    unsigned int n = 0;
    rc = nv->count(&n);
    if (rc != NVML_OK || n == 0) {
        snprintf(why, why_len, "NVML: %s", rc != NVML_OK ? nvml_error(nv, rc, num, sizeof num) : "no GPU found");
        return -1;
    }
    rc = nv->handle(0, &nv->dev);
    if (rc != NVML_OK) {
        snprintf(why, why_len, "NVML GPU 0: %s", nvml_error(nv, rc, num, sizeof num));
        return -1;
    }
    return 0;
}

static void nvml_unload(struct ui_nvml *nv)
{
    if (nv->initialised)
        nv->shutdown();
    if (nv->lib)
        dlclose(nv->lib);
    free(nv);
}

static void nvml_sample(struct ui_nvml *nv, ui_gpu_info *g)
{
    nvml_utilization u;
    nvml_memory m;
    unsigned int sm, memclk;
    g->has_util = nv->util && nv->util(nv->dev, &u) == NVML_OK;
    if (g->has_util) {
        g->util_gpu = u.gpu;
        g->util_mem = u.memory;
    }
    g->has_mem = nv->mem && nv->mem(nv->dev, &m) == NVML_OK;
    if (g->has_mem) {
        g->mem_used = m.used;
        g->mem_total = m.total;
    }
    g->has_clocks = nv->clock && nv->clock(nv->dev, NVML_CLOCK_SM, &sm) == NVML_OK &&
                    nv->clock(nv->dev, NVML_CLOCK_MEM, &memclk) == NVML_OK;
    if (g->has_clocks) {
        g->clock_sm = sm;
        g->clock_mem = memclk;
    }
}

/* ---- the sampler --------------------------------------------------------------------- */

void ui_sysinfo_open(ui_sysinfo *s)
{
    memset(s, 0, sizeof *s);
    struct ui_nvml *nv = calloc(1, sizeof *nv);
    if (!nv) {
        snprintf(s->gpu.why, sizeof s->gpu.why, "out of memory");
    } else if (nvml_load(nv, s->gpu.why, sizeof s->gpu.why) != 0) {
        nvml_unload(nv);
    } else {
        s->nvml = nv;
        s->gpu.valid = 1;
        if (nv->name(nv->dev, s->gpu.name, sizeof s->gpu.name) != NVML_OK)
            snprintf(s->gpu.name, sizeof s->gpu.name, "GPU 0");
    }
    s->stat_buf = malloc(UI_PROC_STAT_BYTES);   /* NULL: read_proc_stat says so */
    int n = read_proc_stat(s->stat_buf, s->prev, UI_MAX_CPUS, s->cpu_why, sizeof s->cpu_why);
    s->have_prev = n > 0;
    s->n_cpus = n > 0 ? n : 0;
}

void ui_sysinfo_sample(ui_sysinfo *s)
{
    ui_cpu_times cur[UI_MAX_CPUS];
    int n = read_proc_stat(s->stat_buf, cur, UI_MAX_CPUS, s->cpu_why, sizeof s->cpu_why);
    if (n > 0 && s->have_prev && n == s->n_cpus) {
        ui_cpu_percent(s->prev, cur, n, s->cpu_pct);
        s->has_cpu = 1;
    } else {
        s->has_cpu = 0;              /* first sample, or the core count changed */
    }
    if (n > 0) {
        memcpy(s->prev, cur, (size_t)n * sizeof *cur);
        s->n_cpus = n;
    }
    s->have_prev = n > 0;
    if (s->nvml)
        nvml_sample(s->nvml, &s->gpu);
}

void ui_sysinfo_close(ui_sysinfo *s)
{
    if (s->nvml)
        nvml_unload(s->nvml);
    s->nvml = NULL;
    s->gpu.valid = 0;
    free(s->stat_buf);
    s->stat_buf = NULL;
}

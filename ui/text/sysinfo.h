/* ui/text/sysinfo.h - what the machine is doing while a job runs: CPU use per
 * core from /proc/stat, and the GPU's utilisation, memory and clocks from
 * NVML, loaded with dlopen("libnvidia-ml.so.1") so that the lab starts on a
 * machine without the NVIDIA driver (nvtop's extract_gpuinfo_nvidia habit:
 * symbols looked up one by one, the reason kept for the screen). The
 * sampler fills values and validity bits; the dashboard draws them. No
 * curses here. */
#ifndef NNLAB_UI_SYSINFO_H
#define NNLAB_UI_SYSINFO_H

#include <stddef.h>

#define UI_MAX_CPUS 256
#define UI_PROC_STAT_BYTES 65536     /* what is read of /proc/stat: the cpu lines come first */

typedef struct ui_cpu_times {
    unsigned long long busy, total;  /* jiffies since boot */
} ui_cpu_times;

/* Parses the per-core "cpuN ..." lines of /proc/stat text into cores[N]
 * (N < max). busy counts user, nice, system, irq, softirq and steal; total
 * adds idle and iowait. Returns the number of cores (highest N + 1), or -1
 * when a cpu line is malformed or there is none. */
int ui_proc_stat_parse(const char *text, ui_cpu_times *cores, int max);

/* Percent busy of each core between two samples; NAN-free: 0 when no time
 * passed. */
void ui_cpu_percent(const ui_cpu_times *prev, const ui_cpu_times *cur, int n, double *pct);

typedef struct ui_gpu_info {
    int valid;                   /* NVML answered for GPU 0 */
    char why[256];               /* !valid: the reason ("libnvidia-ml.so.1: cannot open ...") */
    char name[96];
    int has_util, has_mem, has_clocks;
    unsigned util_gpu, util_mem;             /* percent of the last sample period */
    unsigned long long mem_used, mem_total;  /* bytes */
    unsigned clock_sm, clock_mem;            /* MHz */
} ui_gpu_info;

struct ui_nvml;

typedef struct ui_sysinfo {
    int n_cpus;
    int has_cpu;                 /* two samples taken: cpu_pct is valid */
    char cpu_why[128];           /* !has_cpu: the reason, once /proc/stat failed */
    double cpu_pct[UI_MAX_CPUS];
    ui_cpu_times prev[UI_MAX_CPUS];
    int have_prev;
    ui_gpu_info gpu;
    struct ui_nvml *nvml;        /* NULL when NVML could not be loaded */
    char *stat_buf;              /* UI_PROC_STAT_BYTES for /proc/stat, from open to close
                                    (too big for the stack); NULL when out of memory */
} ui_sysinfo;

/* Loads NVML (or keeps why not), takes the buffer /proc/stat is read into
 * and the first sample. ui_sysinfo_close frees both. */
void ui_sysinfo_open(ui_sysinfo *s);
/* Takes a sample: CPU use since the previous one, the GPU's current state. */
void ui_sysinfo_sample(ui_sysinfo *s);
void ui_sysinfo_close(ui_sysinfo *s);
/* The GPU row's reason when libnvidia-ml.so.1 does not load: "no NVIDIA
 * driver" for a library that is not there (a machine without the driver,
 * one row), else dlerror's own text. */
void ui_nvml_why_not_loaded(const char *dlerror_text, char *why, size_t why_len);

/* What NVML's utilisation means, for the screen. */
#define UI_NVML_NOTE "NVML utilisation = share of time a kernel was running, not how busy the SMs were"
/* The same where the line has under 82 columns (a projector's 80x24). */
#define UI_NVML_NOTE_SHORT "NVML util = time a kernel ran, not how busy the SMs were"

#endif

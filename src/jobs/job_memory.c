/* src/jobs/job_memory.c - sizes checked before memory is taken: what the
 * machine has available, and a job's estimate and size check, each its
 * kind's (job_kind.h: train/train_memory.c, jacobian/job_jacobian.c); see
 * engine.h. The CLI, the lab and the engine all call these, so that they
 * give the same answer. */
#include "nnlab/engine.h"
#include "nnlab/device.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend.h"
#include "engine_internal.h"
#include "job_kind.h"
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

int job_memory_address_limited(void)
{
    return rlimit_room() >= 0;
}

double nn_address_room(void)
{
    return rlimit_room();
}

/* Host memory a job may take now: MemAvailable (what can be had without
 * swapping), or the free pages where the kernel does not say, lowered to a
 * cgroup's or ulimit's room; 0 when nothing tells. A job of several
 * processes (ranks) shares MemAvailable and the cgroup, but each has its
 * own ulimit: that one is checked per process (check_address_space). */
static double available_bytes(int processes)
{
    double kb = read_number("/proc/meminfo", "MemAvailable:");
    double avail = kb >= 0 ? kb * 1024.0 : -1;
    if (avail < 0) {
        long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        avail = pages > 0 && size > 0 ? (double)pages * (double)size : 0;
    }
    double limits[2] = { cgroup_room(), processes > 1 ? -1 : rlimit_room() };
    for (int i = 0; i < 2; i++)
        if (limits[i] >= 0 && (avail <= 0 || limits[i] < avail))
            avail = limits[i] > 0 ? limits[i] : 1;   /* 0 would read as "unknown" */
    return avail;
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
    return nn_device_kind_of(name).gpu ? &device_memory : NULL;
}

/* The host threads that may run the backend's ops at once: the open
 * backend's, else the threads asked for, else every online core (the free
 * cores the backend picks, or a Jacobian's lanes, are no more). */
static int library_threads(const nn_job_config *cfg, const nn_backend *b)
{
    if (b && b->host_threads > 0)
        return b->host_threads;
    if (cfg->threads > 0)
        return cfg->threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* What a thread maps of its own before it runs anything: its stack
 * (pthread's default, RLIMIT_STACK's soft limit) and glibc's malloc arena
 * (a thread's first malloc reserves HEAP_MAX_SIZE, 64 MiB on 64-bit
 * systems). Address space, like OpenBLAS's buffer; counted for the threads
 * a backend will start, so only before it is open (then they are mapped
 * already, in what the process maps). */
static double thread_address_bytes(void)
{
    struct rlimit rl;
    double stack = 8.0 * 1024 * 1024;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        stack = (double)rl.rlim_cur;
    return stack + 64.0 * 1024 * 1024;
}

/* The most host threads a job of this process has run with (their
 * mappings stay: glibc keeps its arenas, OpenBLAS its buffers). */
static atomic_int threads_started;

void job_memory_threads_started(int threads)
{
    int seen = atomic_load(&threads_started);
    while (threads > seen && !atomic_compare_exchange_weak(&threads_started, &seen, threads))
        ;
}

/* The address space a job's threads will map for themselves beyond what
 * the process maps already: OpenBLAS's buffer for each, and before the
 * backend opens each one's stack and arena, for the threads beyond those
 * an earlier job started (whose mappings the new ones reuse). */
static double library_bytes(const nn_backend_ops *ops, const nn_backend *b, int threads)
{
    int more = threads - atomic_load(&threads_started);
    if (!ops || more <= 0)
        return 0;
    return (nn_backend_library_bytes(ops) + (b ? 0 : thread_address_bytes())) * more;
}

void job_memory_estimate(const nn_job_config *cfg, const nn_backend_ops *ops, nn_backend *b,
                         nn_memory_estimate *m)
{
    const nn_job_kind_def *kind = job_kind_of(job_kind_run_as(cfg));
    memset(m, 0, sizeof *m);
    m->big_layer = -1;
    if (kind && kind->estimate)
        kind->estimate(cfg, ops, b, m);
    m->available = available_bytes(m->copies);
    m->library_threads = library_threads(cfg, b);
    m->library = library_bytes(ops, b, m->library_threads);
    m->address_room = rlimit_room();
}

void nn_job_memory_estimate(const nn_job_config *cfg, nn_memory_estimate *m)
{
    const char *dev = cfg->device[0] ? cfg->device : cfg->preset.device;
    job_memory_estimate(cfg, ops_for_estimate(dev), NULL, m);
}

/* Under an address-space limit, the job's memory and the libraries' own
 * buffers must fit in the room it leaves: OpenBLAS cannot map its buffer
 * there and retries forever, a thread no signal reaches (a job under
 * ulimit -v hung). */
static int check_address_space(const nn_memory_estimate *m, char *err, size_t err_len)
{
    char need[16], room[16], mem[16], lib[16], blas[16];
    double host = m->copies > 1 ? m->host / m->copies : m->host;   /* each process its own limit */
    if (m->address_room < 0 || m->library <= 0 || host + m->library <= m->address_room)
        return 0;
    nn_format_bytes(host + m->library, need, sizeof need);
    nn_format_bytes(m->address_room, room, sizeof room);
    nn_format_bytes(host, mem, sizeof mem);
    nn_format_bytes(m->library, lib, sizeof lib);
    nn_format_bytes(NN_OPENBLAS_BUFFER_BYTES, blas, sizeof blas);
    return nn_errorf(err, err_len, "address space: needs ~%s (memory %s; up to %d threads' own buffers, stacks "
                     "and arenas %s, OpenBLAS's %s each among them), ulimit -v leaves %s: use fewer --threads or "
                     "raise ulimit -v", need, mem, m->library_threads, lib, blas, room);
}

int nn_job_check_sizes(const nn_job_config *cfg, const nn_memory_estimate *m, const char *size_key,
                       char *err, size_t err_len)
{
    const nn_job_kind_def *kind = job_kind_of(job_kind_run_as(cfg));
    if (!kind || !kind->check_sizes)
        return 0;
    if (kind->check_sizes(cfg, m, size_key, err, err_len) != 0)
        return -1;
    return check_address_space(m, err, err_len);
}


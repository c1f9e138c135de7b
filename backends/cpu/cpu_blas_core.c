/* backends/cpu/cpu_blas_core.c - OpenBLAS's kernels raised to the CPU's level,
 * and its thread pool kept from starting under an address-space limit (the
 * last section).
 *
 * OpenBLAS's DYNAMIC_ARCH builds choose their kernels once, as the library
 * loads, from a table of the CPU models each release knows. A newer CPU than
 * the release falls through: Debian 12's OpenBLAS 0.3.21 took its Prescott
 * (SSE) kernels on the GPU machine's 16-core Xeon (family 6 model 207,
 * AVX-512 with BF16), where sgemm then ran at a quarter of its SkylakeX
 * kernels' rate: mnist-mlp-1000 at batch 1024 on one thread took 337-349 ms
 * a step against 81-85 ms with OPENBLAS_CORETYPE=SkylakeX, and PyTorch's
 * 155 (bench/results/lent-gpu-2026-11-27/blas.txt). Telling the user to set
 * OPENBLAS_CORETYPE (the warning cpu_info.c writes) leaves every user of such
 * a machine at a quarter speed until they read it.
 *
 * So, before main and before any thread of ours, a constructor asks OpenBLAS
 * to choose again with OPENBLAS_CORETYPE naming the best core it has for
 * this CPU's level (gotoblas_dynamic_quit, then gotoblas_dynamic_init: both
 * exported by every x86 DYNAMIC_ARCH build, and the same path OpenBLAS's own
 * start takes, its kernels' parameters set by the new core's init), checks
 * by openblas_get_corename that it took it, and otherwise puts the original
 * back. OpenBLAS's worker threads are idle then (no product has run), and
 * its buffers do not depend on the core. Never when the user set
 * OPENBLAS_CORETYPE (their choice stands; cpu_info.c still warns) or
 * NNLAB_OPENBLAS_KEEP_CORE=1. NNLAB_TEST_OPENBLAS_START=NAME first makes
 * OpenBLAS take NAME, as if it had not known this CPU: the tests' way to run
 * the raise on a machine whose OpenBLAS chose well (tests/blas-core.sh).
 */
#define _GNU_SOURCE
#include "cpu_info.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

extern char *openblas_get_corename(void);

static char raised_from[32];        /* the core OpenBLAS chose, when nnlab chose another */

void nn_cpu_info_read_now(nn_cpu_info *out)
{
    nn_cpu_info_read(out);
    snprintf(out->blas_core_from, sizeof out->blas_core_from, "%s", raised_from);
}

typedef void (*dynamic_fn)(void);

/* OpenBLAS has core name's kernel table (gotoblas_SKYLAKEX...). */
static int blas_has_core(const char *name)
{
    char sym[48] = "gotoblas_";
    size_t n = strlen(sym);
    for (const char *c = name; *c && n + 1 < sizeof sym; c++)
        sym[n++] = (char)toupper((unsigned char)*c);
    sym[n] = '\0';
    return dlsym(RTLD_DEFAULT, sym) != NULL;
}

/* Makes OpenBLAS choose again with OPENBLAS_CORETYPE=name; whether it now
 * runs that core. The variable is unset afterwards (it was unset before). */
static int blas_take_core(const char *name, dynamic_fn quit, dynamic_fn init)
{
    if (!blas_has_core(name) || setenv("OPENBLAS_CORETYPE", name, 1) != 0)
        return 0;
    quit();
    init();
    unsetenv("OPENBLAS_CORETYPE");
    const char *now = openblas_get_corename();
    return now && strcasecmp(now, name) == 0;
}

static int cpu_is_amd(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    return __get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u;   /* "Auth"enticAMD */
#else
    return 0;
#endif
}

/* The cores to try for a CPU of this level, best first. */
static int cores_for(enum nn_isa_level level, const char **out)
{
    int n = 0;
    if (level >= NN_ISA_AVX512) {
        out[n++] = "SkylakeX";
        out[n++] = "Cooperlake";
    }
    if (level >= NN_ISA_AVX2) {
        out[n++] = cpu_is_amd() ? "Zen" : "Haswell";
        out[n++] = cpu_is_amd() ? "Haswell" : "Zen";
    }
    if (level >= NN_ISA_AVX)
        out[n++] = "Sandybridge";
    return n;
}

__attribute__((constructor)) static void blas_core_raise(void)
{
    const char *keep = getenv("NNLAB_OPENBLAS_KEEP_CORE");
    const char *start = getenv("NNLAB_TEST_OPENBLAS_START");
    if (getenv("OPENBLAS_CORETYPE"))
        return;
    dynamic_fn quit = (dynamic_fn)dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
    dynamic_fn init = (dynamic_fn)dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
    const char *first = openblas_get_corename();
    if (!quit || !init || !first)
        return;                         /* not a DYNAMIC_ARCH build: one core, nothing to choose */
    char chosen[32];
    snprintf(chosen, sizeof chosen, "%s", first);
    if (start && start[0] && !blas_take_core(start, quit, init))
        blas_take_core(chosen, quit, init);
    snprintf(chosen, sizeof chosen, "%s", openblas_get_corename());
    if (keep && strcmp(keep, "1") == 0)
        return;
    enum nn_isa_level cpu = nn_cpu_isa_level(nn_cpu_features_now());
    enum nn_isa_level blas = nn_blas_core_level(chosen);
    if (blas == NN_ISA_UNKNOWN || blas >= cpu)
        return;
    const char *cores[5];
    int n = cores_for(cpu, cores);
    for (int i = 0; i < n; i++)
        if (nn_blas_core_level(cores[i]) > blas && blas_take_core(cores[i], quit, init)) {
            snprintf(raised_from, sizeof raised_from, "%s", chosen);
            return;
        }
    blas_take_core(chosen, quit, init);    /* none took: OpenBLAS's own choice back */
}

/* ------------------------------------------------------------------------ */
/* OpenBLAS started on one thread under an address-space limit.
 *
 * A threaded OpenBLAS starts its pool as the library loads: one worker per
 * core beyond the first, each first mapping its 128 MiB buffer and retrying
 * for ever when the mapping fails. Under `ulimit -v` of about 55-180 MB it
 * never fits, so the worker spins (most of a core) and exit() waits for it
 * in OpenBLAS's shutdown: even `nnlab --version` printed its line and then
 * hung. Lower (45-50 MB) the worker's stack does not fit, and OpenBLAS
 * raises SIGINT itself as it loads. nnlab never uses that pool
 * (cpu_threads.c sets OpenBLAS to one thread and runs its own), so it is
 * only a cost.
 *
 * A spinning worker cannot be stopped, and OpenBLAS reads its thread count
 * (OPENBLAS_NUM_THREADS) as it loads, before any constructor of ours. Only
 * the executable's .preinit_array runs earlier, before every library's
 * start, with libc not yet started (environ is not set; the environment is
 * the envp handed in). So there, when the address space is limited, the
 * program runs itself again (execve) with OPENBLAS_NUM_THREADS=1: no pool,
 * no buffer mapped before a product needs one (a user's other value is
 * overridden too: nnlab sets OpenBLAS to one thread anyway).
 * NNLAB_OPENBLAS_ONE marks the second run, so there is never a third, and
 * holds the user's value, which a constructor of the second run puts back
 * (OpenBLAS has read it by then), so what nnlab starts sees the
 * environment it was given. Without a limit, or without /proc, nothing
 * changes.
 */

#define ONE_THREAD "OPENBLAS_NUM_THREADS=1"
#define MARK "NNLAB_OPENBLAS_ONE"           /* "-": the user's was unset; "=N": it was N */

static int address_space_limited(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

/* envp's entry NAME=..., or -1 (getenv cannot be asked before libc starts). */
static long env_find(char *const *envp, const char *name)
{
    size_t len = strlen(name);
    for (long i = 0; envp[i]; i++)
        if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=')
            return i;
    return -1;
}

/* The environment of the second run, NULL-ended in a new array: envp with
 * OPENBLAS_NUM_THREADS=1 in place of the user's value, and the mark saying
 * what that was. The mark's string is on the heap, as the array is: both
 * live until execve. */
static char **one_thread_env(char *const *envp, long user)
{
    size_t n = 0;
    while (envp[n])
        n++;
    const char *was = user >= 0 ? envp[user] + strlen("OPENBLAS_NUM_THREADS") : "-";
    size_t mark_len = strlen(MARK "=") + strlen(was) + 1;
    char **env = malloc((n + 3) * sizeof *env);
    char *mark = malloc(mark_len);
    if (!env || !mark) {
        free(env);
        free(mark);
        return NULL;
    }
    memcpy(mark, MARK "=", strlen(MARK "="));          /* no stdio before libc starts */
    memcpy(mark + strlen(MARK "="), was, strlen(was) + 1);
    memcpy(env, envp, n * sizeof *env);
    if (user < 0)
        env[n++] = ONE_THREAD;
    else
        env[user] = ONE_THREAD;
    env[n] = mark;
    env[n + 1] = NULL;
    return env;
}

static void blas_start_one_thread(int argc, char **argv, char **envp)
{
    (void)argc;
    if (!argv || !argv[0] || !envp || env_find(envp, MARK) >= 0 || !address_space_limited())
        return;
    long user = env_find(envp, "OPENBLAS_NUM_THREADS");
    if (user >= 0 && strcmp(envp[user], ONE_THREAD) == 0)
        return;                         /* one thread already: no pool */
    char **env = one_thread_env(envp, user);
    if (!env)
        return;
    execve("/proc/self/exe", argv, env);
    /* no /proc to run again from: go on as we are (the two strings stay) */
}

__attribute__((section(".preinit_array"), used)) static void (*const blas_start_hook)(int, char **, char **) =
    blas_start_one_thread;

/* The second run: the environment as the user gave it. */
__attribute__((constructor)) static void blas_start_restore(void)
{
    const char *mark = getenv(MARK);
    if (!mark)
        return;
    if (mark[0] == '=')
        setenv("OPENBLAS_NUM_THREADS", mark + 1, 1);
    else
        unsetenv("OPENBLAS_NUM_THREADS");
    unsetenv(MARK);
}

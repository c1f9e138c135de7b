/* backends/cpu/cpu_features.c - what the machine lets the fast CPU backend run:
 * whether our own AVX2 kernels may, and whether their AVX-512 variants
 * (cpu_avx512.h) may (cpu_internal.h). Apart from the backend's table
 * (cpu_blas.c) because the kernels ask it: cpu_conv_direct.c and
 * cpu_linear_narrow.c, which the table reaches, call it. */
#include "cpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_info.h"

/* Whether the environment variable is set to something other than "0". */
static int switched_off(const char *off)
{
    const char *v = getenv(off);
    return v && *v && strcmp(v, "0") != 0;
}

static int cpu_has_avx2_fma(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

int nn_cpu_own_kernels(const char *off)
{
    return cpu_has_avx2_fma() && !switched_off(off);
}

int nn_cpu_avx512_kernels(void)
{
    /* AVX512F from cpuid AND the opmask and ZMM state saved by the OS (XCR0
     * bits 5-7): cpu_info.c's reading, the one `nnlab devices` prints, so
     * that the dispatch and the report cannot disagree (GCC 12's
     * __builtin_cpu_supports("avx512f") checks XCR0 as well, but that is
     * the compiler's library, not a rule of ours). Atomic: threads may race
     * to compute it, and all compute the same. */
    static _Atomic int enabled = -1;
    if (enabled < 0)
        enabled = nn_cpu_own_kernels("NNLAB_NO_AVX512") &&
                  (nn_cpu_features_now() & NN_CPU_AVX512F) != 0;
    return enabled;
}

const char *nn_cpu_kernels_name(void)
{
    if (nn_cpu_avx512_kernels())
        return "avx512";
    return cpu_has_avx2_fma() ? "avx2" : "scalar";
}

/* Here, not in cpu_info.c, so that the calls go one way: this file asks
 * cpu_info.c for the features, the line names the path this file chose. */
int nn_cpu_describe(char *buf, size_t len)
{
    nn_cpu_info ci;
    char warn[NN_CPU_WARN_LEN];
    nn_cpu_info_read_now(&ci);
    nn_cpu_info_line(&ci, buf, len);
    size_t used = strlen(buf);
    snprintf(buf + used, len > used ? len - used : 0, "; our kernels: %s", nn_cpu_kernels_name());
    if (nn_cpu_blas_below_cpu(&ci, warn, sizeof warn)) {
        size_t n = strlen(buf);
        snprintf(buf + n, len > n ? len - n : 0, "; warning: %s", warn);
    }
    return 0;
}

/* backends/cpu/cpu_features.c - what the machine lets the fast CPU backend run:
 * whether our own AVX2 kernels may, and whether their AVX-512 variants
 * (cpu_avx512.h) may (cpu_internal.h). Apart from the backend's table
 * (cpu_blas.c) because the kernels ask it: cpu_conv_direct.c and
 * cpu_linear_narrow.c, which the table reaches, call it. */
#include "cpu_internal.h"

#include <pthread.h>
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

/* The switches (cpu_internal.h): each one's variable, and whether it is
 * off on the AVX-512 path (the AVX-512 twins replace those forms). */
static const struct {
    const char *off;
    int not_with_avx512;
} switch_def[NN_CPU_SW_COUNT] = {
    [NN_CPU_SW_AVX512] = {"NNLAB_NO_AVX512", 0},
    [NN_CPU_SW_DIRECT_CONV] = {"NNLAB_NO_DIRECT_CONV", 0},
    [NN_CPU_SW_DX_SCATTER] = {"NNLAB_NO_DX_SCATTER", 1},
    [NN_CPU_SW_CONV_CHAN] = {"NNLAB_NO_CONV_CHAN", 1},
    [NN_CPU_SW_NARROW_DX] = {"NNLAB_NO_NARROW_DX", 0},
    [NN_CPU_SW_SMALL_DW] = {"NNLAB_NO_SMALL_DW", 0},
    [NN_CPU_SW_POOL_SIMD] = {"NNLAB_NO_POOL_SIMD", 0},
    [NN_CPU_SW_OWN_ADAM] = {"NNLAB_NO_OWN_ADAM", 0},
    [NN_CPU_SW_FUSED_ADAM] = {"NNLAB_NO_FUSED_ADAM", 0},
    [NN_CPU_SW_DROPOUT_SIMD] = {"NNLAB_NO_DROPOUT_SIMD", 0},
};

/* The switches as read, once (switches_read, under switches_once): the
 * backend's threads ask them while kernels run, and the answer must not
 * change under a job. */
static int switch_is_on[NN_CPU_SW_COUNT];
static pthread_once_t switches_once = PTHREAD_ONCE_INIT;

static void switches_read(void)
{
    int own = cpu_has_avx2_fma();
    /* AVX512F from cpuid AND the opmask and ZMM state saved by the OS (XCR0
     * bits 5-7): cpu_info.c's reading, the one `nnlab devices` prints, so
     * that the dispatch and the report cannot disagree (GCC 12's
     * __builtin_cpu_supports("avx512f") checks XCR0 as well, but that is
     * the compiler's library, not a rule of ours). */
    int avx512 = own && !switched_off(switch_def[NN_CPU_SW_AVX512].off) &&
                 (nn_cpu_features_now() & NN_CPU_AVX512F) != 0;
    for (int s = 0; s < NN_CPU_SW_COUNT; s++)
        switch_is_on[s] = own && !switched_off(switch_def[s].off) && !(switch_def[s].not_with_avx512 && avx512);
    switch_is_on[NN_CPU_SW_AVX512] = avx512;
}

int nn_cpu_switch_on(enum nn_cpu_switch s)
{
    if (pthread_once(&switches_once, switches_read) != 0)
        abort();                     /* only fails on a misused once control */
    return (unsigned)s < NN_CPU_SW_COUNT && switch_is_on[s];
}

int nn_cpu_avx512_kernels(void)
{
    return nn_cpu_switch_on(NN_CPU_SW_AVX512);
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

/* backends/cpu_features.c - what the machine lets the fast CPU backend run:
 * whether our own AVX2 kernels may (cpu_internal.h). Apart from the backend's
 * table (cpu_blas.c) because the kernels ask it: cpu_conv_direct.c and
 * cpu_linear_narrow.c, which the table reaches, call it. */
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

int nn_cpu_own_kernels(const char *off)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    const char *v = getenv(off);
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !(v && *v && strcmp(v, "0") != 0);
#else
    (void)off;
    return 0;
#endif
}

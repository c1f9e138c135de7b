/* tests/avx512_emu.h - the AVX-512 kernels (backends/cpu/cpu_avx512_kernels.inc)
 * as static functions of the file that includes this, on SIMDe's portable
 * _mm512_* intrinsics: tests/test_avx512_emu.c (the baseline x86-64 build)
 * and tests/test_avx512_emu_fma.c (built with -mavx2 -mfma, where SIMDe's
 * 512-bit operations are pairs of real 256-bit ones and its FMA is fused). */
#ifndef NNLAB_TESTS_AVX512_EMU_H
#define NNLAB_TESTS_AVX512_EMU_H

#include <stddef.h>
#include <stdint.h>

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

typedef simde__mmask16 __mmask16;      /* SIMDe 0.7.4 has no alias for the mask type */

/* SIMDe 0.7.4 lacks the masked loads and stores: lane by lane, reading and
 * writing only the lanes the mask names, as the instructions do. */
#ifndef _mm512_maskz_loadu_ps
static simde__m512 emu_maskz_loadu_ps(simde__mmask16 k, const void *p)
{
    float lanes[16] = { 0 };
    const float *f = p;
    for (int i = 0; i < 16; i++)
        if ((k >> i) & 1)
            lanes[i] = f[i];
    return simde_mm512_loadu_ps(lanes);
}
#define _mm512_maskz_loadu_ps(k, p) emu_maskz_loadu_ps(k, p)
#endif
#ifndef _mm512_mask_storeu_ps
static void emu_mask_storeu_ps(void *p, simde__mmask16 k, simde__m512 a)
{
    float lanes[16], *f = p;
    simde_mm512_storeu_ps(lanes, a);
    for (int i = 0; i < 16; i++)
        if ((k >> i) & 1)
            f[i] = lanes[i];
}
#define _mm512_mask_storeu_ps(p, k, a) emu_mask_storeu_ps(p, k, a)
#endif

/* The kernels as this file's own static functions (cpu_avx512.h's
 * prototypes are for the real ones, in the library). */
#define NN_AVX512_EMU
#include "cpu/cpu_avx512.h"
#define AVX512_FN static __attribute__((unused))   /* each includer uses some */
#define AVX512_KERNEL static inline __attribute__((always_inline))   /* as the real build: constants propagate */
#define AVX512_IN_REGISTER(v) ((void)0)   /* SIMDe's vectors are not registers */
#include "cpu/cpu_avx512_kernels.inc"

#endif

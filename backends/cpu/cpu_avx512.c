/* backends/cpu/cpu_avx512.c - the AVX-512 kernels of the fast CPU backend
 * (cpu_avx512.h), compiled for AVX-512F: their bodies are in
 * cpu_avx512_kernels.inc, which tests/test_avx512_emu.c compiles again
 * against SIMDe. Called only when nn_cpu_avx512_kernels() says the CPU and
 * the OS run them (cpu_features.c).
 *
 * No FMA contraction: the library is compiled in ISO C mode
 * (-ffp-contract=off), so Adam's and SGD's separate multiplies and adds stay
 * separate, as cpu-ref's, although the target has FMA. In GNU C mode GCC
 * fuses them (checked with objdump: 4 FMAs in each of the two loops), and
 * the optimisers would no longer give cpu-ref's bits: hence the guard. */
#include "cpu_avx512.h"

#if defined(__GNUC__) && !defined(__clang__) && !defined(__STRICT_ANSI__)
#error "cpu_avx512.c needs ISO C mode (-std=c11): GCC would fuse Adam's and SGD's multiplies and adds"
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#define AVX512_TARGET "avx512f,avx2,fma"
#define AVX512_FN __attribute__((target(AVX512_TARGET)))
#define AVX512_KERNEL static inline __attribute__((always_inline, target(AVX512_TARGET)))
#define AVX512_IN_REGISTER(v) __asm__("" : "+v"(v))

#include "cpu_avx512_kernels.inc"

#endif

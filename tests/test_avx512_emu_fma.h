/* tests/test_avx512_emu_fma.h - the AVX-512 kernels that claim the AVX2
 * kernels' bits, emulated with real FMAs (tests/test_avx512_emu_fma.c). */
#ifndef NNLAB_TESTS_AVX512_EMU_FMA_H
#define NNLAB_TESTS_AVX512_EMU_FMA_H

#include <stddef.h>

void emu_fma_small_dw_rows(int n, int in, int out, const float *dy, const float *x, float *dw,
                           int lo, int hi);
void emu_fma_small_dx_cols(int n, int in, int out, const float *dy, const float *w, float *dx,
                           int lo, int hi);
void emu_fma_narrow_dx(const float *dy, int out, const float *w, float *dx, int in, size_t lo,
                       size_t hi);
void emu_fma_conv_taps(int rows, size_t kr, const float *w, const int *offs, const float *in,
                       float *out, size_t ld_out, size_t q0, size_t q1);

#endif

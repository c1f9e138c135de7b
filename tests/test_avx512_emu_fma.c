/* tests/test_avx512_emu_fma.c - the AVX-512 kernels on SIMDe again, this file
 * alone compiled with -mavx2 -mfma (Makefile.am's libavx512emufma): SIMDe's
 * 512-bit operations then run as pairs of real 256-bit ones and its
 * _mm512_fmadd_ps is a fused multiply-add, as the silicon's. Through these
 * entry points tests/test_avx512_emu.c holds the kernels that claim the AVX2
 * kernels' bits (one FMA chain per output, in the same order) to those bits;
 * it calls them only on a CPU with AVX2 and FMA. */
#include "avx512_emu.h"
#include "test_avx512_emu_fma.h"

void emu_fma_small_dw_rows(int n, int in, int out, const float *dy, const float *x, float *dw,
                           int lo, int hi)
{
    nn_avx512_small_dw_rows(n, in, out, dy, x, dw, lo, hi);
}

void emu_fma_small_dx_cols(int n, int in, int out, const float *dy, const float *w, float *dx,
                           int lo, int hi)
{
    nn_avx512_small_dx_cols(n, in, out, dy, w, dx, lo, hi);
}

void emu_fma_narrow_dx(const float *dy, int out, const float *w, float *dx, int in, size_t lo,
                       size_t hi)
{
    nn_avx512_narrow_dx(dy, out, w, dx, in, lo, hi);
}

void emu_fma_conv_taps(int rows, size_t kr, const float *w, const int *offs, const float *in,
                       float *out, size_t ld_out, size_t q0, size_t q1)
{
    nn_avx512_conv_taps(rows, kr, w, offs, in, out, ld_out, q0, q1);
}

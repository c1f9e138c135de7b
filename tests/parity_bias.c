/* tests/parity_bias.c - the bias gradients at awkward sizes, against cpu-ref:
 * one channel, one sample, a million values in one channel (the GPU cuts it
 * into slices), odd widths, more channels than a block has threads. The
 * GPU's are its own reductions (backends/cuda/cuda_reduce.cu); each case
 * runs the whole convolution or linear backward, whose dbias the suite
 * compares with the reduction tolerance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "parity_suite.h"

void test_bias_grad_sizes(void **state)
{
    parity_fixture *f = *state;
    const nn_conv_geom conv[] = {
        conv_geom(1, 1, 1, 1, 1, 1, 1, 0),       /* one value */
        conv_geom(1, 1, 1000, 1000, 1, 1, 1, 0), /* 10^6 values in one channel, one sample */
        conv_geom(1, 2, 7, 13, 3, 3, 1, 0),      /* one sample, odd widths */
        conv_geom(9, 1, 5, 3, 1, 1, 1, 0),       /* one channel, 9 samples of 15 */
        conv_geom(3, 2, 31, 33, 5, 3, 1, 1),     /* odd planes, 5 channels */
        conv_geom(2, 1, 3, 3, 300, 1, 1, 0),     /* 300 channels of 9 values each */
        conv_geom(64, 3, 32, 32, 6, 5, 1, 0),    /* LeNet's first at batch 64: sliced */
    };
    for (size_t k = 0; k < sizeof conv / sizeof conv[0]; k++)
        parity_conv_case(f, 0, case_seed(f->seed, 40, (int)k), &conv[k], 1, k % 2 == 0);
    static const int linear[][3] = {                 /* n, in, out */
        { 1, 1, 1 }, { 1000000, 1, 1 }, { 1, 3, 7 }, { 33, 5, 31 }, { 4097, 2, 65 },
    };
    for (size_t k = 0; k < sizeof linear / sizeof linear[0]; k++)
        parity_linear_case(f, 0, case_seed(f->seed, 41, (int)k), linear[k][0], linear[k][1],
                           linear[k][2], 1, 1);
}

/* tests/test_emu.h - what test_emu's files share (tests/test_emu.cc). */
#ifndef NNLAB_TESTS_TEST_EMU_H
#define NNLAB_TESTS_TEST_EMU_H

#include <stddef.h>

/* n zeroed floats of emulated device memory (cudaFree them). */
float *device_floats(size_t n);
/* A non-blocking stream. */
cudaStream_t new_stream(void);

/* tests/test_emu_dnn.cc: the cuDNN stand-in */
void test_conv_forward(void **state);
void test_conv_algorithms(void **state);
void test_conv_find(void **state);

#endif

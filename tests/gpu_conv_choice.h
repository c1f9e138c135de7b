/* tests/gpu_conv_choice.h - test_gpu's cases of the convolution algorithm
 * choice (tests/gpu_conv_choice.c). */
#ifndef NNLAB_TESTS_GPU_CONV_CHOICE_H
#define NNLAB_TESTS_GPU_CONV_CHOICE_H

void test_conv_choice_timed_and_cached(void **state);
void test_conv_choice_deterministic(void **state);
void test_conv_choice_other_key(void **state);

#define GPU_CONV_CHOICE_TESTS                                                           \
    cmocka_unit_test(test_conv_choice_timed_and_cached),                                \
    cmocka_unit_test(test_conv_choice_deterministic),                                   \
    cmocka_unit_test(test_conv_choice_other_key)

#endif

/* tests/test_cpu_info.c - what the CPU backend says it runs on: the FMA
 * peak's table, the instruction-set levels of the CPU and of OpenBLAS's
 * kernels, the warnings and their remedies (on made-up machines, so that
 * every branch runs whatever this machine is), and the reading on this
 * machine (agreeing with the compiler's own cpuid checks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu/cpu_info.h"

static const unsigned avx2 = NN_CPU_AVX | NN_CPU_AVX2 | NN_CPU_FMA;
static const unsigned avx512 = NN_CPU_AVX | NN_CPU_AVX2 | NN_CPU_FMA | NN_CPU_AVX512F |
                               NN_CPU_AVX512BW | NN_CPU_AVX512VL | NN_CPU_AVX512DQ;

static void test_flops_per_cycle(void **state)
{
    (void)state;
    assert_int_equal(nn_cpu_flops_per_cycle("AuthenticAMD", 0x17, 0x01, avx2), 16);   /* Zen */
    assert_int_equal(nn_cpu_flops_per_cycle("AuthenticAMD", 0x17, 0x31, avx2), 32);   /* Zen 2 */
    assert_int_equal(nn_cpu_flops_per_cycle("AuthenticAMD", 0x19, 0x11, avx512), 32); /* Zen 4 */
    assert_int_equal(nn_cpu_flops_per_cycle("AuthenticAMD", 0x1a, 0x02, avx512), 64); /* Zen 5 */
    assert_int_equal(nn_cpu_flops_per_cycle("GenuineIntel", 6, 0x8f, avx512), 64);    /* SPR */
    assert_int_equal(nn_cpu_flops_per_cycle("GenuineIntel", 6, 0x3f, avx2), 32);      /* Haswell */
    assert_int_equal(nn_cpu_flops_per_cycle("GenuineIntel", 6, 0x2a, NN_CPU_AVX), 16);
    assert_int_equal(nn_cpu_flops_per_cycle("", 0, 0, 0), 8);
}

static void test_levels(void **state)
{
    (void)state;
    assert_int_equal(nn_cpu_isa_level(avx512), NN_ISA_AVX512);
    assert_int_equal(nn_cpu_isa_level(avx512 & ~NN_CPU_AVX512BW), NN_ISA_AVX2);
    assert_int_equal(nn_cpu_isa_level(avx2), NN_ISA_AVX2);
    assert_int_equal(nn_cpu_isa_level(NN_CPU_AVX), NN_ISA_AVX);
    assert_int_equal(nn_cpu_isa_level(0), NN_ISA_SSE);
    assert_int_equal(nn_blas_core_level("Cooperlake"), NN_ISA_AVX512);
    assert_int_equal(nn_blas_core_level("skylakex"), NN_ISA_AVX512);
    assert_int_equal(nn_blas_core_level("Zen"), NN_ISA_AVX2);
    assert_int_equal(nn_blas_core_level("Haswell"), NN_ISA_AVX2);
    assert_int_equal(nn_blas_core_level("Sandybridge"), NN_ISA_AVX);
    assert_int_equal(nn_blas_core_level("Prescott"), NN_ISA_SSE);
    assert_int_equal(nn_blas_core_level("NEOVERSEN1"), NN_ISA_UNKNOWN);
}

static void test_features_text(void **state)
{
    (void)state;
    char buf[160];
    assert_string_equal(nn_cpu_features_text(avx2, buf, sizeof buf), "AVX AVX2 FMA");
    assert_string_equal(nn_cpu_features_text(avx512 | NN_CPU_AVX512_VNNI | NN_CPU_AVX512_BF16 |
                                                 NN_CPU_AMX_TILE | NN_CPU_AMX_INT8,
                                             buf, sizeof buf),
                        "AVX AVX2 FMA AVX-512(F BW VL DQ VNNI BF16) AMX(TILE INT8)");
    assert_string_equal(nn_cpu_features_text(0, buf, sizeof buf), "SSE only");
    char tiny[8];
    nn_cpu_features_text(avx512, tiny, sizeof tiny);          /* cut, never overrun */
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

static nn_cpu_info machine(unsigned features, const char *core, const char *env)
{
    nn_cpu_info ci;
    memset(&ci, 0, sizeof ci);
    strcpy(ci.model, "Test CPU");
    strcpy(ci.vendor, "AuthenticAMD");
    ci.family = 0x19;
    ci.model_number = 0x11;
    ci.features = features;
    ci.clock_ghz = 3.0;
    ci.flops_per_cycle = 32;
    ci.peak_gflops_core = 96;
    strcpy(ci.blas_version, "0.3.21");
    strcpy(ci.blas_core, core);
    strcpy(ci.blas_coretype_env, env);
    return ci;
}

static void test_blas_below_cpu(void **state)
{
    (void)state;
    char why[NN_CPU_WARN_LEN];
    nn_cpu_info ci = machine(avx512, "Haswell", "");
    assert_int_equal(nn_cpu_blas_below_cpu(&ci, why, sizeof why), 1);
    assert_non_null(strstr(why, "Haswell kernels (AVX2) on a CPU with AVX-512"));
    assert_non_null(strstr(why, "install an OpenBLAS"));
    ci = machine(avx512, "Zen", "Zen");
    assert_int_equal(nn_cpu_blas_below_cpu(&ci, why, sizeof why), 1);
    assert_non_null(strstr(why, "OPENBLAS_CORETYPE is set to Zen"));
    ci = machine(avx512, "Cooperlake", "");
    assert_int_equal(nn_cpu_blas_below_cpu(&ci, why, sizeof why), 0);
    assert_string_equal(why, "");
    ci = machine(avx2, "Zen", "");
    assert_int_equal(nn_cpu_blas_below_cpu(&ci, why, sizeof why), 0);
    ci = machine(avx2, "SomethingNew", "");
    assert_int_equal(nn_cpu_blas_below_cpu(&ci, why, sizeof why), 0);   /* unknown: no claim */
}

static void test_sgemm_below_peak(void **state)
{
    (void)state;
    char why[NN_CPU_WARN_LEN];
    nn_cpu_info ci = machine(avx2, "Zen", "");
    assert_int_equal(nn_cpu_sgemm_below_peak(&ci, 40.0, why, sizeof why), 1);
    assert_non_null(strstr(why, "40.0 GFLOP/s, 42% of its estimated FMA peak (96)"));
    assert_int_equal(nn_cpu_sgemm_below_peak(&ci, 48.0, why, sizeof why), 0);
    ci.peak_gflops_core = 0;
    assert_int_equal(nn_cpu_sgemm_below_peak(&ci, 1.0, why, sizeof why), 0);
    /* A measured peak, where there is one, is what the rate is set against. */
    ci.peak_gflops_core = 32;
    ci.peak_gflops_core_measured = 100;
    assert_int_equal(nn_cpu_sgemm_below_peak(&ci, 40.0, why, sizeof why), 1);
    assert_non_null(strstr(why, "40.0 GFLOP/s, 40% of its measured FMA peak (100)"));
    assert_int_equal(nn_cpu_sgemm_below_peak(&ci, 60.0, why, sizeof why), 0);
}

/* The FMA loop: a rate where the CPU has FMA (0 without), the same figure
 * on a second call (measured once a process). Not its size: that is the
 * machine's. */
static void test_fma_peak_measured(void **state)
{
    (void)state;
    double first = nn_cpu_fma_peak_measured();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        assert_true(first > 0);
    else
        assert_true(first == 0);
#endif
    assert_true(first >= 0);
    assert_true(nn_cpu_fma_peak_measured() == first);
    /* the widest: never below the AVX2 loop, the AVX2 loop's figure itself
     * on a CPU without AVX-512, and also measured once */
    double widest = nn_cpu_fma_peak_widest();
    assert_true(widest >= first);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (!__builtin_cpu_supports("avx512f"))
        assert_true(widest == first);
#endif
    assert_true(nn_cpu_fma_peak_widest() == widest);
}

/* This machine: the reading agrees with the compiler's cpuid checks, names
 * OpenBLAS's kernels, and the describe line holds the line of the same
 * reading (nn_cpu_info_read_now: OpenBLAS's own choice included where
 * nnlab raised it, as on a Xeon its release does not know). */
static void test_this_machine(void **state)
{
    (void)state;
    nn_cpu_info ci;
    nn_cpu_info_read_now(&ci);
    assert_true(ci.model[0] != '\0');
    assert_true(ci.blas_core[0] != '\0');
    assert_true(ci.blas_version[0] != '\0');
    assert_true(ci.flops_per_cycle >= 8);
#if defined(__x86_64__)
    __builtin_cpu_init();
    assert_int_equal(!!(ci.features & NN_CPU_AVX2), !!__builtin_cpu_supports("avx2"));
    assert_int_equal(!!(ci.features & NN_CPU_FMA), !!__builtin_cpu_supports("fma"));
    assert_int_equal(!!(ci.features & NN_CPU_AVX512F), !!__builtin_cpu_supports("avx512f"));
    assert_int_equal(!!(ci.features & NN_CPU_AVX512BW), !!__builtin_cpu_supports("avx512bw"));
#endif
    char line[512];
    nn_cpu_info_line(&ci, line, sizeof line);
    assert_non_null(strstr(line, ci.blas_core));
    assert_non_null(strstr(line, "OpenBLAS"));
    char desc[512];
    assert_int_equal(nn_cpu_describe(desc, sizeof desc), 0);
    assert_non_null(strstr(desc, line));
    print_message("# %s\n", desc);
}

/* The kernels' path follows the same reading: AVX-512 only with AVX512F
 * (OS state included) and NNLAB_NO_AVX512 unset or "0"; AVX2 with AVX2 and
 * FMA; else none of ours. The describe line names it. */
static void test_kernels_path(void **state)
{
    (void)state;
    nn_cpu_info ci;
    nn_cpu_info_read(&ci);
    assert_int_equal(nn_cpu_features_now(), ci.features);
    const char *off = getenv("NNLAB_NO_AVX512");
    int forced_off = off && *off && strcmp(off, "0") != 0;
    const char *want = "scalar";
    if ((ci.features & NN_CPU_AVX2) && (ci.features & NN_CPU_FMA))
        want = (ci.features & NN_CPU_AVX512F) && !forced_off ? "avx512" : "avx2";
    assert_string_equal(nn_cpu_kernels_name(), want);
    char desc[512], named[32];
    assert_int_equal(nn_cpu_describe(desc, sizeof desc), 0);
    snprintf(named, sizeof named, "; our kernels: %s", want);
    assert_non_null(strstr(desc, named));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flops_per_cycle), cmocka_unit_test(test_levels),
        cmocka_unit_test(test_features_text),   cmocka_unit_test(test_blas_below_cpu),
        cmocka_unit_test(test_sgemm_below_peak), cmocka_unit_test(test_this_machine),
        cmocka_unit_test(test_fma_peak_measured),
        cmocka_unit_test(test_kernels_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

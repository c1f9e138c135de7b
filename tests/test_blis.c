/* tests/test_blis.c - OpenBLAS or BLIS per product (backends/cpu/cpu_blis.h):
 * the rule on made-up rates (the margin, ties, a rate or the library
 * missing), the table of choices, the shapes a layer's products are known
 * by, and, where libblis.so.4 is installed (else those tests are skipped),
 * BLIS's products against plain loops, its thread count set by the
 * backend, and the backend's products running on the library chosen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend.h"
#include "cpu/cpu_blis.h"

static void test_choose(void **state)
{
    (void)state;
    assert_int_equal(nn_blas_choose(100, 106, 1), NN_BLAS_BLIS);       /* 6% ahead */
    assert_int_equal(nn_blas_choose(100, 104, 1), NN_BLAS_OPENBLAS);   /* within the margin */
    assert_int_equal(nn_blas_choose(100, 105, 1), NN_BLAS_OPENBLAS);   /* exactly the margin */
    assert_int_equal(nn_blas_choose(100, 100, 1), NN_BLAS_OPENBLAS);   /* a tie */
    assert_int_equal(nn_blas_choose(100, 50, 1), NN_BLAS_OPENBLAS);
    assert_int_equal(nn_blas_choose(100, 300, 0), NN_BLAS_OPENBLAS);   /* BLIS missing */
    assert_int_equal(nn_blas_choose(100, 0, 1), NN_BLAS_OPENBLAS);     /* BLIS not measured */
    assert_int_equal(nn_blas_choose(0, 300, 1), NN_BLAS_OPENBLAS);     /* OpenBLAS not measured */
    assert_int_equal(nn_blas_choose(1.0, 1.0 + 2 * NN_BLAS_MARGIN, 1), NN_BLAS_BLIS);
}

static void test_table(void **state)
{
    (void)state;
    nn_blas_forget();
    const nn_blas_shape a = { .m = 64, .n = 1000, .k = 784, .ta = 0, .tb = 1 };
    const nn_blas_shape a_other_trans = { .m = 64, .n = 1000, .k = 784, .ta = 1, .tb = 1 };
    const nn_blas_shape a_true_is_1 = { .m = 64, .n = 1000, .k = 784, .ta = 0, .tb = 7 };
    assert_int_equal(nn_blas_pick(&a, 2), NN_BLAS_OPENBLAS);           /* nothing known */
    assert_int_equal(nn_blas_remember(&a, 2, NN_BLAS_BLIS), 0);
    assert_int_equal(nn_blas_pick(&a, 2), NN_BLAS_BLIS);
    assert_int_equal(nn_blas_pick(&a_true_is_1, 2), NN_BLAS_BLIS);
    assert_int_equal(nn_blas_pick(&a, 1), NN_BLAS_OPENBLAS);           /* other threads */
    assert_int_equal(nn_blas_pick(&a_other_trans, 2), NN_BLAS_OPENBLAS);
    assert_int_equal(nn_blas_remember(&a, 2, NN_BLAS_OPENBLAS), 0);    /* replaced */
    assert_int_equal(nn_blas_pick(&a, 2), NN_BLAS_OPENBLAS);
    /* filling it: one slot stays free so that a search ends */
    int stored = 0;
    for (int i = 1; i <= NN_BLAS_TABLE; i++) {
        const nn_blas_shape s = { .m = i, .n = 3, .k = 5 };
        if (nn_blas_remember(&s, 1, NN_BLAS_BLIS) == 0)
            stored++;
    }
    assert_int_equal(stored, NN_BLAS_TABLE - 2);   /* a's entry holds one slot */
    const nn_blas_shape missing = { .m = 1, .n = 1, .k = 1 };
    assert_int_equal(nn_blas_pick(&missing, 1), NN_BLAS_OPENBLAS);
    const nn_blas_shape first = { .m = 1, .n = 3, .k = 5 };
    assert_int_equal(nn_blas_pick(&first, 1), NN_BLAS_BLIS);
    nn_blas_forget();
    assert_int_equal(nn_blas_pick(&first, 1), NN_BLAS_OPENBLAS);
}

static void test_shapes(void **state)
{
    (void)state;
    nn_blas_shape s[NN_BLAS_PRODUCTS];
    nn_blas_linear_shapes(32, 784, 1000, s);
    assert_true(s[NN_BLAS_FWD].m == 32 && s[NN_BLAS_FWD].n == 1000 && s[NN_BLAS_FWD].k == 784);
    assert_true(!s[NN_BLAS_FWD].ta && s[NN_BLAS_FWD].tb);
    assert_true(s[NN_BLAS_DX].m == 32 && s[NN_BLAS_DX].n == 784 && s[NN_BLAS_DX].k == 1000);
    assert_true(s[NN_BLAS_DW].m == 1000 && s[NN_BLAS_DW].n == 784 && s[NN_BLAS_DW].k == 32);
    assert_true(s[NN_BLAS_DW].ta && !s[NN_BLAS_DW].tb);
    nn_blas_conv_shapes(4, 16, 100, 150, s);
    assert_true(s[NN_BLAS_FWD].m == 16 && s[NN_BLAS_FWD].n == 400 && s[NN_BLAS_FWD].k == 150);
    assert_true(s[NN_BLAS_DX].m == 150 && s[NN_BLAS_DX].n == 400 && s[NN_BLAS_DX].k == 16);
    assert_true(s[NN_BLAS_DX].ta && !s[NN_BLAS_DX].tb);
    assert_true(s[NN_BLAS_DW].m == 16 && s[NN_BLAS_DW].n == 150 && s[NN_BLAS_DW].k == 400);
    assert_true(!s[NN_BLAS_DW].ta && s[NN_BLAS_DW].tb);
}

/* ---- with BLIS ----------------------------------------------------------- */

static int skip_without_blis(void)
{
    char why[160];
    if (nn_blis_status(why, sizeof why) == 0)
        return 0;
    print_message("skipped: %s\n", why);
    return 1;
}

/* a (rows, cols) stored with leading dimension ld >= cols, filled */
static float *matrix(int rows, int cols, int ld, unsigned seed)
{
    float *m = calloc((size_t)rows * (size_t)ld, sizeof *m);
    assert_non_null(m);
    for (int i = 0; i < rows * ld; i++) {
        seed = seed * 1103515245u + 12345u;
        m[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
    }
    (void)cols;
    return m;
}

static float elem(const float *m, int ld, int trans, int i, int j)
{
    return trans ? m[(size_t)j * ld + i] : m[(size_t)i * ld + j];
}

/* C = 0.5 op(A) op(B) + 2 C by `lib`, against plain loops in double */
static void check_product(int lib, int ta, int tb)
{
    const int m = 37, n = 53, k = 29, pad = 3;
    const int lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
    float *a = matrix(ta ? k : m, ta ? m : k, lda, 1);
    float *b = matrix(tb ? n : k, tb ? k : n, ldb, 2);
    float *c = matrix(m, n, ldc, 3);
    float *c0 = malloc((size_t)m * ldc * sizeof *c0);
    assert_non_null(c0);
    memcpy(c0, c, (size_t)m * ldc * sizeof *c0);
    const nn_blas_shape s = { .m = m, .n = n, .k = k, .ta = ta, .tb = tb };
    nn_blas_sgemm(lib, &s, 0.5f, a, lda, b, ldb, 2.0f, c, ldc);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            double want = c0[(size_t)i * ldc + j];
            if (j < n) {
                double dot = 0;
                for (int p = 0; p < k; p++)
                    dot += (double)elem(a, lda, ta, i, p) * elem(b, ldb, tb, p, j);
                want = 0.5 * dot + 2.0 * want;
            }
            double got = c[(size_t)i * ldc + j];
            assert_true(got - want < 1e-4 + 1e-4 * (want < 0 ? -want : want));
            assert_true(want - got < 1e-4 + 1e-4 * (want < 0 ? -want : want));
        }
    free(a);
    free(b);
    free(c);
    free(c0);
}

static void test_products(void **state)
{
    (void)state;
    for (int t = 0; t < 4; t++)
        check_product(NN_BLAS_OPENBLAS, t & 1, t >> 1);
    if (skip_without_blis())
        skip();
    assert_true(strlen(nn_blis_version()) > 0);
    for (int t = 0; t < 4; t++)
        check_product(NN_BLAS_BLIS, t & 1, t >> 1);
}

/* The backend gives BLIS the threads it gives OpenBLAS (one, inside its own
 * pool), whatever BLIS_NUM_THREADS says, and again after another count. */
static void test_threads(void **state)
{
    (void)state;
    if (skip_without_blis())
        skip();
    nn_blis_set_threads(3);
    assert_int_equal(nn_blis_threads(), 3);
    nn_backend b;
    nn_backend_config cfg = { .threads = 2 };
    assert_int_equal(nn_backend_open(&b, &nn_backend_cpu, &cfg), 0);
    assert_int_equal(nn_blis_threads(), 1);
    nn_backend_close(&b);
}

/* The backend's linear forward (one thread, so one product of the whole
 * shape) runs on the library the table names: bit for bit what that
 * library's product gives, and BLIS's and OpenBLAS's differ at this size. */
static void linear_on(nn_backend *b, int lib, const float *x, const float *w, float *y)
{
    const int n = 64, in = 300, out = 200;
    nn_blas_shape s[NN_BLAS_PRODUCTS];
    nn_blas_linear_shapes(n, in, out, s);
    nn_blas_forget();
    assert_int_equal(nn_blas_remember(&s[NN_BLAS_FWD], b->threads_now, lib), 0);
    assert_int_equal(b->ops->linear_forward(b, n, in, out, x, w, NULL, y), 0);
    nn_blas_forget();
}

static void test_backend_follows_table(void **state)
{
    (void)state;
    if (skip_without_blis())
        skip();
    const int n = 64, in = 300, out = 200;
    float *x = matrix(n, in, in, 4), *w = matrix(out, in, in, 5);
    float *y = calloc((size_t)n * out, sizeof *y), *want = calloc((size_t)n * out, sizeof *y);
    assert_true(y && want);
    nn_backend b;
    nn_backend_config cfg = { .threads = 1 };
    assert_int_equal(nn_backend_open(&b, &nn_backend_cpu, &cfg), 0);
    nn_blas_shape s[NN_BLAS_PRODUCTS];
    nn_blas_linear_shapes(n, in, out, s);
    int differ = 0;
    for (int lib = 0; lib < NN_BLAS_LIBS; lib++) {
        linear_on(&b, lib, x, w, y);
        nn_blas_sgemm(lib, &s[NN_BLAS_FWD], 1.0f, x, in, w, in, 0.0f, want, out);
        assert_memory_equal(y, want, (size_t)n * out * sizeof *y);
        if (lib == NN_BLAS_BLIS) {
            nn_blas_sgemm(NN_BLAS_OPENBLAS, &s[NN_BLAS_FWD], 1.0f, x, in, w, in, 0.0f, want,
                          out);
            differ = memcmp(y, want, (size_t)n * out * sizeof *y) != 0;
        }
    }
    assert_true(differ);         /* else this test could not tell the two apart */
    nn_backend_close(&b);
    free(x);
    free(w);
    free(y);
    free(want);
}

int main(void)
{
    /* NNLAB_BLAS would override the table: these tests set it themselves */
    unsetenv("NNLAB_BLAS");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_products),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_backend_follows_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

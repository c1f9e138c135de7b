/* tests/test_products.c - OpenBLAS or BLIS per product shape, the
 * calibration's side (src/analysis/model/calibrate_products.c): the shapes a
 * preset's layers issue, the choices through the calibration cache and back
 * (format 5), a malformed line refusing the file, and a cached choice
 * reaching the backend's table as a job starts.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/calibrate_products.h"
#include "cpu/cpu_blis.h"
#include "nnlab/calibrate.h"
#include "nnlab/preset.h"
#include "util.h"

static int has_shape(const nn_blas_shape *list, int n, int m, int nn, int k, int ta, int tb)
{
    for (int i = 0; i < n; i++)
        if (list[i].m == m && list[i].n == nn && list[i].k == k && list[i].ta == ta &&
            list[i].tb == tb)
            return 1;
    return 0;
}

static void load_preset(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    assert_int_equal(nn_preset_load(path, p, err, sizeof err), 0);
}

static void test_preset_shapes(void **state)
{
    (void)state;
    static nn_preset p;
    nn_blas_shape list[64];
    load_preset("mnist-mlp-128", &p);   /* 784 -> 128 -> 10 */
    int n = nn_preset_product_shapes(&p, 32, list, 0, 64);
    assert_int_equal(n, 6);
    assert_true(has_shape(list, n, 32, 128, 784, 0, 1));   /* forward */
    assert_true(has_shape(list, n, 32, 784, 128, 0, 0));   /* input gradient */
    assert_true(has_shape(list, n, 128, 784, 32, 1, 0));   /* weight gradient */
    assert_true(has_shape(list, n, 10, 128, 32, 1, 0));
    assert_int_equal(nn_preset_product_shapes(&p, 32, list, n, 64), n);   /* each once */
    assert_int_equal(nn_preset_product_shapes(&p, 32, list, 0, 4), 4);    /* at most max */
    load_preset("lenet-cifar10", &p);   /* conv 3 -> 6, 5x5 on 32x32: K 75, 28x28 out */
    n = nn_preset_product_shapes(&p, 4, list, 0, 64);
    assert_true(has_shape(list, n, 6, 4 * 784, 75, 0, 0));
    assert_true(has_shape(list, n, 75, 4 * 784, 6, 1, 0));
    assert_true(has_shape(list, n, 6, 75, 4 * 784, 0, 1));
}

/* A calibration of this machine's cpu with three choices. */
static void with_products(nn_calibration *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->device, sizeof c->device, "cpu");
    nn_machine_description(c->machine, sizeof c->machine);
    c->created = 1;
    c->gemm_gflops = 100;
    c->threads = 2;
    c->product_call_us[0] = 0.125;
    c->product_call_us[1] = 0.875;
    c->products[0] = (nn_product_choice){ 32, 1000, 784, 0, 1, 2, 37.5, 41.25, 1 };
    c->products[1] = (nn_product_choice){ 1000, 784, 32, 1, 0, 2, 40.5, 40.75, 0 };
    c->products[2] = (nn_product_choice){ 4, 10, 84, 0, 1, 2, 8.5, 0, 0 };   /* not contested */
    c->n_products = 3;
}

static char cache_dir[] = "/tmp/nnlab-products-XXXXXX";

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(cache_dir))
        return -1;
    setenv("XDG_CACHE_HOME", cache_dir, 1);
    unsetenv("NNLAB_BLAS");
    return 0;
}

static int teardown(void **state)
{
    char path[NN_PATH_LEN + 32];
    (void)state;
    if (nn_calibration_path("cpu", path, sizeof path) == 0)
        remove(path);
    snprintf(path, sizeof path, "%s/nnlab", cache_dir);
    rmdir(path);
    rmdir(cache_dir);
    return 0;
}

static void test_cache_round_trip(void **state)
{
    (void)state;
    static nn_calibration c, back;
    char err[NN_ERR_LEN];
    with_products(&c);
    assert_int_equal(nn_calibration_save(&c, err, sizeof err), 0);
    assert_int_equal(nn_calibration_load("cpu", &back), 0);
    assert_int_equal(back.n_products, 3);
    assert_true(back.product_call_us[0] == 0.125 && back.product_call_us[1] == 0.875);
    for (int i = 0; i < 3; i++) {
        const nn_product_choice *a = &c.products[i], *b = &back.products[i];
        assert_true(a->m == b->m && a->n == b->n && a->k == b->k && a->ta == b->ta &&
                    a->tb == b->tb && a->threads == b->threads && a->chosen == b->chosen);
        assert_true(a->openblas_gflops == b->openblas_gflops);
        assert_true(a->blis_gflops == b->blis_gflops);
    }
}

/* A product line that does not parse makes the file unreadable (measured
 * again), never a half-read table. */
static void test_malformed_line_refused(void **state)
{
    (void)state;
    static nn_calibration c, back;
    char err[NN_ERR_LEN], path[NN_PATH_LEN];
    const char *bad[] = { "1 2 3 0 1 2 x 4 blis", "1 2 3 0 1 2 3 4 mkl", "0 2 3 0 1 2 3 4 blis",
                          "1 2 3 2 1 2 3 4 blis", "1 2 3 0 1 2 3 4 blis extra" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        with_products(&c);
        assert_int_equal(nn_calibration_save(&c, err, sizeof err), 0);
        assert_int_equal(nn_calibration_path("cpu", path, sizeof path), 0);
        FILE *f = fopen(path, "a");
        assert_non_null(f);
        fprintf(f, "product = %s\n", bad[i]);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(nn_calibration_load("cpu", &back), -1);
    }
}

/* What a job does as its backend opens (src/jobs/engine.c): the cached
 * choices into the table the products read. */
static void test_cached_choices_reach_the_table(void **state)
{
    (void)state;
    static nn_calibration c;
    char err[NN_ERR_LEN];
    with_products(&c);
    assert_int_equal(nn_calibration_save(&c, err, sizeof err), 0);
    nn_blas_forget();
    const nn_blas_shape fwd = { .m = 32, .n = 1000, .k = 784, .ta = 0, .tb = 1 };
    assert_int_equal(nn_blas_pick(&fwd, 2), NN_BLAS_OPENBLAS);
    assert_int_equal(nn_products_use_cached("cpu"), 3);
    assert_int_equal(nn_blas_pick(&fwd, 2), NN_BLAS_BLIS);
    assert_int_equal(nn_blas_pick(&fwd, 1), NN_BLAS_OPENBLAS);   /* chosen for 2 threads */
    nn_blas_forget();
    assert_int_equal(nn_products_use_cached("no-such-device"), -1);
}

/* A job at a batch no calibration contested (engine.c, as its backend
 * opens): its shapes are contested then and kept for its thread count; a
 * second job finds them known and contests nothing. Needs BLIS (skipped
 * without it: nothing is contested there, which is checked too). */
static void test_job_contests_its_own_shapes(void **state)
{
    (void)state;
    static nn_preset p;
    char why[160];
    nn_blas_shape list[64];
    load_preset("mnist-mlp-128", &p);
    nn_blas_forget();
    int n = nn_preset_product_shapes(&p, 4, list, 0, 64);
    int contested = nn_products_contest_job(&p, 4, 2);
    if (nn_blis_status(why, sizeof why) != 0 || nn_blas_forced(NULL, 0) >= 0) {
        assert_int_equal(contested, 0);
        print_message("skipped: %s\n", why);
        skip();
    }
    assert_int_equal(contested, n);
    for (int i = 0; i < n; i++) {
        assert_true(nn_blas_known(&list[i], 2));
        assert_false(nn_blas_known(&list[i], 1));   /* kept for the job's thread count */
    }
    assert_int_equal(nn_products_contest_job(&p, 4, 2), 0);
    nn_blas_forget();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preset_shapes),
        cmocka_unit_test(test_cache_round_trip),
        cmocka_unit_test(test_malformed_line_refused),
        cmocka_unit_test(test_cached_choices_reach_the_table),
        cmocka_unit_test(test_job_contests_its_own_shapes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

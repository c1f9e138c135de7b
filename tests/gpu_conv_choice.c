/* tests/gpu_conv_choice.c - the GPU's convolution algorithms, chosen by
 * their time (backends/cuda/cuda_conv_algo.cu), for tests/test_gpu:
 * the fastest is kept (on the emulated GPU, whose cuDNN stand-in reports
 * simulated times of different costs, the one it says is fastest); the
 * choice is read back from the file on the next open (no trials then); the
 * deterministic switch keeps deterministic algorithms only and repeats a run
 * bit for bit; a file of another GPU, driver or cuDNN is ignored. The
 * numbers stay cpu-ref's whichever algorithm runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend.h"
#include "rng.h"
#include "parity_suite.h"
#include "gpu_conv_choice.h"
#include "test_tmp.h"

/* A conv geometry's buffers and one forward and backward pass (dx, dw,
 * dbias), read back. */
typedef struct conv_run {
    nn_conv_geom g;
    size_t nx, nw, ny;
    float *y, *dx, *dw, *db;     /* host copies of the results */
} conv_run;

static void conv_pass(nn_backend *b, const nn_conv_geom *g, uint64_t seed, conv_run *out)
{
    nn_rng r;
    nn_rng_seed(&r, seed);
    out->g = *g;
    out->nx = (size_t)g->n * g->c_in * g->h_in * g->w_in;
    out->nw = (size_t)g->c_out * g->c_in * g->k_h * g->k_w;
    out->ny = (size_t)g->n * g->c_out * g->h_out * g->w_out;
    float *h = fbuf(out->nx + out->nw + out->ny + g->c_out);
    fill(&r, h, out->nx + out->nw + out->ny + g->c_out, -1, 1);
    float *x = bk_copy(b, h, out->nx * 4), *w = bk_copy(b, h + out->nx, out->nw * 4);
    float *dy = bk_copy(b, h + out->nx + out->nw, out->ny * 4);
    float *bias = bk_copy(b, h + out->nx + out->nw + out->ny, (size_t)g->c_out * 4);
    float *y = bk_poison(b, out->ny), *dx = bk_poison(b, out->nx), *dw = bk_poison(b, out->nw);
    float *db = bk_poison(b, (size_t)g->c_out);
    size_t ws_bytes = 0;
    expect_ok(b, b->ops->conv2d_workspace(b, g, &ws_bytes), "conv2d_workspace");
    void *ws = bk_alloc(b, ws_bytes ? ws_bytes : 1);
    expect_ok(b, b->ops->conv2d_forward(b, g, x, w, bias, y, ws), "conv2d_forward");
    expect_ok(b, b->ops->conv2d_backward(b, g, x, w, dy, dx, dw, db, ws), "conv2d_backward");
    out->y = fbuf(out->ny);
    out->dx = fbuf(out->nx);
    out->dw = fbuf(out->nw);
    out->db = fbuf((size_t)g->c_out);
    bk_read(b, out->y, y, out->ny * 4);
    bk_read(b, out->dx, dx, out->nx * 4);
    bk_read(b, out->dw, dw, out->nw * 4);
    bk_read(b, out->db, db, (size_t)g->c_out * 4);
    void *bufs[] = { x, w, dy, bias, y, dx, dw, db, ws };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        bk_free(b, bufs[i]);
    free(h);
}

static void conv_run_free(conv_run *c)
{
    free(c->y);
    free(c->dx);
    free(c->dw);
    free(c->db);
}

static int same_bits(const conv_run *a, const conv_run *b)
{
    return memcmp(a->y, b->y, a->ny * 4) == 0 && memcmp(a->dx, b->dx, a->nx * 4) == 0 &&
           memcmp(a->dw, b->dw, a->nw * 4) == 0 && memcmp(a->db, b->db, (size_t)a->g.c_out * 4) == 0;
}

static void open_gpu(nn_backend *b, int deterministic, const char *cache)
{
    nn_backend_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.deterministic = deterministic;
    cfg.conv_cache_path = cache;
    if (nn_backend_open(b, nn_backend_find("gpu"), &cfg) != 0)
        fail_msg("opening gpu: %s", b->last_error);
}

/* The choices of the three directions of g, in direction order. */
static void choices_of(nn_backend *b, const nn_conv_geom *g, nn_conv_choice out[3])
{
    nn_conv_choice all[16];
    int n = b->ops->conv_algorithms(b, all, 16);
    int found = 0;
    assert_true(n >= 3 && n <= 16);
    for (int i = 0; i < n; i++)
        if (memcmp(&all[i].g, g, sizeof *g) == 0) {
            out[all[i].direction] = all[i];
            found++;
        }
    assert_int_equal(found, 3);
    for (int d = 0; d < 3; d++)
        print_message("# %s: %s, %s, %.3f us, %d trials\n",
                      d == 0 ? "forward" : d == 1 ? "backward-data" : "backward-filter",
                      out[d].algorithm, out[d].deterministic ? "deterministic" : "non-deterministic",
                      out[d].time_us, out[d].trials);
}

static void expect_algorithms(const nn_conv_choice c[3], const char *fwd, const char *data,
                              const char *filter)
{
    if (!nn_backend_emulated(nn_backend_find("gpu")))
        return;     /* a real GPU's fastest is its own */
    assert_string_equal(c[0].algorithm, fwd);
    assert_string_equal(c[1].algorithm, data);
    assert_string_equal(c[2].algorithm, filter);
}

static const char *cache_file(char *path, size_t len, const char *root, const char *name)
{
    snprintf(path, len, "%s/%s", root, name);
    return path;
}

/* The fastest is kept, the file written at close, and the next open reads
 * it: the same algorithms, no trials, the same numbers. */
void test_conv_choice_timed_and_cached(void **state)
{
    parity_fixture *f = *state;
    char root[512], path[600];
    nn_backend b;
    nn_conv_geom g = conv_geom(8, 3, 32, 32, 6, 5, 1, 0);
    nn_conv_choice first[3], again[3];
    conv_run r0, r1;
    assert_int_equal(test_tmp_create(root, sizeof root, "gpu-conv"), 0);
    cache_file(path, sizeof path, root, "conv-algorithms");

    open_gpu(&b, 0, path);
    conv_pass(&b, &g, case_seed(f->seed, 50, 0), &r0);
    choices_of(&b, &g, first);
    for (int d = 0; d < 3; d++) {
        assert_true(first[d].trials >= 1);
        assert_true(first[d].time_us > 0);
    }
    expect_algorithms(first, "FWD_IMPLICIT_GEMM", "BWD_DATA_ALGO_0", "BWD_FILTER_ALGO_0");
    nn_backend_close(&b);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    fclose(fp);

    open_gpu(&b, 0, path);
    conv_pass(&b, &g, case_seed(f->seed, 50, 0), &r1);
    choices_of(&b, &g, again);
    for (int d = 0; d < 3; d++) {
        assert_int_equal(again[d].trials, 0);      /* read back: nothing timed */
        assert_string_equal(again[d].algorithm, first[d].algorithm);
    }
    nn_backend_close(&b);
    expect_close("y from the cached choice", "LeNet conv1 n=8", 0, r0.y, r1.y, r0.ny,
                 f->spec->elementwise);
    expect_close("dw from the cached choice", "LeNet conv1 n=8", 0, r0.dw, r1.dw, r0.nw,
                 f->spec->reduction);
    conv_run_free(&r0);
    conv_run_free(&r1);
    test_tmp_remove(root);
}

/* deterministic: only deterministic algorithms, and two runs give the same
 * bits (y, dx, dw, dbias). */
void test_conv_choice_deterministic(void **state)
{
    parity_fixture *f = *state;
    nn_backend b;
    nn_conv_geom g = conv_geom(8, 6, 14, 14, 16, 5, 1, 0);
    nn_conv_choice c[3];
    conv_run r[2];
    for (int k = 0; k < 2; k++) {
        open_gpu(&b, 1, NULL);
        conv_pass(&b, &g, case_seed(f->seed, 51, 0), &r[k]);
        choices_of(&b, &g, c);
        for (int d = 0; d < 3; d++)
            assert_int_equal(c[d].deterministic, 1);
        expect_algorithms(c, "FWD_IMPLICIT_GEMM", "BWD_DATA_ALGO_1", "BWD_FILTER_ALGO_1");
        nn_backend_close(&b);
    }
    assert_true(same_bits(&r[0], &r[1]));
    conv_run_free(&r[0]);
    conv_run_free(&r[1]);
}

/* A file whose key is another GPU's (or driver's, or cuDNN's) is ignored:
 * the algorithms are timed again, and the file is replaced with this
 * machine's key. */
void test_conv_choice_other_key(void **state)
{
    parity_fixture *f = *state;
    char root[512], path[600], line[256];
    nn_backend b;
    nn_conv_geom g = conv_geom(4, 3, 12, 12, 5, 3, 1, 1);
    nn_conv_choice c[3];
    conv_run r;
    assert_int_equal(test_tmp_create(root, sizeof root, "gpu-conv-key"), 0);
    cache_file(path, sizeof path, root, "conv-algorithms");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, "nnlab conv algorithms 1\ngpu Another GPU\ndriver 1\ncudnn 1\n");
    for (int d = 0; d < 3; d++)
        fprintf(fp, "4 3 12 12 5 12 12 3 3 1 1 1 1 %d 0 0 1 0 1 0.5\n", d);
    fclose(fp);

    open_gpu(&b, 0, path);
    conv_pass(&b, &g, case_seed(f->seed, 52, 0), &r);
    choices_of(&b, &g, c);
    for (int d = 0; d < 3; d++)
        assert_true(c[d].trials >= 1);
    nn_backend_close(&b);
    fp = fopen(path, "r");
    assert_non_null(fp);
    assert_non_null(fgets(line, sizeof line, fp));
    assert_non_null(fgets(line, sizeof line, fp));
    fclose(fp);
    assert_null(strstr(line, "Another GPU"));
    conv_run_free(&r);
    test_tmp_remove(root);
}

/* tests/parity_util.c - helpers shared by the parity tests (see parity_util.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "parity_util.h"

static uint64_t base_seed;                 /* for the failure messages */
static const char *tested_name = "cpu";

/* ---- seeds ------------------------------------------------------------------------------- */

uint64_t parity_seed_init(uint64_t default_seed, const char *what)
{
    uint64_t seed = default_seed;
    const char *env = getenv("NNLAB_PARITY_SEED");
    if (env && *env)
        seed = strtoull(env, NULL, 10);
    base_seed = seed;
    fprintf(stderr, "# %s %llu (NNLAB_PARITY_SEED replays it)\n", what,
            (unsigned long long)seed);
    return seed;
}

uint64_t case_seed(uint64_t base, int test, int k)
{
    return base + (uint64_t)test * 1000003ULL + (uint64_t)k * 7919ULL;
}

void parity_report_as(const char *tested)
{
    tested_name = tested;
}

/* ---- host buffers ------------------------------------------------------------------------ */

float *fbuf(size_t n)
{
    float *p = malloc(n ? n * sizeof *p : 1);
    assert_non_null(p);
    return p;
}

void fill(nn_rng *r, float *p, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        p[i] = nn_rng_range(r, lo, hi);
}

void fill_ties(nn_rng *r, float *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (float)nn_rng_below(r, 4) * 0.5f;
}

float *copy_of(const float *src, size_t n)
{
    float *p = fbuf(n);
    memcpy(p, src, n * sizeof *p);
    return p;
}

/* ---- buffers in the tested backend's memory ------------------------------------------- */

void *bk_alloc(nn_backend *b, size_t bytes)
{
    void *p = NULL;
    if (b->ops->host_memory) {
        p = malloc(bytes ? bytes : 1);
        assert_non_null(p);
        return p;
    }
    expect_ok(b, b->ops->alloc(b, bytes, &p), "alloc");
    assert_non_null(p);
    return p;
}

void bk_free(nn_backend *b, void *p)
{
    if (!p)
        return;
    if (b->ops->host_memory)
        free(p);
    else
        b->ops->free(b, p);
}

void *bk_copy(nn_backend *b, const void *host, size_t bytes)
{
    void *p = bk_alloc(b, bytes);
    expect_ok(b, b->ops->upload(b, p, host, bytes), "upload");
    return p;
}

float *bk_poison(nn_backend *b, size_t n)
{
    float *host = fbuf(n);
    for (size_t i = 0; i < n; i++)
        host[i] = (i & 1) ? NAN : 1e30f;
    float *p = bk_copy(b, host, n * sizeof *host);
    free(host);
    return p;
}

void bk_read(nn_backend *b, void *host, const void *src, size_t bytes)
{
    expect_ok(b, b->ops->download(b, host, src, bytes), "download");
}

int rnd(nn_rng *r, int lo, int hi)
{
    return lo + (int)nn_rng_below(r, (uint64_t)(hi - lo + 1));
}

void fill_act_inputs(nn_rng *r, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t u = nn_rng_below(r, 10);
        x[i] = u == 0 ? nn_rng_range(r, -100, 100) : u == 1 ? 0.0f : nn_rng_range(r, -6, 6);
    }
}

/* ---- checks ------------------------------------------------------------------------------ */

void expect_close(const char *what, const char *shape, uint64_t seed, const float *ref,
                  const float *got, size_t n, parity_tol tol)
{
    const double abs_tol = tol.abs, rel_tol = tol.rel;
    double worst = -1.0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double r = ref[i], g = got[i], ratio;
        if (isnan(r) || isnan(g))
            ratio = isnan(r) && isnan(g) ? 0.0 : INFINITY;
        else
            ratio = fabs(g - r) / (abs_tol + rel_tol * fabs(r));
        if (ratio > worst) {
            worst = ratio;
            at = i;
        }
    }
    if (worst <= 1.0)
        return;
    char parts[64];
    snprintf(parts, sizeof parts, " (abs %.0e + rel %.0e)", abs_tol, rel_tol);
    fail_msg("%s [%s] case seed %llu (NNLAB_PARITY_SEED=%llu replays it): worst element "
             "%zu of %zu: %s %.9g, cpu-ref %.9g, |diff| %.3g > tol %.3g%s",
             what, shape, (unsigned long long)seed, (unsigned long long)base_seed, at, n,
             tested_name, (double)got[at], (double)ref[at], fabs((double)got[at] - ref[at]),
             abs_tol + rel_tol * fabs((double)ref[at]), parts);
}

void expect_close_bk(nn_backend *b, const char *what, const char *shape, uint64_t seed,
                     const float *ref, const float *src, size_t n, parity_tol tol)
{
    float *got = fbuf(n);
    bk_read(b, got, src, n * sizeof *got);
    expect_close(what, shape, seed, ref, got, n, tol);
    free(got);
}

void expect_ok(nn_backend *b, int rc, const char *what)
{
    if (rc != 0)
        fail_msg("%s on %s failed: %s", what, b->ops->name, b->last_error);
}

/* ---- geometries -------------------------------------------------------------------------- */

void conv_fix_output(nn_conv_geom *g)
{
    g->h_out = (g->h_in + 2 * g->pad_h - g->k_h) / g->stride_h + 1;
    g->w_out = (g->w_in + 2 * g->pad_w - g->k_w) / g->stride_w + 1;
}

nn_conv_geom conv_geom(int n, int c_in, int h, int w, int c_out, int k, int stride, int pad)
{
    nn_conv_geom g = { .n = n, .c_in = c_in, .h_in = h, .w_in = w, .c_out = c_out,
                       .k_h = h == 1 ? 1 : k, .k_w = k,
                       .stride_h = h == 1 ? 1 : stride, .stride_w = stride,
                       .pad_h = h == 1 ? 0 : pad, .pad_w = pad };
    conv_fix_output(&g);
    return g;
}

nn_conv_geom random_conv(nn_rng *r, int conv1d, int max_n)
{
    static const int kernels[] = { 1, 3, 5 };
    nn_conv_geom g;
    memset(&g, 0, sizeof g);
    g.n = rnd(r, 1, max_n);
    g.c_in = rnd(r, 1, 16);
    g.c_out = rnd(r, 1, 16);
    g.k_w = kernels[nn_rng_below(r, 3)];
    g.stride_w = rnd(r, 1, 2);
    g.pad_w = rnd(r, 0, 2);
    int min_w = g.k_w - 2 * g.pad_w > 1 ? g.k_w - 2 * g.pad_w : 1;
    g.w_in = min_w + rnd(r, 0, conv1d ? 30 : 14);
    if (conv1d) {
        g.h_in = 1;
        g.k_h = 1;
        g.stride_h = 1;
        g.pad_h = 0;
    } else {
        /* rectangular inputs, and now and then a rectangular kernel */
        g.k_h = nn_rng_below(r, 4) == 0 ? kernels[nn_rng_below(r, 3)] : g.k_w;
        g.stride_h = rnd(r, 1, 2);
        g.pad_h = rnd(r, 0, 2);
        int min_h = g.k_h - 2 * g.pad_h > 1 ? g.k_h - 2 * g.pad_h : 1;
        g.h_in = min_h + rnd(r, 0, 14);
    }
    conv_fix_output(&g);
    return g;
}

void conv_shape(char *s, size_t len, const nn_conv_geom *g, const char *extra)
{
    snprintf(s, len, "conv n=%d c_in=%d %dx%d -> c_out=%d %dx%d k=%dx%d stride=%dx%d pad=%dx%d%s",
             g->n, g->c_in, g->h_in, g->w_in, g->c_out, g->h_out, g->w_out, g->k_h, g->k_w,
             g->stride_h, g->stride_w, g->pad_h, g->pad_w, extra);
}

nn_pool_geom pool_geom(int n, int c, int h, int w, int kh, int kw, int sh, int sw)
{
    nn_pool_geom g = { .n = n, .c = c, .h_in = h, .w_in = w, .k_h = kh, .k_w = kw,
                       .stride_h = sh, .stride_w = sw };
    g.h_out = (h - kh) / sh + 1;
    g.w_out = (w - kw) / sw + 1;
    return g;
}

nn_pool_geom random_pool(nn_rng *r, int kind)
{
    int n = rnd(r, 1, 8), c = rnd(r, 1, 16);
    switch (kind % 6) {
    case 0:   /* 2x2 stride 2, odd sizes leave a row/column out */
    case 1:
        return pool_geom(n, c, rnd(r, 2, 29), rnd(r, 2, 29), 2, 2, 2, 2);
    case 2:   /* 1-D, 3 stride 3 */
        return pool_geom(n * 8, c, 1, rnd(r, 3, 40), 1, 3, 1, 3);
    case 3: { /* max over the whole length */
        int len = rnd(r, 1, 40);
        return pool_geom(n * 8, c, 1, len, 1, len, 1, rnd(r, 1, 2));
    }
    case 4:   /* overlapping windows: 3x3 stride 2 */
        return pool_geom(n, c, rnd(r, 3, 20), rnd(r, 3, 20), 3, 3, 2, 2);
    default:  /* rectangular window and strides */
        return pool_geom(n, c, rnd(r, 3, 20), rnd(r, 2, 20), 3, 2, rnd(r, 1, 3), rnd(r, 1, 3));
    }
}

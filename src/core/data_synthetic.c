/* src/core/data_synthetic.c - data sets made up from a seed: synthetic
 * classification sets of any shape with learnable class structure (the
 * stand-in when real files are missing), and random regression rows like
 * seed 001's.
 */
#include "data_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rng.h"
#include "util.h"

/* Sub-streams of one seed, so that e.g. the validation set does not change
 * when the training set's size does. */
enum { STREAM_PROTO = 1, STREAM_TRAIN, STREAM_VAL, STREAM_TRAIN_T, STREAM_VAL_T };

static void stream_rng(nn_rng *r, uint64_t seed, int stream)
{
    nn_rng_seed(r, seed ^ ((uint64_t)stream * 0xd1b54a32d192ed03ULL));
}

/* ---------------------------------------------------------------------------
 * Synthetic classification
 *
 * Each class has a smooth prototype per channel (a few low-frequency plane
 * waves, max |value| 1). A sample is signal * prototype[label] + noise, the
 * noise white with deviation SYNTH_NOISE. The signal amplitude is set from
 * the prototypes so that the mean distance between two classes is
 * 2 * SYNTH_SEPARATION noise deviations whatever the shape. With 2.25 the
 * nearest class mean is right ~88% of the time on 1x28x28 and 3x32x32 (close
 * to what an MLP reaches on Fashion-MNIST), and a linear softmax trained like
 * seed 000 (SGD lr 0.001, momentum 0.9, batch 4) goes from loss 2.3 to 0.7 in
 * 3000 steps: the loss falls clearly, yet the task is not trivially separable.
 */
#define SYNTH_WAVES 4
#define SYNTH_MAX_FREQ 2.0      /* cycles per image side: smooth, blob-like */
#define SYNTH_NOISE 0.5f        /* noise deviation: inputs of roughly unit scale */
#define SYNTH_SEPARATION 2.25   /* half the mean class distance, in noise deviations */

/* A smooth random field over an h x w plane, scaled to max |v| = 1. */
static void smooth_field(float *out, int h, int w, nn_rng *r)
{
    double fy[SYNTH_WAVES], fx[SYNTH_WAVES], phase[SYNTH_WAVES], amp[SYNTH_WAVES];
    for (int k = 0; k < SYNTH_WAVES; k++) {
        fy[k] = h > 1 ? (2.0 * nn_rng_uniform(r) - 1.0) * SYNTH_MAX_FREQ : 0.0;
        fx[k] = (2.0 * nn_rng_uniform(r) - 1.0) * SYNTH_MAX_FREQ;
        phase[k] = 6.283185307179586 * nn_rng_uniform(r);
        amp[k] = 0.5 + 0.5 * nn_rng_uniform(r);
    }
    float peak = 0.0f;
    for (int i = 0; i < h; i++) {
        for (int j = 0; j < w; j++) {
            double v = 0.0;
            for (int k = 0; k < SYNTH_WAVES; k++)
                v += amp[k] * cos(6.283185307179586 * (fy[k] * i / h + fx[k] * j / w) + phase[k]);
            out[i * w + j] = (float)v;
            if (fabsf((float)v) > peak)
                peak = fabsf((float)v);
        }
    }
    for (int i = 0; i < h * w && peak > 0.0f; i++)
        out[i] /= peak;
}

/* Mean Euclidean distance between two prototypes (classes, m). */
static double mean_proto_distance(const float *proto, int classes, size_t m)
{
    double sum = 0.0;
    long pairs = 0;
    for (int a = 0; a < classes; a++) {
        for (int b = a + 1; b < classes; b++) {
            double d2 = 0.0;
            for (size_t i = 0; i < m; i++) {
                double t = (double)proto[a * m + i] - proto[b * m + i];
                d2 += t * t;
            }
            sum += sqrt(d2);
            pairs++;
        }
    }
    return pairs ? sum / pairs : 1.0;
}

/* Prototypes (classes, m), already multiplied by the signal amplitude. The
 * shape is read as (C, H, W), (C, 1, L) or (1, 1, features). */
static void make_prototypes(float *proto, const nn_shape *s, int classes, nn_rng *r)
{
    int c = s->rank == 1 ? 1 : s->dim[0];
    int h = s->rank == 3 ? s->dim[1] : 1;
    int w = s->dim[s->rank - 1];
    size_t plane = (size_t)h * w, m = plane * c;
    for (int k = 0; k < classes; k++)
        for (int ch = 0; ch < c; ch++)
            smooth_field(proto + k * m + ch * plane, h, w, r);
    double spread = mean_proto_distance(proto, classes, m);
    float amp = (float)(2.0 * SYNTH_SEPARATION * SYNTH_NOISE / spread);
    for (size_t i = 0; i < (size_t)classes * m; i++)
        proto[i] *= amp;
}

/* Labels 0..classes-1 in equal numbers (to within one), shuffled. */
static void balanced_labels(int32_t *y, long n, int classes, nn_rng *r)
{
    for (long i = 0; i < n; i++)
        y[i] = (int32_t)(i % classes);
    for (long i = n - 1; i > 0; i--) {
        long j = (long)nn_rng_below(r, (uint64_t)i + 1);
        int32_t t = y[i];
        y[i] = y[j];
        y[j] = t;
    }
}

/* x = prototype[y] + noise. The noise is the sum of two 16-bit uniforms (a
 * triangular law of deviation SYNTH_NOISE): one splitmix call gives two
 * pixels, with no log or sqrt per pixel, which keeps 150M pixels well under a
 * second. */
static void synth_samples(float *x, const int32_t *y, long n, const float *proto,
                          size_t m, nn_rng *r)
{
    /* a 16-bit uniform has variance 65536^2 / 12; two of them, twice that */
    const float scale = SYNTH_NOISE * 2.449489743f / 65536.0f;   /* sqrt(6) */
    for (long s = 0; s < n; s++) {
        const float *p = proto + (size_t)y[s] * m;
        float *dst = x + (size_t)s * m;
        size_t i = 0;
        for (; i + 1 < m; i += 2) {
            uint64_t u = nn_rng_u64(r);
            int a = (int)(u & 0xffff) + (int)((u >> 16) & 0xffff) - 65535;
            int b = (int)((u >> 32) & 0xffff) + (int)(u >> 48) - 65535;
            dst[i] = p[i] + (float)a * scale;
            dst[i + 1] = p[i + 1] + (float)b * scale;
        }
        if (i < m) {
            uint64_t u = nn_rng_u64(r);
            dst[i] = p[i] + (float)((int)(u & 0xffff) + (int)((u >> 16) & 0xffff) - 65535) * scale;
        }
    }
}

/* n * m floats without size_t overflow; NULL arrays when n is 0. */
static int alloc_split(long n, size_t m, float **x, int32_t **y)
{
    if (n == 0)
        return 0;
    if ((size_t)n > SIZE_MAX / sizeof(float) / m)
        return -1;
    *x = data_alloc_array((size_t)n * m, sizeof(float));
    if (y)
        *y = data_alloc_array((size_t)n, sizeof(int32_t));
    return *x && (!y || *y) ? 0 : -1;
}

static size_t shape_floats(const nn_shape *s)
{
    size_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= (size_t)s->dim[i];
    return n;
}

/* Caps that keep every index below in range: a sample's floats fit an int,
 * and the prototypes' all-pairs distance (classes^2 * m) stays cheap. */
#define SYNTH_MAX_SAMPLE (1L << 24)
#define SYNTH_MAX_CLASSES 1000

static int check_synth_args(const nn_shape *s, int classes, long n_train, long n_val,
                            char *err, size_t err_len)
{
    long m = 1;
    if (s->rank < 1 || s->rank > 3)
        return nn_errorf(err, err_len, "synthetic data: rank %d is not 1, 2 or 3", s->rank);
    for (int i = 0; i < s->rank; i++) {
        if (s->dim[i] <= 0 || s->dim[i] > SYNTH_MAX_SAMPLE)
            return nn_errorf(err, err_len, "synthetic data: dimension %d is %d", i, s->dim[i]);
        m *= s->dim[i];
        if (m > SYNTH_MAX_SAMPLE)
            return nn_errorf(err, err_len, "synthetic data: more than %ld floats per sample",
                             SYNTH_MAX_SAMPLE);
    }
    if (classes < 2 || classes > SYNTH_MAX_CLASSES)
        return nn_errorf(err, err_len, "synthetic data: %d classes (need 2..%d)",
                         classes, SYNTH_MAX_CLASSES);
    if (n_train <= 0 || n_val < 0)
        return nn_errorf(err, err_len, "synthetic data: %ld train and %ld validation samples "
                         "(need > 0 and >= 0)", n_train, n_val);
    return 0;
}

void data_describe_synthetic(nn_dataset *d, const char *why)
{
    char shape[48];
    data_format_shape(&d->input, shape, sizeof shape);
    data_set_text(d->description, sizeof d->description, "synthetic %s, %d classes: %ld train, "
                  "%ld validation%s%s%s", shape, d->classes, d->n_train, d->n_val,
                  why ? " (" : "", why ? why : "", why ? ")" : "");
}

static int synth_build(nn_shape input, int classes, long n_train, long n_val, uint64_t seed,
                       nn_dataset *d, char *err, size_t err_len)
{
    nn_rng r;
    if (check_synth_args(&input, classes, n_train, n_val, err, err_len))
        return -1;
    size_t m = shape_floats(&input);
    float *proto = data_alloc_array((size_t)classes * m, sizeof(float));   /* (classes, m) */
    if (!proto || alloc_split(n_train, m, &d->train_x, &d->train_y)
        || alloc_split(n_val, m, &d->val_x, &d->val_y)) {
        nn_free_aligned(proto);
        return nn_errorf(err, err_len, "synthetic data: out of memory for %ld + %ld samples "
                         "of %zu floats", n_train, n_val, m);
    }
    stream_rng(&r, seed, STREAM_PROTO);
    make_prototypes(proto, &input, classes, &r);
    stream_rng(&r, seed, STREAM_TRAIN);
    balanced_labels(d->train_y, n_train, classes, &r);
    synth_samples(d->train_x, d->train_y, n_train, proto, m, &r);
    stream_rng(&r, seed, STREAM_VAL);
    balanced_labels(d->val_y, n_val, classes, &r);
    synth_samples(d->val_x, d->val_y, n_val, proto, m, &r);
    nn_free_aligned(proto);

    nn_strlcpy(d->name, "synthetic", sizeof d->name);
    d->synthetic = 1;
    d->input = input;
    d->sample_floats = m;
    d->classes = classes;
    d->n_train = n_train;
    d->n_val = n_val;
    data_describe_synthetic(d, NULL);
    return 0;
}

int nn_data_synthetic(nn_shape input, int classes, long n_train, long n_val,
                      uint64_t seed, nn_dataset *ds, char *err, size_t err_len)
{
    nn_dataset d = {0};
    return data_finish(&d, synth_build(input, classes, n_train, n_val, seed, &d, err, err_len),
                       ds);
}

/* ---------------------------------------------------------------------------
 * Random regression (seed 001: torch.randn for both inputs and targets)
 */

/* Standard normals by Marsaglia and Tsang's ziggurat (128 layers): 99% of
 * draws cost one splitmix call, a compare and a multiply, three times faster
 * than the polar method (whose logf, division and unpredictable rejections
 * took 0.7 s for seed 001's 84M numbers). The layer index comes from the low
 * bits and the value from the high 32, so they are independent (the original
 * 32-bit version reused bits). Checked against the normal CDF by histogram
 * chi-square on 84M draws, tail beyond ZIG_R included. */
#define ZIG_LAYERS 128
#define ZIG_R 3.442619855899        /* where the tail starts */
#define ZIG_V 9.91256303526217e-3   /* area of each layer */

typedef struct zig_table {
    uint32_t k[ZIG_LAYERS];         /* |hz| below k[i]: inside layer i's rectangle */
    float w[ZIG_LAYERS];            /* hz * w[i] is the deviate */
    float f[ZIG_LAYERS];            /* the density exp(-x^2/2) at layer edges */
} zig_table;

static void zig_init(zig_table *z)
{
    const double m = 2147483648.0;  /* 2^31: hz is a signed 32-bit value */
    double d = ZIG_R, t = d, q = ZIG_V / exp(-0.5 * d * d);
    z->k[0] = (uint32_t)(d / q * m);
    z->k[1] = 0;
    z->w[0] = (float)(q / m);
    z->w[ZIG_LAYERS - 1] = (float)(d / m);
    z->f[0] = 1.0f;
    z->f[ZIG_LAYERS - 1] = (float)exp(-0.5 * d * d);
    for (int i = ZIG_LAYERS - 2; i >= 1; i--) {
        d = sqrt(-2.0 * log(ZIG_V / d + exp(-0.5 * d * d)));
        z->k[i + 1] = (uint32_t)(d / t * m);
        t = d;
        z->f[i] = (float)exp(-0.5 * d * d);
        z->w[i] = (float)(d / m);
    }
}

static uint32_t abs32(int32_t v)
{
    return v < 0 ? 0u - (uint32_t)v : (uint32_t)v;   /* defined for INT32_MIN too */
}

/* The rare draws outside a layer's rectangle: the tail (layer 0) by
 * Marsaglia's exponential method, the wedges by rejection on the density. */
static float zig_slow(const zig_table *z, nn_rng *r, int32_t hz, int i)
{
    for (;;) {
        float x = (float)hz * z->w[i];
        if (i == 0) {
            double a, b;
            do {
                a = -log(1.0 - nn_rng_uniform(r)) / ZIG_R;
                b = -log(1.0 - nn_rng_uniform(r));
            } while (b + b < a * a);
            return (float)(hz > 0 ? ZIG_R + a : -ZIG_R - a);
        }
        if (z->f[i] + (float)nn_rng_uniform(r) * (z->f[i - 1] - z->f[i]) < expf(-0.5f * x * x))
            return x;
        uint64_t u = nn_rng_u64(r);
        hz = (int32_t)(u >> 32);
        i = (int)(u & (ZIG_LAYERS - 1));
        if (abs32(hz) < z->k[i])
            return (float)hz * z->w[i];
    }
}

static void fill_normal(float *x, size_t n, const zig_table *z, nn_rng *r)
{
    for (size_t j = 0; j < n; j++) {
        uint64_t u = nn_rng_u64(r);
        int32_t hz = (int32_t)(u >> 32);
        int i = (int)(u & (ZIG_LAYERS - 1));
        x[j] = abs32(hz) < z->k[i] ? (float)hz * z->w[i] : zig_slow(z, r, hz, i);
    }
}

static int regression_build(int features, int targets, long rows, long val_rows,
                            uint64_t seed, nn_dataset *d, char *err, size_t err_len)
{
    nn_rng r;
    zig_table z;
    if (features <= 0 || targets <= 0 || rows <= 0 || val_rows < 0)
        return nn_errorf(err, err_len, "random data: %d features, %d targets, %ld rows, "
                         "%ld validation rows (need > 0, > 0, > 0, >= 0)",
                         features, targets, rows, val_rows);
    if (alloc_split(rows, (size_t)features, &d->train_x, NULL)
        || alloc_split(rows, (size_t)targets, &d->train_t, NULL)
        || alloc_split(val_rows, (size_t)features, &d->val_x, NULL)
        || alloc_split(val_rows, (size_t)targets, &d->val_t, NULL))
        return nn_errorf(err, err_len, "random data: out of memory for %ld + %ld rows of "
                         "%d features", rows, val_rows, features);
    zig_init(&z);
    stream_rng(&r, seed, STREAM_TRAIN);
    fill_normal(d->train_x, (size_t)rows * features, &z, &r);
    stream_rng(&r, seed, STREAM_TRAIN_T);
    fill_normal(d->train_t, (size_t)rows * targets, &z, &r);
    stream_rng(&r, seed, STREAM_VAL);
    fill_normal(d->val_x, (size_t)val_rows * features, &z, &r);
    stream_rng(&r, seed, STREAM_VAL_T);
    fill_normal(d->val_t, (size_t)val_rows * targets, &z, &r);

    nn_strlcpy(d->name, "random", sizeof d->name);
    data_set_text(d->description, sizeof d->description, "random regression: %ld train, %ld "
                  "validation rows of %d features -> %d target%s, all N(0,1) (like seed 001)",
                  rows, val_rows, features, targets, targets == 1 ? "" : "s");
    d->synthetic = 1;
    data_set_shape(d, 1, features, 0, 0);
    d->target_width = targets;
    d->n_train = rows;
    d->n_val = val_rows;
    return 0;
}

int nn_data_random_regression(int features, int targets, long rows, long val_rows,
                              uint64_t seed, nn_dataset *ds, char *err, size_t err_len)
{
    nn_dataset d = {0};
    return data_finish(&d, regression_build(features, targets, rows, val_rows, seed, &d,
                                            err, err_len), ds);
}

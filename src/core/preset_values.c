/* src/core/preset_values.c - the preset's values: the defaults every key falls
 * back to, the input and the rows each data set gives, and the value rules
 * of preset_values.h (strict parsing, range checks, the writer's text,
 * shapes, the message of a bad key). */
#include "preset_values.h"
#include "data.h"           /* the standard sets' sizes */
#include "util.h"

#include <float.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* check_text's limit for a dir value, not the array, must be the binding one */
_Static_assert(NN_DIR_LEN > NN_MAX_LINE, "a [data] dir the format allows must fit the preset");

const char *const nn_data_names[3] = { "mnist", "cifar10", "random" };
const char *const nn_loss_names[2] = { "cross_entropy", "mse" };
const char *const nn_opt_names[2] = { "sgd", "adam" };
const char *const nn_device_names[3] = { "cpu", "cpu-ref", "gpu" };
const char *const nn_init_names[2] = { "default", "xavier_normal" };

/* ---------------------------------------------------------------- defaults */

void nn_preset_defaults(nn_preset *p)
{
    memset(p, 0, sizeof *p);           /* memcmp-able specs: no stray bytes */
    p->data = NN_DATA_MNIST;
    p->rows = 1000000;
    p->val_rows = 2000;
    p->features = 84;
    p->targets = 1;
    p->loss = NN_LOSS_XENT;
    nn_strlcpy(p->device, "cpu", sizeof p->device);
    p->batch = 32;
    p->epochs = 1;
    p->log_every = 2000;
    p->overlap = 1;                    /* ranks: the sums overlap the backward */
    p->data_on_device = 1;             /* the engine's defaults (nn_job_config_init) */
    p->graph = 1;
    p->sweep_from = 1;
    p->sweep_to = 4096;
    p->sweep_steps = 20;
    p->task_val = 100;                 /* seed 002's val */
    p->opt = NN_OPT_SGD;
    p->lr = 0.001f;
    p->beta1 = 0.9f;
    p->beta2 = 0.999f;
    p->eps = 1e-8f;
}

nn_shape nn_preset_input_shape(const nn_preset *p)
{
    nn_shape s = { 0, { 0, 0, 0 } };
    switch (p->data) {
    case NN_DATA_MNIST:   s = (nn_shape){ 3, { 1, 28, 28 } }; break;
    case NN_DATA_CIFAR10: s = (nn_shape){ 3, { 3, 32, 32 } }; break;
    case NN_DATA_RANDOM:  s = (nn_shape){ 1, { p->features, 0, 0 } }; break;
    }
    return s;
}

int nn_preset_classes(const nn_preset *p)
{
    return p->data == NN_DATA_RANDOM ? 0 : 10;
}

long nn_preset_data_rows(const nn_preset *p, long *val_rows)
{
    long train = 0, val = 0;
    switch (p->data) {
    case NN_DATA_MNIST:   train = MNIST_TRAIN; val = MNIST_VAL; break;
    case NN_DATA_CIFAR10: train = CIFAR_TRAIN; val = CIFAR_VAL; break;
    case NN_DATA_RANDOM:  train = p->rows; val = p->val_rows; break;
    }
    if (val_rows)
        *val_rows = val;
    return train;
}

long nn_preset_steps_per_epoch(const nn_preset *p, int batch)
{
    return batch > 0 ? (nn_preset_data_rows(p, NULL) + batch - 1) / batch : 0;
}

int nn_preset_has_measured(const nn_preset *p)
{
    return p->measured_cpu_s > 0 || p->measured_gpu_s > 0;
}

/* The network is the preset's own (a front end changes only the batch and
 * the epochs); measured_batch 0 (a preset built in memory, not checked yet)
 * stands for the preset's own [train] values. */
int nn_preset_is_measured_job(const nn_preset *p, int batch, int epochs)
{
    int own_batch = p->measured_batch > 0 ? p->measured_batch : p->batch;
    int own_epochs = p->measured_epochs > 0 ? p->measured_epochs : p->epochs;
    return nn_preset_has_measured(p) && batch == own_batch && epochs == own_epochs;
}

/* ---------------------------------------------------------------- shapes */

void nn_shape_format(const nn_shape *s, char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = '\0';
    if (s->rank < 1 || s->rank > 3) {
        nn_strlcpy(buf, "?", len);
        return;
    }
    size_t used = 0;
    for (int i = 0; i < s->rank && used < len; i++) {
        int w = snprintf(buf + used, len - used, i ? "x%d" : "%d", s->dim[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

long nn_shape_count(const nn_shape *s)
{
    long n = 1;
    if (s->rank < 1 || s->rank > 3)
        return -1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dim[i] < 1 || n > LONG_MAX / s->dim[i])
            return -1;
        n *= s->dim[i];
    }
    return n;
}

/* ---------------------------------------------------------------- messages */

int nn_key_error(const nn_checker *c, const char *section, const char *key,
                 const char *value, const char *fmt, ...)
{
    char why[NN_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return nn_errorf(c->err, c->err_len, "%s: [%s] %s = %s: %s", c->where, section, key,
                     value, why);
}

/* ---------------------------------------------------------------- names */

void nn_join_names(const char *const *names, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
        int w = snprintf(buf + used, len - used, "%s%s", sep, names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int nn_find_name(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(names[i], s) == 0)
            return i;
    return -1;
}

/* ---------------------------------------------------------------- shapes */

int nn_shape_make(nn_shape *s, int rank, const long *d)
{
    long n = 1;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < rank; i++) {
        if (d[i] < 1 || n > NN_MAX_VALUES / d[i])
            return -1;
        n *= d[i];
        s->dim[i] = (int)d[i];
    }
    s->rank = rank;
    return 0;
}

/* "1x16" -> (1, 16). Ranks 1..3, every dim in 1..NN_MAX_VALUES. */
static int parse_shape(const char *s, nn_shape *out, char *why, size_t len)
{
    char buf[128];
    long d[3];
    int rank = 0;
    if (nn_strlcpy(buf, s, sizeof buf) >= sizeof buf)
        return nn_errorf(why, len, "too long");
    for (char *tok = buf, *x; tok; tok = x) {
        x = strchr(tok, 'x');
        if (x)
            *x++ = '\0';
        if (rank == 3 || nn_parse_long(tok, &d[rank]) != 0)
            return nn_errorf(why, len, "expected 1 to 3 sizes like 1x16 or 3x32x32");
        if (d[rank] < 1)
            return nn_errorf(why, len, "every size must be >= 1");
        rank++;
    }
    if (nn_shape_make(out, rank, d) != 0)
        return nn_errorf(why, len, "more than %ld values", NN_MAX_VALUES);
    return 0;
}

/* ---------------------------------------------------------------- ranges */

static int in_range(double v, nn_range r)
{
    if (!isfinite(v))
        return 0;
    if (r.lo_open ? !(v > r.lo) : !(v >= r.lo))
        return 0;
    return r.hi_open ? v < r.hi : v <= r.hi;
}

void nn_range_format(nn_range r, int integral, char *buf, size_t len)
{
    if (isinf(r.hi))
        snprintf(buf, len, "%s %g", r.lo_open ? ">" : ">=", r.lo);
    else if (integral)
        snprintf(buf, len, "%.0f..%.0f", r.lo, r.hi);
    else
        snprintf(buf, len, "%c%g, %g%c", r.lo_open ? '(' : '[', r.lo, r.hi, r.hi_open ? ')' : ']');
}

static int range_error(nn_range r, int integral, char *why, size_t len)
{
    char range[64];
    nn_range_format(r, integral, range, sizeof range);
    return nn_errorf(why, len, "must be %s%s", isinf(r.hi) ? "" : "in ", range);
}

/* ---------------------------------------------------------------- parse, check, format */

static int parse_integer(enum nn_vtype t, const char *s, nn_range r, void *dst, char *why, size_t len)
{
    long l;
    if (nn_parse_long(s, &l) != 0)
        return nn_errorf(why, len, "not a whole number");
    if (!in_range((double)l, r))
        return range_error(r, 1, why, len);
    if (t == NN_V_INT)
        *(int *)dst = (int)l;         /* every int range lies within int */
    else
        *(long *)dst = l;
    return 0;
}

static int parse_float(const char *s, nn_range r, float *dst, char *why, size_t len)
{
    double v;
    if (nn_parse_double(s, &v) != 0)
        return nn_errorf(why, len, "not a number");
    /* the value is kept as a float: check the float that will be kept */
    if (fabs(v) > FLT_MAX)
        return nn_errorf(why, len, "too large for a float");
    if (v != 0 && (float)v == 0)
        return nn_errorf(why, len, "too small for a float");
    if (!in_range((double)(float)v, r))
        return range_error(r, 0, why, len);
    *dst = (float)v;
    return 0;
}

/* "layer7" -> 7, "data" -> NN_FROM_DATA (case-blind, blanks around allowed). */
static int parse_layer_ref(const char *s, int *out, char *why, size_t len)
{
    char word[32];
    size_t a = strspn(s, " \t"), n = strcspn(s + a, " \t");
    long l;
    if (n == 0 || n >= sizeof word || s[a + n + strspn(s + a + n, " \t")] != '\0')
        return nn_errorf(why, len, "expected a layer, like layer3, or data");
    memcpy(word, s + a, n);
    word[n] = '\0';
    if (strcasecmp(word, "data") == 0) {
        *out = NN_FROM_DATA;
        return 0;
    }
    if (strncasecmp(word, "layer", 5) != 0 || word[5] == '0' ||
        strspn(word + 5, "0123456789") != n - 5 || nn_parse_long(word + 5, &l) != 0 ||
        l < 1 || l > NN_MAX_LAYERS)
        return nn_errorf(why, len, "expected a layer, like layer3 (layer1..layer%d), or data",
                         NN_MAX_LAYERS);
    *out = (int)l;
    return 0;
}

/* "layer3, layer5": exactly two references. */
static int parse_layer_pair(const char *s, int *out, char *why, size_t len)
{
    const char *comma = strchr(s, ',');
    char first[64];
    if (!comma || strchr(comma + 1, ',') || (size_t)(comma - s) >= sizeof first)
        return nn_errorf(why, len, "expected two layers, like layer3, layer5");
    memcpy(first, s, (size_t)(comma - s));
    first[comma - s] = '\0';
    return parse_layer_ref(first, &out[0], why, len) || parse_layer_ref(comma + 1, &out[1], why, len)
        ? -1 : 0;
}

static int layer_ref_ok(int v, int required)
{
    return v == NN_FROM_DATA || (v >= !!required && v <= NN_MAX_LAYERS);
}

static void format_layer_ref(int v, char *buf, size_t len)
{
    if (v == NN_FROM_DATA)
        snprintf(buf, len, "data");
    else
        snprintf(buf, len, "layer%d", v);
}

static int parse_init(const char *s, int *dst, char *why, size_t len)
{
    char names[64];
    int i = nn_find_name(nn_init_names, (int)NN_COUNT(nn_init_names), s);
    if (i < 0) {
        nn_join_names(nn_init_names, (int)NN_COUNT(nn_init_names), names, sizeof names);
        return nn_errorf(why, len, "expected %s", names);
    }
    *dst = i;
    return 0;
}

int nn_value_parse(enum nn_vtype t, const char *s, nn_range r, void *dst, char *why, size_t len)
{
    if (s[strspn(s, " \t")] == '\0')
        return nn_errorf(why, len, "no value given");
    switch (t) {
    case NN_V_INT:
    case NN_V_LONG:
        return parse_integer(t, s, r, dst, why, len);
    case NN_V_FLOAT:
        return parse_float(s, r, dst, why, len);
    case NN_V_BOOL:
        if (strcasecmp(s, "true") == 0)
            *(int *)dst = 1;
        else if (strcasecmp(s, "false") == 0)
            *(int *)dst = 0;
        else
            return nn_errorf(why, len, "expected true or false");
        return 0;
    case NN_V_SHAPE:
        return parse_shape(s, dst, why, len);
    case NN_V_LAYER:
        return parse_layer_ref(s, dst, why, len);
    case NN_V_LAYERS:
        return parse_layer_pair(s, dst, why, len);
    case NN_V_NOT_BOOL:
        if (nn_value_parse(NN_V_BOOL, s, r, dst, why, len) != 0)
            return -1;
        *(int *)dst = !*(int *)dst;
        return 0;
    case NN_V_INIT:
        return parse_init(s, dst, why, len);
    }
    return nn_errorf(why, len, "internal: unknown value type");
}

int nn_value_check(enum nn_vtype t, const void *src, nn_range r, char *why, size_t len)
{
    const nn_shape *s;
    switch (t) {
    case NN_V_INT:
        return in_range(*(const int *)src, r) ? 0 : range_error(r, 1, why, len);
    case NN_V_LONG:
        return in_range((double)*(const long *)src, r) ? 0 : range_error(r, 1, why, len);
    case NN_V_FLOAT:
        return in_range(*(const float *)src, r) ? 0 : range_error(r, 0, why, len);
    case NN_V_BOOL:
    case NN_V_NOT_BOOL:
        return (*(const int *)src & ~1) == 0 ? 0 : nn_errorf(why, len, "expected true or false");
    case NN_V_INIT:
        return (unsigned)*(const int *)src < NN_COUNT(nn_init_names)
                   ? 0 : nn_errorf(why, len, "expected default or xavier_normal");
    case NN_V_SHAPE:
        s = src;
        if (s->rank < 1 || s->rank > 3 || nn_shape_count(s) < 1 || nn_shape_count(s) > NN_MAX_VALUES)
            return nn_errorf(why, len, "expected 1 to 3 sizes >= 1, like 1x16");
        return 0;
    case NN_V_LAYER:        /* 0: absent */
        return layer_ref_ok(*(const int *)src, 0) ? 0
            : nn_errorf(why, len, "expected a layer, like layer3, or data");
    case NN_V_LAYERS:
        return layer_ref_ok(((const int *)src)[0], 1) && layer_ref_ok(((const int *)src)[1], 1) ? 0
            : nn_errorf(why, len, "expected two layers, like layer3, layer5");
    }
    return nn_errorf(why, len, "internal: unknown value type");
}

/* The shortest "%.Ng" (N <= 9) that reads back as the same float: 9 digits
 * always round-trip a float, fewer keep 0.001 from becoming 0.00100000005.
 * One without an exponent is preferred when there is one (50, not 5e+01:
 * the seconds a write-up measured). */
static void format_float(float f, char *buf, size_t len)
{
    char first[64] = "";
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, len, "%.*g", digits, (double)f);
        if ((float)strtod(buf, NULL) != f)
            continue;
        if (!strchr(buf, 'e'))
            return;
        if (!first[0])
            nn_strlcpy(first, buf, sizeof first);
    }
    snprintf(buf, len, "%s", first);
}

void nn_value_format(enum nn_vtype t, const void *src, char *buf, size_t len)
{
    switch (t) {
    case NN_V_INT:   snprintf(buf, len, "%d", *(const int *)src); break;
    case NN_V_LONG:  snprintf(buf, len, "%ld", *(const long *)src); break;
    case NN_V_FLOAT: format_float(*(const float *)src, buf, len); break;
    case NN_V_BOOL:  snprintf(buf, len, "%s", *(const int *)src ? "true" : "false"); break;
    case NN_V_SHAPE: nn_shape_format((const nn_shape *)src, buf, len); break;
    case NN_V_LAYER: format_layer_ref(*(const int *)src, buf, len); break;
    case NN_V_LAYERS: {
        char a[24], b[24];
        format_layer_ref(((const int *)src)[0], a, sizeof a);
        format_layer_ref(((const int *)src)[1], b, sizeof b);
        snprintf(buf, len, "%s, %s", a, b);
        break;
    }
    case NN_V_NOT_BOOL: snprintf(buf, len, "%s", *(const int *)src ? "false" : "true"); break;
    case NN_V_INIT:
        snprintf(buf, len, "%s", (unsigned)*(const int *)src < NN_COUNT(nn_init_names)
                                     ? nn_init_names[*(const int *)src] : "?");
        break;
    }
}

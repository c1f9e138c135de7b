/* src/core/preset.c - see preset.h.
 *
 * Reading: iniparser splits the file into "section:key" -> raw string; every
 * value is parsed here (strict numbers, range checks), and every section and
 * key must be known and apply to the chosen data set, optimiser or layer type,
 * so a typo is an error instead of a silent default. nn_preset_check then runs
 * shape inference. Writing: our own writer (iniparser_dump_ini drops comments
 * and does not quote), through a temp file, fsync and rename.
 *
 * Nothing here prints or exits: every failure is one line in err. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "nnlab/preset.h"
#include "atomic_file.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iniparser/iniparser.h>

#ifndef NN_SYSTEM_PRESETS_DIR
#define NN_SYSTEM_PRESETS_DIR "/usr/local/share/nnlab/presets"
#endif

#define MAX_DIM 1048576L          /* in, out, kernel, stride, padding, features, targets, batch */
#define MAX_ROWS 2147483647L      /* random rows: the data module indexes rows with int */
#define MAX_VALUES 2147483647L    /* values per sample after any layer: backends index with int */
#define MAX_LINE 1000             /* iniparser 4.1 rejects lines of 1023+ characters */
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- names */

/* Indexed by the enums of preset.h. */
static const char *const layer_names[NN_LAYER_KIND_COUNT] = {
    "linear", "conv2d", "conv1d", "maxpool2d", "maxpool1d", "maxlen",
    "flatten", "reshape", "relu", "tanh", "mish", "dropout",
};
static const char *const data_names[] = { "mnist", "cifar10", "random" };
static const char *const loss_names[] = { "cross_entropy", "mse" };
static const char *const opt_names[] = { "sgd", "adam" };
static const char *const device_names[] = { "cpu", "cpu-ref", "gpu" };

const char *nn_layer_kind_name(enum nn_layer_kind k)
{
    return (unsigned)k < NN_LAYER_KIND_COUNT ? layer_names[k] : "?";
}

/* "a, b or c" */
static void join_names(const char *const *names, int n, char *buf, size_t len)
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

static int find_name(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(names[i], s) == 0)   /* keys are case-blind, so values too */
            return i;
    return -1;
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

/* -1 for a malformed shape or one whose count does not fit a long. */
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

/* Fills s from dims computed in long; -1 when the result has more than
 * MAX_VALUES values (so every dim also fits an int). Unused dims stay 0 so that
 * specs compare with memcmp. */
static int make_shape(nn_shape *s, int rank, const long *d)
{
    long n = 1;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < rank; i++) {
        if (d[i] < 1 || n > MAX_VALUES / d[i])
            return -1;
        n *= d[i];
        s->dim[i] = (int)d[i];
    }
    s->rank = rank;
    return 0;
}

/* ---------------------------------------------------------------- values */

/* An allowed interval; INFINITY as hi means "no upper bound". */
typedef struct range {
    double lo, hi;
    unsigned char lo_open, hi_open;
} range;

#define CLOSED(lo, hi) { (lo), (hi), 0, 0 }
#define AT_LEAST(lo) { (lo), INFINITY, 0, 1 }
#define ABOVE(lo) { (lo), INFINITY, 1, 1 }
#define UNIT_HALF_OPEN { 0, 1, 0, 1 }        /* [0, 1) */

enum ftype { F_INT, F_LONG, F_FLOAT, F_BOOL, F_SHAPE };

static int in_range(double v, range r)
{
    if (!isfinite(v))
        return 0;
    if (r.lo_open ? !(v > r.lo) : !(v >= r.lo))
        return 0;
    return r.hi_open ? v < r.hi : v <= r.hi;
}

static int range_error(range r, int integral, char *why, size_t len)
{
    if (isinf(r.hi))
        return nn_errorf(why, len, "must be %s %g", r.lo_open ? ">" : ">=", r.lo);
    if (integral)
        return nn_errorf(why, len, "must be in %.0f..%.0f", r.lo, r.hi);
    return nn_errorf(why, len, "must be in %c%g, %g%c", r.lo_open ? '(' : '[', r.lo,
                     r.hi, r.hi_open ? ')' : ']');
}

/* The shortest "%.Ng" (N <= 9) that reads back as the same float: 9 digits
 * always round-trip a float, fewer keep 0.001 from becoming 0.00100000005. */
static void format_float(float f, char *buf, size_t len)
{
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, len, "%.*g", digits, (double)f);
        if ((float)strtod(buf, NULL) == f)
            return;
    }
}

static void format_value(enum ftype t, const void *src, char *buf, size_t len)
{
    switch (t) {
    case F_INT:   snprintf(buf, len, "%d", *(const int *)src); break;
    case F_LONG:  snprintf(buf, len, "%ld", *(const long *)src); break;
    case F_FLOAT: format_float(*(const float *)src, buf, len); break;
    case F_BOOL:  snprintf(buf, len, "%s", *(const int *)src ? "true" : "false"); break;
    case F_SHAPE: nn_shape_format((const nn_shape *)src, buf, len); break;
    }
}

/* "1x16" -> (1, 16). Ranks 1..3, every dim in 1..MAX_VALUES. */
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
    if (make_shape(out, rank, d) != 0)
        return nn_errorf(why, len, "more than %ld values", MAX_VALUES);
    return 0;
}

/* Parses raw text s into *dst; on error writes why (no file/section prefix). */
static int parse_value(enum ftype t, const char *s, range r, void *dst, char *why, size_t len)
{
    long l;
    double v;
    if (s[strspn(s, " \t")] == '\0')
        return nn_errorf(why, len, "no value given");
    switch (t) {
    case F_INT:
    case F_LONG:
        if (nn_parse_long(s, &l) != 0)
            return nn_errorf(why, len, "not a whole number");
        if (!in_range((double)l, r))
            return range_error(r, 1, why, len);
        if (t == F_INT)
            *(int *)dst = (int)l;         /* every int range lies within int */
        else
            *(long *)dst = l;
        return 0;
    case F_FLOAT:
        if (nn_parse_double(s, &v) != 0)
            return nn_errorf(why, len, "not a number");
        /* the value is kept as a float: check the float that will be kept */
        if (fabs(v) > FLT_MAX)
            return nn_errorf(why, len, "too large for a float");
        if (v != 0 && (float)v == 0)
            return nn_errorf(why, len, "too small for a float");
        if (!in_range((double)(float)v, r))
            return range_error(r, 0, why, len);
        *(float *)dst = (float)v;
        return 0;
    case F_BOOL:
        if (strcasecmp(s, "true") == 0)
            *(int *)dst = 1;
        else if (strcasecmp(s, "false") == 0)
            *(int *)dst = 0;
        else
            return nn_errorf(why, len, "expected true or false");
        return 0;
    case F_SHAPE:
        return parse_shape(s, dst, why, len);
    }
    return nn_errorf(why, len, "internal: unknown value type");
}

/* The same rules for a value already in memory (a preset built by the UI). */
static int check_value(enum ftype t, const void *src, range r, char *why, size_t len)
{
    const nn_shape *s;
    switch (t) {
    case F_INT:
        return in_range(*(const int *)src, r) ? 0 : range_error(r, 1, why, len);
    case F_LONG:
        return in_range((double)*(const long *)src, r) ? 0 : range_error(r, 1, why, len);
    case F_FLOAT:
        return in_range(*(const float *)src, r) ? 0 : range_error(r, 0, why, len);
    case F_BOOL:
        return (*(const int *)src & ~1) == 0 ? 0 : nn_errorf(why, len, "expected true or false");
    case F_SHAPE:
        s = src;
        if (s->rank < 1 || s->rank > 3 || nn_shape_count(s) < 1 || nn_shape_count(s) > MAX_VALUES)
            return nn_errorf(why, len, "expected 1 to 3 sizes >= 1, like 1x16");
        return 0;
    }
    return nn_errorf(why, len, "internal: unknown value type");
}

/* ---------------------------------------------------------------- key tables */

static int is_random(const nn_preset *p) { return p->data == NN_DATA_RANDOM; }
static int is_sgd(const nn_preset *p) { return p->opt == NN_OPT_SGD; }
static int is_adam(const nn_preset *p) { return p->opt == NN_OPT_ADAM; }

/* Numeric keys of [data], [train] and [optimizer], in the order the writer
 * writes them. The reader, the checker and the writer all walk this table, so
 * a key added here is read, checked and saved. */
typedef struct scalar_key {
    const char *section, *key;
    enum ftype type;
    size_t off;                          /* into nn_preset */
    range r;
    int (*applies)(const nn_preset *);   /* NULL: always */
    const char *only;                    /* "set = random": the condition, for messages */
} scalar_key;

#define PF(f) offsetof(nn_preset, f)
static const scalar_key scalar_keys[] = {
    { "data", "rows", F_LONG, PF(rows), CLOSED(1, MAX_ROWS), is_random, "set = random" },
    { "data", "val_rows", F_LONG, PF(val_rows), CLOSED(0, MAX_ROWS), is_random, "set = random" },
    { "data", "features", F_INT, PF(features), CLOSED(1, MAX_DIM), is_random, "set = random" },
    { "data", "targets", F_INT, PF(targets), CLOSED(1, MAX_DIM), is_random, "set = random" },
    { "train", "batch", F_INT, PF(batch), CLOSED(1, MAX_DIM), NULL, NULL },
    { "train", "epochs", F_INT, PF(epochs), CLOSED(1, 100000), NULL, NULL },
    { "train", "log_every", F_LONG, PF(log_every), AT_LEAST(1), NULL, NULL },
    { "optimizer", "lr", F_FLOAT, PF(lr), ABOVE(0), NULL, NULL },
    { "optimizer", "momentum", F_FLOAT, PF(momentum), CLOSED(0, 1), is_sgd, "type = sgd" },
    { "optimizer", "dampening", F_FLOAT, PF(dampening), CLOSED(0, 1), is_sgd, "type = sgd" },
    { "optimizer", "nesterov", F_BOOL, PF(nesterov), CLOSED(0, 1), is_sgd, "type = sgd" },
    { "optimizer", "beta1", F_FLOAT, PF(beta1), UNIT_HALF_OPEN, is_adam, "type = adam" },
    { "optimizer", "beta2", F_FLOAT, PF(beta2), UNIT_HALF_OPEN, is_adam, "type = adam" },
    { "optimizer", "eps", F_FLOAT, PF(eps), ABOVE(0), is_adam, "type = adam" },
    { "optimizer", "weight_decay", F_FLOAT, PF(weight_decay), AT_LEAST(0), NULL, NULL },
};

/* Text keys, read and written by hand because each one is special. */
static const struct { const char *section, *key; } text_keys[] = {
    { "preset", "name" }, { "preset", "description" },
    { "data", "set" }, { "data", "dir" },
    { "train", "loss" }, { "train", "device" },
    { "optimizer", "type" },
};

static const char *const static_sections[] = { "preset", "data", "train", "optimizer" };

#define K(kind) (1u << (kind))
#define LIN K(NN_LAYER_LINEAR)
#define CONV (K(NN_LAYER_CONV2D) | K(NN_LAYER_CONV1D))
#define POOL (K(NN_LAYER_MAXPOOL2D) | K(NN_LAYER_MAXPOOL1D))

/* Keys of [layerN] besides `type`, with the kinds that take them and the kinds
 * that must give them. `in` is optional: inferred when absent, checked when
 * given. Pool stride defaults to the kernel, conv stride to 1. */
typedef struct layer_key {
    const char *key;
    enum ftype type;
    size_t off;                          /* into nn_layer_spec */
    range r;
    unsigned kinds, required;
} layer_key;

#define LF(f) offsetof(nn_layer_spec, f)
static const layer_key layer_keys[] = {
    { "in", F_INT, LF(in), CLOSED(1, MAX_DIM), LIN | CONV, 0 },
    { "out", F_INT, LF(out), CLOSED(1, MAX_DIM), LIN | CONV, LIN | CONV },
    { "kernel", F_INT, LF(kernel), CLOSED(1, MAX_DIM), CONV | POOL, CONV | POOL },
    { "stride", F_INT, LF(stride), CLOSED(1, MAX_DIM), CONV | POOL, 0 },
    { "padding", F_INT, LF(padding), CLOSED(0, MAX_DIM), CONV, 0 },
    { "p", F_FLOAT, LF(p), UNIT_HALF_OPEN, K(NN_LAYER_DROPOUT), K(NN_LAYER_DROPOUT) },
    { "shape", F_SHAPE, LF(shape), CLOSED(0, 0) /* unused */, K(NN_LAYER_RESHAPE), K(NN_LAYER_RESHAPE) },
};

static int has_key(unsigned mask, enum nn_layer_kind k) { return (mask >> k) & 1u; }

/* "type, in and out": the keys a layer kind takes, or (required) the keys it
 * must give, for messages. */
static void layer_key_list(enum nn_layer_kind kind, int required, char *buf, size_t len)
{
    const char *names[COUNT(layer_keys) + 1];
    int n = 0;
    if (!required)
        names[n++] = "type";
    for (size_t i = 0; i < COUNT(layer_keys); i++)
        if (has_key(required ? layer_keys[i].required : layer_keys[i].kinds, kind))
            names[n++] = layer_keys[i].key;
    join_names(names, n, buf, len);
}

static const layer_key *find_layer_key(const char *key)
{
    for (size_t i = 0; i < COUNT(layer_keys); i++)
        if (strcmp(layer_keys[i].key, key) == 0)
            return &layer_keys[i];
    return NULL;
}

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

/* ================================================================ check */

typedef struct checker {
    const char *where;
    char *err;
    size_t err_len;
} checker;

static int key_error(const checker *c, const char *section, const char *key,
                     const char *value, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* "FILE: [section] key = value: why" */
static int key_error(const checker *c, const char *section, const char *key,
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

/* A string survives our writer and iniparser: one line, quotable with " or ',
 * short enough for iniparser's line buffer. */
static const char *text_problem(const char *s, size_t max)
{
    if (strlen(s) > max)
        return "too long";
    for (const unsigned char *u = (const unsigned char *)s; *u; u++)
        if (*u < 0x20 || *u == 0x7f)
            return "control characters cannot be stored";
    if (strchr(s, '"') && strchr(s, '\''))
        return "cannot hold both ' and \" (INI has no escapes)";
    return NULL;
}

static int check_text(const checker *c, const char *section, const char *key, const char *s)
{
    const char *why = text_problem(s, MAX_LINE - strlen(key) - 5);
    return why ? key_error(c, section, key, s, "%s", why) : 0;
}

/* An enum field of a preset built in memory holds one of its names. */
static int check_enum(const checker *c, const char *section, const char *key, int v,
                      const char *const *names, int n)
{
    char list[NN_TEXT_LEN], value[16];
    if (v >= 0 && v < n)
        return 0;
    join_names(names, n, list, sizeof list);
    snprintf(value, sizeof value, "%d", v);
    return key_error(c, section, key, value, "expected %s", list);
}

static int check_texts(const checker *c, const nn_preset *p)
{
    if (check_enum(c, "data", "set", (int)p->data, data_names, COUNT(data_names))
        || check_enum(c, "train", "loss", (int)p->loss, loss_names, COUNT(loss_names))
        || check_enum(c, "optimizer", "type", (int)p->opt, opt_names, COUNT(opt_names)))
        return -1;
    if (find_name(device_names, COUNT(device_names), p->device) < 0)
        return key_error(c, "train", "device", p->device, "expected cpu, cpu-ref or gpu");
    if (p->name[0] == '\0')
        return key_error(c, "preset", "name", "\"\"", "must not be empty");
    if (check_text(c, "preset", "name", p->name) || check_text(c, "preset", "description", p->description)
        || check_text(c, "data", "dir", p->data_dir))
        return -1;
    return 0;
}

static int check_scalars(const checker *c, const nn_preset *p)
{
    char why[NN_ERR_LEN], v[64];
    for (size_t i = 0; i < COUNT(scalar_keys); i++) {
        const scalar_key *k = &scalar_keys[i];
        const void *src = (const char *)p + k->off;
        if (k->applies && !k->applies(p))
            continue;
        if (check_value(k->type, src, k->r, why, sizeof why) != 0) {
            format_value(k->type, src, v, sizeof v);
            return key_error(c, k->section, k->key, v, "%s", why);
        }
    }
    /* PyTorch's rule: Nesterov momentum needs momentum and no dampening */
    if (p->opt == NN_OPT_SGD && p->nesterov && (p->momentum <= 0 || p->dampening != 0))
        return key_error(c, "optimizer", "nesterov", "true", "needs momentum > 0 and dampening = 0");
    return 0;
}

/* ---------------------------------------------------------------- shape inference */

static int layer_error(const checker *c, int i, const nn_layer_spec *l, const char *key,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* "FILE: [layerN] key = value: why", the value read back from the spec. */
static int layer_error(const checker *c, int i, const nn_layer_spec *l, const char *key,
                       const char *fmt, ...)
{
    char section[24], value[64], why[NN_ERR_LEN];
    const layer_key *k = find_layer_key(key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (k)
        format_value(k->type, (const char *)l + k->off, value, sizeof value);
    else
        nn_strlcpy(value, nn_layer_kind_name(l->kind), sizeof value);
    snprintf(section, sizeof section, "layer%d", i + 1);
    return key_error(c, section, key, value, "%s", why);
}

static const char *from(int i) { return i == 0 ? "the data gives" : "the previous layer gives"; }

static const char *rank_name(int rank)
{
    return rank == 3 ? "(C,H,W)" : rank == 2 ? "(C,L)" : "flat";
}

/* The layer's `in` against what arrives (features of a flat input, channels
 * otherwise): fills it when absent (0). */
static int check_in(const checker *c, int i, nn_layer_spec *l, nn_shape in)
{
    char s[64];
    if (l->in == 0)
        l->in = in.dim[0];
    if (l->in == in.dim[0])
        return 0;
    if (in.rank == 1)
        return layer_error(c, i, l, "in", "%s %d", from(i), in.dim[0]);
    nn_shape_format(&in, s, sizeof s);
    return layer_error(c, i, l, "in", "%s %d channels (%s)", from(i), in.dim[0], s);
}

static int need_rank(const checker *c, int i, const nn_layer_spec *l, nn_shape in, int rank)
{
    char s[64];
    if (in.rank == rank)
        return 0;
    nn_shape_format(&in, s, sizeof s);
    if (rank == 1)
        return layer_error(c, i, l, "type", "needs a flat input but %s %s: add a [flatten] layer before it",
                           from(i), s);
    if (in.rank == 1 && rank == 2)
        return layer_error(c, i, l, "type", "needs a %s input but %s %s: add a [reshape] layer before it (e.g. shape = 1x%d)",
                           rank_name(rank), from(i), s, in.dim[0]);
    return layer_error(c, i, l, "type", "needs a %s input but %s %s: add a [reshape] layer before it",
                       rank_name(rank), from(i), s);
}

static int too_big(const checker *c, int i, const nn_layer_spec *l)
{
    return layer_error(c, i, l, "type", "gives more than %ld values per sample", MAX_VALUES);
}

static int infer_linear(const checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    long d = l->out;
    if (need_rank(c, i, l, in, 1) || check_in(c, i, l, in))
        return -1;
    return make_shape(out, 1, &d) ? too_big(c, i, l) : 0;
}

/* conv1d on (C,L), conv2d on (C,H,W): out = (in + 2*pad - k)/stride + 1 per axis. */
static int infer_conv(const checker *c, int i, nn_layer_spec *l, nn_shape in, int rank, nn_shape *out)
{
    long d[3] = { l->out, 0, 0 };
    if (need_rank(c, i, l, in, rank) || check_in(c, i, l, in))
        return -1;
    for (int a = 1; a < rank; a++) {
        long padded = (long)in.dim[a] + 2L * l->padding;
        if (padded < l->kernel) {
            char s[64];
            nn_shape_format(&in, s, sizeof s);
            return layer_error(c, i, l, "kernel", "larger than the padded input (%s %s, padding %d)",
                               from(i), s, l->padding);
        }
        d[a] = (padded - l->kernel) / l->stride + 1;
    }
    return make_shape(out, rank, d) ? too_big(c, i, l) : 0;
}

/* maxpool1d on (C,L), maxpool2d on (C,H,W): out = (in - k)/stride + 1, floored
 * like PyTorch's default ceil_mode=False. */
static int infer_pool(const checker *c, int i, nn_layer_spec *l, nn_shape in, int rank, nn_shape *out)
{
    long d[3] = { in.dim[0], 0, 0 };
    if (need_rank(c, i, l, in, rank))
        return -1;
    for (int a = 1; a < rank; a++) {
        if (in.dim[a] < l->kernel) {
            char s[64];
            nn_shape_format(&in, s, sizeof s);
            return layer_error(c, i, l, "kernel", "larger than the input (%s %s)", from(i), s);
        }
        d[a] = (in.dim[a] - l->kernel) / l->stride + 1;
    }
    return make_shape(out, rank, d) ? too_big(c, i, l) : 0;
}

static int infer_reshape(const checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    long want = nn_shape_count(&l->shape), have = nn_shape_count(&in);
    char s[64];
    if (want == have) {
        *out = l->shape;
        return 0;
    }
    nn_shape_format(&in, s, sizeof s);
    if (in.rank == 1)
        return layer_error(c, i, l, "shape", "holds %ld values, but %s %s", want, from(i), s);
    return layer_error(c, i, l, "shape", "holds %ld values, but %s %s = %ld", want, from(i), s, have);
}

static int infer_layer(const checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    long n = nn_shape_count(&in), d[2] = { in.dim[0], 0 };
    switch (l->kind) {
    case NN_LAYER_LINEAR:    return infer_linear(c, i, l, in, out);
    case NN_LAYER_CONV2D:    return infer_conv(c, i, l, in, 3, out);
    case NN_LAYER_CONV1D:    return infer_conv(c, i, l, in, 2, out);
    case NN_LAYER_MAXPOOL2D: return infer_pool(c, i, l, in, 3, out);
    case NN_LAYER_MAXPOOL1D: return infer_pool(c, i, l, in, 2, out);
    case NN_LAYER_MAXLEN:
        return need_rank(c, i, l, in, 2) || make_shape(out, 1, d) ? -1 : 0;
    case NN_LAYER_FLATTEN:   return make_shape(out, 1, &n) ? too_big(c, i, l) : 0;
    case NN_LAYER_RESHAPE:   return infer_reshape(c, i, l, in, out);
    case NN_LAYER_RELU:
    case NN_LAYER_TANH:
    case NN_LAYER_MISH:
    case NN_LAYER_DROPOUT:
        *out = in;
        return 0;
    case NN_LAYER_KIND_COUNT:
        break;
    }
    return layer_error(c, i, l, "type", "unknown layer kind");
}

/* The values of the keys this kind takes; `in` may be 0 (= infer). */
static int check_layer_values(const checker *c, int i, const nn_layer_spec *l)
{
    char why[NN_ERR_LEN];
    for (size_t k = 0; k < COUNT(layer_keys); k++) {
        const layer_key *lk = &layer_keys[k];
        const void *src = (const char *)l + lk->off;
        if (!has_key(lk->kinds, l->kind) || (lk->off == LF(in) && l->in == 0))
            continue;
        if (check_value(lk->type, src, lk->r, why, sizeof why) != 0)
            return layer_error(c, i, l, lk->key, "%s", why);
    }
    return 0;
}

static int check_layers(const checker *c, nn_preset *p)
{
    nn_shape s = nn_preset_input_shape(p);
    if (p->n_layers < 1 || p->n_layers > NN_MAX_LAYERS)
        return nn_errorf(c->err, c->err_len, "%s: %d layers: a preset needs 1 to %d ([layer1] ...)",
                         c->where, p->n_layers, NN_MAX_LAYERS);
    for (int i = 0; i < p->n_layers; i++) {
        nn_layer_spec *l = &p->layers[i];
        if ((unsigned)l->kind >= NN_LAYER_KIND_COUNT)
            return layer_error(c, i, l, "type", "unknown layer kind %d", (int)l->kind);
        if (check_layer_values(c, i, l) != 0)
            return -1;
        l->in_shape = s;
        if (infer_layer(c, i, l, s, &l->out_shape) != 0)
            return -1;
        s = l->out_shape;
    }
    return 0;
}

/* cross_entropy needs one logit per class; mse one output per target. */
static int check_loss(const checker *c, const nn_preset *p)
{
    const nn_shape *out = &p->layers[p->n_layers - 1].out_shape;
    const char *loss = loss_names[p->loss], *set = data_names[p->data];
    int classes = nn_preset_classes(p), want = p->loss == NN_LOSS_XENT ? classes : p->targets;
    char s[64];
    if (p->loss == NN_LOSS_XENT && classes == 0)
        return key_error(c, "train", "loss", loss, "set = %s has regression targets: use mse", set);
    if (p->loss == NN_LOSS_MSE && classes != 0)
        return key_error(c, "train", "loss", loss, "set = %s has class labels: use cross_entropy", set);
    if (out->rank == 1 && out->dim[0] == want)
        return 0;
    nn_shape_format(out, s, sizeof s);
    if (p->loss == NN_LOSS_XENT)
        return key_error(c, "train", "loss", loss, "the last layer ([layer%d]) gives %s, but %s has %d classes: end with a linear layer with out = %d",
                         p->n_layers, s, set, classes, classes);
    return key_error(c, "train", "loss", loss, "the last layer ([layer%d]) gives %s, but [data] targets = %d",
                     p->n_layers, s, p->targets);
}

int nn_preset_check(nn_preset *p, const char *where, char *err, size_t err_len)
{
    checker c = { where ? where : "preset", err, err_len };
    if (check_texts(&c, p) || check_scalars(&c, p) || check_layers(&c, p) || check_loss(&c, p))
        return -1;
    return 0;
}

/* ================================================================ load */

typedef struct reader {
    dictionary *d;
    const char *file;
    checker c;                   /* same message format as the checker */
} reader;

/* iniparser reports through one process-wide callback. Ours keeps the first
 * message of the current load in a per-thread buffer: nothing may reach the
 * terminal (curses owns it), and two threads may load at once. */
static _Thread_local char ini_message[NN_ERR_LEN];

static int capture_ini_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int capture_ini_error(const char *fmt, ...)
{
    if (ini_message[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ini_message, sizeof ini_message, fmt, ap);
        va_end(ap);
    }
    return 0;
}

/* iniparser says "iniparser: syntax error in FILE (LINE):\n-> TEXT\n" or
 * "iniparser: input line too long in FILE (LINE)"; we say
 * "FILE: syntax error: line LINE: TEXT". */
static int syntax_error(const reader *r)
{
    const char *m = ini_message, *arrow = strstr(m, "\n-> ");
    const char *what = strncmp(m, "iniparser: ", 11) == 0 ? m + 11 : m;
    size_t first = strcspn(m, "\n");        /* length of the first line */
    long line = 0;
    char text[NN_ERR_LEN];
    if (!m[0])
        return nn_errorf(r->c.err, r->c.err_len, "%s: cannot read", r->file);
    if (!strstr(m, "syntax error") && !strstr(m, "too long"))
        return nn_errorf(r->c.err, r->c.err_len, "%s: cannot read: %.*s", r->file,
                         (int)strcspn(what, "\n"), what);
    /* the last '(' of the first line: the file name may hold one too */
    for (size_t i = first; i-- > 0;)
        if (m[i] == '(') {
            line = strtol(m + i + 1, NULL, 10);
            break;
        }
    if (arrow) {
        nn_strlcpy(text, arrow + 4, sizeof text);
        text[strcspn(text, "\n")] = '\0';
    } else {
        nn_strlcpy(text, "line too long", sizeof text);
    }
    return nn_errorf(r->c.err, r->c.err_len, "%s: syntax error: line %ld: %s", r->file, line, text);
}

static int open_dict(reader *r)
{
    struct stat st;
    if (stat(r->file, &st) != 0)
        return nn_errorf(r->c.err, r->c.err_len, "%s: cannot open: %s", r->file, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return nn_errorf(r->c.err, r->c.err_len, "%s: not a regular file", r->file);
    ini_message[0] = '\0';
    iniparser_set_error_callback(capture_ini_error);
    r->d = iniparser_load(r->file);
    if (r->d && ini_message[0] == '\0')
        return 0;
    if (r->d)
        iniparser_freedict(r->d);
    r->d = NULL;
    return syntax_error(r);
}

static const char *raw(const reader *r, const char *section, const char *key)
{
    char full[64];
    snprintf(full, sizeof full, "%s:%s", section, key);
    return iniparser_getstring(r->d, full, NULL);
}

/* "layer7" -> 7; 0 for any other name; -1 for "layer0", "layer01", "layer65". */
static int layer_number(const char *section)
{
    const char *s = section + 5;
    long n;
    if (strncmp(section, "layer", 5) != 0 || !*s || strspn(s, "0123456789") != strlen(s))
        return 0;
    if (s[0] == '0' || strlen(s) > 3 || nn_parse_long(s, &n) != 0 || n > NN_MAX_LAYERS)
        return -1;
    return (int)n;
}

static int is_static_section(const char *s)
{
    return find_name(static_sections, COUNT(static_sections), s) >= 0;
}

/* One section header: known, or a layer numbered 1..NN_MAX_LAYERS. */
static int check_section(const reader *r, const char *name, char *seen, int *max)
{
    int n = layer_number(name);
    if (n > 0) {
        seen[n] = 1;
        if (n > *max)
            *max = n;
        return 0;
    }
    if (n < 0)
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s]: layers are numbered layer1 .. layer%d, without leading zeros",
                         r->file, name, NN_MAX_LAYERS);
    if (is_static_section(name))
        return 0;
    return nn_errorf(r->c.err, r->c.err_len, "%s: [%s]: unknown section (expected [preset], [data], [train], [optimizer] or [layer1], [layer2], ...)",
                     r->file, name);
}

/* Every section known; layers numbered 1..N without gaps; sets n_layers. A
 * section header is an entry with no value; a key before any section is
 * stored by iniparser as ":key". */
static int check_sections(const reader *r, nn_preset *p)
{
    char seen[NN_MAX_LAYERS + 1] = { 0 };
    int max = 0;
    for (ssize_t i = 0; i < r->d->size; i++) {
        const char *key = r->d->key[i];
        if (!key)
            continue;
        if (key[0] == ':')
            return nn_errorf(r->c.err, r->c.err_len, "%s: %s: key outside any section", r->file, key + 1);
        if (!r->d->val[i] && check_section(r, key, seen, &max) != 0)
            return -1;
    }
    if (max == 0)
        return nn_errorf(r->c.err, r->c.err_len, "%s: no [layer1] section: a preset needs at least one layer", r->file);
    for (int n = 1; n <= max; n++)
        if (!seen[n])
            return nn_errorf(r->c.err, r->c.err_len, "%s: [layer%d]: missing, but [layer%d] exists: number the layers 1..N without gaps",
                             r->file, n, max);
    p->n_layers = max;
    return 0;
}

/* An enumerated value: 0 when read, 1 when absent and optional, -1 on error. */
static int read_choice(const reader *r, const char *section, const char *key,
                       const char *const *names, int n, int required, int *out)
{
    const char *s = raw(r, section, key);
    char list[NN_TEXT_LEN];
    join_names(names, n, list, sizeof list);
    if (!s && !required)
        return 1;
    if (!s)
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: missing (expected %s)", r->file, section, key, list);
    *out = find_name(names, n, s);
    if (*out < 0)
        return key_error(&r->c, section, key, s, "expected %s", list);
    return 0;
}

static int read_text(const reader *r, const char *section, const char *key, char *dst, size_t len)
{
    const char *s = raw(r, section, key);
    if (s && nn_strlcpy(dst, s, len) >= len)
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: too long (at most %zu characters)",
                         r->file, section, key, len - 1);
    return 0;
}

/* The file's base name without ".ini": the name when [preset] gives none. */
static void default_name(const char *path, char *name, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    nn_strlcpy(name, base, len);
    size_t n = strlen(name);
    if (n > 4 && strcmp(name + n - 4, ".ini") == 0)
        name[n - 4] = '\0';
}

static int read_texts(const reader *r, nn_preset *p)
{
    int v = 0, rc;
    if (read_choice(r, "data", "set", data_names, COUNT(data_names), 1, &v) < 0)
        return -1;
    p->data = (enum nn_data_kind)v;
    if (read_choice(r, "train", "loss", loss_names, COUNT(loss_names), 1, &v) < 0)
        return -1;
    p->loss = (enum nn_loss_kind)v;
    if (read_choice(r, "optimizer", "type", opt_names, COUNT(opt_names), 1, &v) < 0)
        return -1;
    p->opt = (enum nn_opt_kind)v;
    rc = read_choice(r, "train", "device", device_names, COUNT(device_names), 0, &v);
    if (rc < 0)
        return -1;
    if (rc == 0)
        nn_strlcpy(p->device, device_names[v], sizeof p->device);
    default_name(r->file, p->name, sizeof p->name);
    return read_text(r, "preset", "name", p->name, sizeof p->name)
        || read_text(r, "preset", "description", p->description, sizeof p->description)
        || read_text(r, "data", "dir", p->data_dir, sizeof p->data_dir) ? -1 : 0;
}

static int read_layer_types(const reader *r, nn_preset *p)
{
    for (int i = 0; i < p->n_layers; i++) {
        char section[24];
        int kind = 0;
        snprintf(section, sizeof section, "layer%d", i + 1);
        if (read_choice(r, section, "type", layer_names, NN_LAYER_KIND_COUNT, 1, &kind) < 0)
            return -1;
        p->layers[i].kind = (enum nn_layer_kind)kind;
    }
    return 0;
}

static const scalar_key *find_scalar(const char *section, const char *key)
{
    for (size_t i = 0; i < COUNT(scalar_keys); i++)
        if (!strcmp(scalar_keys[i].section, section) && !strcmp(scalar_keys[i].key, key))
            return &scalar_keys[i];
    return NULL;
}

static int is_text_key(const char *section, const char *key)
{
    for (size_t i = 0; i < COUNT(text_keys); i++)
        if (!strcmp(text_keys[i].section, section) && !strcmp(text_keys[i].key, key))
            return 1;
    return 0;
}

static int unknown_static_key(const reader *r, const char *section, const char *key)
{
    const char *names[COUNT(text_keys) + COUNT(scalar_keys)];
    char list[NN_TEXT_LEN];
    int n = 0;
    for (size_t i = 0; i < COUNT(text_keys); i++)
        if (!strcmp(text_keys[i].section, section))
            names[n++] = text_keys[i].key;
    for (size_t i = 0; i < COUNT(scalar_keys); i++)
        if (!strcmp(scalar_keys[i].section, section))
            names[n++] = scalar_keys[i].key;
    join_names(names, n, list, sizeof list);
    return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: not a key of [%s] (expected %s)",
                     r->file, section, key, section, list);
}

/* One "section:key" entry: known, and meant for this data set, optimiser or
 * layer type (a momentum under adam would otherwise be silently ignored). */
static int check_key(const reader *r, const nn_preset *p, const char *section, const char *key)
{
    int n = layer_number(section);
    if (n > 0) {
        const nn_layer_spec *l = &p->layers[n - 1];
        const layer_key *lk = find_layer_key(key);
        char list[NN_TEXT_LEN];
        if (!strcmp(key, "type") || (lk && has_key(lk->kinds, l->kind)))
            return 0;
        layer_key_list(l->kind, 0, list, sizeof list);
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: not a key of a %s layer (its keys: %s)",
                         r->file, section, key, nn_layer_kind_name(l->kind), list);
    }
    if (is_text_key(section, key))
        return 0;
    const scalar_key *k = find_scalar(section, key);
    if (!k)
        return unknown_static_key(r, section, key);
    if (k->applies && !k->applies(p))
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: only for %s", r->file, section, key, k->only);
    return 0;
}

/* Walks every key in file order, so the first bad key is the one reported. */
static int check_keys(const reader *r, const nn_preset *p)
{
    for (ssize_t i = 0; i < r->d->size; i++) {
        const char *entry = r->d->key[i], *colon;
        char section[32];
        if (!entry || !r->d->val[i])
            continue;
        colon = strchr(entry, ':');
        /* check_sections accepted every section, so it fits and has a colon */
        snprintf(section, sizeof section, "%.*s", (int)(colon - entry), entry);
        if (check_key(r, p, section, colon + 1) != 0)
            return -1;
    }
    return 0;
}

static int read_number(const reader *r, const char *section, const char *key, enum ftype t,
                       range rg, void *dst, int required, const char *need)
{
    const char *s = raw(r, section, key);
    char why[NN_ERR_LEN];
    if (!s && required)
        return nn_errorf(r->c.err, r->c.err_len, "%s: [%s] %s: missing (%s)", r->file, section, key, need);
    if (s && parse_value(t, s, rg, dst, why, sizeof why) != 0)
        return key_error(&r->c, section, key, s, "%s", why);
    return 0;
}

static int read_scalars(const reader *r, nn_preset *p)
{
    for (size_t i = 0; i < COUNT(scalar_keys); i++) {
        const scalar_key *k = &scalar_keys[i];
        if ((!k->applies || k->applies(p))
            && read_number(r, k->section, k->key, k->type, k->r, (char *)p + k->off, 0, NULL) != 0)
            return -1;
    }
    return 0;
}

static int read_layer(const reader *r, int i, nn_layer_spec *l)
{
    char section[24], need[NN_ERR_LEN], list[NN_TEXT_LEN];
    enum nn_layer_kind kind = l->kind;
    memset(l, 0, sizeof *l);
    l->kind = kind;
    snprintf(section, sizeof section, "layer%d", i + 1);
    layer_key_list(kind, 1, list, sizeof list);
    snprintf(need, sizeof need, "a %s layer needs %s", nn_layer_kind_name(kind), list);
    for (size_t k = 0; k < COUNT(layer_keys); k++) {
        const layer_key *lk = &layer_keys[k];
        if (has_key(lk->kinds, kind)
            && read_number(r, section, lk->key, lk->type, lk->r, (char *)l + lk->off,
                           has_key(lk->required, kind), need) != 0)
            return -1;
    }
    if (l->stride == 0 && has_key(CONV, kind))
        l->stride = 1;
    if (l->stride == 0 && has_key(POOL, kind))
        l->stride = l->kernel;     /* PyTorch's default: windows do not overlap */
    return 0;
}

static int read_preset(const reader *r, nn_preset *p)
{
    if (check_sections(r, p) || read_texts(r, p) || read_layer_types(r, p) || check_keys(r, p)
        || read_scalars(r, p))
        return -1;
    for (int i = 0; i < p->n_layers; i++)
        if (read_layer(r, i, &p->layers[i]) != 0)
            return -1;
    return 0;
}

int nn_preset_load(const char *path, nn_preset *p, char *err, size_t err_len)
{
    reader r = { NULL, path, { path, err, err_len } };
    int rc;
    nn_preset_defaults(p);
    if (nn_strlcpy(p->path, path, sizeof p->path) >= sizeof p->path)
        return nn_errorf(err, err_len, "%.64s...: path too long", path);
    if (open_dict(&r) != 0)
        return -1;
    rc = read_preset(&r, p);
    iniparser_freedict(r.d);
    return rc != 0 ? -1 : nn_preset_check(p, path, err, err_len);
}

/* ================================================================ save */

typedef struct writer {
    FILE *f;
    int failed;                  /* a write failed; errno holds why */
} writer;

static void put(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(writer *w, const char *fmt, ...)
{
    va_list ap;
    if (w->failed)
        return;
    va_start(ap, fmt);
    if (vfprintf(w->f, fmt, ap) < 0)
        w->failed = 1;
    va_end(ap);
}

/* Quoted so that ';', '#' and blanks survive; ' when the text holds ". */
static void put_text(writer *w, const char *key, const char *s)
{
    char q = strchr(s, '"') ? '\'' : '"';
    put(w, "%s = %c%s%c\n", key, q, s, q);
}

static void put_scalars(writer *w, const nn_preset *p, const char *section)
{
    char v[64];
    for (size_t i = 0; i < COUNT(scalar_keys); i++) {
        const scalar_key *k = &scalar_keys[i];
        if (strcmp(k->section, section) != 0 || (k->applies && !k->applies(p)))
            continue;
        format_value(k->type, (const char *)p + k->off, v, sizeof v);
        put(w, "%s = %s\n", k->key, v);
    }
}

static void put_layer(writer *w, int i, const nn_layer_spec *l)
{
    char v[64];
    put(w, "\n[layer%d]\ntype = %s\n", i + 1, nn_layer_kind_name(l->kind));
    for (size_t k = 0; k < COUNT(layer_keys); k++) {
        const layer_key *lk = &layer_keys[k];
        if (!has_key(lk->kinds, l->kind))
            continue;
        format_value(lk->type, (const char *)l + lk->off, v, sizeof v);
        put(w, "%s = %s\n", lk->key, v);
    }
}

/* The description heads the file as a comment. Another comment line always
 * follows it: iniparser joins a line ending in '\' with the next one. */
static void put_preset(writer *w, const nn_preset *p)
{
    put(w, "; %s\n; Saved by nnlab; the format is described in nnlab.ini(5).\n",
        p->description[0] ? p->description : p->name);
    put(w, "\n[preset]\n");
    put_text(w, "name", p->name);
    put_text(w, "description", p->description);
    put(w, "\n[data]\nset = %s\n", data_names[p->data]);
    if (p->data_dir[0])
        put_text(w, "dir", p->data_dir);
    put_scalars(w, p, "data");
    put(w, "\n[train]\nloss = %s\ndevice = %s\n", loss_names[p->loss], p->device);
    put_scalars(w, p, "train");
    put(w, "\n[optimizer]\ntype = %s\n", opt_names[p->opt]);
    put_scalars(w, p, "optimizer");
    for (int i = 0; i < p->n_layers; i++)
        put_layer(w, i, &p->layers[i]);
}

static int fill_preset(FILE *f, const void *ctx)
{
    writer w = { f, 0 };
    errno = 0;
    put_preset(&w, ctx);
    if (w.failed && !errno)
        errno = EIO;
    return w.failed ? -1 : 0;
}

int nn_preset_save(const char *path, const nn_preset *p, char *err, size_t err_len)
{
    /* check a copy: it fills `in` and the shapes, and refuses a preset that
     * would not load back */
    nn_preset *copy = malloc(sizeof *copy);
    int rc;
    if (!copy)
        return nn_errorf(err, err_len, "%s: out of memory", path);
    *copy = *p;
    rc = nn_preset_check(copy, path, err, err_len);
    if (rc == 0)
        rc = nn_write_atomic(path, fill_preset, copy, err, err_len);
    free(copy);
    return rc;
}

/* ================================================================ find, list */

int nn_preset_user_dir(char *dir, size_t len)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')          /* the XDG spec: ignore a relative value */
        n = snprintf(dir, len, "%s/nnlab/presets", xdg);
    else if (home && home[0])
        n = snprintf(dir, len, "%s/.config/nnlab/presets", home);
    else
        return -1;
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

const char *nn_preset_system_dir(void)
{
    const char *env = getenv("NNLAB_PRESETS_DIR");
    return env && env[0] ? env : NN_SYSTEM_PRESETS_DIR;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int ends_with_ini(const char *s)
{
    size_t n = strlen(s);
    return n >= 4 && strcmp(s + n - 4, ".ini") == 0;
}

/* The folders a NAME is looked up in, in order; returns how many. They are
 * the folders nn_preset_list shows: $NNLAB_PRESETS_DIR replaces the installed
 * folder rather than adding to it. */
static int search_dirs(const char *dirs[3], char *user, size_t user_len)
{
    int n = 0;
    if (nn_preset_user_dir(user, user_len) == 0)
        dirs[n++] = user;
    dirs[n++] = nn_preset_system_dir();
    return n;
}

int nn_preset_find(const char *name_or_path, char *path, size_t path_len,
                   char *err, size_t err_len)
{
    const char *dirs[3];
    char user[NN_PATH_LEN], looked[3 * NN_PATH_LEN];
    int n;
    if (!name_or_path || !name_or_path[0])
        return nn_errorf(err, err_len, "no preset name given");
    if (strchr(name_or_path, '/') || ends_with_ini(name_or_path)) {
        if (!is_file(name_or_path))
            return nn_errorf(err, err_len, "%s: no such preset file", name_or_path);
        if (nn_strlcpy(path, name_or_path, path_len) >= path_len)
            return nn_errorf(err, err_len, "%.64s...: path too long", name_or_path);
        return 0;
    }
    n = search_dirs(dirs, user, sizeof user);
    for (int i = 0; i < n; i++) {
        int w = snprintf(path, path_len, "%s/%s.ini", dirs[i], name_or_path);
        if (w > 0 && (size_t)w < path_len && is_file(path))
            return 0;
    }
    path[0] = '\0';
    join_names(dirs, n, looked, sizeof looked);
    return nn_errorf(err, err_len, "preset '%s' not found (looked for %s.ini in %s)",
                     name_or_path, name_or_path, n ? looked : "no folder: HOME is not set");
}

typedef char stem[NN_NAME_LEN];

static int cmp_stems(const void *a, const void *b) { return strcmp(a, b); }

/* The *.ini stems in dir, sorted; a missing folder has none. Returns the count
 * or -1; *out is malloc'ed. */
static int read_stems(const char *dir, stem **out, char *err, size_t err_len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0, cap = 0;
    *out = NULL;
    if (!d)
        return errno == ENOENT || errno == ENOTDIR ? 0
             : nn_errorf(err, err_len, "%s: cannot read the folder: %s", dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || !ends_with_ini(e->d_name) || len == 4 || len - 4 >= NN_NAME_LEN)
            continue;
        if (n == cap) {
            stem *grown = realloc(*out, (size_t)(cap ? 2 * cap : 16) * sizeof **out);
            if (!grown) {
                closedir(d);
                return nn_errorf(err, err_len, "%s: out of memory", dir);
            }
            *out = grown;
            cap = cap ? 2 * cap : 16;
        }
        snprintf((*out)[n++], NN_NAME_LEN, "%.*s", (int)(len - 4), e->d_name);
    }
    closedir(d);
    qsort(*out, (size_t)n, sizeof **out, cmp_stems);
    return n;
}

/* Appends dir's presets to out[0..max), loading each for its description or
 * its error. Returns how many were added, or -1. */
static int list_dir(const char *dir, int user, nn_preset_entry *out, int max, nn_preset *scratch,
                    char *err, size_t err_len)
{
    stem *stems;
    int n = read_stems(dir, &stems, err, err_len), k = 0;
    for (int i = 0; i < n && k < max; i++) {
        nn_preset_entry *e = &out[k];
        memset(e, 0, sizeof *e);
        nn_strlcpy(e->name, stems[i], sizeof e->name);
        if ((size_t)snprintf(e->path, sizeof e->path, "%s/%s.ini", dir, stems[i]) >= sizeof e->path)
            continue;
        e->user = user;
        if (nn_preset_load(e->path, scratch, e->error, sizeof e->error) == 0)
            nn_strlcpy(e->description, scratch->description, sizeof e->description);
        k++;
    }
    free(stems);
    return n < 0 ? -1 : k;
}

int nn_preset_list(nn_preset_entry *out, int max, char *err, size_t err_len)
{
    char user[NN_PATH_LEN];
    nn_preset *scratch = malloc(sizeof *scratch);
    int n_user = 0, n_sys;
    if (!scratch)
        return nn_errorf(err, err_len, "out of memory");
    if (nn_preset_user_dir(user, sizeof user) == 0)
        n_user = list_dir(user, 1, out, max, scratch, err, err_len);
    n_sys = n_user < 0 ? -1
          : list_dir(nn_preset_system_dir(), 0, out + n_user, max - n_user, scratch, err, err_len);
    free(scratch);
    if (n_sys < 0)
        return -1;
    for (int i = n_user; i < n_user + n_sys; i++)
        for (int j = 0; j < n_user; j++)
            if (strcmp(out[i].name, out[j].name) == 0)
                out[i].shadowed = 1;
    return n_user + n_sys;
}

/* src/analysis/model/calibration_cache.c - a calibration as data: the figures read
 * from it (a curve's rate at a size, the peak), and its cache file, one text
 * file per device of "key = value" lines with a format number and the
 * machine's description, written atomically; see calibrate.h. What is
 * measured and how is calibrate.c. */
#define _POSIX_C_SOURCE 200809L
#include "nnlab/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "util.h"
#include "xdg.h"


/* ---- reading the figures ------------------------------------------------------------ */

double nn_curve_gflops(const nn_rate_curve *c, double flops)
{
    if (c->n <= 0)
        return 0;
    if (flops <= c->flops[0])
        return c->gflops[0];
    for (int i = 1; i < c->n; i++)
        if (flops <= c->flops[i]) {
            double f = log(flops / c->flops[i - 1]) / log(c->flops[i] / c->flops[i - 1]);
            return c->gflops[i - 1] + f * (c->gflops[i] - c->gflops[i - 1]);
        }
    return c->gflops[c->n - 1];
}

static double curve_max(const nn_rate_curve *c, double best)
{
    for (int i = 0; i < c->n; i++)
        if (c->gflops[i] > best)
            best = c->gflops[i];
    return best;
}

double nn_calibration_peak_gflops(const nn_calibration *c)
{
    double peak = c->gemm_gflops > 0 ? c->gemm_gflops : 0;
    peak = curve_max(&c->linear_fwd, peak);
    peak = curve_max(&c->linear_bwd, peak);
    peak = curve_max(&c->conv_fwd, peak);
    return curve_max(&c->conv_bwd, peak);
}

/* ---- the cache file --------------------------------------------------------------------- */

/* The cache's key: a calibration made on another machine explains nothing here. */
void nn_machine_description(char *buf, size_t len)
{
    char line[512], model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                char *colon = strchr(line, ':');
                if (colon) {
                    nn_strlcpy(model, colon + 2, sizeof model);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        fclose(f);
    }
    snprintf(buf, len, "%s, %ld cores", model, sysconf(_SC_NPROCESSORS_ONLN));
}

int nn_calibration_path(const char *device, char *path, size_t len)
{
    char dir[NN_PATH_LEN];
    if (nn_xdg_dir(NN_XDG_CACHE, NULL, dir, sizeof dir) != 0)
        return -1;
    int n = snprintf(path, len, "%s/calibration-%s.txt", dir, device);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int nn_calibration_path_threads(const char *device, int threads, char *path, size_t len)
{
    char dir[NN_PATH_LEN];
    if (threads < 1 || nn_xdg_dir(NN_XDG_CACHE, NULL, dir, sizeof dir) != 0)
        return -1;
    int n = snprintf(path, len, "%s/calibration-%s-%dthreads.txt", dir, device, threads);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The fields of the cache file, in order: those of format 1, then those
 * formats 2 to 7 added. Every one must be there for the file to be read. */
#define CAL_FIELDS(X)                                                          \
    X(gemm_gflops) X(gemm_gflops_1thread) X(mem_gbps) X(op_us) X(sync_us)      \
    X(upload_us) X(upload_gbps) X(host_copy_gbps)                              \
    X(download_us) X(pinned_upload_us) X(pinned_upload_gbps)                   \
    X(graph_launch_us) X(graph_node_us) X(matrix_op_us)                     \
    X(device_peak_gflops) X(smallest_product_us) X(fused_adam_max_batch)       \
    X(fresh_page_us) X(vector_floats)
#define CAL_FLAGS(X) X(has_pinned) X(has_graph) X(device_clock)
#define CAL_CURVES(X) X(linear_fwd) X(linear_bwd) X(conv_fwd) X(conv_bwd)
#define CAL_TABLES(X) X(elem_ns) X(spread) X(threads) X(device_peak_how) X(remeasured) \
    X(product_call_us)

/* Bits of the keys read, to tell a complete file from an old one. */
enum {
#define KEY_BIT(name) KEY_##name,
    CAL_FIELDS(KEY_BIT) CAL_FLAGS(KEY_BIT) CAL_CURVES(KEY_BIT) CAL_TABLES(KEY_BIT)
#undef KEY_BIT
    KEY_COUNT
};
#define ALL_KEYS ((1ull << KEY_COUNT) - 1)

/* "flops:gflops" pairs separated by blanks; "-" for no points */
static int write_curve(FILE *f, const char *name, const nn_rate_curve *c)
{
    if (fprintf(f, "%s =", name) < 0)
        return -1;
    for (int i = 0; i < c->n; i++)
        if (fprintf(f, " %.6g:%.6g", c->flops[i], c->gflops[i]) < 0)
            return -1;
    return fprintf(f, "%s\n", c->n ? "" : " -") < 0 ? -1 : 0;
}

/* The pairs of write_curve; -1 when malformed or out of order. */
static int parse_curve(const char *value, nn_rate_curve *c)
{
    char buf[512], *save = NULL;
    memset(c, 0, sizeof *c);
    nn_strlcpy(buf, value, sizeof buf);
    if (strcmp(buf, "-") == 0)
        return 0;
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *colon = strchr(tok, ':');
        double f, g;
        if (!colon || c->n == NN_CURVE_POINTS)
            return -1;
        *colon = '\0';
        if (nn_parse_double(tok, &f) != 0 || nn_parse_double(colon + 1, &g) != 0 || !(f > 0) || !(g > 0) ||
            (c->n > 0 && f <= c->flops[c->n - 1]))
            return -1;
        c->flops[c->n] = f;
        c->gflops[c->n] = g;
        c->n++;
    }
    return 0;
}

/* "sgemm:0.031 ..." for every figure with a spread; names without blanks */
static const char *const spread_keys[NN_SPREADS] = { "gemm", "gemm_1thread", "mem", "op", "sync", "host_copy",
                                                      "linear", "conv", "elem" };

static int write_spread(FILE *f, const double spread[NN_SPREADS])
{
    if (fprintf(f, "spread =") < 0)
        return -1;
    for (int k = 0; k < NN_SPREADS; k++)
        if (fprintf(f, " %s:%.4g", spread_keys[k], spread[k]) < 0)
            return -1;
    return fprintf(f, "\n") < 0 ? -1 : 0;
}

/* The entries of write_spread; -1 unless every figure is there, once. */
static int parse_spread(const char *value, double spread[NN_SPREADS])
{
    char buf[512], *save = NULL;
    unsigned seen = 0;
    nn_strlcpy(buf, value, sizeof buf);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *colon = strchr(tok, ':');
        int k = 0;
        if (!colon)
            return -1;
        *colon = '\0';
        while (k < NN_SPREADS && strcmp(tok, spread_keys[k]) != 0)
            k++;
        if (k == NN_SPREADS || (seen & (1u << k)) || nn_parse_double(colon + 1, &spread[k]) != 0 || spread[k] < 0)
            return -1;
        seen |= 1u << k;
    }
    return seen == (1u << NN_SPREADS) - 1 ? 0 : -1;
}

/* "relu:fwd:bwd" for every class with a per-element cost */
static int write_elem_ns(FILE *f, const double ns[NN_OP_CLASSES][2])
{
    if (fprintf(f, "elem_ns =") < 0)
        return -1;
    for (int k = NN_OP_RELU; k < NN_OP_CLASSES; k++)
        if (fprintf(f, " %s:%.6g:%.6g", nn_op_class_name((nn_op_class)k), ns[k][0], ns[k][1]) < 0)
            return -1;
    return fprintf(f, "\n") < 0 ? -1 : 0;
}

/* The entries of write_elem_ns; -1 unless every class is there, once. */
static int parse_elem_ns(const char *value, double ns[NN_OP_CLASSES][2])
{
    char buf[1024], *save = NULL;
    unsigned seen = 0;
    nn_strlcpy(buf, value, sizeof buf);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *c1 = strchr(tok, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        int k = NN_OP_RELU;
        if (!c2)
            return -1;
        *c1 = *c2 = '\0';
        while (k < NN_OP_CLASSES && strcmp(tok, nn_op_class_name((nn_op_class)k)) != 0)
            k++;
        if (k == NN_OP_CLASSES || (seen & (1u << k)) || nn_parse_double(c1 + 1, &ns[k][0]) != 0 ||
            nn_parse_double(c2 + 1, &ns[k][1]) != 0 || ns[k][0] < 0 || ns[k][1] < 0)
            return -1;
        seen |= 1u << k;
    }
    unsigned all = ((1u << NN_OP_CLASSES) - 1) & ~((1u << NN_OP_RELU) - 1);
    return seen == all ? 0 : -1;
}

/* ---- the BLAS library of each product shape (format 5; calibrate_products.c) ---- */

const char *nn_product_lib_name(int chosen)
{
    return chosen ? "blis" : "openblas";
}

/* "product_call_us = <openblas> <blis>" and one "product = m n k ta tb
 * threads openblas_gflops blis_gflops chosen" line a shape */
static int write_products(FILE *f, const nn_calibration *c)
{
    if (fprintf(f, "product_call_us = %.6g %.6g\n", c->product_call_us[0],
                c->product_call_us[1]) < 0)
        return -1;
    for (int i = 0; i < c->n_products; i++) {
        const nn_product_choice *p = &c->products[i];
        if (fprintf(f, "product = %d %d %d %d %d %d %.6g %.6g %s\n", p->m, p->n, p->k, p->ta,
                    p->tb, p->threads, p->openblas_gflops, p->blis_gflops,
                    nn_product_lib_name(p->chosen)) < 0)
            return -1;
    }
    return 0;
}

static int parse_call_us(const char *value, nn_calibration *c)
{
    double a, b;
    char extra;
    if (sscanf(value, "%lf %lf %c", &a, &b, &extra) != 2 || !(a >= 0) || !(b >= 0))
        return -1;
    c->product_call_us[0] = a;
    c->product_call_us[1] = b;
    return 0;
}

static int parse_product(const char *value, nn_calibration *c)
{
    nn_product_choice p;
    char lib[16], extra;
    if (c->n_products >= NN_MAX_PRODUCTS ||
        sscanf(value, "%d %d %d %d %d %d %lf %lf %15s %c", &p.m, &p.n, &p.k, &p.ta, &p.tb,
               &p.threads, &p.openblas_gflops, &p.blis_gflops, lib, &extra) != 9)
        return -1;
    if (p.m <= 0 || p.n <= 0 || p.k <= 0 || (p.ta != 0 && p.ta != 1) || (p.tb != 0 && p.tb != 1) ||
        p.threads < 0 || !(p.openblas_gflops >= 0) || !(p.blis_gflops >= 0))
        return -1;
    if (strcmp(lib, nn_product_lib_name(0)) == 0)
        p.chosen = 0;
    else if (strcmp(lib, nn_product_lib_name(1)) == 0)
        p.chosen = 1;
    else
        return -1;
    c->products[c->n_products++] = p;
    return 0;
}

static int fill_calibration(FILE *f, const void *ctx)
{
    const nn_calibration *c = ctx;
    if (fprintf(f, "# nnlab calibration: `nnlab calibrate --device %s` remakes it\n", c->device) < 0 ||
        fprintf(f, "format = %d\ndevice = %s\nmachine = %s\ncreated = %lld\nnote = %s\n", NN_CALIBRATION_FORMAT,
                c->device, c->machine, c->created, c->note) < 0)
        return -1;
#define WRITE_FIELD(name) if (fprintf(f, #name " = %.6g\n", c->name) < 0) return -1;
    CAL_FIELDS(WRITE_FIELD)
#undef WRITE_FIELD
#define WRITE_FLAG(name) if (fprintf(f, #name " = %d\n", c->name) < 0) return -1;
    CAL_FLAGS(WRITE_FLAG)
#undef WRITE_FLAG
#define WRITE_CURVE(name) if (write_curve(f, #name, &c->name) != 0) return -1;
    CAL_CURVES(WRITE_CURVE)
#undef WRITE_CURVE
    if (write_elem_ns(f, c->elem_ns) != 0 || write_spread(f, c->spread) != 0)
        return -1;
    if (fprintf(f, "threads = %d\ndevice_peak_how = %s\nremeasured = %u\n", c->threads, c->device_peak_how,
                c->remeasured) < 0)
        return -1;
    return write_products(f, c);
}

/* c into the file at path (the device's, or its thread count's). */
static int save_at(const nn_calibration *c, int path_rc, const char *path, char *err, size_t err_len)
{
    if (c->profile)
        return nn_errorf(err, err_len, "%s is a GPU profile's, not a measurement: not cached", c->note);
    if (path_rc != 0)
        return nn_errorf(err, err_len, "no cache folder: neither XDG_CACHE_HOME nor HOME is set");
    return nn_write_atomic(path, fill_calibration, c, err, err_len);
}

int nn_calibration_save(const nn_calibration *c, char *err, size_t err_len)
{
    char path[4096];
    return save_at(c, nn_calibration_path(c->device, path, sizeof path), path, err, err_len);
}

int nn_calibration_save_threads(const nn_calibration *c, char *err, size_t err_len)
{
    char path[4096];
    return save_at(c, nn_calibration_path_threads(c->device, c->threads, path, sizeof path), path, err, err_len);
}

/* One "key = value" line into c; *seen gets the key's bit, *format the
 * file's format. Unknown keys are skipped (a newer nnlab's file still reads
 * if it has every key this one needs). */
static void parse_line(nn_calibration *c, const char *key, const char *value, unsigned long long *seen,
                       long *format)
{
    double v;
    long v_long;
    if (!strcmp(key, "format"))
        *format = nn_parse_long(value, &v_long) == 0 ? v_long : -1;
    else if (!strcmp(key, "device"))
        nn_strlcpy(c->device, value, sizeof c->device);
    else if (!strcmp(key, "machine"))
        nn_strlcpy(c->machine, value, sizeof c->machine);
    else if (!strcmp(key, "note"))
        nn_strlcpy(c->note, value, sizeof c->note);
    else if (!strcmp(key, "created") && nn_parse_double(value, &v) == 0)
        c->created = (long long)v;
#define READ_FIELD(name)                                                       \
    else if (!strcmp(key, #name) && nn_parse_double(value, &v) == 0 && v >= 0) \
        c->name = v, *seen |= 1ull << KEY_##name;
    CAL_FIELDS(READ_FIELD)
#undef READ_FIELD
#define READ_FLAG(name)                                                                    \
    else if (!strcmp(key, #name) && nn_parse_double(value, &v) == 0 && (v == 0 || v == 1)) \
        c->name = (int)v, *seen |= 1ull << KEY_##name;
    CAL_FLAGS(READ_FLAG)
#undef READ_FLAG
#define READ_CURVE(name)                                                      \
    else if (!strcmp(key, #name) && parse_curve(value, &c->name) == 0)        \
        *seen |= 1ull << KEY_##name;
    CAL_CURVES(READ_CURVE)
#undef READ_CURVE
    else if (!strcmp(key, "elem_ns") && parse_elem_ns(value, c->elem_ns) == 0)
        *seen |= 1ull << KEY_elem_ns;
    else if (!strcmp(key, "spread") && parse_spread(value, c->spread) == 0)
        *seen |= 1ull << KEY_spread;
    else if (!strcmp(key, "threads") && nn_parse_long(value, &v_long) == 0 && v_long >= 0 && v_long <= 4096)
        c->threads = (int)v_long, *seen |= 1ull << KEY_threads;
    else if (!strcmp(key, "device_peak_how"))
        nn_strlcpy(c->device_peak_how, value, sizeof c->device_peak_how), *seen |= 1ull << KEY_device_peak_how;
    else if (!strcmp(key, "remeasured") && nn_parse_long(value, &v_long) == 0 && v_long >= 0 &&
             v_long < (1L << NN_SPREADS))
        c->remeasured = (unsigned)v_long, *seen |= 1ull << KEY_remeasured;
    else if (!strcmp(key, "product_call_us") && parse_call_us(value, c) == 0)
        *seen |= 1ull << KEY_product_call_us;
    else if (!strcmp(key, "product") && (c->n_products < 0 || parse_product(value, c) != 0))
        c->n_products = -1;      /* a malformed line: the file is not read */
}

/* Reads the file at path (path_rc: whether there is one) as device's. */
static int load_at(const char *device, int path_rc, const char *path, nn_calibration *out)
{
    char line[1024], here[256];
    unsigned long long seen = 0;
    long format = 1;                 /* format 1 files have no format line */
    FILE *f;
    if (path_rc != 0 || !(f = fopen(path, "r")))
        return -1;
    memset(out, 0, sizeof *out);
    while (fgets(line, sizeof line, f)) {
        char *eq = strstr(line, " = ");
        if (line[0] == '#' || !eq)
            continue;
        *eq = '\0';
        eq[3 + strcspn(eq + 3, "\n")] = '\0';
        parse_line(out, line, eq + 3, &seen, &format);
    }
    fclose(f);
    nn_machine_description(here, sizeof here);
    /* another machine's figures would explain nothing here, and an older
     * file's missing figures would read as zeros: both are measured again */
    if (strcmp(out->machine, here) != 0 || strcmp(out->device, device) != 0 || out->gemm_gflops <= 0 ||
        format != NN_CALIBRATION_FORMAT || seen != ALL_KEYS || out->n_products < 0)
        return -1;
    return 0;
}

int nn_calibration_load(const char *device, nn_calibration *out)
{
    char path[4096];
    return load_at(device, nn_calibration_path(device, path, sizeof path), path, out);
}

int nn_calibration_load_threads(const char *device, int threads, nn_calibration *out)
{
    char path[4096];
    if (load_at(device, nn_calibration_path_threads(device, threads, path, sizeof path), path, out) != 0)
        return -1;
    return out->threads == threads ? 0 : -1;
}

/* tests/cal_fixture.c - see cal_fixture.h. */
#define _POSIX_C_SOURCE 200809L
#include "cal_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int read_curve(const char *v, nn_rate_curve *c)
{
    char buf[1024], *save = NULL;
    memset(c, 0, sizeof *c);
    nn_strlcpy(buf, v, sizeof buf);
    for (char *t = strtok_r(buf, " ", &save); t && c->n < NN_CURVE_POINTS; t = strtok_r(NULL, " ", &save))
        if (sscanf(t, "%lf:%lf", &c->flops[c->n], &c->gflops[c->n]) == 2)
            c->n++;
    return c->n > 0 ? 0 : -1;
}

static void read_elem_ns(const char *v, double ns[NN_OP_CLASSES][2])
{
    char buf[1024], *save = NULL;
    nn_strlcpy(buf, v, sizeof buf);
    for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char name[32];
        double f, b;
        if (sscanf(t, "%31[^:]:%lf:%lf", name, &f, &b) != 3)
            continue;
        for (int k = 0; k < NN_OP_CLASSES; k++)
            if (!strcmp(name, nn_op_class_name((nn_op_class)k))) {
                ns[k][0] = f;
                ns[k][1] = b;
            }
    }
}

#define NUMBERS(X) X(gemm_gflops) X(gemm_gflops_1thread) X(mem_gbps) X(op_us) X(sync_us) X(upload_us) \
    X(upload_gbps) X(host_copy_gbps) X(download_us) X(matrix_op_us)
/* Format 7's: a fixture recorded before it has neither (0: no fresh pages priced). */
#define OPTIONAL_NUMBERS(X) X(fresh_page_us) X(vector_floats)

/* "gemm:0.02 mem:0.03 ...": the repetitions' spreads, by nn_spread_name's keys. */
static void read_spreads(const char *v, double spread[NN_SPREADS])
{
    static const char *const keys[NN_SPREADS] = { "gemm", "gemm_1thread", "mem", "op", "sync", "host_copy",
                                                  "linear", "conv", "elem" };
    char buf[1024], *save = NULL;
    nn_strlcpy(buf, v, sizeof buf);
    for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char name[32];
        double x;
        if (sscanf(t, "%31[^:]:%lf", name, &x) != 2)
            continue;
        for (int k = 0; k < NN_SPREADS; k++)
            if (!strcmp(name, keys[k]))
                spread[k] = x;
    }
}

/* One "key = value" line into c; the count of figures read so far. */
static int take(nn_calibration *c, const char *key, const char *v)
{
#define NUMBER(f) if (!strcmp(key, #f)) { c->f = atof(v); return 1; }
    NUMBERS(NUMBER)
#undef NUMBER
#define OPTIONAL(f) if (!strcmp(key, #f)) { c->f = atof(v); return 0; }
    OPTIONAL_NUMBERS(OPTIONAL)
#undef OPTIONAL
    if (!strcmp(key, "device"))
        nn_strlcpy(c->device, v, sizeof c->device);
    else if (!strcmp(key, "machine"))
        nn_strlcpy(c->machine, v, sizeof c->machine);
    else if (!strcmp(key, "threads"))
        c->threads = atoi(v);
    else if (!strcmp(key, "elem_ns"))
        read_elem_ns(v, c->elem_ns);
    else if (!strcmp(key, "spread"))
        read_spreads(v, c->spread);
    else if (!strcmp(key, "linear_fwd"))
        return read_curve(v, &c->linear_fwd) == 0;
    else if (!strcmp(key, "linear_bwd"))
        return read_curve(v, &c->linear_bwd) == 0;
    else if (!strcmp(key, "conv_fwd"))
        return read_curve(v, &c->conv_fwd) == 0;
    else if (!strcmp(key, "conv_bwd"))
        return read_curve(v, &c->conv_bwd) == 0;
    return 0;
}

int cal_fixture_load(const char *name, nn_calibration *out)
{
    char path[NN_PATH_LEN], line[2048];
    int figures = 0;
    snprintf(path, sizeof path, "%s/%s", FIXTURES_DIR, name);
    FILE *f = fopen(path, "r");
    memset(out, 0, sizeof *out);
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char *eq = strstr(line, " = ");
        if (line[0] == '#' || !eq)
            continue;
        *eq = '\0';
        line[strcspn(line, "\n")] = '\0';
        eq[3 + strcspn(eq + 3, "\n")] = '\0';
        figures += take(out, line, eq + 3);
    }
    fclose(f);
    return figures == 14 && out->gemm_gflops > 0 ? 0 : -1;   /* 10 numbers and 4 curves */
}

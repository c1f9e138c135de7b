/* src/jobs/jacobian/jacobian_export.c - a Jacobian run as JSON and CSV
 * (nnlab/jacobian.h nn_jac_export_*): the one writer of `nnlab jacobian
 * --json` and of the lab's `x` on a Jacobian run, so that both give the
 * method, val, FLOPs, the waste and the val sweep under the same keys. */
#include "nnlab/export.h"
#include "nnlab/jacobian.h"

#include <math.h>

/* "key": value,\n with null for a value not known (NAN). */
static void json_key_number(FILE *f, const char *key, double v)
{
    fprintf(f, "  \"%s\": ", key);
    nn_json_number(f, v);
    fprintf(f, ",\n");
}

static void json_key_string(FILE *f, const char *key, const char *s)
{
    fprintf(f, "  \"%s\": ", key);
    if (s)
        nn_json_string(f, s);
    else
        fprintf(f, "null");
    fprintf(f, ",\n");
}

/* What the method computes at the job's val: the result's when it ran. */
static void flops_of(const nn_jac_export *x, nn_jac_flops *fl)
{
    if (x->result)
        *fl = x->result->flops;
    else
        nn_jac_flops_of(&x->shape, x->val, x->method, fl);
}

static void json_result(FILE *f, const nn_jac_export *x)
{
    const nn_jac_result *r = x->result;
    json_key_number(f, "seconds", r ? r->seconds : NAN);
    json_key_number(f, "elapsed_s", r ? r->seconds : x->elapsed_s);
    json_key_number(f, "forward_s", r ? r->forward_s : NAN);
    json_key_number(f, "warmup_s", r ? r->warmup_s : NAN);
    json_key_number(f, "rows_per_s", r ? r->rows_per_s : NAN);
    json_key_number(f, "lanes", r ? r->lanes : NAN);
    json_key_number(f, "offdiag_max", r && r->offdiag_checked ? r->offdiag_max : NAN);
    json_key_string(f, "compared_with", x->other ? nn_jac_method_name(x->other->method) : NULL);
    json_key_number(f, "max_difference", x->other ? x->max_difference : NAN);
}

/* "cpu_s": {"nnlab": {"rows": [...], ...}, "framework eager": {...}} */
static void json_sweep_times(FILE *f, const char *key, const nn_jac_sweep *sw, int gpu)
{
    fprintf(f, "    \"%s\": {", key);
    for (int w = 0; w < NN_JAC_WAYS; w++) {
        fprintf(f, "%s\"%s\": {", w ? ", " : "", nn_jac_way_name((enum nn_jac_way)w));
        for (int m = 0; m < NN_JAC_METHOD_COUNT; m++) {
            fprintf(f, "%s\"%s\": [", m ? ", " : "", nn_jac_method_name((enum nn_jac_method)m));
            for (int i = 0; i < sw->n; i++) {
                fprintf(f, i ? ", " : "");
                nn_json_number(f, gpu ? sw->gpu_s[w][m][i] : sw->cpu_s[w][m][i]);
            }
            fprintf(f, "]");
        }
        fprintf(f, "}");
    }
    fprintf(f, "},\n");
}

static void json_sweep(FILE *f, const nn_jac_sweep *sw)
{
    fprintf(f, "  \"sweep\": ");
    if (!sw) {
        fprintf(f, "null\n");
        return;
    }
    fprintf(f, "{\n    \"source\": \"predicted\",\n    \"gpu\": ");
    nn_json_string(f, sw->gpu_name);
    fprintf(f, ",\n    \"val\": [");
    for (int i = 0; i < sw->n; i++)
        fprintf(f, "%s%ld", i ? ", " : "", sw->val[i]);
    fprintf(f, "],\n");
    json_sweep_times(f, "cpu_s", sw, 0);
    json_sweep_times(f, "gpu_s", sw, 1);
    fprintf(f, "    \"gpu_overtakes_at_val\": {");
    for (int w = 0; w < NN_JAC_WAYS; w++) {
        fprintf(f, "%s\"%s\": {", w ? ", " : "", nn_jac_way_name((enum nn_jac_way)w));
        for (int m = 0; m < NN_JAC_METHOD_COUNT; m++) {
            fprintf(f, "%s\"%s\": ", m ? ", " : "", nn_jac_method_name((enum nn_jac_method)m));
            if (sw->gpu_overtakes[w][m])
                fprintf(f, "%ld", sw->gpu_overtakes[w][m]);
            else
                fprintf(f, "null");
        }
        fprintf(f, "}");
    }
    fprintf(f, "}\n  }\n");
}

int nn_jac_export_json(FILE *f, const nn_jac_export *x)
{
    nn_jac_flops fl;
    char why[1024];
    flops_of(x, &fl);
    nn_jac_explain(&x->shape, x->val, x->method, why, sizeof why);
    fprintf(f, "{\n");
    json_key_string(f, "preset", x->preset);
    json_key_string(f, "device", x->device);
    json_key_string(f, "method", nn_jac_method_name(x->method));
    fprintf(f, "  \"val\": %ld,\n  \"rows\": %ld,\n  \"rows_done\": %ld,\n", x->val,
            nn_jac_rows_total(&x->shape, x->val), x->result ? nn_jac_rows_total(&x->shape, x->val) : x->rows_done);
    json_key_string(f, "state", x->state ? x->state : (x->result ? "done" : NULL));
    json_result(f, x);
    json_key_number(f, "flops", fl.total);
    json_key_number(f, "zero_block_flops", fl.zero);
    json_key_number(f, "waste", fl.total > 0 ? fl.zero / fl.total : NAN);
    json_key_number(f, "passes", fl.passes);
    json_key_string(f, "explain", why);
    json_sweep(f, x->sweep);
    fprintf(f, "}\n");
    return ferror(f) ? -1 : 0;
}

static void csv_row(FILE *f, const char *source, const char *way, enum nn_jac_method m, const char *device, long val,
                    double seconds, const nn_jac_flops *fl, long rows, const char *state)
{
    fprintf(f, "%s,%s,%s,%s,%ld,", source, way, nn_jac_method_name(m), device, val);
    if (isfinite(seconds))
        fprintf(f, "%.9g", seconds);
    fprintf(f, ",%.9g,%.9g,%.6g,%ld,%s\n", fl->total, fl->zero, fl->total > 0 ? fl->zero / fl->total : 0.0, rows,
            state);
}

int nn_jac_export_csv(FILE *f, const nn_jac_export *x)
{
    nn_jac_flops fl;
    const nn_jac_sweep *sw = x->sweep;
    flops_of(x, &fl);
    fprintf(f, "source,way,method,device,val,seconds,flops,zero_block_flops,waste,rows,state\n");
    csv_row(f, "measured", "nnlab", x->method, x->device ? x->device : "", x->val,
            x->result ? x->result->seconds : x->elapsed_s, &fl,
            x->result ? nn_jac_rows_total(&x->shape, x->val) : x->rows_done,
            x->state ? x->state : x->result ? "done" : "");
    for (int w = 0; sw && w < NN_JAC_WAYS; w++)
        for (int m = 0; m < NN_JAC_METHOD_COUNT; m++)
            for (int i = 0; i < sw->n; i++) {
                nn_jac_flops_of(&x->shape, sw->val[i], (enum nn_jac_method)m, &fl);
                long rows = nn_jac_rows_total(&x->shape, sw->val[i]);
                csv_row(f, "predicted", nn_jac_way_name((enum nn_jac_way)w), (enum nn_jac_method)m, "cpu",
                        sw->val[i], sw->cpu_s[w][m][i], &fl, rows, "");
                csv_row(f, "predicted", nn_jac_way_name((enum nn_jac_way)w), (enum nn_jac_method)m, "gpu",
                        sw->val[i], sw->gpu_s[w][m][i], &fl, rows, "");
            }
    return ferror(f) ? -1 : 0;
}

static int fill_csv(FILE *f, const void *ctx)
{
    return nn_jac_export_csv(f, ctx);
}

static int fill_json(FILE *f, const void *ctx)
{
    return nn_jac_export_json(f, ctx);
}

int nn_jac_export_files(const char *dir, const nn_jac_export *x, long long now, char *csv_path, char *json_path,
                        size_t path_len, char *err, size_t err_len)
{
    return nn_export_pair(dir, x->preset ? x->preset : "nnlab", "jacobian", now, fill_csv, fill_json, x, csv_path,
                          json_path, path_len, err, err_len);
}

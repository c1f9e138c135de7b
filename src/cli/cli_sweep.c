/* src/cli/cli_sweep.c - nnlab sweep: the analysis layer's sweep (nnlab/sweep.h),
 * the same runner and rules as the lab's sweep screen, run to its end and
 * printed as a table, CSV or JSON. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_common.h"
#include "nnlab/calibrate.h"
#include "nnlab/device.h"
#include "nnlab/explain.h"
#include "nnlab/observe.h"
#include "nnlab/sweep.h"
#include "util.h"

#define DEFAULT_BATCHES "1,2,4,8,16,32,64,128,256,512,1024,2048,4096"

/* "1,4,16" -> batches, each by the preset's rule for [train] batch; returns
 * the count, or -1 after a one-line error naming the list and the entry. */
static int parse_batches(const char *s, int *out, int max)
{
    int n = 0;
    char buf[512], *save = NULL, why[NN_ERR_LEN];
    nn_preset scratch;
    nn_preset_defaults(&scratch);
    if (nn_strlcpy(buf, s, sizeof buf) >= sizeof buf) {
        fprintf(stderr, "nnlab: --batches %.40s...: too long\n", s);
        return -1;
    }
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            fprintf(stderr, "nnlab: --batches %s: at most %d batch sizes\n", s, max);
            return -1;
        }
        if (nn_preset_set_value(&scratch, "train", "batch", tok, why, sizeof why) != 0) {
            fprintf(stderr, "nnlab: --batches %s: %s: %s\n", s, tok, why);
            return -1;
        }
        out[n++] = scratch.batch;
    }
    if (n == 0)
        fprintf(stderr, "nnlab: --batches %s: expected a list like 1,4,16\n", s);
    return n > 0 ? n : -1;
}

static int split_devices(const char *s, char names[NN_SWEEP_MAX_DEVICES][16])
{
    int n = 0;
    char buf[128], *save = NULL;
    nn_strlcpy(buf, s, sizeof buf);
    for (char *tok = strtok_r(buf, ",", &save); tok && n < NN_SWEEP_MAX_DEVICES; tok = strtok_r(NULL, ",", &save))
        nn_strlcpy(names[n++], tok, 16);
    return n;
}

/* ---- printing ------------------------------------------------------------------------------ */

static void print_header(FILE *f, enum cli_sweep_format format)
{
    if (format == CLI_SWEEP_CSV)
        fprintf(f, "device,batch,us_per_step,samples_per_s,doubling,regime\n");
    else if (format == CLI_SWEEP_JSON)
        fprintf(f, "{\n  \"us_per_step_stat\": \"%s\",\n  \"points\": [\n", NN_STEP_STAT);
    else
        fprintf(f, "%-8s %7s %12s %12s %14s %9s  %s\n", "device", "batch", "us/step", "predicted", "samples/s",
                "doubling", "regime");
}

static void print_point(FILE *f, const nn_sweep *sw, int d, int i, enum cli_sweep_format format, int first)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    const char *regime = p->has_model ? nn_regime_name(p->regime) : "-";
    double doubling = nn_sweep_doubling(sw, d, i);
    if (format == CLI_SWEEP_CSV) {
        fprintf(f, "%s,%d,%.3f,%.1f,%.3f,%s\n", sw->device[d], sw->batch[i], p->measured.step_us, p->rate, doubling,
                regime);
    } else if (format == CLI_SWEEP_JSON) {
        fprintf(f, "%s    {\"device\": \"%s\", \"batch\": %d, \"us_per_step\": %.6g, \"samples_per_s\": %.6g, "
                "\"doubling\": %.4g, \"predicted_us\": ", first ? "" : ",\n", sw->device[d], sw->batch[i],
                p->measured.step_us, p->rate, doubling);
        if (p->has_model)
            fprintf(f, "%.6g, \"regime\": \"%s\"}", p->predicted_us, regime);
        else
            fprintf(f, "null, \"regime\": null}");
    } else {
        char dbl[16] = "-", predicted[16] = "-";
        if (doubling > 0)
            snprintf(dbl, sizeof dbl, "%.2f", doubling);
        if (p->has_model)
            snprintf(predicted, sizeof predicted, "%.1f", p->predicted_us);
        fprintf(f, "%-8s %7d %12.1f %12s %14.0f %9s  %s\n", sw->device[d], sw->batch[i], p->measured.step_us,
                predicted, p->rate, dbl, regime);
    }
}

/* Where each device after the first overtakes the first (0: it does not). */
static void print_crossovers(FILE *f, const nn_sweep *sw, enum cli_sweep_format format)
{
    if (format == CLI_SWEEP_JSON)
        fprintf(f, "\n  ],\n  \"crossovers\": [");
    for (int d = 1; d < sw->n_devices; d++) {
        int x = nn_sweep_crossover(sw, 0, d), batch = x >= 0 ? sw->batch[x] : 0;
        if (format == CLI_SWEEP_JSON)
            fprintf(f, "%s{\"from\": \"%s\", \"to\": \"%s\", \"batch\": %d}", d > 1 ? ", " : "", sw->device[0],
                    sw->device[d], batch);
        else if (format == CLI_SWEEP_TEXT && x >= 0)
            fprintf(f, "%s overtakes %s from batch %d on\n", sw->device[d], sw->device[0], batch);
        else if (format == CLI_SWEEP_TEXT)
            fprintf(f, "%s does not overtake %s at the measured batches\n", sw->device[d], sw->device[0]);
    }
    if (format == CLI_SWEEP_JSON)
        fprintf(f, "]\n}\n");
}

void cli_sweep_print(FILE *f, const nn_sweep *sw, enum cli_sweep_format format)
{
    int first = 1;
    print_header(f, format);
    for (int d = 0; d < sw->n_devices; d++)
        for (int i = 0; i < sw->n_batches; i++)
            if (sw->pt[d][i].state == NN_POINT_DONE) {
                print_point(f, sw, d, i, format, first);
                first = 0;
            }
    if (format == CLI_SWEEP_TEXT)
        fprintf(f, "(us/step: the %s over the timed steps; doubling: the step at b over the step at b/2)\n", NN_STEP_STAT);
    print_crossovers(f, sw, format);
}

/* ---- the command ----------------------------------------------------------------------------- */

/* Adds each device with its calibration (measured first when not cached). */
static int add_devices(nn_sweep *sw, const cli_options *o)
{
    char names[NN_SWEEP_MAX_DEVICES][16], err[NN_ERR_LEN];
    int n = split_devices(o->devices ? o->devices : "cpu", names);
    for (int d = 0; d < n; d++) {
        nn_calibration cal;
        if (nn_device_require(names[d], err, sizeof err) != 0) {
            fprintf(stderr, "nnlab: %s\n", err);
            return CLI_EXIT_USAGE;
        }
        if (cli_calibration(names[d], (int)o->threads, o->recalibrate, 1, &cal) != 0)
            return EXIT_FAILURE;
        nn_sweep_add_device(sw, names[d], &cal, NULL);
    }
    return 0;
}

int nn_cli_sweep(int argc, char **argv)
{
    cli_options o;
    static nn_preset p;
    static nn_job_config cfg;
    static nn_sweep sw;
    int batches[NN_SWEEP_MAX_BATCHES];
    int rc = cli_parse(CLI_SWEEP, argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : CLI_EXIT_USAGE;
    if (cli_load_preset(o.preset, &p) != 0 || cli_job_config(&o, &p, &cfg) != 0)
        return CLI_EXIT_USAGE;
    int nb = parse_batches(o.batches ? o.batches : DEFAULT_BATCHES, batches, NN_SWEEP_MAX_BATCHES);
    if (nb < 1)
        return CLI_EXIT_USAGE;
    nn_sweep_init(&sw, &cfg, batches, nb, cfg.steps, cfg.warmup);
    if ((rc = add_devices(&sw, &o)) != 0)
        return rc;
    cli_run_sweep(&sw, 0);
    cli_sweep_print(stdout, &sw, o.csv ? CLI_SWEEP_CSV : o.json ? CLI_SWEEP_JSON : CLI_SWEEP_TEXT);
    nn_sweep_free(&sw);
    return 0;
}

/* src/cli/cli_sweep.c - nnlab sweep: the analysis layer's sweep (nnlab/sweep.h),
 * the same runner and rules as the lab's sweep screen, run to its end and
 * printed as a table, CSV or JSON. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_common.h"
#include "nnlab/calibrate.h"
#include "nnlab/device.h"
#include "nnlab/explain.h"
#include "nnlab/export.h"
#include "nnlab/export_svg.h"
#include "nnlab/observe.h"
#include "nnlab/sweep.h"
#include "util.h"

#define DEFAULT_BATCHES "1,2,4,8,16,32,64,128,256,512,1024,2048,4096"

/* A comma list with an empty entry ("", "1,,2", ",cpu", "cpu,"), which
 * strtok would skip without a word: said, naming the option. */
static int empty_entry(const char *option, const char *s)
{
    size_t n = strlen(s);
    if (n > 0 && s[0] != ',' && s[n - 1] != ',' && !strstr(s, ",,"))
        return 0;
    fprintf(stderr, "nnlab: %s '%s': an empty entry (expected a list like %s)\n", option,
            nn_safe(s), strcmp(option, "--batches") ? "cpu,gpu" : "1,4,16");
    return 1;
}

/* "1,4,16" -> batches, each by the preset's rule for [train] batch; returns
 * the count, or -1 after a one-line error naming the list and the entry. */
static int parse_batches(const char *s, int *out, int max)
{
    int n = 0;
    char buf[512], *save = NULL, why[NN_ERR_LEN];
    nn_preset scratch;
    nn_preset_defaults(&scratch);
    if (empty_entry("--batches", s))
        return -1;
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

/* "cpu,gpu" -> names; -1 after a one-line error for an empty entry. */
static int split_devices(const char *s, char names[NN_SWEEP_MAX_DEVICES][16])
{
    int n = 0;
    char buf[128], *save = NULL;
    if (empty_entry("--devices", s))
        return -1;
    nn_strlcpy(buf, s, sizeof buf);
    for (char *tok = strtok_r(buf, ",", &save); tok && n < NN_SWEEP_MAX_DEVICES; tok = strtok_r(NULL, ",", &save))
        nn_strlcpy(names[n++], tok, 16);
    return n;
}

/* ---- printing ------------------------------------------------------------------------------ */

/* The text table's header; CSV and JSON are the library's (nnlab/export.h),
 * which the lab's export writes too. */
static void print_header(FILE *f)
{
    fprintf(f, "%-13s %7s %12s %12s %14s %9s  %-15s %s\n", "device", "batch", "us/step", "predicted",
            "samples/s", "doubling", "regime", "source");
}

static void print_text_point(FILE *f, const nn_sweep *sw, int d, int i)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    double doubling = nn_sweep_doubling(sw, d, i);
    char dbl[16] = "-", predicted[16] = "-", name[24], source[NN_NAME_LEN + 24];
    if (doubling > 0)
        snprintf(dbl, sizeof dbl, "%.2f", doubling);
    if (p->has_model)
        snprintf(predicted, sizeof predicted, "%.1f", p->predicted_us);
    snprintf(name, sizeof name, "%s%s%s", sw->device[d], sw->predicted[d] ? " " : "",
             sw->predicted[d] ? nn_gpu_way_key((nn_gpu_way)sw->way[d]) : "");
    if (sw->predicted[d])
        snprintf(source, sizeof source, "predicted for %s", nn_safe(sw->prof.name));
    else if (p->profile_us > 0)
        snprintf(source, sizeof source, "measured (%s predicts %.1f)", nn_safe(sw->prof.name),
                 p->profile_us);
    else
        snprintf(source, sizeof source, "measured");
    fprintf(f, "%-13s %7d %12.1f %12s %14.0f %9s  %-15s %s\n", name, sw->batch[i],
            p->predicted ? p->predicted_us : p->measured.step_us, predicted, p->rate, dbl,
            p->has_model ? nn_regime_name(p->regime) : "-", source);
}

/* Each device's calibration: where its figures come from, their age and
 * quality (a predicted device's: the profile's). */
static void print_calibrations(FILE *f, const nn_sweep *sw)
{
    char line[NN_ERR_LEN];
    for (int d = 0; d < sw->n_devices; d++) {
        if (d > 0 && sw->predicted[d] && sw->predicted[d - 1])
            continue;                /* the three ways share the profile's */
        if (sw->has_cal[d])
            nn_calibration_describe(&sw->cal[d], (long long)time(NULL), line, sizeof line);
        else
            snprintf(line, sizeof line, "none: %s", sw->cal_why[d]);
        fprintf(f, "%s calibration: %s\n", sw->device[d], line);
    }
}

/* Where each device after the first overtakes the first; a predicted
 * device's crossover is a prediction and says so. */
static void print_crossovers(FILE *f, const nn_sweep *sw)
{
    for (int d = 1; d < sw->n_devices; d++) {
        int x = nn_sweep_crossover(sw, 0, d);
        char label[96], base[96];
        nn_sweep_device_label(sw, d, label, sizeof label);
        nn_sweep_device_label(sw, 0, base, sizeof base);
        if (x >= 0)
            fprintf(f, "%s overtakes %s from batch %d on%s\n", label, base, sw->batch[x],
                    sw->predicted[d] ? " (predicted)" : "");
        else
            fprintf(f, "%s does not overtake %s at the batches swept%s\n", label, base,
                    sw->predicted[d] ? " (predicted)" : "");
    }
}

void cli_sweep_print(FILE *f, const nn_sweep *sw, enum cli_sweep_format format)
{
    if (format == CLI_SWEEP_CSV) {
        nn_export_sweep_csv(f, sw);
        return;
    }
    if (format == CLI_SWEEP_JSON) {
        nn_export_sweep_json(f, sw, (long long)time(NULL));
        return;
    }
    print_header(f);
    for (int d = 0; d < sw->n_devices; d++)
        for (int i = 0; i < sw->n_batches; i++)
            if (sw->pt[d][i].state == NN_POINT_DONE)
                print_text_point(f, sw, d, i);
    fprintf(f, "(us/step: the %s over the timed steps, or the model's for a predicted row; doubling: the "
            "step at b over the step at b/2)\n", NN_STEP_STAT);
    print_calibrations(f, sw);
    print_crossovers(f, sw);
}

/* ---- the command ----------------------------------------------------------------------------- */

/* The GPU is not here: predicted for the profile, three ways. */
static int add_predicted_gpu(nn_sweep *sw, const cli_options *o, const char *why)
{
    static nn_gpu_profile prof;
    if (cli_gpu_profile(o, 1, &prof) != 0)
        return CLI_EXIT_USAGE;
    if (nn_sweep_add_predicted(sw, &prof) != 0) {
        fprintf(stderr, "nnlab: --devices: too many devices to add the GPU's three ways (at most %d in all)\n",
                NN_SWEEP_MAX_DEVICES);
        return CLI_EXIT_USAGE;
    }
    fprintf(stderr, "nnlab: %s: the gpu rows are predicted for %s\n", why, nn_safe(prof.name));
    return 0;
}

/* Adds each device with its calibration (measured first when not cached);
 * a GPU that is not here, as predicted; a GPU that is, beside the profile. */
static int add_devices(nn_sweep *sw, const cli_options *o)
{
    static nn_gpu_profile prof;
    char names[NN_SWEEP_MAX_DEVICES][16], err[NN_ERR_LEN];
    int n = split_devices(o->devices ? o->devices : "cpu", names), rc;
    if (n < 0)
        return CLI_EXIT_USAGE;
    for (int d = 0; d < n; d++) {
        nn_calibration cal;
        if (nn_device_require(names[d], err, sizeof err) != 0) {
            if (!strcmp(names[d], "gpu") && (rc = add_predicted_gpu(sw, o, err)) == 0)
                continue;
            if (strcmp(names[d], "gpu") != 0)
                fprintf(stderr, "nnlab: %s\n", err);
            return CLI_EXIT_USAGE;
        }
        if (!strcmp(names[d], "gpu") && cli_gpu_profile(o, 0, &prof) == 0)
            nn_sweep_set_profile(sw, &prof);
        else if (!strcmp(names[d], "gpu") && o->gpu_profile)
            return CLI_EXIT_USAGE;
        if (cli_calibration(names[d], (int)o->threads, o->recalibrate, 1, &cal) != 0)
            return EXIT_FAILURE;
        nn_sweep_add_device(sw, names[d], &cal, NULL);
    }
    return 0;
}

/* Every point's job checked before anything is calibrated or run: a batch
 * larger than the training set, or more memory than there is, is a usage
 * error (2) naming --batches, as train's --batch. */
static int check_points(const cli_options *o, const nn_job_config *cfg, const int *batches, int nb)
{
    char names[NN_SWEEP_MAX_DEVICES][16];
    nn_job_config c = *cfg;
    int n = split_devices(o->devices ? o->devices : "cpu", names);
    if (n < 0)
        return -1;                   /* said why */
    for (int d = 0; d < n; d++)
        for (int i = 0; i < nb; i++) {
            nn_strlcpy(c.device, names[d], sizeof c.device);
            c.batch = batches[i];
            if (cli_check_sizes("--batches", o->preset, &c) != 0)
                return -1;
        }
    return 0;
}

/* --svg FILE: the sweep with its crossovers marked (nnlab/export_svg.h). */
static int cli_sweep_svg(const nn_sweep *sw, const char *path)
{
    char err[NN_ERR_LEN];
    if (nn_export_svg_file(path, NULL, 0, NULL, 0, sw, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "nnlab: --svg: %s\n", err);
    return EXIT_FAILURE;
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
    if (nb < 1 || check_points(&o, &cfg, batches, nb) != 0)
        return CLI_EXIT_USAGE;
    nn_sweep_init(&sw, &cfg, batches, nb, cfg.steps, cfg.warmup);
    if ((rc = add_devices(&sw, &o)) != 0)
        return rc;
    cli_run_sweep(&sw, 0);
    cli_sweep_print(stdout, &sw, o.csv ? CLI_SWEEP_CSV : o.json ? CLI_SWEEP_JSON : CLI_SWEEP_TEXT);
    nn_sweep_free(&sw);
    return o.svg ? cli_sweep_svg(&sw, o.svg) : 0;
}

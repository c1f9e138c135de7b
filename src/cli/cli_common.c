/* src/cli/cli_common.c - the helpers every command shares: a job's config
 * from the options, presets, JSON, calibrations, profiles, the usage text;
 * see cli_common.h. The option table is cli_options.c. */
#include "config.h"

#include "cli_common.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nnlab/device.h"
#include "nnlab/export.h"
#include "nnlab/progress.h"
#include "util.h"

/* ---- the job ---------------------------------------------------------------------------- */

int cli_job_config(const cli_options *o, const nn_preset *p, nn_job_config *cfg)
{
    char err[NN_ERR_LEN];
    int bench = o->command != CLI_TRAIN;
    const nn_job_traits *kind = nn_job_traits_of(nn_job_kind_of_preset(p));
    if (!kind->trains) {         /* train, bench and sweep take training steps */
        fprintf(stderr, "nnlab: %s: [task] kind = %s: run it with `nnlab %s --preset %s`\n",
                o->preset, kind->name, kind->name, o->preset);
        return -1;
    }
    nn_job_config_init(cfg, p);
    if (o->device)
        nn_strlcpy(cfg->device, o->device, sizeof cfg->device);
    if (o->data)
        nn_strlcpy(cfg->data_dir, o->data, sizeof cfg->data_dir);
    cfg->batch = (int)o->batch;
    cfg->epochs = (int)o->epochs;
    cfg->steps = o->steps;
    cfg->lr = o->lr;
    cfg->seed = o->seed;
    cfg->threads = (int)o->threads;
    cfg->log_every = o->log_every;
    cfg->no_validation = o->no_validation;
    cfg->bench = bench;
    cfg->warmup = bench ? o->warmup : 0;
    cfg->data_on_device = o->data_on_device;
    cfg->pinned = o->pinned;
    cfg->sync_every_step = o->sync_every_step;
    cfg->graph = o->graph;
    cfg->tf32 = o->tf32;
    if (o->deterministic)            /* else the preset's [train] deterministic */
        cfg->deterministic = 1;
    if (o->no_overlap)               /* else the preset's [train] overlap */
        cfg->no_overlap = 1;
    if (nn_job_switches_check(cfg, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return -1;
    }
    return 0;
}

/* ---- helpers ---------------------------------------------------------------------------- */

int cli_load_preset(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    if (!name) {
        fprintf(stderr, "nnlab: --preset NAME|FILE is required (see `nnlab presets`)\n");
        return -1;
    }
    if (nn_preset_find(name, path, sizeof path, err, sizeof err) != 0 ||
        nn_preset_load(path, p, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return -1;
    }
    return 0;
}

/* s as a JSON string: the library's escaping (nnlab/export.h) */
void cli_json_string(FILE *f, const char *s)
{
    nn_json_string(f, s);
}

void cli_json_number(const char *key, double v, int last)
{
    printf("  \"%s\": ", key);
    if (isfinite(v))
        printf("%.6g", v);
    else
        printf("null");
    printf(last ? "\n" : ",\n");
}

void cli_json_float(const char *key, double v, int last)
{
    printf("  \"%s\": ", key);
    if (isfinite(v))
        printf("%.9g", v);
    else
        printf("null");
    printf(last ? "\n" : ",\n");
}

void cli_json_optional(const char *key, int valid, double v, int digits)
{
    if (valid)
        printf(", \"%s\": %.*g", key, digits, v);
    else
        printf(", \"%s\": null", key);
}

void cli_conv_algorithms_json(const nn_conv_algorithm_info *a, int n)
{
    char shape[64];
    if (n <= 0)
        return;
    printf("  \"conv_algorithms\": [");
    for (int i = 0; i < n; i++) {
        nn_conv_shape_text(&a[i], shape, sizeof shape);
        printf("%s\n    {\"shape\": ", i ? "," : "");
        cli_json_string(stdout, shape);
        printf(", \"batch\": %d, \"direction\": \"%s\", \"algorithm\": ", a[i].n, a[i].direction);
        cli_json_string(stdout, a[i].algorithm);
        printf(", \"deterministic\": %s, \"time_us\": %.6g, \"from_cache\": %s}",
               a[i].deterministic ? "true" : "false", a[i].time_us, a[i].from_cache ? "true" : "false");
    }
    printf("\n  ],\n");
}

static void show_progress(void *ctx, double fraction, const char *what)
{
    (void)ctx;
    fprintf(stderr, "\rcalibrating: %3.0f%% %-40s", fraction * 100.0, what);
    if (fraction >= 1.0)
        fprintf(stderr, "\n");
}

/* The warning or error of a calibration got, said; 0 or -1 as got. */
static int said(int rc, const char *err, const char *warning)
{
    if (rc != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return -1;
    }
    if (warning[0])
        fprintf(stderr, "nnlab: warning: %s\n", warning);
    return 0;
}

int cli_calibration(const char *device, int threads, int remeasure, int quiet, nn_calibration *cal)
{
    char err[NN_ERR_LEN], warning[NN_ERR_LEN];
    return said(nn_calibration_get(device, threads, remeasure, quiet ? NULL : show_progress, NULL, cal, err,
                                   sizeof err, warning, sizeof warning), err, warning);
}

int cli_calibration_threads(const char *device, int threads, int remeasure, int quiet, nn_calibration *cal)
{
    char err[NN_ERR_LEN], warning[NN_ERR_LEN];
    return said(nn_calibration_get_threads(device, threads, remeasure, quiet ? NULL : show_progress, NULL, cal,
                                           err, sizeof err, warning, sizeof warning), err, warning);
}

int cli_gpu_profile(const cli_options *o, int required, nn_gpu_profile *out)
{
    char err[NN_ERR_LEN];
    const char *name = o->gpu_profile ? o->gpu_profile : nn_profile_default_name();
    if (nn_profile_find(name, out, err, sizeof err) == 0)
        return 0;
    if (required || o->gpu_profile)       /* a profile named is always required */
        fprintf(stderr, "nnlab: %s\n", err);
    return -1;
}

/* Every check the calibration failed (nn_calibration_check), as JSON strings. */
static void cli_failed_checks_json(const nn_calibration *c)
{
    nn_cal_failure fails[8];
    int n = nn_calibration_check(c, fails, 8);
    for (int i = 0; i < n && i < 8; i++) {
        printf("%s", i ? ", " : "");
        cli_json_string(stdout, fails[i].why);
    }
}

void cli_calibration_json(const nn_calibration *c)
{
    char why[NN_ERR_LEN];
    if (c->profile) {
        printf("\"calibration\": {\"source\": \"profile\", \"note\": ");
        cli_json_string(stdout, c->note);
        printf("}");
        return;
    }
    int q = nn_calibration_quality(c, why, sizeof why);
    printf("\"calibration\": {\"source\": \"measured\", \"age_s\": %lld, \"quality\": \"%s\", \"why\": ",
           (long long)time(NULL) - c->created, nn_cal_quality_name(q));
    cli_json_string(stdout, why);
    printf(", \"spread\": {");
    for (int k = 0; k < NN_SPREADS; k++)
        printf("%s\"%s\": %.4g", k ? ", " : "", nn_spread_name(k), c->spread[k]);
    printf("}, \"failed_checks\": [");
    cli_failed_checks_json(c);
    printf("]}");
}

/* What was printed reached its file: a full disk or a closed pipe shows at
 * the last flush, and exiting 0 then would let `nnlab train --json > f`
 * pass with f empty. Returns rc, or 1 after saying why. */
int cli_output_checked(int rc)
{
    errno = 0;
    int failed = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !failed && errno != EBADF) {
        failed = 1;
        e = errno;
    }
    if (failed)
        fprintf(stderr, "nnlab: cannot write the output: %s\n", e ? strerror(e) : "write error");
    /* stderr too, as gnulib's close_stdout does: train and bench without
     * --json print their result there, so 2>/dev/full must not exit 0
     * (nothing is left to say why: the stream that would say it failed) */
    if (fflush(stderr) != 0 || ferror(stderr))
        failed = 1;
    return !failed || rc != 0 ? rc : EXIT_FAILURE;
}

/* A batch larger than the training set, or a job larger than the memory
 * (or the address space) available, is a usage error said in the user's
 * terms: the option given, or the preset's key. nn_job_start checks the
 * same, in the engine's. */
int cli_check_sizes(const char *batch_option, const char *preset, const nn_job_config *cfg)
{
    char key[NN_PATH_LEN + 32], err[NN_ERR_LEN + NN_PATH_LEN];
    nn_memory_estimate m;
    if (batch_option)
        snprintf(key, sizeof key, "%s", batch_option);
    else
        snprintf(key, sizeof key, "%s: [train] batch =", preset);
    nn_job_memory_estimate(cfg, &m);
    if (nn_job_check_sizes(cfg, &m, key, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "nnlab: %s\n", err);
    return -1;
}

void cli_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int cli_run_on_heap(enum cli_command command, int argc, char **argv, size_t size, cli_heap_command run)
{
    cli_options o;
    int rc = cli_parse(command, argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : CLI_EXIT_USAGE;
    void *state = calloc(1, size);
    if (!state) {
        fprintf(stderr, "nnlab: out of memory\n");
        return EXIT_FAILURE;
    }
    rc = run(&o, state);
    free(state);
    return rc;
}

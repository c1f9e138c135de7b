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
#include "cli_sweep_ranks.h"
#include "cli_stop.h"
#include "nnlab/calibrate.h"
#include "nnlab/device.h"
#include "nnlab/explain.h"
#include "nnlab/progress.h"
#include "nnlab/torch_step.h"
#include "nnlab/export.h"
#include "nnlab/export_svg.h"
#include "nnlab/observe.h"
#include "nnlab/sweep.h"
#include "util.h"

#define DEFAULT_BATCHES "1,2,4,8,16,32,64,128,256,512,1024,2048,4096"
/* the ranks' sweep: every cell is two runs of a few seconds each */
#define RANKS_DEFAULT_BATCHES "4,64,256"

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
    fprintf(f, "%-4s %-9s %7s %12s %8s %12s %14s %9s  %-15s %s\n", "dev", "way", "batch", "us/step", "spread",
            "predicted", "samples/s", "doubling", "regime", "source");
}

/* "+-4%" (x2: measured twice); "-" when no spread is known */
static void spread_text(const nn_sweep_point *p, char *buf, size_t len)
{
    if (p->predicted || !(p->measured.step_us > 0) || p->repeats == 0)
        snprintf(buf, len, "-");
    else if (p->repeats > 1)
        snprintf(buf, len, "+-%.0f%%x%d", 100 * p->spread_us / p->measured.step_us, p->repeats);
    else
        snprintf(buf, len, "+-%.0f%%", 100 * p->spread_us / p->measured.step_us);
}

static void print_text_point(FILE *f, const nn_sweep *sw, int d, int i)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    double doubling = nn_sweep_doubling(sw, d, i);
    char dbl[16] = "-", predicted[16] = "-", spread[24], source[NN_NAME_LEN + 48];
    if (doubling > 0)
        snprintf(dbl, sizeof dbl, "%.2f", doubling);
    if (p->has_model || p->predicted)
        snprintf(predicted, sizeof predicted, "%.1f", p->predicted_us);
    spread_text(p, spread, sizeof spread);
    nn_sweep_source_text(sw, d, source, sizeof source);
    if (p->profile_us > 0)
        snprintf(source + strlen(source), sizeof source - strlen(source), " (%s predicts %.1f)",
                 nn_safe(sw->prof.name), p->profile_us);
    fprintf(f, "%-4s %-9s %7d %12.1f %8s %12s %14.0f %9s  %-15s %s\n", sw->device[d], nn_sweep_way_word(sw, d),
            sw->batch[i], p->predicted ? p->predicted_us : p->measured.step_us, spread, predicted, p->rate, dbl,
            p->has_model ? nn_regime_name(p->regime) : "-", source);
}

/* Each device's calibration: where its figures come from, their age and
 * quality (a predicted device's: the profile's), once per device. */
static void print_calibrations(FILE *f, const nn_sweep *sw)
{
    char line[NN_ERR_LEN];
    for (int d = 0; d < sw->n_devices; d++) {
        if (!nn_sweep_lists_calibration(sw, d))
            continue;
        if (sw->has_cal[d])
            nn_calibration_describe(&sw->cal[d], (long long)time(NULL), line, sizeof line);
        else
            snprintf(line, sizeof line, "none: %s", sw->cal_why[d]);
        fprintf(f, "%s calibration: %s\n", sw->device[d], line);
    }
}

/* The crossover of each matching pair, in the words the lab uses too
 * (nn_sweep_crossover_words), predicted ones said so; the write-up's figure
 * after the framework pair's. */
static void print_crossovers(FILE *f, const nn_sweep *sw)
{
    nn_sweep_pair pairs[2 * NN_SWEEP_MAX_DEVICES];
    int n = nn_sweep_pairs(sw, pairs, 2 * NN_SWEEP_MAX_DEVICES);
    char label[128], base[128], words[160], writeup[320];
    nn_sweep_writeup_text(sw, writeup, sizeof writeup);
    for (int k = 0; k < n; k++) {
        const nn_sweep_pair *p = &pairs[k];
        nn_sweep_device_label(sw, p->challenger, label, sizeof label);
        nn_sweep_device_label(sw, p->base, base, sizeof base);
        nn_sweep_crossover_words(sw, p, words, sizeof words);
        fprintf(f, "%s: %s against %s: %s%s\n", nn_pair_kind_name(p->kind), nn_safe(label), nn_safe(base), words,
                p->predicted ? " (predicted)" : "");
        if (p->kind == NN_PAIR_FRAMEWORK && writeup[0] && (k + 1 == n || pairs[k + 1].kind != NN_PAIR_FRAMEWORK))
            fprintf(f, "  %s\n", nn_safe(writeup));
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
    fprintf(f, "(us/step: the %s over the timed steps, of the median run when a point was measured again; "
            "spread: half its runs' range (xN: N runs), or of one run's mean and median; the model's for a "
            "predicted row; doubling: the step at b over the step at b/2; way: nnlab, eager, graph or framework, "
            "see nnlab(1))\n", NN_STEP_STAT);
    print_calibrations(f, sw);
    print_crossovers(f, sw);
}

/* ---- the command ----------------------------------------------------------------------------- */

/* The GPU is not here: predicted for the profile, three ways. */
static int add_predicted_gpu(nn_sweep *sw, const cli_options *o, const char *why)
{
    nn_gpu_profile prof;
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

/* A GPU that is here: its eager and graph ways measured side by side, unless
 * a switch on the command line picked one way (then that way alone, as
 * before); its framework way predicted from its calibration on top. */
static int add_gpu(nn_sweep *sw, const cli_options *o, const nn_calibration *cal, const nn_gpu_profile *prof)
{
    int rc;
    if (o->way_switch_given) {
        nn_sweep_add_device(sw, "gpu", cal, NULL);
        rc = nn_sweep_add_framework_gpu(sw, cal, prof);
    } else {
        rc = nn_sweep_add_gpu_ways(sw, cal, prof);
    }
    if (rc != 0) {
        fprintf(stderr, "nnlab: --devices: too many devices to add the GPU's ways (at most %d in all)\n",
                NN_SWEEP_MAX_DEVICES);
        return CLI_EXIT_USAGE;
    }
    return 0;
}

/* Adds each device with its calibration (measured first when not cached);
 * a GPU that is not here, as predicted; a GPU that is, its ways beside the
 * profile. With a GPU in the sweep, the CPU's framework way (predicted from
 * its calibration) follows the CPU, to pair with the GPU's framework way. */
int cli_sweep_add_devices(nn_sweep *sw, const cli_options *o)
{
    nn_gpu_profile prof;
    char names[NN_SWEEP_MAX_DEVICES][16], err[NN_ERR_LEN];
    int n = split_devices(o->devices ? o->devices : "cpu", names), rc, with_gpu = 0, have_prof;
    if (n < 0)
        return CLI_EXIT_USAGE;
    for (int d = 0; d < n; d++)
        with_gpu |= nn_device_kind_of(names[d]).gpu;
    have_prof = cli_gpu_profile(o, 0, &prof) == 0;
    if (!have_prof && o->gpu_profile)
        return CLI_EXIT_USAGE;       /* said why */
    for (int d = 0; d < n; d++) {
        nn_calibration cal;
        nn_device_kind kind = nn_device_kind_of(names[d]);
        if (nn_device_require(names[d], err, sizeof err) != 0) {
            if (kind.gpu && (rc = add_predicted_gpu(sw, o, err)) == 0)
                continue;
            if (!kind.gpu)
                fprintf(stderr, "nnlab: %s\n", err);
            return CLI_EXIT_USAGE;
        }
        if (cli_calibration(names[d], (int)o->threads, o->recalibrate, 1, &cal) != 0)
            return EXIT_FAILURE;
        if (kind.gpu && have_prof) {
            nn_sweep_set_profile(sw, &prof);
            if ((rc = add_gpu(sw, o, &cal, &prof)) != 0)
                return rc;
            continue;
        }
        nn_sweep_add_device(sw, names[d], &cal, NULL);   /* without a profile: the switches' one way */
        if (with_gpu && have_prof && kind.threaded && nn_sweep_add_framework_cpu(sw, &cal, &prof) != 0)
            return CLI_EXIT_USAGE;
    }
    return 0;
}

void cli_run_sweep(nn_sweep *sw, int quiet)
{
    long failed = 0;
    int shown = -1;
    while (!sw->finished) {
        if (cli_stop_signal() && !sw->cancelled)
            nn_sweep_cancel(sw);         /* caught only with --with-pytorch (add_pytorch) */
        int bits = nn_sweep_poll(sw);
        if (sw->n_failed > failed) {     /* e.g. out of memory at a large batch: the rest still stands */
            fprintf(stderr, "nnlab: %s\n", sw->last_error);
            failed = sw->n_failed;
        }
        int now = sw->job ? sw->cur_batch * sw->n_devices + sw->cur_dev : -1;
        if (!quiet && now >= 0 && now != shown) {
            nn_job_times t;              /* the library's figures, as the lab's sweep bar */
            char times[48];
            nn_sweep_times(sw, nn_now(), &t);
            nn_format_elapsed_remaining(&t, times, sizeof times);
            fprintf(stderr, "\rsweep: %ld/%ld %s  %s batch %d ...   ", t.steps, t.total_steps, times,
                    sw->device[sw->cur_dev], sw->batch[sw->cur_batch]);
        }
        shown = now;
        if (!(bits & NN_SWEEP_RESULTS) && sw->job) {
            nn_sweep_wait(sw);           /* the point's job ends; the next poll collects it */
            continue;
        }
        if (!bits && !sw->job && !sw->finished)
            cli_sleep_ms(sw->torch_run ? 20 : 1);   /* PyTorch's point takes seconds */
    }
    if (!quiet)
        fprintf(stderr, "\r%60s\r", "");
}

/* --with-pytorch without a python3 that imports torch: a usage error (2),
 * said in one line before anything is calibrated or run. */
static int pytorch_here(void)
{
    nn_torch_python py;
    char err[NN_ERR_LEN];
    if (nn_torch_find(&py, err, sizeof err) == NN_TORCH_OK)
        return 0;
    fprintf(stderr, "nnlab: --with-pytorch: %s\n", nn_safe(err));
    return CLI_EXIT_USAGE;
}

/* --with-pytorch: the framework way measured for real on the CPU and, when
 * the sweep has a GPU here that PyTorch sees, on the GPU (nn_sweep_add_pytorch).
 * No python3 with torch is a usage error (2); a GPU PyTorch cannot use is
 * said and left to the prediction. */
static int add_pytorch(nn_sweep *sw, const cli_options *o)
{
    char names[NN_SWEEP_MAX_DEVICES][16], path[NN_PATH_LEN], err[NN_ERR_LEN];
    int n = split_devices(o->devices ? o->devices : "cpu", names);
    if (nn_preset_find(o->preset, path, sizeof path, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", nn_safe(err));
        return CLI_EXIT_USAGE;
    }
    for (int d = 0; d < n; d++) {
        nn_device_kind kind = nn_device_kind_of(names[d]);
        int gpu = kind.gpu;
        if (!kind.threaded && !gpu)
            continue;                /* cpu-ref has no framework counterpart */
        if (gpu && nn_device_require("gpu", err, sizeof err) != 0)
            continue;                /* no GPU here: its framework way stays predicted */
        if (nn_sweep_add_pytorch(sw, names[d], path, err, sizeof err) == 0)
            continue;
        fprintf(stderr, "nnlab: --with-pytorch: %s\n", nn_safe(err));
        if (!gpu)
            return CLI_EXIT_USAGE;
    }
    cli_catch_stop_signals();        /* a stop cancels the helper too (cli_run_sweep) */
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

/* The sweep's devices added, its points run and printed; 0 or the exit
 * status. */
static int sweep_and_print(const cli_options *o, nn_sweep *sw)
{
    int rc;
    if (o->with_pytorch && (rc = pytorch_here()) != 0)
        return rc;                   /* before calibrating anything: a refusal is one line */
    if ((rc = cli_sweep_add_devices(sw, o)) != 0)
        return rc;
    if (o->with_pytorch && (rc = add_pytorch(sw, o)) != 0)
        return rc;
    cli_run_sweep(sw, 0);
    cli_sweep_print(stdout, sw, o->csv ? CLI_SWEEP_CSV : o->json ? CLI_SWEEP_JSON : CLI_SWEEP_TEXT);
    return 0;
}

/* What the command works on: hundreds of KB together (the sweep's points
 * and calibrations), so on the heap, owned by nn_cli_sweep. */
typedef struct sweep_command {
    nn_preset p;
    nn_job_config cfg;
    nn_sweep sw;
} sweep_command;

static int sweep_command_run(cli_options *o, void *state)
{
    sweep_command *c = state;
    int batches[NN_SWEEP_MAX_BATCHES], rc;
    if (cli_load_preset(o->preset, &c->p) != 0 || cli_job_config(o, &c->p, &c->cfg) != 0)
        return CLI_EXIT_USAGE;
    int nb = parse_batches(o->batches ? o->batches : o->ranks_list ? RANKS_DEFAULT_BATCHES : DEFAULT_BATCHES,
                           batches, NN_SWEEP_MAX_BATCHES);
    if (nb < 1 || check_points(o, &c->cfg, batches, nb) != 0)
        return CLI_EXIT_USAGE;
    if (o->ranks_list)               /* the ranks' sweep: its own runs and table */
        return cli_sweep_ranks(o, &c->p, batches, nb);
    nn_sweep_init(&c->sw, &c->cfg, batches, nb, c->cfg.steps, c->cfg.warmup);
    rc = sweep_and_print(o, &c->sw);
    nn_sweep_free(&c->sw);           /* its job, if one still runs; the figures stay */
    return rc == 0 && o->svg ? cli_sweep_svg(&c->sw, o->svg) : rc;
}

int nn_cli_sweep(int argc, char **argv)
{
    return cli_run_on_heap(CLI_SWEEP, argc, argv, sizeof(sweep_command), sweep_command_run);
}

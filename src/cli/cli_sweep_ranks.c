/* src/cli/cli_sweep_ranks.c - nnlab sweep --ranks 1,2,4: every per-rank
 * batch and rank count run for real (nnlab/ranks_sweep.h: each a bench of
 * N ranks under mpirun, and one rank at N x B beside), progress on stderr,
 * then the table (text, CSV or JSON): measured steps, the all-reduce, the
 * speedup on the same samples and the efficiency, the model's prediction
 * over the link beside (labelled), and where more ranks stop paying. */
#include "cli_sweep_ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_stop.h"
#include "nnlab/device.h"
#include "nnlab/ranks_sweep.h"
#include "util.h"

/* Each count's ranks share this host's cores, as they run measured: this
 * CPU calibrated at the threads each rank runs (cached under its thread
 * count, beside the device's own: measured once, a few seconds, and
 * shared with the lab's race of ranks). 0, or -1 with why. */
static int rank_calibrations(nn_ranks_sweep *sw, char *why, size_t len)
{
    char err[NN_ERR_LEN];
    int gpu = nn_device_kind_of(sw->device).gpu;
    for (int c = 0; c < sw->n_counts; c++) {
        if (gpu) {                   /* one GPU a rank: each its own device */
            sw->rank_cal[c] = sw->cal, sw->timeshare[c] = 1.0, sw->rank_threads[c] = 0;
            continue;
        }
        int t = nn_ranks_threads_each(sw->counts[c], sw->cal.threads, &sw->timeshare[c]);
        int same = -1;
        for (int k = 0; k < c && same < 0; k++)
            if (sw->rank_threads[k] == t)
                same = k;
        sw->rank_threads[c] = t;
        if (t == sw->cal.threads)
            sw->rank_cal[c] = sw->cal;
        else if (same >= 0)
            sw->rank_cal[c] = sw->rank_cal[same];
        else {
            char warning[NN_ERR_LEN];
            if (nn_calibration_load_threads(sw->device, t, &sw->rank_cal[c]) != 0)
                fprintf(stderr, "nnlab: calibrating %s at %d thread%s, a rank's, for the prediction\n", sw->device,
                        t, t == 1 ? "" : "s");
            if (nn_calibration_get_threads(sw->device, t, 0, NULL, NULL, &sw->rank_cal[c], err, sizeof err, warning,
                                           sizeof warning) != 0) {
                snprintf(why, len, "no prediction beside: %.400s", err);
                return -1;
            }
            if (warning[0])
                fprintf(stderr, "nnlab: warning: %s\n", warning);
        }
    }
    return 0;
}

/* The sweep's prediction: the CPU's calibration and the link (--link, else
 * the default); without either the table is measured only, and says why. */
static void add_prediction(const cli_options *o, nn_ranks_sweep *sw, char *why, size_t len)
{
    char err[NN_ERR_LEN];
    const char *name = o->link ? o->link : nn_link_default_name(0);
    why[0] = '\0';
    if (nn_link_find(name, &sw->link, err, sizeof err) != 0) {
        snprintf(why, len, "no prediction beside: %.400s", err);
        return;
    }
    if (cli_calibration(sw->device, (int)o->threads, o->recalibrate, 1, &sw->cal) != 0) {
        snprintf(why, len, "no prediction beside: the %s device is not calibrated", sw->device);
        return;
    }
    if (rank_calibrations(sw, why, len) == 0)
        sw->has_prediction = 1;
}

static int stop_asked(void *ctx)
{
    (void)ctx;
    return cli_stop_signal() != 0;
}

static void say_cell(const nn_ranks_sweep *sw, int c, int b, void *ctx)
{
    const nn_ranks_cell *cell = &sw->cell[c][b];
    int quiet = *(const int *)ctx;
    if (quiet)
        return;
    if (cell->ranks.state != NN_RANKS_DONE)
        fprintf(stderr, "nnlab: %d ranks at %d each: failed: %s\n", sw->counts[c], sw->batches[b],
                nn_safe(cell->ranks.error));
    else
        fprintf(stderr, "nnlab: %d ranks at %d each: %.1f us/step measured (one rank at %d: %.1f us)\n",
                sw->counts[c], sw->batches[b], cell->ranks.step_us, sw->counts[c] * sw->batches[b],
                cell->one.step_us);
}

/* ---- printing ---------------------------------------------------------------------------- */

static void print_text(const nn_ranks_sweep *sw, const char *why)
{
    char words[512];
    printf("%s on %s: data-parallel ranks, each at the batch shown (MPI on this machine); "
           "steps measured (median), speedup = one rank at N x B / N ranks at B\n", nn_safe(sw->p.name), sw->device);
    if (sw->has_prediction)
        printf("predicted beside: over %s (%s); the ranks share this host's %d threads as they run measured "
               "(each its share, taking turns past one a core), %s\n", nn_safe(sw->link.name),
               nn_link_origin(&sw->link), sw->cal.threads, nn_device_kind_of(sw->device).gpu
               ? (sw->overlap ? "the all-reduce during backward" : "the all-reduce after backward")
               : "the all-reduce after backward (their cores add it up: nothing hides it)");
    else
        printf("%s\n", why);
    printf("%6s %5s %12s %11s %14s %8s %6s %12s %8s\n", "batch", "ranks", "step us", "allreduce", "1 rank at NxB",
           "speedup", "eff", "pred. step", "pred. x");
    for (int b = 0; b < sw->n_batches; b++) {
        for (int c = 0; c < sw->n_counts; c++) {
            const nn_ranks_cell *cell = &sw->cell[c][b];
            if (cell->ranks.state != NN_RANKS_DONE) {
                printf("%6d %5d  failed: %s\n", sw->batches[b], sw->counts[c], nn_safe(cell->ranks.error));
                continue;
            }
            printf("%6d %5d %12.1f %11.1f %14.1f %7.2fx %5.0f%%", sw->batches[b], sw->counts[c], cell->ranks.step_us,
                   cell->ranks.allreduce_us, cell->one.step_us, cell->speedup, 100 * cell->efficiency);
            if (sw->has_prediction)
                printf(" %12.1f %7.2fx", cell->predicted.step_us, cell->predicted.speedup);
            printf("\n");
        }
        nn_ranks_sweep_words(sw, b, words, sizeof words);
        printf("  %s\n", words);
    }
}

static void print_csv(const nn_ranks_sweep *sw)
{
    printf("batch,ranks,global_batch,state,step_us,allreduce_us,one_rank_us,speedup,efficiency,"
           "predicted_step_us,predicted_speedup\n");
    for (int b = 0; b < sw->n_batches; b++)
        for (int c = 0; c < sw->n_counts; c++) {
            const nn_ranks_cell *cell = &sw->cell[c][b];
            int ok = cell->ranks.state == NN_RANKS_DONE;
            printf("%d,%d,%d,%s,", sw->batches[b], sw->counts[c], sw->batches[b] * sw->counts[c],
                   ok ? "measured" : "failed");
            if (ok)
                printf("%.3f,%.3f,%.3f,%.4f,%.4f,", cell->ranks.step_us, cell->ranks.allreduce_us, cell->one.step_us,
                       cell->speedup, cell->efficiency);
            else
                printf(",,,,,");
            if (sw->has_prediction)
                printf("%.3f,%.4f\n", cell->predicted.step_us, cell->predicted.speedup);
            else
                printf(",\n");
        }
}

static void print_json(const nn_ranks_sweep *sw, const char *why)
{
    char words[512];
    printf("{\n  \"preset\": ");
    cli_json_string(stdout, sw->p.name);
    printf(",\n  \"device\": \"%s\",\n  \"steps\": %ld,\n  \"warmup\": %ld,\n  \"step_stat\": \"median\",\n",
           sw->device, sw->steps, sw->warmup);
    if (sw->has_prediction) {
        printf("  \"predicted_over\": ");
        cli_json_string(stdout, sw->link.id);
        printf(",\n");
    } else {                         /* the text's line: why the table is measured only */
        printf("  \"no_prediction\": ");
        cli_json_string(stdout, why);
        printf(",\n");
    }
    printf("  \"cells\": [\n");
    for (int b = 0; b < sw->n_batches; b++)
        for (int c = 0; c < sw->n_counts; c++) {
            const nn_ranks_cell *cell = &sw->cell[c][b];
            int ok = cell->ranks.state == NN_RANKS_DONE;
            printf("    {\"batch\": %d, \"ranks\": %d, \"global_batch\": %d, \"source\": \"%s\"", sw->batches[b],
                   sw->counts[c], sw->batches[b] * sw->counts[c], ok ? "measured" : "failed");
            if (ok)
                printf(", \"step_us\": %.6g, \"allreduce_us\": %.6g, \"one_rank_us\": %.6g, \"speedup\": %.6g, "
                       "\"efficiency\": %.6g", cell->ranks.step_us, cell->ranks.allreduce_us, cell->one.step_us,
                       cell->speedup, cell->efficiency);
            else {
                printf(", \"error\": ");
                cli_json_string(stdout, cell->ranks.error);
            }
            if (sw->has_prediction)
                printf(", \"predicted\": {\"step_us\": %.6g, \"allreduce_us\": %.6g, \"speedup\": %.6g, "
                       "\"rank_threads\": %d, \"timeshare\": %.4g}", cell->predicted.step_us,
                       cell->predicted.allreduce_us, cell->predicted.speedup, sw->rank_threads[c], sw->timeshare[c]);
            printf("}%s\n", b + 1 == sw->n_batches && c + 1 == sw->n_counts ? "" : ",");
        }
    printf("  ],\n  \"verdicts\": [\n");
    for (int b = 0; b < sw->n_batches; b++) {
        nn_ranks_sweep_words(sw, b, words, sizeof words);
        printf("    ");
        cli_json_string(stdout, words);
        printf("%s\n", b + 1 < sw->n_batches ? "," : "");
    }
    printf("  ]\n}\n");
}

/* ---- the command ------------------------------------------------------------------------- */

static int fill(const cli_options *o, const nn_preset *p, const int *batches, int nb, nn_ranks_sweep *sw)
{
    char err[NN_ERR_LEN];
    if (nn_ranks_parse_counts(o->ranks_list, sw->counts, &sw->n_counts, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return -1;
    }
    if (nb > NN_RANKS_MAX_BATCHES) {
        fprintf(stderr, "nnlab: --batches: at most %d batch sizes with --ranks\n", NN_RANKS_MAX_BATCHES);
        return -1;
    }
    nn_strlcpy(sw->preset_arg, o->preset, sizeof sw->preset_arg);
    sw->p = *p;
    nn_strlcpy(sw->device, o->device ? o->device : "cpu", sizeof sw->device);
    sw->n_batches = nb;
    memcpy(sw->batches, batches, (size_t)nb * sizeof *batches);
    sw->steps = o->steps;
    sw->warmup = o->warmup;
    sw->overlap = !o->no_overlap;
    return 0;
}

int cli_sweep_ranks(const cli_options *o, const nn_preset *p, const int *batches, int nb)
{
    char why[NN_ERR_LEN], err[NN_ERR_LEN];
    int quiet = o->json || o->csv;
    nn_ranks_sweep *sw = calloc(1, sizeof *sw);
    if (!sw) {
        fprintf(stderr, "nnlab: out of memory\n");
        return EXIT_FAILURE;
    }
    if (fill(o, p, batches, nb, sw) != 0) {
        free(sw);
        return CLI_EXIT_USAGE;
    }
    add_prediction(o, sw, why, sizeof why);
    if (o->link && !sw->has_prediction) {
        fprintf(stderr, "nnlab: --link: %s\n", why);
        free(sw);
        return CLI_EXIT_USAGE;
    }
    cli_catch_stop_signals();
    if (nn_ranks_sweep_run(sw, say_cell, stop_asked, &quiet, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        free(sw);
        return EXIT_FAILURE;
    }
    if (o->csv)
        print_csv(sw);
    else if (o->json)
        print_json(sw, why);
    else
        print_text(sw, why);
    int stopped = cli_stop_signal();
    free(sw);
    return stopped ? 128 + stopped : 0;
}

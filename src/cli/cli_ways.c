/* src/cli/cli_ways.c - the race of ways on the CLI (`train --race-predicted`,
 * `train --race`): the CPU's calibration the framework way is predicted from
 * (cached, else measured now), the four lanes (nnlab/race_ways.h), and the
 * two verdicts last, the write-ups' question first. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "cli_race.h"
#include "nnlab/race_ways.h"
#include "util.h"

int cli_ways_predict(const cli_options *o, const nn_job_config *cfg, const char *cpu, int gpu_here,
                     const nn_gpu_profile *prof, nn_gpu_way gpu_way, nn_race_ways *w)
{
    nn_calibration cpu_cal, gpu_cal;
    /* a race predicts the framework way from the calibrations of the devices
     * here: the cached ones, else measured now (and cached), so that explain
     * after the race explains it */
    if (!o->quiet)
        fprintf(stderr, "the framework way is predicted from the calibration of %s%s (cached, else measured "
                "now)\n", nn_safe(cpu), gpu_here ? " and of gpu" : "");
    int have_cpu = cli_calibration(cpu, o->threads, o->recalibrate, o->quiet, &cpu_cal) == 0;
    int have_gpu = gpu_here && cli_calibration("gpu", 0, o->recalibrate, o->quiet, &gpu_cal) == 0;
    nn_race_ways_predict(w, &cfg->preset, cfg->batch > 0 ? cfg->batch : cfg->preset.batch,
                         have_cpu ? &cpu_cal : NULL, have_gpu ? &gpu_cal : NULL, prof, gpu_way);
    return have_cpu ? 0 : -1;
}

/* A lane's time for its steps: "14.6 s", "0.244 s", "8.48 ms" */
static void seconds_text(double s, char *buf, size_t len)
{
    if (s >= 10)
        snprintf(buf, len, "%.1f s", s);
    else if (s >= 0.01)
        snprintf(buf, len, "%.3f s", s);
    else
        snprintf(buf, len, "%.3f ms", s * 1e3);
}

/* "  cpu framework   1.17 ms/step     14.6 s  predicted from this CPU's calibration" */
static void print_lane(const nn_race_lane *l, long steps)
{
    char step[32], total[32];
    if (!l->present) {
        fprintf(stderr, "  %-14s %13s %10s  %s\n", l->label, "-", "-", l->why);
        return;
    }
    nn_race_step_text(l->step_us, step, sizeof step);
    seconds_text((double)steps * l->step_us * 1e-6, total, sizeof total);
    fprintf(stderr, "  %-14s %13s %10s  %s\n", l->label, step, total, l->source);
}

void cli_ways_print(const nn_race_ways *w, const char *preset, long steps)
{
    char fw[3 * NN_TEXT_LEN], own[3 * NN_TEXT_LEN];
    fprintf(stderr, "race of ways, %s at batch %d, %ld steps each (a step, and the steps' time):\n",
            nn_safe(preset), w->batch, steps);
    for (int k = 0; k < NN_LANES; k++)
        print_lane(&w->lane[k], steps);
    nn_race_ways_summary(w, fw, sizeof fw, own, sizeof own);
    fprintf(stderr, "%s\n%s\n", fw, own);
}

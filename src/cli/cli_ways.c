/* src/cli/cli_ways.c - the race of ways on the CLI (`train --race-predicted`,
 * `train --race`): the CPU's calibration the framework way is predicted from
 * (cached, else measured now), the four lanes (nnlab/race_ways.h), and the
 * two verdicts last, the write-ups' question first. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "cli_race.h"
#include "cli_stop.h"
#include "nnlab/preset.h"
#include "nnlab/race_ways.h"
#include "nnlab/torch_step.h"
#include "util.h"

#define WAYS_TORCH_STEPS 20          /* PyTorch's timed steps a lane (its median) */
#define WAYS_TORCH_WARMUP 3

static int stop_asked(void *ctx)
{
    (void)ctx;
    return cli_stop_signal() != 0;
}

/* PyTorch's step of cfg's job on device (nnlab's name), into lane l: 0 when
 * measured (the lane then says "measured with PyTorch X.Y"), else -1 with
 * the reason said (the lane stays predicted). */
static int torch_lane(const cli_options *o, const nn_job_config *cfg, const char *device, nn_race_lane *l)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN], source[96];
    nn_torch_result r;
    if (nn_preset_find(o->preset, path, sizeof path, err, sizeof err) != 0)
        return -1;
    nn_torch_request req = {
        .preset_path = path, .device = device, .batch = cfg->batch > 0 ? cfg->batch : cfg->preset.batch,
        .steps = WAYS_TORCH_STEPS, .warmup = WAYS_TORCH_WARMUP, .threads = cfg->threads,
        .cancelled = stop_asked,
    };
    if (nn_torch_step(&req, &r, err, sizeof err) != NN_TORCH_OK) {
        fprintf(stderr, "nnlab: %s framework way not measured: %s (it stays predicted)\n", device, nn_safe(err));
        return -1;
    }
    nn_torch_source(&r.python, source, sizeof source);
    /* its spread: half the gap between its mean and median step, as the sweep's one run */
    double spread = r.us_per_step > 0 ? 0.5 * fabs(r.us_per_step_mean - r.us_per_step) / r.us_per_step : 0;
    nn_race_lane_measure(l, r.us_per_step, spread, source);
    return 0;
}

int cli_ways_measure_torch(const cli_options *o, const nn_job_config *cfg, const char *cpu, int gpu_here,
                           nn_race_ways *w)
{
    nn_torch_python py;
    char err[NN_ERR_LEN];
    if (nn_torch_find(&py, err, sizeof err) != NN_TORCH_OK) {
        if (!o->quiet)
            fprintf(stderr, "the framework way stays predicted: %s\n", nn_safe(err));
        return 0;
    }
    if (!o->quiet)
        fprintf(stderr, "the framework way measured with %s (%s): %d steps a device\n", nn_safe(py.label),
                nn_safe(py.path), WAYS_TORCH_STEPS);
    int n = torch_lane(o, cfg, cpu, &w->lane[NN_LANE_FW_CPU]) == 0;
    if (gpu_here && py.cuda)
        n += torch_lane(o, cfg, "gpu", &w->lane[NN_LANE_FW_GPU]) == 0;
    return n;
}

/* The calibration of device a race predicts from: the cached one whatever
 * its quality (a contradictory one makes the verdict say so, and a race on
 * a busy machine would only measure another), else measured now and cached;
 * --recalibrate measures it again. 0, or -1 (said). */
static int race_calibration(const cli_options *o, const char *device, int threads, nn_calibration *cal)
{
    if (!o->recalibrate && nn_calibration_load(device, cal) == 0)
        return 0;
    return cli_calibration(device, threads, 1, o->quiet, cal);
}

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
    int have_cpu = race_calibration(o, cpu, o->threads, &cpu_cal) == 0;
    int have_gpu = gpu_here && race_calibration(o, "gpu", 0, &gpu_cal) == 0;
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

/* src/analysis/report/writeup.c - what a preset's original experiment measured, set
 * beside a job: the one rule that its figures are compared only with the
 * experiment's own job (network, batch, epochs), and the one text both front
 * ends print, which says whose job the figures are for. */
#include "nnlab/profile.h"

#include <stdio.h>

int nn_writeup_for_job(const nn_preset *p, int batch, int epochs, const nn_gpu_profile *prof, nn_writeup *out)
{
    if (nn_writeup_predict(p, prof, out) != 0)
        return -1;
    batch = batch > 0 ? batch : p->batch;        /* 0: the preset's, as in nn_job_config */
    epochs = epochs > 0 ? epochs : p->epochs;
    out->job_batch = batch;
    out->job_epochs = epochs;
    out->own_job = nn_preset_is_measured_job(p, batch, epochs);
    return 0;
}

/* A range stays a range: the write-up's "120-150 s" is not its midpoint. */
void nn_writeup_seconds_text(double lo, double hi, char *buf, size_t len)
{
    if (hi > lo)
        snprintf(buf, len, "%.0f-%.0f s", lo, hi);
    else
        snprintf(buf, len, "%.0f s", lo);
}

/* "CPU 50 s, GPU 94 s", a device not measured left out. */
static void figures_text(const nn_writeup *w, char *buf, size_t len)
{
    char cpu[32], gpu[32];
    nn_writeup_seconds_text(w->cpu_s, w->cpu_max_s, cpu, sizeof cpu);
    nn_writeup_seconds_text(w->gpu_s, w->gpu_max_s, gpu, sizeof gpu);
    if (w->cpu_s > 0 && w->gpu_s > 0)
        snprintf(buf, len, "CPU %s, GPU %s", cpu, gpu);
    else
        snprintf(buf, len, "%s %s", w->cpu_s > 0 ? "CPU" : "GPU", w->cpu_s > 0 ? cpu : gpu);
}

void nn_writeup_text(const nn_writeup *w, char *buf, size_t len)
{
    char fig[80];
    figures_text(w, fig, sizeof fig);
    if (w->own_job || w->job_batch == 0)
        snprintf(buf, len, "%d epochs at batch %d = %ld steps: measured %s", w->epochs, w->batch, w->steps, fig);
    else
        snprintf(buf, len, "the write-up measured %s for its own job: batch %d, %d epochs (%ld steps), "
                 "not this one (batch %d, %d epochs)", fig, w->batch, w->epochs, w->steps, w->job_batch,
                 w->job_epochs);
}

/* src/analysis/report/divergence.c - a job that diverged or is blowing up, said
 * once for every front end; see nnlab/divergence.h. */
#include "nnlab/divergence.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The first loss point that is a blow-up, or -1: the first point itself
 * when it is above NN_BLOWUP_ABS (a run logged once, already lost), else a
 * later one NN_BLOWUP_FACTOR times the first. A point that is not finite
 * never reaches the list (the engine stops first). */
static long first_blowup(const nn_loss_point *pts, long n_pts)
{
    if (n_pts < 1)
        return -1;
    double start = fabs(pts[0].loss);
    if (start > NN_BLOWUP_ABS)
        return 0;
    double limit = NN_BLOWUP_FACTOR * (start > NN_BLOWUP_FLOOR ? start : NN_BLOWUP_FLOOR);
    for (long i = 1; i < n_pts; i++)
        if (fabs(pts[i].loss) > limit)
            return i;
    return -1;
}

int nn_divergence_of(const nn_snapshot *s, const nn_loss_point *pts, long n_pts, nn_divergence *d)
{
    memset(d, 0, sizeof *d);
    if (s->state == NN_JOB_DIVERGED) {
        d->diverged = 1;
        d->step = s->diverged_step;
        d->exact = s->diverged_exact;
        d->loss = s->diverged_loss;
        return 1;
    }
    long i = first_blowup(pts, n_pts);
    if (i < 0)
        return 0;
    d->blowing_up = 1;
    d->step = pts[i].step;
    d->loss = pts[i].loss;
    d->start_loss = i > 0 ? pts[0].loss : NAN;
    return 1;
}

/* "nan", "inf", "-inf" or the value in three significant digits. */
static void loss_word(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "nan");
    else if (isinf(v))
        snprintf(buf, len, "%sinf", v < 0 ? "-" : "");
    else
        snprintf(buf, len, "%.3g", v);
}

void nn_divergence_text(const nn_divergence *d, char *buf, size_t len)
{
    char loss[32];
    loss_word(d->loss, loss, sizeof loss);
    if (d->diverged)
        snprintf(buf, len, "diverged %s step %ld: loss %s - lower the learning rate", d->exact ? "at" : "by",
                 d->step, loss);
    else if (d->blowing_up)
    {
        char start[48] = "";
        if (isfinite(d->start_loss))
            snprintf(start, sizeof start, " (%.3g at the start)", d->start_loss);
        snprintf(buf, len, "loss blowing up by step %ld: %s - lower the learning rate%s", d->step, loss, start);
    }
    else if (len > 0)
        buf[0] = '\0';
}

void nn_format_loss(double v, int width, char *buf, size_t len)
{
    char text[48];
    if (!isfinite(v))
        loss_word(v, text, sizeof text);
    else if (snprintf(text, sizeof text, "%.4f", v) > width)
        snprintf(text, sizeof text, "%.*g", width >= 9 ? 3 : 2, v);
    snprintf(buf, len, "%*s", width, text);
}

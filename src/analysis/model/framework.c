/* src/analysis/model/framework.c - a framework's CPU step: the form, its fit and
 * its prediction from a CPU calibration; see nnlab/framework.h. */
#include "nnlab/framework.h"

#include <math.h>
#include <string.h>

double nn_framework_cpu_form(int ops, double nnlab_us, double op_us, double step_us, double work_ratio)
{
    return step_us + ops * op_us + work_ratio * nnlab_us;
}

/* Solves the 3x3 system a x = b by Gaussian elimination with partial
 * pivoting; -1 when it is singular. */
static int solve3(double a[3][3], double b[3], double x[3])
{
    for (int c = 0; c < 3; c++) {
        int piv = c;
        for (int r = c + 1; r < 3; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c]))
                piv = r;
        if (fabs(a[piv][c]) < 1e-300)
            return -1;
        for (int k = 0; k < 3; k++) {
            double t = a[c][k];
            a[c][k] = a[piv][k];
            a[piv][k] = t;
        }
        double t = b[c];
        b[c] = b[piv];
        b[piv] = t;
        for (int r = c + 1; r < 3; r++) {
            double f = a[r][c] / a[c][c];
            for (int k = c; k < 3; k++)
                a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int r = 2; r >= 0; r--) {
        double s = b[r];
        for (int k = r + 1; k < 3; k++)
            s -= a[r][k] * x[k];
        x[r] = s / a[r][r];
    }
    return 0;
}

static void fit_errors(const nn_framework_sample *s, int n, nn_framework_fit *f)
{
    double sq = 0;
    f->max_rel = 0;
    for (int i = 0; i < n; i++) {
        double pred = nn_framework_cpu_form(s[i].ops, s[i].nnlab_us, f->op_us, f->step_us, f->work_ratio);
        double rel = (pred - s[i].framework_us) / s[i].framework_us;
        sq += rel * rel;
        if (fabs(rel) > f->max_rel)
            f->max_rel = fabs(rel);
    }
    f->rms_rel = sqrt(sq / n);
}

/* Least squares on the free columns of x only (the others held at 0). */
static int fit_free(const nn_framework_sample *s, int n, const int free_col[3], double x[3])
{
    double a[3][3] = { { 0 } }, b[3] = { 0 }, y[3] = { 0 };
    int idx[3], k = 0;
    for (int c = 0; c < 3; c++)
        if (free_col[c])
            idx[k++] = c;
    for (int i = 0; i < n; i++) {
        double m = s[i].framework_us, row[3] = { 1.0 / m, s[i].ops / m, s[i].nnlab_us / m };
        for (int r = 0; r < k; r++) {
            for (int c = 0; c < k; c++)
                a[r][c] += row[idx[r]] * row[idx[c]];
            b[r] += row[idx[r]];   /* the target: measured / measured = 1 */
        }
    }
    for (int r = k; r < 3; r++)      /* the held columns: x = 0 */
        a[r][r] = 1;
    if (solve3(a, b, y) != 0)
        return -1;
    memset(x, 0, 3 * sizeof *x);
    for (int r = 0; r < k; r++)
        x[idx[r]] = y[r];
    return 0;
}

int nn_framework_fit_cpu(const nn_framework_sample *s, int n, nn_framework_fit *out)
{
    /* min sum ((step + ops op + ratio nnlab) / measured - 1)^2 over x = (step_us, op_us,
     * work_ratio), none negative: a figure whose estimate is negative is held at 0 and
     * the others fitted again (a cost cannot be negative; the data then say it is
     * too small to tell from 0) */
    int free_col[3] = { 1, 1, 1 };
    double x[3];
    memset(out, 0, sizeof *out);
    if (n < 3)
        return -1;
    for (int round = 0; round < 3; round++) {
        int worst = -1;
        if (fit_free(s, n, free_col, x) != 0)
            return -1;
        for (int c = 0; c < 3; c++)
            if (free_col[c] && x[c] < 0 && (worst < 0 || x[c] < x[worst]))
                worst = c;
        if (worst < 0)
            break;
        free_col[worst] = 0;
    }
    out->step_us = x[0];
    out->op_us = x[1];
    out->work_ratio = x[2];
    out->n = n;
    fit_errors(s, n, out);
    return 0;
}

double nn_framework_cpu_step_us(const nn_preset *p, int batch, const nn_calibration *cpu_cal,
                                const nn_gpu_profile *prof, nn_explanation *nnlab_out)
{
    nn_explain_options opt;
    nn_explanation e;
    memset(&opt, 0, sizeof opt);
    opt.host_memory = 1;         /* nnlab's own CPU step, as the sweep's cpu rows run it */
    nn_explain(p, batch, cpu_cal, &opt, &e);
    if (nnlab_out)
        *nnlab_out = e;
    if (!(e.predicted_us > 0))
        return 0;
    return nn_framework_cpu_form(nn_framework_ops(p, &e.cost), e.predicted_us, prof->framework_cpu_op_us,
                                 prof->framework_cpu_step_us, prof->framework_cpu_work_ratio);
}

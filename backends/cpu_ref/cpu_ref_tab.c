/* backends/cpu_ref/cpu_ref_tab.c - cpu-ref's batch norm (ghost batches), GLU and
 * sparsemax: the plain loops every other backend is checked against, sums
 * in double, the arithmetic of PyTorch's BatchNorm1d and pytorch-tabnet's
 * Sparsemax written out (backend.h has the contracts). */
#include "cpu_ref.h"
#include "ghost_batch.h"

#include <math.h>

/* ---- batch norm ------------------------------------------------------------- */

/* Mean and biased variance of feature f over rows [r0, r1) (two passes). */
static void chunk_stats(const float *x, int c, int f, int r0, int r1, double *mean, double *var)
{
    double s = 0.0, q = 0.0;
    for (int i = r0; i < r1; i++)
        s += x[(size_t)i * c + f];
    *mean = s / (r1 - r0);
    for (int i = r0; i < r1; i++) {
        double d = x[(size_t)i * c + f] - *mean;
        q += d * d;
    }
    *var = q / (r1 - r0);
}

static int bn_check(nn_backend *b, const char *op, const nn_bn_geom *g, int training)
{
    char why[256];
    if (nn_bn_geom_problem(op, g->n, g->c, g->virtual_batch, g->eps, training, why, sizeof why))
        return nn_backend_fail(b, "%s", why);
    return 0;
}

/* Eval: the running statistics (running = (mean, var), c each). */
static void bn_eval(const nn_bn_geom *g, const float *x, const float *gamma, const float *beta,
                    const float *running, float *y)
{
    for (int f = 0; f < g->c; f++) {
        double invstd = 1.0 / sqrt((double)running[g->c + f] + g->eps);
        for (int i = 0; i < g->n; i++) {
            size_t k = (size_t)i * g->c + f;
            y[k] = (float)((x[k] - running[f]) * invstd * gamma[f] + beta[f]);
        }
    }
}

int nn_ref_batchnorm_forward(nn_backend *b, const nn_bn_geom *g, int training, const float *x,
                             const float *gamma, const float *beta, float *running, float *y)
{
    if (bn_check(b, "batchnorm_forward", g, training) != 0)
        return -1;
    if (!training) {
        bn_eval(g, x, gamma, beta, running, y);
        return 0;
    }
    int s = nn_ghost_chunk(g->n, g->virtual_batch);
    for (int r0 = 0; r0 < g->n; r0 += s) {          /* chunks in order: the running update's */
        int r1 = r0 + s < g->n ? r0 + s : g->n, m = r1 - r0;
        for (int f = 0; f < g->c; f++) {
            double mean, var;
            chunk_stats(x, g->c, f, r0, r1, &mean, &var);
            double invstd = 1.0 / sqrt(var + g->eps);
            for (int i = r0; i < r1; i++) {
                size_t k = (size_t)i * g->c + f;
                y[k] = (float)((x[k] - mean) * invstd * gamma[f] + beta[f]);
            }
            running[f] = (float)((1.0 - g->momentum) * running[f] + g->momentum * mean);
            running[g->c + f] = (float)((1.0 - g->momentum) * running[g->c + f] +
                                        g->momentum * var * m / (m - 1));
        }
    }
    return 0;
}

int nn_ref_batchnorm_backward(nn_backend *b, const nn_bn_geom *g, const float *x,
                              const float *gamma, const float *dy, float *dx, float *dgamma,
                              float *dbeta)
{
    if (bn_check(b, "batchnorm_backward", g, 1) != 0)
        return -1;
    int s = nn_ghost_chunk(g->n, g->virtual_batch);
    for (int f = 0; f < g->c; f++) {
        double dg = 0.0, db = 0.0;
        for (int r0 = 0; r0 < g->n; r0 += s) {
            int r1 = r0 + s < g->n ? r0 + s : g->n, m = r1 - r0;
            double mean, var, sdy = 0.0, sdyx = 0.0;
            chunk_stats(x, g->c, f, r0, r1, &mean, &var);
            double invstd = 1.0 / sqrt(var + g->eps);
            for (int i = r0; i < r1; i++) {
                size_t k = (size_t)i * g->c + f;
                sdy += dy[k];
                sdyx += dy[k] * (x[k] - mean) * invstd;
            }
            dg += sdyx;
            db += sdy;
            for (int i = r0; dx && i < r1; i++) {
                size_t k = (size_t)i * g->c + f;
                double xhat = (x[k] - mean) * invstd;
                dx[k] = (float)(gamma[f] * invstd * (dy[k] - sdy / m - xhat * sdyx / m));
            }
        }
        if (dgamma)
            dgamma[f] = (float)dg;
        if (dbeta)
            dbeta[f] = (float)db;
    }
    return 0;
}

/* ---- GLU -------------------------------------------------------------------- */

static double sigmoid(double v)
{
    return 1.0 / (1.0 + exp(-v));
}

int nn_ref_glu_forward(nn_backend *b, int n, int half, const float *x, float *y)
{
    if (n < 0 || half < 1)
        return nn_backend_fail(b, "glu_forward: bad shape (n %d, half %d)", n, half);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < half; j++) {
            const float *row = x + (size_t)i * 2 * half;
            y[(size_t)i * half + j] = (float)(row[j] * sigmoid(row[half + j]));
        }
    return 0;
}

int nn_ref_glu_backward(nn_backend *b, int n, int half, const float *x, const float *dy,
                        float *dx)
{
    if (n < 0 || half < 1)
        return nn_backend_fail(b, "glu_backward: bad shape (n %d, half %d)", n, half);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < half; j++) {
            const float *row = x + (size_t)i * 2 * half;
            float *drow = dx + (size_t)i * 2 * half;
            double s = sigmoid(row[half + j]), d = dy[(size_t)i * half + j];
            drow[j] = (float)(d * s);
            drow[half + j] = (float)(d * row[j] * s * (1.0 - s));
        }
    return 0;
}

/* ---- sparsemax ------------------------------------------------------------------ */

/* tau of one row by the sort-based rule, without the sort (no scratch): the
 * element z_j is the k-th largest for k = #{i: z_i >= z_j}, and it is in the
 * support when 1 + k z_j > the sum of those k (ties give the same answer at
 * every position they take). As pytorch-tabnet, z = x - max(x) first. */
static double row_tau(const float *x, int d, double top)
{
    double support_sum = 0.0;
    int support = 0;
    for (int j = 0; j < d; j++) {
        double zj = x[j] - top, sum = 0.0;
        int k = 0;
        for (int i = 0; i < d; i++)
            if (x[i] - top >= zj) {
                sum += x[i] - top;
                k++;
            }
        if (1.0 + k * zj > sum) {
            support_sum += zj;
            support++;
        }
    }
    return (support_sum - 1.0) / support;   /* the largest is always in: support >= 1 */
}

int nn_ref_sparsemax_forward(nn_backend *b, int n, int d, const float *x, float *y)
{
    if (n < 0 || d < 1)
        return nn_backend_fail(b, "sparsemax_forward: bad shape (n %d, d %d)", n, d);
    for (int i = 0; i < n; i++) {
        const float *row = x + (size_t)i * d;
        double top = row[0];
        for (int j = 1; j < d; j++)
            top = row[j] > top ? row[j] : top;
        double tau = row_tau(row, d, top);
        for (int j = 0; j < d; j++) {
            double v = row[j] - top - tau;
            y[(size_t)i * d + j] = v > 0.0 ? (float)v : 0.0f;
        }
    }
    return 0;
}

#define ENTROPY_EPS 1e-15

/* d/dy of -y log(y + eps), the entropy term's gradient per element */
static double entropy_grad(double y)
{
    return -(log(y + ENTROPY_EPS) + y / (y + ENTROPY_EPS));
}

int nn_ref_sparsemax_backward(nn_backend *b, int n, int d, const float *y, const float *dy,
                              float sparsity, float *dx)
{
    if (n < 1 || d < 1 || !(sparsity >= 0.0f))
        return nn_backend_fail(b, "sparsemax_backward: bad arguments (n %d, d %d, sparsity %g)", n,
                               d, (double)sparsity);
    double aux = (double)sparsity / n;
    for (int i = 0; i < n; i++) {
        const float *yr = y + (size_t)i * d, *dyr = dy + (size_t)i * d;
        double sum = 0.0;
        int support = 0;
        for (int j = 0; j < d; j++)
            if (yr[j] > 0.0f) {
                sum += dyr[j] + (aux > 0 ? aux * entropy_grad(yr[j]) : 0.0);
                support++;
            }
        double mean = support ? sum / support : 0.0;
        for (int j = 0; j < d; j++) {
            double v = dyr[j] + (aux > 0 ? aux * entropy_grad(yr[j]) : 0.0);
            dx[(size_t)i * d + j] = yr[j] > 0.0f ? (float)(v - mean) : 0.0f;
        }
    }
    return 0;
}

int nn_ref_sparsemax_entropy(nn_backend *b, int n, int d, const float *y, float sparsity,
                             float *stats)
{
    if (n < 1 || d < 1 || !(sparsity >= 0.0f))
        return nn_backend_fail(b, "sparsemax_entropy: bad arguments (n %d, d %d, sparsity %g)", n,
                               d, (double)sparsity);
    /* Sparsemax's zeros (most of a mask) add exactly nothing, 0 * log(1e-15),
     * so their log is skipped: a log per element was 5% of tabnet-regression's
     * step at batch 4096 (perf). A NaN is not zero, and still propagates. */
    double h = 0.0;
    for (size_t k = 0; k < (size_t)n * d; k++)
        if (y[k] != 0.0f)
            h -= y[k] * log(y[k] + ENTROPY_EPS);
    stats[0] += (float)(sparsity * h / n);
    return 0;
}

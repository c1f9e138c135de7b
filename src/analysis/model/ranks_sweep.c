/* src/analysis/model/ranks_sweep.c - the ranks' sweep's rules: the rank
 * counts read, a cell's speedup and efficiency from its two measured runs
 * and the model's prediction beside, and where more ranks stop paying;
 * see nnlab/ranks_sweep.h. */
#include "nnlab/ranks_sweep.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

#define MAX_RANKS 4096L

int nn_ranks_parse_counts(const char *list, int *counts, int *n, char *err, size_t err_len)
{
    char item[32];
    const char *p = list;
    *n = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        long v;
        if (len == 0 || len >= sizeof item)
            return nn_errorf(err, err_len, "--ranks %s: an empty or overlong element", list);
        memcpy(item, p, len);
        item[len] = '\0';
        if (nn_parse_long(item, &v) != 0 || v < 1 || v > MAX_RANKS)
            return nn_errorf(err, err_len, "--ranks %s: '%s' is not a rank count 1..%ld", list, item, MAX_RANKS);
        if (*n > 0 && v <= counts[*n - 1])
            return nn_errorf(err, err_len, "--ranks %s: counts must rise (%s after %d)", list, item, counts[*n - 1]);
        if (*n >= NN_RANKS_MAX_COUNTS)
            return nn_errorf(err, err_len, "--ranks %s: at most %d counts", list, NN_RANKS_MAX_COUNTS);
        counts[(*n)++] = (int)v;
        p += len;
        if (*p == ',' && !*++p)
            return nn_errorf(err, err_len, "--ranks %s: a trailing ','", list);
    }
    return *n ? 0 : nn_errorf(err, err_len, "--ranks: no rank counts given");
}

void nn_ranks_cell_finish(nn_ranks_sweep *sw, int c, int b)
{
    nn_ranks_cell *cell = &sw->cell[c][b];
    int n = sw->counts[c];
    cell->speedup = cell->efficiency = cell->allreduce_share = 0;
    if (cell->ranks.state == NN_RANKS_DONE && cell->ranks.step_us > 0) {
        /* a part over the whole of the same statistic: the phases are means */
        double mean = cell->ranks.step_mean_us > 0 ? cell->ranks.step_mean_us : cell->ranks.step_us;
        cell->allreduce_share = cell->ranks.allreduce_us / mean;
        if (cell->one.state == NN_RANKS_DONE) {
            cell->speedup = cell->one.step_us / cell->ranks.step_us;
            cell->efficiency = cell->speedup / n;
        }
    }
    if (sw->has_prediction)
        nn_ranks_predict_here(&sw->p, sw->batches[b], n, &sw->cal, &sw->rank_cal[c], sw->timeshare[c], &sw->link,
                              sw->overlap, &cell->predicted);
}

void nn_ranks_predict_here(const nn_preset *p, int rank_batch, int ranks, const nn_calibration *cal,
                           const nn_calibration *rank_cal, double timeshare, const nn_link *l, int overlap,
                           nn_ranks_prediction *out)
{
    nn_explain_options opt = { .host_memory = 1, .data_on_device = 1 };
    nn_ranks_predict_shared(p, rank_batch, ranks, cal, rank_cal, timeshare, &opt, l, overlap, out);
}

/* The measured count above one with the best speedup at b; -1 when none. */
static int best_count(const nn_ranks_sweep *sw, int b)
{
    int best = -1;
    for (int c = 0; c < sw->n_counts; c++) {
        const nn_ranks_cell *cell = &sw->cell[c][b];
        if (sw->counts[c] > 1 && cell->speedup > 0 && (best < 0 || cell->speedup > sw->cell[best][b].speedup))
            best = c;
    }
    return best;
}

void nn_ranks_sweep_words(const nn_ranks_sweep *sw, int b, char *buf, size_t len)
{
    int best = best_count(sw, b), batch = sw->batches[b];
    if (best < 0) {
        snprintf(buf, len, "at %d a rank: no run of more than one rank measured", batch);
        return;
    }
    const nn_ranks_cell *top = &sw->cell[best][b];
    int n = sw->counts[best];
    if (top->speedup < 1.0) {
        snprintf(buf, len, "at %d a rank, ranks do not pay: the best, %d ranks, are %.2fx one rank on the same "
                 "%d samples, the all-reduce %.0f%% of their step (measured)", batch, n, top->speedup, n * batch,
                 100.0 * top->allreduce_share);
        return;
    }
    int used = snprintf(buf, len, "at %d a rank, ranks pay up to %d: %.2fx one rank on the same %d samples "
                        "(efficiency %.0f%%, measured)", batch, n, top->speedup, n * batch, 100.0 * top->efficiency);
    for (int c = best + 1; c < sw->n_counts && used > 0 && (size_t)used < len; c++)
        if (sw->cell[c][b].speedup > 0) {
            snprintf(buf + used, len - (size_t)used, "; %d are slower than %d (%.2fx)", sw->counts[c], n,
                     sw->cell[c][b].speedup);
            break;
        }
}

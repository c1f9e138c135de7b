/* bench/blisbench.c - OpenBLAS against BLIS on each product shape of one
 * preset at one batch (the shapes the calibration contests:
 * src/analysis/model/calibrate_products.c), one thread each as the CPU backend
 * runs them, the two libraries alternated and the median of each: the
 * figures behind the comparison in docs/decisions/0107-blas-chosen-per-product-shape.md. bench/blis.sh runs it for
 * every preset at batches 4 and 256.
 *
 *   make bench/blisbench
 *   bench/blisbench PRESET.ini BATCH [SECONDS_A_SHAPE]
 *
 * One line a shape: m n k trans openblas_gflops blis_gflops the library
 * nn_blas_choose picks, and the 1-minute load average when it was timed.
 * A benchmark: run it alone on the machine. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include <cblas.h>

#include "model/calibrate_products.h"
#include "util.h"

static double load_average(void)
{
    double load = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    return load;
}

int main(int argc, char **argv)
{
    static nn_preset p;
    nn_blas_shape shapes[NN_MAX_PRODUCTS];
    char err[NN_ERR_LEN], why[160];
    long batch;
    double budget = argc > 3 ? atof(argv[3]) : 0.5;
    if (argc < 3 || nn_parse_long(argv[2], &batch) != 0 || batch < 1 || !(budget > 0)) {
        fprintf(stderr, "usage: blisbench PRESET.ini BATCH [SECONDS_A_SHAPE]\n");
        return 2;
    }
    /* one thread each, as the backend runs them (cpu_threads.c): OpenBLAS
     * would otherwise use every core and BLIS one */
    openblas_set_num_threads(1);
    nn_blis_set_threads(1);
    if (nn_blis_status(why, sizeof why) != 0) {
        fprintf(stderr, "blisbench: %s\n", why);
        return 1;
    }
    if (nn_preset_load(argv[1], &p, err, sizeof err) != 0) {
        fprintf(stderr, "blisbench: %s\n", err);
        return 1;
    }
    int n = nn_preset_product_shapes(&p, (int)batch, shapes, 0, NN_MAX_PRODUCTS);
    for (int i = 0; i < n; i++) {
        double g[2], load = load_average();
        if (nn_product_race(&shapes[i], budget, g) != 0) {
            fprintf(stderr, "blisbench: out of memory\n");
            return 1;
        }
        printf("%d %d %d %c%c %.2f %.2f %s %.2f\n", shapes[i].m, shapes[i].n, shapes[i].k,
               shapes[i].ta ? 'T' : 'N', shapes[i].tb ? 'T' : 'N', g[0], g[1],
               nn_blas_lib_name(nn_blas_choose(g[0], g[1], 1)), load);
    }
    return 0;
}

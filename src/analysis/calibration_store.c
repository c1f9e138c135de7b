/* src/analysis/calibration_store.c - which calibration a front end uses for
 * a device: the cached one, or one measured now and cached; see calibrate.h. */
#include "nnlab/calibrate.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

int nn_calibration_get(const char *device, int threads, int remeasure, nn_progress_fn progress, void *ctx,
                       nn_calibration *out, char *err, size_t err_len, char *warning, size_t warning_len)
{
    char why[NN_ERR_LEN];
    if (warning && warning_len)
        warning[0] = '\0';
    if (!remeasure && nn_calibration_load(device, out) == 0)
        return 0;
    if (nn_calibrate(device, threads, out, progress, ctx, err, err_len) != 0)
        return -1;
    if (nn_calibration_save(out, why, sizeof why) != 0)
        nn_errorf(warning, warning_len, "calibration not cached: %s", why);
    return 0;
}

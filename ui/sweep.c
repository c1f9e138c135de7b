/* ui/sweep.c - the sweep screen's words for the sweep's results; see sweep.h. */
#include "sweep.h"

#include <stdio.h>

#include "explain_text.h"
#include "format.h"
#include "layout.h"

int ui_sweep_gpu_crossover(const nn_sweep *sw)
{
    int c = nn_sweep_device_index(sw, "cpu"), g = nn_sweep_device_index(sw, "gpu");
    if (c < 0 || g < 0)
        return -2;
    return nn_sweep_crossover(sw, c, g);
}

int ui_sweep_crossover_text(const nn_sweep *sw, char *buf, size_t len)
{
    int x = ui_sweep_gpu_crossover(sw);
    if (x == -2 && nn_sweep_device_index(sw, "gpu") < 0) {
        snprintf(buf, len, "no GPU swept: no crossover to mark");
        return UI_TS_DIM;
    }
    if (x == -2)
        snprintf(buf, len, "no CPU in this sweep");
    else if (x < 0)
        snprintf(buf, len, "the GPU does not overtake the CPU here");
    else if (x == 0)
        snprintf(buf, len, "the GPU is faster at every batch size");
    else
        snprintf(buf, len, "the GPU overtakes the CPU at batch %d", sw->batch[x]);
    return x == -2 ? UI_TS_DIM : UI_TS_OK;
}

void ui_sweep_cell_text(const nn_sweep *sw, int d, int i, int cell, char *buf, size_t len)
{
    const nn_sweep_point *p = &sw->pt[d][i];
    char v[16];
    const char *regime = "";
    switch (p->state) {
    case NN_POINT_DONE: ui_fmt_si(p->rate, v, sizeof v); break;
    case NN_POINT_RUNNING: snprintf(v, sizeof v, "..."); break;
    case NN_POINT_FAILED: snprintf(v, sizeof v, "failed"); break;
    case NN_POINT_CANCELLED: snprintf(v, sizeof v, "cancel"); break;
    default: snprintf(v, sizeof v, "-");
    }
    if (p->state == NN_POINT_DONE && p->has_model)
        regime = ui_regime_short(p->regime, cell < UI_SWEEP_CELL_WIDE);
    snprintf(buf, len, "%7s %-*s", v, cell - 8, regime);
}

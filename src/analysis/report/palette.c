/* src/analysis/report/palette.c - the one palette of the charts' series; see
 * nnlab/palette.h. */
#include "nnlab/palette.h"
#include "nnlab/device.h"

/* Okabe and Ito's colours, the CPU's blues and the GPU's warm colours; the
 * curses colours (COLOR_RED 1 .. COLOR_WHITE 7) are the nearest free ones:
 * only the two framework ways on the GPU share one (yellow), told apart by
 * their glyphs and the predicted one's dashes. The glyphs are none of the
 * chart's own marks ('#' where series share a cell, '|' a crossover). */
static const nn_palette_entry palette[NN_SERIES_COUNT] = {
    [NN_SERIES_CPU_NNLAB] = { "#0072B2", 4, '*' },              /* blue */
    [NN_SERIES_CPU_FRAMEWORK] = { "#56B4E9", 6, '+' },          /* sky blue, curses cyan */
    [NN_SERIES_CPU_FRAMEWORK_MEASURED] = { "#CC79A7", 5, 'x' }, /* reddish purple, magenta */
    [NN_SERIES_CPU_OTHER] = { "#000000", 7, '.' },              /* black, white on a terminal */
    [NN_SERIES_GPU_EAGER] = { "#D55E00", 1, 'o' },              /* vermillion, red */
    [NN_SERIES_GPU_GRAPH] = { "#009E73", 2, '=' },              /* bluish green, green */
    [NN_SERIES_GPU_FRAMEWORK] = { "#E69F00", 3, '%' },          /* orange, yellow */
    [NN_SERIES_GPU_FRAMEWORK_MEASURED] = { "#B8A000", 3, '&' }, /* Okabe-Ito's yellow, darkened for white */
};

const nn_palette_entry *nn_palette(int s)
{
    return &palette[s >= 0 && s < NN_SERIES_COUNT ? s : 0];
}

int nn_series_of(int gpu, int reference, int way, int framework_measured)
{
    if (gpu) {
        if (way == NN_WAY_FRAMEWORK)
            return framework_measured ? NN_SERIES_GPU_FRAMEWORK_MEASURED : NN_SERIES_GPU_FRAMEWORK;
        return way == NN_WAY_GRAPH ? NN_SERIES_GPU_GRAPH : NN_SERIES_GPU_EAGER;
    }
    if (way == NN_WAY_FRAMEWORK)
        return framework_measured ? NN_SERIES_CPU_FRAMEWORK_MEASURED : NN_SERIES_CPU_FRAMEWORK;
    return reference ? NN_SERIES_CPU_OTHER : NN_SERIES_CPU_NNLAB;
}

int nn_device_series(const char *device, int way, int framework_measured)
{
    nn_device_kind k = nn_device_kind_of(device);
    return nn_series_of(k.gpu, k.reference || !k.known, way, framework_measured);
}

int nn_sweep_series(const nn_sweep *sw, int d)
{
    return nn_device_series(sw->device[d], sw->way[d], sw->external[d]);
}

const char *nn_series_dash(int predicted)
{
    return predicted ? "14 8" : NULL;
}

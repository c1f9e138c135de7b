/* src/include/nnlab/palette.h - the one palette of the series every chart
 * draws (a device and a way of running its step: docs/ways.md), shared by
 * the SVG writer and the lab so that a series is the same colour on a slide
 * and on the screen. Colour-blind safe (Okabe and Ito's eight colours), each
 * series its own colour; a predicted series is dashed, a measured one solid.
 * The lab draws each with the nearest of curses' eight colours and, where
 * two series share one, with a glyph of its own. */
#ifndef NNLAB_PALETTE_H
#define NNLAB_PALETTE_H

#include "nnlab/sweep.h"

enum nn_series {
    NN_SERIES_CPU_NNLAB,         /* nnlab's own step on the CPU ("cpu", "cpu nnlab") */
    NN_SERIES_CPU_FRAMEWORK,     /* a framework's step on the CPU, predicted */
    NN_SERIES_CPU_FRAMEWORK_MEASURED,   /* ... measured by the framework (PyTorch) */
    NN_SERIES_CPU_OTHER,         /* the reference CPU backend, or any other CPU */
    NN_SERIES_GPU_EAGER,
    NN_SERIES_GPU_GRAPH,
    NN_SERIES_GPU_FRAMEWORK,     /* a framework's step on the GPU, predicted */
    NN_SERIES_GPU_FRAMEWORK_MEASURED,
    NN_SERIES_COUNT
};

typedef struct nn_palette_entry {
    const char *hex;             /* "#0072B2": the SVG's stroke */
    int curses;                  /* the nearest curses colour, as COLOR_BLACK..COLOR_WHITE (0-7) */
    char glyph;                  /* its mark where a terminal has no UTF-8 */
} nn_palette_entry;

/* Series s's colour (s out of range: the first). */
const nn_palette_entry *nn_palette(int s);
/* The series of a device of this kind (a GPU, the reference CPU backend)
 * run one way (enum nn_gpu_way), measured by a framework itself or not. */
int nn_series_of(int gpu, int reference, int way, int framework_measured);
/* The series of a device by its name (nnlab/device.h's kind). */
int nn_device_series(const char *device, int way, int framework_measured);
/* The series of a sweep's device d. */
int nn_sweep_series(const nn_sweep *sw, int d);
/* The SVG's stroke-dasharray for a predicted series; NULL for a measured one. */
const char *nn_series_dash(int predicted);

#endif

/* src/analysis/model/calibrate_products.h - OpenBLAS against BLIS per product
 * shape (calibrate_products.c says how): the CPU calibration's contest,
 * the choices handed to the backend's table, and their lines in the
 * calibration cache. Private to src/analysis and src/jobs (and the tests). */
#ifndef NNLAB_CALIBRATE_PRODUCTS_H
#define NNLAB_CALIBRATE_PRODUCTS_H

#include "cpu/cpu_blis.h"
#include "nnlab/calibrate.h"
#include "nnlab/preset.h"

/* The products of p's linear and convolution layers at `batch` added to
 * list[0..n) (each shape once, at most max): the new count. */
int nn_preset_product_shapes(const nn_preset *p, int batch, nn_blas_shape *list, int n, int max);

/* The CPU calibration's part: every preset's product shapes at its own
 * batch, each timed on OpenBLAS and BLIS (keyed by out->threads), into
 * out->products, and the choices into the backend's table. Where BLIS is
 * not used (not installed, or NNLAB_BLAS set), nothing is contested and
 * note says why. 0, or -1 when out of memory. */
int nn_cal_products(nn_calibration *out, char *note, size_t note_len);

/* OpenBLAS ([0]) and BLIS ([1]) on shape s, one thread, alternated for
 * budget_s (3 rounds at least): their median GFLOP/s, always raced (for
 * bench/blisbench). 0, or -1 when out of memory. */
int nn_product_race(const nn_blas_shape *s, double budget_s, double gflops[2]);

/* The calibration's choices into the backend's table (cpu_blis.h). */
void nn_products_install(const nn_calibration *c);

/* A job's own product shapes at its batch that nothing chose yet (the
 * calibration contests each preset's shapes at the preset's own batch: a job
 * at batch 4 of a preset made for 32 found none of its shapes, and ran all on
 * OpenBLAS): each contested as the calibration does, with a shorter budget
 * (JOB_BUDGET_S a shape), and remembered in the backend's table for
 * `threads` for the rest of the process (not cached). Nothing where BLIS is
 * not used or NNLAB_BLAS is set. How many shapes it contested, or -1 when
 * out of memory. */
int nn_products_contest_job(const nn_preset *p, int batch, int threads);

/* The cached calibration's choices of device into the backend's table, for
 * a job about to run: how many shapes, or -1 when there is no cache (every
 * product then runs on OpenBLAS). */
int nn_products_use_cached(const char *device);

#endif

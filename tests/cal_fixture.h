/* tests/cal_fixture.h - a recorded calibration (the cache file's "key =
 * value" lines, as `nnlab calibrate` writes them) read into an
 * nn_calibration whatever machine runs the test: the library's reader
 * refuses another machine's file, as it must. */
#ifndef NNLAB_TESTS_CAL_FIXTURE_H
#define NNLAB_TESTS_CAL_FIXTURE_H

#include "nnlab/calibrate.h"

/* FIXTURES_DIR/name; 0, or -1 when it cannot be read or lacks a figure. */
int cal_fixture_load(const char *name, nn_calibration *out);

#endif

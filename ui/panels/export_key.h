/* ui/panels/export_key.h - `x` on the run and the sweep screens
 * (ui/panels/export_key.c): writes the run or the sweep as CSV and JSON
 * (nnlab/export.h) and says where on the status row. */
#ifndef NNLAB_UI_EXPORT_KEY_H
#define NNLAB_UI_EXPORT_KEY_H

#include "lab_state.h"
#include "nnlab/race_ways.h"

/* The run; ways: a race of ways' lanes to write beside its jobs (NULL: none). */
void ui_export_run(ui_lab *lab, const nn_race_ways *ways);
void ui_export_sweep(ui_lab *lab);

#endif

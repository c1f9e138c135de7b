/* ui/panels/export_key.h - `x` on the run and the sweep screens
 * (ui/panels/export_key.c): writes the run or the sweep as CSV and JSON
 * (nnlab/export.h) and says where on the status row. */
#ifndef NNLAB_UI_EXPORT_KEY_H
#define NNLAB_UI_EXPORT_KEY_H

#include "lab_state.h"

void ui_export_run(ui_lab *lab);
void ui_export_sweep(ui_lab *lab);

#endif

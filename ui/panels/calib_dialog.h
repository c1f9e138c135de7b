/* ui/panels/calib_dialog.h - calibrating on first use
 * (ui/panels/calib_dialog.c): the devices a job needs measured, measured
 * one after the other under a dialog with progress; its state is the
 * lab's (lab->calib: ui_calibrating). */
#ifndef NNLAB_UI_CALIB_DIALOG_H
#define NNLAB_UI_CALIB_DIALOG_H

#include "lab_state.h"

/* Measures the devices that have no calibration, then asks for `after`
 * (UI_ACT_GO_RUN or UI_ACT_GO_SWEEP, returned at once when nothing needs
 * measuring, else by the poll that sees the last measurement end). */
ui_action ui_calibrate_then(ui_lab *lab, int after, const char *const *devices, int n);
/* Follows the measurement; starts the next one, or returns what waited. */
ui_action ui_calibrate_poll(ui_lab *lab);
int ui_calibrating_now(const ui_lab *lab);
void ui_calibrate_draw(ui_lab *lab);
ui_action ui_calibrate_key(ui_lab *lab, int ch);
/* Waits for a measurement still running (quitting). */
void ui_calibrate_free(ui_lab *lab);

#endif

/* ui/panels/dialog.h - the lab's questions (ui/panels/dialog.c): save,
 * overwrite, quit and back, the data folder; the calibration's and the
 * long job's drawn through their own panels. */
#ifndef NNLAB_UI_DIALOG_H
#define NNLAB_UI_DIALOG_H

#include "lab_state.h"

void ui_dialog_open_save(ui_lab *lab);
void ui_dialog_draw(ui_lab *lab);
ui_action ui_dialog_key(ui_lab *lab, int ch);

#endif

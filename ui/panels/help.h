/* ui/panels/help.h - the help overlay (ui/panels/help.c): every screen's
 * keys (ui_screen_def.help), scrolled. */
#ifndef NNLAB_UI_HELP_H
#define NNLAB_UI_HELP_H

#include "lab_state.h"

void ui_help_draw(ui_lab *lab);
/* A key while the help is open: scrolls it, or closes it. */
ui_action ui_help_key(ui_lab *lab, int ch);

#endif

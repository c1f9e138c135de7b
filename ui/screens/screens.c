/* ui/screens/screens.c - the lab's screens, by enum ui_screen (ui/text/layout.h). Each
 * is defined whole in its own file (ui_screen_def in lab_state.h: its state's
 * size, open, close, enter, leave, draw, key, poll, active); the main loop
 * (ui/lab.c) reaches a screen only through this table. Adding a screen: an
 * enum value, its layout (ui/text/layout.c), its file with its definition, and
 * its line here. */
#include "lab_state.h"
#include "screens/setup_screen.h"
#include "screens/dashboard.h"
#include "screens/sweep_screen.h"
#include "screens/lesson_screen.h"

const ui_screen_def *const ui_screens[UI_N_SCREENS] = {
    [UI_SETUP] = &ui_setup_screen,
    [UI_RUN] = &ui_run_screen,
    [UI_SWEEP] = &ui_sweep_screen,
    [UI_LESSON] = &ui_lesson_screen,
};

/* ui/job_keys.c - the keys the run screen (ui/dashboard.c) and the sweep
 * screen (ui/sweep_screen.c) share: log scale, the Explain panel, and back
 * to setup. Each screen handles its own keys first (p pauses a run, s
 * smooths its loss, the arrows pick a sweep point, c cancels and x exports
 * its own job) and hands the rest here, saying whether its job runs. */
#include "ui.h"

ui_action ui_job_screen_key(ui_lab *lab, int ch, int running)
{
    switch (ch) {
    case 'l':
        lab->log_scale = !lab->log_scale;
        lab->dirty |= UI_D_CHART;
        return UI_ACT_HANDLED;
    case 'e':
        ui_explain_toggle(lab);
        return UI_ACT_HANDLED;
    case 27: case 'b':
        return running ? UI_ACT_ASK_BACK : UI_ACT_GO_SETUP;
    case '\n': case '\r': case KEY_ENTER:
        /* Enter leaves a finished screen only: pressed twice, it must not
         * throw away a running job */
        return running ? UI_ACT_HANDLED : UI_ACT_GO_SETUP;
    }
    return UI_ACT_IGNORED;
}

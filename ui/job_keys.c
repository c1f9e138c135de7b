/* ui/job_keys.c - the keys the run screen (ui/dashboard.c) and the sweep
 * screen (ui/sweep_screen.c) share: cancel, log scale, the Explain panel,
 * export (x), and back to setup. Each screen handles its own keys first (p
 * pauses a run, s smooths its loss, the arrows pick a sweep point) and hands
 * the rest here. */
#include "ui.h"

/* What the current screen runs: a training run or a sweep. */
static int screen_active(const ui_lab *lab)
{
    return lab->screen == UI_SWEEP ? ui_sweep_screen_active(lab) : ui_dashboard_active(lab);
}

static void cancel_screen_job(ui_lab *lab)
{
    if (!screen_active(lab))
        return;
    if (lab->screen == UI_SWEEP)
        ui_sweep_screen_cancel(lab);
    else
        ui_dashboard_cancel(lab);
}

ui_action ui_job_screen_key(ui_lab *lab, int ch)
{
    switch (ch) {
    case 'c':
        cancel_screen_job(lab);
        return UI_ACT_HANDLED;
    case 'l':
        lab->log_scale = !lab->log_scale;
        lab->dirty |= UI_D_CHART;
        return UI_ACT_HANDLED;
    case 'e':
        ui_explain_toggle(lab);
        return UI_ACT_HANDLED;
    case 'x':
        ui_export_screen(lab);
        lab->dirty |= UI_D_STATUS;
        return UI_ACT_HANDLED;
    case 27: case 'b':
        return screen_active(lab) ? UI_ACT_ASK_BACK : UI_ACT_GO_SETUP;
    case '\n': case '\r': case KEY_ENTER:
        /* Enter leaves a finished screen only: pressed twice, it must not
         * throw away a running job */
        return screen_active(lab) ? UI_ACT_HANDLED : UI_ACT_GO_SETUP;
    }
    return UI_ACT_IGNORED;
}

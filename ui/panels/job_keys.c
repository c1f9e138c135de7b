/* ui/panels/job_keys.c - the keys the run screen (ui/screens/dashboard.c) and the sweep
 * screen (ui/screens/sweep_screen.c) share: log scale, the Explain panel, scrolling
 * a panel longer than the screen, and back to setup. Each screen handles its own keys first (p pauses a run, s
 * smooths its loss, the arrows pick a sweep point, c cancels and x exports
 * its own job) and hands the rest here, saying whether its job runs. */
#include "panels/job_keys.h"
#include "draw.h"
#include "lab_state.h"
#include "panels/explain_panel.h"

/* The text panel PgUp PgDn Home End scroll: the Explain panel while it is
 * shown, else the screen's main panel (a Jacobian run's). */
static ui_scroll *scrolled_panel(ui_lab *lab)
{
    int replaces;
    ui_rect e = ui_explain_rect(&lab->layout, lab->explain_shown, &replaces);
    return e.w > 0 && e.h > 0 ? &lab->explain_scroll : &lab->main_scroll;
}

/* PgUp PgDn Home End: 1 when ch is one of them (Up and Down are the
 * screens' own: the sweep's point). */
static int scroll_key(ui_lab *lab, int ch)
{
    if (ch != KEY_PPAGE && ch != KEY_NPAGE && ch != KEY_HOME && ch != KEY_END)
        return 0;
    ui_scroll *s = scrolled_panel(lab);
    if (ui_scroll_move(s, ui_scroll_key(ch), s->total, s->view))
        lab->dirty |= UI_D_CHART | UI_D_EXPLAIN | UI_D_SIDE;
    return 1;
}

ui_action ui_job_screen_key(ui_lab *lab, int ch, int running)
{
    if (scroll_key(lab, ch))
        return UI_ACT_HANDLED;
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

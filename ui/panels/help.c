/* ui/panels/help.c - the help overlay (F1 or ?): the keys every screen takes, then
 * every screen's own (its ui_screen_def's help, in the table's order). It
 * scrolls when it is taller than the terminal (Up Down PgUp PgDn Home End
 * Space); any other key closes it. */
#include "panels/help.h"
#include "draw.h"
#include "lab_state.h"

static const char *const everywhere[] = {
    "  F1 ?        this help: Up Down PgUp PgDn Home End Space scroll it,",
    "              any other key closes it",
    "  q           quit (asks while a job runs); Ctrl-C does the same",
    "  Esc         close a question; go back to setup",
    "  L           the guided lessons (not while a job runs)",
    "  PgUp PgDn   scroll a panel that says \"more (PgDn)\" on its edge",
    "              (Home End: its top, its end)",
    NULL,
};

/* A heading and its lines. */
static void add_section(ui_text *t, const char *title, const char *const *lines)
{
    ui_text_addf(t, UI_TS_BOLD, "%s", title);
    for (int i = 0; lines && lines[i]; i++)
        ui_text_addf(t, UI_TS_NORMAL, "%s", lines[i]);
}

/* The whole help, every section, made in the lab's help_text. */
static const ui_text *help_text(ui_lab *lab)
{
    ui_text *t = &lab->help_text;
    t->n = 0;
    add_section(t, "Everywhere", everywhere);
    for (int s = 0; s < UI_N_SCREENS; s++)
        add_section(t, ui_screens[s]->help_title, ui_screens[s]->help);
    return t;
}

static ui_rect help_box(const ui_lab *lab, int rows)
{
    int w = lab->cols - 4 < 76 ? lab->cols - 4 : 76, h = rows + 2 < lab->rows - 2 ? rows + 2 : lab->rows - 2;
    return (ui_rect){ (lab->cols - w) / 2, (lab->rows - h) / 2, w, h };
}

void ui_help_draw(ui_lab *lab)
{
    const ui_text *t = help_text(lab);
    ui_rect box = help_box(lab, t->n);
    ui_box(lab, box, "Keys (PgDn scrolls, any other key closes)");
    ui_text_draw_scrolled(lab, t, box, &lab->help_scroll, "PgDn", "PgUp");
}

ui_action ui_help_key(ui_lab *lab, int ch)
{
    enum ui_scroll_move m = ui_scroll_key(ch);
    const ui_text *t = help_text(lab);
    lab->dirty |= UI_D_OVERLAY;
    if (m != UI_SCROLL_NONE) {
        lab->help_scroll.total = t->n;
        lab->help_scroll.view = ui_rect_inner(help_box(lab, t->n)).h;
        ui_scroll_move(&lab->help_scroll, m, t->n, lab->help_scroll.view);
        return UI_ACT_HANDLED;
    }
    lab->help = 0;                   /* any other key closes it */
    lab->help_scroll.top = 0;
    lab->dirty = UI_D_ALL;
    return UI_ACT_HANDLED;
}

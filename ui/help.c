/* ui/help.c - the help overlay (F1 or ?): the keys every screen takes, then
 * every screen's own (its ui_screen_def's help, in the table's order). Any
 * key closes it. */
#include "ui.h"

static const char *const everywhere[] = {
    "  F1 ?        this help (any key closes it)",
    "  q           quit (asks while a job runs); Ctrl-C does the same",
    "  Esc         close a question; go back to setup",
    NULL,
};

static int count(const char *const *lines)
{
    int n = 0;
    while (lines && lines[n])
        n++;
    return n;
}

/* A heading and its lines from row y; returns the row after them. */
static int draw_section(ui_lab *lab, ui_rect in, int y, const char *title, const char *const *lines)
{
    if (y < in.y + in.h)
        ui_put(y++, in.x, in.w, ui_attr(lab, UI_KEY), title);
    for (int i = 0; lines && lines[i] && y < in.y + in.h; i++)
        ui_put(y++, in.x, in.w, A_NORMAL, lines[i]);
    return y;
}

void ui_help_draw(ui_lab *lab)
{
    int n = 1 + count(everywhere);
    for (int s = 0; s < UI_N_SCREENS; s++)
        n += 1 + count(ui_screens[s]->help);
    int w = lab->cols - 4 < 74 ? lab->cols - 4 : 74, h = n + 2 < lab->rows - 2 ? n + 2 : lab->rows - 2;
    ui_rect box = { (lab->cols - w) / 2, (lab->rows - h) / 2, w, h }, in = ui_rect_inner(box);
    ui_box(lab, box, "Keys (any key closes)");
    int y = draw_section(lab, in, in.y, "Everywhere", everywhere);
    for (int s = 0; s < UI_N_SCREENS; s++)
        y = draw_section(lab, in, y, ui_screens[s]->help_title, ui_screens[s]->help);
}

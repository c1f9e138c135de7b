/* ui/help.c - the help overlay (F1 or ?): every key of every screen. Any key
 * closes it. */
#include "ui.h"

static const char *const help_lines[] = {
    "#Everywhere",
    "  F1 ?        this help (any key closes it)",
    "  q           quit (asks while a job runs); Ctrl-C does the same",
    "  Esc         close a question; go back to setup",
    "#Setup",
    "  Tab         move between the preset list and the settings",
    "  Up Down     move in the list (PgUp PgDn Home End) or the settings",
    "  Left Right  change a setting (Space too); batch, sweep range x2 /2",
    "  0-9 . e     type a number; Enter keeps it (checked: the range is",
    "              shown when it is not one), Esc drops it",
    "  + -         batch size (val) x2 / /2  s   save as a preset",
    "  Enter r     run on the device(s)      w   batch sweep    F5 rescan",
    "              (after typing a number: the first Enter keeps it)",
    "              a device's first use calibrates it (seconds; Esc: no run)",
    "#Run dashboard",
    "  p           pause / resume            c   cancel",
    "  l           log / linear loss axis    Enter Esc  back to setup",
    "  e           Explain panel for the chart (beside it from 130 columns)",
    "  s           smoothed / raw training loss   x   export CSV + JSON",
    "              (x: to $XDG_DATA_HOME/nnlab/exports, path on the status row)",
    "#Batch sweep",
    "  c           cancel (points stay)      l   log / linear samples/s",
    "  arrows      the point to explain      e   Explain panel / chart",
    "  x           export CSV + JSON         Enter Esc   back to setup",
};

void ui_help_draw(ui_lab *lab)
{
    int n = (int)(sizeof help_lines / sizeof help_lines[0]);
    int w = lab->cols - 4 < 74 ? lab->cols - 4 : 74, h = n + 2 < lab->rows - 2 ? n + 2 : lab->rows - 2;
    ui_rect box = { (lab->cols - w) / 2, (lab->rows - h) / 2, w, h }, in = ui_rect_inner(box);
    ui_box(lab, box, "Keys (any key closes)");
    for (int i = 0; i < n && i < in.h; i++) {
        const char *l = help_lines[i];
        if (l[0] == '#')
            ui_put(in.y + i, in.x, in.w, ui_attr(lab, UI_KEY), l + 1);
        else
            ui_put(in.y + i, in.x, in.w, A_NORMAL, l);
    }
}

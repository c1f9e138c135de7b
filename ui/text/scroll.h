/* ui/text/scroll.h - a panel whose text can be longer than the panel: which rows
 * are shown, how the keys move them, and the marker that says there is
 * more. Pure functions, no curses (tests/test_ui_text.c); ui/draw.c draws
 * a ui_text through them (ui_text_draw_scrolled). Every panel that can
 * overflow (the help, Explain, the Jacobian's panels, the setup screen's
 * layer list) keeps a ui_scroll and takes the same keys. */
#ifndef NNLAB_UI_SCROLL_H
#define NNLAB_UI_SCROLL_H

#include <stddef.h>

typedef struct ui_scroll {
    int top;                     /* the first row shown, of the text's rows */
    int total, view;             /* as last drawn: the text's rows, the rows shown
                                    (what a key moves by, between two frames) */
} ui_scroll;

/* What a key asks of a panel (the screens map curses keys to these). */
enum ui_scroll_move {
    UI_SCROLL_NONE, UI_SCROLL_LINE_UP, UI_SCROLL_LINE_DOWN, UI_SCROLL_PAGE_UP, UI_SCROLL_PAGE_DOWN,
    UI_SCROLL_TOP, UI_SCROLL_BOTTOM
};

/* Keeps top inside [0, total - view] (0 when everything fits); returns it. */
int ui_scroll_clamp(ui_scroll *s, int total, int view);

/* Moves s over total rows seen view at a time (a page keeps one row of the
 * last page in sight); returns 1 when top changed. */
int ui_scroll_move(ui_scroll *s, enum ui_scroll_move m, int total, int view);

/* The rows hidden below the view (0: the end is shown). */
int ui_scroll_below(const ui_scroll *s, int total, int view);

/* The marker for a view of total rows from s->top: "▼ 12 more (PgDn)"
 * while rows are hidden below, "▲ top (PgUp)" at the end of a text that
 * scrolled, "" when everything fits; '^' and 'v' without UTF-8. keys names
 * the panel's keys ("PgDn", "]"). Returns the columns it takes. */
int ui_scroll_marker(const ui_scroll *s, int total, int view, int utf8, const char *down_key, const char *up_key,
                     char *buf, size_t len);

#endif

/* ui/draw.h - the lab's curses drawing (ui/draw.c): colour roles and their
 * attributes, text put in a rectangle, boxes, scrolled panels, the title and
 * status rows and the status row's message. Only the UI thread calls it.
 * What is drawn where is each screen's and panel's own (ui/screens/,
 * ui/panels/); the lab's state is ui/lab_state.h. */
#ifndef NNLAB_UI_DRAW_H
#define NNLAB_UI_DRAW_H

#include <curses.h>

#include "nnlab/palette.h"

#include "text/explain_text.h"
#include "text/layout.h"
#include "text/scroll.h"

/* The lab (ui/lab_state.h): drawing reads its colours and writes its message. */
typedef struct ui_lab ui_lab;

/* Colour roles; each has a monochrome attribute too (ui/draw.c). */
enum ui_role {
    UI_NORMAL, UI_TITLE, UI_DIM, UI_ERROR, UI_OK, UI_KEY, UI_SELECTED, UI_FRAME,
    UI_SERIES0, UI_SERIES1, UI_SERIES2, UI_SERIES3,
    UI_PHASE0, UI_PHASE1, UI_PHASE2, UI_PHASE3, UI_PHASE4, UI_PHASE5,
    UI_PALETTE0,                     /* + enum nn_series: nnlab/palette.h's colour of a series */
    UI_ROLE_COUNT = UI_PALETTE0 + NN_SERIES_COUNT
};

void ui_colors_init(ui_lab *lab);
attr_t ui_attr(const ui_lab *lab, enum ui_role role);
void ui_clear_rect(ui_rect r);
/* A box with a title on its top edge; the inside is cleared. */
void ui_box(const ui_lab *lab, ui_rect r, const char *title);
/* Prints at most w columns of text (UTF-8, one column per character). */
int ui_put(int y, int x, int w, attr_t attr, const char *text);
int ui_putf(int y, int x, int w, attr_t attr, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Text wrapped over at most max_rows rows of width w; returns the rows used. */
int ui_put_wrapped(int y, int x, int w, int max_rows, attr_t attr, const char *text);
/* The rows ui_put_wrapped would use. */
int ui_wrapped_rows(int w, int max_rows, const char *text);
/* The attribute of a ui_text style (UI_TS_*). */
attr_t ui_text_attr(const ui_lab *lab, int style);
/* Rows s->top.. of t inside in, as many as fit (s clamped to t first). */
void ui_text_draw_rows(const ui_lab *lab, const ui_text *t, ui_rect in, ui_scroll *s);
/* The scroll marker ("v 12 more (PgDn)", ui/text/scroll.h) ending at column
 * right on row y; nothing when everything fits. */
void ui_scroll_draw_marker(const ui_lab *lab, int y, int right, const ui_scroll *s, int total, int view,
                           const char *down_key, const char *up_key);
/* A boxed panel of scrolled text: its rows inside box and the marker on
 * the box's bottom edge. Returns the rows hidden below. */
int ui_text_draw_scrolled(const ui_lab *lab, const ui_text *t, ui_rect box, ui_scroll *s, const char *down_key,
                          const char *up_key);
/* The scroll move a key asks for (Up Down PgUp PgDn Home End), or UI_SCROLL_NONE. */
enum ui_scroll_move ui_scroll_key(int ch);
void ui_draw_title(ui_lab *lab, const char *left);
void ui_draw_status(ui_lab *lab, const char *keys);
void ui_set_message(ui_lab *lab, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif

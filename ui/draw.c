/* ui/draw.c - drawing helpers every screen shares: colour roles with a
 * monochrome fallback, boxes, clipped and wrapped text, the title and status
 * rows. */
#include "draw.h"
#include "lab_state.h"
#include "text/format.h"
#include "text/scroll.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fg, bg per role (-1: the terminal's default), and the attribute used when
 * there is no colour (NO_COLOR set, or a monochrome terminal). */
static const struct {
    short fg, bg;
    attr_t mono;
} roles[UI_ROLE_COUNT] = {
    [UI_NORMAL] = { -1, -1, A_NORMAL },
    [UI_TITLE] = { COLOR_BLACK, COLOR_CYAN, A_REVERSE },
    [UI_DIM] = { COLOR_BLUE, -1, A_DIM },
    [UI_ERROR] = { COLOR_RED, -1, A_BOLD },
    [UI_OK] = { COLOR_GREEN, -1, A_NORMAL },
    [UI_KEY] = { COLOR_CYAN, -1, A_BOLD },
    [UI_SELECTED] = { COLOR_BLACK, COLOR_WHITE, A_REVERSE },
    [UI_FRAME] = { COLOR_BLUE, -1, A_NORMAL },
    [UI_SERIES0] = { COLOR_GREEN, -1, A_BOLD },
    [UI_SERIES1] = { COLOR_CYAN, -1, A_NORMAL },
    [UI_SERIES2] = { COLOR_YELLOW, -1, A_BOLD },
    [UI_SERIES3] = { COLOR_MAGENTA, -1, A_NORMAL },
    [UI_PHASE0] = { COLOR_BLACK, COLOR_BLUE, A_REVERSE },
    [UI_PHASE1] = { COLOR_BLACK, COLOR_GREEN, A_REVERSE },
    [UI_PHASE2] = { COLOR_BLACK, COLOR_YELLOW, A_REVERSE },
    [UI_PHASE3] = { COLOR_BLACK, COLOR_MAGENTA, A_REVERSE },
    [UI_PHASE4] = { COLOR_BLACK, COLOR_RED, A_REVERSE },
    [UI_PHASE5] = { COLOR_BLACK, COLOR_CYAN, A_REVERSE },
    /* UI_PALETTE0..: fg from nnlab/palette.h (ui_colors_init), no colour: normal */
};

void ui_colors_init(ui_lab *lab)
{
    const char *no_color = getenv("NO_COLOR");   /* no-color.org: set and not empty */
    lab->color = has_colors() && !(no_color && no_color[0]) && start_color() == OK;
    if (!lab->color)
        return;
    int defaults = use_default_colors() == OK;
    for (int r = 1; r < UI_ROLE_COUNT && r < COLOR_PAIRS; r++) {
        short fg = roles[r].fg, bg = roles[r].bg;
        if (r >= UI_PALETTE0)        /* a series: the palette's nearest curses colour */
            fg = (short)nn_palette(r - UI_PALETTE0)->curses;
        if (!defaults) {             /* no "default" colour: white on black */
            fg = fg < 0 ? COLOR_WHITE : fg;
            bg = bg < 0 ? COLOR_BLACK : bg;
        }
        if (init_pair((short)r, fg, bg) != OK) {
            lab->color = 0;
            return;
        }
    }
}

attr_t ui_attr(const ui_lab *lab, enum ui_role role)
{
    if ((unsigned)role >= UI_ROLE_COUNT)
        return A_NORMAL;
    if (!lab->color)
        return roles[role].mono;
    /* bold: the palette's blue stays legible on a dark terminal */
    attr_t extra = role == UI_TITLE || role == UI_KEY || role >= UI_PALETTE0 ? A_BOLD : A_NORMAL;
    return role == UI_NORMAL ? A_NORMAL : (COLOR_PAIR(role) | extra);
}

void ui_clear_rect(ui_rect r)
{
    for (int y = r.y; y < r.y + r.h; y++)
        mvhline(y, r.x, ' ', r.w);
}

void ui_box(const ui_lab *lab, ui_rect r, const char *title)
{
    if (r.w < 2 || r.h < 2)
        return;
    attr_t a = ui_attr(lab, UI_FRAME);
    ui_clear_rect(ui_rect_inner(r));
    attron(a);
    mvhline(r.y, r.x + 1, ACS_HLINE, r.w - 2);
    mvhline(r.y + r.h - 1, r.x + 1, ACS_HLINE, r.w - 2);
    mvvline(r.y + 1, r.x, ACS_VLINE, r.h - 2);
    mvvline(r.y + 1, r.x + r.w - 1, ACS_VLINE, r.h - 2);
    mvaddch(r.y, r.x, ACS_ULCORNER);
    mvaddch(r.y, r.x + r.w - 1, ACS_URCORNER);
    mvaddch(r.y + r.h - 1, r.x, ACS_LLCORNER);
    mvaddch(r.y + r.h - 1, r.x + r.w - 1, ACS_LRCORNER);
    attroff(a);
    if (title && title[0])
        ui_putf(r.y, r.x + 2, r.w - 4, A_BOLD, " %s ", title);
}

/* Bytes of the first `cols` characters of s (UTF-8 continuation bytes do not
 * start a character; every character we print is one column wide). */
static int bytes_for_cols(const char *s, int cols)
{
    int i = 0, c = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (c == cols)
                break;
            c++;
        }
        i++;
    }
    return i;
}

/* Text that did not fit: with NNLAB_CUT_LOG set (tests/tui_fit.sh), one
 * line a cut that drops more than spaces goes to that file, what was kept
 * and what was lost. A cut is found where it is made, not guessed from the
 * screen: the test fails on one. */
static void note_cut(int y, int x, int w, const char *kept, const char *lost)
{
    static FILE *log;
    static int tried;
    if (!tried) {
        const char *path = getenv("NNLAB_CUT_LOG");
        tried = 1;
        log = path && path[0] ? fopen(path, "a") : NULL;
    }
    if (!log)
        return;
    fprintf(log, "cut at row %d col %d width %d: \"%s\" lost \"%s\"\n", y + 1, x + 1, w, kept, lost);
    fflush(log);
}

int ui_put(int y, int x, int w, attr_t attr, const char *text)
{
    char clean[1024], fitted[1024];
    int n = 0;
    if (x >= COLS || y >= LINES || y < 0 || x < 0)
        return 0;
    if (x + w > COLS)
        w = COLS - x;
    if (w <= 0)
        return 0;
    /* Every text drawn passes here, much of it from files (preset names,
     * descriptions, paths, errors, device and profile names): nn_text_safe
     * shows a control byte, DEL, a C1 control or a byte that is not UTF-8 as
     * \xNN, so none reaches the terminal raw; a newline or a tab it keeps
     * would move the cursor: a space. */
    nn_text_safe(clean, sizeof clean, text);
    for (; clean[n]; n++)
        if (clean[n] == '\n' || clean[n] == '\t')
            clean[n] = ' ';
    int bytes = bytes_for_cols(clean, w);
    const char *lost = clean + bytes;
    while (*lost == ' ')
        lost++;
    if (!*lost) {                    /* it fits, or only spaces are left out */
        attron(attr);
        mvaddnstr(y, x, clean, bytes);
        attroff(attr);
        return bytes;
    }
    /* Too long: the words that fit, never a word's first letters, and the
     * rest of the width blank, as the cut text would have filled it. The
     * caller that knows a shorter form says it; this is the last guard. */
    int kept = ui_fit_words(clean, w, fitted, sizeof fitted);
    note_cut(y, x, w, fitted, clean + kept);
    attron(attr);
    mvaddnstr(y, x, fitted, kept);
    int cols = ui_text_cols(fitted);
    if (cols < w)
        mvhline(y, x + cols, ' ', w - cols);
    attroff(attr);
    return kept + (w - cols);
}

int ui_putf(int y, int x, int w, attr_t attr, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return ui_put(y, x, w, attr, buf);
}

/* Wraps text at spaces into rows of width w (at most max_rows, the last
 * ending in "..." when text is left); draws them when draw is set. Returns
 * the rows used. */
static int wrap(int y, int x, int w, int max_rows, attr_t attr, const char *text, int draw)
{
    int rows = 0;
    const char *p = text;
    while (*p && rows < max_rows && w > 0) {
        const char *next;
        int cut = ui_wrap_next(p, w, &next);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", cut, p);
        if (rows == max_rows - 1 && *next && w > 3) {   /* text left: the words that fit, "..." */
            char words[sizeof line - 4];
            ui_fit_words(p, w - 3, words, sizeof words);
            snprintf(line, sizeof line, "%s...", words);
        }
        if (draw && cut > 0 && p[cut] && p[cut] != ' ' && p[cut - 1] != ' ' && p[cut - 1] != '/')
            note_cut(y + rows, x, w, line, p + cut);   /* a word longer than the row, broken */
        if (draw)
            ui_put(y + rows, x, w, attr, line);
        rows++;
        p = next;
    }
    return rows;
}

int ui_put_wrapped(int y, int x, int w, int max_rows, attr_t attr, const char *text)
{
    return wrap(y, x, w, max_rows, attr, text, 1);
}

int ui_wrapped_rows(int w, int max_rows, const char *text)
{
    return wrap(0, 0, w, max_rows, A_NORMAL, text, 0);
}

void ui_draw_title(ui_lab *lab, const char *left)
{
    static const char right[] = "F1/? help  q quit ";
    attr_t a = ui_attr(lab, UI_TITLE);
    char fitted[1024];
    attron(a);
    mvhline(0, 0, ' ', lab->cols);
    attroff(a);
    int rw = (int)sizeof right - 1;
    ui_fit_parts(left, lab->cols - rw - 2, fitted, sizeof fitted);
    ui_put(0, 1, lab->cols - rw - 2, a, fitted);
    ui_put(0, lab->cols - rw, rw, a, right);
}

void ui_draw_status(ui_lab *lab, const char *keys)
{
    int y = lab->rows - 1;
    move(y, 0);
    clrtoeol();
    if (lab->message[0]) {           /* a path in it shortened at its head: its file name stays */
        char fitted[sizeof lab->message + 8];
        ui_fit_path(lab->message, lab->cols - 2, lab->utf8, fitted, sizeof fitted);
        ui_put(y, 1, lab->cols - 2, ui_attr(lab, lab->message_error ? UI_ERROR : UI_OK), fitted);
    }
    else {
        char fitted[256];            /* whole groups: "q quit", never "q q" */
        ui_fit_key_groups(keys, lab->cols - 2, fitted, sizeof fitted);
        ui_put(y, 1, lab->cols - 2, ui_attr(lab, UI_KEY), fitted);
    }
}

void ui_set_message(ui_lab *lab, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lab->message, sizeof lab->message, fmt, ap);
    va_end(ap);
    lab->message_error = error;
    lab->dirty |= UI_D_STATUS;
}

/* ---- scrolled text ------------------------------------------------------------------ */

attr_t ui_text_attr(const ui_lab *lab, int style)
{
    switch (style) {
    case UI_TS_BOLD: return A_BOLD;
    case UI_TS_DIM: return ui_attr(lab, UI_DIM);
    case UI_TS_OK: return ui_attr(lab, UI_OK);
    case UI_TS_ERROR: return ui_attr(lab, UI_ERROR);
    default: return A_NORMAL;
    }
}

void ui_text_draw_rows(const ui_lab *lab, const ui_text *t, ui_rect in, ui_scroll *s)
{
    s->total = t->n;
    s->view = in.h;
    ui_scroll_clamp(s, t->n, in.h);
    for (int r = 0; r < in.h && s->top + r < t->n; r++)
        ui_put(in.y + r, in.x, in.w, ui_text_attr(lab, t->style[s->top + r]), t->line[s->top + r]);
}

void ui_scroll_draw_marker(const ui_lab *lab, int y, int right, const ui_scroll *s, int total, int view,
                           const char *down_key, const char *up_key)
{
    char m[64];
    int cols = ui_scroll_marker(s, total, view, lab->utf8, down_key, up_key, m, sizeof m);
    if (cols > 0)
        ui_putf(y, right - cols - 2, cols + 2, ui_attr(lab, UI_KEY), " %s ", m);
}

int ui_text_draw_scrolled(const ui_lab *lab, const ui_text *t, ui_rect box, ui_scroll *s, const char *down_key,
                          const char *up_key)
{
    ui_rect in = ui_rect_inner(box);
    if (in.w <= 0 || in.h <= 0)
        return 0;
    ui_text_draw_rows(lab, t, in, s);
    ui_scroll_draw_marker(lab, box.y + box.h - 1, box.x + box.w - 1, s, t->n, in.h, down_key, up_key);
    return ui_scroll_below(s, t->n, in.h);
}

enum ui_scroll_move ui_scroll_key(int ch)
{
    switch (ch) {
    case KEY_UP: return UI_SCROLL_LINE_UP;
    case KEY_DOWN: return UI_SCROLL_LINE_DOWN;
    case KEY_PPAGE: return UI_SCROLL_PAGE_UP;
    case KEY_NPAGE: case ' ': return UI_SCROLL_PAGE_DOWN;
    case KEY_HOME: return UI_SCROLL_TOP;
    case KEY_END: return UI_SCROLL_BOTTOM;
    default: return UI_SCROLL_NONE;
    }
}

/* ui/text/banner.h - a figure for the back of the room: text drawn in a
 * font of our own, five pixels high and three wide, two pixel rows a
 * terminal row (the half blocks ▀ ▄ █; '#', '"' and '.' without UTF-8), so
 * that one letter takes three rows and four columns. A lesson's headline
 * ("GPU 2.62x slower") is drawn so (ui/screens/lesson_screen.c). Letters
 * are drawn as capitals, except x (the ratio's). Pure, no curses
 * (tests/test_ui_text.c). */
#ifndef NNLAB_UI_BANNER_H
#define NNLAB_UI_BANNER_H

#include <stddef.h>

#define UI_BANNER_ROWS 3             /* terminal rows a banner line takes */
#define UI_BANNER_MAX_LINES 3        /* the words wrapped over at most this many banner lines */

/* The columns text takes as a banner (one line, unwrapped). */
int ui_banner_cols(const char *text);

/* text as banner lines no wider than cols, wrapped at its spaces: each
 * banner line is UI_BANNER_ROWS rows of rows[], each row a string of up to
 * row_len bytes (UTF-8 half blocks when utf8). Returns the banner lines
 * made (rows used: that x UI_BANNER_ROWS), 0 when a word alone is wider
 * than cols or more than max_lines would be needed (the caller then says
 * it in plain text). */
int ui_banner(const char *text, int cols, int utf8, int max_lines, char (*rows)[256], size_t row_len);

#endif

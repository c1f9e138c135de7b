/* ui/text/banner.c - the lesson's big figure: see banner.h. */
#include "text/banner.h"

#include <ctype.h>
#include <string.h>

/* A glyph: five rows of three pixels, "#" set; the narrow ones (. : space)
 * use their first column only. */
typedef struct glyph {
    char c;
    const char *px[5];
} glyph;

static const glyph font[] = {
    { '0', { "###", "#.#", "#.#", "#.#", "###" } }, { '1', { ".#.", "##.", ".#.", ".#.", "###" } },
    { '2', { "###", "..#", "###", "#..", "###" } }, { '3', { "###", "..#", ".##", "..#", "###" } },
    { '4', { "#.#", "#.#", "###", "..#", "..#" } }, { '5', { "###", "#..", "###", "..#", "###" } },
    { '6', { "###", "#..", "###", "#.#", "###" } }, { '7', { "###", "..#", ".#.", ".#.", ".#." } },
    { '8', { "###", "#.#", "###", "#.#", "###" } }, { '9', { "###", "#.#", "###", "..#", "###" } },
    { 'A', { ".#.", "#.#", "###", "#.#", "#.#" } }, { 'B', { "##.", "#.#", "##.", "#.#", "##." } },
    { 'C', { ".##", "#..", "#..", "#..", ".##" } }, { 'D', { "##.", "#.#", "#.#", "#.#", "##." } },
    { 'E', { "###", "#..", "##.", "#..", "###" } }, { 'F', { "###", "#..", "##.", "#..", "#.." } },
    { 'G', { ".##", "#..", "#.#", "#.#", ".##" } }, { 'H', { "#.#", "#.#", "###", "#.#", "#.#" } },
    { 'I', { "###", ".#.", ".#.", ".#.", "###" } }, { 'J', { "..#", "..#", "..#", "#.#", ".#." } },
    { 'K', { "#.#", "#.#", "##.", "#.#", "#.#" } }, { 'L', { "#..", "#..", "#..", "#..", "###" } },
    { 'M', { "#.#", "###", "###", "#.#", "#.#" } }, { 'N', { "##.", "#.#", "#.#", "#.#", "#.#" } },
    { 'O', { ".#.", "#.#", "#.#", "#.#", ".#." } }, { 'P', { "##.", "#.#", "##.", "#..", "#.." } },
    { 'Q', { ".#.", "#.#", "#.#", "##.", ".##" } }, { 'R', { "##.", "#.#", "##.", "#.#", "#.#" } },
    { 'S', { ".##", "#..", ".#.", "..#", "##." } }, { 'T', { "###", ".#.", ".#.", ".#.", ".#." } },
    { 'U', { "#.#", "#.#", "#.#", "#.#", "###" } }, { 'V', { "#.#", "#.#", "#.#", "#.#", ".#." } },
    { 'W', { "#.#", "#.#", "###", "###", "#.#" } }, { 'X', { "#.#", "#.#", ".#.", "#.#", "#.#" } },
    { 'Y', { "#.#", "#.#", ".#.", ".#.", ".#." } }, { 'Z', { "###", "..#", ".#.", "#..", "###" } },
    { 'x', { "...", "#.#", ".#.", "#.#", "..." } }, { '%', { "#.#", "..#", ".#.", "#..", "#.#" } },
    { '-', { "...", "...", "###", "...", "..." } }, { '/', { "..#", "..#", ".#.", "#..", "#.." } },
    { '(', { ".#.", "#..", "#..", "#..", ".#." } }, { ')', { ".#.", "..#", "..#", "..#", ".#." } },
    { '+', { "...", ".#.", "###", ".#.", "..." } }, { '?', { "##.", "..#", ".#.", "...", ".#." } },
    { '.', { ".", ".", ".", ".", "#" } }, { ':', { ".", "#", ".", "#", "." } }, { ',', { ".", ".", ".", "#", "#" } },
    { ' ', { ".", ".", ".", ".", "." } }, { '\'', { "#", "#", ".", ".", "." } },
};

static const glyph *glyph_of(char c)
{
    char up = c == 'x' ? c : (char)toupper((unsigned char)c);
    for (size_t i = 0; i < sizeof font / sizeof font[0]; i++)
        if (font[i].c == up)
            return &font[i];
    return NULL;                     /* not in the font: the text stays plain */
}

/* A glyph's width, its gap after it included. */
static int glyph_cols(const glyph *g)
{
    return (int)strlen(g->px[0]) + 1;
}

int ui_banner_cols(const char *text)
{
    int cols = 0;
    for (const char *p = text; *p; p++) {
        const glyph *g = glyph_of(*p);
        if (!g)
            return -1;
        cols += glyph_cols(g);
    }
    return cols > 0 ? cols - 1 : 0;  /* no gap after the last */
}

/* The cell for a pixel pair (top, bottom). */
static const char *cell(int top, int bottom, int utf8)
{
    static const char *const uni[4] = { " ", "\xe2\x96\x84", "\xe2\x96\x80", "\xe2\x96\x88" };   /* ▄ ▀ █ */
    static const char *const ascii[4] = { " ", ".", "\"", "#" };
    return (utf8 ? uni : ascii)[top * 2 + bottom];
}

static int set_at(const glyph *g, int row, int col)
{
    return row < 5 && g->px[row][col] == '#';
}

/* One banner line of n characters of text into three rows. */
static void draw_line(const char *text, size_t n, int utf8, char (*rows)[256], size_t row_len)
{
    for (int r = 0; r < 3; r++) {
        size_t at = 0;
        rows[r][0] = '\0';
        for (size_t i = 0; i < n; i++) {
            const glyph *g = glyph_of(text[i]);
            int w = glyph_cols(g) - 1;
            for (int c = 0; c <= w && at + 4 < row_len; c++) {
                const char *s = c == w ? (i + 1 < n ? " " : "") : cell(set_at(g, 2 * r, c), set_at(g, 2 * r + 1, c),
                                                                       utf8);
                size_t k = strlen(s);
                memcpy(rows[r] + at, s, k);
                at += k;
            }
            rows[r][at] = '\0';
        }
    }
}

/* The columns of text[0..n) as a banner. */
static int span_cols(const char *text, size_t n)
{
    int cols = 0;
    for (size_t i = 0; i < n; i++)
        cols += glyph_cols(glyph_of(text[i]));
    return cols - 1;
}

int ui_banner(const char *text, int cols, int utf8, int max_lines, char (*rows)[256], size_t row_len)
{
    size_t start = 0, len = strlen(text);
    int lines = 0;
    if (ui_banner_cols(text) <= 0)
        return 0;
    while (start < len) {
        size_t end = start, best = 0;
        while (end <= len) {         /* the longest run of whole words that fits */
            if ((end == len || text[end] == ' ') && end > start && span_cols(text + start, end - start) <= cols)
                best = end;
            if (end == len)
                break;
            end++;
        }
        if (!best || lines == max_lines)
            return 0;
        draw_line(text + start, best - start, utf8, rows + 3 * lines, row_len);
        lines++;
        start = best;
        while (start < len && text[start] == ' ')
            start++;
    }
    return lines;
}

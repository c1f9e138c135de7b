/* ui/text/scroll.c - see scroll.h. */
#include "scroll.h"

#include <stdio.h>

int ui_scroll_clamp(ui_scroll *s, int total, int view)
{
    int last = total - (view > 0 ? view : 0);
    if (s->top > last)
        s->top = last;
    if (s->top < 0)
        s->top = 0;
    return s->top;
}

int ui_scroll_move(ui_scroll *s, enum ui_scroll_move m, int total, int view)
{
    int before = ui_scroll_clamp(s, total, view), page = view > 1 ? view - 1 : 1;
    switch (m) {
    case UI_SCROLL_LINE_UP: s->top--; break;
    case UI_SCROLL_LINE_DOWN: s->top++; break;
    case UI_SCROLL_PAGE_UP: s->top -= page; break;
    case UI_SCROLL_PAGE_DOWN: s->top += page; break;
    case UI_SCROLL_TOP: s->top = 0; break;
    case UI_SCROLL_BOTTOM: s->top = total; break;
    default: break;
    }
    return ui_scroll_clamp(s, total, view) != before;
}

int ui_scroll_below(const ui_scroll *s, int total, int view)
{
    int below = total - s->top - view;
    return below > 0 ? below : 0;
}

int ui_scroll_marker(const ui_scroll *s, int total, int view, int utf8, const char *down_key, const char *up_key,
                     char *buf, size_t len)
{
    int below = ui_scroll_below(s, total, view), n = 0;
    if (len == 0)
        return 0;
    buf[0] = '\0';
    if (below > 0)
        n = snprintf(buf, len, "%s %d more (%s)", utf8 ? "\u25BC" : "v", below, down_key);
    else if (s->top > 0)
        n = snprintf(buf, len, "%s top (%s)", utf8 ? "\u25B2" : "^", up_key);
    /* the arrows are one column each, three bytes in UTF-8 */
    return n <= 0 ? 0 : utf8 ? n - 2 : n;
}

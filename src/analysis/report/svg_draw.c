/* src/analysis/report/svg_draw.c - the SVG writers' drawing and layout; see
 * svg_draw.h. */
#include "svg_draw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- measuring text ----------------------------------------------------------------------------- */

/* A glyph's advance in em, rounded up from DejaVu Sans's (lower case about
 * 0.55-0.6, capitals and digits wider): a text measured here is never wider
 * on the slide. tests/svg_layout.py holds the same table. */
static double glyph_em(unsigned char c)
{
    if (c >= 0x80)
        return (c & 0xc0) == 0x80 ? 0 : 1.0;    /* one glyph per UTF-8 character, as wide as an M */
    if (c == 'm' || c == 'w')
        return 0.98;
    if (c >= 'a' && c <= 'z')
        return 0.64;
    if (c == 'M' || c == 'W')
        return 1.0;
    if (c >= 'A' && c <= 'Z')
        return 0.78;
    if (c >= '0' && c <= '9')
        return 0.66;
    if (c == ' ')
        return 0.34;
    if (strchr(".,:;'|!", c))
        return 0.4;
    if (strchr("()[]{}-/\\", c))
        return 0.45;
    if (c == '%' || c == '@')
        return 1.0;
    return 0.85;
}

double svg_text_width(const char *s, double px, int bold)
{
    double em = 0;
    for (; *s; s++)
        em += glyph_em((unsigned char)*s);
    return em * px * (bold ? 1.1 : 1.0);
}

svg_box svg_text_box(double x, double y, double px, double w, const char *anchor)
{
    double l = strcmp(anchor, "middle") == 0 ? x - w / 2 : strcmp(anchor, "end") == 0 ? x - w : x;
    return (svg_box){ l, y - 0.8 * px, l + w, y + 0.25 * px };
}

int svg_boxes_overlap(const svg_box *a, const svg_box *b)
{
    return a->l < b->r && b->l < a->r && a->t < b->b && b->t < a->b;
}

/* s cut after its last whole word that fits width, with an ellipsis ("..."):
 * inside a word only when no word break leaves half of it. */
static void ellipsize(const char *s, double width, int px, int bold, char *out, size_t len)
{
    size_t n = strlen(s), fit = 0, word = 0;
    char tmp[512];
    for (size_t k = 1; k <= n && k + 4 < sizeof tmp && k + 4 < len; k++) {
        if ((((unsigned char)s[k]) & 0xc0) == 0x80)
            continue;                /* never inside a UTF-8 character */
        memcpy(tmp, s, k);
        memcpy(tmp + k, "...", 4);
        if (svg_text_width(tmp, px, bold) > width)
            break;
        fit = k;
        if (s[k] == ' ')
            word = k;
    }
    size_t cut = word > fit / 2 ? word : fit;
    while (cut > 0 && strchr(" ,;:(", s[cut - 1]))
        cut--;
    snprintf(out, len, "%.*s...", (int)cut, s);
}

int svg_fit(const char *s, double width, int px, int min_px, int bold, char *out, size_t len)
{
    snprintf(out, len, "%s", s);
    for (; px > min_px && svg_text_width(s, px, bold) > width; px--)
        ;
    if (svg_text_width(s, px, bold) > width)
        ellipsize(s, width, px, bold, out, len);
    return px;
}

/* The bytes of s that fit one line of width: whole words, at least one. */
static size_t line_bytes(const char *s, double width, int px)
{
    size_t best = 0;
    char try[160];
    for (size_t e = 0; e < sizeof try - 1;) {
        while (s[e] && s[e] != ' ' && e < sizeof try - 1)
            e++;
        memcpy(try, s, e);
        try[e] = '\0';
        if (best && svg_text_width(try, px, 0) > width)
            break;
        best = e;
        if (s[e] != ' ')
            break;
        e++;
    }
    return best;
}

int svg_wrap(const char *s, double width, int px, char (*lines)[160], int max_lines)
{
    int n = 0;
    while (*s && n < max_lines) {
        size_t take = line_bytes(s, width, px);
        char line[160];
        if (n == max_lines - 1 && s[take])
            take = strlen(s);        /* the last line takes the rest, cut with an ellipsis */
        snprintf(line, sizeof line, "%.*s", (int)(take < sizeof line - 1 ? take : sizeof line - 1), s);
        svg_fit(line, width, px, px, 0, lines[n], sizeof lines[n]);
        n++;
        s += take;
        while (*s == ' ')
            s++;
    }
    return n;
}

/* ---- drawing text ------------------------------------------------------------------------------- */

void svg_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '&')
            fputs("&amp;", f);
        else if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (c == '"')
            fputs("&quot;", f);
        else if (c >= 0x20 && c != 0x7f)
            fputc(c, f);
    }
}

static void text_at(FILE *f, double x, double y, int px, const char *anchor, const char *extra, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\"%s>", x, y, px, anchor, extra);
    svg_escaped(f, s);
    fputs("</text>\n", f);
}

svg_box svg_text_fit(FILE *f, double x, double y, int px, int min_px, const char *anchor, double left,
                     double right, const char *extra, const char *s)
{
    char out[512];
    int bold = strstr(extra, "bold") != NULL;
    px = svg_fit(s, right - left, px, min_px, bold, out, sizeof out);
    double w = svg_text_width(out, px, bold);
    svg_box b = svg_text_box(x, y, px, w, anchor);
    if (b.r > right)                 /* moved in, whole */
        x -= b.r - right;
    else if (b.l < left)
        x += left - b.l;
    text_at(f, x, y, px, anchor, extra, out);
    return svg_text_box(x, y, px, w, anchor);
}

/* ---- axes and curves ---------------------------------------------------------------------------- */

static double axis_value(double v, int is_log)
{
    return is_log ? log(v) : v;
}

double svg_px_x(const svg_plot *p, double x)
{
    double lo = axis_value(p->xmin, p->xlog), hi = axis_value(p->xmax, p->xlog);
    return p->x0 + (axis_value(x, p->xlog) - lo) / (hi > lo ? hi - lo : 1) * p->w;
}

double svg_px_y(const svg_plot *p, double y)
{
    double lo = axis_value(p->ymin, p->ylog), hi = axis_value(p->ymax, p->ylog);
    return p->y0 + p->h - (axis_value(y, p->ylog) - lo) / (hi > lo ? hi - lo : 1) * p->h;
}

/* Linear ticks at 1, 2 or 5 times a power of ten, at most about six of
 * them; whole numbers only on an axis of counts (epochs). */
static int linear_ticks(double lo, double hi, int whole, double *t, int max)
{
    double raw = (hi - lo) / 5, mag = pow(10, floor(log10(raw > 0 ? raw : 1)));
    double step = raw / mag <= 1 ? mag : raw / mag <= 2 ? 2 * mag : raw / mag <= 5 ? 5 * mag : 10 * mag;
    if (whole && step < 1)
        step = 1;
    int n = 0;
    for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9 && n < max; v += step)
        t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
    return n;
}

int svg_log_ticks(double lo, double hi, int base, double *t, int max)
{
    int n = 0;
    for (double v = pow(base, floor(log(lo) / log(base))); v <= hi * 1.0001 && n < max; v *= base) {
        if (v >= lo * 0.9999)
            t[n++] = v;
        if (base == 10 && hi / lo < 100)
            for (int m = 2; m <= 5 && n < max; m += 3)
                if (v * m >= lo && v * m <= hi)
                    t[n++] = v * m;
    }
    return n;
}

void svg_tick_label(double v, char *buf, size_t len)
{
    if (fabs(v) >= 1e6)
        snprintf(buf, len, "%gM", v / 1e6);
    else if (fabs(v) >= 1e4)
        snprintf(buf, len, "%gk", v / 1000);
    else
        snprintf(buf, len, "%g", v);
}

void svg_range_add(double v, double *lo, double *hi)
{
    if (!isfinite(v))
        return;
    if (v < *lo)
        *lo = v;
    if (v > *hi)
        *hi = v;
}

void svg_range_finish(double *lo, double *hi, int is_log)
{
    if (*lo > *hi)
        *lo = 0, *hi = 1;
    if (is_log) {
        *lo /= 1.25;
        *hi *= 1.25;
        return;
    }
    if (*hi - *lo < 1e-12)
        *hi = *lo + (*lo ? fabs(*lo) * 0.1 : 1);
    if (*lo > 0 && *lo < (*hi - *lo) * 0.5)
        *lo = 0;
}

void svg_open(FILE *f, const char *title)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" fill=\"#000000\">\n<title>",
            NN_SVG_WIDTH, NN_SVG_HEIGHT, NN_SVG_WIDTH, NN_SVG_HEIGHT);
    svg_escaped(f, title);
    fprintf(f, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", NN_SVG_WIDTH, NN_SVG_HEIGHT);
    svg_text_fit(f, NN_SVG_WIDTH / 2.0, 48, SVG_TITLE_PX, 22, "middle", SVG_MARGIN, NN_SVG_WIDTH - SVG_MARGIN,
                 " font-weight=\"bold\" class=\"title\"", title);
}

void svg_x_tick_labels(FILE *f, const svg_plot *p, const double *t, int n)
{
    double last = -INFINITY;
    char lab[32];
    for (int i = 0; i < n; i++) {
        double x = svg_px_x(p, t[i]);
        svg_tick_label(t[i], lab, sizeof lab);
        svg_box b = svg_text_box(x, 0, SVG_TICK_PX, svg_text_width(lab, SVG_TICK_PX, 0), "middle");
        if (b.l < last + 8 || b.l < SVG_MARGIN || b.r > NN_SVG_WIDTH - SVG_MARGIN)
            continue;                /* too close to the one before: its tick stays, unlabelled */
        text_at(f, x, p->y0 + p->h + 34, SVG_TICK_PX, "middle", " class=\"tick-label\"", lab);
        last = b.r;
    }
}

/* The y ticks' lines and labels; returns the widest label's width. */
static double y_ticks(FILE *f, const svg_plot *p)
{
    double t[SVG_MAX_TICKS], widest = 0, last = INFINITY;
    char lab[32];
    int n = p->ylog ? svg_log_ticks(p->ymin, p->ymax, 10, t, SVG_MAX_TICKS)
                    : linear_ticks(p->ymin, p->ymax, 0, t, SVG_MAX_TICKS);
    for (int i = 0; i < n; i++) {
        double y = svg_px_y(p, t[i]);
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d0d0d0\" "
                   "stroke-width=\"1\"/>\n", p->x0, y, p->x0 + p->w, y);
        if (y + 8 > last - SVG_TICK_PX)
            continue;                /* ticks up the axis: each label clear of the one below */
        svg_tick_label(t[i], lab, sizeof lab);
        text_at(f, p->x0 - 10, y + 8, SVG_TICK_PX, "end", " class=\"tick-label\"", lab);
        widest = fmax(widest, svg_text_width(lab, SVG_TICK_PX, 0));
        last = y + 8;
    }
    return widest;
}

void svg_axes(FILE *f, const svg_plot *p, const char *xlabel, const char *ylabel)
{
    double t[SVG_MAX_TICKS];
    int n = p->xlog ? svg_log_ticks(p->xmin, p->xmax, 2, t, SVG_MAX_TICKS)
                    : linear_ticks(p->xmin, p->xmax, p->xwhole, t, SVG_MAX_TICKS);
    fprintf(f, "<g class=\"axes\" stroke=\"#000000\" stroke-width=\"2\" fill=\"none\">\n"
               "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n</g>\n", p->x0, p->y0, p->w, p->h);
    for (int i = 0; i < n; i++)
        fprintf(f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\" "
                   "stroke-width=\"2\"/>\n", svg_px_x(p, t[i]), p->y0 + p->h, svg_px_x(p, t[i]), p->y0 + p->h + 8);
    svg_x_tick_labels(f, p, t, n);
    double widest = y_ticks(f, p);
    svg_text_fit(f, p->x0 + p->w / 2, p->y0 + p->h + 72, SVG_LABEL_PX, 18, "middle", p->x0 - 40,
                 fmin(p->x0 + p->w + 40, NN_SVG_WIDTH - SVG_MARGIN), " class=\"axis-label\"", xlabel);
    /* the y label turned, its baseline clear of the widest tick label */
    char rot[96], out[256];
    double x = fmax(p->x0 - 18 - widest - 0.25 * SVG_LABEL_PX, SVG_MARGIN + SVG_LABEL_PX);
    int px = svg_fit(ylabel, p->h + 40, SVG_LABEL_PX, 18, 0, out, sizeof out);
    snprintf(rot, sizeof rot, " class=\"axis-label\" transform=\"rotate(-90 %.1f %.1f)\"", x, p->y0 + p->h / 2);
    text_at(f, x, p->y0 + p->h / 2, px, "middle", rot, out);
}

void svg_curve(FILE *f, const svg_plot *p, const double *xs, const double *ys, int n, const svg_style *s)
{
    int open = 0;
    for (int i = 0; i < n; i++) {
        int ok = isfinite(xs[i]) && isfinite(ys[i]) && (!p->xlog || xs[i] > 0) && (!p->ylog || ys[i] > 0);
        if (ok && !open) {
            fprintf(f, "<polyline class=\"%s\" data-label=\"", s->dimmed ? "curve past" : "curve");
            svg_escaped(f, s->label);
            fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"%d\" stroke-linejoin=\"round\"", s->colour,
                    s->dimmed ? SVG_LINE_PX - 1 : SVG_LINE_PX);
            if (s->dash)
                fprintf(f, " stroke-dasharray=\"%s\"", s->dash);
            fprintf(f, "%s points=\"", s->dimmed ? " stroke-opacity=\"0.45\"" : "");
            open = 1;
        } else if (!ok && open) {
            fputs("\"/>\n", f);
            open = 0;
        }
        if (ok)
            fprintf(f, "%.1f,%.1f ", svg_px_x(p, xs[i]), svg_px_y(p, ys[i]));
    }
    if (open)
        fputs("\"/>\n", f);
}

/* ---- the legend ------------------------------------------------------------------------------- */

#define SWATCH_W 44.0
#define ENTRY_GAP 30.0

static void legend_entry(FILE *f, const svg_style *s, double x, double y, double right)
{
    fprintf(f, "<line class=\"legend-swatch\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
               "stroke-width=\"%d\"", x, y - 8, x + SWATCH_W, y - 8, s->colour, SVG_LINE_PX);
    if (s->dash)
        fprintf(f, " stroke-dasharray=\"%s\"", s->dash);
    fprintf(f, "%s/>\n", s->dimmed ? " stroke-opacity=\"0.45\"" : "");
    svg_text_fit(f, x + SWATCH_W + 10, y, SVG_TICK_PX, SVG_MIN_PX, "start", x + SWATCH_W + 10, right,
                 " class=\"legend\"", s->label);
}

int svg_legend(FILE *f, const svg_style *s, int n, double left, double right, double top, int draw)
{
    double x = left;
    int rows = n > 0;
    for (int k = 0; k < n; k++) {
        double w = SWATCH_W + 10 + svg_text_width(s[k].label, SVG_TICK_PX, 0);
        if (x > left && x + w > right) {   /* wraps: the next row */
            x = left;
            rows++;
        }
        if (draw)
            legend_entry(f, &s[k], x, top + SVG_TICK_PX * 0.8 + (rows - 1) * SVG_LEGEND_ROW, right);
        x += w + ENTRY_GAP;
    }
    return rows;
}

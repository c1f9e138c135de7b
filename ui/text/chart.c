/* ui/text/chart.c - axes, ticks and a braille/ASCII raster; see chart.h. */
#include "chart.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- axes ---------------------------------------------------------------- */

void ui_axis_begin(ui_axis *a, int log_base)
{
    a->lo = INFINITY;
    a->hi = -INFINITY;
    a->log = log_base > 1 ? log_base : 0;
}

void ui_axis_include(ui_axis *a, double v)
{
    if (!isfinite(v) || (a->log && v <= 0))
        return;
    if (v < a->lo)
        a->lo = v;
    if (v > a->hi)
        a->hi = v;
}

static double log_base(const ui_axis *a, double v)
{
    return log(v) / log((double)a->log);
}

/* The smallest 1, 2 or 5 x 10^k not below x (x > 0). */
static double nice_step(double x)
{
    double p = pow(10.0, floor(log10(x)));
    double m = x / p;
    return (m <= 1.0 + 1e-9 ? 1.0 : m <= 2.0 + 1e-9 ? 2.0 : m <= 5.0 + 1e-9 ? 5.0 : 10.0) * p;
}

static void finish_log(ui_axis *a)
{
    if (!(a->lo <= a->hi)) {
        a->lo = 1.0;
        a->hi = (double)a->log;
        return;
    }
    if (a->lo == a->hi) {            /* one value: a decade (or one doubling) around it */
        a->lo /= sqrt((double)a->log);
        a->hi *= sqrt((double)a->log);
        return;
    }
    /* pad so that the extreme points do not sit on the frame */
    double pad = pow(a->hi / a->lo, 0.05);
    a->lo /= pad;
    a->hi *= pad;
}

void ui_axis_finish(ui_axis *a, int from_zero)
{
    if (a->log) {
        finish_log(a);
        return;
    }
    if (!(a->lo <= a->hi)) {
        a->lo = 0.0;
        a->hi = 1.0;
        return;
    }
    if (from_zero && a->lo > 0)
        a->lo = 0.0;
    if (a->lo == a->hi) {
        double d = a->lo != 0 ? fabs(a->lo) * 0.5 : 1.0;
        a->lo -= d;
        a->hi += d;
    }
    /* outwards to a multiple of a step that gives about four intervals */
    double step = nice_step((a->hi - a->lo) / 4.0);
    a->lo = floor(a->lo / step + 1e-9) * step;
    a->hi = ceil(a->hi / step - 1e-9) * step;
}

double ui_axis_frac(const ui_axis *a, double v)
{
    if (!isfinite(v) || !(a->hi > a->lo))
        return NAN;
    if (!a->log)
        return (v - a->lo) / (a->hi - a->lo);
    if (v <= 0 || a->lo <= 0)
        return NAN;
    return (log(v) - log(a->lo)) / (log(a->hi) - log(a->lo));
}

int ui_axis_cell(const ui_axis *a, double v, int cells)
{
    double f = ui_axis_frac(a, v);
    if (isnan(f) || cells < 1)
        return -1;
    double c = floor(f * (double)(cells - 1) + 0.5);
    return c < 0 || c > cells - 1 ? -1 : (int)c;
}

/* ---- ticks ----------------------------------------------------------------- */

static int linear_ticks(const ui_axis *a, int max_ticks, double *out, int max)
{
    double range = a->hi - a->lo;
    if (!(range > 0) || max_ticks < 2)
        return 0;
    double step = nice_step(range / (double)(max_ticks - 1));
    int n = 0;
    for (double k = ceil(a->lo / step - 1e-9); n < max; k += 1.0) {
        double t = k * step;
        if (t > a->hi + step * 1e-9)
            break;
        out[n++] = fabs(t) < step * 1e-9 ? 0.0 : t;   /* no "-0" */
    }
    return n;
}

/* 2x and 5x between powers of ten, for a log axis of less than two decades */
static int log10_subticks(const ui_axis *a, double *out, int max)
{
    static const double mult[] = { 1.0, 2.0, 5.0 };
    int n = 0;
    for (double k = floor(log10(a->lo)); n < max && pow(10.0, k) <= a->hi; k += 1.0)
        for (int i = 0; i < 3 && n < max; i++) {
            double t = mult[i] * pow(10.0, k);
            if (t >= a->lo * (1 - 1e-9) && t <= a->hi * (1 + 1e-9))
                out[n++] = t;
        }
    return n;
}

static int log_ticks(const ui_axis *a, int max_ticks, double *out, int max)
{
    if (!(a->lo > 0) || !(a->hi > a->lo) || max_ticks < 1)
        return 0;
    int k0 = (int)ceil(log_base(a, a->lo) - 1e-9), k1 = (int)floor(log_base(a, a->hi) + 1e-9);
    int count = k1 - k0 + 1, n = 0;
    if (a->log == 10 && count < 3) {  /* under two decades: powers alone say too little */
        n = log10_subticks(a, out, max);
        if (n >= 2 && n <= max_ticks)
            return n;
        if (count < 2) {             /* not even two powers: round linear steps */
            ui_axis lin = { a->lo, a->hi, 0 };
            return linear_ticks(&lin, max_ticks, out, max);
        }
        n = 0;
    }
    int stride = count > max_ticks ? (count + max_ticks - 1) / max_ticks : 1;
    for (int k = k0; k <= k1 && n < max; k += stride)
        out[n++] = pow((double)a->log, (double)k);
    return n;
}

int ui_axis_ticks(const ui_axis *a, int max_ticks, double *out, int max)
{
    return a->log ? log_ticks(a, max_ticks, out, max) : linear_ticks(a, max_ticks, out, max);
}

void ui_format_tick_sig(double v, int sig, char *buf, size_t len)
{
    static const char suffix[] = "kMGTP";
    double m = fabs(v);
    if (v == 0 || !isfinite(v)) {
        snprintf(buf, len, v == 0 ? "0" : "?");
    } else if (m >= 1e4) {
        int i = -1;
        while (m >= 1e3 && i < 4) {
            m /= 1e3;
            v /= 1e3;
            i++;
        }
        snprintf(buf, len, "%.*g%c", sig, v, suffix[i]);
    } else if (v == floor(v)) {
        snprintf(buf, len, "%.0f", v);
    } else if (m < 1e-3) {
        snprintf(buf, len, "%.*e", sig - 3, v);
    } else {
        snprintf(buf, len, "%.*g", sig, v);
    }
}

void ui_format_tick(double v, char *buf, size_t len)
{
    ui_format_tick_sig(v, 3, buf, len);
}

/* 1 when two of the n ticks print alike at sig digits. */
static int labels_clash(const double *ticks, int n, int sig)
{
    char a[32], b[32];
    for (int i = 1; i < n; i++) {
        ui_format_tick_sig(ticks[i - 1], sig, a, sizeof a);
        ui_format_tick_sig(ticks[i], sig, b, sizeof b);
        if (strcmp(a, b) == 0)
            return 1;
    }
    return 0;
}

int ui_tick_sig(const double *ticks, int n)
{
    int sig = 3;
    while (sig < 8 && labels_clash(ticks, n, sig))
        sig++;
    return sig;
}

int ui_axis_label_row(const ui_axis *a, const double *ticks, int n, int w, char *row)
{
    int next_free = 0, placed = 0, sig = ui_tick_sig(ticks, n);
    if (w < 0)
        w = 0;
    memset(row, ' ', (size_t)w);
    row[w] = '\0';
    for (int i = 0; i < n; i++) {
        char label[32];
        int col = ui_axis_cell(a, ticks[i], w);
        if (col < 0)
            continue;
        ui_format_tick_sig(ticks[i], sig, label, sizeof label);
        int len = (int)strlen(label), start = col - len / 2;
        if (len > w)
            continue;
        if (start > w - len)
            start = w - len;
        if (start < 0)
            start = 0;
        if (start < next_free)
            continue;
        memcpy(row + start, label, (size_t)len);
        next_free = start + len + 1;
        placed++;
    }
    return placed;
}

/* ---- raster ---------------------------------------------------------------- */

int ui_chart_dots_w(const ui_chart *c)
{
    return c->braille ? 2 * c->w : c->w;
}

int ui_chart_dots_h(const ui_chart *c)
{
    return c->braille ? 4 * c->h : c->h;
}

void ui_chart_init(ui_chart *c, int w, int h, int braille)
{
    c->w = w < 0 ? 0 : w > UI_CHART_MAX_W ? UI_CHART_MAX_W : w;
    c->h = h < 0 ? 0 : h > UI_CHART_MAX_H ? UI_CHART_MAX_H : h;
    c->braille = braille != 0;
    memcpy(c->mark, "*+ox#%@&", UI_CHART_SERIES);
    memset(c->dots, 0, sizeof c->dots);
    memset(c->owner, 0, sizeof c->owner);
}

/* Dot (px, py), py = 0 at the top. Braille numbers the dots of a cell down
 * the left column (1, 2, 3, 7) then the right (4, 5, 6, 8). */
static void set_dot(ui_chart *c, int series, int px, int py)
{
    static const unsigned char bit[2][4] = { { 0x01, 0x02, 0x04, 0x40 }, { 0x08, 0x10, 0x20, 0x80 } };
    if (px < 0 || py < 0 || px >= ui_chart_dots_w(c) || py >= ui_chart_dots_h(c))
        return;
    int col = c->braille ? px / 2 : px, row = c->braille ? py / 4 : py;
    c->dots[row][col] |= c->braille ? bit[px % 2][py % 4] : 1;
    c->owner[row][col] |= (unsigned char)(1u << (series & (UI_CHART_SERIES - 1)));
}

/* Dot coordinates of (x, y), as doubles so that clipping stays exact; 0 when
 * the point cannot be mapped. */
static int to_dots(const ui_chart *c, double x, double y, const ui_axis *ax, const ui_axis *ay,
                   double *px, double *py)
{
    double fx = ui_axis_frac(ax, x), fy = ui_axis_frac(ay, y);
    if (isnan(fx) || isnan(fy))
        return 0;
    *px = fx * (ui_chart_dots_w(c) - 1);
    *py = (1.0 - fy) * (ui_chart_dots_h(c) - 1);
    return 1;
}

/* Liang-Barsky: clips the segment to [0, xmax] x [0, ymax]; 0 when nothing is left. */
static int clip(double *x0, double *y0, double *x1, double *y1, double xmax, double ymax)
{
    double t0 = 0, t1 = 1, dx = *x1 - *x0, dy = *y1 - *y0;
    double p[4] = { -dx, dx, -dy, dy }, q[4] = { *x0, xmax - *x0, *y0, ymax - *y0 };
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return 0;
            continue;
        }
        double r = q[i] / p[i];
        if (p[i] < 0 && r > t0)
            t0 = r;
        else if (p[i] > 0 && r < t1)
            t1 = r;
        if (t0 > t1)
            return 0;
    }
    double ox = *x0, oy = *y0;
    *x0 = ox + t0 * dx;
    *y0 = oy + t0 * dy;
    *x1 = ox + t1 * dx;
    *y1 = oy + t1 * dy;
    return 1;
}

static void draw_segment(ui_chart *c, int series, double x0, double y0, double x1, double y1)
{
    if (!clip(&x0, &y0, &x1, &y1, ui_chart_dots_w(c) - 1, ui_chart_dots_h(c) - 1))
        return;
    int ax = (int)lround(x0), ay = (int)lround(y0), bx = (int)lround(x1), by = (int)lround(y1);
    int dx = bx > ax ? bx - ax : ax - bx, sx = ax < bx ? 1 : -1;
    int dy = by > ay ? ay - by : by - ay, sy = ay < by ? 1 : -1;
    int e = dx + dy;
    for (;;) {                       /* Bresenham, all octants */
        set_dot(c, series, ax, ay);
        if (ax == bx && ay == by)
            break;
        int e2 = 2 * e;
        if (e2 >= dy) {
            e += dy;
            ax += sx;
        }
        if (e2 <= dx) {
            e += dx;
            ay += sy;
        }
    }
}

void ui_chart_plot(ui_chart *c, int series, const double *x, const double *y, int n,
                   const ui_axis *ax, const ui_axis *ay, int connect)
{
    double px0 = 0, py0 = 0;
    int have_prev = 0;
    for (int i = 0; i < n; i++) {
        double px, py;
        if (!to_dots(c, x[i], y[i], ax, ay, &px, &py)) {
            have_prev = 0;           /* a gap in the data breaks the line */
            continue;
        }
        if (connect && have_prev)
            draw_segment(c, series, px0, py0, px, py);
        else if (px > -0.5 && py > -0.5 && px < ui_chart_dots_w(c) - 0.5 && py < ui_chart_dots_h(c) - 0.5)
            set_dot(c, series, (int)lround(px), (int)lround(py));   /* lround only in range */
        px0 = px, py0 = py, have_prev = 1;
    }
}

void ui_chart_vline(ui_chart *c, int series, double x, const ui_axis *ax)
{
    double f = ui_axis_frac(ax, x);
    if (isnan(f) || f < 0 || f > 1)
        return;
    int px = (int)lround(f * (ui_chart_dots_w(c) - 1));
    for (int py = 0; py < ui_chart_dots_h(c); py += 2)
        set_dot(c, series, px, py);
}

unsigned ui_chart_cell(const ui_chart *c, int col, int row, char *buf, size_t len)
{
    if (len == 0)
        return 0;
    buf[0] = '\0';
    if (col < 0 || row < 0 || col >= c->w || row >= c->h || !c->dots[row][col])
        return 0;
    unsigned owner = c->owner[row][col], bits = c->dots[row][col];
    if (c->braille) {
        if (len < 4)
            return owner;
        unsigned cp = 0x2800u + bits;    /* U+2800..U+28FF in three UTF-8 bytes */
        buf[0] = (char)(0xE0 | (cp >> 12));
        buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[2] = (char)(0x80 | (cp & 0x3F));
        buf[3] = '\0';
    } else if (len >= 2) {
        int s = 0, count = 0;
        for (int i = 0; i < UI_CHART_SERIES; i++)
            if (owner & (1u << i))
                s = i, count++;
        buf[0] = count > 1 ? '#' : c->mark[s];
        buf[1] = '\0';
    }
    return owner;
}

void ui_ema(const double *y, int n, double w, double *out)
{
    double avg = NAN;
    if (!(w >= 0))
        w = 0;
    if (w >= 1)
        w = 0.999;
    for (int i = 0; i < n; i++) {
        double v = y[i];
        if (!isfinite(v)) {
            out[i] = v;
            continue;
        }
        avg = isfinite(avg) ? w * avg + (1 - w) * v : v;
        out[i] = avg;
    }
}

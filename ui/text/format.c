/* ui/text/format.c - the lab's text as pure functions; see format.h. */
#include "format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnlab/progress.h"

void ui_fmt_si(double v, char *buf, size_t len)
{
    static const char suffix[] = "kMGTP";
    double m = fabs(v);
    if (!isfinite(v)) {
        snprintf(buf, len, "n/a");
        return;
    }
    if (m < 999.5) {
        snprintf(buf, len, v == floor(v) || m >= 100 ? "%.0f" : m >= 10 ? "%.1f" : "%.3g", v);
        return;
    }
    int i = 0;
    m /= 1e3;
    v /= 1e3;
    while (m >= 999.95 && i < 4) {   /* 999.96k prints as "1.0M", not "1000.0k" */
        m /= 1e3;
        v /= 1e3;
        i++;
    }
    snprintf(buf, len, "%.1f%c", v, suffix[i]);
}

void ui_fmt_duration(double s, char *buf, size_t len)
{
    if (!isfinite(s) || s < 0 || s > 359999999.0) {
        snprintf(buf, len, "--:--");
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

/* Appends s if it fits (keeping room for the terminator). */
static int put(char *buf, size_t len, size_t *at, const char *s)
{
    size_t n = strlen(s);
    if (*at + n + 1 > len)
        return -1;
    memcpy(buf + *at, s, n + 1);
    *at += n;
    return 0;
}

int ui_bar_text(char *buf, size_t len, int width, double frac, int utf8)
{
    /* U+2589..U+258F: seven eighths down to one eighth of a cell */
    static const char *const eighth[8] = { "", "\u258F", "\u258E", "\u258D", "\u258C",
                                           "\u258B", "\u258A", "\u2589" };
    size_t at = 0;
    if (len == 0)
        return 0;
    buf[0] = '\0';
    if (!(frac > 0))
        frac = 0;                    /* NaN too */
    if (frac > 1)
        frac = 1;
    int units = (int)floor(frac * width * (utf8 ? 8 : 1) + 1e-9);
    int full = utf8 ? units / 8 : units, part = utf8 ? units % 8 : 0;
    for (int i = 0; i < width; i++) {
        const char *s = i < full ? (utf8 ? "\u2588" : "#")
                      : i == full && part ? eighth[part]
                      : (utf8 ? "\u2591" : "-");
        if (put(buf, len, &at, s) != 0)
            break;
    }
    return (int)at;
}

int ui_phase_split(const double *us, int n, int width, int *cols)
{
    double total = 0, rem[16];
    int given = 0;
    if (n > 16)
        n = 16;
    for (int i = 0; i < n; i++)
        total += us[i] > 0 ? us[i] : 0;
    for (int i = 0; i < n; i++) {
        double share = total > 0 && us[i] > 0 ? us[i] / total * width : 0;
        cols[i] = (int)floor(share);
        rem[i] = share - cols[i];
        given += cols[i];
    }
    /* the columns floor() left over go to the largest remainders, earlier part first on ties */
    while (total > 0 && given < width) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (us[i] > 0 && (best < 0 || rem[i] > rem[best]))
                best = i;
        if (best < 0)
            break;
        cols[best]++;
        rem[best] = -1;
        given++;
    }
    return given;
}

void ui_fmt_job_status(const nn_snapshot *s, char *buf, size_t len, int compact)
{
    char rate[16], head[160], tq[48], per[24];
    nn_job_times t;
    if (s->state == NN_JOB_FAILED || s->state == NN_JOB_DIVERGED) {
        /* the engine's message already says "loss became NaN at step N" */
        snprintf(buf, len, "%s: %s", nn_job_state_name(s->state), s->error);
        return;
    }
    if (s->state == NN_JOB_PREPARING) {
        snprintf(buf, len, "preparing (loading data, building the network)");
        return;
    }
    if (s->has_rate)
        ui_fmt_si(s->samples_per_s, rate, sizeof rate);
    else
        snprintf(rate, sizeof rate, "-");
    if (nn_job_state_ended(s->state)) {      /* the headline of a finished job is its time */
        nn_format_headline(s, head, sizeof head);
        snprintf(buf, len, compact ? "%s  %s/s" : "%s  %s samples/s", head, rate);
        return;
    }
    nn_job_times_of(s, &t);                  /* the library's figures, as the CLI's */
    nn_format_elapsed_remaining(&t, tq, sizeof tq);
    nn_format_per_step(t.has_per_step ? t.per_step_s : NAN, per, sizeof per);
    snprintf(buf, len, compact ? "ep %d/%d  %ld/%ld  %s/s  %s %s" : "epoch %d/%d  step %ld/%ld  %s samples/s  %s  %s",
             s->epoch, s->epochs, s->step, s->total_steps, rate, tq, per);
}

int ui_text_cols(const char *s)
{
    int cols = 0;
    for (; *s; s++)
        cols += ((unsigned char)*s & 0xC0) != 0x80;
    return cols;
}

int ui_fmt_quantity(double v, const char *unit, int max_cols, char *buf, size_t len)
{
    static const char suffix[] = " kMGTP";
    double m = fabs(v);
    int i = 0;
    if (!isfinite(v)) {
        snprintf(buf, len, "n/a %s", unit);
        return ui_text_cols(buf) <= max_cols ? 0 : -1;
    }
    while (m >= 999.5 && i < 5) {
        m /= 1e3;
        v /= 1e3;
        i++;
    }
    /* the precision goes first, one decimal at a time; the unit never */
    for (int dec = i == 0 && v == floor(v) ? 0 : m < 10 ? 2 : m < 100 ? 1 : 0; dec >= 0; dec--) {
        if (i == 0)
            snprintf(buf, len, "%.*f%s", dec, v, unit);
        else
            snprintf(buf, len, "%.*f%c%s", dec, v, suffix[i], unit);
        if (ui_text_cols(buf) <= max_cols)
            return 0;
    }
    return -1;
}

/* The parts of a job's line, most important last: the first ones go when
 * the line is too wide. */
enum { P_EPOCH, P_STEP, P_RATE, P_TIMES, P_PER_STEP, N_PARTS };

static void running_parts(const nn_snapshot *s, char part[N_PARTS][48])
{
    nn_job_times t;
    nn_job_times_of(s, &t);
    snprintf(part[P_EPOCH], 48, "ep %d/%d", s->epoch, s->epochs);
    snprintf(part[P_STEP], 48, "%ld/%ld", s->step, s->total_steps);
    if (!s->has_rate || ui_fmt_quantity(s->samples_per_s, "/s", 47, part[P_RATE], 48) != 0)
        snprintf(part[P_RATE], 48, "-/s");
    nn_format_elapsed_remaining(&t, part[P_TIMES], 48);
    nn_format_per_step(t.has_per_step ? t.per_step_s : NAN, part[P_PER_STEP], 48);
}

/* The parts not dropped, two spaces apart; its columns. */
static int join_parts(char part[N_PARTS][48], int from, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int p = from; p < N_PARTS && at < len; p++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "  " : "", part[p]);
    return ui_text_cols(buf);
}

void ui_fmt_job_status_fit(const nn_snapshot *s, int width, char *buf, size_t len)
{
    char part[N_PARTS][48], rate[48];
    ui_fmt_job_status(s, buf, len, 0);
    if (ui_text_cols(buf) <= width)
        return;
    ui_fmt_job_status(s, buf, len, 1);
    if (ui_text_cols(buf) <= width)
        return;
    if (nn_job_state_ended(s->state)) {      /* the headline alone, then its rate if it fits */
        nn_format_headline(s, buf, len);
        char *paren = strstr(buf, " (");
        if (ui_text_cols(buf) > width && paren) {   /* "done in 00:15  785us/step": no bracket left open */
            nn_job_times t;
            char per[24];
            nn_job_times_of(s, &t);
            nn_format_per_step(t.has_per_step ? t.per_step_s : NAN, per, sizeof per);
            *paren = '\0';
            size_t at = strlen(buf);
            if (t.has_per_step && (int)(at + 2 + strlen(per)) <= width)
                snprintf(buf + at, len - at, "  %s", per);
        }
        size_t n = strlen(buf);
        if (s->has_rate && ui_fmt_quantity(s->samples_per_s, "/s", width - ui_text_cols(buf) - 2, rate,
                                           sizeof rate) == 0 && n + strlen(rate) + 3 < len)
            snprintf(buf + n, len - n, "  %s", rate);
        return;
    }
    if (s->state == NN_JOB_PREPARING)
        snprintf(buf, len, "preparing");   /* what it prepares is said where there is room */
    if (s->state != NN_JOB_RUNNING && s->state != NN_JOB_PAUSED)
        return;                      /* a state's words: cut by the panel, not here */
    running_parts(s, part);
    for (int from = P_STEP; from < P_PER_STEP; from++)
        if (join_parts(part, from, buf, len) <= width)
            return;
    join_parts(part, P_PER_STEP, buf, len);
}

int ui_fit_words(const char *text, int cols, char *buf, size_t len)
{
    const char *next;
    int cut;
    if (len == 0)
        return 0;
    if (ui_text_cols(text) <= cols) {
        snprintf(buf, len, "%s", text);
        return (int)strlen(buf);
    }
    /* the wrap's first row is the words that fit; a word cut only when the first does not */
    cut = ui_wrap_next(text, cols > 0 ? cols : 0, &next);
    while (cut > 0 && strchr(",;:( ", text[cut - 1]))   /* no dangling "loss," or "x (" */
        cut--;
    snprintf(buf, len, "%.*s", cut, text);
    return (int)strlen(buf);
}

int ui_fit_key_groups(const char *keys, int cols, char *buf, size_t len)
{
    const char *group[24];
    int glen[24], n = 0, tail = 0, used = 0;
    size_t at = 0;
    if (len == 0)
        return 0;
    for (const char *p = keys; *p && n < 24;) {   /* groups are two spaces apart */
        const char *end = strstr(p, "  ");
        group[n] = p;
        glen[n] = end ? (int)(end - p) : (int)strlen(p);
        n++;
        p = end ? end + 2 : p + strlen(p);
        while (*p == ' ')
            p++;
    }
    int keep_last = n > 2 ? 2 : n;   /* "? help  q quit" stay, whatever goes */
    for (int i = n - keep_last; i < n; i++)
        tail += glen[i] + 2;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        int last = i >= n - keep_last;
        if (!last && used + glen[i] + 2 + tail > cols + 2)
            continue;                /* a group that does not fit goes whole */
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%.*s", at ? "  " : "", glen[i], group[i]);
        used += glen[i] + 2;
        if (at >= len)
            break;
    }
    return (int)strlen(buf);
}

static int name_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

int ui_sanitize_name(const char *in, char *out, size_t len)
{
    size_t n = 0, cap = len > 49 ? 48 : len ? len - 1 : 0;
    if (len == 0)
        return -1;
    for (const char *p = in; *p && n < cap; p++) {
        char c = name_char_ok(*p) ? *p : '-';
        if ((c == '-' || c == '.') && n == 0)
            continue;                /* no hidden files, no "-name" options */
        if (c == '-' && n > 0 && out[n - 1] == '-')
            continue;
        out[n++] = c;
    }
    out[n] = '\0';
    if (n >= 4 && strcmp(out + n - 4, ".ini") == 0)
        out[n -= 4] = '\0';
    while (n > 0 && (out[n - 1] == '-' || out[n - 1] == '.'))
        out[--n] = '\0';
    return n > 0 ? 0 : -1;
}

/* ---- wrapping ------------------------------------------------------------------------ */

/* The units a number keeps on its row ("1098 us/step", "24.0 GB", "52 s"). */
static int is_unit(const char *tok, int len)
{
    static const char *const units[] = { "us", "ms", "s", "min", "h", "us/step", "ms/step", "s/step", "samples/s",
                                         "rows/s", "GFLOP/s", "GB/s", "B", "KB", "MB", "GB", "TB", "KiB", "MiB",
                                         "GiB", "%", "x", "steps", "rows", "ops", "epochs", "threads", "cores" };
    while (len > 0 && strchr(",.;:)", tok[len - 1]))   /* "52 s," and "123 s)" too */
        len--;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if ((int)strlen(units[i]) == len && strncmp(tok, units[i], (size_t)len) == 0)
            return 1;
    return 0;
}

static int is_number(const char *tok, int len)
{
    int digits = 0;
    for (int i = 0; i < len; i++) {
        if (tok[i] >= '0' && tok[i] <= '9')
            digits++;
        else if (!strchr("~.-+,kMG", tok[i]) && !(i == 0 && tok[i] == '('))
            return 0;
    }
    return digits > 0;
}

static int is_word(const char *tok, int len)
{
    for (int i = 0; i < len; i++)
        if (!((tok[i] >= 'a' && tok[i] <= 'z') || (tok[i] >= 'A' && tok[i] <= 'Z')))
            return 0;
    return len > 0;
}

/* How well a row may end at the space at text[i]: 2 anywhere words part;
 * 1 between a word and the number it names ("batch | 64", "work | 1069");
 * 0 between a number and its unit ("1098 | us/step"). */
static int break_quality(const char *text, int i)
{
    int a = i, b = i;
    while (a > 0 && text[a - 1] != ' ')
        a--;
    while (text[b] == ' ')
        b++;
    int e = b;
    while (text[e] && text[e] != ' ')
        e++;
    if (is_number(text + a, i - a) && is_unit(text + b, e - b))
        return 0;
    return is_word(text + a, i - a) && e > b && text[b] >= '0' && text[b] <= '9' ? 1 : 2;
}

/* Bytes of the first cols characters of text (UTF-8: one column each). */
static int bytes_of_cols(const char *text, int cols)
{
    int i = 0, c = 0;
    for (; text[i]; i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80 && c++ == cols)
            break;
    return i;
}

int ui_wrap_next(const char *text, int width, const char **next)
{
    int len = (int)strlen(text), cut = len;
    if (width < 1 || len == 0) {
        *next = text + len;
        return 0;
    }
    int fit = bytes_of_cols(text, width);
    if (fit < len) {
        int best = -1;               /* the last space that fits, of the best quality */
        cut = 0;
        for (int i = fit; i > 0 && best < 2; i--)
            if (text[i] == ' ' && text[i - 1] != ' ') {
                int q = break_quality(text, i);
                if (q > best) {
                    best = q;
                    cut = i;
                }
            }
        for (int i = fit; !cut && i > 1; i--)
            if (text[i - 1] == '/' && text[i - 2] != ' ')
                cut = i;             /* a path longer than the row: after a '/', its names whole */
        if (!cut)
            cut = fit;               /* a word longer than the row is cut */
    }
    const char *p = text + cut;
    while (*p == ' ')
        p++;
    *next = p;
    return cut;
}

/* ui_fit_parts: see format.h. */
void ui_fit_parts(const char *t, int cols, char *buf, size_t len)
{
    size_t best = 0;
    if (ui_text_cols(t) <= cols) {
        snprintf(buf, len, "%s", t);
        return;
    }
    for (size_t i = 1; t[i] && i + 1 < len; i++) {
        if (!((t[i] == ',' && t[i + 1] == ' ') || (t[i] == ' ' && t[i + 1] == ' ')))
            continue;
        snprintf(buf, i + 1, "%s", t);   /* the parts before this separator */
        if (ui_text_cols(buf) > cols)
            break;
        best = i;
    }
    if (best > 0)
        snprintf(buf, best + 1, "%s", t);
    else
        ui_fit_words(t, cols, buf, len);
}

/* ui_fit_path: see format.h. */
int ui_fit_path(const char *text, int cols, int utf8, char *buf, size_t len)
{
    const char *dots = utf8 ? "\u2026" : "...", *best = NULL;
    size_t best_n = 0;
    snprintf(buf, len, "%s", text);
    if (ui_text_cols(text) <= cols)
        return 0;
    for (const char *p = text; *p;) {         /* the longest word with a '/' */
        size_t n = strcspn(p, " ");
        if (n > best_n && memchr(p, '/', n)) {
            best = p;
            best_n = n;
        }
        p += n;
        p += strspn(p, " ");
    }
    if (!best)
        return -1;
    int over = ui_text_cols(text) - cols + ui_text_cols(dots);
    /* drop the path's head up to a '/' past the columns too many; the last
     * '/' at most, so that the file name stays whole */
    const char *last = best + best_n, *cut = NULL;
    while (last > best && last[-1] != '/')
        last--;
    for (const char *q = best; q < last; q++)
        if (*q == '/' && q > best && (int)(q - best) >= over) {
            cut = q;
            break;
        }
    if (!cut && last - 1 > best)
        cut = last - 1;              /* even the file name alone is over: the shortest */
    if (!cut)
        return -1;
    snprintf(buf, len, "%.*s%s%s", (int)(best - text), text, dots, cut);
    return ui_text_cols(buf) <= cols ? 0 : -1;
}

/* Replaces the first `from` in buf with `to`, in place. */
static void swap_phrase(char *buf, size_t len, const char *from, const char *to)
{
    char *at = strstr(buf, from);
    char tail[256];
    if (!at)
        return;
    snprintf(tail, sizeof tail, "%s", at + strlen(from));
    snprintf(at, len - (size_t)(at - buf), "%s%s", to, tail);
}

/* ui_fit_value: see format.h. */
void ui_fit_value(const char *value, int cols, int utf8, char *buf, size_t len)
{
    static const char *const shorter[][2] = {
        { " (predicts a GPU not here)", " (predicted)" },
        { " (predicted)", " (pred.)" },
        { "(default: Space to type one)", "default: Space sets" },
    };
    char path[256];
    snprintf(buf, len, "%s", value);
    for (size_t i = 0; i < sizeof shorter / sizeof shorter[0] && ui_text_cols(buf) > cols; i++)
        swap_phrase(buf, len, shorter[i][0], shorter[i][1]);
    if (ui_text_cols(buf) > cols) {  /* the shortest it has, when even that is over */
        ui_fit_path(buf, cols, utf8, path, sizeof path);
        snprintf(buf, len, "%s", path);
    }
}

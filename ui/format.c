/* ui/format.c - the lab's text as pure functions; see format.h. */
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

int ui_wrap_next(const char *text, int width, const char **next)
{
    int len = (int)strlen(text), cut = len;
    if (width < 1 || len == 0) {
        *next = text + len;
        return 0;
    }
    if (len > width) {
        cut = width;
        while (cut > 0 && text[cut] != ' ')   /* break at the last space that fits */
            cut--;
        if (cut == 0)
            cut = width;
    }
    const char *p = text + cut;
    while (*p == ' ')
        p++;
    *next = p;
    return cut;
}

/* src/core/ini_load.c - one INI file of any kind nnlab reads (a preset, a GPU
 * profile, a lesson) read, checked under the caps and parsed by iniparser,
 * with iniparser's messages kept and said as one line naming the file. See
 * nn_ini_load in preset_file.h. */
#include "preset_file.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* iniparser reports through one process-wide callback. Ours keeps the first
 * message of the current load in a per-thread buffer: nothing may reach the
 * terminal (curses owns it), and two threads may load at once. */
static _Thread_local char ini_message[NN_ERR_LEN];

static int capture_ini_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int capture_ini_error(const char *fmt, ...)
{
    if (ini_message[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ini_message, sizeof ini_message, fmt, ap);
        va_end(ap);
    }
    return 0;
}

/* iniparser says "iniparser: syntax error in FILE (LINE):\n-> TEXT\n" or
 * "iniparser: input line too long in FILE (LINE)"; we say "FILE: syntax
 * error: line LINE: TEXT" (or "line too long"), "not a WHAT" before it for a
 * kind other than a preset (`--gpu-profile /etc/passwd` printed iniparser's
 * own words and a blank line). */
static int syntax_error(const char *path, const char *what, char *err, size_t err_len)
{
    const char *m = ini_message, *arrow = strstr(m, "\n-> ");
    const char *words = strncmp(m, "iniparser: ", 11) == 0 ? m + 11 : m;
    size_t first = strcspn(m, "\n");        /* length of the first line */
    long line = 0;
    char not_a[64] = "";
    if (!m[0])
        return nn_errorf(err, err_len, "%s: cannot read: not an INI file", path);
    if (!strstr(m, "syntax error") && !strstr(m, "too long"))
        return nn_errorf(err, err_len, "%s: cannot read: %.*s", path, (int)strcspn(words, "\n"), words);
    for (size_t i = first; i-- > 0;)        /* the last '(' of the line: the path may hold one */
        if (m[i] == '(') {
            line = strtol(m + i + 1, NULL, 10);
            break;
        }
    if (strcmp(what, "preset") != 0)
        snprintf(not_a, sizeof not_a, " not a %s:", what);
    if (!arrow)
        return nn_errorf(err, err_len, "%s:%s syntax error: line %ld: line too long", path, not_a, line);
    return nn_errorf(err, err_len, "%s:%s syntax error: line %ld: %.*s", path, not_a, line,
                     (int)strcspn(arrow + 4, "\n"), arrow + 4);
}

int nn_ini_load(const char *path, const char *what, dictionary **d, char *err, size_t err_len)
{
    char *text;
    size_t len;
    *d = NULL;
    if (nn_ini_file_read(path, what, &text, &len, err, err_len) != 0)
        return -1;
    int scan = nn_ini_text_scan(path, what, text, err, err_len);
    if (scan < 0) {                      /* a cap passed: err says which */
        free(text);
        return -1;
    }
    ini_message[0] = '\0';
    iniparser_set_error_callback(capture_ini_error);
    errno = 0;
    *d = nn_preset_text_parse(text, len);
    int e = errno;
    free(text);
    if (*d && !ini_message[0] && scan == 0)
        return 0;
    if (*d)
        iniparser_freedict(*d);
    *d = NULL;
    if (!ini_message[0] && scan == 1)    /* parsed, but a key or section given twice (err) */
        return -1;
    if (!ini_message[0] && e)
        return nn_errorf(err, err_len, "%s: cannot read: %s", path, strerror(e));
    return syntax_error(path, what, err, err_len);
}

/* src/core/ini_write.c - see ini_write.h. */
#include "ini_write.h"

#include <stdarg.h>
#include <string.h>

void nn_ini_put(nn_ini_writer *w, const char *fmt, ...)
{
    va_list ap;
    if (w->failed)
        return;
    va_start(ap, fmt);
    if (vfprintf(w->f, fmt, ap) < 0)
        w->failed = 1;
    va_end(ap);
}

void nn_ini_put_text(nn_ini_writer *w, const char *key, const char *s)
{
    char q = strchr(s, '"') ? '\'' : '"';
    nn_ini_put(w, "%s = %c%s%c\n", key, q, s, q);
}

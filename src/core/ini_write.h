/* src/core/ini_write.h - writing an INI file nnlab reads back (a preset, a
 * lesson): printf to the file, the first failure kept so that a writer
 * checks once at the end (errno then says why), and a text value quoted. */
#ifndef NNLAB_INI_WRITE_H
#define NNLAB_INI_WRITE_H

#include <stdio.h>

typedef struct nn_ini_writer {
    FILE *f;
    int failed;                  /* a write failed; errno holds why */
} nn_ini_writer;

void nn_ini_put(nn_ini_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "KEY = "TEXT"": quoted so that ';', '#' and blanks survive iniparser, in
 * ' when the text holds a ". */
void nn_ini_put_text(nn_ini_writer *w, const char *key, const char *s);

#endif

/* src/analysis/model/export_json.c - a JSON string and a JSON number (see
 * nnlab/export.h), which the run's writers (export.c), the sweep's
 * (export_sweep.c) and the CLI print with; they call nothing of ours. */
#include "nnlab/export.h"

#include <math.h>
#include <stdio.h>

void nn_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

void nn_json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "null");
}

/* src/common/json_flat.h - reads one small JSON object whose values are
 * strings, numbers, true, false, null or objects of the same: what a helper
 * program prints on one line (tools/nnlab-torch-step.py), or nnlab's own
 * --json (a ranks' bench, src/jobs/ranks_run.c). An array is read as
 * strictly and left out of the fields. A nested object's fields are named
 * by their path, "error.message". Strings
 * are unescaped into UTF-8 (\uXXXX and surrogate pairs included); the
 * caller prints them through nn_safe(), as any text from outside. */
#ifndef NNLAB_JSON_FLAT_H
#define NNLAB_JSON_FLAT_H

#include <stddef.h>

#define NN_JSON_MAX_FIELDS 160
#define NN_JSON_KEY_LEN 64
#define NN_JSON_MAX_DEPTH 4

enum nn_json_type { NN_JSON_STRING, NN_JSON_NUMBER, NN_JSON_TRUE, NN_JSON_FALSE, NN_JSON_NULL };

typedef struct nn_json_field {
    char key[NN_JSON_KEY_LEN];   /* "torch", "error.message" */
    enum nn_json_type type;
    const char *text;            /* the unescaped string, or the number as written;
                                    into nn_json_flat.buf */
    double number;               /* NN_JSON_NUMBER only */
} nn_json_field;

typedef struct nn_json_flat {
    int n;
    nn_json_field f[NN_JSON_MAX_FIELDS];
    char *buf;                   /* the strings, owned */
} nn_json_flat;

/* Parses text (one object, blanks around it allowed): 0, or -1 with a
 * one-line reason in err (the offset where it stopped). Free with
 * nn_json_flat_free, also after a failure. */
int nn_json_flat_parse(const char *text, nn_json_flat *out, char *err, size_t err_len);
void nn_json_flat_free(nn_json_flat *j);

/* The field named key, or NULL. */
const nn_json_field *nn_json_flat_get(const nn_json_flat *j, const char *key);
/* Its string, or NULL when absent or not a string. */
const char *nn_json_flat_string(const nn_json_flat *j, const char *key);
/* Its number into *v: 0, or -1 when absent or not a number. */
int nn_json_flat_number(const nn_json_flat *j, const char *key, double *v);

#endif

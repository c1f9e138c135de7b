/* src/core/preset_values.h - the value rules of the preset format, shared by
 * the reader, the checker, the writer and the layer table: the limits, the
 * allowed ranges, strict parsing of raw INI text, checking a value already in
 * memory (a preset built by the lab), writing a value back, the one-line
 * message every rule reports through, and the names of the enumerated
 * settings. The bottom of the preset and layer files: preset_values.c calls
 * none of them. Private to src/core. */
#ifndef NNLAB_PRESET_VALUES_H
#define NNLAB_PRESET_VALUES_H

#include <math.h>
#include <stddef.h>

#include "nnlab/preset.h"

#define NN_MAX_DIM 1048576L       /* in, out, kernel, stride, padding, features, targets, batch */
#define NN_MAX_ROWS 2147483647L   /* random rows: the data module indexes rows with int */
#define NN_MAX_VALUES 2147483647L /* values per sample after any layer: backends index with int */
#define NN_MAX_LINE 1000          /* iniparser 4.1 rejects lines of 1023+ characters */
#define NN_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* An allowed interval; INFINITY as hi means "no upper bound". */
typedef struct nn_range {
    double lo, hi;
    unsigned char lo_open, hi_open;
} nn_range;

#define NN_CLOSED(lo, hi) { (lo), (hi), 0, 0 }
#define NN_AT_LEAST(lo) { (lo), INFINITY, 0, 1 }
#define NN_ABOVE(lo) { (lo), INFINITY, 1, 1 }
#define NN_UNIT_HALF_OPEN { 0, 1, 0, 1 }        /* [0, 1) */

/* How a numeric key is stored: int, long, float, a 0/1 int, an nn_shape; a
 * layer reference ("layer3" or "data": an int, N or NN_FROM_DATA, 0 when
 * absent) and two of them ("layer3, layer5": int[2]); a 0/1 int holding the
 * negation of a true/false key (linear's bias = false is no_bias = 1, so
 * that a spec zeroed in memory has its bias); an int index into
 * nn_init_names. */
enum nn_vtype {
    NN_V_INT, NN_V_LONG, NN_V_FLOAT, NN_V_BOOL, NN_V_SHAPE, NN_V_LAYER, NN_V_LAYERS,
    NN_V_NOT_BOOL, NN_V_INIT
};

/* Where messages go: "WHERE: [section] key = value: why". */
typedef struct nn_checker {
    const char *where;           /* the file, or "preset" for one built in memory */
    char *err;
    size_t err_len;
} nn_checker;

/* "WHERE: [section] key = value: why"; returns -1. */
int nn_key_error(const nn_checker *c, const char *section, const char *key,
                 const char *value, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* "1..100000", ">= 1", "> 0", "[0, 1)": the allowed values, for messages. */
void nn_range_format(nn_range r, int integral, char *buf, size_t len);

/* Parses raw text s into *dst; on error writes why (no file/section prefix). */
int nn_value_parse(enum nn_vtype t, const char *s, nn_range r, void *dst, char *why, size_t len);
/* The same rules for a value already in memory. */
int nn_value_check(enum nn_vtype t, const void *src, nn_range r, char *why, size_t len);
/* The text the writer stores; it reads back as the same value. */
void nn_value_format(enum nn_vtype t, const void *src, char *buf, size_t len);

/* Fills s from dims computed in long; -1 when the result has more than
 * NN_MAX_VALUES values (so every dim also fits an int). Unused dims stay 0 so
 * that specs compare with memcmp. */
int nn_shape_make(nn_shape *s, int rank, const long *d);

/* Indexed by the enums of preset.h. */
extern const char *const nn_data_names[3];
extern const char *const nn_loss_names[2];
extern const char *const nn_opt_names[2];
extern const char *const nn_device_names[3];
extern const char *const nn_init_names[2];       /* enum nn_layer_init */

/* "a, b or c" */
void nn_join_names(const char *const *names, int n, char *buf, size_t len);
/* The index of s in names, compared case-blind (keys are, so values too); -1 if absent. */
int nn_find_name(const char *const *names, int n, const char *s);

#endif

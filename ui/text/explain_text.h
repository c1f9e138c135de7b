/* ui/text/explain_text.h - the Explain panel's lines as pure functions of an
 * explanation and a measured step, for a given width and height. What the
 * explanation depends on, when it runs again and how a step is measured are
 * the analysis layer's (nnlab/observe.h), as for `nnlab explain`; this file
 * only words and fits them. No curses (tests/test_ui_text.c); ui/panels/explain_panel.c
 * draws the lines. */
#ifndef NNLAB_UI_EXPLAIN_TEXT_H
#define NNLAB_UI_EXPLAIN_TEXT_H

#include <stddef.h>

#include "nnlab/explain.h"
#include "nnlab/observe.h"
#include "nnlab/profile.h"

/* "ovh", "mem", "cmp" (letters 0) or "o", "m", "c" (letters 1). */
const char *ui_regime_short(nn_regime r, int one_letter);

/* ---- the panel's lines ----------------------------------------------------------- */

#define UI_TEXT_ROWS 160             /* a scrolled panel's whole text: the help, a layer list */
#define UI_TEXT_COLS 256

enum ui_text_style { UI_TS_NORMAL, UI_TS_BOLD, UI_TS_DIM, UI_TS_OK, UI_TS_ERROR };

typedef struct ui_text {
    int n;
    char line[UI_TEXT_ROWS][UI_TEXT_COLS];
    unsigned char style[UI_TEXT_ROWS];   /* enum ui_text_style */
} ui_text;

/* Appends one row (cut at UI_TEXT_COLS); returns 1, or 0 when t is full. */
int ui_text_addf(ui_text *t, int style, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Appends text wrapped to width over at most max_rows rows, the last ending
 * in "..." when text is left over; returns the rows added. */
int ui_text_wrap(ui_text *t, int style, int width, int max_rows, const char *text);

/* The rows text takes wrapped to width (uncapped). */
int ui_text_rows(int width, const char *text);

/* "copy 16  fwd 94  bwd 100  opt 31  sync 0.0" from the parts of a measured
 * step (and "graph N" for a replayed CUDA graph); "" when none was timed. */
void ui_fmt_phase_list(const nn_step_measure *m, char *buf, size_t len);

/* What the panel says beyond the explanation, every field optional (zero,
 * NULL): where the figures come from (measured here, or predicted for a
 * GPU profile when nothing was measured), the three ways of running a GPU
 * step, the write-up's whole job, a measured GPU step's profile prediction. */
typedef struct ui_explain_context {
    const char *label;           /* the head's device ("gpu nnlab graph"); NULL: the device */
    const char *predicted_for;   /* a profile's name: nothing was measured, all is predicted */
    const char *calibration;     /* nn_calibration_describe's line */
    const char *profile_name;    /* the profile of way_us and profile_us */
    int has_ways;
    double way_us[NN_GPU_WAYS];  /* the three ways' steps, predicted */
    double profile_us;           /* a measured GPU step: the profile's prediction of it */
    int has_writeup;
    nn_writeup writeup;          /* what the write-up measured, and its prediction */
    const nn_conv_algorithm_info *conv;   /* a GPU job's convolution algorithms (n_conv) */
    int n_conv;
} ui_explain_context;

/* The panel for one job or one sweep point, in width columns and at most
 * max_rows rows: a head (device, batch, regime), the prediction and its
 * split, the measured step (m NULL or nothing timed: none yet) with its
 * statistic and parts, then why and advice wrapped. When rows are short the
 * detail rows go first and why and advice share what is left. x NULL or
 * x->valid 0 with a calibration: waiting for the job. Returns the rows used. */
int ui_explain_format(const nn_explainer *x, const char *device, int batch, const nn_step_measure *m,
                      int width, int max_rows, ui_text *out);
/* The same with ctx's lines (ctx NULL: none): a predicted point's head and
 * figures say "predicted for NAME" and its measured row says nothing was;
 * the ways, the write-up, the profile's check and the calibration's age and
 * quality are detail rows, shown while there is room. max_rows
 * UI_TEXT_ROWS: everything, whole, the conclusion (head, figures, why,
 * advice) first and the details after, for a panel that scrolls. */
int ui_explain_format_in(const nn_explainer *x, const ui_explain_context *ctx, const char *device, int batch,
                         const nn_step_measure *m, int width, int max_rows, ui_text *out);

#endif

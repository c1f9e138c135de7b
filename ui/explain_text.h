/* ui/explain_text.h - the Explain panel's content as pure functions: what
 * an explanation depends on (read from a job's snapshot), a cache that runs
 * the cost model again only when that changes, and the panel's lines for a
 * given width and height. No curses (tests/test_ui_text.c); ui/explain_panel.c
 * draws the lines.
 *
 * The explanation mirrors `nnlab explain` (src/cli/cli_analyze.c) with one
 * difference: the switches are the ones the running job applied (its
 * snapshot), not the engine's defaults, and the launches are the backend's
 * own count once it has one. */
#ifndef NNLAB_UI_EXPLAIN_TEXT_H
#define NNLAB_UI_EXPLAIN_TEXT_H

#include "nnlab/engine.h"
#include "nnlab/explain.h"

/* What an explanation depends on besides the preset and the calibration. */
typedef struct ui_explain_inputs {
    char device[16];
    int batch;
    int host_memory;             /* the device computes in host memory (a CPU) */
    int data_on_device, sync_every_step;
    int pinned, graph;           /* the GPU switches as the engine applied them */
    int launches;                /* measured per step, rounded; 0: none, the model estimates */
    int graph_nodes;             /* with graph: nodes replayed per step, measured; 0: estimated */
} ui_explain_inputs;

/* One explanation and what it was made from. */
typedef struct ui_explain {
    int has_cal;
    nn_calibration cal;
    char no_cal_why[NN_ERR_LEN]; /* has_cal 0: why there is none */
    int valid;                   /* e explains `in` */
    ui_explain_inputs in;
    nn_explanation e;
    long recomputed;             /* times the model ran (the tests count them) */
} ui_explain;

/* Forgets the explanation; cal NULL: there is no calibration, for `why`. */
void ui_explain_reset(ui_explain *x, const nn_calibration *cal, const char *why);

/* The inputs a job's snapshot gives; -1 while it is still preparing (the
 * switches are not decided yet) or when it never started. A device backend
 * is the one that reports its switches (has_switches); the others compute in
 * host memory. */
int ui_explain_inputs_from(const nn_snapshot *s, ui_explain_inputs *in);

/* The options nn_explain takes for these inputs (zeroed first, so fields
 * added later keep their defaults). */
void ui_explain_options_from(const ui_explain_inputs *in, nn_explain_options *o);

/* Runs the model for in when it differs from what x explains (and there is
 * a calibration); returns 1 when it ran. */
int ui_explain_update(ui_explain *x, const nn_preset *p, const ui_explain_inputs *in);

/* "ovh", "mem", "cmp" (letters 0) or "o", "m", "c" (letters 1). */
const char *ui_regime_short(nn_regime r, int one_letter);

/* ---- the panel's lines ----------------------------------------------------------- */

#define UI_TEXT_ROWS 48
#define UI_TEXT_COLS 256

enum ui_text_style { UI_TS_NORMAL, UI_TS_BOLD, UI_TS_DIM, UI_TS_OK, UI_TS_ERROR };

typedef struct ui_text {
    int n;
    char line[UI_TEXT_ROWS][UI_TEXT_COLS];
    unsigned char style[UI_TEXT_ROWS];   /* enum ui_text_style */
} ui_text;

/* Appends text wrapped to width over at most max_rows rows, the last ending
 * in "..." when text is left over; returns the rows added. */
int ui_text_wrap(ui_text *t, int style, int width, int max_rows, const char *text);

/* The rows text takes wrapped to width (uncapped). */
int ui_text_rows(int width, const char *text);

/* "copy 16  fwd 94  bwd 100  opt 31" from the phases the snapshot timed
 * (and "graph N" for a replayed CUDA graph); "" when none was timed. */
void ui_fmt_phase_list(const nn_snapshot *s, char *buf, size_t len);

/* The panel for one job or one sweep point, in width columns and at most
 * max_rows rows: a head (device, batch, regime), the prediction and its
 * split, the measurement (measured_us <= 0: none yet; phases may be ""),
 * then why and advice wrapped. When rows are short the detail rows go first
 * and why and advice share what is left. x NULL or x->valid 0 with a
 * calibration: waiting for the job. Returns the rows used. */
int ui_explain_format(const ui_explain *x, const char *device, int batch, double measured_us, const char *phases,
                      int width, int max_rows, ui_text *out);

#endif

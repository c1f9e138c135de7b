/* ui/text/format.h - the lab's text, as pure functions: numbers with SI suffixes,
 * durations, progress and phase bars, the job status line, and the preset
 * name sanitiser. No curses (tests/test_ui_text.c). */
#ifndef NNLAB_UI_FORMAT_H
#define NNLAB_UI_FORMAT_H

#include <stddef.h>

#include "nnlab/engine.h"

/* 950 -> "950", 61820 -> "61.8k", 1.5e6 -> "1.5M", 0.25 -> "0.25". */
void ui_fmt_si(double v, char *buf, size_t len);

/* 7 -> "0:07", 723 -> "12:03", 3723 -> "1:02:03"; negative or not finite -> "--:--". */
void ui_fmt_duration(double s, char *buf, size_t len);

/* A bar exactly `width` columns wide filled to frac (clamped to [0, 1]):
 * UTF-8 full blocks with an eighth-block edge on a light-shade track, or
 * '#' on '-'. Returns the bytes written (buf holds at most len-1). */
int ui_bar_text(char *buf, size_t len, int width, double frac, int utf8);

/* Splits `width` columns among n parts in proportion to us[] by the largest
 * remainder (the columns add up to width unless every part is 0).
 * Returns the columns given out. */
int ui_phase_split(const double *us, int n, int width, int *cols);

/* "epoch 1/3  step 845/5625  61.8k samples/s  00:18<00:12  28ms/step"
 * (compact: "ep 1/3  845/5625  61.8k/s  00:18<00:12 28ms/step"): tqdm's
 * elapsed<remaining and Keras's time per step, as nnlab/progress.h works
 * them out for the CLI too. An ended job's headline is its time: "done in
 * 00:52 (52s 28ms/step)  61.8k samples/s". Else the state ("preparing",
 * "failed: ..."). */
void ui_fmt_job_status(const nn_snapshot *s, char *buf, size_t len, int compact);

/* The same in at most width columns: the parts that matter least go first
 * (the epoch, the rate, the step count), each part whole, so that a value
 * never loses its unit ("6ms/step", never "6m"). */
void ui_fmt_job_status_fit(const nn_snapshot *s, int width, char *buf, size_t len);

/* A value with its unit in at most max_cols columns: SI-prefixed, its
 * decimals dropped until it fits (61834 "/s": "61.8k/s", then "62k/s";
 * 3.14159 "ms": "3.14ms", "3.1ms", "3ms"), the unit never cut. 0, or -1
 * when even that does not fit (buf then holds the shortest). */
int ui_fmt_quantity(double v, const char *unit, int max_cols, char *buf, size_t len);

/* text in at most cols columns, cut between words ("loss, training
 * smoothed (EMA 0.6)" in 20: "loss, training"), never after a comma or an
 * opening bracket; a first word longer than cols is cut. Returns the bytes. */
int ui_fit_words(const char *text, int cols, char *buf, size_t len);

/* A title in at most cols columns: whole parts (split at ", " and at two
 * spaces: "..., batch 32, loss every 500 steps  data: ...") while they fit,
 * never "loss ever"; a first part too long is cut between words
 * (ui_fit_words). */
void ui_fit_parts(const char *text, int cols, char *buf, size_t len);

/* A status row's keys ("p pause  c cancel  ...  ? help  q quit", groups
 * two spaces apart) in at most cols columns: a group that does not fit is
 * left out whole, never cut, and the last two (help, quit) always stay.
 * Returns the bytes. */
int ui_fit_key_groups(const char *keys, int cols, char *buf, size_t len);

/* A path in text (its longest word holding a '/') shortened at its head,
 * so that text fits in cols columns: whole directories dropped first
 * ("exported .../exports/run-1.{csv,json,svg}"), the file name kept whole,
 * "\u2026" for what went when utf8, else "...". 0; -1 when text has no
 * such path (buf holds text) or even its file name alone does not fit (buf
 * holds that shortest form). */
int ui_fit_path(const char *text, int cols, int utf8, char *buf, size_t len);

/* A setting's value in at most cols columns, said shorter rather than cut:
 * its longer phrases swapped for their short forms while it does not fit
 * (" (predicts a GPU not here)": " (predicted)", then " (pred.)";
 * "(default: Space to type one)": "default: Space sets"), then a path
 * shortened at its head (ui_fit_path). buf may still be too long: the
 * caller's cut then takes whole words. */
void ui_fit_value(const char *value, int cols, int utf8, char *buf, size_t len);

/* The columns of UTF-8 text (one per character). */
int ui_text_cols(const char *s);

/* A name typed by the user made safe as a file stem: letters, digits, '.',
 * '_' and '-' kept; anything else becomes '-' (runs collapse); no leading
 * '.' or '-', no trailing '-' or '.', a typed ".ini" dropped; cut to len-1
 * and at most 48 characters. Returns 0, or -1 when nothing usable is left. */
int ui_sanitize_name(const char *in, char *out, size_t len);

/* One row of text wrapped at spaces to `width` columns (UTF-8: a column a
 * character): the bytes of the row that starts at text (the last space
 * that fits; in a longer word, after its last '/' that fits, so that a
 * path's names stay whole; else a hard cut at width), and in *next where
 * the following row starts (spaces skipped). A row never ends between a
 * number and its unit ("1098 | us/step") nor between a word and the number
 * it names ("batch | 64") while another space fits. 0 when text is empty or
 * width < 1. Every wrapped text in the lab (ui/draw.c, ui/text/explain_text.c)
 * breaks where this says: the one wrapping rule. */
int ui_wrap_next(const char *text, int width, const char **next);

#endif

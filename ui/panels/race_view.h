/* ui/panels/race_view.h - a run of several jobs on the run screen: the jobs'
 * labels and colours, the title of a race, the summary once every job
 * ended (the race of ways' verdicts, the framework pair first:
 * nnlab/race_ways.h; each job's time and the ratio of every pair:
 * nnlab/race.h). Drawn by ui/screens/dashboard.c and
 * ui/panels/run_chart.c. */
#ifndef NNLAB_UI_RACE_VIEW_H
#define NNLAB_UI_RACE_VIEW_H

#include <stddef.h>

#include "draw.h"
#include "lab_state.h"
#include "nnlab/race.h"
#include "nnlab/race_ways.h"

/* Job k's label: "gpu eager" in a race of a GPU's ways, else its device. */
const char *ui_race_label(const ui_run *r, int k);
/* The columns the job rows give the labels: the longest, at least 8. */
int ui_race_label_width(const ui_run *r);
/* Job k's colour: its loss curve and bar (val 0), its validation (val 1). */
enum ui_role ui_race_role(int k, int val);

/* The title of a run of several jobs: "nnlab - lenet: cpu nnlab vs gpu
 * eager vs gpu graph, one after the other, batch 4", or a race's cores. */
void ui_race_title(const ui_lab *lab, char *t, size_t len, const char *data);

/* The race of ways of a run against a GPU, measured or predicted
 * (nnlab/race_ways.h): the four lanes predicted from the lab's calibrations
 * and the GPU's own profile (one ships for it) or the settings' into *w,
 * which the run screen keeps: 1, or 0 when no GPU races. The summaries
 * below take it, NULL when none. */
int ui_race_ways_init(ui_lab *lab, nn_race_ways *w);
/* w with what r's jobs measured so far: nnlab's CPU step and its fastest
 * GPU way that finished replace their predictions. */
void ui_race_ways_now(const ui_run *r, const nn_race_ways *w, nn_race_ways *out);

/* The rows the summary takes: the ways' verdicts (the framework pair
 * first), then, for several jobs measured, a title, a row per job and two
 * rows per pair. */
int ui_race_summary_rows(const ui_lab *lab, const nn_race_ways *w);
/* The summary from row y of the side panel's inside. */
void ui_race_summary_draw(ui_lab *lab, const nn_race_ways *w, ui_rect in, int y);

/* A short panel's summary: the two verdicts alone (four rows), or without
 * ways a title and one row a pair with the jobs' short names ("graph 1.12x
 * eager"). Its rows, and the drawing. */
int ui_race_summary_rows_compact(const ui_lab *lab, const nn_race_ways *w);
void ui_race_summary_draw_compact(ui_lab *lab, const nn_race_ways *w, ui_rect in, int y);

#endif

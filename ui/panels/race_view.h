/* ui/panels/race_view.h - a run of several jobs on the run screen: the jobs'
 * labels and colours, the title of a race, the summary once every job
 * ended (each job's time, the ratio of every pair and the framework way
 * predicted on top: nnlab/race.h). Drawn by ui/screens/dashboard.c and
 * ui/panels/run_chart.c. */
#ifndef NNLAB_UI_RACE_VIEW_H
#define NNLAB_UI_RACE_VIEW_H

#include <stddef.h>

#include "ui.h"
#include "nnlab/race.h"

/* Job k's label: "gpu eager" in a race of a GPU's ways, else its device. */
const char *ui_race_label(const ui_run *r, int k);
/* The columns the job rows give the labels: the longest, at least 8. */
int ui_race_label_width(const ui_run *r);
/* Job k's colour: its loss curve and bar (val 0), its validation (val 1). */
enum ui_role ui_race_role(int k, int val);

/* The title of a run of several jobs: "nnlab - lenet: cpu nnlab vs gpu
 * eager vs gpu graph, one after the other, batch 4", or a race's cores. */
void ui_race_title(const ui_lab *lab, char *t, size_t len, const char *data);

/* The framework way of a race with a GPU, predicted from the lab's
 * calibrations and the settings' GPU profile (nn_race_framework_of) into
 * *fw, which the run screen keeps for the summary: 1, or 0 when there is
 * none (no GPU racing). The summaries below take it, NULL when none. */
int ui_race_framework_init(ui_lab *lab, nn_race_framework *fw);

/* The rows the summary takes: a title, a row per job, a row per pair, the
 * framework line. */
int ui_race_summary_rows(const ui_lab *lab, const nn_race_framework *fw);
/* The summary from row y of the side panel's inside. */
void ui_race_summary_draw(ui_lab *lab, const nn_race_framework *fw, ui_rect in, int y);

/* A short panel's summary (three jobs at 80x24 leave 7 rows): a title, one
 * row a pair with the jobs' short names ("graph 1.12x eager", "eager 41.8x
 * cpu"), the framework line in what is left. Its rows, and the drawing. */
int ui_race_summary_rows_compact(const ui_lab *lab, const nn_race_framework *fw);
void ui_race_summary_draw_compact(ui_lab *lab, const nn_race_framework *fw, ui_rect in, int y);

#endif

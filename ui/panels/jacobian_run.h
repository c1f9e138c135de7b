/* ui/panels/jacobian_run.h - what the run screen does differently for a Jacobian
 * job: its own row under the progress bar (method, val, lanes, FLOPs, the
 * waste, the prediction) instead of training's phases, its own keys on the
 * status row (no log scale, no smoothing: there is no loss), `x` writing the
 * Jacobian's own CSV and JSON (the CLI's writer, nn_jac_export_*), and the
 * status row ending every cancel. */
#ifndef NNLAB_UI_JACOBIAN_RUN_H
#define NNLAB_UI_JACOBIAN_RUN_H

#include "lab_state.h"
#include "screens/dashboard.h"

/* The row under a Jacobian job's progress bar. */
void ui_jacobian_job_line(ui_lab *lab, const ui_run_job *j, int y, int x, int w);
/* The status row's keys of a Jacobian run, running or ended. */
const char *ui_jacobian_keys(int running);
/* 1 when key ch means nothing for a Jacobian run (l, s): said so. */
int ui_jacobian_key_unused(ui_lab *lab, int ch);
/* `x`: the run's CSV and JSON, the paths on the status row. */
void ui_jacobian_export(ui_lab *lab, ui_dashboard_state *ds);
/* After a poll: once a cancelled run has ended, "cancelling..." becomes
 * what happened ("cancelled after ..."). Any run, not only a Jacobian. */
void ui_run_tell_cancel_end(ui_lab *lab);

#endif

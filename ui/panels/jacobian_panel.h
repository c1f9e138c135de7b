/* ui/panels/jacobian_panel.h - the run screen of a Jacobian job: in the
 * chart's place the rows of J done, the time, the FLOPs and their share on
 * J's zero blocks, and the predicted val sweep with where the GPU overtakes
 * the CPU per method; beside it each method's FLOPs; the job row in rows of
 * J; Explain naming the waste and the method that removes it. The figures
 * come from nnlab/jacobian.h (one home); this file only draws them. */
#ifndef NNLAB_UI_JACOBIAN_PANEL_H
#define NNLAB_UI_JACOBIAN_PANEL_H

#include "lab_state.h"
#include "nnlab/jacobian.h"

/* 1 when the dashboard's run trains nothing (nn_job_traits): a Jacobian job,
 * whose panels these are. */
int ui_jacobian_run(const ui_lab *lab);

/* What the panels keep between frames, in the run screen's state: the
 * predicted val sweep of the last network asked, and the rows of a panel. */
typedef struct ui_jacobian_kept {
    int have;                        /* sweep is shape's */
    nn_jac_shape shape;
    nn_jac_sweep sweep;
    ui_text text;
} ui_jacobian_kept;

/* "rows 31.2k/40k  7.2k rows/s  4.3 s  ETA 1 s" */
void ui_jacobian_status(const nn_snapshot *s, char *buf, size_t len);
/* "nnlab - mlp-jacobian on cpu: Jacobian by rows at val 100" */
void ui_jacobian_title(const ui_lab *lab, char *buf, size_t len);
void ui_jacobian_draw_main(ui_lab *lab, ui_jacobian_kept *jk, ui_rect box);
void ui_jacobian_draw_side(ui_lab *lab, ui_rect box);
void ui_jacobian_draw_explain(ui_lab *lab, ui_jacobian_kept *jk, ui_rect box, int replaces);
/* The predicted val sweep of network s (kept in jk for the last one): 0,
 * or -1 with why (the CPU not calibrated, no GPU figures). */
int ui_jacobian_sweep(const ui_lab *lab, ui_jacobian_kept *jk, const nn_jac_shape *s, const nn_jac_sweep **out,
                      const char **why);

#endif

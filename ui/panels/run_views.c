/* ui/panels/run_views.c - the run screen's views, by nn_job_view: the one
 * place in the lab that maps what a job is to how it is shown. */
#include "run_view.h"

/* A calibration never reaches the run screen (the calibration dialog,
 * ui/panels/calib_dialog.c, draws its progress): the steps' view stands in. */
static const ui_run_view *const views[NN_VIEW_COUNT] = {
    [NN_VIEW_STEPS] = &ui_steps_view,
    [NN_VIEW_JACOBIAN] = &ui_jacobian_view,
    [NN_VIEW_CALIBRATION] = &ui_steps_view,
};

const ui_run_view *ui_run_view_of(const ui_lab *lab)
{
    enum nn_job_view v = nn_job_traits_of(lab->run.cfg.kind)->view;
    return v >= 0 && v < NN_VIEW_COUNT && views[v] ? views[v] : &ui_steps_view;
}

/* ui/panels/lesson_step.c - a lesson's steps run in the lab; see
 * lesson_step.h. A race or sweep step becomes the lab's settings (the
 * step's preset selected, its batch, the CPU beside the GPU, the GPU's way
 * and switches, PyTorch where the step asks) and runs on the run or sweep
 * screen as any race or sweep does; back from it, its result is read from
 * the run's lanes (ui_dashboard_ways) or the sweep (lab->sweep) by the
 * report (nn_lesson_race_result, nn_lesson_sweep_result). Explain, a
 * Jacobian step and a ranks step price at once from the lab's calibrations and the GPU
 * profile, as `nnlab lesson` does. The GPU profile is the settings' (the
 * step's when none was picked), as --gpu-profile is on the CLI. */
#include "panels/lesson_step.h"

#include <stdio.h>
#include <string.h>

#include "draw.h"
#include "nnlab/export.h"
#include "nnlab/observe.h"
#include "nnlab/torch_step.h"
#include "panels/calib_dialog.h"
#include "panels/race_predicted.h"
#include "screens/dashboard.h"
#include "screens/setup_screen.h"
#include "util.h"

/* ---- what a step needs --------------------------------------------------------------------- */

/* The folder of the lesson's handout and charts: the export folder's
 * NAME-lesson. 0, or -1 with why. */
static int handout_dir(const ui_lesson_run *lr, char *dir, size_t len, char *err, size_t err_len)
{
    char base[NN_PATH_LEN];
    if (nn_export_dir(base, sizeof base) != 0)
        return nn_errorf(err, err_len, "no export folder (neither XDG_DATA_HOME nor HOME is set)");
    if ((size_t)snprintf(dir, len, "%s/%s-lesson", base, lr->lesson.name) >= len)
        return nn_errorf(err, err_len, "%s: the folder's name is too long", base);
    return 0;
}

static int load_preset(const char *name, nn_preset *p, char *path, size_t path_len, char *err, size_t err_len)
{
    if (nn_preset_find(name, path, path_len, err, err_len) != 0 || nn_preset_load(path, p, err, err_len) != 0)
        return -1;
    return nn_preset_check(p, path, err, err_len);
}

/* The profile step s's GPU figures are predicted for: the settings' when
 * one was picked, else the step's, else the default. */
static const char *profile_name(const ui_lesson_run *lr, const nn_lesson_step *s)
{
    const char *picked = lr->user_set.gpu_profile;
    return picked[0] ? picked : s->gpu_profile[0] ? s->gpu_profile : nn_profile_default_name();
}

/* Not run, and why: the step is done with nothing to show but that. */
static void not_run(ui_lesson_run *lr, int k, const char *what, const char *why)
{
    nn_lesson_result *r = &lr->result[k];
    memset(r, 0, sizeof *r);
    r->writeup = -1;
    nn_errorf(r->why, sizeof r->why, "%s%s", what, why);   /* a long one cut in its middle */
    lr->state[k] = UI_STEP_DONE;
}

/* Device dev's calibration from the lab's store; without one, its
 * measurement starts (the lab's first-use dialog) and the step waits:
 * NULL then, with lr->calibrating set, or NULL with why when it failed. */
static const nn_calibration *calibration(ui_lab *lab, ui_lesson_run *lr, const char *dev, const char **why)
{
    const nn_calibration *cal = nn_cal_store_get(&lab->cals, dev, why);
    if (cal)
        return cal;
    (void)ui_calibrate_then(lab, UI_ACT_HANDLED, &dev, 1);
    lr->calibrating = ui_calibrating_now(lab);
    return NULL;
}

/* ---- the steps priced at once ---------------------------------------------------------------- */

/* Explain: the GPU's step from the profile when no GPU is here, else from
 * the device's calibration. 0 done, 1 waiting for a calibration. */
static int run_explain(ui_lab *lab, ui_lesson_run *lr, int k, const nn_preset *p, const nn_gpu_profile *prof)
{
    const nn_lesson_step *s = &lr->lesson.step[k];
    nn_calibration own;
    const nn_calibration *cal = &own;
    const char *why = "";
    char source[NN_TEXT_LEN];
    int gpu = nn_device_kind_of(s->device).gpu;
    if (gpu && !ui_gpu_here(lab, s->device)) {
        nn_profile_calibration(prof, &own);
        snprintf(source, sizeof source, "predicted for %s", prof->name);
    } else {
        if (!(cal = calibration(lab, lr, gpu ? "gpu" : "cpu", &why))) {
            if (!lr->calibrating)
                not_run(lr, k, "no calibration of the device: ", why);
            return lr->calibrating;
        }
        snprintf(source, sizeof source, "predicted from this %s's calibration", gpu ? "GPU" : "CPU");
    }
    nn_lesson_explain_result(s, p, cal, prof, source, &lr->result[k]);
    return 0;
}

/* A Jacobian at the step's val: the CPU from its calibration, the GPU from
 * its own or the profile's. 0 done, 1 waiting for a calibration. */
static int run_jacobian(ui_lab *lab, ui_lesson_run *lr, int k, const nn_preset *p, const nn_gpu_profile *prof)
{
    const nn_lesson_step *s = &lr->lesson.step[k];
    nn_calibration profile_gpu;
    const nn_calibration *cpu, *gpu = &profile_gpu;
    const char *why = "";
    char source[NN_TEXT_LEN];
    int here = ui_gpu_here(lab, "gpu") != NULL;
    if (!(cpu = calibration(lab, lr, "cpu", &why)) || (here && !(gpu = calibration(lab, lr, "gpu", &why)))) {
        if (!lr->calibrating)
            not_run(lr, k, "no calibration of the device: ", why);
        return lr->calibrating;
    }
    if (here) {
        snprintf(source, sizeof source, "predicted from this GPU's calibration");
    } else {
        nn_profile_calibration(prof, &profile_gpu);
        snprintf(source, sizeof source, "predicted for %s", prof->name);
    }
    nn_lesson_jacobian_result(s, p, cpu, gpu, prof->framework_op_us, nn_profile_framework_gpu_us(prof), source,
                              &lr->result[k]);
    return 0;
}

/* N ranks against one: the one rank priced as an explain step is, over the
 * step's link. 0 done, 1 waiting for a calibration. */
static int run_ranks(ui_lab *lab, ui_lesson_run *lr, int k, const nn_preset *p, const nn_gpu_profile *prof)
{
    const nn_lesson_step *s = &lr->lesson.step[k];
    nn_calibration own;
    const nn_calibration *cal = &own;
    const char *why = "";
    char source[NN_TEXT_LEN], err[NN_ERR_LEN];
    nn_link link;
    int gpu = nn_device_kind_of(s->device).gpu;
    if (nn_lesson_ranks_link(s, &link, err, sizeof err) != 0) {
        not_run(lr, k, "", err);
        return 0;
    }
    if (gpu && !ui_gpu_here(lab, s->device)) {
        nn_profile_calibration(prof, &own);
        snprintf(source, sizeof source, "predicted for %s", prof->name);
    } else {
        if (!(cal = calibration(lab, lr, gpu ? "gpu" : "cpu", &why))) {
            if (!lr->calibrating)
                not_run(lr, k, "no calibration of the device: ", why);
            return lr->calibrating;
        }
        snprintf(source, sizeof source, "predicted from this %s's calibration", gpu ? "GPU" : "CPU");
    }
    nn_lesson_ranks_result(s, p, cal, prof, &link, source, &lr->result[k]);
    return 0;
}

/* ---- a race or a sweep: the lab's settings become the step's ---------------------------------- */

/* The step's preset selected on the setup screen and the settings set to
 * the step's: the CPU beside the GPU (predicted when none is here), one
 * after the other, a short job. 0, or -1 with why. */
static int apply_step(ui_lab *lab, ui_lesson_run *lr, const nn_lesson_step *s, char *err, size_t err_len)
{
    char path[NN_PATH_LEN];
    nn_preset p;
    nn_torch_python py;
    if (load_preset(s->preset, &p, path, sizeof path, err, err_len) != 0)
        return -1;
    ui_setup_reload(lab, path);
    if (!lab->chosen.preset_ok || strcmp(lab->chosen.preset.name, p.name) != 0)
        return nn_errorf(err, err_len, "preset %s: not in the lab's list", s->preset);
    ui_settings *set = &lab->chosen.set;
    nn_strlcpy(set->device, "cpu", sizeof set->device);
    nn_strlcpy(set->compare, "gpu", sizeof set->compare);
    set->sequential = 1;             /* fair timing, as the CLI measures one lane after the other */
    set->ranks = 1;                  /* the race of ways, not of ranks */
    set->batch = nn_lesson_batch(s, &lab->chosen.preset);
    set->steps = UI_LESSON_RACE_STEPS;
    set->cuda_graph = nn_lesson_gpu_way(s) == NN_WAY_GRAPH;
    set->data_on_device = s->data_on_device >= 0 ? s->data_on_device : 1;
    set->sync_every_step = s->sync_every_step >= 0 ? s->sync_every_step : 0;
    if (s->pinned >= 0)
        set->pinned = s->pinned;
    set->no_overlap = 0;
    if (s->kind == NN_LESSON_RANKS) {    /* measured here: the race of 1 rank against N on the CPU */
        set->compare[0] = '\0';
        set->ranks = s->ranks;
        set->no_overlap = !s->overlap;
    }
    set->sweep_steps = UI_LESSON_SWEEP_STEPS;
    set->sweep_all = 0;
    set->sweep_pytorch = s->pytorch && nn_torch_find(&py, err, err_len) == NN_TORCH_OK;
    if (set->sweep_pytorch)
        nn_strlcpy(set->pytorch_label, py.label, sizeof set->pytorch_label);
    const char *picked = lr->user_set.gpu_profile;
    nn_strlcpy(set->gpu_profile, picked[0] ? picked : s->gpu_profile, sizeof set->gpu_profile);
    static const int fallback[] = { 1, 4, 16, 64, 256, 1024 };   /* `nnlab lesson`'s, for a sweep without batches */
    lab->n_lesson_batches = s->n_batches ? s->n_batches : 6;
    memcpy(lab->lesson_batches, s->n_batches ? s->batches : fallback, sizeof(int) * (size_t)lab->n_lesson_batches);
    return 0;
}

/* The profile and PyTorch switch the lesson found, given back once a step's
 * job is read (the rest stays the step's until the lesson is left). */
static void settings_back(ui_lab *lab, const ui_lesson_run *lr)
{
    lab->chosen.set.sweep_pytorch = lr->user_set.sweep_pytorch;
    nn_strlcpy(lab->chosen.set.gpu_profile, lr->user_set.gpu_profile, sizeof lab->chosen.set.gpu_profile);
    lab->in_lesson = 0;
    lab->n_lesson_batches = 0;
}

ui_action ui_lesson_run_step(ui_lab *lab, ui_lesson_run *lr, int k)
{
    const nn_lesson_step *s = &lr->lesson.step[k];
    char err[NN_ERR_LEN], path[NN_PATH_LEN];
    nn_preset p;
    nn_gpu_profile prof;
    lr->calibrating = 0;
    memset(&lr->result[k], 0, sizeof lr->result[k]);
    lr->result[k].writeup = -1;
    lr->svg[k][0] = '\0';
    lr->state[k] = UI_STEP_DONE;
    if (s->kind == NN_LESSON_NOTE)
        return UI_ACT_HANDLED;
    if (nn_profile_find(profile_name(lr, s), &prof, err, sizeof err) != 0) {
        not_run(lr, k, "no GPU profile: ", err);
        return UI_ACT_HANDLED;
    }
    if (s->kind == NN_LESSON_RACE || s->kind == NN_LESSON_SWEEP || (s->kind == NN_LESSON_RANKS && s->measure)) {
        if (apply_step(lab, lr, s, err, sizeof err) != 0) {
            not_run(lr, k, "", err);
            return UI_ACT_HANDLED;
        }
        lr->state[k] = UI_STEP_WAITING;
        lr->waiting = k;
        lab->in_lesson = 1;          /* back from the run or sweep screen comes here */
        return s->kind == NN_LESSON_SWEEP ? UI_ACT_START_SWEEP : UI_ACT_START_RUN;
    }
    if (load_preset(s->preset, &p, path, sizeof path, err, sizeof err) != 0) {
        not_run(lr, k, "", err);
        return UI_ACT_HANDLED;
    }
    int waits = s->kind == NN_LESSON_EXPLAIN ? run_explain(lab, lr, k, &p, &prof)
              : s->kind == NN_LESSON_RANKS ? run_ranks(lab, lr, k, &p, &prof) : run_jacobian(lab, lr, k, &p, &prof);
    if (waits)
        lr->state[k] = UI_STEP_WAITING;
    return UI_ACT_HANDLED;
}

/* ---- back from the run or sweep screen -------------------------------------------------------- */

/* Step k's chart beside the handout, written as its result is read (the
 * run's and the sweep's figures are gone once another starts). */
static void keep_chart(ui_lab *lab, ui_lesson_run *lr, int k, const nn_export_run *run, const nn_sweep *sw)
{
    char dir[NN_PATH_LEN], err[NN_ERR_LEN];
    if (handout_dir(lr, dir, sizeof dir, err, sizeof err) != 0 ||
        nn_lesson_step_svg(dir, &lr->lesson, k, run, lab->chosen.preset.lr, sw, lr->svg[k], sizeof lr->svg[k], err,
                           sizeof err) < 0) {
        lr->svg[k][0] = '\0';
        ui_set_message(lab, 1, "the step's chart was not kept: %s", err);
    }
}

static void collect_race(ui_lab *lab, ui_lesson_run *lr, int k)
{
    const nn_lesson_step *s = &lr->lesson.step[k];
    const ui_run *run = &lab->run;
    nn_race_ways w;
    int cpu = -1;
    for (int j = 0; j < run->n_jobs; j++)
        if (!run->j[j].way.gpu && run->j[j].snap.state == NN_JOB_DONE)
            cpu = j;
    if (cpu < 0 || !ui_dashboard_ways(lab, &w)) {
        not_run(lr, k, "", "its race did not run to its end (r runs it again)");
        return;
    }
    nn_lesson_race_result(s, &lab->chosen.preset, &w, &lr->result[k]);
    if (s->pytorch && !w.lane[NN_LANE_FW_CPU].measured)
        nn_lesson_torch_missing(&lr->result[k]);
    const ui_run_job *j = &run->j[cpu];
    nn_export_run er = { lab->chosen.preset.name, 1, 0, { { &j->snap, j->pts, j->n_pts, j->eps, j->n_eps,
                                                            j->snap.threads, NULL } }, &w, j->snap.total_steps };
    keep_chart(lab, lr, k, &er, NULL);
}

/* A measured ranks step: its race's two lanes, 1 rank at N x B and the N
 * ranks, each one's mean step and the ranks' all-reduce phase. */
static void collect_ranks(ui_lab *lab, ui_lesson_run *lr, int k)
{
    const nn_lesson_step *s = &lr->lesson.step[k];
    const ui_run *run = &lab->run;
    if (!run->ranks_race || run->n_jobs < 2 || run->j[0].snap.state != NN_JOB_DONE ||
        run->j[1].snap.state != NN_JOB_DONE) {
        not_run(lr, k, "", "its race of ranks did not run to its end (r runs it again)");
        return;
    }
    const nn_snapshot *one = &run->j[0].snap, *ranks = &run->j[1].snap;
    nn_lesson_ranks_run m = { ranks->batch, nn_measured_step_us(one), nn_measured_step_us(ranks),
                              ranks->phase_valid & (1u << NN_PHASE_ALLREDUCE) ? ranks->host_phase_us[NN_PHASE_ALLREDUCE]
                                                                              : 0.0, "" };
    snprintf(m.how, sizeof m.how, "%ld steps each, one after the other, the mean step; the ranks under mpirun",
             ranks->total_steps);
    nn_lesson_ranks_measured_result(s, &m, &lr->result[k]);   /* no chart: the handout's figures say it */
}

static void collect_sweep(ui_lab *lab, ui_lesson_run *lr, int k)
{
    if (!lab->sweep.finished || lab->sweep.cancelled) {
        not_run(lr, k, "", "its sweep did not run to its end (r runs it again)");
        return;
    }
    nn_lesson_sweep_result(&lr->lesson.step[k], &lab->sweep, &lr->result[k]);
    keep_chart(lab, lr, k, NULL, &lab->sweep);
}

void ui_lesson_collect(ui_lab *lab, ui_lesson_run *lr)
{
    int k = lr->waiting;
    if (k < 0 || !lab->in_lesson)
        return;
    lr->waiting = -1;
    lr->state[k] = UI_STEP_DONE;
    if (lr->lesson.step[k].kind == NN_LESSON_RACE)
        collect_race(lab, lr, k);
    else if (lr->lesson.step[k].kind == NN_LESSON_RANKS)
        collect_ranks(lab, lr, k);
    else
        collect_sweep(lab, lr, k);
    settings_back(lab, lr);
}

int ui_lesson_poll(ui_lab *lab, ui_lesson_run *lr)
{
    if (lr->calibrating && !ui_calibrating_now(lab)) {   /* in, or failed: run it again either way */
        lr->calibrating = 0;
        (void)ui_lesson_run_step(lab, lr, lr->at);
        return 1;
    }
    if (lr->waiting >= 0 && lab->screen == UI_LESSON && !ui_calibrating_now(lab) && lab->dialog == UI_DLG_NONE &&
        !ui_jobs_active(lab)) {
        /* still here: the run or sweep could not start (the status row says why), or its calibration was cancelled */
        not_run(lr, lr->waiting, "", lab->message[0] ? lab->message : "its job did not start");
        lr->waiting = -1;
        settings_back(lab, lr);
        return 1;
    }
    return 0;
}

/* ---- the lesson, the handout ------------------------------------------------------------------- */

int ui_lesson_open(ui_lab *lab, ui_lesson_run *lr, const char *path)
{
    char err[NN_ERR_LEN];
    if (nn_lesson_load(path, &lr->lesson, err, sizeof err) != 0) {
        ui_set_message(lab, 1, "%s", err);
        lr->open = 0;
        return -1;
    }
    lr->open = 1;
    lr->at = 0;
    lr->waiting = -1;
    lr->calibrating = 0;
    lr->handout[0] = '\0';
    memset(lr->answer, 0, sizeof lr->answer);
    memset(lr->state, 0, sizeof lr->state);
    memset(lr->svg, 0, sizeof lr->svg);
    for (int k = 0; k < NN_LESSON_MAX_STEPS; k++) {
        memset(&lr->result[k], 0, sizeof lr->result[k]);
        lr->result[k].writeup = -1;
    }
    nn_strlcpy(lr->user_preset, lab->chosen.preset_path, sizeof lr->user_preset);
    lr->user_set = lab->chosen.set;
    return 0;
}

void ui_lesson_close(ui_lab *lab, ui_lesson_run *lr)
{
    if (!lr->open)
        return;
    lr->open = 0;
    if (lr->user_preset[0] && strcmp(lr->user_preset, lab->chosen.preset_path) != 0)
        ui_setup_reload(lab, lr->user_preset);
    settings_back(lab, lr);
    lab->chosen.set = lr->user_set;
    lab->dirty |= UI_D_ALL;
}

void ui_lesson_write_handout(ui_lab *lab, ui_lesson_run *lr)
{
    static nn_lesson_result results[NN_LESSON_MAX_STEPS];   /* the UI thread's only */
    const char *svg[NN_LESSON_MAX_STEPS];
    char answers[NN_LESSON_MAX_STEPS + 1], dir[NN_PATH_LEN], machine[2 * NN_ERR_LEN], err[NN_ERR_LEN];
    int q = 0;
    const nn_lesson *l = &lr->lesson;
    for (int k = 0; k < l->n_steps; k++) {
        results[k] = lr->result[k];
        if (lr->state[k] != UI_STEP_DONE && l->step[k].kind != NN_LESSON_NOTE)
            snprintf(results[k].why, sizeof results[k].why, "%s", lr->state[k] == UI_STEP_SKIPPED
                     ? "skipped in the lab" : "not run in the lab");
        svg[k] = lr->state[k] == UI_STEP_DONE && lr->svg[k][0] ? lr->svg[k] : NULL;
        if (l->step[k].question[0])
            answers[q++] = lr->answer[k] ? lr->answer[k] : '-';
    }
    answers[q] = '\0';
    nn_gpu_profile prof;             /* named as the CLI names it: the profile's own name */
    const char *picked = lr->user_set.gpu_profile;
    int has_prof = nn_profile_find(picked[0] ? picked : nn_profile_default_name(), &prof, err, sizeof err) == 0;
    nn_lesson_machine_text(ui_gpu_here(lab, "gpu") != NULL, has_prof ? prof.name : "a GPU profile", machine,
                           sizeof machine);
    nn_lesson_handout h = { l, results, answers, machine, svg };
    if (handout_dir(lr, dir, sizeof dir, err, sizeof err) != 0 ||
        nn_lesson_handout_write(dir, &h, lr->handout, sizeof lr->handout, err, sizeof err) != 0) {
        lr->handout[0] = '\0';
        ui_set_message(lab, 1, "handout not written: %s", err);
        return;
    }
    ui_set_message(lab, 0, "handout written: %s", lr->handout);
}

void ui_lesson_score(const ui_lesson_run *lr, int *right, int *checked)
{
    char buf[2 * NN_TEXT_LEN];
    *right = *checked = 0;
    for (int k = 0; k < lr->lesson.n_steps; k++) {
        const nn_lesson_step *s = &lr->lesson.step[k];
        if (!s->question[0] || !lr->answer[k] || lr->state[k] != UI_STEP_DONE)
            continue;
        int rc = nn_lesson_answer_text(s, lr->answer[k], &lr->result[k], buf, sizeof buf);
        *checked += rc >= 0;
        *right += rc == 1;
    }
}

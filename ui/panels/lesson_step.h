/* ui/panels/lesson_step.h - a lesson's steps run in the lab
 * (ui/panels/lesson_step.c): where the class is, what each step found, and
 * how its job runs. A race or a sweep runs on the lab's own run or sweep
 * screen, live, with the step's preset and settings (its batch, device,
 * way, switches, PyTorch; a short job), and back from it its result is read
 * from what that screen ran; Explain and a Jacobian step are the model's
 * and price at once. Every figure, headline and answer comes from the
 * report (nnlab/lesson_report.h), as `nnlab lesson` prints it; the
 * handout is its writer's. The lesson screen (ui/screens/lesson_screen.c)
 * holds this state and draws it. */
#ifndef NNLAB_UI_LESSON_STEP_H
#define NNLAB_UI_LESSON_STEP_H

#include "lab_state.h"
#include "nnlab/lesson_report.h"

#define UI_LESSON_RACE_STEPS 20      /* the steps of a race step's nnlab job: a few seconds */
#define UI_LESSON_SWEEP_STEPS 3      /* timed steps a sweep point */

enum ui_step_state {
    UI_STEP_NEW,                     /* not run yet */
    UI_STEP_WAITING,                 /* its job runs on the run or sweep screen, or a calibration first */
    UI_STEP_DONE,                    /* result holds what it found (or why it did not run) */
    UI_STEP_SKIPPED
};

typedef struct ui_lesson_run {
    int open;                        /* a lesson is loaded */
    nn_lesson lesson;
    int at;                          /* the step shown; lesson.n_steps: the end */
    char answer[NN_LESSON_MAX_STEPS];    /* the class's key a step; 0 none */
    int state[NN_LESSON_MAX_STEPS];      /* enum ui_step_state */
    nn_lesson_result result[NN_LESSON_MAX_STEPS];
    char svg[NN_LESSON_MAX_STEPS][NN_NAME_LEN + 16];   /* a step's chart beside the handout; "" none */
    int waiting;                     /* the step whose job runs on another screen, or -1 */
    int calibrating;                 /* the step shown waits for a device's calibration */
    char handout[NN_PATH_LEN];       /* the handout last written, its whole path */
    char user_preset[NN_PATH_LEN];   /* the preset selected as the lesson opened */
    ui_settings user_set;            /* its settings then (gpu_profile "": none picked): a step's
                                        race or sweep changes them */
} ui_lesson_run;

/* Loads the lesson at path into lr from its first step: 0, or -1 (said on
 * the status row). */
int ui_lesson_open(ui_lab *lab, ui_lesson_run *lr, const char *path);

/* Runs step k: a race or a sweep sets the lab's settings to the step's and
 * returns UI_ACT_START_RUN or UI_ACT_START_SWEEP (the main loop opens the
 * run or sweep screen, calibrating first where needed); Explain, a
 * Jacobian and a note are done at once (or after a calibration, which this
 * starts) and return UI_ACT_HANDLED. */
ui_action ui_lesson_run_step(ui_lab *lab, ui_lesson_run *lr, int k);

/* Back on the lesson screen: the waiting step's result from the run or
 * sweep that ran (not run, with why, when it was cancelled). */
void ui_lesson_collect(ui_lab *lab, ui_lesson_run *lr);

/* From the lesson screen's poll: a step that waited for a calibration
 * runs once it is in; a job that could not start is said. 1 when a step
 * changed. */
int ui_lesson_poll(ui_lab *lab, ui_lesson_run *lr);

/* Leaves the lesson: the preset and settings the lab had as it opened
 * come back, so that a class's lesson leaves a teacher's setup as it was. */
void ui_lesson_close(ui_lab *lab, ui_lesson_run *lr);

/* `x`: the handout (the same writer as `nnlab lesson --handout`) to the
 * export folder's LESSON-lesson/, its path kept in lr->handout and said. */
void ui_lesson_write_handout(ui_lab *lab, ui_lesson_run *lr);

/* The answers checked right and asked so far (nn_lesson_answer_text). */
void ui_lesson_score(const ui_lesson_run *lr, int *right, int *checked);

#endif

/* ui/screens/lesson_screen.h - the lesson screen's own state
 * (ui/screens/lesson_screen.c): the lessons listed (the picker), the
 * lesson open and where the class is in it (ui/panels/lesson_step.h), and
 * the step's text as drawn, scrolled. */
#ifndef NNLAB_UI_LESSON_SCREEN_H
#define NNLAB_UI_LESSON_SCREEN_H

#include "lab_state.h"
#include "panels/lesson_step.h"

#define UI_MAX_LESSONS 64            /* the lessons the picker lists at most */

typedef struct ui_lesson_state {
    int picking;                     /* 1: the list of lessons; 0: a lesson's steps */
    nn_lesson_entry *entries;
    int n_entries, selected;
    ui_lesson_run run;
    ui_text text;                    /* the rows drawn, made again at each draw */
    ui_scroll scroll;
} ui_lesson_state;

/* The lesson screen (ui/screens/screens.c lists it). */
extern const ui_screen_def ui_lesson_screen;

static inline ui_lesson_state *ui_lesson_of(const ui_lab *lab)
{
    return lab->state[UI_LESSON];
}

#endif

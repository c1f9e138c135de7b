/* ui/panels/lesson_add.h - `A` on the setup screen: the settings added as
 * a step of the user's lesson (nn_lesson_append_step: the user's data
 * folder, never a shipped lesson), said on the status row. */
#ifndef NNLAB_UI_LESSON_ADD_H
#define NNLAB_UI_LESSON_ADD_H

#include "lab_state.h"
#include "nnlab/lesson.h"

#define UI_LESSON_ADD_NAME "my-lesson"   /* the lesson the lab adds to */

/* The step the settings make: a Jacobian preset's jacobian step at its val
 * and method, else a race of its preset at the batch, on the GPU with its
 * switches and way when the settings use one. Its text says what it runs,
 * for the teacher to rewrite. */
void ui_lesson_step_of_settings(const ui_lab *lab, nn_lesson_step *s);

/* Appends it to UI_LESSON_ADD_NAME in the user's folder; the status row
 * says where, or why not. */
void ui_lesson_add_step(ui_lab *lab);

#endif

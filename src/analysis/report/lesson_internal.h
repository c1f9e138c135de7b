/* src/analysis/report/lesson_internal.h - what the lesson report's files
 * share (lesson_report.c, lesson_jacobian.c): a number added to a step's
 * result, the expected answer from a verdict, the write-up's verdict beside
 * this machine's, an answer's key by its label. Private to the report. */
#ifndef NNLAB_LESSON_INTERNAL_H
#define NNLAB_LESSON_INTERNAL_H

#include "nnlab/lesson_report.h"

void nn_lesson_add_number(nn_lesson_result *r, const char *what, double us, int measured, const char *source);
void nn_lesson_expect_verdict(const nn_lesson_step *s, int kind, nn_lesson_result *r);
/* batch: the step's (a jacobian's val, word "val"); kind: this machine's
 * verdict there. */
void nn_lesson_compare_writeup(const nn_preset *p, const char *word, int batch, int kind, int predicted_gpu,
                               nn_lesson_result *r);
char nn_lesson_key_of(const nn_lesson_step *s, const char *label);

#endif

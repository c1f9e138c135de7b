/* src/analysis/model/lesson_keys.h - the parts of a lesson file's reader
 * (lesson_file.c) kept apart: the keys each section takes and a step's
 * question, answers and expected answer (lesson_question.c). Private to
 * src/analysis/model. */
#ifndef NNLAB_LESSON_KEYS_H
#define NNLAB_LESSON_KEYS_H

#include <stddef.h>

#include <iniparser/iniparser.h>

#include "nnlab/lesson.h"

/* 1 when key is one of [lesson]'s keys (lesson) or a step's. */
int nn_lesson_key_known(int lesson, const char *key);

/* A step's pair, pytorch, question, answers and expect, checked against its
 * kind: 0, or -1 with "FILE: [stepN] KEY: why" in err. */
int nn_lesson_read_question(const dictionary *d, const char *path, nn_lesson_step *s, char *err, size_t err_len);

#endif

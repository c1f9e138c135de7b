/* tests/test_lesson_write.c - a lesson written back (nn_lesson_write) and a
 * step appended to the user's lesson (nn_lesson_append_step,
 * src/analysis/model/lesson_write.c): every shipped lesson written and loaded
 * back gives the same steps (a ranks step's ranks, link and overlap too); a step appended to a new lesson, then to the
 * same one, loads back key for key; a full lesson, a shipped lesson's name
 * and a text iniparser cannot give back whole are refused with one line,
 * the file left as it was. The user's folder is a temp folder
 * ($XDG_DATA_HOME); the shipped ones come from $NNLAB_LESSONS_DIR. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1      /* setenv, mkdtemp */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnlab/lesson.h"

#define LESSONS_SRCDIR PRESETS_SRCDIR "/../lessons"

static char tmp[64];

static int set_up(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/nnlab-lesson-write-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    setenv("XDG_DATA_HOME", tmp, 1);
    setenv("NNLAB_PRESETS_DIR", PRESETS_SRCDIR, 1);
    setenv("NNLAB_LESSONS_DIR", LESSONS_SRCDIR, 1);
    setenv("NNLAB_PROFILES_DIR", PROFILES_SRCDIR, 1);   /* a ranks step's link */
    setenv("XDG_CONFIG_HOME", tmp, 1);   /* no user presets of the machine's own */
    return 0;
}

static int tear_down(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* Two steps the same, key for key, as the reader gives them. */
static void assert_step_equal(const nn_lesson_step *a, const nn_lesson_step *b)
{
    assert_string_equal(a->section, b->section);
    assert_int_equal(a->kind, b->kind);
    assert_string_equal(a->text, b->text);
    assert_string_equal(a->preset, b->preset);
    assert_string_equal(a->device, b->device);
    assert_string_equal(a->gpu_profile, b->gpu_profile);
    assert_int_equal(a->batch, b->batch);
    assert_int_equal(a->val, b->val);
    assert_int_equal(a->method, b->method);
    assert_int_equal(a->n_batches, b->n_batches);
    assert_memory_equal(a->batches, b->batches, sizeof a->batches);
    assert_int_equal(a->way, b->way);
    assert_int_equal(a->pair, b->pair);
    assert_int_equal(a->pytorch, b->pytorch);
    assert_int_equal(a->data_on_device, b->data_on_device);
    assert_int_equal(a->graph, b->graph);
    assert_int_equal(a->sync_every_step, b->sync_every_step);
    assert_int_equal(a->pinned, b->pinned);
    assert_string_equal(a->question, b->question);
    assert_int_equal(a->n_answers, b->n_answers);
    for (int k = 0; k < a->n_answers; k++) {
        assert_int_equal(a->answers[k].key, b->answers[k].key);
        assert_string_equal(a->answers[k].label, b->answers[k].label);
    }
    assert_int_equal(a->expect, b->expect);
    assert_int_equal(a->ranks, b->ranks);
    assert_string_equal(a->link, b->link);
    assert_int_equal(a->overlap, b->overlap);
    assert_int_equal(a->measure, b->measure);
}

static void test_shipped_lessons_round_trip(void **state)
{
    static const char *const names[] = { "why-gpu-slower", "wide-table", "jacobian", "why-two" };
    static nn_lesson l, back;
    char path[512], out[512], err[1024];
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.ini", LESSONS_SRCDIR, names[i]);
        assert_int_equal(nn_lesson_load(path, &l, err, sizeof err), 0);
        snprintf(out, sizeof out, "%s/copy-%s.ini", tmp, names[i]);
        if (nn_lesson_write(out, &l, err, sizeof err) != 0)
            fail_msg("%s: %s", names[i], err);
        assert_int_equal(nn_lesson_load(out, &back, err, sizeof err), 0);
        assert_string_equal(back.name, l.name);
        assert_string_equal(back.title, l.title);
        assert_string_equal(back.description, l.description);
        assert_int_equal(back.n_steps, l.n_steps);
        for (int k = 0; k < l.n_steps; k++)
            assert_step_equal(&back.step[k], &l.step[k]);
    }
}

/* A race of the settings on the GPU, as the lab's "add to lesson" makes it. */
static void gpu_step(nn_lesson_step *s)
{
    memset(s, 0, sizeof *s);
    s->kind = NN_LESSON_RACE;
    snprintf(s->text, sizeof s->text, "LeNet at batch 16, \"graph\"; the data on the device (# and ; kept).");
    snprintf(s->preset, sizeof s->preset, "lenet-cifar10");
    snprintf(s->device, sizeof s->device, "gpu");
    s->batch = 16;
    s->way = 2;                      /* graph */
    s->method = -1;
    s->data_on_device = 1;
    s->graph = 1;
    s->sync_every_step = 0;
    s->pinned = -1;
}

static void test_append_creates_then_appends(void **state)
{
    static nn_lesson back;
    nn_lesson_step s;
    char path[512], err[1024], want[512];
    int number = 0;
    (void)state;
    gpu_step(&s);
    if (nn_lesson_append_step("my-class", "My class", &s, path, sizeof path, &number, err, sizeof err) != 0)
        fail_msg("%s", err);
    snprintf(want, sizeof want, "%s/nnlab/lessons/my-class.ini", tmp);
    assert_string_equal(path, want);
    assert_int_equal(number, 1);
    s.kind = NN_LESSON_SWEEP;        /* a second step: a sweep without a GPU switch */
    snprintf(s.device, sizeof s.device, "cpu");
    s.way = -1;
    s.data_on_device = s.graph = s.sync_every_step = -1;
    s.n_batches = 3;
    s.batches[0] = 4, s.batches[1] = 16, s.batches[2] = 64;
    s.batch = 0;
    snprintf(s.question, sizeof s.question, "Does the GPU overtake?");
    s.n_answers = 2;
    s.answers[0] = (nn_lesson_answer){ 'y', "yes" };
    s.answers[1] = (nn_lesson_answer){ 'n', "no" };
    s.expect = NN_EXPECT_OVERTAKES;
    assert_int_equal(nn_lesson_append_step("my-class", "ignored", &s, path, sizeof path, &number, err, sizeof err), 0);
    assert_int_equal(number, 2);
    assert_int_equal(nn_lesson_load(path, &back, err, sizeof err), 0);
    assert_string_equal(back.title, "My class");
    assert_int_equal(back.n_steps, 2);
    nn_lesson_step first;
    gpu_step(&first);
    snprintf(first.section, sizeof first.section, "step1");
    assert_step_equal(&back.step[0], &first);
    snprintf(s.section, sizeof s.section, "step2");
    assert_step_equal(&back.step[1], &s);
}

static void test_full_lesson_refused(void **state)
{
    nn_lesson_step s;
    char path[512], err[1024] = "", before[512];
    struct stat st0, st1;
    int number = 0;
    (void)state;
    gpu_step(&s);
    for (int k = 0; k < NN_LESSON_MAX_STEPS; k++)
        assert_int_equal(nn_lesson_append_step("full", "Full", &s, path, sizeof path, &number, err, sizeof err), 0);
    assert_int_equal(number, NN_LESSON_MAX_STEPS);
    snprintf(before, sizeof before, "%s", path);
    assert_int_equal(stat(path, &st0), 0);
    assert_int_equal(nn_lesson_append_step("full", "Full", &s, path, sizeof path, &number, err, sizeof err), -1);
    assert_non_null(strstr(err, "full: a lesson holds at most 32 steps"));
    assert_non_null(strstr(err, before));
    assert_null(strchr(err, '\n'));
    assert_int_equal(stat(path, &st1), 0);
    assert_int_equal(st0.st_size, st1.st_size);
}

static void test_shipped_name_and_bad_text_refused(void **state)
{
    nn_lesson_step s;
    char path[512], err[1024];
    int number = 0;
    (void)state;
    gpu_step(&s);
    assert_int_equal(nn_lesson_append_step("why-gpu-slower", "x", &s, path, sizeof path, &number, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "is a shipped lesson"));
    assert_int_equal(nn_lesson_append_step("a/b", "x", &s, path, sizeof path, &number, err, sizeof err), -1);
    snprintf(s.text, sizeof s.text, "both \" and ' quotes");
    assert_int_equal(nn_lesson_append_step("quotes", "x", &s, path, sizeof path, &number, err, sizeof err), -1);
    assert_non_null(strstr(err, "both quotes"));
    assert_int_equal(access(path, F_OK), -1);       /* nothing written */
    gpu_step(&s);
    s.batch = 60000;                 /* larger than the data: the reader refuses it, so nothing is written */
    assert_int_equal(nn_lesson_append_step("too-big", "x", &s, path, sizeof path, &number, err, sizeof err), -1);
    assert_non_null(strstr(err, "would not load back"));
    assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shipped_lessons_round_trip, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_append_creates_then_appends, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_full_lesson_refused, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_shipped_name_and_bad_text_refused, set_up, tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

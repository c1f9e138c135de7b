/* src/analysis/model/lesson_write.c - a lesson written back as the INI file
 * nn_lesson_load reads (man nnlab-lesson.5), and a step appended to one of
 * the user's lessons: what the lab's "add to lesson" key saves. Each value
 * is written with the key the reader takes, every text quoted, so that the
 * file loads back as the same lesson; the whole file is checked by the
 * reader before it replaces the old one (a temp file renamed: atomic_file.h),
 * so a step that would not load never reaches the teacher's file. A shipped
 * lesson is never written: only the user's folder is. */
#include "nnlab/jacobian.h"
#include "nnlab/lesson.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "ini_write.h"
#include "util.h"

/* A text key, left out when empty (nn_lesson_load reads it as unset). */
static void put_text(nn_ini_writer *w, const char *key, const char *s)
{
    if (s[0])
        nn_ini_put_text(w, key, s);
}

/* A text iniparser cannot give back whole: both quotes, or a line break. */
static int text_unwritable(const char *s)
{
    return (strchr(s, '"') && strchr(s, '\'')) || strpbrk(s, "\r\n");
}

static void put_switch(nn_ini_writer *w, const char *key, int v)
{
    if (v >= 0)
        nn_ini_put(w, "%s = %s\n", key, v ? "true" : "false");
}

static void put_question(nn_ini_writer *w, const nn_lesson_step *s)
{
    char answers[NN_LESSON_MAX_ANSWERS * 36] = "";
    if (!s->question[0])
        return;
    put_text(w, "question", s->question);
    for (int a = 0; a < s->n_answers; a++)
        snprintf(answers + strlen(answers), sizeof answers - strlen(answers), "%s%c:%s", a ? " " : "",
                 s->answers[a].key, s->answers[a].label);
    put_text(w, "answers", answers);
    if (s->expect > NN_EXPECT_NONE)
        nn_ini_put(w, "expect = %s\n", nn_lesson_expect_name(s->expect));
}

static void put_step(nn_ini_writer *w, int k, const nn_lesson_step *s)
{
    static const char *const ways[] = { "framework", "eager", "graph" };   /* the reader's, by enum nn_gpu_way */
    nn_ini_put(w, "\n[step%d]\nkind = %s\n", k + 1, nn_lesson_kind_name(s->kind));
    put_text(w, "text", s->text);
    put_text(w, "preset", s->preset);
    put_text(w, "device", s->device);
    put_text(w, "gpu_profile", s->gpu_profile);
    if (s->batch > 0)
        nn_ini_put(w, "batch = %d\n", s->batch);
    for (int b = 0; b < s->n_batches; b++)
        nn_ini_put(w, "%s%d%s", b ? "" : "batches = ", s->batches[b], b + 1 < s->n_batches ? "," : "\n");
    if (s->kind == NN_LESSON_JACOBIAN) {
        nn_ini_put(w, "val = %ld\n", s->val);
        if (s->method >= 0)
            nn_ini_put(w, "method = %s\n", nn_jac_method_name((enum nn_jac_method)s->method));
    }
    if (s->way >= 0 && s->way < 3)
        nn_ini_put(w, "way = %s\n", ways[s->way]);
    if ((s->kind == NN_LESSON_RACE || s->kind == NN_LESSON_JACOBIAN) && s->pair == NN_PAIR_OF_NNLAB)
        nn_ini_put(w, "pair = nnlab\n");
    if (s->kind == NN_LESSON_RACE && s->pytorch)
        nn_ini_put(w, "pytorch = true\n");
    if (s->kind == NN_LESSON_RANKS) {
        nn_ini_put(w, "ranks = %d\noverlap = %s\n", s->ranks, s->overlap ? "true" : "false");
        if (s->measure)
            nn_ini_put(w, "measure = true\n");
        put_text(w, "link", s->link);
    }
    put_switch(w, "data_on_device", s->data_on_device);
    put_switch(w, "graph", s->graph);
    put_switch(w, "sync_every_step", s->sync_every_step);
    put_switch(w, "pinned", s->pinned);
    put_question(w, s);
}

static int fill_lesson(FILE *f, const void *ctx)
{
    const nn_lesson *l = ctx;
    nn_ini_writer w = { f, 0 };
    nn_ini_put(&w, "; %s: a lesson saved by nnlab (man nnlab-lesson.5). Edit the steps' text and questions freely.\n\n"
        "[lesson]\n", l->name);
    put_text(&w, "name", l->name);
    put_text(&w, "title", l->title);
    put_text(&w, "description", l->description);
    for (int k = 0; k < l->n_steps; k++)
        put_step(&w, k, &l->step[k]);
    return w.failed ? -1 : 0;
}

/* Every text of l writable, else -1 naming the first that is not. */
static int check_texts(const nn_lesson *l, char *err, size_t err_len)
{
    if (text_unwritable(l->title) || text_unwritable(l->description))
        return nn_errorf(err, err_len, "lesson %s: its title or description holds both quotes or a line break",
                         nn_safe(l->name));
    for (int k = 0; k < l->n_steps; k++)
        if (text_unwritable(l->step[k].text) || text_unwritable(l->step[k].question))
            return nn_errorf(err, err_len, "lesson %s: step %d: its text or question holds both quotes or a line "
                             "break", nn_safe(l->name), k + 1);
    return 0;
}

int nn_lesson_write(const char *path, const nn_lesson *l, char *err, size_t err_len)
{
    nn_atomic_file a;
    nn_lesson *back;
    char why[NN_ERR_LEN];
    if (check_texts(l, err, err_len) != 0)
        return -1;
    if (nn_atomic_prepare(&a, path, fill_lesson, l, err, err_len) != 0)
        return -1;
    /* read back as any lesson is before it replaces the file */
    if (!(back = malloc(sizeof *back))) {
        nn_atomic_abandon(&a);
        return nn_errorf(err, err_len, "%s: out of memory", path);
    }
    int rc = nn_lesson_load(a.tmp, back, why, sizeof why);
    free(back);
    if (rc != 0) {
        nn_atomic_abandon(&a);
        return nn_errorf(err, err_len, "%s: not written: it would not load back (%s)", path, why);
    }
    return nn_atomic_commit(&a, err, err_len);
}

/* The user's NAME.ini, refusing a shipped lesson's name (yours would hide it). */
static int user_path(const char *name, char *path, size_t len, char *err, size_t err_len)
{
    char dir[NN_PATH_LEN], shipped[NN_PATH_LEN + NN_NAME_LEN + 8], stem[NN_NAME_LEN];
    if (!name[0] || strcmp(nn_file_stem(name, "", stem, sizeof stem), name) != 0)
        return nn_errorf(err, err_len, "lesson '%s': a name of letters, digits, '-' and '_' only", nn_safe(name));
    if (nn_lesson_user_dir(dir, sizeof dir) != 0)
        return nn_errorf(err, err_len, "no folder for your lessons (neither XDG_DATA_HOME nor HOME is set)");
    snprintf(shipped, sizeof shipped, "%s/%s.ini", nn_lesson_system_dir(), name);
    if (access(shipped, F_OK) == 0)
        return nn_errorf(err, err_len, "lesson '%s' is a shipped lesson: it is never changed, and yours would hide "
                         "it; pick another name", nn_safe(name));
    if ((size_t)snprintf(path, len, "%s/%s.ini", dir, name) >= len)
        return nn_errorf(err, err_len, "%s: the folder's name is too long", dir);
    return 0;
}

int nn_lesson_append_step(const char *name, const char *title, const nn_lesson_step *s, char *path, size_t path_len,
                          int *number, char *err, size_t err_len)
{
    nn_lesson *l = calloc(1, sizeof *l);
    int rc = -1;
    if (!l)
        return nn_errorf(err, err_len, "out of memory");
    if (user_path(name, path, path_len, err, err_len) != 0)
        goto out;
    if (access(path, F_OK) == 0) {
        if (nn_lesson_load(path, l, err, err_len) != 0)
            goto out;                /* a broken file is the teacher's to mend, never overwritten */
    } else if (errno == ENOENT) {
        nn_strlcpy(l->name, name, sizeof l->name);
        nn_strlcpy(l->title, title && title[0] ? title : name, sizeof l->title);
        snprintf(l->description, sizeof l->description, "Steps saved from the lab's settings.");
    } else {
        nn_errorf(err, err_len, "%s: %s", path, strerror(errno));
        goto out;
    }
    if (l->n_steps >= NN_LESSON_MAX_STEPS) {
        nn_errorf(err, err_len, "%s: full: a lesson holds at most %d steps (start another lesson)", path,
                  NN_LESSON_MAX_STEPS);
        goto out;
    }
    l->step[l->n_steps] = *s;
    snprintf(l->step[l->n_steps].section, sizeof l->step[0].section, "step%d", l->n_steps + 1);
    l->n_steps++;
    if ((rc = nn_lesson_write(path, l, err, err_len)) == 0 && number)
        *number = l->n_steps;
out:
    free(l);
    return rc;
}

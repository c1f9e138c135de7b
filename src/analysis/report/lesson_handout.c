/* src/analysis/report/lesson_handout.c - a lesson's handout, DIR/NAME.md:
 * the lesson, the machine, and per step its text, question, the answer the
 * class gave, its figures each labelled measured or predicted with its
 * source, the write-up's verdict beside this machine's, and its chart.
 * Written as every export is (src/common/atomic_file.h: a temporary file
 * renamed, never a half-written handout). See nnlab/lesson_report.h. */
#include "nnlab/lesson_report.h"

#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "util.h"

/* The answer given at step k: the answers string has one key per step with
 * a question, in order ('-': none). */
static char given_at(const nn_lesson_handout *h, int k)
{
    int q = 0;
    for (int i = 0; i < k; i++)
        q += h->lesson->step[i].question[0] != '\0';
    return h->answers && (size_t)q < strlen(h->answers) ? h->answers[q] : '-';
}

/* A table cell: the text safe, '|' and newlines kept out of the table. */
static void cell(FILE *f, const char *s)
{
    for (const char *c = nn_safe(s); *c; c++)
        fputc(*c == '|' ? '/' : *c == '\n' ? ' ' : *c, f);
}

static void write_question(FILE *f, const nn_lesson_step *s, char given, const nn_lesson_result *r)
{
    char answer[2 * NN_TEXT_LEN];
    if (!s->question[0])
        return;
    fprintf(f, "**Question:** %s (", nn_safe(s->question));
    for (int k = 0; k < s->n_answers; k++)
        fprintf(f, "%s%c: %s", k ? ", " : "", s->answers[k].key, nn_safe(s->answers[k].label));
    nn_lesson_answer_text(s, given, r, answer, sizeof answer);
    fprintf(f, ")\n\n**Answer given:** %s\n\n", nn_safe(answer));
}

static void write_figures(FILE *f, const nn_lesson_result *r)
{
    fprintf(f, "**%s** (%s)\n\n", nn_safe(r->headline), nn_safe(r->label));
    fprintf(f, "| figure | us | measured or predicted | source |\n|---|---:|---|---|\n");   /* us: a step's,
                                                                                         or a whole job's */
    for (int k = 0; k < r->n_numbers; k++) {
        const nn_lesson_number *n = &r->number[k];
        fprintf(f, "| ");
        cell(f, n->what);
        fprintf(f, " | %.1f | %s | ", n->us, n->measured ? "measured" : "predicted");
        cell(f, n->source);
        fprintf(f, " |\n");
    }
    fprintf(f, "\n");
    for (int k = 0; k < r->n_lines; k++)
        fprintf(f, "- %s\n", nn_safe(r->line[k]));
    if (r->writeup_text[0])
        fprintf(f, "- %s\n", nn_safe(r->writeup_text));
    fprintf(f, "\n");
}

static void write_step(FILE *f, const nn_lesson_handout *h, int k)
{
    const nn_lesson_step *s = &h->lesson->step[k];
    const nn_lesson_result *r = &h->result[k];
    fprintf(f, "## Step %d: %s%s%s\n\n%s\n\n", k + 1, nn_lesson_kind_name(s->kind), s->preset[0] ? ", " : "",
            nn_safe(s->preset), nn_safe(s->text));
    write_question(f, s, given_at(h, k), r);
    if (s->kind == NN_LESSON_NOTE)
        return;
    if (!r->ran) {
        fprintf(f, "Not run: %s\n\n", nn_safe(r->why));
        return;
    }
    write_figures(f, r);
    if (h->svg && h->svg[k])
        fprintf(f, "![step %d](%s)\n\n", k + 1, nn_safe(h->svg[k]));
}

static int fill_handout(FILE *f, const void *ctx)
{
    const nn_lesson_handout *h = ctx;
    const nn_lesson *l = h->lesson;
    fprintf(f, "# %s\n\n", nn_safe(l->title));
    fprintf(f, "Lesson `%s` (%s). %s\n\n", nn_safe(l->name), nn_safe(l->path), nn_safe(l->description));
    fprintf(f, "## The machine\n\n%s\n\n", nn_safe(h->machine));
    fprintf(f, "Every figure says whether it was measured on this machine or predicted (from this machine's "
            "calibration, or for a GPU profile), and from what.\n\n");
    for (int k = 0; k < l->n_steps; k++)
        write_step(f, h, k);
    return ferror(f) ? -1 : 0;
}

int nn_lesson_handout_write(const char *dir, const nn_lesson_handout *h, char *path, size_t path_len, char *err,
                            size_t err_len)
{
    char stem[NN_STEM_MAX + 1];
    nn_file_stem(h->lesson->name, "lesson", stem, sizeof stem);
    if ((size_t)snprintf(path, path_len, "%s/%s.md", dir, stem) >= path_len)
        return nn_errorf(err, err_len, "%s: the folder's name is too long", dir);
    return nn_write_atomic(path, fill_handout, h, err, err_len);
}

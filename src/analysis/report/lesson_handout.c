/* src/analysis/report/lesson_handout.c - a lesson's handout, DIR/NAME.md:
 * the lesson, the machine, and per step its text, question, the answer the
 * class gave, its figures each labelled measured or predicted with its
 * source, the write-up's verdict beside this machine's, and its chart.
 * Written as every export is (src/common/atomic_file.h: a temporary file
 * renamed, never a half-written handout). See nnlab/lesson_report.h. */
#include "config.h"

#include "nnlab/lesson_report.h"

#include "nnlab/device.h"
#include "nnlab/export_svg.h"
#include "nnlab/torch_step.h"

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

/* ---- what the CLI and the lab share around the handout ------------------------------------ */

void nn_lesson_machine_text(int gpu_here, const char *profile, char *buf, size_t len)
{
    nn_cpu_facts f;
    nn_device_status st;
    char cpu[NN_TEXT_LEN], gpu[NN_ERR_LEN + 64];
    nn_cpu_facts_read(&f);
    nn_machine_description(cpu, sizeof cpu);   /* the CPU's model and its cores */
    if (gpu_here && nn_device_status_of("gpu", &st) == 0)
        snprintf(gpu, sizeof gpu, "%s (measured where a figure says so)", st.description);
    else
        snprintf(gpu, sizeof gpu, "none here: every GPU figure is predicted for %s", profile);
    snprintf(buf, len, "- CPU: %s (kernels: %s)\n- GPU: %s\n- libraries: nnlab %s, OpenBLAS %s%s%s", cpu,
             f.kernels[0] ? f.kernels : "?", gpu, PACKAGE_VERSION, f.blas_version[0] ? f.blas_version : "?",
             f.blis_version[0] ? ", BLIS " : "", f.blis_version);
}

int nn_lesson_step_svg(const char *dir, const nn_lesson *l, int k, const nn_export_run *run, double lr,
                       const nn_sweep *sw, char *name, size_t name_len, char *err, size_t err_len)
{
    const nn_lesson_step *s = &l->step[k];
    char path[NN_PATH_LEN], stem[NN_STEM_MAX + 1];
    if (s->kind != NN_LESSON_SWEEP && s->kind != NN_LESSON_RACE)
        return 1;
    if (s->kind == NN_LESSON_SWEEP ? !sw : !run)
        return 1;
    snprintf(name, name_len, "%s-step%d.svg", nn_file_stem(l->name, "lesson", stem, sizeof stem), k + 1);
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return nn_errorf(err, err_len, "%s: the folder's name is too long", nn_safe(dir));
    return s->kind == NN_LESSON_SWEEP ? nn_export_svg_file(path, NULL, 0, NULL, 0, sw, err, err_len)
                                      : nn_export_svg_file(path, run, lr, NULL, 0, NULL, err, err_len);
}

void nn_lesson_torch_missing(nn_lesson_result *r)
{
    nn_torch_python py;
    char err[NN_ERR_LEN], line[NN_ERR_LEN + 96];
    if (nn_torch_find(&py, err, sizeof err) == NN_TORCH_OK)
        snprintf(err, sizeof err, "%s could not run this step", py.label);
    snprintf(line, sizeof line, "PyTorch: not measured on this machine (%s): the framework way stays predicted",
             err);
    nn_lesson_result_add_line(r, line);
}

const char *nn_lesson_result_source(const nn_lesson_result *r)
{
    /* the label names the headline's own sides ("CPU measured, GPU predicted
     * for T4"); without one, every figure of the step counts */
    if (r->source[0])
        return r->source;
    int measured = strstr(r->label, "measured") != NULL, predicted = strstr(r->label, "predicted") != NULL;
    int labelled = measured || predicted;
    for (int n = 0; n < r->n_numbers && !labelled; n++) {
        measured |= r->number[n].measured;
        predicted |= !r->number[n].measured;
    }
    return measured && predicted ? "measured and predicted" : measured ? "measured" : "predicted";
}

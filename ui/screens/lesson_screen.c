/* ui/screens/lesson_screen.c - a guided lesson in the lab (`L`): the lessons
 * found (the user's, then the shipped ones: nn_lesson_list), then one step
 * at a time: its sentences, its question with the keys the class answers
 * with, and once its job ran (ui/panels/lesson_step.c: a race or a sweep on
 * the run or sweep screen, live; Explain and a Jacobian at once) what this
 * machine measured or predicted: the headline drawn large for the back of
 * the room (ui/text/banner.c), labelled measured or predicted, the answer
 * checked, the verdicts, every figure with its source. All of it is the
 * report's (nnlab/lesson_report.h); this file lays it out, scrolled where
 * it is longer than the screen. */
#include "screens/lesson_screen.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "nnlab/race_ways.h"
#include "text/banner.h"
#include "text/format.h"

static void lesson_close(ui_lab *lab)
{
    ui_lesson_state *ls = ui_lesson_of(lab);
    free(ls->entries);
    ls->entries = NULL;
}

/* The lessons found again (a teacher may have added one). */
static void list_lessons(ui_lab *lab, ui_lesson_state *ls)
{
    if (!ls->entries && !(ls->entries = calloc(UI_MAX_LESSONS, sizeof *ls->entries))) {
        ui_set_message(lab, 1, "out of memory for the lesson list");
        ls->n_entries = 0;
        return;
    }
    ls->n_entries = nn_lesson_list(ls->entries, UI_MAX_LESSONS);
    if (ls->selected >= ls->n_entries)
        ls->selected = 0;
    ls->picking = 1;
    ls->scroll.top = 0;
}

/* Back from a step's run or sweep: its result; else the lesson where it
 * was, or the picker. */
static int lesson_enter(ui_lab *lab)
{
    ui_lesson_state *ls = ui_lesson_of(lab);
    if (ls->run.open && ls->run.waiting >= 0 && lab->in_lesson) {
        ui_lesson_collect(lab, &ls->run);
        ls->picking = 0;
        ls->scroll.top = 0;
    } else if (!ls->run.open) {
        list_lessons(lab, ls);
    }
    return 0;
}

/* ---- the text of the screen ---------------------------------------------------------------- */

static void wrap(ui_text *t, int style, int w, const char *text)
{
    ui_text_wrap(t, style, w, UI_TEXT_ROWS, text);
}

static void picker_text(const ui_lesson_state *ls, int w, ui_text *t)
{
    char row[UI_TEXT_COLS];
    t->n = 0;
    for (int i = 0; i < ls->n_entries; i++) {
        const nn_lesson_entry *e = &ls->entries[i];
        const char *tag = e->error[0] ? "broken" : e->shadowed ? "hidden by yours" : e->user ? "yours" : "";
        snprintf(row, sizeof row, "%c %s%s%s%s", i == ls->selected ? '>' : ' ', e->name, tag[0] ? " (" : "", tag,
                 tag[0] ? ")" : "");
        ui_text_wrap(t, i == ls->selected ? UI_TS_BOLD : e->error[0] ? UI_TS_ERROR : UI_TS_NORMAL, w, 1, row);
    }
    if (ls->n_entries == 0)
        wrap(t, UI_TS_ERROR, w, "No lessons found (looked in your folder and the shipped one).");
    ui_text_addf(t, UI_TS_NORMAL, "%s", "");
    if (ls->n_entries == 0)
        return;
    const nn_lesson_entry *e = &ls->entries[ls->selected];
    wrap(t, UI_TS_BOLD, w, e->error[0] ? "This lesson does not load:" : e->title);
    wrap(t, e->error[0] ? UI_TS_ERROR : UI_TS_DIM, w, e->error[0] ? e->error : e->path);
}

/* The question and the class's answer. */
static void question_text(const ui_lesson_run *lr, int k, int w, ui_text *t)
{
    const nn_lesson_step *s = &lr->lesson.step[k];
    char row[UI_TEXT_COLS] = "", q[NN_TEXT_LEN + 16];
    if (!s->question[0])
        return;
    snprintf(q, sizeof q, "Question: %s", s->question);
    wrap(t, UI_TS_BOLD, w, q);
    for (int a = 0; a < s->n_answers; a++)
        snprintf(row + strlen(row), sizeof row - strlen(row), "%s%c %s", a ? "   " : "  ", s->answers[a].key,
                 s->answers[a].label);
    wrap(t, UI_TS_NORMAL, w, row);
    if (lr->answer[k])
        snprintf(row, sizeof row, "  the class answered %c (%s)", lr->answer[k],
                 nn_lesson_answer_label(s, lr->answer[k]));
    else
        snprintf(row, sizeof row, "  the class answers with a key%s", lr->state[k] == UI_STEP_NEW
                 ? ": it runs the step" : "");
    wrap(t, lr->answer[k] ? UI_TS_OK : UI_TS_DIM, w, row);
}

/* The headline for the back of the room: large when it fits two banner
 * lines, and always in words with what its figures are. */
static void headline_text(const ui_lab *lab, const nn_lesson_result *r, int w, ui_text *t)
{
    char rows[UI_BANNER_ROWS * 2][256], line[3 * NN_TEXT_LEN];
    int lines = ui_banner(r->headline, w, lab->utf8, 2, rows, sizeof rows[0]);
    for (int i = 0; i < lines * UI_BANNER_ROWS; i++)
        ui_text_addf(t, UI_TS_OK, "%s", rows[i]);
    snprintf(line, sizeof line, ">> %s <<  %s: %s", r->headline, nn_lesson_result_source(r), r->label);
    wrap(t, UI_TS_BOLD, w, line);
}

/* A figure's row; an explain step's parts also get a bar, one each. */
static void number_text(const ui_lab *lab, const nn_lesson_step *s, const nn_lesson_result *r, int n, int w,
                        ui_text *t)
{
    const nn_lesson_number *x = &r->number[n];
    char step[32], line[NN_TEXT_LEN + 160];
    double most = 0;
    if (x->whole)
        snprintf(step, sizeof step, "%.3g s", x->us * 1e-6);
    else if (x->us > 0)
        nn_race_step_text(x->us, step, sizeof step);
    else
        snprintf(step, sizeof step, "0 us/step");
    snprintf(line, sizeof line, "  %s: %s, %s", x->what, step, x->source);
    wrap(t, UI_TS_NORMAL, w, line);
    if (s->kind != NN_LESSON_EXPLAIN)
        return;
    for (int i = 0; i < r->n_numbers; i++)
        most = r->number[i].us > most ? r->number[i].us : most;
    int len = most > 0 ? (int)(x->us / most * (w - 6 < 40 ? w - 6 : 40) + 0.5) : 0;
    char bar[40 * 3 + 8] = "    ";
    for (int i = 0; i < len; i++)
        strcat(bar, lab->utf8 ? "\xe2\x96\x88" : "#");
    ui_text_addf(t, UI_TS_OK, "%s", bar);
}

static void result_text(const ui_lab *lab, const ui_lesson_run *lr, int k, int w, ui_text *t)
{
    const nn_lesson_step *s = &lr->lesson.step[k];
    const nn_lesson_result *r = &lr->result[k];
    char buf[3 * NN_TEXT_LEN];
    if (!r->ran) {
        if (r->why[0]) {
            snprintf(buf, sizeof buf, "not run: %s", r->why);
            wrap(t, UI_TS_ERROR, w, buf);
        }
        return;
    }
    headline_text(lab, r, w, t);
    if (s->question[0]) {
        int rc = nn_lesson_answer_text(s, lr->answer[k] ? lr->answer[k] : '-', r, buf, sizeof buf);
        wrap(t, rc == 1 ? UI_TS_OK : rc == 0 ? UI_TS_ERROR : UI_TS_NORMAL, w, buf);
    }
    for (int n = 0; n < r->n_lines; n++)
        wrap(t, UI_TS_NORMAL, w, r->line[n]);
    for (int n = 0; n < r->n_numbers; n++)
        number_text(lab, s, r, n, w, t);
    if (r->writeup_text[0])
        wrap(t, UI_TS_DIM, w, r->writeup_text);
}

/* What runs when the step is started, said before it is. */
static const char *how_it_runs(const nn_lesson_step *s)
{
    switch (s->kind) {
    case NN_LESSON_RACE: return "a race of ways on the run screen, live; back here at its end (Enter)";
    case NN_LESSON_SWEEP: return "a batch sweep on the sweep screen, live; back here at its end (Enter)";
    case NN_LESSON_EXPLAIN: return "Explain prices the step's parts at once";
    case NN_LESSON_JACOBIAN: return "the Jacobian's val sweep, priced at once";
    case NN_LESSON_RANKS: return "N ranks against one rank, priced at once";
    default: return "";
    }
}

static void state_text(const ui_lab *lab, const ui_lesson_run *lr, int k, int w, ui_text *t)
{
    const nn_lesson_step *s = &lr->lesson.step[k];
    char buf[NN_TEXT_LEN];
    switch (lr->state[k]) {
    case UI_STEP_NEW:
        if (s->kind == NN_LESSON_NOTE)
            return;
        snprintf(buf, sizeof buf, "%s runs it: %s.", s->question[0] ? "An answer or Enter" : "Enter", how_it_runs(s));
        wrap(t, UI_TS_DIM, w, buf);
        break;
    case UI_STEP_WAITING:
        wrap(t, UI_TS_DIM, w, lr->calibrating ? "Measuring the device first (the lab's calibration, seconds)."
                                              : "Its job runs on the run or sweep screen.");
        break;
    case UI_STEP_SKIPPED: wrap(t, UI_TS_DIM, w, "Skipped: r runs it."); break;
    default: result_text(lab, lr, k, w, t); break;
    }
}

static void end_text(const ui_lesson_run *lr, int w, ui_text *t)
{
    char buf[NN_TEXT_LEN + 64];
    int right, checked;
    ui_lesson_score(lr, &right, &checked);
    snprintf(buf, sizeof buf, "The end of \"%s\".", lr->lesson.title);
    wrap(t, UI_TS_BOLD, w, buf);
    snprintf(buf, sizeof buf, "Answers checked against this machine: %d right of %d.", right, checked);
    wrap(t, UI_TS_NORMAL, w, buf);
    wrap(t, UI_TS_DIM, w, "x writes the handout: each step's question, the class's answer and what was measured "
         "or predicted, as Markdown with the charts' SVGs, to the export folder.");
}

static void step_text(const ui_lab *lab, const ui_lesson_state *ls, int w, ui_text *t)
{
    const ui_lesson_run *lr = &ls->run;
    int k = lr->at;
    char buf[NN_LESSON_TEXT_LEN + 64];
    t->n = 0;
    if (k >= lr->lesson.n_steps) {
        end_text(lr, w, t);
    } else {
        const nn_lesson_step *s = &lr->lesson.step[k];
        snprintf(buf, sizeof buf, "Step %d of %d: %s%s%s", k + 1, lr->lesson.n_steps, nn_lesson_kind_name(s->kind),
                 s->preset[0] ? ", " : "", s->preset);
        wrap(t, UI_TS_BOLD, w, buf);
        wrap(t, UI_TS_NORMAL, w, s->text);
        ui_text_addf(t, UI_TS_NORMAL, "%s", "");
        question_text(lr, k, w, t);
        state_text(lab, lr, k, w, t);
    }
    if (lr->handout[0]) {            /* the path whole, a row at a time: never cut */
        ui_text_addf(t, UI_TS_NORMAL, "%s", "");
        ui_text_addf(t, UI_TS_OK, "%s", "handout written:");
        for (size_t at = 0, n = strlen(lr->handout); at < n && w > 0; at += (size_t)w)
            ui_text_addf(t, UI_TS_OK, "%.*s", w, lr->handout + at);
    }
}

/* ---- drawing ----------------------------------------------------------------------------------- */

static const char *status_keys(const ui_lesson_state *ls)
{
    const ui_lesson_run *lr = &ls->run;
    if (ls->picking)
        return "Enter open  Up Down pick  Esc setup  ? help";
    if (lr->at >= lr->lesson.n_steps)
        return "x handout  b back  q leave  ? help";
    const nn_lesson_step *s = &lr->lesson.step[lr->at];
    if (s->question[0] && !lr->answer[lr->at] && lr->state[lr->at] == UI_STEP_NEW)
        return "the class answers: its key  Enter run  s skip  b back  x handout  q leave  ? help";
    if (lr->state[lr->at] == UI_STEP_DONE && s->kind != NN_LESSON_NOTE)
        return "n next  b back  r run again  x handout  PgDn more  q leave  ? help";
    return s->kind == NN_LESSON_NOTE ? "n next  b back  x handout  q leave  ? help"
                                     : "Enter run  n next  b back  s skip  x handout  q leave  ? help";
}

static void lesson_draw(ui_lab *lab, unsigned dirty)
{
    ui_lesson_state *ls = ui_lesson_of(lab);
    ui_rect box = { 0, 1, lab->cols, lab->rows - 2 }, in = ui_rect_inner(box);
    char title[NN_TEXT_LEN + 64], fitted[NN_TEXT_LEN + 64];
    if (ls->picking)
        snprintf(title, sizeof title, "nnlab - lessons: pick one, Enter opens it");
    else
        snprintf(title, sizeof title, "nnlab - lesson %s", ls->run.lesson.name);
    if (dirty & UI_D_TITLE)
        ui_draw_title(lab, title);
    if (dirty & ~(unsigned)(UI_D_TITLE | UI_D_STATUS)) {
        if (ls->picking) {
            snprintf(title, sizeof title, "Lessons (%d)", ls->n_entries);
            picker_text(ls, in.w, &ls->text);
            if (ls->selected < ls->scroll.top)    /* the selected one in view */
                ls->scroll.top = ls->selected;
            if (ls->selected >= ls->scroll.top + in.h)
                ls->scroll.top = ls->selected - in.h + 1;
        } else {
            snprintf(title, sizeof title, "%s", ls->run.lesson.title);
            step_text(lab, ls, in.w, &ls->text);
        }
        ui_fit_words(title, box.w - 6, fitted, sizeof fitted);
        ui_clear_rect(box);
        ui_box(lab, box, fitted);
        ui_text_draw_scrolled(lab, &ls->text, box, &ls->scroll, "PgDn", "PgUp");
    }
    if (dirty & UI_D_STATUS)
        ui_draw_status(lab, status_keys(ls));
}

/* ---- keys -------------------------------------------------------------------------------------- */

static ui_action picker_key(ui_lab *lab, ui_lesson_state *ls, int ch)
{
    switch (ch) {
    case KEY_UP: ls->selected -= ls->selected > 0; break;
    case KEY_DOWN: ls->selected += ls->selected + 1 < ls->n_entries; break;
    case KEY_HOME: ls->selected = 0; break;
    case KEY_END: ls->selected = ls->n_entries > 0 ? ls->n_entries - 1 : 0; break;
    case '\n': case '\r': case KEY_ENTER:
        if (ls->n_entries == 0)
            break;
        if (ls->entries[ls->selected].error[0]) {
            ui_set_message(lab, 1, "%s", ls->entries[ls->selected].error);
            break;
        }
        if (ui_lesson_open(lab, &ls->run, ls->entries[ls->selected].path) == 0) {
            ls->picking = 0;
            ls->scroll.top = 0;
        }
        break;
    case 27: case 'q': return UI_ACT_GO_SETUP;
    default: return UI_ACT_IGNORED;
    }
    return UI_ACT_HANDLED;
}

/* ch is one of step k's answer keys, asked and not answered yet. */
static int answers_now(const ui_lesson_run *lr, int k, int ch)
{
    const nn_lesson_step *s = &lr->lesson.step[k];
    if (!s->question[0] || lr->answer[k] || lr->state[k] == UI_STEP_WAITING || ch <= 0 || ch > 127)
        return 0;
    return strcmp(nn_lesson_answer_label(s, (char)tolower(ch)), "?") != 0;
}

static void go_to(ui_lesson_state *ls, int k)
{
    if (k < 0 || k > ls->run.lesson.n_steps)
        return;
    ls->run.at = k;
    ls->scroll.top = 0;
}

static ui_action step_key(ui_lab *lab, ui_lesson_state *ls, int ch)
{
    ui_lesson_run *lr = &ls->run;
    int k = lr->at, at_step = k < lr->lesson.n_steps;
    enum ui_scroll_move m = ui_scroll_key(ch);
    if (at_step && answers_now(lr, k, ch)) {
        lr->answer[k] = (char)tolower(ch);
        return lr->state[k] == UI_STEP_NEW ? ui_lesson_run_step(lab, lr, k) : UI_ACT_HANDLED;
    }
    if (m != UI_SCROLL_NONE) {
        ui_scroll_move(&ls->scroll, m, ls->scroll.total, ls->scroll.view);
        return UI_ACT_HANDLED;
    }
    switch (ch) {
    case 'n': case KEY_RIGHT: go_to(ls, k + 1); break;
    case 'b': case KEY_LEFT: go_to(ls, k - 1); break;
    case '\n': case '\r': case KEY_ENTER:
        if (at_step && lr->state[k] != UI_STEP_DONE && lr->lesson.step[k].kind != NN_LESSON_NOTE)
            return ui_lesson_run_step(lab, lr, k);
        go_to(ls, k + 1);
        break;
    case 'r':
        if (at_step)
            return ui_lesson_run_step(lab, lr, k);
        break;
    case 's':
        if (at_step && lr->state[k] != UI_STEP_DONE)
            lr->state[k] = UI_STEP_SKIPPED;
        go_to(ls, k + 1);
        break;
    case 'x': ui_lesson_write_handout(lab, lr); break;
    case 27: ui_lesson_close(lab, lr); list_lessons(lab, ls); break;
    case 'q': ui_lesson_close(lab, lr); return UI_ACT_GO_SETUP;
    default: return UI_ACT_IGNORED;
    }
    return UI_ACT_HANDLED;
}

static ui_action lesson_key(ui_lab *lab, int ch)
{
    ui_lesson_state *ls = ui_lesson_of(lab);
    ui_action a = ls->picking ? picker_key(lab, ls, ch) : step_key(lab, ls, ch);
    lab->dirty |= UI_D_ALL;
    return a;
}

static void lesson_poll(ui_lab *lab, double now)
{
    (void)now;
    if (ui_lesson_poll(lab, &ui_lesson_of(lab)->run))
        lab->dirty |= UI_D_ALL;
}

static const char *const lesson_help[] = {
    "  a key Enter the class's answer, or Enter, runs the step: a race or a",
    "              sweep live on its own screen (Enter there at its end: back)",
    "  n b r s     next, back (Right, Left), run again, skip   PgDn scroll",
    "  x q Esc     the handout to the export folder; leave; the lesson list",
    "  A (setup)   add the settings to your lesson my-lesson as a step",
    "  no GPU here: every GPU figure predicted for the GPU profile setting",
    NULL,
};

const ui_screen_def ui_lesson_screen = {
    .name = "lesson",
    .help_title = "Lesson",
    .help = lesson_help,
    .state_size = sizeof(ui_lesson_state),
    .close = lesson_close,
    .enter = lesson_enter,
    .draw = lesson_draw,
    .key = lesson_key,
    .poll = lesson_poll,
};

/* src/analysis/model/lesson_question.c - the keys a lesson file's sections
 * take, and a step's question: its answers ("c:CPU g:GPU"), the pair it
 * asks about and the rule its expected answer is computed by when the step
 * runs (expect), each checked against the step's kind; see lesson_keys.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "lesson_keys.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util.h"

static const char *const lesson_keys[] = { "name", "title", "description" };
static const char *const step_keys[] = {
    "text", "kind", "preset", "device", "gpu_profile", "batch", "batches", "way", "pair", "pytorch",
    "data_on_device", "graph", "sync_every_step", "pinned", "question", "answers", "expect", "val", "method",
    "ranks", "link", "overlap", "measure",
};

int nn_lesson_key_known(int lesson, const char *key)
{
    const char *const *keys = lesson ? lesson_keys : step_keys;
    size_t n = lesson ? sizeof lesson_keys / sizeof lesson_keys[0] : sizeof step_keys / sizeof step_keys[0];
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, keys[i]) == 0)
            return 1;
    return 0;
}

static const char *const kind_names[NN_LESSON_KINDS] = { "race", "sweep", "explain", "jacobian", "ranks",
                                                                 "note" };
static const char *const expect_names[NN_EXPECT_KINDS] = { "", "faster", "slower", "overtakes", "largest",
                                                                    "pays" };

const char *nn_lesson_kind_name(int kind)
{
    return kind >= 0 && kind < NN_LESSON_KINDS ? kind_names[kind] : "?";
}

const char *nn_lesson_expect_name(int expect)
{
    return expect >= 0 && expect < NN_EXPECT_KINDS ? expect_names[expect] : "?";
}

/* The labels an expect rule can answer with: every one must be offered. */
static const char *const device_labels[] = { "CPU", "GPU", NULL };
static const char *const yes_no_labels[] = { "yes", "no", NULL };
static const char *const part_labels[] = { "launches", "copies", "read-back", "work", NULL };

typedef struct q_reader {
    const dictionary *d;
    const char *path;
    nn_lesson_step *s;
    char *err;
    size_t err_len;
} q_reader;

static const char *q_raw(const q_reader *r, const char *key)
{
    char full[64];
    snprintf(full, sizeof full, "%s:%s", r->s->section, key);
    return iniparser_getstring((dictionary *)r->d, full, NULL);
}

static int q_error(const q_reader *r, const char *key, const char *why, const char *what)
{
    return nn_errorf(r->err, r->err_len, "%s: [%s] %s: %s%s", r->path, r->s->section, key, why, what);
}

/* "c:CPU g:GPU" -> the answers: a key of one letter or digit each, keys
 * distinct, labels without spaces. */
static int parse_answers(const q_reader *r, const char *text)
{
    char buf[256], *save = NULL;
    nn_lesson_step *s = r->s;
    if (nn_strlcpy(buf, text, sizeof buf) >= sizeof buf)
        return q_error(r, "answers", "too long", "");
    for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (s->n_answers == NN_LESSON_MAX_ANSWERS)
            return q_error(r, "answers", "at most 6 answers", "");
        if (!isalnum((unsigned char)tok[0]) || tok[1] != ':' || !tok[2] || strlen(tok + 2) >= 32)
            return q_error(r, "answers", nn_safe(tok), ": expected KEY:LABEL, a letter or digit and a word "
                           "(e.g. \"c:CPU g:GPU\")");
        for (int k = 0; k < s->n_answers; k++)
            if (tolower((unsigned char)s->answers[k].key) == tolower((unsigned char)tok[0]))
                return q_error(r, "answers", nn_safe(tok), ": its key is given twice");
        s->answers[s->n_answers].key = (char)tolower((unsigned char)tok[0]);
        nn_strlcpy(s->answers[s->n_answers].label, tok + 2, sizeof s->answers[0].label);
        s->n_answers++;
    }
    return s->n_answers >= 2 ? 0 : q_error(r, "answers", "a question needs at least two answers", "");
}

/* The expect rule, for this kind, with every label it may answer offered. */
static int check_expect(const q_reader *r, const char *text)
{
    enum { PAIRS = 1 << NN_LESSON_RACE | 1 << NN_LESSON_SWEEP | 1 << NN_LESSON_JACOBIAN };
    static const int kinds[NN_EXPECT_KINDS] = { -1, PAIRS, PAIRS, 1 << NN_LESSON_SWEEP, 1 << NN_LESSON_EXPLAIN,
                                                1 << NN_LESSON_RANKS };
    static const char *const *labels[NN_EXPECT_KINDS] = { NULL, device_labels, device_labels, yes_no_labels,
                                                           part_labels, yes_no_labels };
    nn_lesson_step *s = r->s;
    for (int e = 1; e < NN_EXPECT_KINDS; e++) {
        if (strcasecmp(text, expect_names[e]) != 0)
            continue;
        if (!(kinds[e] & (1 << s->kind)))
            return q_error(r, "expect", text, ": not for this kind of step (race, sweep, jacobian: faster, slower; "
                           "sweep: overtakes; explain: largest; ranks: pays)");
        for (const char *const *l = labels[e]; *l; l++) {
            int found = 0;
            for (int k = 0; k < s->n_answers; k++)
                found |= strcasecmp(s->answers[k].label, *l) == 0;
            if (!found) {
                char why[96];
                snprintf(why, sizeof why, " (expect = %s can give it)", expect_names[e]);
                nn_errorf(r->err, r->err_len, "%s: [%s] answers: no answer labelled %s%s", r->path, s->section, *l,
                          why);
                return -1;
            }
        }
        s->expect = e;
        return 0;
    }
    return q_error(r, "expect", nn_safe(text), ": unknown rule (expected faster, slower, overtakes, largest or pays)");
}

static int read_pair_and_pytorch(const q_reader *r)
{
    const char *pair = q_raw(r, "pair"), *torch = q_raw(r, "pytorch");
    if (pair && r->s->kind != NN_LESSON_RACE && r->s->kind != NN_LESSON_JACOBIAN)
        return q_error(r, "pair", "only a race or a jacobian step has pairs", "");
    if (pair && strcasecmp(pair, "framework") != 0 && strcasecmp(pair, "nnlab") != 0)
        return q_error(r, "pair", nn_safe(pair), ": unknown pair (expected framework or nnlab)");
    r->s->pair = pair && strcasecmp(pair, "nnlab") == 0 ? NN_PAIR_OF_NNLAB : NN_PAIR_OF_FRAMEWORK;
    if (!torch)
        return 0;
    if (r->s->kind != NN_LESSON_RACE)
        return q_error(r, "pytorch", "only a race step measures PyTorch", "");
    if (strcasecmp(torch, "true") != 0 && strcasecmp(torch, "false") != 0)
        return q_error(r, "pytorch", nn_safe(torch), ": expected true or false");
    r->s->pytorch = strcasecmp(torch, "true") == 0;
    return 0;
}

int nn_lesson_read_question(const dictionary *d, const char *path, nn_lesson_step *s, char *err, size_t err_len)
{
    q_reader r = { d, path, s, err, err_len };
    const char *q = q_raw(&r, "question"), *answers = q_raw(&r, "answers"), *expect = q_raw(&r, "expect");
    if (read_pair_and_pytorch(&r) != 0)
        return -1;
    if (!q || !q[0]) {
        if (answers)
            return q_error(&r, "question", "missing, but the step gives answers", "");
        return expect ? q_error(&r, "question", "missing, but the step gives expect", "") : 0;
    }
    if (nn_strlcpy(s->question, q, sizeof s->question) >= sizeof s->question)
        return q_error(&r, "question", "too long", "");
    if (!answers || !answers[0])
        return q_error(&r, "answers", "missing: a question needs answers (e.g. \"c:CPU g:GPU\")", "");
    if (parse_answers(&r, answers) != 0)
        return -1;
    if (!expect)
        return 0;                    /* a show of hands: nothing measured checks it */
    if (s->kind == NN_LESSON_NOTE)
        return q_error(&r, "expect", "a note runs nothing to check an answer against", "");
    return check_expect(&r, expect);
}

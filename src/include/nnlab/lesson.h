/* src/include/nnlab/lesson.h - a guided lesson: a teacher's list of steps,
 * each saying what to look at, asking the class a question where one fits,
 * and running one job the lab already has (a race of ways, a batch sweep,
 * Explain), or none (a note). A lesson is an INI file (man nnlab-lesson.5),
 * read through the presets' capped reader and validated whole: every error
 * one line naming the file, the [stepN] section and the key.
 *
 * The file (src/analysis/model/lesson_file.c) is the model's: it checks
 * presets, devices and GPU profiles by name. What a step's job measured or
 * predicted, the answer it expects and the handout are the report's
 * (nnlab/lesson_report.h). */
#ifndef NNLAB_LESSON_H
#define NNLAB_LESSON_H

#include <stddef.h>

#include "nnlab/preset.h"

#define NN_LESSON_MAX_STEPS 32
#define NN_LESSON_MAX_ANSWERS 6
#define NN_LESSON_MAX_BATCHES 16
#define NN_LESSON_MAX_RANKS 4096     /* a ranks step's ranks: 2 .. this */
#define NN_LESSON_TEXT_LEN 512       /* a step's text: one to three short sentences */

/* What a step runs. */
enum nn_lesson_kind {
    NN_LESSON_RACE,              /* the race of ways at one batch (nnlab/race_ways.h) */
    NN_LESSON_SWEEP,             /* a batch sweep, the CPU against the GPU (nnlab/sweep.h) */
    NN_LESSON_EXPLAIN,           /* where a GPU's step goes, one bar a part (nnlab/explain.h) */
    NN_LESSON_JACOBIAN,          /* a Jacobian method at val on the CPU and the GPU, predicted
                                    (nnlab/jacobian.h's val sweep at one val) */
    NN_LESSON_RANKS,             /* N data-parallel ranks against one rank on the same samples,
                                    predicted (nnlab/link.h's nn_ranks_predict), or with
                                    measure = true run here */
    NN_LESSON_NOTE,              /* text only */
    NN_LESSON_KINDS
};

/* The answer a question expects, computed when the step runs from what it
 * measured or predicted, never written in the file. */
enum nn_lesson_expect {
    NN_EXPECT_NONE,              /* no question */
    NN_EXPECT_FASTER,            /* race, sweep, jacobian: the answer naming the faster device (CPU or GPU)
                                    of the step's pair (a sweep: at its largest batch) */
    NN_EXPECT_SLOWER,            /* the one naming the slower */
    NN_EXPECT_OVERTAKES,         /* sweep: "yes" when the GPU overtakes the CPU within the sweep */
    NN_EXPECT_LARGEST,           /* explain: the answer naming the largest part of the step
                                    (launches, copies, read-back, work) */
    NN_EXPECT_PAYS,              /* ranks: "yes" when N ranks finish the same samples sooner than
                                    one rank, "no" when later */
    NN_EXPECT_KINDS
};

/* Which pair a race or sweep step asks about. */
enum nn_lesson_pair { NN_PAIR_OF_FRAMEWORK, NN_PAIR_OF_NNLAB };

typedef struct nn_lesson_answer {
    char key;                    /* the key the class answers with: a letter or digit */
    char label[32];              /* "CPU", "GPU", "launches", "yes" */
} nn_lesson_answer;

typedef struct nn_lesson_step {
    char section[16];            /* "step3": what messages and the handout name */
    int kind;                    /* enum nn_lesson_kind */
    char text[NN_LESSON_TEXT_LEN];
    char preset[NN_NAME_LEN];    /* a preset's name (race, sweep, explain) */
    char device[16];             /* the device the job runs on: cpu (default) or gpu */
    char gpu_profile[NN_NAME_LEN];   /* the profile a GPU not here is predicted for ("": the
                                        lesson's run picks: --gpu-profile, else the default) */
    int batch;                   /* 0: the preset's (its write-up's) */
    long val;                    /* jacobian: the inputs (0: the preset's [task] val) */
    int method;                  /* jacobian: enum nn_jac_method (-1: the preset's) */
    int n_batches, batches[NN_LESSON_MAX_BATCHES];   /* sweep */
    int way;                     /* enum nn_gpu_way of nnlab's GPU lane, or the explained way;
                                    -1: not given (race: graph, explain: framework) */
    int pair;                    /* enum nn_lesson_pair: the pair the question is about (race,
                                    jacobian) */
    int pytorch;                 /* race: the framework way measured with PyTorch where a
                                    python3 imports torch (else it stays predicted, said) */
    int data_on_device, graph, sync_every_step, pinned;   /* the GPU switches: -1 not given */
    int ranks;                   /* ranks: how many (2 when not given); batch is each rank's */
    char link[NN_NAME_LEN];      /* ranks: the link profile ("": nn_link_default_name(gpu), found
                                    when the step runs) */
    int overlap;                 /* ranks: the sums during backward (1, the default) or after */
    int measure;                 /* ranks: 1 runs them here, measured (this machine's CPU, its
                                    ranks under mpirun, summing over its shared memory: the
                                    lab's race of 1 rank against N, `nnlab sweep --ranks`'s
                                    pair in the CLI); 0 predicted over the link */
    char question[NN_TEXT_LEN];  /* "" when none */
    int n_answers;
    nn_lesson_answer answers[NN_LESSON_MAX_ANSWERS];
    int expect;                  /* enum nn_lesson_expect */
} nn_lesson_step;

typedef struct nn_lesson {
    char path[NN_PATH_LEN];
    char name[NN_NAME_LEN];      /* [lesson] name */
    char title[NN_TEXT_LEN];
    char description[NN_LESSON_TEXT_LEN];
    int n_steps;
    nn_lesson_step step[NN_LESSON_MAX_STEPS];
} nn_lesson;

/* Reads and checks a lesson file: 0, or -1 with one line in err naming the
 * file, the section and the key ("x.ini: [step2] preset: unknown preset
 * 'lenet': preset 'lenet' not found (...)"). */
int nn_lesson_load(const char *path, nn_lesson *out, char *err, size_t err_len);

/* NAME or FILE to a path: a value with '/' or ending in ".ini" is a path;
 * otherwise NAME.ini in nn_lesson_user_dir(), then in the shipped folder. */
int nn_lesson_find(const char *name_or_path, char *path, size_t path_len, char *err, size_t err_len);
/* $XDG_DATA_HOME/nnlab/lessons (or ~/.local/share/nnlab/lessons). */
int nn_lesson_user_dir(char *dir, size_t len);
/* $NNLAB_LESSONS_DIR if set, else the installed folder ($(pkgdatadir)/lessons). */
const char *nn_lesson_system_dir(void);

typedef struct nn_lesson_entry {
    char name[NN_NAME_LEN];
    char title[NN_TEXT_LEN];
    char path[NN_PATH_LEN];
    int user;                    /* found in the user's folder */
    int shadowed;                /* hidden by the user's lesson of the same name */
    char error[512];             /* the file does not load: why */
} nn_lesson_entry;

/* The user's lessons, then the shipped ones, sorted by name within each;
 * returns how many (at most max). A broken file is listed with its error. */
int nn_lesson_list(nn_lesson_entry *out, int max);

/* Writes l whole to path as the INI nn_lesson_load reads (every text
 * quoted), read back by nn_lesson_load before it replaces the old file (a
 * temp file renamed). 0, or -1 with one line in err (a text holding both
 * quotes or a line break, a file that would not load back, a write). */
int nn_lesson_write(const char *path, const nn_lesson *l, char *err, size_t err_len);

/* Appends step s to the user's lesson NAME (nn_lesson_user_dir()/NAME.ini),
 * created with title when it does not exist. Refused with one line in err:
 * the name of a shipped lesson (never changed; yours would hide it), a
 * file of that name that does not load (the teacher's to mend), a full
 * lesson (NN_LESSON_MAX_STEPS). 0 with the file in path and the step's
 * number in *number, or -1. */
int nn_lesson_append_step(const char *name, const char *title, const nn_lesson_step *s, char *path, size_t path_len,
                          int *number, char *err, size_t err_len);

const char *nn_lesson_kind_name(int kind);     /* "race", "sweep", "explain", "jacobian", "ranks", "note" */
const char *nn_lesson_expect_name(int expect); /* "", "faster", "slower", "overtakes", "largest", "pays" */

#endif

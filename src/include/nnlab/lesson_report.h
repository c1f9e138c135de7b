/* src/include/nnlab/lesson_report.h - what a lesson's step found, in the
 * words every front end shows: its figure for the back of the room ("GPU
 * 2.62x slower"), the label saying what was measured and what predicted
 * ("CPU measured, GPU predicted for T4"), each number with its source, the
 * answer the measurement gives to the step's question, and whether this
 * machine agrees with the write-up. A lesson is a report, not a job kind:
 * its steps run the jobs that exist (a race's lanes, a sweep, Explain's
 * model), and the figures come from their one shared code (race_ways.h,
 * sweep.h, explain.h); this file only reads them (src/analysis/report/
 * lesson_report.c) and writes the handout (lesson_handout.c). */
#ifndef NNLAB_LESSON_REPORT_H
#define NNLAB_LESSON_REPORT_H

#include <stddef.h>

#include "nnlab/calibrate.h"
#include "nnlab/explain.h"
#include "nnlab/export.h"
#include "nnlab/lesson.h"
#include "nnlab/link.h"
#include "nnlab/profile.h"
#include "nnlab/race_ways.h"
#include "nnlab/sweep.h"

#define NN_LESSON_MAX_NUMBERS 8
#define NN_LESSON_MAX_LINES 4

/* One figure of a step: a step time, measured or predicted, and from what. */
typedef struct nn_lesson_number {
    char what[96];               /* "cpu framework", "gpu graph", "launches", "gpu fw at batch 256" */
    double us;                   /* microseconds (a step, or a part of one) */
    int measured;                /* 1 measured here, 0 predicted */
    int whole;                   /* the time of a whole job (a Jacobian), not of a step */
    char source[NN_TEXT_LEN];    /* "measured", "predicted for T4", "predicted from this CPU's calibration" */
} nn_lesson_number;

typedef struct nn_lesson_result {
    int ran;                     /* 1: the step's job gave its figures; 0: see why (a note: none) */
    char why[NN_ERR_LEN];        /* not ran: why ("" for a note) */
    char headline[64];           /* "GPU 2.62x slower", "GPU overtakes from batch 256", "launches 71%" */
    char label[2 * NN_TEXT_LEN]; /* "CPU measured, GPU predicted for T4" */
    int n_lines;                 /* the verdicts and crossovers in full sentences */
    char line[NN_LESSON_MAX_LINES][3 * NN_TEXT_LEN];
    int n_numbers;
    nn_lesson_number number[NN_LESSON_MAX_NUMBERS];
    char expected;               /* the answer's key this machine's figures give; 0: none
                                    (no question, or too close to call: why in expected_why) */
    char expected_why[NN_TEXT_LEN];
    char source[16];             /* what every figure is, where one word says it: "predicted" (a
                                    ranks step's, until runs of N ranks are measured: then
                                    "measured"); "": read from the label and figures */
    int writeup;                 /* 1 agrees with the write-up, 0 disagrees, -1 nothing to compare */
    char writeup_text[3 * NN_TEXT_LEN];
} nn_lesson_result;

/* The batch a step runs at: its own, else its preset's write-up's
 * (measured_batch), else the preset's. */
int nn_lesson_batch(const nn_lesson_step *s, const nn_preset *p);

/* nnlab's GPU way in a race step: way (framework counts as graph), else
 * graph = false: eager, else graph. */
nn_gpu_way nn_lesson_gpu_way(const nn_lesson_step *s);

/* A race step's result from its four lanes (nn_race_ways_predict, then the
 * lanes measured replaced). */
void nn_lesson_race_result(const nn_lesson_step *s, const nn_preset *p, const nn_race_ways *w, nn_lesson_result *r);

/* A sweep step's result from the sweep run (its framework pair, else
 * nnlab's: the crossover, and the verdict at its largest batch). */
void nn_lesson_sweep_result(const nn_lesson_step *s, const nn_sweep *sw, nn_lesson_result *r);

/* An explain step: where the step goes on the device (the GPU's way, with
 * the step's switches, priced from cal, whose figures are source's:
 * "predicted for T4", "predicted from this GPU's calibration"; a CPU
 * device, its calibration), one number a part: launches, copies, read-back,
 * work. prof gives the framework's figures (the framework way). */
void nn_lesson_explain_result(const nn_lesson_step *s, const nn_preset *p, const nn_calibration *cal,
                              const nn_gpu_profile *prof, const char *source, nn_lesson_result *r);

/* A jacobian step: its method at its val on the CPU (cpu: this CPU's
 * calibration) and the GPU (gpu: its calibration or a profile's, said by
 * gpu_source), nnlab's way and a framework's (its host cost an operation on
 * each device), from `nnlab jacobian --sweep`'s val sweep; the pair asked
 * about is s->pair's. */
void nn_lesson_jacobian_result(const nn_lesson_step *s, const nn_preset *p, const nn_calibration *cpu,
                               const nn_calibration *gpu, double cpu_op_us, double gpu_op_us, const char *gpu_source,
                               nn_lesson_result *r);

/* A ranks step: s->ranks ranks at the step's batch each, their gradients
 * summed by the ring over link l (overlapped with backward or not), against
 * one rank at the global batch (nn_ranks_predict), one rank's way and
 * switches as an explain step's (nn_lesson_explain_options), priced from
 * cal, whose figures are source's ("predicted from this CPU's
 * calibration", "predicted for T4"). Headline "2 ranks: 0.97x one rank";
 * the expected answer of expect = pays from the verdict rule
 * (nnlab/verdict.h: one rank's step against the N ranks', cal's spread
 * on each). Every figure predicted (r->source). */
void nn_lesson_ranks_result(const nn_lesson_step *s, const nn_preset *p, const nn_calibration *cal,
                            const nn_gpu_profile *prof, const nn_link *l, const char *source, nn_lesson_result *r);

/* What a ranks step with measure = true ran here: s->ranks ranks at batch
 * each and one rank at ranks x batch, each one's mean step (us) as its own
 * run measured it (the lab's race of 1 rank against N, the CLI's `sweep
 * --ranks` pair), and the ranks' all-reduce phase; how says how they ran
 * ("400 steps each, one after the other, mpirun over shared memory"). */
typedef struct nn_lesson_ranks_run {
    int batch;                   /* each rank's */
    double one_us, ranks_us, allreduce_us;
    char how[NN_TEXT_LEN];
} nn_lesson_ranks_run;

/* The same result as nn_lesson_ranks_result's, measured: headline "2 ranks:
 * 0.93x one rank", every figure labelled measured (r->source), the answer
 * of expect = pays when the two steps differ by more than a measurement's
 * noise (NN_SWEEP_NOISE: two repetitions of a point agree within it). */
void nn_lesson_ranks_measured_result(const nn_lesson_step *s, const nn_lesson_ranks_run *m, nn_lesson_result *r);

/* The link a ranks step is priced over: its own, else its device's default
 * (nn_link_default_name). 0, or -1 with one line in err naming it. */
int nn_lesson_ranks_link(const nn_lesson_step *s, nn_link *l, char *err, size_t err_len);

/* The explanation an explain step prices (the same options Explain's GPU
 * ways use, with the step's switches on top). */
void nn_lesson_explain_options(const nn_lesson_step *s, const nn_gpu_profile *prof, nn_explain_options *opt);

/* The class's answer set beside the measurement: "answer c (CPU): this
 * machine agrees (GPU 2.62x slower)", "answer g (GPU): this machine says c
 * (CPU)", "answer -: none given", "answer c (CPU): nothing to check it
 * against (too close to call)". Returns 1 when it matches, 0 when not, -1
 * when there is nothing to check. */
int nn_lesson_answer_text(const nn_lesson_step *s, char given, const nn_lesson_result *r, char *buf, size_t len);

/* A line added to r's sentences (a front end's own: "PyTorch: not
 * measured here: no torch"); nothing when r has NN_LESSON_MAX_LINES. */
void nn_lesson_result_add_line(nn_lesson_result *r, const char *text);

/* The label of answer key in s ("CPU"), or "?" */
const char *nn_lesson_answer_label(const nn_lesson_step *s, char key);

/* ---- the handout (src/analysis/report/lesson_handout.c) ------------------------------------ */

typedef struct nn_lesson_handout {
    const nn_lesson *lesson;
    const nn_lesson_result *result;  /* one a step */
    const char *answers;         /* the keys given, one a step with a question ('-': none) */
    const char *machine;         /* "CPU: ..., 2 cores; GPU: none here (predicted for T4); OpenBLAS 0.3.21" */
    const char *const *svg;      /* one a step: the SVG's file name beside the handout, or NULL */
} nn_lesson_handout;

/* DIR/NAME.md, written atomically (a temporary file renamed): the lesson,
 * the machine, and per step its text, question, the answer given, the
 * figures each labelled measured or predicted with its source, the verdict
 * against the write-up, and its chart's SVG. 0, or -1 with one line in err. */
int nn_lesson_handout_write(const char *dir, const nn_lesson_handout *h, char *path, size_t path_len, char *err,
                            size_t err_len);

/* The handout's machine, as lines of Markdown: "- CPU: ... (kernels: avx2)",
 * "- GPU: <this GPU> (measured where a figure says so)" or "none here:
 * every GPU figure is predicted for T4", "- libraries: nnlab, OpenBLAS". */
void nn_lesson_machine_text(int gpu_here, const char *profile, char *buf, size_t len);

/* Step k's chart beside the handout, DIR/LESSON-stepK.svg: a race's run
 * (its nnlab job's loss and its lanes; lr the preset's) or a sweep. 0
 * written (its file name in name), 1 none for this step (a step of another
 * kind, or no run or sweep given), -1 with one line in err. */
int nn_lesson_step_svg(const char *dir, const nn_lesson *l, int k, const nn_export_run *run, double lr,
                       const nn_sweep *sw, char *name, size_t name_len, char *err, size_t err_len);

/* A race step asked for PyTorch and none measured: the line that says so
 * in r ("PyTorch: not measured on this machine (no torch): the framework
 * way stays predicted"). */
void nn_lesson_torch_missing(nn_lesson_result *r);

/* What r's headline rests on, for its big figure: "measured", "predicted",
 * or "measured and predicted", as its label says of its two sides (without
 * a label, as its figures say). */
const char *nn_lesson_result_source(const nn_lesson_result *r);

#endif

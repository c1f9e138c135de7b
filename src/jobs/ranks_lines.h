/* src/jobs/ranks_lines.h - the progress lines every rank of `nnlab train
 * --progress-lines` prints (src/cli/cli_ranks.c cli_progress_line: one
 * object of JSON a line, about four a second and at its end), read back by
 * the job that started the ranks (job_ranks.c). What mpirun forwards from
 * several ranks may carry other text between them (a rank's stdout is
 * ours to read, not ours to trust): anything that is not such a line is
 * skipped, a line with a rank out of range too. */
#ifndef NNLAB_RANKS_LINES_H
#define NNLAB_RANKS_LINES_H

#include "nnlab/engine.h"

typedef struct ranks_line {
    int rank, ranks;
    nn_job_state state;
    long step, steps;
    int epoch;
    int has_loss;                /* loss: the ranks' agreed training loss */
    double loss;
    long loss_points;            /* the rank's loss points so far */
    int epochs_done;             /* its validations so far, and the last one's */
    int has_val, has_accuracy;
    double val_loss, val_accuracy;
    double elapsed_s;
    int has_rate;                /* samples/s and eta known */
    double samples_per_s, eta_s;
    long steps_per_epoch;
    char error[NN_ERR_LEN];      /* failed or diverged: why, as the rank said it */
    long timed_steps;
    double us_per_step;          /* 0 until a step was timed */
    int has_allreduce;
    double allreduce_us;
    double part_us[NN_PHASE_COUNT + 1];   /* the measured step's parts (nnlab/observe.h) */
    unsigned part_valid;
} ranks_line;

/* Reads one line (without its newline): 0 with *out, or -1 when it is not
 * a progress line of a rank in [0, ranks) where ranks <= max_ranks. */
int ranks_line_parse(const char *line, int max_ranks, ranks_line *out);

/* Line by line out of a stream that arrives in pieces: feed(buf, n) calls
 * on_line for each whole line; a line longer than RANKS_LINE_MAX is dropped
 * whole (up to its newline), never read as two. */
#define RANKS_LINE_MAX 4096
typedef struct ranks_line_buffer {
    char line[RANKS_LINE_MAX + 1];
    size_t len;
    int skipping;                /* dropping the rest of a line too long */
} ranks_line_buffer;

void ranks_line_feed(ranks_line_buffer *b, const char *buf, size_t n, void (*on_line)(const char *, void *),
                     void *ctx);

#endif

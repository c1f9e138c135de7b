/* src/jobs/torch_child.h - one helper process, run to its end: started
 * without a shell (posix_spawnp), its stdout kept whole and its stderr's
 * tail, stopped at a deadline or a cancel. For torch_step.c and
 * ranks_run.c (the ranks' sweep runs this program as its child). */
#ifndef NNLAB_TORCH_CHILD_H
#define NNLAB_TORCH_CHILD_H

#include <stddef.h>

#define TORCH_OUT_MAX (64 * 1024)    /* the helper prints one line of JSON */
#define TORCH_ERR_TAIL 2048

typedef struct torch_child {
    char out[TORCH_OUT_MAX + 1];     /* stdout, NUL-terminated; cut at TORCH_OUT_MAX */
    size_t out_len;
    int out_cut;                     /* more came than out holds */
    char err_tail[TORCH_ERR_TAIL + 1]; /* the last bytes of stderr, NUL-terminated */
    size_t err_len;
    int spawn_errno;                 /* posix_spawnp's error (ENOENT: no such program); 0: started */
    int exit_code;                   /* its exit status, or -1 */
    int signal;                      /* the signal that ended it, or 0 */
    int timed_out, cancelled;        /* why we ended it */
    /* torch_child_run_lines: stdout goes line by line to on_line, not into out */
    void (*on_line)(const char *line, void *ctx);
    void *line_ctx;
    struct ranks_line_buffer *lines;
} torch_child;

/* Runs argv[0] (searched on PATH when it has no '/') with argv, stdin from
 * /dev/null, in a process group of its own, until it exits, timeout_s
 * passes or cancelled(ctx) returns nonzero (then SIGTERM, and SIGKILL a
 * second later). 0 with c filled (whatever the child's fate), or -1 when
 * the pipes could not be made (c->spawn_errno says why). */
int torch_child_run(char *const argv[], double timeout_s, int (*cancelled)(void *), void *ctx,
                    torch_child *c);

/* torch_child_run, but stdout is read a line at a time as it comes: each
 * whole line (without its newline; one longer than 4 KB dropped) to
 * on_line(line, line_ctx) on the caller's thread, and out stays empty. For
 * a child that reports its progress as it runs (job_ranks.c). */
int torch_child_run_lines(char *const argv[], double timeout_s, int (*cancelled)(void *), void *ctx,
                          void (*on_line)(const char *line, void *line_ctx), void *line_ctx, torch_child *c);

/* The last non-empty line of the child's stderr, blanks cut ("" if none). */
void torch_child_last_line(const torch_child *c, char *buf, size_t len);

#endif

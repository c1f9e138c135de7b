/* src/jobs/torch_child.c - one helper process, run to its end; see
 * torch_child.h. No shell: the arguments reach the program as they are, a
 * preset's path with blanks or quotes included. */
#define _GNU_SOURCE                  /* pipe2 */
#include "torch_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ranks_lines.h"
#include "util.h"

extern char **environ;

#define POLL_MS 100                  /* how often the deadline and the cancel are looked at */
#define TERM_GRACE_MS 1000           /* SIGTERM, then SIGKILL */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void close_pair(int p[2])
{
    for (int i = 0; i < 2; i++)
        if (p[i] >= 0) {
            close(p[i]);
            p[i] = -1;
        }
}

/* The child's stdio: the pipes' write ends on 1 and 2, /dev/null on 0; its
 * signals as a fresh program has them (the caller's thread may block or
 * ignore some: a trainer thread blocks them all), its own process group so
 * that a Ctrl-C at the terminal reaches us, and we end it. */
static int spawn_setup(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at, int out_w, int err_w)
{
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaddset(&defaults, sig);
    if (posix_spawn_file_actions_init(fa) != 0)
        return -1;
    if (posix_spawnattr_init(at) != 0) {
        posix_spawn_file_actions_destroy(fa);
        return -1;
    }
    if (posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0) != 0
        || posix_spawn_file_actions_adddup2(fa, out_w, 1) != 0
        || posix_spawn_file_actions_adddup2(fa, err_w, 2) != 0
        || posix_spawnattr_setflags(at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                            POSIX_SPAWN_SETSIGDEF) != 0
        || posix_spawnattr_setpgroup(at, 0) != 0 || posix_spawnattr_setsigmask(at, &none) != 0
        || posix_spawnattr_setsigdefault(at, &defaults) != 0) {
        posix_spawn_file_actions_destroy(fa);
        posix_spawnattr_destroy(at);
        return -1;
    }
    return 0;
}

/* Appends what fd has to the output (whole, up to its size) or the error
 * tail (the last bytes); 0 at the end of the stream. */
static int drain(int fd, torch_child *c, int is_out)
{
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (n == 0)
        return 0;
    if (is_out && c->on_line) {
        ranks_line_feed(c->lines, buf, (size_t)n, c->on_line, c->line_ctx);
    } else if (is_out) {
        size_t room = TORCH_OUT_MAX - c->out_len, take = (size_t)n < room ? (size_t)n : room;
        memcpy(c->out + c->out_len, buf, take);
        c->out_len += take;
        c->out[c->out_len] = '\0';
        c->out_cut |= take < (size_t)n;
    } else if ((size_t)n >= TORCH_ERR_TAIL) {
        memcpy(c->err_tail, buf + n - TORCH_ERR_TAIL, TORCH_ERR_TAIL);
        c->err_len = TORCH_ERR_TAIL;
    } else {
        size_t drop = c->err_len + (size_t)n > TORCH_ERR_TAIL ? c->err_len + (size_t)n - TORCH_ERR_TAIL : 0;
        memmove(c->err_tail, c->err_tail + drop, c->err_len - drop);
        memcpy(c->err_tail + c->err_len - drop, buf, (size_t)n);
        c->err_len += (size_t)n - drop;
    }
    c->err_tail[c->err_len] = '\0';
    return 1;
}

/* 1 when the child must be stopped now (c says why). */
static int must_stop(torch_child *c, double deadline, int (*cancelled)(void *), void *ctx)
{
    if (cancelled && cancelled(ctx))
        c->cancelled = 1;
    else if (now_s() >= deadline)
        c->timed_out = 1;
    return c->cancelled || c->timed_out;
}

/* Reads both pipes until both end or the child must be stopped. */
static void read_until_done(int out_r, int err_r, torch_child *c, double deadline,
                            int (*cancelled)(void *), void *ctx)
{
    struct pollfd p[2] = { { out_r, POLLIN, 0 }, { err_r, POLLIN, 0 } };
    while ((p[0].fd >= 0 || p[1].fd >= 0) && !must_stop(c, deadline, cancelled, ctx)) {
        int n = poll(p, 2, POLL_MS);
        if (n < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2 && n > 0; i++)
            if (p[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) && !drain(p[i].fd, c, i == 0))
                p[i].fd = -1;        /* negative fds are ignored by poll */
    }
}

static void note_status(torch_child *c, int status)
{
    if (WIFEXITED(status))
        c->exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        c->signal = WTERMSIG(status);
}

/* Waits for pid until deadline: 1 when it was reaped. */
static int reap_by(pid_t pid, torch_child *c, double deadline)
{
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            note_status(c, status);
            return 1;
        }
        if (r < 0 && errno != EINTR)
            return 1;                /* not ours to wait for any more (SIGCHLD ignored) */
        if (now_s() >= deadline)
            return 0;
        usleep(10 * 1000);
    }
}

/* The child's end: waited for while it finishes by itself (it closed its
 * pipes, so it is on its way out), else ended: SIGTERM to its group, then
 * SIGKILL. */
static void finish(pid_t pid, torch_child *c, double deadline, int (*cancelled)(void *), void *ctx)
{
    while (!must_stop(c, deadline, cancelled, ctx))
        if (reap_by(pid, c, now_s() + POLL_MS / 1e3))
            return;
    /* the group is the one we made for the child (its pid) */
    if (kill(-pid, SIGTERM) != 0)
        (void)kill(pid, SIGTERM);
    if (reap_by(pid, c, now_s() + TERM_GRACE_MS / 1e3))
        return;
    if (kill(-pid, SIGKILL) != 0)
        (void)kill(pid, SIGKILL);
    (void)reap_by(pid, c, now_s() + 3600.0);
}

/* Runs the child with c as the caller prepared it (zeroed, or a line reader set). */
static int run_child(char *const argv[], double timeout_s, int (*cancelled)(void *), void *ctx, torch_child *c)
{
    int out[2] = { -1, -1 }, err[2] = { -1, -1 };
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    pid_t pid;
    double deadline = now_s() + timeout_s;
    c->exit_code = -1;
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        c->spawn_errno = errno;
        close_pair(out);
        return -1;
    }
    if (spawn_setup(&fa, &at, out[1], err[1]) != 0) {
        c->spawn_errno = ENOMEM;
        close_pair(out);
        close_pair(err);
        return -1;
    }
    c->spawn_errno = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(out[1]);
    close(err[1]);
    out[1] = err[1] = -1;
    if (c->spawn_errno == 0) {
        read_until_done(out[0], err[0], c, deadline, cancelled, ctx);
        finish(pid, c, deadline, cancelled, ctx);
    }
    close_pair(out);
    close_pair(err);
    return 0;
}

int torch_child_run(char *const argv[], double timeout_s, int (*cancelled)(void *), void *ctx,
                    torch_child *c)
{
    memset(c, 0, sizeof *c);
    return run_child(argv, timeout_s, cancelled, ctx, c);
}

int torch_child_run_lines(char *const argv[], double timeout_s, int (*cancelled)(void *), void *ctx,
                          void (*on_line)(const char *line, void *line_ctx), void *line_ctx, torch_child *c)
{
    ranks_line_buffer lines;
    memset(c, 0, sizeof *c);
    memset(&lines, 0, sizeof lines);
    c->on_line = on_line;
    c->line_ctx = line_ctx;
    c->lines = &lines;
    int rc = run_child(argv, timeout_s, cancelled, ctx, c);
    c->on_line = NULL;               /* the buffer was this call's */
    c->lines = NULL;
    return rc;
}

void torch_child_last_line(const torch_child *c, char *buf, size_t len)
{
    const char *s = c->err_tail, *end = s + strlen(s), *line;   /* up to a NUL it printed */
    while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        end--;
    line = end;
    while (line > s && line[-1] != '\n')
        line--;
    while (line < end && (*line == ' ' || *line == '\t'))
        line++;
    snprintf(buf, len, "%.*s", (int)(end - line), line);
}

/* src/cli/cli_ranks.c - train and bench over data-parallel ranks
 * (docs/ranks.md): `--ranks N` starts mpirun on this nnlab with the same
 * arguments, and relays its exit status; a process that a launcher started
 * joins its ranks, prints only as rank 0 (the others say only an error, with
 * their rank), and rank 0 writes --save-params once every rank finished. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_ranks.h"
#include "npy.h"
#include "nnlab/device.h"
#include "nnlab/observe.h"
#include "nnlab/ranks.h"
#include "util.h"

static pid_t launcher;

static void pass_on(int sig)
{
    if (launcher > 0)
        kill(launcher, sig);
}

/* --transport: Open MPI's point-to-point engine (ob1, not UCX, which
 * would pick its own transport) over the one byte transfer layer named:
 * vader, its shared memory, or tcp. NULL: Open MPI's choice. */
static const char *transport_btl(const char *transport)
{
    if (!transport)
        return NULL;
    return strcmp(transport, "tcp") == 0 ? "self,tcp" : "self,vader";
}

/* mpirun's arguments: -np N, --oversubscribe for more ranks than cores,
 * --allow-run-as-root as root (CI), the transport asked for, then this
 * program and argv without --ranks. argv[0] is the command's name. */
static char **launcher_argv(int argc, char **argv, const cli_options *o, char *np, size_t np_len, char *exe)
{
    char **a = calloc((size_t)argc + 16, sizeof *a);
    int k = 0;
    if (!a)
        return NULL;
    snprintf(np, np_len, "%ld", o->ranks);
    a[k++] = "mpirun";
    a[k++] = "-np";
    a[k++] = np;
    if (o->ranks > sysconf(_SC_NPROCESSORS_ONLN))
        a[k++] = "--oversubscribe";
    if (geteuid() == 0)
        a[k++] = "--allow-run-as-root";
    if (o->transport) {
        a[k++] = "--mca", a[k++] = "pml", a[k++] = "ob1";
        a[k++] = "--mca", a[k++] = "btl", a[k++] = (char *)transport_btl(o->transport);
    }
    a[k++] = exe;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--ranks") == 0) {
            i++;                     /* and its value */
            continue;
        }
        if (strncmp(argv[i], "--ranks=", 8) != 0)
            a[k++] = argv[i];
    }
    a[k] = NULL;
    return a;
}

/* Runs a[] and waits: its exit status, 128 + a signal that ended it. */
static int run_launcher(char **a)
{
    pid_t pid = fork();
    int status = 0;
    if (pid < 0) {
        fprintf(stderr, "nnlab: --ranks: cannot start mpirun: %s\n", strerror(errno));
        return EXIT_FAILURE;
    }
    if (pid == 0) {
        execvp(a[0], a);
        fprintf(stderr, "nnlab: --ranks: cannot run mpirun: %s\n", strerror(errno));
        _exit(127);
    }
    launcher = pid;
    signal(SIGINT, pass_on);
    signal(SIGTERM, pass_on);
    signal(SIGHUP, pass_on);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return EXIT_FAILURE;
    if (WIFSIGNALED(status))
        return CLI_EXIT_SIGNAL + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FAILURE;
}

/* --ranks N: mpirun on this program, or the one line of what is missing. */
static int launch(int argc, char **argv, const cli_options *o, const char *device)
{
    char why[512], np[32], exe[4096];
    /* a GPU's ranks too (one a GPU, NCCL loaded by each): a device that is
     * not here is said once, before any rank starts */
    if (nn_device_require(device, why, sizeof why) != 0) {
        fprintf(stderr, "nnlab: --ranks %ld: %s\n", o->ranks, why);
        return CLI_EXIT_USAGE;
    }
    if (!nn_ranks_can_start(why, sizeof why)) {
        fprintf(stderr, "nnlab: --ranks %ld: %s\n", o->ranks, why);
        return CLI_EXIT_USAGE;
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "nnlab: --ranks: cannot find this program: %s\n", strerror(errno));
        return EXIT_FAILURE;
    }
    exe[n] = '\0';
    char **a = launcher_argv(argc, argv, o, np, sizeof np, exe);
    if (!a) {
        fprintf(stderr, "nnlab: --ranks: out of memory\n");
        return EXIT_FAILURE;
    }
    fflush(stdout);
    fflush(stderr);
    int rc = run_launcher(a);
    free(a);
    return rc;
}

/* --transport given to ranks mpirun started by hand: they must sum the
 * way it names, or a figure would be labelled with the wrong transport.
 * Rank 0 says so; all stop alike (each sees the same settings). */
static int transport_matches(const cli_options *o, const nn_ranks_info *info)
{
    if (!o->transport || info->size < 2)
        return 1;
    int tcp = strcmp(o->transport, "tcp") == 0;
    if (tcp == (strcmp(info->transport, "tcp") == 0) &&
        (tcp || strcmp(info->transport, "shared memory") == 0))
        return 1;
    if (info->rank == 0)
        fprintf(stderr, "nnlab: --transport %s, but these ranks sum over %s: let --ranks start them, "
                "or give mpirun --mca pml ob1 --mca btl %s\n", o->transport, info->transport,
                transport_btl(o->transport));
    return 0;
}

/* A launched process joins; a rank above 0 is made silent. */
static int join(cli_options *o, nn_ranks_info *info)
{
    char err[512];
    if (nn_ranks_join(info, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    if (!transport_matches(o, info))
        return CLI_EXIT_USAGE;
    if (info->rank > 0) {            /* silent but for an error, which names the rank */
        o->quiet = 1;
        o->json = 0;
        o->svg = NULL;
        o->save_params = NULL;
        /* --progress-lines: its own lines only, which mpirun forwards */
        if (!o->progress_lines && !freopen("/dev/null", "w", stdout))
            return EXIT_FAILURE;
    }
    return 0;
}

/* Every rank finished: then rank 0 writes path (NULL: none) atomically. */
static int save(nn_job *job, const char *path, const nn_ranks_info *info)
{
    char err[NN_ERR_LEN];
    /* every rank finished its last step before rank 0 writes a thing */
    if (nn_ranks_barrier(err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: rank %d: %s\n", info->rank, err);
        return EXIT_FAILURE;
    }
    if (!path)
        return 0;
    long count = nn_job_read_params(job, NULL, 0);
    float *p = count > 0 ? malloc((size_t)count * sizeof *p) : NULL;
    if (!p || nn_job_read_params(job, p, count) != count) {
        fprintf(stderr, "nnlab: --save-params %s: cannot read the parameters\n", path);
        free(p);
        return EXIT_FAILURE;
    }
    int rc = nn_npy_write(path, p, &count, 1, err, sizeof err);
    free(p);
    if (rc != 0) {
        fprintf(stderr, "nnlab: --save-params: %s\n", err);
        return EXIT_FAILURE;
    }
    return 0;
}

int cli_ranks_start(int argc, char **argv, cli_options *o, const char *device, nn_ranks_info *ranks,
                    int *rc)
{
    if (o->ranks > 1 && !nn_ranks_launched()) {
        *rc = launch(argc, argv, o, device);
        return 1;
    }
    if ((*rc = join(o, ranks)) != 0)
        return 1;
    if (ranks->size > 1 && (o->race || o->race_predicted || o->with_pytorch)) {
        fprintf(stderr, "nnlab: rank %d: --race, --race-predicted and --with-pytorch run alone, "
                "not over ranks\n", ranks->rank);
        *rc = CLI_EXIT_USAGE;
        return 1;
    }
    return 0;
}

/* A rank above 0's exit status: its rank 0 says the rest. */
static int rank_status(const nn_snapshot *s)
{
    if (s->state == NN_JOB_DIVERGED)
        return CLI_RANKS_EXIT_DIVERGED;
    return s->state == NN_JOB_CANCELLED ? CLI_EXIT_CANCELLED : 0;
}

int cli_ranks_end(nn_job *job, const cli_options *o, const nn_snapshot *s, const nn_ranks_info *ranks,
                  int *rc)
{
    if (s->state == NN_JOB_FAILED && ranks->size > 1) {
        /* the others may wait for it in a sum: end them all */
        fprintf(stderr, "nnlab: rank %d of %d: %s\n", ranks->rank, ranks->size, s->error);
        nn_ranks_abort(EXIT_FAILURE);
        *rc = EXIT_FAILURE;
        return 1;
    }
    if (s->state == NN_JOB_DONE && (ranks->size > 1 || o->save_params) &&
        (*rc = save(job, o->save_params, ranks)) != 0) {
        if (ranks->size > 1)
            nn_ranks_abort(*rc);
        return 1;
    }
    if (ranks->rank > 0) {
        *rc = rank_status(s);
        return 1;
    }
    return 0;
}

void cli_ranks_text(const nn_snapshot *s)
{
    if (s->ranks > 1 && s->overlap && !isfinite(s->overlap_us))
        fprintf(stderr, "  ranks: %d over %s (%s); sums in buckets on a stream of their own beside the "
                "backward (their time in flight not timed apart); all-reduce: the wait after it\n",
                s->ranks, s->comm_transport, s->comm_library);
    else if (s->ranks > 1 && s->overlap)
        fprintf(stderr, "  ranks: %d over %s (%s); sums in buckets in flight during the backward "
                "%.1f us/step (measured, part of backward); all-reduce: the wait after it\n",
                s->ranks, s->comm_transport, s->comm_library, s->overlap_us);
    else if (s->ranks > 1)
        fprintf(stderr, "  ranks: %d over %s (%s); no overlap: all-reduce is one sum after the "
                "backward\n", s->ranks, s->comm_transport, s->comm_library);
}

void cli_ranks_json(const nn_snapshot *s)
{
    int many = s->ranks > 1;
    printf("  \"ranks\": %d,\n  \"batch_per_rank\": %d,\n  \"global_batch\": %ld,\n",
           many ? s->ranks : 1, s->batch, many ? s->global_batch : (long)s->batch);
    if (!many) {
        printf("  \"transport\": null,\n  \"library\": null,\n");
        return;
    }
    printf("  \"transport\": ");
    cli_json_string(stdout, s->comm_transport);
    printf(",\n  \"library\": ");
    cli_json_string(stdout, s->comm_library);
    printf(",\n  \"overlap\": %s,\n", s->overlap ? "true" : "false");
    /* part of backward_us, not a phase: the phases still add up to the step */
    cli_json_number("allreduce_overlapped_us", s->overlap ? s->overlap_us : NAN, 0);
}

/* A number, or null where it is not known (JSON has no NaN). */
static void line_number(const char *key, int valid, double v)
{
    if (valid && isfinite(v))
        printf(", \"%s\": %.6g", key, v);
    else
        printf(", \"%s\": null", key);
}

/* A line now and then, and always the last. */
#define LINE_EVERY_S 0.25

void cli_progress_line(const nn_snapshot *s, double *last)
{
    double now = nn_now();
    if (now - *last < LINE_EVERY_S && !nn_job_state_ended(s->state))
        return;
    *last = now;
    nn_ranks_info me;                /* the process's place, known before its job's snapshot says it */
    nn_ranks_info_get(&me);
    int ranks = me.size > 1 ? me.size : 1;
    printf("{\"progress\": 1, \"rank\": %d, \"ranks\": %d, \"state\": \"%s\", \"step\": %ld, "
           "\"steps\": %ld, \"epoch\": %d", me.rank, ranks, nn_job_state_name(s->state),
           s->step, s->total_steps, s->epoch);
    line_number("loss", s->n_loss_points > 0, s->last_loss);
    line_number("elapsed_s", 1, s->elapsed_s);
    line_number("samples_per_s", s->has_rate, s->samples_per_s);
    line_number("us_per_step", s->timed_steps > 0, s->us_per_step);
    line_number("allreduce_us", ranks > 1 && s->timed_steps > 0 &&
                (s->phase_valid & (1u << NN_PHASE_ALLREDUCE)), s->phase_us[NN_PHASE_ALLREDUCE]);
    line_number("eta_s", s->has_rate, s->eta_s);
    printf(", \"loss_points\": %ld, \"epochs_done\": %d, \"steps_per_epoch\": %ld", s->n_loss_points,
           s->n_epoch_results, s->steps_per_epoch);
    if (s->state == NN_JOB_FAILED || s->state == NN_JOB_DIVERGED) {
        printf(", \"error\": ");
        cli_json_string(stdout, s->error);
    }
    const nn_epoch_result *e = &s->last_epoch;
    line_number("val_loss", s->n_epoch_results > 0, e->val_loss);
    line_number("val_accuracy", s->n_epoch_results > 0 && e->has_accuracy, e->val_accuracy);
    line_number("timed_steps", 1, (double)s->timed_steps);
    /* the measured step's parts (nnlab/observe.h), which add up to us_per_step:
     * what a reader of the lines draws as the phase bar */
    nn_step_measure m;
    nn_measure_step(s, &m);
    printf(", \"parts\": {");
    for (int p = 0, first = 1; p < NN_STEP_PARTS; p++)
        if (m.part_valid & (1u << p)) {
            printf("%s\"%s_us\": %.6g", first ? "" : ", ", nn_step_part_key(p), m.part_us[p]);
            first = 0;
        }
    printf("}}\n");
    fflush(stdout);
}

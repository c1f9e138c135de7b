/* src/cli/cli_common.h - what every headless command shares: the one option
 * table (every command's options, the GPU switches included, parsed by one
 * parser that knows which command takes which), the job a command's options
 * describe, and the helpers (a preset by name, a whole number, JSON text,
 * a device's calibration). The commands (cli.h) include this; it includes
 * none of them. */
#ifndef NNLAB_CLI_COMMON_H
#define NNLAB_CLI_COMMON_H

#include <stdio.h>

#include "nnlab/calibrate.h"
#include "nnlab/engine.h"
#include "nnlab/preset.h"
#include "nnlab/profile.h"
#include "nnlab/sweep.h"

/* A run a signal ended exits with 128 + the signal's number, as a shell
 * reports it: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP. */
enum { CLI_EXIT_USAGE = 2, CLI_EXIT_SIGNAL = 128, CLI_EXIT_CANCELLED = 130 };

/* The commands that take options, as bits: an option names those that take it. */
enum cli_command {
    CLI_TRAIN = 1 << 0, CLI_BENCH = 1 << 1, CLI_CALIBRATE = 1 << 2, CLI_EXPLAIN = 1 << 3, CLI_SWEEP = 1 << 4,
    CLI_JACOBIAN = 1 << 5, CLI_LESSON = 1 << 6
};

typedef struct cli_options {
    enum cli_command command;
    const char *preset, *device, *devices, *batches, *data;
    const char *gpu_profile;     /* explain, sweep: the profile a GPU not here is predicted with */
    const char *save_profile;    /* calibrate: save the GPU's calibration as this profile */
    const char *method, *dump;   /* jacobian: --method, --dump DIR */
    long val;                    /* jacobian: --val (0: the preset's) */
    int jac_sweep;               /* jacobian: --sweep */
    long batch, epochs, steps, warmup, threads, log_every;
    double lr;
    unsigned long long seed;
    int json, csv, quiet, no_validation, recalibrate;
    int data_on_device, pinned, sync_every_step, graph, tf32;   /* the GPU switches */
    int deterministic;           /* --deterministic (else the preset's) */
    int way_switch_given;        /* a GPU switch that picks a way was given (--graph, --no-graph,
                                    --[no-]data-on-device, --pinned, --sync-every-step): sweep
                                    measures that one way instead of eager and graph side by side */
    const char *svg;             /* train, sweep: --svg FILE */
    int race_predicted;          /* train: --race-predicted */
    int race;                    /* train: --race, the CPU against the GPU's ways (cli_race.c) */
    int with_pytorch;            /* bench: PyTorch's step beside nnlab's (cli_torch.h) */
    const char *lesson;          /* lesson: NAME or FILE (its one argument) */
    const char *answers;         /* lesson: --answers KEYS, one per question */
    const char *handout;         /* lesson: --handout DIR */
    int list;                    /* lesson: --list */
    long ranks;                  /* explain: --ranks N (0: not given); train, bench: N ranks
                                    started under mpirun (cli_ranks.c) */
    const char *ranks_list;      /* sweep: --ranks 1,2,4 (NULL: not given) */
    const char *link;            /* explain, sweep: --link NAME|FILE; calibrate: --link NAME,
                                    the link profile measured (cli_calibrate_link.c) */
    const char *transport;       /* train, bench, calibrate: --transport shm|tcp, how mpirun's
                                    ranks sum (NULL: Open MPI's choice) */
    int no_overlap;              /* explain; train, bench: --no-overlap (else the
                                    preset's [train] overlap) */
    const char *save_params;     /* train: --save-params FILE.npy */
    int progress_lines;          /* train, bench: every rank's progress as JSON lines on stdout */
} cli_options;

/* Parses the arguments after the command name (argv[0] is the command) with
 * the options `command` takes, their defaults first (bench, explain and
 * sweep: 20 timed steps after 3 untimed; the engine's switches). 0, 1 when
 * --help was asked for (printed), or -1 after a one-line error. */
int cli_parse(enum cli_command command, int argc, char **argv, cli_options *o);

/* A command whose working state is too large for the stack (sweeps,
 * explanations, calibrations: hundreds of KB): parses argv as cli_parse,
 * then runs run(o, state) on size zeroed bytes taken from the heap and
 * freed after. Returns the command's exit status ("out of memory" said). */
typedef int (*cli_heap_command)(cli_options *o, void *state);
int cli_run_on_heap(enum cli_command command, int argc, char **argv, size_t size, cli_heap_command run);

/* The job the options describe for preset p (bench for every command but
 * train), checked against the GPU switches' rule: 0, or -1 after a
 * one-line error. */
int cli_job_config(const cli_options *o, const nn_preset *p, nn_job_config *cfg);

/* --steps and --warmup: the engine counts steps in long but epochs in int,
 * so a run of more steps than INT_MAX could not say which epoch it is in. */
#define CLI_MAX_STEPS 2147483647L

/* A whole-number option in min..max, or a one-line error naming the option,
 * the value as typed and the range. */
int cli_parse_range(const char *opt, const char *arg, long min, long max, long *out);
/* A preset by name or path, or a one-line error. */
int cli_load_preset(const char *name, nn_preset *p);
/* s as a JSON string, quotes included. */
void cli_json_string(FILE *f, const char *s);
/* "  \"key\": value," (null when not finite; no comma when last). */
void cli_json_number(const char *key, double v, int last);
/* The same for a float, with the nine digits that give back its every bit. */
void cli_json_float(const char *key, double v, int last);
/* ", \"key\": v" inside an object, v with `digits` significant digits, or
 * null where the figure is not there (!valid). */
void cli_json_optional(const char *key, int valid, double v, int digits);
/* "  \"conv_algorithms\": [...],": the convolution algorithms a GPU job
 * chose (nn_job_conv_algorithms); nothing when n is 0. */
void cli_conv_algorithms_json(const nn_conv_algorithm_info *a, int n);

/* The cached calibration of device, measured (and cached) when there is
 * none or remeasure is set; progress on stderr unless quiet. 0, or -1
 * after a one-line error. */
int cli_calibration(const char *device, int threads, int remeasure, int quiet, nn_calibration *cal);
/* The same at a thread count of its own (threads > 0), cached apart under it
 * (nn_calibration_get_threads: as a rank's); the device's own cache, the free
 * cores' calibration, is left as it is. */
int cli_calibration_threads(const char *device, int threads, int remeasure, int quiet, nn_calibration *cal);

/* The GPU profile the options name (--gpu-profile), else the default one
 * (nn_profile_default_name). 0, or -1: with required, after a one-line
 * error; without, quietly (the caller goes on without a profile). */
int cli_gpu_profile(const cli_options *o, int required, nn_gpu_profile *out);

/* "calibration": {...} of JSON output (no comma after it): where the
 * figures come from, their age in seconds and their quality. */
void cli_calibration_json(const nn_calibration *c);
/* cli_cpu.c: what the CPU devices run on (nnlab/device.h's nn_cpu_facts): `"cpu": {...}`
 * for --json, or the text lines; gflops_1thread, a calibration's one-core
 * sgemm rate, is set beside the core's estimated FMA peak (0: not measured). */
void cli_cpu_facts_json(double gflops_1thread);
void cli_cpu_facts_text(double gflops_1thread);
/* The BLIS line of cli_cpu_facts_text alone (`nnlab devices`). */
void cli_blis_text(void);
/* The CPU calibration's choice of library per product shape: the
 * "product_call_us" and "products" members of calibrate --json (no comma
 * around), and a line of calibrate's text. */
void cli_products_json(const nn_calibration *c);
void cli_products_text(const nn_calibration *c);

/* Runs a prepared sweep to its end, one point after the other; each failed
 * point's reason on stderr, and unless quiet which point runs. */
void cli_run_sweep(nn_sweep *sw, int quiet);
/* The sweep's devices as `nnlab sweep` adds them for o->devices (each
 * with its calibration, measured first when not cached; a GPU not here
 * predicted for the profile, three ways; the CPU's framework way beside a
 * GPU): 0, or the exit status after one line. */
int cli_sweep_add_devices(nn_sweep *sw, const cli_options *o);

/* The size check before a job starts (nn_job_check_sizes): 0, or -1 after
 * a one-line error naming batch_option ("--batch") or, NULL, the preset's
 * key ("x.ini: [train] batch ="). The caller exits CLI_EXIT_USAGE. */
int cli_check_sizes(const char *batch_option, const char *preset, const nn_job_config *cfg);

/* cli_predict.c: before a job predicted to take over NN_JOB_ASK_S, its
 * prediction on stderr (unless quiet); the job then runs. */
void cli_say_prediction(const nn_job_config *cfg, int quiet);

/* What was printed reached stdout (flushed, no error, closed) and stderr
 * (no error): rc, or 1 when rc was 0 (after a one-line error where stdout
 * failed). */
int cli_output_checked(int rc);

void cli_usage(FILE *f);
void cli_sleep_ms(long ms);

#endif

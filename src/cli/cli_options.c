/* src/cli/cli_options.c - the one option table every command parses with
 * (getopt_long over the entries that command takes), the defaults, and each
 * option's value checked strictly, and the usage text; see cli_common.h
 * (cli_parse, cli_usage). */
#include "config.h"

#include "cli_common.h"

#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnlab/device.h"
#include "util.h"

/* ---- the option table --------------------------------------------------------------- */

enum {
    OPT_PRESET = 256, OPT_DEVICE, OPT_DEVICES, OPT_BATCH, OPT_BATCHES, OPT_EPOCHS, OPT_STEPS, OPT_WARMUP,
    OPT_LR, OPT_SEED, OPT_THREADS, OPT_DATA, OPT_LOG_EVERY, OPT_NO_VALIDATION, OPT_QUIET, OPT_JSON, OPT_CSV,
    OPT_RECALIBRATE, OPT_DATA_ON_DEVICE, OPT_NO_DATA_ON_DEVICE, OPT_PINNED, OPT_SYNC_EVERY_STEP, OPT_GRAPH,
    OPT_NO_GRAPH, OPT_TF32, OPT_DETERMINISTIC, OPT_GPU_PROFILE, OPT_SAVE_PROFILE, OPT_VAL, OPT_METHOD, OPT_DUMP, OPT_JAC_SWEEP, OPT_HELP,
    OPT_WITH_PYTORCH, OPT_ANSWERS, OPT_HANDOUT, OPT_LIST,
    OPT_SAVE_PARAMS
};

/* slides: an SVG of the result, a predicted GPU beside the CPU */
enum { OPT_SVG = 512, OPT_RACE_PREDICTED, OPT_RACE };
/* data-parallel ranks (nnlab/link.h) */
enum { OPT_RANKS = 768, OPT_LINK, OPT_NO_OVERLAP, OPT_TRANSPORT, OPT_PROGRESS_LINES };

/* --ranks: more than a cluster of this many is not a lab's question */
#define MAX_RANKS 4096L

#define OVERSUBSCRIBE 4         /* --threads above this many times the cores: refused */

#define RUNS (CLI_TRAIN | CLI_BENCH)
#define JOBS (CLI_TRAIN | CLI_BENCH | CLI_EXPLAIN | CLI_SWEEP)
#define ALL (JOBS | CLI_CALIBRATE | CLI_JACOBIAN)
#define JAC CLI_JACOBIAN

typedef struct cli_option_spec {
    const char *name;
    int has_arg;
    char short_name;             /* 0: long only */
    int id;
    unsigned commands;           /* enum cli_command bits: who takes it */
} cli_option_spec;

static const cli_option_spec option_table[] = {
    { "preset", 1, 'p', OPT_PRESET, JOBS | JAC },
    { "device", 1, 'd', OPT_DEVICE, RUNS | CLI_CALIBRATE | CLI_EXPLAIN | JAC },
    { "devices", 1, 0, OPT_DEVICES, CLI_SWEEP },
    { "batch", 1, 'b', OPT_BATCH, RUNS | CLI_EXPLAIN },
    { "batches", 1, 0, OPT_BATCHES, CLI_SWEEP },
    { "epochs", 1, 'e', OPT_EPOCHS, RUNS },
    { "steps", 1, 's', OPT_STEPS, JOBS | CLI_LESSON },
    { "warmup", 1, 'w', OPT_WARMUP, JOBS | CLI_LESSON },
    { "lr", 1, 'l', OPT_LR, RUNS },
    { "seed", 1, 0, OPT_SEED, RUNS | JAC },
    { "threads", 1, 't', OPT_THREADS, ALL | CLI_LESSON },
    { "data", 1, 0, OPT_DATA, RUNS },
    { "log-every", 1, 0, OPT_LOG_EVERY, RUNS },
    { "no-validation", 0, 0, OPT_NO_VALIDATION, RUNS },
    { "quiet", 0, 'q', OPT_QUIET, RUNS | JAC | CLI_LESSON },
    { "json", 0, 'j', OPT_JSON, ALL },
    { "csv", 0, 0, OPT_CSV, CLI_SWEEP },
    { "recalibrate", 0, 0, OPT_RECALIBRATE, CLI_EXPLAIN | CLI_SWEEP | CLI_LESSON },
    { "gpu-profile", 1, 0, OPT_GPU_PROFILE, CLI_TRAIN | CLI_EXPLAIN | CLI_SWEEP | JAC | CLI_LESSON },
    { "svg", 1, 0, OPT_SVG, CLI_TRAIN | CLI_SWEEP },
    { "race-predicted", 0, 0, OPT_RACE_PREDICTED, CLI_TRAIN },
    { "race", 0, 0, OPT_RACE, CLI_TRAIN },
    { "ranks", 1, 0, OPT_RANKS, CLI_EXPLAIN | CLI_SWEEP | RUNS | CLI_CALIBRATE },
    { "link", 1, 0, OPT_LINK, CLI_EXPLAIN | CLI_SWEEP | CLI_CALIBRATE },
    { "transport", 1, 0, OPT_TRANSPORT, RUNS | CLI_CALIBRATE },
    { "progress-lines", 0, 0, OPT_PROGRESS_LINES, RUNS },
    { "no-overlap", 0, 0, OPT_NO_OVERLAP, CLI_EXPLAIN | CLI_SWEEP | RUNS },
    { "save-profile", 1, 0, OPT_SAVE_PROFILE, CLI_CALIBRATE },
    { "val", 1, 0, OPT_VAL, JAC },
    { "method", 1, 'm', OPT_METHOD, JAC },
    { "dump", 1, 0, OPT_DUMP, JAC },
    { "sweep", 0, 0, OPT_JAC_SWEEP, JAC },
    /* the GPU switches (nn_job_config) */
    { "data-on-device", 0, 0, OPT_DATA_ON_DEVICE, JOBS },
    { "no-data-on-device", 0, 0, OPT_NO_DATA_ON_DEVICE, JOBS },
    { "pinned", 0, 0, OPT_PINNED, JOBS },
    { "sync-every-step", 0, 0, OPT_SYNC_EVERY_STEP, JOBS },
    { "graph", 0, 0, OPT_GRAPH, JOBS | JAC },
    { "no-graph", 0, 0, OPT_NO_GRAPH, JOBS | JAC },
    { "tf32", 0, 0, OPT_TF32, JOBS | JAC },
    { "deterministic", 0, 0, OPT_DETERMINISTIC, JOBS | JAC },
    /* PyTorch's step beside nnlab's (cli_torch.c) */
    { "with-pytorch", 0, 0, OPT_WITH_PYTORCH, CLI_BENCH | CLI_SWEEP },
    /* a guided lesson (cli_lesson.c) */
    { "answers", 1, 'a', OPT_ANSWERS, CLI_LESSON },
    { "handout", 1, 0, OPT_HANDOUT, CLI_LESSON },
    { "list", 0, 0, OPT_LIST, CLI_LESSON },
    /* data-parallel ranks of train and bench (cli_ranks.c) */
    { "save-params", 1, 0, OPT_SAVE_PARAMS, CLI_TRAIN },
    { "help", 0, 'h', OPT_HELP, ALL | CLI_LESSON },
};
#define N_OPTIONS (int)(sizeof option_table / sizeof option_table[0])

/* getopt's tables for the options `command` takes. */
static void getopt_tables(enum cli_command command, struct option *longopts, char *shortopts)
{
    int n = 0, k = 0;
    for (int i = 0; i < N_OPTIONS; i++) {
        const cli_option_spec *s = &option_table[i];
        if (!(s->commands & command))
            continue;
        longopts[n++] = (struct option){ s->name, s->has_arg ? required_argument : no_argument, NULL, s->id };
        if (s->short_name) {
            shortopts[k++] = s->short_name;
            if (s->has_arg)
                shortopts[k++] = ':';
        }
    }
    longopts[n] = (struct option){ NULL, 0, NULL, 0 };
    shortopts[k] = '\0';
}

/* The id of a short option (getopt returns the letter). */
static int option_id(int c)
{
    for (int i = 0; i < N_OPTIONS; i++)
        if (option_table[i].short_name && option_table[i].short_name == c)
            return option_table[i].id;
    return c;
}

static void defaults(enum cli_command command, cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->command = command;
    o->seed = 1;
    o->steps = command == CLI_TRAIN ? 0 : 20;
    o->warmup = 3;
    o->data_on_device = 1;           /* the engine's defaults (nn_job_config_init) */
    o->graph = 1;
}

int cli_parse_range(const char *opt, const char *arg, long min, long max, long *out)
{
    long v;
    if (nn_parse_long(arg, &v) != 0)
        fprintf(stderr, "nnlab: --%s %s: not a whole number (allowed: %ld..%ld)\n", opt, arg, min, max);
    else if (v < min || v > max)
        fprintf(stderr, "nnlab: --%s %s: must be in %ld..%ld\n", opt, arg, min, max);
    else {
        *out = v;
        return 0;
    }
    return -1;
}

/* An option that sets a preset value: the preset loader's rule and range
 * (nn_preset_set_value), so a number a preset may not hold is refused here
 * too, with the value as typed. */
static int preset_number(const char *opt, const char *section, const char *key, const char *arg,
                         nn_preset *scratch)
{
    char why[NN_ERR_LEN];
    if (nn_preset_set_value(scratch, section, key, arg, why, sizeof why) == 0)
        return 0;
    fprintf(stderr, "nnlab: --%s %s: %s\n", opt, arg, why);
    return -1;
}

/* The cores this machine has online (what the cpu device counts). */
static long online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* --threads N: up to the cores as asked; up to 4x the cores taken as the
 * cores, with a warning (more threads than cores only wait for each other:
 * steps measured 100x slower); beyond that a mistake, refused. */
static int threads_option(const char *arg, long *threads)
{
    long cores = online_cores(), v;
    if (nn_parse_long(arg, &v) != 0 || v < 1 || v > OVERSUBSCRIBE * cores) {
        fprintf(stderr, "nnlab: --threads %s: %s 1..%ld (at most %d x the %ld cores here)\n", arg,
                nn_parse_long(arg, &v) != 0 ? "not a whole number, allowed:" : "must be in",
                OVERSUBSCRIBE * cores, OVERSUBSCRIBE, cores);
        return -1;
    }
    if (v > cores)
        fprintf(stderr, "nnlab: warning: --threads %s: this machine has %ld cores; using %ld\n",
                arg, cores, cores);
    *threads = v > cores ? cores : v;
    return 0;
}

/* An option with a number: 0, or -1 after the error. */
static int number_option(int id, const char *arg, cli_options *o)
{
    nn_preset scratch;
    long v;
    int rc;
    nn_preset_defaults(&scratch);
    switch (id) {
    case OPT_BATCH:
        rc = preset_number("batch", "train", "batch", arg, &scratch);
        o->batch = scratch.batch;
        return rc;
    case OPT_EPOCHS:
        rc = preset_number("epochs", "train", "epochs", arg, &scratch);
        o->epochs = scratch.epochs;
        return rc;
    case OPT_LOG_EVERY:
        rc = preset_number("log-every", "train", "log_every", arg, &scratch);
        o->log_every = scratch.log_every;
        return rc;
    case OPT_LR:
        rc = preset_number("lr", "optimizer", "lr", arg, &scratch);
        o->lr = scratch.lr;
        return rc;
    case OPT_VAL:
        rc = preset_number("val", "task", "val", arg, &scratch);
        o->val = scratch.task_val;
        return rc;
    case OPT_STEPS: return cli_parse_range("steps", arg, 1, CLI_MAX_STEPS, &o->steps);
    case OPT_WARMUP: return cli_parse_range("warmup", arg, 0, CLI_MAX_STEPS, &o->warmup);
    case OPT_THREADS: return threads_option(arg, &o->threads);
    case OPT_RANKS: return cli_parse_range("ranks", arg, 1, MAX_RANKS, &o->ranks);
    case OPT_SEED:
        if (cli_parse_range("seed", arg, 0, LONG_MAX, &v) != 0)
            return -1;
        o->seed = (unsigned long long)v;
        return 0;
    }
    return -1;
}

/* One option; 0, 1 for --help, -1 after an error. */
/* A GPU switch given: the sweep runs the one way it picks (0, for take_option). */
static int way_switch(cli_options *o)
{
    o->way_switch_given = 1;
    return 0;
}

static int take_option(int id, const char *arg, cli_options *o)
{
    switch (id) {
    case OPT_PRESET: o->preset = arg; return 0;
    case OPT_DEVICE:
        if (!arg[0]) {                   /* not "the preset's device": say so */
            fprintf(stderr, "nnlab: --device: empty (expected cpu, cpu-ref or gpu)\n");
            return -1;
        }
        o->device = arg;
        return 0;
    case OPT_DEVICES: o->devices = arg; return 0;
    case OPT_BATCHES: o->batches = arg; return 0;
    case OPT_GPU_PROFILE: o->gpu_profile = arg; return 0;
    case OPT_SAVE_PROFILE: o->save_profile = arg; return 0;
    case OPT_METHOD: o->method = arg; return 0;
    case OPT_DUMP: o->dump = arg; return 0;
    case OPT_JAC_SWEEP: o->jac_sweep = 1; return 0;
    case OPT_DATA:
        if (!arg[0]) {                   /* a variable that expanded to nothing */
            fprintf(stderr, "nnlab: --data: empty path\n");
            return -1;
        }
        o->data = arg;
        return 0;
    case OPT_NO_VALIDATION: o->no_validation = 1; return 0;
    case OPT_QUIET: o->quiet = 1; return 0;
    case OPT_JSON: o->json = 1; return 0;
    case OPT_CSV: o->csv = 1; return 0;
    case OPT_SVG:
        if (!arg[0]) {
            fprintf(stderr, "nnlab: --svg: empty path\n");
            return -1;
        }
        o->svg = arg;
        return 0;
    case OPT_RACE_PREDICTED: o->race_predicted = 1; return 0;
    case OPT_RACE: o->race = 1; return 0;
    case OPT_NO_OVERLAP: o->no_overlap = 1; return 0;
    case OPT_PROGRESS_LINES: o->progress_lines = 1; return 0;
    case OPT_RANKS:
        if (o->command != CLI_SWEEP)
            break;                   /* explain's one count: a number */
        if (!arg[0]) {
            fprintf(stderr, "nnlab: --ranks: empty (expected rank counts like 1,2,4)\n");
            return -1;
        }
        o->ranks_list = arg;
        return 0;
    case OPT_LINK:
        if (!arg[0]) {
            fprintf(stderr, "nnlab: --link: empty (a link profile's name or file)\n");
            return -1;
        }
        o->link = arg;
        return 0;
    case OPT_TRANSPORT:
        if (strcmp(arg, "shm") != 0 && strcmp(arg, "tcp") != 0) {
            fprintf(stderr, "nnlab: --transport %s: expected shm (shared memory) or tcp\n", nn_safe(arg));
            return -1;
        }
        o->transport = arg;
        return 0;
    case OPT_RECALIBRATE: o->recalibrate = 1; return 0;
    case OPT_DATA_ON_DEVICE: o->data_on_device = 1; return way_switch(o);
    case OPT_NO_DATA_ON_DEVICE: o->data_on_device = 0; return way_switch(o);
    case OPT_PINNED: o->pinned = 1; return way_switch(o);
    case OPT_SYNC_EVERY_STEP: o->sync_every_step = 1; return way_switch(o);
    case OPT_GRAPH: o->graph = 1; return way_switch(o);
    case OPT_NO_GRAPH: o->graph = 0; return way_switch(o);
    case OPT_TF32: o->tf32 = 1; return 0;
    case OPT_DETERMINISTIC: o->deterministic = 1; return 0;
    case OPT_WITH_PYTORCH: o->with_pytorch = 1; return 0;
    case OPT_ANSWERS: o->answers = arg; return 0;
    case OPT_LIST: o->list = 1; return 0;
    case OPT_HANDOUT:
        if (!arg[0]) {
            fprintf(stderr, "nnlab: --handout: empty folder name\n");
            return -1;
        }
        o->handout = arg;
        return 0;
    case OPT_SAVE_PARAMS:
        if (!arg[0]) {
            fprintf(stderr, "nnlab: --save-params: empty path\n");
            return -1;
        }
        o->save_params = arg;
        return 0;
    case OPT_HELP: cli_usage(stdout); return 1;
    case '?': return -1;             /* getopt has said what was wrong */
    }
    return number_option(id, arg, o);
}

int cli_parse(enum cli_command command, int argc, char **argv, cli_options *o)
{
    struct option longopts[N_OPTIONS + 1];
    char shortopts[2 * N_OPTIONS + 1];
    int c;
    defaults(command, o);
    getopt_tables(command, longopts, shortopts);
    optind = 1;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        int rc = take_option(option_id(c), optarg, o);
        if (rc != 0)
            return rc;
    }
    if (command == CLI_LESSON && optind < argc)
        o->lesson = argv[optind++];  /* its one argument: the lesson's NAME or FILE */
    if (optind < argc) {
        fprintf(stderr, "nnlab: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    return 0;
}

/* ---- usage ---------------------------------------------------------------------------- */

/* The commands, and the options of the table above by the commands
 * that take them: two texts, printed as one. */
static const char usage_commands[] =
    "usage: nnlab                    open the lab (the ncurses front end)\n"
    "       nnlab COMMAND [OPTIONS]\n"
    "\n"
    "Commands:\n"
    "  train    train a preset headless; progress on stderr, --json result on stdout\n"
    "  bench    time training steps only (data in memory); median us/step\n"
    "  presets  list the presets found, with descriptions and paths\n"
    "  devices  list the backends and whether each is available here\n"
    "  calibrate [--device D] [--threads N] [--save-profile NAME] [--json]\n"
    "           measure sgemm GFLOP/s, bandwidth, op and copy latency, each repeated (cached);\n"
    "           --save-profile: keep a GPU's calibration as a GPU profile (needs a GPU)\n"
    "  calibrate --link NAME [--ranks N] [--transport shm|tcp] [--json]\n"
    "           time all-reduces of 4 bytes to 16 MiB on N MPI ranks (default 2), fit the\n"
    "           ring's bandwidth and hop, save them as the link profile NAME (measured)\n"
    "  explain --preset P [--device D] [--batch N] [--steps N] [--warmup N] [--recalibrate]\n"
    "          [--gpu-profile NAME] [--ranks N [--link NAME] [--no-overlap]] [--json]\n"
    "           predicted vs measured (mean) step time, the regime and what would help;\n"
    "           without a GPU, --device gpu is predicted for a GPU profile;\n"
    "           --ranks: N data-parallel ranks at this batch each, their all-reduce priced\n"
    "           over a link profile (predicted)\n"
    "  sweep --preset P [--devices cpu,gpu] [--batches 1,4,...] [--steps N] [--warmup N]\n"
    "        [--recalibrate] [--gpu-profile NAME] [--csv|--json]\n"
    "           time a batch-size sweep per device; doubling ratios and the crossover;\n"
    "           a GPU not here is predicted for a GPU profile, three ways\n"
    "  sweep --preset P --ranks 1,2,4 [--batches 4,64,256] [--link NAME] [--no-overlap] [--csv|--json]\n"
    "           N data-parallel ranks (MPI) at each batch each against one rank at N x B:\n"
    "           measured steps, speedup, efficiency, the all-reduce; where ranks stop paying\n"
    "  lesson [NAME|FILE] [--answers KEYS] [--handout DIR] [--gpu-profile NAME] [--steps N] [--list]\n"
    "           a guided lesson headless: each step's text, question, the answer given (one key\n"
    "           a question, '-' for none), what this machine measured or predicted (labelled)\n"
    "           and the write-up's verdict; --handout: DIR/NAME.md and the charts' SVGs\n"
    "  jacobian --preset P [--val N] [--method M] [--device D] [--seed N] [--dump DIR] [--json]\n"
    "           the Jacobian of a preset's tanh MLP ([task] kind = jacobian) at val inputs:\n"
    "           time, rows of J per second, FLOPs and the share on J's zero blocks, the\n"
    "           largest difference from another method; -m: rows, batched, per-sample or\n"
    "           forward (default: the preset's); --dump: weights, input, J as .npy files;\n"
    "           --sweep: each method's predicted time over val on the CPU and the GPU\n"
    "           (a GPU not here: --gpu-profile's), and where the GPU overtakes the CPU\n"
    "\n";

static const char usage_options[] =
    "Options of train and bench:\n"
    "  -p, --preset NAME|FILE   preset name or .ini path (required; explain, sweep too)\n"
    "  -d, --device DEV         cpu, cpu-ref or gpu (default: the preset's; calibrate, explain too)\n"
    "  -b, --batch N            batch size (default: the preset's; explain too)\n"
    "  -e, --epochs N           epochs (train; default: the preset's)\n"
    "  -s, --steps N            stop after N steps (bench, explain, sweep: timed steps, default 20)\n"
    "  -w, --warmup N           bench, explain, sweep: untimed steps first (default 3)\n"
    "  -l, --lr X               learning rate (default: the preset's)\n"
    "      --seed N             random seed for weights, order and synthetic data (default 1)\n"
    "  -t, --threads N          CPU threads for the cpu device (default: the free cores; every command)\n"
    "      --data DIR           data folder (MNIST-format IDX or CIFAR-10 binary)\n"
    "      --log-every N        steps between progress lines (default: the preset's)\n"
    "      --no-validation      skip validation at the end of each epoch\n"
    "      --svg FILE           train, sweep: the curves (or the sweep, crossovers marked)\n"
    "                           as an SVG for a slide\n"
    "      --race-predicted     train on the CPU against a GPU predicted for --gpu-profile\n"
    "                           (default t4): its progress at each epoch, its time at the end\n"
    "      --race               train on the CPU, then on the GPU eager and graph (one\n"
    "                           way when a GPU switch is given); no GPU here: exit 2\n"
    "  -q, --quiet              no progress lines\n"
    "  -j, --json               print the result as JSON on stdout (every command)\n"
    "      --with-pytorch       bench: PyTorch's step of the same network beside nnlab's;\n"
    "                           sweep: the framework way measured with PyTorch\n"
    "                           (needs a python3 that imports torch; $NNLAB_PYTHON picks one)\n"
    "      --ranks N            data-parallel on N ranks through mpirun (--batch is each\n"
    "                           rank's; under mpirun or srun a process joins by itself; on\n"
    "                           GPUs one rank a GPU, the sums by NCCL)\n"
    "      --no-overlap         ranks: one sum after the backward, not buckets during it\n"
    "      --transport shm|tcp  ranks: how mpirun's ranks sum, shared memory or TCP (default:\n"
    "                           Open MPI's choice; calibrate --link too)\n"
    "      --progress-lines     every rank (or the one job) prints its progress as one line\n"
    "                           of JSON on stdout, a few times a second and at its end\n"
    "      --save-params FILE   train: the trained parameters as a .npy file (float32)\n"
    "\n"
    "Options of sweep and explain:\n"
    "      --devices D1,D2      sweep: the devices, in order (default: cpu)\n"
    "      --batches N1,N2      sweep: the batch sizes (default: 1,2,4,...,4096)\n"
    "      --csv                sweep: the points as CSV\n"
    "      --recalibrate        measure the device again instead of using its cached calibration\n"
    "      --gpu-profile NAME   the GPU profile (`nnlab devices` lists them; default t4, or\n"
    "                           $NNLAB_GPU_PROFILE) a GPU not here is predicted with, and a\n"
    "                           GPU that is here is compared with\n"
    "      --ranks N            explain: N data-parallel ranks, each at --batch (predicted);\n"
    "                           sweep: the rank counts, e.g. 1,2,4 (measured)\n"
    "      --link NAME|FILE     explain: the link profile the ranks' all-reduce is priced\n"
    "                           over (default: shm on the CPU, pcie4 on a GPU)\n"
    "      --no-overlap         explain: the all-reduce after backward, not during it\n"
    "\n"
    "GPU switches of train, bench, explain and sweep (each changes only what it names):\n"
    "      --data-on-device     upload the data set once, gather batches there (default)\n"
    "      --no-data-on-device  copy each batch from host memory instead\n"
    "      --pinned             ... from page-locked memory (with --no-data-on-device)\n"
    "      --sync-every-step    read the loss back every step, like loss.item()\n"
    "      --graph              replay one recorded step as a CUDA graph (default)\n"
    "      --no-graph           launch every operation of every step\n"
    "      --tf32               allow TF32 tensor-core math (default: FP32)\n"
    "      --deterministic      deterministic convolution algorithms only: a run repeats\n"
    "                           bit for bit (default: the fastest measured)\n"
    "\n"
    "  -h, --help               this help\n"
    "  -V, --version            the version\n"
    "\n"
    "See nnlab(1) and nnlab.ini(5).\n";

void cli_usage(FILE *f)
{
    fputs(usage_commands, f);
    fputs(usage_options, f);
}

/* src/cli/main.c - the headless front end: nnlab train | bench | presets | devices.
 * It drives the same engine API as the ncurses lab: start a job, poll its
 * snapshot, print progress on stderr and results (JSON) on stdout. */
#include "config.h"

#include <getopt.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "lab.h"
#include "nnlab/preset.h"
#include "util.h"

enum { EXIT_USAGE = 2, EXIT_CANCELLED = 130 };

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: nnlab                    open the lab (the ncurses front end)\n"
        "       nnlab COMMAND [OPTIONS]\n"
        "\n"
        "Commands:\n"
        "  train    train a preset headless; progress on stderr, --json result on stdout\n"
        "  bench    time training steps only (data in memory); median us/step\n"
        "  presets  list the presets found, with descriptions and paths\n"
        "  devices  list the backends and whether each is available here\n"
        "  calibrate [--device D] [--json]\n"
        "           measure sgemm GFLOP/s, bandwidth, op and copy latency (cached)\n"
        "  explain --preset P [--device D] [--batch N] [--json]\n"
        "           predicted vs measured step time, the regime and what would help\n"
        "  sweep --preset P [--devices cpu,gpu] [--batches 1,4,...] [--steps N] [--csv|--json]\n"
        "           time a batch-size sweep per device; doubling ratios and the crossover\n"
        "\n"
        "Options of train and bench:\n"
        "  -p, --preset NAME|FILE   preset name or .ini path (required)\n"
        "  -d, --device DEV         cpu, cpu-ref or gpu (default: the preset's)\n"
        "  -b, --batch N            batch size (default: the preset's)\n"
        "  -e, --epochs N           epochs (train; default: the preset's)\n"
        "  -s, --steps N            stop after N steps (bench: timed steps, default 20)\n"
        "  -w, --warmup N           bench: untimed steps first (default 3)\n"
        "  -l, --lr X               learning rate (default: the preset's)\n"
        "      --seed N             random seed for weights, order and synthetic data (default 1)\n"
        "  -t, --threads N          CPU threads for the cpu device (default: all cores)\n"
        "      --data DIR           data folder (MNIST-format IDX or CIFAR-10 binary)\n"
        "      --log-every N        steps between progress lines (default: the preset's)\n"
        "      --no-validation      skip validation at the end of each epoch\n"
        "  -q, --quiet              no progress lines\n"
        "  -j, --json               print the result as one JSON object on stdout\n"
        "\n"
        "GPU switches of train and bench (each changes only what it names):\n"
        "      --data-on-device     upload the data set once, gather batches there (default)\n"
        "      --no-data-on-device  copy each batch from host memory instead\n"
        "      --pinned             ... from page-locked memory (with --no-data-on-device)\n"
        "      --sync-every-step    read the loss back every step, like loss.item()\n"
        "      --graph              replay one recorded step as a CUDA graph (default)\n"
        "      --no-graph           launch every operation of every step\n"
        "      --tf32               allow TF32 tensor-core math (default: FP32)\n"
        "\n"
        "  -h, --help               this help\n"
        "  -V, --version            the version\n"
        "\n"
        "See nnlab(1) and nnlab.ini(5).\n");
}

/* ---- options -------------------------------------------------------------- */

typedef struct cli_options {
    const char *preset;
    const char *device;
    const char *data;
    long batch, epochs, steps, warmup, threads, log_every;
    double lr;
    unsigned long long seed;
    int json, quiet, no_validation;
    int data_on_device, pinned, sync_every_step, graph, tf32;   /* the GPU switches */
} cli_options;

/* getopt codes of the long-only options */
enum {
    OPT_DATA_ON_DEVICE = 256, OPT_NO_DATA_ON_DEVICE, OPT_PINNED, OPT_SYNC_EVERY_STEP,
    OPT_GRAPH, OPT_NO_GRAPH, OPT_TF32
};

int nn_cli_parse_count(const char *opt, const char *arg, long min, long *out)
{
    long v;
    if (nn_parse_long(arg, &v) != 0 || v < min) {
        fprintf(stderr, "nnlab: --%s %s: expected a whole number >= %ld\n", opt, arg, min);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_options(int argc, char **argv, int bench, cli_options *o)
{
    static const struct option longopts[] = {
        { "preset", required_argument, NULL, 'p' },  { "device", required_argument, NULL, 'd' },
        { "batch", required_argument, NULL, 'b' },   { "epochs", required_argument, NULL, 'e' },
        { "steps", required_argument, NULL, 's' },   { "warmup", required_argument, NULL, 'w' },
        { "lr", required_argument, NULL, 'l' },      { "seed", required_argument, NULL, 'S' },
        { "threads", required_argument, NULL, 't' }, { "data", required_argument, NULL, 'D' },
        { "log-every", required_argument, NULL, 'L' }, { "no-validation", no_argument, NULL, 'N' },
        { "quiet", no_argument, NULL, 'q' },         { "json", no_argument, NULL, 'j' },
        { "data-on-device", no_argument, NULL, OPT_DATA_ON_DEVICE },
        { "no-data-on-device", no_argument, NULL, OPT_NO_DATA_ON_DEVICE },
        { "pinned", no_argument, NULL, OPT_PINNED },
        { "sync-every-step", no_argument, NULL, OPT_SYNC_EVERY_STEP },
        { "graph", no_argument, NULL, OPT_GRAPH },   { "no-graph", no_argument, NULL, OPT_NO_GRAPH },
        { "tf32", no_argument, NULL, OPT_TF32 },
        { "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 }
    };
    int c;
    long v;
    double d;
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->steps = bench ? 20 : 0;
    o->warmup = 3;
    o->threads = 0;
    o->data_on_device = 1;
    o->graph = 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:d:b:e:s:w:l:t:qjh", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': o->preset = optarg; break;
        case 'd': o->device = optarg; break;
        case 'D': o->data = optarg; break;
        case 'b': if (nn_cli_parse_count("batch", optarg, 1, &o->batch)) return -1; break;
        case 'e': if (nn_cli_parse_count("epochs", optarg, 1, &o->epochs)) return -1; break;
        case 's': if (nn_cli_parse_count("steps", optarg, 1, &o->steps)) return -1; break;
        case 'w': if (nn_cli_parse_count("warmup", optarg, 0, &o->warmup)) return -1; break;
        case 't': if (nn_cli_parse_count("threads", optarg, 1, &o->threads)) return -1; break;
        case 'L': if (nn_cli_parse_count("log-every", optarg, 1, &o->log_every)) return -1; break;
        case 'S':
            if (nn_cli_parse_count("seed", optarg, 0, &v)) return -1;
            o->seed = (unsigned long long)v;
            break;
        case 'l':
            if (nn_parse_double(optarg, &d) != 0 || !(d > 0)) {
                fprintf(stderr, "nnlab: --lr %s: expected a positive number\n", optarg);
                return -1;
            }
            o->lr = d;
            break;
        case 'N': o->no_validation = 1; break;
        case OPT_DATA_ON_DEVICE: o->data_on_device = 1; break;
        case OPT_NO_DATA_ON_DEVICE: o->data_on_device = 0; break;
        case OPT_PINNED: o->pinned = 1; break;
        case OPT_SYNC_EVERY_STEP: o->sync_every_step = 1; break;
        case OPT_GRAPH: o->graph = 1; break;
        case OPT_NO_GRAPH: o->graph = 0; break;
        case OPT_TF32: o->tf32 = 1; break;
        case 'q': o->quiet = 1; break;
        case 'j': o->json = 1; break;
        case 'h': usage(stdout); exit(0);
        default: return -1;   /* getopt has said what was wrong */
        }
    }
    if (optind < argc) {
        fprintf(stderr, "nnlab: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (!o->preset) {
        fprintf(stderr, "nnlab: --preset NAME|FILE is required (see `nnlab presets`)\n");
        return -1;
    }
    return 0;
}

int nn_cli_load_preset(const char *name, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    if (!name) {
        fprintf(stderr, "nnlab: --preset NAME|FILE is required (see `nnlab presets`)\n");
        return -1;
    }
    if (nn_preset_find(name, path, sizeof path, err, sizeof err) != 0 ||
        nn_preset_load(path, p, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return -1;
    }
    return 0;
}

static void fill_config(nn_job_config *cfg, const nn_preset *p, const cli_options *o, int bench)
{
    nn_job_config_init(cfg, p);
    if (o->device)
        nn_strlcpy(cfg->device, o->device, sizeof cfg->device);
    if (o->data)
        nn_strlcpy(cfg->data_dir, o->data, sizeof cfg->data_dir);
    cfg->batch = (int)o->batch;
    cfg->epochs = (int)o->epochs;
    cfg->steps = o->steps;
    cfg->lr = o->lr;
    cfg->seed = o->seed;
    cfg->threads = (int)o->threads;
    cfg->log_every = o->log_every;
    cfg->no_validation = o->no_validation;
    cfg->bench = bench;
    cfg->warmup = bench ? o->warmup : 0;
    cfg->data_on_device = o->data_on_device;
    cfg->pinned = o->pinned;
    cfg->sync_every_step = o->sync_every_step;
    cfg->graph = o->graph;
    cfg->tf32 = o->tf32;
}

/* ---- progress and results ------------------------------------------------------ */

static void print_new_progress(nn_job *job, long *seen_points, int *seen_epochs, int quiet)
{
    nn_loss_point pts[64];
    nn_epoch_result ep[16];
    long n;
    int m;
    while ((n = nn_job_loss_points(job, *seen_points, pts, 64)) > 0) {
        for (long i = 0; i < n && !quiet; i++)   /* the write-ups' format */
            fprintf(stderr, "[%d, %5ld] loss: %.3f\n", pts[i].epoch, pts[i].step_in_epoch, pts[i].loss);
        *seen_points += n;
    }
    while ((m = nn_job_epoch_results(job, *seen_epochs, ep, 16)) > 0) {
        for (int i = 0; i < m && !quiet; i++) {
            if (ep[i].has_accuracy)
                fprintf(stderr, "[%d] validation loss: %.4f  accuracy: %.4f\n", ep[i].epoch,
                        ep[i].val_loss, ep[i].val_accuracy);
            else
                fprintf(stderr, "[%d] validation loss: %.4f\n", ep[i].epoch, ep[i].val_loss);
        }
        *seen_epochs += m;
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void json_number(const char *key, double v, int last)
{
    printf("  \"%s\": ", key);
    if (isfinite(v))
        printf("%.6g", v);
    else
        printf("null");
    printf(last ? "\n" : ",\n");
}

/* bench reports the median step, unless steps were not waited for one by
 * one (a GPU without --sync-every-step): then a step's own time is only the
 * time to issue it, and the mean, which includes every wait, is the rate. */
static int bench_uses_median(const nn_snapshot *s)
{
    return !s->steps_async;
}

static const char *json_bool(int v)
{
    return v ? "true" : "false";
}

/* "name_us": value or null, for a set of phase times with validity bits */
static void json_phases(const char *key, const double *us, unsigned valid)
{
    printf("  \"%s\": {", key);
    for (int p = 0; p < NN_PHASE_COUNT; p++) {
        printf("%s\"%s_us\": ", p ? ", " : "", nn_phase_name(p));
        if (valid & (1u << p))
            printf("%.3f", us[p]);
        else
            printf("null");
    }
    printf("},\n");
}

/* The GPU part of the result: switches as applied, the per-step accounting
 * counted by the backend, and how the phases were timed. null where a field
 * does not apply (a CPU device). */
static void print_json_gpu(const nn_snapshot *s)
{
    printf("  \"phase_clock\": \"%s\",\n", s->phase_device_clock ? "device" : "host");
    /* a graph job issues forward, backward and optimizer as one launch */
    unsigned host_valid = (1u << NN_PHASE_COUNT) - 1;
    if (s->has_graph_us)
        host_valid &= ~((1u << NN_PHASE_FORWARD) | (1u << NN_PHASE_BACKWARD) | (1u << NN_PHASE_OPTIMIZER));
    json_phases("host_phases", s->host_phase_us, host_valid);
    printf("  \"graph_us\": ");
    if (s->has_graph_us)
        printf("%.3f,\n", s->graph_us);
    else
        printf("null,\n");
    if (s->has_switches)
        printf("  \"switches\": {\"data_on_device\": %s, \"pinned\": %s, \"sync_every_step\": %s, "
               "\"graph\": %s, \"tf32\": %s},\n", json_bool(s->data_on_device), json_bool(s->pinned),
               json_bool(s->sync_every_step), json_bool(s->graph), json_bool(s->tf32));
    else
        printf("  \"switches\": {\"data_on_device\": null, \"pinned\": null, \"sync_every_step\": %s, "
               "\"graph\": null, \"tf32\": null},\n", json_bool(s->sync_every_step));
    if (s->has_counters && s->timed_steps > 0) {
        const nn_step_counters *c = &s->per_step;
        printf("  \"per_step\": {\"launches\": %.4g, \"kernels\": %.4g, \"library_calls\": %.4g, "
               "\"graph_launches\": %.4g, \"graph_nodes\": %.4g, \"h2d_copies\": %.4g, "
               "\"h2d_bytes\": %.6g, \"d2h_copies\": %.4g, \"d2h_bytes\": %.6g, \"syncs\": %.4g},\n",
               c->launches, c->kernels, c->library_calls, c->graph_launches, c->graph_nodes,
               c->h2d_copies, c->h2d_bytes, c->d2h_copies, c->d2h_bytes, c->syncs);
    } else {
        printf("  \"per_step\": null,\n");
    }
    printf("  \"note\": ");
    nn_cli_json_string(s->note);
    printf(",\n");
}

static void print_json(const nn_job_config *cfg, const nn_snapshot *s, int bench)
{
    const nn_epoch_result *e = s->n_epoch_results > 0 ? &s->last_epoch : NULL;
    printf("{\n  \"command\": \"%s\",\n  \"preset\": ", bench ? "bench" : "train");
    nn_cli_json_string(cfg->preset.name);
    printf(",\n  \"device\": ");
    nn_cli_json_string(s->device);
    printf(",\n  \"state\": \"%s\",\n", nn_job_state_name(s->state));
    printf("  \"batch\": %d,\n  \"epochs\": %d,\n  \"steps\": %ld,\n", s->batch, s->epochs, s->step);
    printf("  \"data\": {\"name\": ");
    nn_cli_json_string(s->data_name);
    printf(", \"real\": %s, \"description\": ", s->data_synthetic ? "false" : "true");
    nn_cli_json_string(s->data_desc);
    printf("},\n  \"seed\": %llu,\n  \"threads\": %d,\n", (unsigned long long)cfg->seed, s->threads);
    json_number("lr", cfg->lr ? cfg->lr : cfg->preset.lr, 0);
    json_number("params", (double)s->n_params, 0);
    json_number("prepare_s", s->prepare_s, 0);
    json_number("wall_s", s->elapsed_s, 0);
    json_number("timed_steps", (double)s->timed_steps, 0);
    json_number("us_per_step", bench && bench_uses_median(s) ? s->us_per_step_median : s->us_per_step, 0);
    printf("  \"us_per_step_stat\": \"%s\",\n", bench && bench_uses_median(s) ? "median" : "mean");
    json_number("us_per_step_mean", s->us_per_step, 0);
    json_number("samples_per_s", s->samples_per_s, 0);
    json_number("train_loss", s->n_loss_points > 0 ? s->last_loss : NAN, 0);
    json_number("val_loss", e ? e->val_loss : NAN, 0);
    json_number("val_accuracy", e && e->has_accuracy ? e->val_accuracy : NAN, 0);
    print_json_gpu(s);
    /* last, without a trailing comma: the phases, null where not measured */
    printf("  \"phases\": {");
    for (int p = 0; p < NN_PHASE_COUNT; p++) {
        printf("%s\"%s_us\": ", p ? ", " : "", nn_phase_name(p));
        if (s->phase_valid & (1u << p))
            printf("%.3f", s->phase_us[p]);
        else
            printf("null");
    }
    printf("}\n}\n");
}

static void print_summary(const nn_snapshot *s, int bench)
{
    fprintf(stderr, "%s on %s, batch %d: %ld steps in %.2f s (%.0f samples/s)\n",
            bench ? "bench" : "trained", s->device, s->batch, s->step, s->elapsed_s, s->samples_per_s);
    int median = bench && bench_uses_median(s);
    fprintf(stderr, "  %.1f us/step%s:", median ? s->us_per_step_median : s->us_per_step,
            median ? " (median)" : " (mean)");
    for (int p = 0; p < NN_PHASE_COUNT; p++)
        if (s->phase_valid & (1u << p))
            fprintf(stderr, " %s %.1f", nn_phase_name(p), s->phase_us[p]);
    if (s->has_graph_us)
        fprintf(stderr, " graph %.1f", s->graph_us);
    if (s->phase_device_clock)
        fprintf(stderr, " (device clock; sync is host waiting)");
    fprintf(stderr, "\n");
    if (s->has_counters && s->timed_steps > 0)
        fprintf(stderr, "  per step: %.1f launches, %.1f copies to the device (%.0f bytes), "
                "%.1f back, %.1f waits\n", s->per_step.launches, s->per_step.h2d_copies,
                s->per_step.h2d_bytes, s->per_step.d2h_copies, s->per_step.syncs);
    if (s->note[0])
        fprintf(stderr, "  note: %s\n", s->note);
    if (s->n_epoch_results > 0 && s->last_epoch.has_accuracy)
        fprintf(stderr, "  validation: loss %.4f, accuracy %.4f\n", s->last_epoch.val_loss,
                s->last_epoch.val_accuracy);
    else if (s->n_epoch_results > 0)
        fprintf(stderr, "  validation: loss %.4f\n", s->last_epoch.val_loss);
}

/* ---- commands ----------------------------------------------------------------------- */

static int run_job(int argc, char **argv, int bench)
{
    cli_options o;
    nn_preset p;
    nn_job_config cfg;
    nn_snapshot s;
    char err[NN_ERR_LEN];
    long seen_points = 0;
    int seen_epochs = 0, announced = 0;

    if (parse_options(argc, argv, bench, &o) != 0)
        return EXIT_USAGE;
    if (nn_cli_load_preset(o.preset, &p) != 0)
        return EXIT_USAGE;
    fill_config(&cfg, &p, &o, bench);
    if (nn_job_switches_check(&cfg, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        return EXIT_USAGE;
    }
    nn_job *job = nn_job_start(&cfg, err, sizeof err);
    if (!job) {
        fprintf(stderr, "nnlab: %s\n", err);
        return EXIT_USAGE;
    }
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    for (;;) {
        nn_job_snapshot(job, &s);
        if (!announced && s.state != NN_JOB_PREPARING && s.state != NN_JOB_FAILED) {
            if (!o.quiet)
                fprintf(stderr, "%s: %s on %s, batch %d, %ld steps; data: %s\n", p.name,
                        bench ? "bench" : "training", s.device, s.batch, s.total_steps, s.data_desc);
            announced = 1;
        }
        print_new_progress(job, &seen_points, &seen_epochs, o.quiet);
        if (s.state == NN_JOB_DONE || s.state == NN_JOB_FAILED || s.state == NN_JOB_CANCELLED)
            break;
        if (interrupted)
            nn_job_cancel(job);
        sleep_ms(20);
    }
    nn_job_wait(job);
    print_new_progress(job, &seen_points, &seen_epochs, o.quiet);
    nn_job_snapshot(job, &s);
    nn_job_free(job);
    if (s.state == NN_JOB_FAILED) {
        fprintf(stderr, "nnlab: %s\n", s.error);
        return EXIT_FAILURE;
    }
    if (!o.quiet || s.state == NN_JOB_DONE)
        print_summary(&s, bench);
    if (o.json)
        print_json(&cfg, &s, bench);
    if (s.state == NN_JOB_CANCELLED) {
        fprintf(stderr, "nnlab: cancelled after %ld steps\n", s.step);
        return EXIT_CANCELLED;
    }
    return 0;
}

static int cmd_presets(int argc, char **argv)
{
    nn_preset_entry *list;
    char err[NN_ERR_LEN];
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "nnlab: presets takes no arguments\n");
        return EXIT_USAGE;
    }
    list = calloc(256, sizeof *list);
    if (!list) {
        fprintf(stderr, "nnlab: out of memory\n");
        return EXIT_FAILURE;
    }
    int n = nn_preset_list(list, 256, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "nnlab: %s\n", err);
        free(list);
        return EXIT_FAILURE;
    }
    for (int i = 0; i < n; i++) {
        const nn_preset_entry *e = &list[i];
        printf("%-20s %s%s\n", e->name, e->error[0] ? "BROKEN: " : "",
               e->error[0] ? e->error : e->description);
        printf("%-20s %s%s%s\n", "", e->path, e->user ? " (yours)" : "",
               e->shadowed ? " (hidden by your preset of the same name)" : "");
    }
    if (n == 0)
        printf("no presets found (looked in your folder and %s)\n", nn_preset_system_dir());
    free(list);
    return 0;
}

/* Every device nnlab knows, available or not, with the device or the reason:
 * for the GPU, the module's state (not built, not found, a library missing)
 * or the probe's (no driver, driver too old, no device). */
static int cmd_devices(void)
{
    nn_device_status st[NN_MAX_DEVICES];
    int n = nn_devices_list(st, NN_MAX_DEVICES);
    for (int i = 0; i < n; i++) {
        if (!st[i].available)
            printf("%-8s unavailable: %s\n", st[i].name, st[i].why);
        else if (st[i].description[0])
            printf("%-8s available: %s; %s\n", st[i].name, st[i].description, st[i].summary);
        else
            printf("%-8s available: %s\n", st[i].name, st[i].summary);
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* Only the character type follows the environment: numbers always parse
     * and print in the C locale. */
    setlocale(LC_CTYPE, "");
    if (argc < 2)
        return nn_lab_main();   /* no command: the ncurses lab (ui/) */
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("%s\n", PACKAGE_STRING);
        return 0;
    }
    if (!strcmp(cmd, "train"))
        return run_job(argc - 1, argv + 1, 0);
    if (!strcmp(cmd, "bench"))
        return run_job(argc - 1, argv + 1, 1);
    if (!strcmp(cmd, "presets"))
        return cmd_presets(argc - 1, argv + 1);
    if (!strcmp(cmd, "devices"))
        return cmd_devices();
    if (!strcmp(cmd, "calibrate"))
        return nn_cli_calibrate(argc - 1, argv + 1);
    if (!strcmp(cmd, "explain"))
        return nn_cli_explain(argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep"))
        return nn_cli_sweep(argc - 1, argv + 1);
    fprintf(stderr, "nnlab: unknown command '%s' (try nnlab --help)\n", cmd);
    return EXIT_USAGE;
}

/* src/cli/main.c - nnlab's entry point: the lab without a command (ui/),
 * else the command named (cli.h: train and bench in cli_train.c, calibrate
 * in cli_analyze.c, explain in cli_explain.c, sweep in cli_sweep.c, presets and devices
 * here). Every command's options are the one table of cli_common.c. */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_common.h"
#include "lab.h"
#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/preset.h"
#include "nnlab/profile.h"
#include "util.h"

/* The presets `nnlab presets` lists at most (each entry holds its path and
 * its error: a few KB); more are counted, not listed. */
#define CLI_MAX_PRESETS 256

int nn_cli_presets(int argc, char **argv)
{
    nn_preset_entry *list;
    char err[NN_ERR_LEN];
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "nnlab: presets takes no arguments\n");
        return CLI_EXIT_USAGE;
    }
    list = calloc(CLI_MAX_PRESETS, sizeof *list);
    if (!list) {
        fprintf(stderr, "nnlab: out of memory\n");
        return EXIT_FAILURE;
    }
    int left = 0, n = nn_preset_list(list, CLI_MAX_PRESETS, &left, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "nnlab: %s\n", nn_safe(err));
        free(list);
        return EXIT_FAILURE;
    }
    for (int i = 0; i < n; i++) {
        const nn_preset_entry *e = &list[i];
        printf("%-20s %s%s\n", nn_safe(e->name), e->error[0] ? "BROKEN: " : "",
               nn_safe(e->error[0] ? e->error : e->description));
        printf("%-20s %s%s%s\n", "", nn_safe(e->path), e->user ? " (yours)" : "",
               e->shadowed ? " (hidden by your preset of the same name)" : "");
    }
    if (left > 0)
        printf("... and %d more presets, not listed (at most %d are)\n", left, CLI_MAX_PRESETS);
    if (n == 0)
        printf("no presets found (looked in your folder and %s)\n", nn_safe(nn_preset_system_dir()));
    free(list);
    return 0;
}

/* The GPU profiles `nnlab devices` lists at most (each entry holds the
 * profile, its path and its error: about 5 KB). */
#define CLI_MAX_PROFILES 64

/* The GPU profiles: what a GPU not here is predicted with (the default
 * marked), the user's first; a broken file with its error. 0, or -1 after
 * a one-line error. */
static int print_profiles(void)
{
    nn_profile_entry *list = calloc(CLI_MAX_PROFILES, sizeof *list);
    const char *def = nn_profile_default_name();
    char stem[NN_NAME_LEN];
    if (!list) {
        fprintf(stderr, "nnlab: out of memory\n");
        return -1;
    }
    int n = nn_profile_list(list, CLI_MAX_PROFILES);
    nn_profile_stem(def, stem, sizeof stem);
    /* the columns as wide as their longest entry ("geforce-940m", "GeForce 940M") */
    int id_w = 2, name_w = 4;
    for (int i = 0; i < n; i++) {
        int id_len = (int)strlen(nn_safe(list[i].p.id)), name_len = (int)strlen(nn_safe(list[i].p.name));
        id_w = id_len > id_w ? id_len : id_w;
        name_w = !list[i].error[0] && name_len > name_w ? name_len : name_w;
    }
    printf("\nGPU profiles (every figure from one is predicted, never measured; --gpu-profile NAME):\n");
    for (int i = 0; i < n; i++) {
        const nn_profile_entry *e = &list[i];
        const char *origin = e->p.user ? (e->p.measured ? "yours, measured" : "yours") : "shipped";
        if (e->error[0]) {
            printf("  %-*s BROKEN: %s\n", id_w, nn_safe(e->p.id), nn_safe(e->error));
            continue;
        }
        printf("  %-*s %-*s %s%s%s: %s\n", id_w, nn_safe(e->p.id), name_w, nn_safe(e->p.name), origin,
               !e->shadowed && !strcmp(e->p.id, stem) ? ", the default" : "",
               e->shadowed ? ", hidden by yours" : "", nn_safe(e->p.description));
    }
    if (n == 0)
        printf("  none found (looked in your folder and %s)\n", nn_safe(nn_profile_system_dir()));
    free(list);
    return 0;
}

/* Every device nnlab knows, available or not, with the device or the reason:
 * for the GPU, the module's state (not built, not found, a library missing)
 * or the probe's (no driver, driver too old, no device); then the GPU
 * profiles. */
int nn_cli_devices(int argc, char **argv)
{
    nn_device_status st[NN_MAX_DEVICES];
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "nnlab: devices takes no arguments\n");
        return CLI_EXIT_USAGE;
    }
    int n = nn_devices_list(st, NN_MAX_DEVICES);
    for (int i = 0; i < n; i++) {
        if (!st[i].available)
            printf("%-8s unavailable: %s\n", st[i].name, nn_safe(st[i].why));
        else if (st[i].description[0])
            printf("%-8s available: %s; %s\n", st[i].name, nn_safe(st[i].description),
                   nn_safe(st[i].summary));
        else
            printf("%-8s available: %s\n", st[i].name, nn_safe(st[i].summary));
    }
    cli_blis_text();             /* the cpu device's second BLAS library */
    return print_profiles() == 0 ? 0 : EXIT_FAILURE;
}

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    { "train", nn_cli_train },         { "bench", nn_cli_bench },     { "presets", nn_cli_presets },
    { "devices", nn_cli_devices },     { "calibrate", nn_cli_calibrate },
    { "explain", nn_cli_explain },     { "sweep", nn_cli_sweep },     { "jacobian", nn_cli_jacobian },
    { "lesson", nn_cli_lesson },
};

static int run_command(int argc, char **argv)
{
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        cli_usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("%s\n", PACKAGE_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "nnlab: unknown command '%s' (try nnlab --help)\n", cmd);
    return CLI_EXIT_USAGE;
}

/* What a command or the lab needs beyond what the program maps as it
 * starts, before any job (which checks its own needs): a preset list, a
 * preset's file, the lab's windows. Under ulimit -v of 45 MB nnlab starts,
 * then a preset's reader ran out of memory ("out of memory", not saying
 * what was needed). */
#define CLI_START_ROOM (8.0 * 1024 * 1024)

/* Under an address-space limit that leaves less than CLI_START_ROOM: one
 * line saying what is needed, and 1; else 0. */
static int check_start_room(void)
{
    struct rlimit rl;
    double room = nn_address_room();
    if (room < 0 || room >= CLI_START_ROOM || getrlimit(RLIMIT_AS, &rl) != 0)
        return 0;
    char limit[16], left[16], used[16], need[16], at_least[16];
    nn_format_bytes((double)rl.rlim_cur, limit, sizeof limit);
    nn_format_bytes(room, left, sizeof left);
    nn_format_bytes((double)rl.rlim_cur - room, used, sizeof used);
    nn_format_bytes(CLI_START_ROOM, need, sizeof need);
    nn_format_bytes((double)rl.rlim_cur - room + CLI_START_ROOM, at_least, sizeof at_least);
    fprintf(stderr, "nnlab: address space: ulimit -v of %s leaves %s beyond the %s nnlab maps as it starts; "
            "it needs ~%s: raise ulimit -v to %s or more\n", limit, left, used, need, at_least);
    return 1;
}

int main(int argc, char **argv)
{
    /* Only the character type follows the environment: numbers always parse
     * and print in the C locale. */
    setlocale(LC_CTYPE, "");
    int asks_version = argc == 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
                                     !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
    if (!asks_version && check_start_room() != 0)
        return CLI_EXIT_USAGE;         /* a refusal before any job, as a job too large is */
    if (argc < 2)
        return nn_lab_main();   /* no command: the ncurses lab (ui/), which owns the terminal */
    return cli_output_checked(run_command(argc, argv));
}

/* src/cli/cli_calibrate_link.c - `nnlab calibrate --link NAME [--ranks N]
 * [--transport shm|tcp]`: all-reduces of 4 bytes to 16 MiB timed on N MPI
 * ranks (nn_link_calibrate), the ring's bandwidth and hop fitted to them,
 * printed beside each size's measured time, and saved as the user's link
 * profile NAME, marked measured, which `explain --ranks`, `sweep --ranks`
 * and the lesson's ranks steps then price over (docs/ranks.md). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_calibrate_link.h"
#include "cli_ranks.h"
#include "nnlab/device.h"
#include "nnlab/link.h"
#include "nnlab/link_measure.h"
#include "util.h"

/* Beyond this the ring's two figures summarise the times loosely (Open MPI
 * changes protocol with the size: eager, then rendezvous), which is said. */
#define LOOSE_FIT 0.25

/* NAME must be a file's stem as it is: it becomes NAME.ini in the user's folder. */
static int name_ok(const char *name)
{
    char stem[NN_NAME_LEN];
    if (nn_file_stem(name, "", stem, sizeof stem) && strcmp(stem, name) == 0)
        return 1;
    fprintf(stderr, "nnlab: calibrate --link %s: a link profile's name is letters, digits, '-' and '_' "
            "(it becomes NAME.ini)\n", nn_safe(name));
    return 0;
}

static int options_ok(cli_options *o)
{
    if (!name_ok(o->link))
        return 0;
    if (o->device && nn_device_kind_of(o->device).gpu) {
        fprintf(stderr, "nnlab: calibrate --link times the CPU ranks' MPI sums; a GPU's link is "
                "priced from its profile (nnlab explain --ranks N --link nvlink4 ...)\n");
        return 0;
    }
    if (o->save_profile) {
        fprintf(stderr, "nnlab: calibrate --link and --save-profile: one at a time\n");
        return 0;
    }
    if (o->ranks == 0)
        o->ranks = 2;
    if (o->ranks < 2) {
        fprintf(stderr, "nnlab: calibrate --link: --ranks %ld: a link joins 2 ranks or more\n", o->ranks);
        return 0;
    }
    return 1;
}

static void print_text(const nn_link_measurement *m, const nn_ranks_info *info)
{
    const nn_link *l = &m->link;
    printf("link: %d ranks on %s over %s (%s), measured\n", m->ranks, nn_safe(info->host),
           nn_safe(info->transport), nn_safe(info->library));
    printf("  %12s  %12s  %12s\n", "bytes", "measured us", "ring fit us");
    for (int i = 0; i < m->n; i++)
        printf("  %12.0f  %12.2f  %12.2f\n", m->bytes[i], m->us[i], nn_allreduce_us(l, m->ranks, m->bytes[i]));
    printf("  the ring's fit (measured): bandwidth %.3g GB/s each way, %.3g us a hop; "
           "rms error %.0f%%\n", l->bandwidth_gbps, l->hop_us, 100 * m->rms_error);
    if (m->rms_error > LOOSE_FIT)
        printf("  the two figures summarise these times loosely (MPI changes protocol with the "
               "size): a prediction over them is rough\n");
}

static void print_json(const nn_link_measurement *m, const nn_ranks_info *info, const char *path)
{
    const nn_link *l = &m->link;
    printf("{\n  \"link\": ");
    cli_json_string(stdout, l->id);
    printf(",\n  \"measured\": true,\n  \"ranks\": %d,\n  \"host\": ", m->ranks);
    cli_json_string(stdout, info->host);
    printf(",\n  \"transport\": ");
    cli_json_string(stdout, info->transport);
    printf(",\n  \"library\": ");
    cli_json_string(stdout, info->library);
    printf(",\n  \"saved\": ");
    cli_json_string(stdout, path);
    printf(",\n  \"sums\": [");
    for (int i = 0; i < m->n; i++)
        printf("%s\n    {\"bytes\": %.0f, \"us\": %.6g, \"fit_us\": %.6g}", i ? "," : "", m->bytes[i], m->us[i],
               nn_allreduce_us(l, m->ranks, m->bytes[i]));
    printf("\n  ],\n");
    cli_json_number("bandwidth_gbps", l->bandwidth_gbps, 0);
    cli_json_number("hop_us", l->hop_us, 0);
    cli_json_number("rms_error", m->rms_error, 1);
    printf("}\n");
}

/* The user's NAME.ini, written whole or not at all. 0, or -1 said. */
static int save(const nn_link_measurement *m, const nn_ranks_info *info, char *path, size_t len)
{
    char dir[NN_PATH_LEN], err[NN_ERR_LEN], origin[NN_TEXT_LEN + 256], when[32];
    time_t now = time(NULL);
    const char *name = m->link.id;
    if (nn_link_user_dir(dir, sizeof dir) != 0 || (size_t)snprintf(path, len, "%s/%s.ini", dir, name) >= len) {
        fprintf(stderr, "nnlab: calibrate --link %s: no config folder (neither XDG_CONFIG_HOME nor HOME)\n",
                name);
        return -1;
    }
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&now));
    snprintf(origin, sizeof origin, "measured by `nnlab calibrate --link %s` on %.60s, %s: %d ranks "
             "over %.60s, %.80s; the ring's fit, rms error %.0f%%", name, info->host, when, m->ranks,
             info->transport, info->library, 100 * m->rms_error);
    if (nn_link_save(path, &m->link, origin, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: calibrate --link %s: %s\n", name, err);
        return -1;
    }
    return 0;
}

int cli_calibrate_link(cli_options *o, int argc, char **argv)
{
    nn_ranks_info info;
    nn_link_measurement m;
    char err[NN_ERR_LEN], path[NN_PATH_LEN];
    int rc;
    if (!options_ok(o))
        return CLI_EXIT_USAGE;
    if (cli_ranks_start(argc, argv, o, "cpu", &info, &rc))
        return rc;                   /* mpirun ran this command on its ranks, or a rank failed to join */
    if (info.size < 2) {
        fprintf(stderr, "nnlab: calibrate --link: this process is one rank alone (%d): start 2 or more\n",
                info.size);
        return CLI_EXIT_USAGE;
    }
    if (nn_link_calibrate(&m, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: rank %d: calibrate --link: %s\n", info.rank, err);
        return EXIT_FAILURE;
    }
    if (info.rank > 0)
        return 0;                    /* rank 0 speaks and saves */
    nn_strlcpy(m.link.id, o->link, sizeof m.link.id);
    if (save(&m, &info, path, sizeof path) != 0)
        return EXIT_FAILURE;
    if (o->json)
        print_json(&m, &info, path);
    else {
        print_text(&m, &info);
        printf("saved as the link profile %s (measured): %s\n  price ranks over it: nnlab explain "
               "--preset P --ranks %d --link %s\n", m.link.id, nn_safe(path), m.ranks, m.link.id);
    }
    return 0;
}

/* bench/memest.c - the memory estimate of a preset's job, in bytes, with
 * its parts: what `nnlab train` (or `nnlab jacobian`) checks against the
 * memory available, unrounded (the CLI's message rounds to 0.1 GB), for
 * bench/estimate-peak.sh to set beside a measured peak. Built on demand:
 * `make bench/memest`.
 *
 *   bench/memest PRESET [THREADS]
 *
 * prints one line: host=B params=B batch=B workspace=B data=B fixed=B (bytes). */
#include <stdio.h>
#include <stdlib.h>

#include "nnlab/engine.h"
#include "nnlab/preset.h"

int main(int argc, char **argv)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_preset p;
    nn_job_config cfg;
    nn_memory_estimate m;
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s PRESET [THREADS]\n", argv[0]);
        return 2;
    }
    if (nn_preset_find(argv[1], path, sizeof path, err, sizeof err) != 0
        || nn_preset_load(path, &p, err, sizeof err) != 0) {
        fprintf(stderr, "memest: %s\n", err);
        return 1;
    }
    nn_job_config_init(&cfg, &p);
    cfg.threads = argc == 3 ? atoi(argv[2]) : 1;
    nn_job_memory_estimate(&cfg, &m);
    if (printf("host=%.0f params=%.0f batch=%.0f workspace=%.0f data=%.0f fixed=%.0f\n", m.host,
               m.params, m.batch, m.workspace, m.data, m.fixed) < 0)
        return 1;
    return 0;
}

/* src/analysis/model/export_files.c - the export folder and a pair of
 * export files (CSV and JSON) written both or neither, for every job's
 * exports: a run's and a sweep's (report/export.c), the Jacobian's
 * (src/jobs/jacobian/jacobian_export.c). Below the jobs, since a job kind
 * writes through it; it knows no job, only the fillers it is given. */
#include "nnlab/export.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "util.h"
#include "xdg.h"

int nn_export_dir(char *dir, size_t len)
{
    return nn_xdg_dir(NN_XDG_DATA, "exports", dir, len);
}

/* "NAME-run-20261124-021500": the preset's name comes from its file
 * (`name = ../../tmp/x`), so it passes nn_file_stem: the files stay in the
 * folder chosen. */
static int export_stem(const char *preset, const char *what, long long now, char *stem, size_t len)
{
    time_t t = (time_t)now;
    struct tm tm;
    char when[32] = "", name[NN_STEM_MAX + 1];
    nn_file_stem(preset, "nnlab", name, sizeof name);
    if (localtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
    int n = snprintf(stem, len, "%s-%s-%s", name, what, when);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int nn_export_pair(const char *dir, const char *preset, const char *what, long long now, nn_export_fill_fn csv,
                   nn_export_fill_fn json, const void *ctx, char *csv_path, char *json_path, size_t path_len,
                   char *err, size_t err_len)
{
    char stem[NN_NAME_LEN + 64];
    if (export_stem(preset, what, now, stem, sizeof stem) != 0)
        return nn_errorf(err, err_len, "export: nothing to write");
    int a = snprintf(csv_path, path_len, "%s/%s.csv", dir, stem);
    int b = snprintf(json_path, path_len, "%s/%s.json", dir, stem);
    if (a < 0 || b < 0 || (size_t)a >= path_len || (size_t)b >= path_len)
        return nn_errorf(err, err_len, "export folder %s: path too long", dir);
    if (nn_write_atomic(csv_path, csv, ctx, err, err_len) != 0)
        return -1;
    if (nn_write_atomic(json_path, json, ctx, err, err_len) != 0) {
        unlink(csv_path);            /* both or neither: a CSV alone would pass for a whole export */
        return -1;
    }
    return 0;
}


/* src/analysis/model/export_files.c - the export folder and a pair of
 * export files (CSV and JSON) written both or neither, for every job's
 * exports: a run's and a sweep's (report/export.c), the Jacobian's
 * (src/jobs/jacobian/jacobian_export.c). Below the jobs, since a job kind
 * writes through it; it knows no job, only the fillers it is given. */
#include "nnlab/export.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The JSON of a pair whose CSV never came: a writer killed between the two
 * renames (nn_export_pair) left STEM.json, and its CSV's temp
 * ".STEM.csv" NN_TEMP_INFIX "XXXXXX", now stale. The JSON goes (the temp
 * goes in nn_atomic_prepare's clean-up), so a pair is both or neither once
 * the folder is written again. Best effort. */
static void remove_unpaired(const char *dir)
{
    static const char tail[] = ".csv" NN_TEMP_INFIX;
    DIR *d = opendir(dir);
    struct dirent *e;
    time_t now = time(NULL);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name, *at = strstr(name, tail);
        struct stat st;
        char csv[NN_NAME_LEN + 80], json[NN_NAME_LEN + 80];
        if (name[0] != '.' || !at || strlen(at) != sizeof tail - 1 + 6 ||
            fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            now - st.st_mtime <= NN_STALE_TEMP_S)
            continue;
        int stem = (int)(at - name - 1);
        if ((size_t)snprintf(csv, sizeof csv, "%.*s.csv", stem, name + 1) >= sizeof csv ||
            (size_t)snprintf(json, sizeof json, "%.*s.json", stem, name + 1) >= sizeof json)
            continue;
        if (fstatat(dirfd(d), csv, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT &&
            fstatat(dirfd(d), json, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            (void)unlinkat(dirfd(d), json, 0);
    }
    closedir(d);
}

/* Both files are written whole to temps first; then the JSON is renamed,
 * then the CSV: a CSV is never seen without its JSON. A kill between the
 * renames leaves the JSON and the CSV's temp, which the next export into
 * the folder clears (remove_unpaired). NNLAB_TEST_KILL_BETWEEN_RENAMES=1
 * kills the process there: the tests' way to be that kill. */
static int write_pair(const char *csv_path, const char *json_path, nn_export_fill_fn csv,
                      nn_export_fill_fn json, const void *ctx, char *err, size_t err_len)
{
    nn_atomic_file *f = malloc(2 * sizeof *f);
    int rc = -1;
    if (!f)
        return nn_errorf(err, err_len, "export: out of memory");
    if (nn_atomic_prepare(&f[0], json_path, json, ctx, err, err_len) != 0)
        goto out;
    if (nn_atomic_prepare(&f[1], csv_path, csv, ctx, err, err_len) != 0) {
        nn_atomic_abandon(&f[0]);
        goto out;
    }
    if (nn_atomic_commit(&f[0], err, err_len) != 0) {
        nn_atomic_abandon(&f[1]);
        goto out;
    }
    const char *kill_now = getenv("NNLAB_TEST_KILL_BETWEEN_RENAMES");
    if (kill_now && strcmp(kill_now, "1") == 0)
        raise(SIGKILL);
    if (nn_atomic_commit(&f[1], err, err_len) != 0) {
        unlink(f[0].path);           /* both or neither: a JSON alone would pass for a whole export */
        goto out;
    }
    rc = 0;
out:
    free(f);
    return rc;
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
    remove_unpaired(dir);
    return write_pair(csv_path, json_path, csv, json, ctx, err, err_len);
}

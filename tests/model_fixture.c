/* tests/model_fixture.c - see model_fixture.h. */
#include "model_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnlab/explain.h"
#include "nnlab/preset.h"
#include "nnlab/profile.h"

#define TOLERANCE MODEL_TOLERANCE
#define KNOWN_LIMIT (2 * TOLERANCE)
#define MAX_POINTS MODEL_MAX_POINTS

typedef model_series series;

static const model_known *known_out;

static const char *known_reason(const series *s)
{
    for (size_t i = 0; known_out && known_out[i].preset; i++)
        if (!strcmp(known_out[i].preset, s->preset) && !strcmp(known_out[i].way, s->way))
            return known_out[i].why;
    return NULL;
}

/* Whether points i and i+1 of s contradict each other for any step time
 * growing with the batch (see the top). */
static int contradicting_pair(const series *s, int i)
{
    return i + 1 < s->n && s->us[i] * (1 - TOLERANCE) > s->us[i + 1] * (1 + TOLERANCE);
}

/* The worst error of a series (signed) and its batch: of a contradicting
 * pair, only the nearer point counts. */
static double worst_error(const series *s, const double *rel, int *worst_batch)
{
    double worst = 0;
    for (int i = 0; i < s->n; i++) {
        int j = i;
        if (contradicting_pair(s, i) && fabs(rel[i + 1]) < fabs(rel[i]))
            j = i + 1;
        if (i > 0 && contradicting_pair(s, i - 1))
            continue;                /* counted with its pair */
        if (fabs(rel[j]) > fabs(worst)) {
            worst = rel[j];
            *worst_batch = s->batch[j];
        }
    }
    return worst;
}

/* The number after "key": in [from, to); -1 when absent. */
static double number_after(const char *from, const char *to, const char *key)
{
    const char *k = strstr(from, key);
    return k && k < to ? strtod(k + strlen(key), NULL) : -1;
}

/* One line of the sweep: its tag's preset and the GPU's points. */
static int read_series(const char *line, series *s)
{
    const char *tag = strstr(line, "\"tag\": \""), *p = line, *cals = strstr(line, "\"calibrations\"");
    memset(s, 0, sizeof *s);
    if (!tag || sscanf(tag + 8, "%63s", s->preset) != 1)
        return -1;
    snprintf(s->way, sizeof s->way, "%s", strstr(tag, " eager\"") ? "eager" : "graph");
    /* the points, not the calibrations listed after them */
    while ((p = strstr(p, "{\"device\": \"gpu\"")) != NULL && (!cals || p < cals) && s->n < MAX_POINTS) {
        const char *end = strchr(p, '}');
        if (!end)
            return -1;
        s->batch[s->n] = (int)number_after(p, end, "\"batch\": ");
        s->us[s->n] = number_after(p, end, "\"us_per_step\": ");
        if (s->batch[s->n] <= 0 || !(s->us[s->n] > 0))
            return -1;
        s->n++;
        p = end;
    }
    return s->n > 0 ? 0 : -1;
}

/* The options of the way the sweep measured (see the top). */
static void way_options(const char *way, nn_explain_options *opt)
{
    if (!strcmp(way, "graph")) {
        nn_gpu_way_options(NN_WAY_GRAPH, NULL, opt);
        return;
    }
    memset(opt, 0, sizeof *opt);
    opt->sync_every_step = 1;
}

/* Prints every point; returns the worst error (signed, see worst_error)
 * and its batch; counts the contradicting pairs into pairs. */
static double check_series(const series *s, const nn_calibration *cal, int *worst_batch, int *pairs)
{
    static nn_preset p;
    static nn_explanation e;
    char path[4096], err[512];
    nn_explain_options opt;
    double rel[MAX_POINTS];
    int len = snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, s->preset);
    if (len < 0 || (size_t)len >= sizeof path || nn_preset_load(path, &p, err, sizeof err) != 0) {
        printf("# %s\n", err);
        return INFINITY;
    }
    way_options(s->way, &opt);
    for (int i = 0; i < s->n; i++) {
        nn_explain(&p, s->batch[i], cal, &opt, &e);
        rel[i] = (e.predicted_us - s->us[i]) / s->us[i];
        int paired = contradicting_pair(s, i) || (i > 0 && contradicting_pair(s, i - 1));
        printf("#   %-18s %s batch %4d: measured %8.1f us, predicted %8.1f us, %+6.1f%%%s%s\n", s->preset, s->way,
               s->batch[i], s->us[i], e.predicted_us, 100 * rel[i], fabs(rel[i]) > TOLERANCE ? "  <- beyond" : "",
               paired ? "  (a contradicting pair: the nearer counts)" : "");
        *pairs += contradicting_pair(s, i);
    }
    return worst_error(s, rel, worst_batch);
}

int model_fixture_read(const char *fixture, model_series *out, int max)
{
    static char line[1 << 16];
    char path[4096];
    int n = 0;
    snprintf(path, sizeof path, "%s/%s", FIXTURES_DIR, fixture);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (n < max && fgets(line, sizeof line, f))
        if (read_series(line, &out[n]) == 0)
            n++;
    fclose(f);
    return n;
}

int model_fixture_run(const char *fixture, const char *profile, int want_series, int want_pairs,
                      const char *pairs_what, const model_known *known)
{
    static series all[32];
    char err[512], path[4096];
    int failed = 0;
    nn_gpu_profile prof;
    nn_calibration cal;
    known_out = known;
    int n = model_fixture_read(fixture, all, 32);
    snprintf(path, sizeof path, "%s/%s.ini", PROFILES_SRCDIR, profile);
    if (n < 0 || nn_profile_load(path, &prof, err, sizeof err) != 0) {
        printf("1..1\nnot ok 1 - the fixture and the %s profile load # %s\n", profile, n >= 0 ? err : "no fixture");
        return 1;
    }
    nn_profile_calibration(&prof, &cal);
    printf("1..%d\n", n + 2);
    printf("%s 1 - %d series read from the recorded sweep (%d)\n", n == want_series ? "ok" : "not ok",
           want_series, n);
    failed += n != want_series;
    int pairs = 0;
    for (int i = 0; i < n; i++) {
        int batch = 0;
        double worst = check_series(&all[i], &cal, &batch, &pairs);
        const char *why = known_reason(&all[i]);
        int ok = fabs(worst) <= TOLERANCE;
        if (why && fabs(worst) > KNOWN_LIMIT)
            why = NULL;              /* known, but worse than it was: a failure */
        printf("%s %d - %s %s: worst %+.1f%% at batch %d (tolerance %.0f%%)%s%s\n", ok ? "ok" : "not ok", i + 2,
               all[i].preset, all[i].way, 100 * worst, batch, 100 * TOLERANCE, why ? " # TODO " : "",
               why ? why : "");
        failed += !ok && !why;
    }
    printf("%s %d - pairs of points no growing step can both meet: %d (%d expected: %s)\n",
           pairs == want_pairs ? "ok" : "not ok", n + 2, pairs, want_pairs, pairs_what);
    failed += pairs != want_pairs;
    return failed ? 1 : 0;
}

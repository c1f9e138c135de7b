/* tests/test_model_h200.c - the cost model against the first real GPU run
 * (issue 20 item 5): with the shipped h200 profile, the step the model
 * predicts (nn_explain) for every preset and batch of the recorded sweep
 * (tests/fixtures/h200-sweeps.jsonl, a copy of ../shared/gpu-h200/
 * sweeps.jsonl) is within TOLERANCE of the measured us_per_step, in both
 * ways the sweep measured:
 *   "graph": the step replayed as a CUDA graph, the data set on the device
 *            (nnlab's defaults; tag "P default");
 *   "eager": --no-graph --no-data-on-device --sync-every-step (tag "P
 *            eager"): every op launched, each batch copied from pageable
 *            memory (samples and labels), the loss read back every step.
 * The launches and graph nodes per step are not in the file: the model's
 * own estimate (one per op, explain.c) is used, as for any prediction
 * without a measurement.
 *
 * Plain TAP, one line per preset and way, with every point's error printed
 * as a comment. Every point must be within TOLERANCE, with one exception
 * that the data proves: two neighbouring points that no step time growing
 * with the batch (as the model's does: more work, never less) can both
 * meet, the smaller batch's point above the larger's by more than the
 * tolerance bridges (us[i] * (1 - TOLERANCE) > us[i+1] * (1 + TOLERANCE)).
 * Of such a pair the nearer of the two counts (the test finds the pairs in
 * the data itself, contradicting_pair): it does not say which of the two
 * was the noise, only that one must be missed, so the model must still meet
 * the other; and there must be exactly the two pairs the fit knew of, so
 * that no model error can hide behind the rule. A series listed in
 * known_out[] (the model's form does not reach it, with the reason) is
 * marked TODO: the driver counts it as an expected failure, and as XPASS
 * once it holds; a listed series beyond KNOWN_LIMIT fails: what is known
 * not to hold must not get worse. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnlab/explain.h"
#include "nnlab/preset.h"
#include "nnlab/profile.h"

#define TOLERANCE 0.25
#define KNOWN_LIMIT (2 * TOLERANCE)
#define MAX_POINTS 16

typedef struct series {
    char preset[64];
    char way[8];                 /* "graph" or "eager" */
    int n;
    int batch[MAX_POINTS];
    double us[MAX_POINTS];
} series;

/* Preset and way pairs the model's form does not reach yet, and why. */
static const struct { const char *preset, *way, *why; } known_out[] = {
    { "lenet-cifar10", "eager", "-30% at 64: measured 534.5 us at 16 and 1002.3 at 64 (+468), where "
      "lenet5-cifar10, the same layers and three more, took 478.8 and 756.4 (+278); the form's eager step grows "
      "there by its copies alone (its host's issue still the longer), 185 us, and cannot put lenet-cifar10 "
      "above 752 (1002.3 less 25%) while lenet5-cifar10 stays below 945 and 598 at 16. Noise, by a repeat on an "
      "H100 (2026-11-27, bench/results/gpu-nvidia-h100-80gb-hbm3-2026-11-27): two back-to-back runs of this "
      "sweep differed by up to 40% a point, and lenet-cifar10 at 64 (541, 615) stayed below lenet5-cifar10 (809, 760)" },
    { "lenet5-cifar10", "eager", "+30% at 16: 478.8 us, below its own 662.4 at 4 and below lenet-cifar10's 534.5 "
      "at 16 although it runs lenet-cifar10's layers and three more; the form's host cost per step (launches, "
      "cuDNN and cuBLAS calls) is fixed, and lenet-cifar10's 374.9 at 1 bounds it. Noise, by a repeat on an H100 "
      "(2026-11-27): at 16 two back-to-back runs took 652 and 401 us (63% apart)" },
    { "conv1d-regression", "eager", "-28% at 4, the nearer of its contradicting pair (701.0 at 4, 367.7 at 16): "
      "663.3 at 64 and 481.3 at 256 ask for a step flat within 25% from 4 to 256 (526..602 us) and 1408.5 at "
      "1024 for more than its device's time beyond it; the host's fixed cost is shared with the other presets' "
      "cuDNN and cuBLAS calls. Noise, by a repeat on an H100 (2026-11-27): two back-to-back runs took 477 and 294 "
      "us at 16, 595 and 372 at 256 (up to 62% apart)" },
    { NULL, NULL, NULL },
};

static const char *known_reason(const series *s)
{
    for (size_t i = 0; known_out[i].preset; i++)
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
        nn_gpu_way_options(NN_WAY_GRAPH, 0, opt);
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

int main(void)
{
    static series all[32];
    char line[1 << 16], err[512];
    int n = 0, failed = 0;
    nn_gpu_profile prof;
    nn_calibration cal;
    FILE *f = fopen(FIXTURES_DIR "/h200-sweeps.jsonl", "r");
    if (!f || nn_profile_load(PROFILES_SRCDIR "/h200.ini", &prof, err, sizeof err) != 0) {
        printf("1..1\nnot ok 1 - the fixture and the h200 profile load # %s\n", f ? err : "no fixture");
        return 1;
    }
    while (n < 32 && fgets(line, sizeof line, f))
        if (read_series(line, &all[n]) == 0)
            n++;
    fclose(f);
    nn_profile_calibration(&prof, &cal);
    printf("1..%d\n", n + 2);
    printf("%s 1 - 12 series read from the recorded sweep (%d)\n", n == 12 ? "ok" : "not ok", n);
    failed += n != 12;
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
    /* mnist-mlp-128 graph at 16 and 64, conv1d-regression eager at 4 and 16: no more */
    printf("%s %d - pairs of points no growing step can both meet: %d (2 expected)\n", pairs == 2 ? "ok" : "not ok",
           n + 2, pairs);
    failed += pairs != 2;
    return failed ? 1 : 0;
}

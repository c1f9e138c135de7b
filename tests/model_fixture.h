/* tests/model_fixture.h - the cost model against a recorded GPU sweep: the
 * shared check of tests/test_model_h200.c and tests/test_model_h100.c (the
 * rule, the contradicting pairs and the known series: test_model_h200.c's
 * top comment). */
#ifndef NNLAB_TESTS_MODEL_FIXTURE_H
#define NNLAB_TESTS_MODEL_FIXTURE_H

#define MODEL_TOLERANCE 0.25

#define MODEL_MAX_POINTS 16

/* One line of a recorded sweep: a preset's measured steps in one way. */
typedef struct model_series {
    char preset[64];
    char way[8];                 /* "graph" or "eager" */
    int n;
    int batch[MODEL_MAX_POINTS];
    double us[MODEL_MAX_POINTS];
} model_series;

/* The series of FIXTURES_DIR/fixture into out (at most max); their count,
 * -1 when the file cannot be read. */
int model_fixture_read(const char *fixture, model_series *out, int max);

/* A preset and way the model's form does not reach yet, and why. */
typedef struct model_known {
    const char *preset, *way, *why;
} model_known;

/* Checks every series of FIXTURES_DIR/fixture (one sweep's JSON a line,
 * tagged "P default": the graph way, or "P eager": --no-graph
 * --no-data-on-device --sync-every-step) against the profile's model;
 * prints TAP; the exit status (0: all held). known ends with a NULL preset. */
int model_fixture_run(const char *fixture, const char *profile, int want_series, int want_pairs,
                      const char *pairs_what, const model_known *known);

#endif

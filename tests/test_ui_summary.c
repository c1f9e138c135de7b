/* tests/test_ui_summary.c - the setup screen's network summary (ui/text/net_summary.c)
 * shows the cost model's figures: for every shipped preset, each layer's
 * parameters and forward FLOPs per sample are those of nn_cost_model and of
 * the layer table's public queries, and so are the totals. Before the layer
 * table the screen took FLOPs from a second model (mish 1 FLOP per element
 * instead of 6, no bias); the hand-worked conv1d-regression figures below pin
 * the one model. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "text/format.h"
#include "text/net_summary.h"
#include "nnlab/cost.h"
#include "nnlab/layer.h"
#include "nnlab/preset.h"
#include "util.h"

#ifndef PRESETS_SRCDIR
#define PRESETS_SRCDIR "presets"
#endif

#define assert_count(got, want) assert_int_equal((long long)(got), (long long)(want))

static void load(const char *file, nn_preset *p)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s", PRESETS_SRCDIR, file);
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void assert_text(double v, const char *shown)
{
    char want[16];
    ui_fmt_si(v, want, sizeof want);
    assert_string_equal(shown, want);
}

/* One preset: the summary at `batch` against the cost model and the table. */
static void check_preset(const nn_preset *p, int batch)
{
    nn_cost c;
    ui_net_summary s;
    int first = nn_layer_first_working(p->layers, p->n_layers);
    nn_cost_model(p, batch, &c);
    ui_net_summary_of(&c, &s);
    assert_int_equal(s.n_layers, p->n_layers);
    for (int i = 0; i < p->n_layers; i++) {
        nn_layer_cost one;
        nn_layer_cost_model(&p->layers[i], 1, i > first, &one);
        assert_count(s.layers[i].params, c.layers[i].params);
        /* a layer using another's weights (weights = layerN) owns none */
        assert_count(s.layers[i].params, p->layers[i].weights ? 0 : nn_layer_params(&p->layers[i]));
        assert_true(s.layers[i].flops == c.layers[i].fwd.flops / batch);
        assert_true(s.layers[i].flops == one.fwd.flops);
        assert_string_equal(s.layers[i].label, one.label);
        assert_text(s.layers[i].params, s.layers[i].params_text);
        assert_text(s.layers[i].flops, s.layers[i].flops_text);
    }
    assert_count(s.total.params, c.params);
    assert_true(s.total.flops == nn_cost_forward_flops_per_sample(p));
    assert_text(s.total.params, s.total.params_text);
    assert_text(s.total.flops, s.total.flops_text);
}

static int is_ini(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".ini") == 0;
}

static void test_every_shipped_preset(void **state)
{
    DIR *d = opendir(PRESETS_SRCDIR);
    struct dirent *e;
    int seen = 0;
    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        nn_preset p;
        if (!is_ini(e->d_name))
            continue;
        load(e->d_name, &p);
        check_preset(&p, 1);
        check_preset(&p, 64);
        seen++;
    }
    closedir(d);
    assert_true(seen >= 5);
}

/* Worked by hand, per sample (input 84 features):
 *  linear 84->16   2*84*16 + 16 bias            = 2,704   params 1,360
 *  mish on 16      6 per element                =    96
 *  reshape 1x16    a view                       =     0
 *  conv1d 1->8 k3  8*16 outputs * (2*3) + 128   =   896   params 32
 *  mish on 8x16                                 =   768
 *  maxpool1d k3    8*5 outputs * 3 compares     =   120
 *  conv1d 8->16 k3 16*5 outputs * (2*24) + 80   = 3,920   params 400
 *  mish on 16x5                                 =   480
 *  maxlen          16*5 compares                =    80
 *  linear 16->1    2*16 + 1                     =    33   params 17
 *  total                                          9,097   params 1,809 */
static void test_conv1d_regression_by_hand(void **state)
{
    static const double flops[] = { 2704, 96, 0, 896, 768, 120, 3920, 480, 80, 33 };
    static const double params[] = { 1360, 0, 0, 32, 0, 0, 400, 0, 0, 17 };
    nn_preset p;
    nn_cost c;
    ui_net_summary s;
    (void)state;
    load("conv1d-regression.ini", &p);
    nn_cost_model(&p, 1, &c);
    ui_net_summary_of(&c, &s);
    assert_int_equal(s.n_layers, 10);
    for (int i = 0; i < 10; i++) {
        assert_count(s.layers[i].flops, flops[i]);
        assert_count(s.layers[i].params, params[i]);
    }
    assert_count(s.total.flops, 9097);
    assert_count(s.total.params, 1809);
    assert_string_equal(s.layers[1].label, "mish");
    assert_string_equal(s.layers[3].label, "conv1d 1->8 k3");
    assert_string_equal(s.layers[3].shape, "8x16");
    assert_string_equal(s.total.label, "total");
    assert_string_equal(s.total.flops_text, "9.1k");
}

/* A graph (tests/fixtures/graph-net.ini): each row says where it reads from
 * when that is not the layer before, and a layer sharing weights says whose
 * and counts none of them (they are counted once, with their owner). */
static void test_graph_wiring(void **state)
{
    char err[NN_ERR_LEN];
    nn_preset p;
    nn_cost c;
    ui_net_summary s;
    (void)state;
    if (nn_preset_load(FIXTURES_DIR "/graph-net.ini", &p, err, sizeof err) != 0)
        fail_msg("%s", err);
    nn_cost_model(&p, 1, &c);
    ui_net_summary_of(&c, &s);
    assert_string_equal(s.layers[2].wiring, "");
    assert_string_equal(s.layers[4].wiring, "weights of layer3");
    assert_count(s.layers[4].params, 0);
    assert_string_equal(s.layers[5].label, "add x0.7071");
    assert_string_equal(s.layers[5].wiring, "<- layer2, layer5");
    assert_string_equal(s.layers[6].wiring, "<- layer2, layer2");
    assert_string_equal(s.layers[8].label, "slice [0:4]");
    assert_string_equal(s.layers[8].wiring, "<- layer6");
    assert_count(s.total.params, 104 + 72 + 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_wiring),
        cmocka_unit_test(test_every_shipped_preset),
        cmocka_unit_test(test_conv1d_regression_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

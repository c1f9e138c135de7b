/* ui/text/net_summary.h - the setup screen's network summary: per layer its label,
 * output shape, parameters and forward FLOPs per sample, then the totals. All
 * from one cost model (nnlab/cost.h, which takes each layer's figures from the
 * layer table), so the lab, `nnlab explain` and the cost tests agree. Pure:
 * no curses (tests/test_ui_summary.c). */
#ifndef NNLAB_UI_NET_SUMMARY_H
#define NNLAB_UI_NET_SUMMARY_H

#include "nnlab/cost.h"

typedef struct ui_summary_row {
    char label[48];              /* "conv2d 3->6 k5"; "total" */
    char shape[32];              /* the output shape; "" for the total */
    double params;
    double flops;                /* forward FLOPs per sample */
    char params_text[16], flops_text[16];   /* as drawn: "61.8k" */
    char wiring[64];             /* a graph's: "<- layer3, layer5", "weights of layer2"; "" */
} ui_summary_row;

typedef struct ui_net_summary {
    int n_layers;
    ui_summary_row layers[NN_MAX_LAYERS];
    ui_summary_row total;
} ui_net_summary;

/* Fills s from a cost model of any batch (the figures are per sample). */
void ui_net_summary_of(const nn_cost *c, ui_net_summary *s);

#endif

/* ui/text/net_summary.c - the setup screen's network summary; see net_summary.h. */
#include "net_summary.h"
#include "format.h"

#include <stdio.h>
#include <string.h>

static void fill_row(ui_summary_row *r, const char *label, double params, double flops)
{
    snprintf(r->label, sizeof r->label, "%s", label);
    r->params = params;
    r->flops = flops;
    ui_fmt_si(params, r->params_text, sizeof r->params_text);
    ui_fmt_si(flops, r->flops_text, sizeof r->flops_text);
}

void ui_net_summary_of(const nn_cost *c, ui_net_summary *s)
{
    double per_sample = c->batch > 0 ? 1.0 / c->batch : 0.0;
    memset(s, 0, sizeof *s);
    s->n_layers = c->n_layers;
    for (int i = 0; i < c->n_layers; i++) {
        const nn_layer_cost *l = &c->layers[i];
        fill_row(&s->layers[i], l->label, (double)l->params, l->fwd.flops * per_sample);
        nn_shape_format(&l->out_shape, s->layers[i].shape, sizeof s->layers[i].shape);
        snprintf(s->layers[i].wiring, sizeof s->layers[i].wiring, "%s", l->wiring);
    }
    fill_row(&s->total, "total", (double)c->params, c->forward.flops * per_sample);
}

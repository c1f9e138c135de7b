/* ui/text/overlay.c - the session's earlier runs; see overlay.h. */
#include "overlay.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void past_free(ui_past_run *p)
{
    free(p->pts);
    free(p->eps);
    memset(p, 0, sizeof *p);
}

/* The job's loss points, every k-th so that at most UI_OVERLAY_POINTS stay
 * (the last always kept: where the run ended). */
static int thin_points(const ui_run_job *j, ui_past_run *p)
{
    long keep = j->n_pts < UI_OVERLAY_POINTS ? j->n_pts : UI_OVERLAY_POINTS;
    long every = (j->n_pts + keep - 1) / keep;
    p->pts = malloc((size_t)keep * sizeof *p->pts);
    p->eps = malloc((size_t)(j->n_eps + 1) * sizeof *p->eps);
    if (!p->pts || !p->eps)
        return -1;
    p->n_pts = 0;
    for (long i = 0; i < j->n_pts && p->n_pts < keep; i += every)
        p->pts[p->n_pts++] = j->pts[i];
    p->pts[p->n_pts - 1] = j->pts[j->n_pts - 1];
    if (j->n_eps > 0)                /* a run cancelled in its first epoch has none (j->eps NULL) */
        memcpy(p->eps, j->eps, (size_t)j->n_eps * sizeof *p->eps);
    p->n_eps = j->n_eps;
    return 0;
}

void ui_overlay_keep(ui_overlay *o, const ui_run *r, double lr)
{
    for (int k = 0; k < r->n_jobs; k++) {
        const ui_run_job *j = &r->j[k];
        if (!j->started || j->n_pts < 1)
            continue;
        if (o->n == UI_OVERLAY_MAX) {    /* the oldest makes room */
            past_free(&o->run[0]);
            memmove(&o->run[0], &o->run[1], (UI_OVERLAY_MAX - 1) * sizeof o->run[0]);
            memset(&o->run[UI_OVERLAY_MAX - 1], 0, sizeof o->run[0]);
            o->n--;
        }
        ui_past_run *p = &o->run[o->n];
        if (thin_points(j, p) != 0) {
            past_free(p);                /* out of memory: not kept */
            continue;
        }
        const char *who = j->label[0] ? j->label : j->device;
        snprintf(p->label, sizeof p->label, "%s, batch %d, lr %g", who, j->snap.batch, lr);
        snprintf(p->preset, sizeof p->preset, "%s", r->cfg.preset.name);
        snprintf(p->label_preset, sizeof p->label_preset, "%s: %s, batch %d, lr %g", r->cfg.preset.name, who,
                 j->snap.batch, lr);
        o->n++;
    }
}

void ui_overlay_free(ui_overlay *o)
{
    for (int i = 0; i < o->n; i++)
        past_free(&o->run[i]);
    o->n = 0;
}

const char *ui_overlay_label(const ui_overlay *o, int i, const char *now_preset)
{
    int mixed = 0;                   /* a run of another preset: every label names its own */
    for (int k = 0; k < o->n; k++)
        mixed |= strcmp(o->run[k].preset, now_preset ? now_preset : "") != 0;
    return mixed ? o->run[i].label_preset : o->run[i].label;
}

int ui_overlay_svg(const ui_overlay *o, const char *now_preset, nn_svg_past *out, int max)
{
    int n = 0;
    for (int i = 0; i < o->n && n < max; i++)
        out[n++] = (nn_svg_past){ o->run[i].pts, o->run[i].n_pts, o->run[i].eps, o->run[i].n_eps,
                                  ui_overlay_label(o, i, now_preset) };
    return n;
}

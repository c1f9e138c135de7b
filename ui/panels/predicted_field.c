/* ui/panels/predicted_field.c - the settings' GPU profile field, and whether a
 * device choice stands for a GPU that is not here (then raced as predicted,
 * ui/panels/race_predicted.c); see race_predicted.h. Below setup_fields.c, which
 * calls it: nothing here calls back. */
#include "lab_state.h"
#include "race_predicted.h"

#include <stdio.h>
#include <string.h>


/* The survey's word on device name, read here rather than through
 * setup_fields.c, which calls this file (no circle of calls). */
static const nn_device_status *surveyed(const ui_lab *lab, const char *name)
{
    for (int d = 0; d < lab->devices.n; d++)
        if (!strcmp(lab->devices.st[d].name, name))
            return &lab->devices.st[d];
    return NULL;
}

static int has_baseline(const ui_lab *lab)
{
    for (int d = 0; d < lab->devices.n; d++)
        if (lab->devices.st[d].threaded && lab->devices.st[d].available)
            return 1;
    return 0;
}

int ui_predicted_stands_in(const ui_lab *lab, const char *name)
{
    const nn_device_status *st = surveyed(lab, name);
    return lab->devices.known && st && st->gpu && !st->available && has_baseline(lab);
}

const nn_device_status *ui_gpu_here(const ui_lab *lab, const char *device)
{
    const nn_device_status *st = surveyed(lab, device);
    return st && st->gpu && st->available ? st : NULL;
}

int ui_predicted_profile(const ui_lab *lab, nn_gpu_profile *out, char *err, size_t err_len)
{
    const char *name = lab->chosen.set.gpu_profile[0] ? lab->chosen.set.gpu_profile : nn_profile_default_name();
    return nn_profile_find(name, out, err, err_len);
}

/* ---- the settings' GPU profile --------------------------------------------------------------- */

void ui_profile_field_text(const ui_lab *lab, char *value, size_t len)
{
    nn_gpu_profile p;
    char err[NN_ERR_LEN];
    if (ui_predicted_profile(lab, &p, err, sizeof err) != 0)
        snprintf(value, len, "%s (not found)", lab->chosen.set.gpu_profile);
    else
        snprintf(value, len, "%s%s (predicts a GPU not here)", p.name, p.user ? ", yours" : "");
}

void ui_profile_field_adjust(ui_lab *lab, nn_profile_entry list[UI_PROFILES_MAX], int dir)
{
    nn_gpu_profile cur;
    char err[NN_ERR_LEN];
    int n = nn_profile_list(list, UI_PROFILES_MAX), at = -1, usable = 0;
    if (ui_predicted_profile(lab, &cur, err, sizeof err) != 0)
        cur.id[0] = '\0';
    for (int i = 0; i < n; i++) {
        usable += !list[i].error[0] && !list[i].shadowed;
        if (!list[i].error[0] && !list[i].shadowed && !strcmp(list[i].p.id, cur.id))
            at = i;
    }
    if (usable == 0)
        return;
    for (int step = 0; step < n; step++) {   /* the next usable one, round */
        at = (at + (dir > 0 ? 1 : n - 1) + (at < 0 && dir <= 0 ? 1 : 0)) % n;
        if (!list[at].error[0] && !list[at].shadowed)
            break;
    }
    snprintf(lab->chosen.set.gpu_profile, sizeof lab->chosen.set.gpu_profile, "%s", list[at].p.id);
}

/* ui/screens/setup_screen.h - the setup screen's own state (ui/screens/setup_screen.c and
 * ui/screens/setup_fields.c change it): the preset list, the focus, the number
 * being typed and the device survey under way. The preset chosen and its
 * settings are the lab's (ui_chosen), which the other screens read. */
#ifndef NNLAB_UI_SETUP_SCREEN_H
#define NNLAB_UI_SETUP_SCREEN_H

#include "lab_state.h"
#include "panels/race_predicted.h"
#include "text/net_summary.h"

#define UI_MAX_PRESETS 256            /* the presets the list holds at most */

typedef struct ui_setup_state {
    /* presets */
    nn_preset_entry *entries;
    int n_entries, selected, scroll;
    nn_cost cost;                    /* the chosen preset's per-layer summary at batch 1 */

    /* settings */
    int focus_fields;                /* 0: the preset list, 1: the fields */
    int field;
    char edit[32];                   /* a number being typed; "" when none. A value
                                        refused stays here until fixed or dropped
                                        (Esc), so that Enter cannot start a run with
                                        the old one by accident */

    nn_device_survey *survey;        /* the device survey under way; NULL when none */
    ui_scroll layers;                /* the details and the layer list, scrolled with [ and ] */
    ui_text details;                 /*   their rows, made again as they are drawn */
    ui_net_summary summary;          /*   the layer list's figures, from cost */
    nn_profile_entry profiles[UI_PROFILES_MAX];   /* the GPU profile field's list, read again
                                                     at each step (setup_fields.c) */
} ui_setup_state;

/* The setup screen (ui/screens/screens.c lists it). */
extern const ui_screen_def ui_setup_screen;
/* Lists the presets again, selecting select_path (NULL: the one selected). */
void ui_setup_reload(ui_lab *lab, const char *select_path);
ui_action ui_setup_key(ui_lab *lab, int ch);
/* Waits for a survey still running and frees the preset list (quitting). */
void ui_setup_free(ui_lab *lab);
/* The devices a run (sweep 0) or a sweep (1) of the settings would use;
 * returns how many, or -1 after saying on the status row why it cannot. */
int ui_setup_start_devices(ui_lab *lab, int sweep, const char **names, int max);

/* ui/screens/setup_devices.c: the device survey and the list drawn; the
 * setup screen hands it its state (the survey under way) */
/* Starts surveying the devices (unless one is under way); none can be started until it ends. */
void ui_setup_survey(ui_lab *lab, ui_setup_state *ss);
/* Takes the survey's answer once it is in: the setup screen's poll. */
void ui_setup_survey_poll(ui_lab *lab, ui_setup_state *ss);
/* The rows the device list needs at width w, and the list drawn from row y. */
int ui_setup_devices_rows(const ui_lab *lab, int w);
void ui_setup_draw_devices(ui_lab *lab, ui_rect in, int y);

/* The setup screen's own state: for setup_screen.c (and the tests) only;
 * the files it calls are handed it (tests/layering_calls.py counts a use
 * elsewhere as a call of setup_screen.c). */
static inline ui_setup_state *ui_setup_of(const ui_lab *lab)
{
    return lab->state[UI_SETUP];
}

#endif

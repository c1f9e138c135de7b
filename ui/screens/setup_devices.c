/* ui/screens/setup_devices.c - the setup screen's devices: the survey (nnlab/device.h)
 * on a thread of its own, at start and on F5, its answer kept in the lab's
 * order (the baseline first), and the list drawn under the preset's details,
 * each device available with its backend's line, or why it is not; and the
 * lookups of its answer the other screens make (setup_fields.h). */
#include "draw.h"
#include "lab_state.h"
#include "setup_screen.h"
#include "setup_fields.h"

#include <stdio.h>
#include <string.h>

/* Starts checking the devices on a thread of its own: the GPU's probe
 * initialises the CUDA runtime, which must not stall the screen. Until the
 * survey ends every device shows "checking" and none can be started. */
void ui_setup_survey(ui_lab *lab, ui_setup_state *st)
{
    if (st->survey)
        return;                      /* one is under way: its answer is as fresh */
    lab->devices.known = 0;
    st->survey = nn_device_survey_start(lab->devices.why, sizeof lab->devices.why);
    if (st->survey)
        return;
    lab->devices.n = 0;              /* none can be used: the device list says why */
    lab->devices.known = 1;
}

/* The survey's list in the lab's order: the baseline (the first device on a
 * pool of CPU threads, which the others are compared with) first, then the
 * rest as the survey gives them. */
static void keep_devices(ui_devices *devs, const nn_device_status *st, int n)
{
    int first = 0, k = 0;
    while (first < n && !st[first].threaded)
        first++;
    if (first < n)
        devs->st[k++] = st[first];
    for (int i = 0; i < n; i++)
        if (i != first)
            devs->st[k++] = st[i];
    devs->n = k;
    devs->known = 1;
}

/* Takes the device survey's answer once it is in (every loop turn). */
void ui_setup_survey_poll(ui_lab *lab, ui_setup_state *ss)
{
    nn_device_status st[NN_MAX_DEVICES];
    int n = ss->survey ? nn_device_survey_poll(ss->survey, st, NN_MAX_DEVICES) : -1;
    if (n < 0)
        return;
    nn_device_survey_free(ss->survey);
    ss->survey = NULL;
    keep_devices(&lab->devices, st, n);
    lab->dirty |= UI_D_FIELDS | UI_D_DETAILS;
}


/* "unavailable: WHY"; a machine without the NVIDIA driver in one row (the
 * loader's words are for `nnlab devices`, which prints them whole). */
static const char *why_line(const char *why, char *buf, size_t len)
{
    static const char no_driver[] = "no NVIDIA driver";
    snprintf(buf, len, "unavailable: %s", strncmp(why, no_driver, sizeof no_driver - 1) ? why : no_driver);
    return buf;
}

/* "available  OpenBLAS sgemm and im2col, the free cores (own thread pool)" */
static const char *available_line(const char *summary, char *buf, size_t len)
{
    snprintf(buf, len, "available  %s", summary);
    return buf;
}

#define SUMMARY_ROWS 3               /* an available device's summary, wrapped at 80 columns */
#define WHY_ROWS 6                   /* at most, per unavailable device: whole at 80x24 (the details above scroll) */

/* Rows the device list needs: a heading, one row per available device (or
 * per device still being checked), the reason of each unavailable one
 * wrapped; before the first survey answers, or when none could run, one
 * row. */
int ui_setup_devices_rows(const ui_lab *lab, int w)
{
    char line[NN_ERR_LEN + 16];
    int rows = 1;
    if (lab->devices.n == 0)
        return rows + (lab->devices.known ? ui_wrapped_rows(w, WHY_ROWS, lab->devices.why) : 1);
    for (int d = 0; d < lab->devices.n; d++)
        rows += !lab->devices.known ? 1
                : lab->devices.st[d].available
                    ? ui_wrapped_rows(w - 10, SUMMARY_ROWS, available_line(lab->devices.st[d].summary, line, sizeof line))
                    : ui_wrapped_rows(w - 10, WHY_ROWS, why_line(lab->devices.st[d].why, line, sizeof line));
    return rows;
}

void ui_setup_draw_devices(ui_lab *lab, ui_rect in, int y)
{
    char line[NN_ERR_LEN + 16];
    ui_put(y++, in.x, in.w, A_BOLD, "Devices");
    if (lab->devices.n == 0) {       /* the first survey still runs, or none could */
        if (lab->devices.known)
            ui_put_wrapped(y, in.x, in.w, WHY_ROWS, ui_attr(lab, UI_ERROR), lab->devices.why);
        else
            ui_put(y, in.x + 10, in.w - 10, ui_attr(lab, UI_DIM), "checking...");
        return;
    }
    for (int d = 0; d < lab->devices.n && y < in.y + in.h; d++) {
        ui_putf(y, in.x, 10, A_NORMAL, " %-8s", lab->devices.st[d].name);
        if (!lab->devices.known)
            ui_put(y++, in.x + 10, in.w - 10, ui_attr(lab, UI_DIM), "checking...");
        else if (lab->devices.st[d].available)
            y += ui_put_wrapped(y, in.x + 10, in.w - 10, SUMMARY_ROWS, ui_attr(lab, UI_OK),
                                available_line(lab->devices.st[d].summary, line, sizeof line));
        else
            y += ui_put_wrapped(y, in.x + 10, in.w - 10, WHY_ROWS, ui_attr(lab, UI_ERROR),
                                why_line(lab->devices.st[d].why, line, sizeof line));
    }
}

/* ---- the survey's answer, looked up ------------------------------------------------- */

const nn_device_status *ui_device_status(const ui_lab *lab, const char *name)
{
    for (int d = 0; d < lab->devices.n; d++)
        if (!strcmp(lab->devices.st[d].name, name))
            return &lab->devices.st[d];
    return NULL;
}

int ui_device_ok(const ui_lab *lab, const char *name)
{
    const nn_device_status *st = ui_device_status(lab, name);
    return lab->devices.known && st && st->available;   /* none while checking */
}

const nn_device_status *ui_device_baseline(const ui_lab *lab)
{
    for (int d = 0; d < lab->devices.n; d++)
        if (lab->devices.st[d].threaded)
            return &lab->devices.st[d];
    return NULL;
}

const nn_device_status *ui_device_gpu(const ui_lab *lab)
{
    for (int d = 0; d < lab->devices.n; d++)
        if (lab->devices.st[d].gpu)
            return &lab->devices.st[d];
    return NULL;
}

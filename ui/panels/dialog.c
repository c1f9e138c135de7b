/* ui/panels/dialog.c - the questions the lab asks in a box over the screen: the
 * name to save a preset under (sanitised to a safe ASCII file name), whether
 * to overwrite it or hide a shipped preset of that name, whether to quit or
 * go back while a job runs; the
 * calibration boxes are ui/panels/calib_dialog.c's. Every error
 * goes to the status row, never to the terminal. */
#include "panels/dialog.h"
#include "draw.h"
#include "lab_state.h"
#include "panels/long_job.h"
#include "panels/calib_dialog.h"
#include "screens/setup_screen.h"
#include "text/format.h"
#include "screens/setup_fields.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether DIR/NAME.ini exists (a name too long for a path counts as taken). */
static int preset_file_exists(const char *dir, const char *name)
{
    char path[NN_PATH_LEN];
    if ((size_t)snprintf(path, sizeof path, "%s/%s.ini", dir, name) >= sizeof path)
        return 1;
    return access(path, F_OK) == 0;
}

/* The name the save dialog offers: the preset's own, unless that is a
 * shipped preset's (no file of yours yet), which a save would hide: then
 * NAME-mine, or NAME-mine-2 ... the first that neither folder has. */
static void offer_name(const char *name, char *out, size_t len)
{
    char user[NN_PATH_LEN];
    const char *system = nn_preset_system_dir();
    snprintf(out, len, "%s", name);
    if (nn_preset_user_dir(user, sizeof user) != 0 || preset_file_exists(user, name) ||
        !preset_file_exists(system, name))
        return;
    for (int k = 1; k < 100; k++) {
        if (k == 1)
            snprintf(out, len, "%s-mine", name);
        else
            snprintf(out, len, "%s-mine-%d", name, k);
        if (!preset_file_exists(user, out) && !preset_file_exists(system, out))
            return;
    }
}

void ui_dialog_open_save(ui_lab *lab)
{
    if (!lab->chosen.preset_ok) {
        ui_set_message(lab, 1, "this preset does not load, so it cannot be saved: %s", lab->chosen.preset_err);
        return;
    }
    offer_name(lab->chosen.preset.name, lab->input, sizeof lab->input);
    lab->dialog = UI_DLG_SAVE;
    lab->dirty |= UI_D_OVERLAY;
}

static void close_dialog(ui_lab *lab)
{
    lab->dialog = UI_DLG_NONE;
    lab->dirty |= UI_D_ALL;          /* repaint what the box covered */
}

/* ---- the data folder: typed, as letters would otherwise be the screen's keys ---------------- */

/* Kept when it is a folder that can be read (an empty one: the default);
 * what is in it is the loader's to judge when a job starts, and its error
 * names the folder and the file it missed. */
static void data_dir_confirm(ui_lab *lab)
{
    struct stat st;
    const char *dir = lab->dir_input;
    if (dir[0] && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, R_OK | X_OK) != 0)) {
        ui_set_message(lab, 1, "Data folder %s: %s", dir,
                       stat(dir, &st) != 0 ? strerror(errno) : !S_ISDIR(st.st_mode) ? "not a folder"
                                                                               : "cannot be read");
        return;
    }
    snprintf(lab->chosen.set.data_dir, sizeof lab->chosen.set.data_dir, "%s", dir);
    ui_set_message(lab, 0, dir[0] ? "Data folder set: a job reads %s (its loader names any file missing)"
                                  : "Data folder: the default%s", dir);
    close_dialog(lab);
}

static void data_dir_key(ui_lab *lab, int ch)
{
    size_t n = strlen(lab->dir_input);
    if (ch == 27)
        close_dialog(lab);
    else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
        data_dir_confirm(lab);
    else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
        if (n > 0)
            lab->dir_input[n - 1] = '\0';
    } else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof lab->dir_input) {
        lab->dir_input[n] = (char)ch;
        lab->dir_input[n + 1] = '\0';
    }
}

/* The file the typed name would be saved to; -1 with a message when none. */
static int save_target(ui_lab *lab, char *name, size_t nlen, char *path, size_t plen)
{
    char dir[NN_PATH_LEN];
    if (ui_sanitize_name(lab->input, name, nlen) != 0)
        return ui_set_message(lab, 1, "type a name: letters, digits, '.', '_' or '-'"), -1;
    if (nn_preset_user_dir(dir, sizeof dir) != 0)
        return ui_set_message(lab, 1, "no folder for your presets: set HOME or XDG_CONFIG_HOME"), -1;
    if ((size_t)snprintf(path, plen, "%s/%s.ini", dir, name) >= plen)
        return ui_set_message(lab, 1, "the preset folder's path is too long"), -1;
    return 0;
}

/* The shipped preset a save under `name` would hide (nn_preset_find looks
 * in your folder first), when there is one and no file of yours hides it
 * already. */
static int hides_shipped(const char *name, const char *path)
{
    char shipped[NN_PATH_LEN];
    if (access(path, F_OK) == 0)
        return 0;                    /* yours already: the overwrite question */
    if ((size_t)snprintf(shipped, sizeof shipped, "%s/%s.ini", nn_preset_system_dir(), name) >= sizeof shipped)
        return 0;
    return access(shipped, F_OK) == 0;
}

/* Saves the selected preset with the current settings under path: every
 * setting the lab has (the device run beside, race or in turn, the GPU
 * switches, the sweep; nn_preset's [train] compare, [gpu] and [lab]), and a
 * description of its own: the original's may claim measurements this copy
 * never made. */
static void save(ui_lab *lab, const char *name, const char *path)
{
    nn_preset p = lab->chosen.preset;
    char err[NN_ERR_LEN];
    snprintf(p.name, sizeof p.name, "%s", name);
    ui_settings_to_preset(&lab->chosen.set, &p);
    ui_settings_describe(&lab->chosen.set, lab->chosen.preset.name, p.description, sizeof p.description);
    close_dialog(lab);
    /* refused, not lost, when another lab saved there since the name was given */
    if (nn_preset_save_unchanged(path, &p, &lab->save_seen, err, sizeof err) != 0) {
        ui_set_message(lab, 1, "not saved: %s", err);
        return;
    }
    ui_setup_reload(lab, path);
    ui_set_message(lab, 0, "saved %s as %s", name, path);
}

static void save_key(ui_lab *lab, int ch)
{
    char name[NN_NAME_LEN], path[NN_PATH_LEN];
    size_t n = strlen(lab->input);
    if (ch == 27) {
        close_dialog(lab);
    } else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        if (save_target(lab, name, sizeof name, path, sizeof path) != 0)
            return;
        snprintf(lab->save_path, sizeof lab->save_path, "%s", path);
        (void)nn_file_seen_now(path, &lab->save_seen);
        if (lab->save_seen.exists) {
            lab->dialog = UI_DLG_OVERWRITE;
            return;
        }
        if (hides_shipped(name, path)) {
            lab->dialog = UI_DLG_SHADOW;
            return;
        }
        save(lab, name, path);
    } else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
        if (n > 0)
            lab->input[n - 1] = '\0';
    } else if (ch >= 0x80 && ch <= 0xff) {
        /* a byte of a UTF-8 letter: file names stay ASCII, the same on
         * every file system and in every locale, so say so rather than
         * drop it ("cafe", not "caf") */
        ui_set_message(lab, 1, "a preset's name is ASCII: letters a-z, digits, '.', '_' or '-' "
                       "(type e for é)");
    } else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof lab->input) {
        lab->input[n] = (char)ch;    /* sanitised when saved; shown as typed */
        lab->input[n + 1] = '\0';
    }
}

ui_action ui_dialog_key(ui_lab *lab, int ch)
{
    ui_action act = UI_ACT_HANDLED;
    char name[NN_NAME_LEN], path[NN_PATH_LEN];
    int yes = ch == 'y' || ch == 'Y', no = ch == 'n' || ch == 'N' || ch == 27;
    enum ui_dialog before = lab->dialog;
    lab->dirty |= UI_D_OVERLAY;
    switch (lab->dialog) {
    case UI_DLG_SAVE:
        save_key(lab, ch);
        break;
    case UI_DLG_OVERWRITE: case UI_DLG_SHADOW:
        if (yes && save_target(lab, name, sizeof name, path, sizeof path) == 0)
            save(lab, name, path);
        else if (no)
            lab->dialog = UI_DLG_SAVE;   /* back to the name */
        break;
    case UI_DLG_QUIT:
        if (yes)
            act = UI_ACT_QUIT;
        else if (no || ch == 'q')
            close_dialog(lab);
        break;
    case UI_DLG_CALIBRATE: case UI_DLG_CALIB_FAILED:
        act = ui_calibrate_key(lab, ch);
        break;
    case UI_DLG_LONG_JOB:
        act = ui_long_job_key(lab, ch);
        break;
    case UI_DLG_DATA_DIR:
        data_dir_key(lab, ch);
        break;
    case UI_DLG_BACK:
        if (yes) {
            close_dialog(lab);
            act = UI_ACT_GO_SETUP;   /* the main loop cancels what runs */
        } else if (no) {
            close_dialog(lab);
        }
        break;
    default:
        break;
    }
    if (lab->dialog != before)
        lab->dirty |= UI_D_ALL;      /* the next box may be smaller: repaint under it */
    return act;
}

static void question(ui_lab *lab, const char *title, const char *line1, const char *line2)
{
    int w = lab->cols - 8 < 70 ? lab->cols - 8 : 70;
    ui_rect box = { (lab->cols - w) / 2, lab->rows / 2 - 3, w, 6 }, in = ui_rect_inner(box);
    ui_box(lab, box, title);
    ui_put_wrapped(in.y, in.x + 1, in.w - 2, 2, A_NORMAL, line1);
    ui_put(in.y + 3, in.x + 1, in.w - 2, ui_attr(lab, UI_KEY), line2);
}

void ui_dialog_draw(ui_lab *lab)
{
    char name[NN_NAME_LEN], dir[NN_PATH_LEN] = "?", line[NN_PATH_LEN + NN_NAME_LEN + 128];
    switch (lab->dialog) {
    case UI_DLG_SAVE: {
        int w = lab->cols - 8 < 70 ? lab->cols - 8 : 70;
        ui_rect box = { (lab->cols - w) / 2, lab->rows / 2 - 3, w, 7 }, in = ui_rect_inner(box);
        ui_box(lab, box, "Save the settings as a preset");
        ui_putf(in.y, in.x + 1, in.w - 2, A_NORMAL, "Name: %s_", lab->input);
        (void)nn_preset_user_dir(dir, sizeof dir);
        if (ui_sanitize_name(lab->input, name, sizeof name) == 0)
            snprintf(line, sizeof line, "file: %s/%s.ini", dir, name);
        else
            snprintf(line, sizeof line, "file: (type a name: letters, digits, '.', '_' or '-')");
        ui_put_wrapped(in.y + 1, in.x + 1, in.w - 2, 2, ui_attr(lab, UI_DIM), line);
        ui_put(in.y + 4, in.x + 1, in.w - 2, ui_attr(lab, UI_KEY), "Enter save  Esc cancel");
        break;
    }
    case UI_DLG_OVERWRITE:
        snprintf(line, sizeof line, "%s exists. Overwrite it?", lab->save_path);
        question(lab, "Overwrite?", line, "y overwrite  n back to the name");
        break;
    case UI_DLG_SHADOW:
        question(lab, "Hide the shipped preset?", "A shipped preset of that name exists; yours will "
                 "hide it (the list marks it hidden). Save yours anyway?", "y save  n back to the name");
        break;
    case UI_DLG_QUIT:
        question(lab, "Quit?", "A job is running. Quit and cancel it?", "y quit  n keep running");
        break;
    case UI_DLG_BACK:
        question(lab, "Back to setup?", "A job is running. Cancel it and go back to the setup screen?",
                 "y cancel and go back  n keep running");
        break;
    case UI_DLG_CALIBRATE: case UI_DLG_CALIB_FAILED:
        ui_calibrate_draw(lab);
        break;
    case UI_DLG_DATA_DIR: {
        int w = lab->cols - 8 < 70 ? lab->cols - 8 : 70;
        ui_rect box = { (lab->cols - w) / 2, lab->rows / 2 - 3, w, 7 }, in = ui_rect_inner(box);
        ui_box(lab, box, "Data folder");
        ui_putf(in.y, in.x + 1, in.w - 2, A_NORMAL, "Folder: %s_", lab->dir_input);
        ui_put_wrapped(in.y + 1, in.x + 1, in.w - 2, 2, ui_attr(lab, UI_DIM),
                       "CIFAR-10's data_batch_1.bin ... test_batch.bin, or MNIST's IDX files "
                       "(train-images-idx3-ubyte[.gz] ...); empty: the default");
        ui_put(in.y + 4, in.x + 1, in.w - 2, ui_attr(lab, UI_KEY), "Enter set  Esc cancel");
        break;
    }
    case UI_DLG_LONG_JOB:
        ui_long_job_draw(lab);
        break;
    default:
        break;
    }
}

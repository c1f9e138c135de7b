/* ui/screens/setup_screen.c - the first screen: the presets (the user's and the
 * shipped ones, broken ones with their error), the selected preset's
 * description, data and network summary, the devices and why one is
 * unavailable (ui/screens/setup_devices.c), and the fields (ui/screens/setup_fields.c). */
#include "draw.h"
#include "lab_state.h"
#include "setup_screen.h"
#include "text/format.h"
#include "text/net_summary.h"
#include "setup_fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_PRESET "mnist-mlp-128"

void ui_setup_free(ui_lab *lab)
{
    ui_setup_state *ss = ui_setup_of(lab);
    nn_device_survey_free(ss->survey);   /* waits for a probe still running */
    ss->survey = NULL;
    free(ss->entries);
    ss->entries = NULL;
    ss->n_entries = 0;
}

/* ---- the selected preset ----------------------------------------------------------- */

static int idx_present(const char *dir)
{
    static const char *const names[] = { "train-images-idx3-ubyte.gz", "train-images-idx3-ubyte",
                                         "train-images.idx3-ubyte" };
    char path[NN_PATH_LEN];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (access(path, R_OK) == 0)
            return 1;
    }
    return 0;
}

/* Which data the preset would use (the job's data_desc says it exactly once running). */
static void data_note(const nn_preset *p, const char *dir, char *buf, size_t len)
{
    switch (p->data) {
    case NN_DATA_MNIST:
        if (dir[0])
            snprintf(buf, len, "MNIST-format IDX files from %s", dir);
        else if (idx_present(NN_FASHION_MNIST_DIR))
            snprintf(buf, len, "Fashion-MNIST (real, %s)", NN_FASHION_MNIST_DIR);
        else
            snprintf(buf, len, "synthetic 1x28x28, 10 classes (no IDX files in %s: "
                     "apt-get install dataset-fashion-mnist)", NN_FASHION_MNIST_DIR);
        break;
    case NN_DATA_CIFAR10:
        if (dir[0])
            snprintf(buf, len, "CIFAR-10 binary files from %s", dir);
        else
            snprintf(buf, len, "synthetic 3x32x32, 10 classes (no CIFAR-10 folder: set Data folder)");
        break;
    default:
        snprintf(buf, len, "random regression rows: %ld train, %ld validation, %d feature%s -> %d target%s",
                 p->rows, p->val_rows, p->features, p->features == 1 ? "" : "s", p->targets,
                 p->targets == 1 ? "" : "s");
    }
}

static void load_selected(ui_lab *lab)
{
    ui_setup_state *ss = ui_setup_of(lab);
    const nn_preset_entry *e = ss->n_entries > 0 ? &ss->entries[ss->selected] : NULL;
    lab->chosen.preset_ok = 0;
    lab->chosen.preset_err[0] = '\0';
    if (!e) {
        snprintf(lab->chosen.preset_err, sizeof lab->chosen.preset_err, "no presets found (looked in your folder and %s)",
                 nn_preset_system_dir());
        return;
    }
    if (nn_preset_load(e->path, &lab->chosen.preset, lab->chosen.preset_err, sizeof lab->chosen.preset_err) != 0 ||
        nn_preset_check(&lab->chosen.preset, e->path, lab->chosen.preset_err, sizeof lab->chosen.preset_err) != 0)
        return;
    lab->chosen.preset_ok = 1;
    snprintf(lab->chosen.preset_path, sizeof lab->chosen.preset_path, "%s", e->path);
    nn_cost_model(&lab->chosen.preset, 1, &ss->cost);
    ui_settings_from_preset(&lab->chosen.set, &lab->chosen.preset);
    if (!ui_field_shown(lab, ss->field))  /* the focus on a field this preset lacks */
        ss->field = ui_field_next(lab, ss->field, 1);
}

static void select_preset(ui_lab *lab, int i)
{
    ui_setup_state *ss = ui_setup_of(lab);
    if (ss->n_entries == 0)
        return;
    i = i < 0 ? 0 : i >= ss->n_entries ? ss->n_entries - 1 : i;
    if (i == ss->selected && lab->chosen.preset_ok)
        return;
    ss->selected = i;
    ss->layers.top = 0;              /* another network: its list from the top */
    ss->edit[0] = '\0';
    load_selected(lab);
    lab->dirty |= UI_D_LIST | UI_D_FIELDS | UI_D_DETAILS | UI_D_STATUS;
}

void ui_setup_reload(ui_lab *lab, const char *select_path)
{
    ui_setup_state *ss = ui_setup_of(lab);
    char err[NN_ERR_LEN], keep[NN_NAME_LEN] = DEFAULT_PRESET;
    if (ss->n_entries > 0)
        snprintf(keep, sizeof keep, "%s", ss->entries[ss->selected].name);
    if (!ss->entries)
        ss->entries = calloc(UI_MAX_PRESETS, sizeof *ss->entries);
    int left = 0, n = ss->entries ? nn_preset_list(ss->entries, UI_MAX_PRESETS, &left, err, sizeof err) : -1;
    if (n < 0) {
        ui_set_message(lab, 1, "%s", ss->entries ? nn_safe(err) : "out of memory for the preset list");
        n = 0;
    } else if (left > 0) {
        ui_set_message(lab, 1, "%d more presets not listed: the list holds at most %d", left, UI_MAX_PRESETS);
    }
    ss->n_entries = n;
    ss->selected = 0;
    for (int i = 0; i < n; i++)
        if (select_path ? !strcmp(ss->entries[i].path, select_path)
                        : !strcmp(ss->entries[i].name, keep) && !ss->entries[i].shadowed) {
            ss->selected = i;
            break;
        }
    ss->scroll = 0;
    load_selected(lab);
    lab->dirty |= UI_D_ALL;
}

static void setup_open(ui_lab *lab)
{
    ui_settings_defaults(&lab->chosen.set);
    ui_setup_survey(lab, ui_setup_of(lab));
    ui_setup_reload(lab, NULL);
}

static void setup_poll(ui_lab *lab, double now)
{
    (void)now;
    ui_setup_survey_poll(lab, ui_setup_of(lab));
}

/* ---- drawing ------------------------------------------------------------------------ */

static void draw_list(ui_lab *lab)
{
    ui_setup_state *ss = ui_setup_of(lab);
    ui_rect box = lab->layout.presets, in = ui_rect_inner(box);
    char title[48];
    snprintf(title, sizeof title, "Presets (%d)", ss->n_entries);
    ui_box(lab, box, title);
    ui_put(box.y, box.x + box.w - 13, 11, ui_attr(lab, UI_KEY), " L lessons ");   /* the lessons' entry */
    if (in.h <= 0)
        return;
    if (ss->selected < ss->scroll)
        ss->scroll = ss->selected;
    if (ss->selected >= ss->scroll + in.h)
        ss->scroll = ss->selected - in.h + 1;
    for (int r = 0; r < in.h && ss->scroll + r < ss->n_entries; r++) {
        int i = ss->scroll + r, sel = i == ss->selected;
        const nn_preset_entry *e = &ss->entries[i];
        const char *tag = e->error[0] ? "broken" : e->shadowed ? "hidden" : e->user ? "yours" : "";
        attr_t a = sel ? ui_attr(lab, ss->focus_fields ? UI_KEY : UI_SELECTED) : A_NORMAL;
        if (e->error[0] && !sel)
            a = ui_attr(lab, UI_ERROR);
        mvhline(in.y + r, in.x, ' ', in.w);
        ui_putf(in.y + r, in.x, in.w, a, "%c %-*.*s %6s", sel ? '>' : ' ', in.w - 9, in.w - 9, e->name, tag);
    }
    /* a list longer than its box says so on the bottom edge: "▼ 2 more (Down)" */
    ui_scroll shown = { ss->scroll, ss->n_entries, in.h };
    ui_scroll_draw_marker(lab, box.y + box.h - 1, box.x + box.w - 1, &shown, ss->n_entries, in.h, "Down", "Up");
}

static int shown_fields(const ui_lab *lab)
{
    int n = 0;
    for (int f = 0; f < UI_N_FIELDS; f++)
        n += ui_field_shown(lab, f);
    return n;
}

/* The first shown field drawn: the list scrolls so that the focused field
 * is always on screen (at 80x24 the settings outgrow their box). */
static int first_field_row(ui_lab *lab, int rows)
{
    ui_setup_state *ss = ui_setup_of(lab);
    int at = 0;
    for (int f = 0; f < ss->field && f < UI_N_FIELDS; f++)
        at += ui_field_shown(lab, f);
    return rows > 0 && at >= rows ? at - rows + 1 : 0;
}

static void draw_fields(ui_lab *lab)
{
    ui_setup_state *ss = ui_setup_of(lab);
    ui_rect box = lab->layout.fields, in = ui_rect_inner(box);
    const char *names[2];
    int n = ui_settings_devices(&lab->chosen.set, names);
    ui_box(lab, box, "Settings");
    int first = first_field_row(lab, in.h), shown = 0;
    for (int f = 0, row = 0; f < UI_N_FIELDS && row < in.h; f++) {
        char label[32], value[96], fitted[96];
        if (!ui_field_shown(lab, f) || shown++ < first)
            continue;
        int sel = ss->focus_fields && f == ss->field;
        ui_field_text(lab, f, label, sizeof label, value, sizeof value);
        if (sel && ss->edit[0])
            snprintf(value, sizeof value, "%s_", ss->edit);
        attr_t la = sel ? ui_attr(lab, UI_SELECTED) : A_NORMAL, va = A_BOLD;
        if ((f == UI_F_COMPARE && n < 2) || ui_field_gpu_only(f))
            va = ui_attr(lab, UI_DIM);   /* not used by the chosen device */
        if (f == UI_F_DEVICE && lab->devices.known &&
            !(ui_device_ok(lab, names[0]) && (n < 2 || ui_device_ok(lab, names[1]))))
            va = ui_attr(lab, UI_ERROR);
        ui_putf(in.y + row, in.x, 16, la, "%c%-15s", sel ? '>' : ' ', label);
        ui_fit_value(value, in.w - 17, lab->utf8, fitted, sizeof fitted);   /* said shorter, not cut */
        ui_put(in.y + row, in.x + 17, in.w - 17, va, fitted);
        row++;
    }
    for (int row = 0; row < in.h; row++)     /* below the shown fields: a longer list's rows */
        if (row >= shown_fields(lab) - first)
            mvhline(in.y + row, in.x, ' ', in.w);
    int below = shown_fields(lab) - first - in.h;
    if (first > 0)                   /* more above and below, said on the box's edges */
        ui_putf(box.y, box.x + box.w - 14, 12, ui_attr(lab, UI_DIM), " ^ %d more ", first);
    if (below > 0)
        ui_putf(box.y + box.h - 1, box.x + box.w - 14, 12, ui_attr(lab, UI_DIM), " v %d more ", below);
}

/* A graph's layer shows where it reads from after its label ("add <- layer3,
 * layer5"), as much as the column holds. */
static void format_row(char *buf, size_t len, int wide, int lw, const char *num, const ui_summary_row *r)
{
    char label[sizeof r->label + sizeof r->wiring + 2];
    snprintf(label, sizeof label, "%s%s%s", r->label, r->wiring[0] ? " " : "", r->wiring);
    if (wide)
        snprintf(buf, len, "%3s  %-*.*s %-10.10s%8s %12s", num, lw, lw, label, r->shape, r->params_text,
                 r->flops_text);
    else
        snprintf(buf, len, "%-*.*s %7s %9s", lw, lw, label, r->params_text, r->flops_text);
}

/* Layer, output shape, parameters and FLOPs per sample (ui/text/net_summary.c, from
 * the cost model); a narrow pane (80 columns) drops the "#" and output columns
 * so that the labels stay whole. */
static void layers_text(const ui_lab *lab, int width, ui_text *t)
{
    ui_setup_state *ss = ui_setup_of(lab);
    const ui_net_summary *sum = &ss->summary;
    char row[UI_TEXT_COLS];
    int wide = width >= 58, lw = width - (wide ? 37 : 18);
    ui_net_summary_of(&ss->cost, &ss->summary);
    if (lw > 24)
        lw = 24;
    if (wide)
        ui_text_addf(t, UI_TS_BOLD, "%3s  %-*s %-10s%8s %12s", "#", lw, "layer", "output", "params", "FLOPs/sample");
    else
        ui_text_addf(t, UI_TS_BOLD, "%-*s %7s %9s", lw, "layer", "params", "FLOPs/smp");
    for (int i = 0; i < sum->n_layers; i++) {
        char num[12];
        snprintf(num, sizeof num, "%d", i + 1);
        format_row(row, sizeof row, wide, lw, num, &sum->layers[i]);
        ui_text_addf(t, UI_TS_NORMAL, "%s", row);
    }
    format_row(row, sizeof row, wide, lw, "", &sum->total);
    ui_text_addf(t, UI_TS_BOLD, "%s", row);
}

/* text after a 7-column label ("data   "), wrapped at words, its rows indented. */
static void add_labelled(ui_text *t, int style, const char *label, int width, const char *text)
{
    int first = t->n;
    ui_text_wrap(t, style, width - 7, UI_TEXT_ROWS, text);   /* wrapped in place, then indented */
    for (int i = first; i < t->n; i++) {
        char row[UI_TEXT_COLS + 8];
        snprintf(row, sizeof row, "%-7s%s", i > first ? "" : label, t->line[i]);
        size_t n = strlen(row) < UI_TEXT_COLS ? strlen(row) : UI_TEXT_COLS - 1;   /* cut as ui_text_addf cuts */
        memcpy(t->line[i], row, n);
        t->line[i][n] = '\0';
    }
}

/* What a run of the settings needs in memory (the engine's estimate) beside
 * what the machine has: an error when it would be refused. */
static void memory_text(const ui_lab *lab, int width, ui_text *t)
{
    nn_job_config cfg;
    nn_memory_estimate m;
    char need[16], avail[16], err[NN_ERR_LEN], line[NN_ERR_LEN + 64], key[UI_SIZE_KEY_LEN];
    ui_setup_job_config(lab, &cfg);
    nn_job_memory_estimate(&cfg, &m);
    nn_format_bytes(m.host, need, sizeof need);
    nn_format_bytes(m.available, avail, sizeof avail);
    int fits = nn_job_check_sizes(&cfg, &m, ui_setup_size_key(lab, key, sizeof key), err, sizeof err) == 0;
    if (fits)
        snprintf(line, sizeof line, "needs ~%s of %s available%s%s", need, avail,
                 m.copies > 1 ? " (all ranks)" : "", m.device ? " (host; the rest on the device)" : "");
    else
        snprintf(line, sizeof line, "%s", err);
    add_labelled(t, fits ? UI_TS_NORMAL : UI_TS_ERROR, "memory", width, line);
}

/* The chosen preset's whole description: what it is, its file, its data,
 * its task, its memory and its layers, at word breaks. */
static void details_text(const ui_lab *lab, const nn_preset_entry *e, int width, ui_text *t)
{
    const nn_preset *p = &lab->chosen.preset;
    char line[NN_PATH_LEN + 64];
    t->n = 0;
    if (!lab->chosen.preset_ok) {
        if (e)
            ui_text_addf(t, UI_TS_ERROR, "This preset does not load:");
        ui_text_wrap(t, UI_TS_ERROR, width, UI_TEXT_ROWS, lab->chosen.preset_err);
        return;
    }
    ui_text_wrap(t, UI_TS_NORMAL, width, UI_TEXT_ROWS, p->description);
    snprintf(line, sizeof line, "%s%s", e->path, e->user ? " (yours)" : e->shadowed ? " (hidden by yours)" : "");
    add_labelled(t, UI_TS_DIM, "file", width, line);
    char note[NN_PATH_LEN + 128];
    data_note(&lab->chosen.preset, lab->chosen.set.data_dir, note, sizeof note);
    add_labelled(t, UI_TS_NORMAL, "data", width, note);   /* the Data folder's, as set */
    const nn_job_traits *kind = nn_job_traits_of(lab->chosen.set.kind);
    if (!kind->trains && kind->task_line) {   /* trains nothing: what it computes instead */
        kind->task_line(lab->chosen.set.method, lab->chosen.set.batch, line, sizeof line);
        add_labelled(t, UI_TS_NORMAL, "task", width, line);
    } else {
        /* the rate the run will use: the Learning rate field's, and the preset's beside it once changed */
        double lr = lab->chosen.set.lr;
        char preset_lr[48] = "";
        if ((float)lr != p->lr)     /* the preset holds a float */
            snprintf(preset_lr, sizeof preset_lr, " (preset: %g)", p->lr);
        snprintf(line, sizeof line, "%s, %s lr %g%s", p->loss == NN_LOSS_XENT ? "cross-entropy" : "MSE",
                 p->opt == NN_OPT_ADAM ? "Adam" : "SGD", lr, preset_lr);
        add_labelled(t, UI_TS_NORMAL, "train", width, line);
    }
    memory_text(lab, width, t);
    ui_text_addf(t, UI_TS_NORMAL, "%s", "");
    layers_text(lab, width, t);
}

/* The details scroll ([ and ]) above the device list, which stays. */
static void draw_details(ui_lab *lab)
{
    ui_setup_state *ss = ui_setup_of(lab);
    ui_text *t = &ss->details;
    ui_rect box = lab->layout.details, in = ui_rect_inner(box);
    const nn_preset_entry *e = ss->n_entries ? &ss->entries[ss->selected] : NULL;
    int bottom = in.y + in.h - ui_setup_devices_rows(lab, in.w);
    ui_box(lab, box, e ? e->name : "no preset");
    if (in.h <= 0)
        return;
    details_text(lab, e, in.w, t);
    int view = bottom - in.y;
    if (t->n > view)
        view--;                      /* a row for the marker */
    ui_text_draw_rows(lab, t, (ui_rect){ in.x, in.y, in.w, view > 0 ? view : 0 }, &ss->layers);
    if (t->n > view && view > 0)
        ui_scroll_draw_marker(lab, in.y + view, in.x + in.w, &ss->layers, t->n, view, "]", "[");
    ui_setup_draw_devices(lab, in, bottom);
}

static void setup_draw(ui_lab *lab, unsigned dirty)
{
    if (dirty & UI_D_TITLE)
        ui_draw_title(lab, "nnlab - setup: pick a preset, a device and a batch size");
    if (dirty & UI_D_LIST)
        draw_list(lab);
    if (dirty & UI_D_FIELDS)
        draw_fields(lab);
    if (dirty & UI_D_DETAILS)
        draw_details(lab);
    if (dirty & UI_D_STATUS)
        ui_draw_status(lab, !ui_settings_trains(&lab->chosen.set)
                                ? "Enter run  s save  L lessons  A add step  Tab move  +/- val  F5 rescan  ? help  q quit"
                                : "Enter run  w sweep  s save  L lessons  A add step  Tab move  +/- batch  F5 rescan  "
                                  "? help  q quit");
}

/* ---- keys --------------------------------------------------------------------------- */

/* Refuses to start before the devices are known. */
static int devices_known(ui_lab *lab)
{
    if (!lab->devices.known)
        ui_set_message(lab, 1, "still checking which devices can run here: a moment");
    return lab->devices.known;
}

/* The one size rule (nn_job_check_sizes): a batch larger than the training
 * set, or more memory than is available, is refused here with the field's
 * name (a Jacobian preset's [task] val), rather than started and shown with
 * a batch it never runs. */
static int sizes_fit(const ui_lab *lab, const nn_job_config *cfg, char *err, size_t err_len)
{
    nn_memory_estimate m;
    char key[UI_SIZE_KEY_LEN];
    nn_job_memory_estimate(cfg, &m);
    return nn_job_check_sizes(cfg, &m, ui_setup_size_key(lab, key, sizeof key), err, err_len) == 0;
}

/* Refuses a device choice that cannot run here, saying why, and switches
 * that break the rule every job keeps (nn_job_switches_check). */
static int devices_ready(ui_lab *lab)
{
    const char *names[2];
    int n = ui_settings_devices(&lab->chosen.set, names);
    nn_job_config cfg;
    char err[NN_ERR_LEN];
    for (int i = 0; i < n; i++)
        if (!ui_device_ok(lab, names[i]) && !ui_predicted_stands_in(lab, names[i])) {
            const nn_device_status *st = ui_device_status(lab, names[i]);
            ui_set_message(lab, 1, "%s%s unavailable: %s", n == 2 ? "cannot race: " : "", names[i],
                           st ? st->why : lab->devices.n ? "this build of nnlab does not know it" : lab->devices.why);
            return 0;
        }
    ui_setup_job_config(lab, &cfg);
    if (nn_job_switches_check(&cfg, err, sizeof err) != 0 || !sizes_fit(lab, &cfg, err, sizeof err)) {
        ui_set_message(lab, 1, "%s", err);
        return 0;
    }
    return 1;
}

int ui_setup_start_devices(ui_lab *lab, int sweep, const char **names, int max)
{
    if (!lab->chosen.preset_ok) {
        ui_set_message(lab, 1, "this preset does not load: %s", lab->chosen.preset_err);
        return -1;
    }
    if (!devices_known(lab))
        return -1;
    if (sweep)
        return ui_sweep_devices(lab, names, max);
    const char *chosen[2];
    int n = 0;
    if (!devices_ready(lab))
        return -1;
    int nd = ui_settings_devices(&lab->chosen.set, chosen);
    /* a race against a predicted GPU calibrates the device that runs for
     * real (the baseline when the GPU was asked for alone): the framework
     * way racing beside it is predicted from that calibration */
    for (int i = 0; i < nd && n < max; i++)
        if (!ui_predicted_stands_in(lab, chosen[i]))
            names[n++] = chosen[i];
    if (n == 0 && nd > 0 && ui_device_baseline(lab) && max > 0)
        names[n++] = ui_device_baseline(lab)->name;
    return n;
}

/* Enter, r or w with nothing being typed: the main loop starts it (after
 * calibrating what needs it). While a number is being typed the same keys
 * only confirm it: a run starts on the next one, so that the Enter that
 * confirms a value, or one pressed twice, never starts a job. */
static ui_action start(ui_lab *lab, int sweep)
{
    ui_setup_state *ss = ui_setup_of(lab);
    if (ss->edit[0]) {
        if (ui_field_commit(lab, ss) > 0)
            ui_set_message(lab, 0, "%s set: Enter or r runs, w sweeps", ui_field_name(lab, ss->field));
        return UI_ACT_HANDLED;
    }
    if (sweep && !ui_settings_trains(&lab->chosen.set)) {
        /* a batch sweep would time training steps, which such a job never
         * takes (`nnlab sweep` refuses it too): its run shows the val sweep */
        ui_set_message(lab, 1, "a Jacobian preset has no batch sweep: Enter runs it, and its run "
                       "shows the val sweep (predicted)");
        return UI_ACT_HANDLED;
    }
    return sweep ? UI_ACT_START_SWEEP : UI_ACT_START_RUN;
}

static int list_key(ui_lab *lab, int ch)
{
    ui_setup_state *ss = ui_setup_of(lab);
    int page = lab->layout.presets.h > 3 ? lab->layout.presets.h - 3 : 1;
    switch (ch) {
    case KEY_UP: select_preset(lab, ss->selected - 1); return 1;
    case KEY_DOWN: select_preset(lab, ss->selected + 1); return 1;
    case KEY_PPAGE: select_preset(lab, ss->selected - page); return 1;
    case KEY_NPAGE: select_preset(lab, ss->selected + page); return 1;
    case KEY_HOME: select_preset(lab, 0); return 1;
    case KEY_END: select_preset(lab, ss->n_entries - 1); return 1;
    }
    return 0;
}

static int fields_key(ui_lab *lab, int ch)
{
    ui_setup_state *ss = ui_setup_of(lab);
    switch (ch) {
    case KEY_UP:                     /* a value refused keeps the focus on its field */
        if (ui_field_commit(lab, ss) >= 0)
            ss->field = ui_field_next(lab, ss->field, -1);
        return 1;
    case KEY_DOWN:
        if (ui_field_commit(lab, ss) >= 0)
            ss->field = ui_field_next(lab, ss->field, 1);
        return 1;
    case KEY_LEFT: case KEY_RIGHT: case ' ':
        ss->edit[0] = '\0';
        ui_field_adjust(lab, ss, ss->field, ch == KEY_LEFT ? -1 : 1);
        return 1;
    case KEY_BACKSPACE: case 127: case 8:
        if (ss->edit[0])
            ss->edit[strlen(ss->edit) - 1] = '\0';
        return 1;
    }
    if (ui_field_type(ss, ch))
        return 1;
    if ((ch >= '0' && ch <= '9') || ch == '.') {
        /* a number typed on a field that takes none: said, never swallowed,
         * and nothing armed (Enter still runs, as the status row says) */
        if (stdscr)
            beep();
        ui_set_message(lab, 1, "%s is not a number: '%c' ignored (Left Right or Space change it)",
                       ui_field_name(lab, ss->field), ch);
        return 1;
    }
    return 0;
}

ui_action ui_setup_key(ui_lab *lab, int ch)
{
    ui_setup_state *ss = ui_setup_of(lab);
    int handled = 1;
    if (ch == 27 && ss->edit[0]) {           /* Esc drops a number being typed */
        ss->edit[0] = '\0';
    } else if (ch == '\t' || ch == KEY_BTAB) {
        if (ui_field_commit(lab, ss) >= 0) {
            ss->focus_fields = !ss->focus_fields;
            lab->dirty |= UI_D_LIST;
        }
    } else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER || ch == 'r' || ch == 'w') {
        ui_action act = start(lab, ch == 'w');
        lab->dirty |= UI_D_FIELDS | UI_D_DETAILS;
        return act;
    } else if (ch == 's' || ch == 'A') {     /* save as a preset, or add to a lesson as a step */
        lab->dirty |= UI_D_FIELDS | UI_D_DETAILS;
        return ui_field_commit(lab, ss) < 0 ? UI_ACT_HANDLED : ch == 's' ? UI_ACT_ASK_SAVE : UI_ACT_ADD_STEP;
    } else if (ch == KEY_F(5)) {
        ui_setup_survey(lab, ss);
        ui_setup_reload(lab, NULL);
        ui_set_message(lab, 0, "presets and devices scanned again");
    } else if (ch == '[' || ch == ']') {   /* the details and layers, a page at a time */
        ui_scroll_move(&ss->layers, ch == '[' ? UI_SCROLL_PAGE_UP : UI_SCROLL_PAGE_DOWN, ss->layers.total,
                       ss->layers.view);
    } else if ((ch == '+' || ch == '-') && !ss->edit[0]) {
        ui_field_adjust(lab, ss, UI_F_BATCH, ch == '+' ? 1 : -1);
    } else if (ss->focus_fields) {
        handled = fields_key(lab, ch);
    } else {
        handled = list_key(lab, ch);
    }
    lab->dirty |= UI_D_FIELDS | UI_D_DETAILS;
    return handled ? UI_ACT_HANDLED : UI_ACT_IGNORED;
}

/* Back from a run or a sweep: the loss axis linear again. */
static int setup_enter(ui_lab *lab)
{
    lab->log_scale = 0;
    return 0;
}

static const char *const setup_help[] = {
    "  Tab         move between the preset list and the settings",
    "  Up Down     move in the list (PgUp PgDn Home End) or the settings",
    "  Left Right  change a setting (Space too); batch, sweep range x2 /2",
    "  0-9 . e     type a number; Enter keeps it (checked: the range is",
    "              shown when it is not one), Esc drops it",
    "  + -         batch size (val) x2 / /2  s   save as a preset",
    "  [ ]         scroll the preset's details and layers (\"more (])\")",
    "  Enter r     run on the device(s)      w   batch sweep    F5 rescan",
    "              (after typing a number: the first Enter keeps it)",
    "              a device's first use calibrates it (seconds; Esc: no run)",
    "              gpu (predicted): no GPU here, the CPU races one predicted",
    "              for the GPU profile setting (Left Right: yours, shipped)",
    "              cpu + gpu with a GPU here: the GPU runs eager and graph, a",
    "              job each; a GPU switch changed runs that one way only",
    NULL,
};

const ui_screen_def ui_setup_screen = {
    .name = "setup",
    .help_title = "Setup",
    .help = setup_help,
    .state_size = sizeof(ui_setup_state),
    .open = setup_open,
    .close = ui_setup_free,
    .enter = setup_enter,
    .draw = setup_draw,
    .key = ui_setup_key,
    .poll = setup_poll,
};

/* ui/ui.h - the lab's state and the functions each screen file provides.
 * Only the UI thread touches any of this, and only it calls curses: jobs
 * run on the engine's threads and are read through snapshots (ui/text/run.h,
 * ui/text/sweep.h). */
#ifndef NNLAB_UI_H
#define NNLAB_UI_H

#include <curses.h>

#include "text/calib.h"
#include "text/chart.h"
#include "nnlab/cost.h"
#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "text/explain_text.h"
#include "text/layout.h"
#include "nnlab/preset.h"
#include "nnlab/race_ways.h"
#include "text/overlay.h"
#include "text/run.h"
#include "text/scroll.h"
#include "text/sweep.h"
#include "text/sysinfo.h"

#define UI_MAX_PRESETS 256

/* What a key handler or a poll asks of the lab's main loop (htop's
 * HANDLED | REDRAW | BREAK_LOOP): a screen marks what to redraw in
 * lab->dirty and returns an action; only ui/lab.c moves between screens,
 * opens the questions that guard a running job, and quits. */
typedef enum ui_action {
    UI_ACT_IGNORED = 0,              /* not this handler's key: the caller may try another */
    UI_ACT_HANDLED,                  /* done; what changed is marked in lab->dirty */
    UI_ACT_START_RUN,                /* setup: run the settings, calibrating first if needed */
    UI_ACT_START_SWEEP,              /* setup: sweep the batch size, likewise */
    UI_ACT_GO_RUN,                   /* calibrated: open the dashboard on a new run */
    UI_ACT_GO_SWEEP,                 /* calibrated: open the sweep screen on a new sweep */
    UI_ACT_GO_SETUP,                 /* back to setup; what still runs is cancelled */
    UI_ACT_ASK_BACK,                 /* a job runs: ask before going back */
    UI_ACT_ASK_SAVE,                 /* setup: ask the name to save the settings under */
    UI_ACT_QUIT,
    UI_ACT_ASK_QUIT                  /* quit, asking first when a job runs */
} ui_action;

/* The panels a frame redraws (bits); UI_D_ALL after a resize or an overlay. */
enum {
    UI_D_TITLE = 1 << 0, UI_D_STATUS = 1 << 1,
    UI_D_LIST = 1 << 2, UI_D_FIELDS = 1 << 3, UI_D_DETAILS = 1 << 4,
    UI_D_CHART = 1 << 5, UI_D_SIDE = 1 << 6, UI_D_JOBS = 1 << 7, UI_D_SYS = 1 << 8,
    UI_D_OVERLAY = 1 << 9, UI_D_EXPLAIN = 1 << 10,
    UI_D_ALL = (1 << 11) - 1
};

/* Colour roles; each has a monochrome attribute too (ui/draw.c). */
enum ui_role {
    UI_NORMAL, UI_TITLE, UI_DIM, UI_ERROR, UI_OK, UI_KEY, UI_SELECTED, UI_FRAME,
    UI_SERIES0, UI_SERIES1, UI_SERIES2, UI_SERIES3,
    UI_PHASE0, UI_PHASE1, UI_PHASE2, UI_PHASE3, UI_PHASE4, UI_PHASE5,
    UI_ROLE_COUNT
};

/* The setup screen's fields, in the order drawn. A Jacobian preset shows
 * Method and not the training fields (epochs, steps, learning rate); a
 * training preset the reverse (ui_field_shown). */
enum ui_field {
    UI_F_DEVICE, UI_F_COMPARE, UI_F_BATCH, UI_F_METHOD, UI_F_EPOCHS, UI_F_STEPS, UI_F_LR,
    UI_F_DATA_DIR,                   /* real CIFAR-10 or MNIST files: ui/panels/dialog.c asks for the folder */
    UI_F_DATA_ON_DEVICE, UI_F_SYNC_EVERY_STEP, UI_F_CUDA_GRAPH, UI_F_DETERMINISTIC,
    UI_F_GPU_PROFILE,                /* a GPU not here: ui/panels/race_predicted.c */
    UI_F_SWEEP_FROM, UI_F_SWEEP_TO, UI_F_SWEEP_STEPS, UI_F_SWEEP_DEVICES,
    UI_F_SWEEP_PYTORCH,              /* the framework way measured with PyTorch (nnlab/torch_step.h) */
    UI_N_FIELDS
};

typedef struct ui_settings {
    char device[16];                 /* the device run, as the survey names it */
    char compare[16];                /* the one run beside it; "" alone */
    int sequential;                  /* side by side: 1 one after the other, 0 race */
    int batch, epochs;
    long steps;                      /* 0: all epochs */
    double lr;
    int data_on_device, sync_every_step, cuda_graph;   /* GPU teaching switches */
    int deterministic;               /* [train] deterministic: repeatable GPU runs */
    int pinned, tf32;                /* the preset's, kept when saved (no field) */
    int sweep_from, sweep_to;        /* powers of two: the sweep doubles */
    long sweep_steps;
    int sweep_all;                   /* sweep cpu-ref too */
    enum nn_job_kind kind;           /* the preset's job kind: a kind that does not
                                        train sizes by its own size (nn_job_traits:
                                        a Jacobian's [task] val), kept in batch */
    int method;                      /* the kind's method (nn_job_traits): [task] method */
    char gpu_profile[NN_NAME_LEN];   /* the profile a GPU not here is predicted with
                                        ("": nn_profile_default_name); ui/panels/race_predicted.c */
    char data_dir[NN_DIR_LEN];       /* [data] dir: "" the preset kind's default (synthetic CIFAR-10,
                                        Debian's Fashion-MNIST); saved with the preset */
    int sweep_pytorch;               /* the sweep measures the framework way with PyTorch too
                                        (this session only: a preset has no key for it) */
    char pytorch_label[64];          /*   "PyTorch 1.13", found when it was switched on */
} ui_settings;

enum ui_dialog {
    UI_DLG_NONE, UI_DLG_SAVE, UI_DLG_OVERWRITE,
    UI_DLG_SHADOW,                   /* the name is a shipped preset's: yours hides it */
    UI_DLG_QUIT, UI_DLG_BACK,
    UI_DLG_CALIBRATE,                /* first use: measuring a device, with progress */
    UI_DLG_CALIB_FAILED,             /* what failed; the job ran without a prediction */
    UI_DLG_LONG_JOB,                 /* a job predicted over 10 minutes: start it? (ui/panels/long_job.c) */
    UI_DLG_DATA_DIR                  /* the data folder, typed (ui/panels/dialog.c) */
};

/* Calibrating on first use (ui/panels/calib_dialog.c): the devices still to
 * measure, the one being measured, and what failed. */
typedef struct ui_calibrating {
    int active;                      /* the dialog is up and a calibration job measures */
    int after;                       /* UI_ACT_GO_RUN, UI_ACT_GO_SWEEP, or UI_ACT_HANDLED: nothing */
    char queue[NN_CAL_STORE_DEVICES][16];
    int n_queue, at;                 /* at: the one being measured */
    ui_calib_run run;
    double fraction;                 /* the last progress polled */
    char what[64];
    char times[48];                  /* its elapsed<remaining then (nnlab/progress.h) */
    char failed[NN_ERR_LEN * 2];     /* the failures so far, for the dialog after */
    char warning[NN_ERR_LEN + 64];   /* measured but not cached: for the status row */
} ui_calibrating;

/* What the screens share (each screen's own state is its own: setup_screen.h,
 * dashboard.h, sweep_screen.h). The preset chosen on the setup screen and
 * its settings: what a run or a sweep runs. The setup screen changes it; the
 * others read it. */
typedef struct ui_chosen {
    nn_preset preset;                /* the selected one, loaded and checked */
    char preset_path[NN_PATH_LEN];   /*   its file (PyTorch's helper reads it) */
    int preset_ok;
    char preset_err[NN_ERR_LEN];
    ui_settings set;
} ui_chosen;

/* The devices, surveyed on a thread of their own at start and on F5 (the
 * setup screen asks; ui/screens/setup_screen.c). */
typedef struct ui_devices {
    int known;                       /* 0 while checking: none can be started */
    int n;                           /* every device nnlab knows, available or not */
    nn_device_status st[NN_MAX_DEVICES];   /* the survey's order, the baseline (the
                                              first on a pool of CPU threads) first */
    char why[NN_ERR_LEN];            /* known and none: why there was no survey */
} ui_devices;

typedef struct ui_lab {
    /* terminal */
    int cols, rows;
    int utf8, color;
    ui_layout layout;
    enum ui_screen screen;           /* the one shown: its entry in ui_screens */
    unsigned dirty;                  /* UI_D_* */
    int help;                        /* the help overlay is open */
    enum ui_dialog dialog;
    char input[64];                  /* the save dialog's text */
    char dir_input[NN_DIR_LEN];      /* the data folder dialog's text */
    char save_path[NN_PATH_LEN];     /* the overwrite question's file */
    char message[NN_ERR_LEN];        /* the status row's message, until the next key */
    int message_error;
    int quit;
    int quit_signal;             /* the signal that ended the lab (SIGINT, SIGTERM, SIGHUP); 0: a key */

    /* the screens: each one's own state (ui_screen_def.state_size), and what
     * they share: the choice, the devices, the jobs */
    void *state[UI_N_SCREENS];
    ui_chosen chosen;
    ui_devices devices;
    ui_run run;                      /* the run screen's run (ui/screens/dashboard.c) */
    nn_sweep sweep;                  /* the sweep screen's sweep (ui/screens/sweep_screen.c) */

    /* what the run and the sweep screens share */
    int log_scale;                   /* run: log loss axis; sweep: log samples/s axis */
    int explain_shown;               /* narrow terminal: the Explain panel replaces the chart */
    unsigned pending;                /* UI_D_* with new data, drawn at the next frame slot */
    double frame_at;                 /* when the job rows or the chart were last drawn */
    ui_chart chart;                  /* scratch raster for whichever chart is drawn */

    /* machine */
    ui_sysinfo sys;
    double sys_at;

    /* the calibrations and first-use measuring */
    nn_cal_store cals;
    ui_calibrating calib;

    /* panels longer than the terminal (ui/text/scroll.h) */
    ui_scroll help_scroll;           /* the help overlay */
    ui_text help_text;               /*   its rows, made as it is drawn (ui/panels/help.c) */
    ui_scroll explain_scroll;        /* the Explain panel (run and sweep) */
    ui_scroll main_scroll;           /* a Jacobian run's main panel */
    /* a job predicted to take over NN_JOB_ASK_S (ui/panels/long_job.c) */
    int long_job_ok;                 /* the user said yes: the next UI_ACT_GO_RUN starts it */
    char long_job_text[NN_TEXT_LEN]; /* the prediction, as the question shows it */
    /* the session's earlier runs, dimmed behind the current one (`o`; ui/text/overlay.c) */
    ui_overlay past;
} ui_lab;

/* ---- a screen -------------------------------------------------------------------- */
/* One screen of the lab, as the main loop (ui/lab.c) sees it: every hook
 * but draw and key may be NULL. A screen keeps its own state in
 * lab->state[its enum ui_screen], allocated (zeroed) with the lab. */
typedef struct ui_screen_def {
    const char *name;
    const char *help_title;          /* its heading in the help overlay (ui/panels/help.c) */
    const char *const *help;         /* its keys there, one line each; NULL ends them */
    size_t state_size;
    void (*open)(ui_lab *lab);       /* the lab starts */
    void (*close)(ui_lab *lab);      /* the lab quits: waits for what runs, frees */
    int (*enter)(ui_lab *lab);       /* before it is shown: starts its job; -1 (said
                                        on the status row) keeps the screen shown */
    void (*leave)(ui_lab *lab);      /* another is shown: cancels and frees its job */
    void (*draw)(ui_lab *lab, unsigned dirty);   /* the panels marked dirty */
    ui_action (*key)(ui_lab *lab, int ch);
    void (*poll)(ui_lab *lab, double now);        /* copies what its job published */
    int (*active)(const ui_lab *lab);             /* its job runs (or waits to) */
} ui_screen_def;

/* The screens, each defined in its own file; ui/screens/screens.c lists them by
 * enum ui_screen. */
extern const ui_screen_def ui_setup_screen, ui_run_screen, ui_sweep_screen;
extern const ui_screen_def *const ui_screens[UI_N_SCREENS];

/* ---- ui/draw.c: shared drawing --------------------------------------------- */
void ui_colors_init(ui_lab *lab);
attr_t ui_attr(const ui_lab *lab, enum ui_role role);
void ui_clear_rect(ui_rect r);
/* A box with a title on its top edge; the inside is cleared. */
void ui_box(const ui_lab *lab, ui_rect r, const char *title);
/* Prints at most w columns of text (UTF-8, one column per character). */
int ui_put(int y, int x, int w, attr_t attr, const char *text);
int ui_putf(int y, int x, int w, attr_t attr, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Text wrapped over at most max_rows rows of width w; returns the rows used. */
int ui_put_wrapped(int y, int x, int w, int max_rows, attr_t attr, const char *text);
/* The rows ui_put_wrapped would use. */
int ui_wrapped_rows(int w, int max_rows, const char *text);
/* The attribute of a ui_text style (UI_TS_*). */
attr_t ui_text_attr(const ui_lab *lab, int style);
/* Rows s->top.. of t inside in, as many as fit (s clamped to t first). */
void ui_text_draw_rows(const ui_lab *lab, const ui_text *t, ui_rect in, ui_scroll *s);
/* The scroll marker ("v 12 more (PgDn)", ui/text/scroll.h) ending at column
 * right on row y; nothing when everything fits. */
void ui_scroll_draw_marker(const ui_lab *lab, int y, int right, const ui_scroll *s, int total, int view,
                           const char *down_key, const char *up_key);
/* A boxed panel of scrolled text: its rows inside box and the marker on
 * the box's bottom edge. Returns the rows hidden below. */
int ui_text_draw_scrolled(const ui_lab *lab, const ui_text *t, ui_rect box, ui_scroll *s, const char *down_key,
                          const char *up_key);
/* The scroll move a key asks for (Up Down PgUp PgDn Home End), or UI_SCROLL_NONE. */
enum ui_scroll_move ui_scroll_key(int ch);
void ui_draw_title(ui_lab *lab, const char *left);
void ui_draw_status(ui_lab *lab, const char *keys);
void ui_set_message(ui_lab *lab, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- ui/panels/chart_view.c: a boxed chart with axes, labels and a legend -------------- */
typedef struct ui_series {
    const double *x, *y;
    int n;
    int connect;
    int role;                        /* UI_SERIES0.. */
    const char *name;
} ui_series;
void ui_chart_view(ui_lab *lab, ui_rect box, const char *title, const char *x_title,
                   const ui_axis *ax, const ui_axis *ay, const ui_series *s, int ns,
                   const double *vlines, int nv);
/* The same, saying `empty` in the plot while no series has a point. */
void ui_chart_view_text(ui_lab *lab, ui_rect box, const char *title, const char *x_title,
                        const ui_axis *ax, const ui_axis *ay, const ui_series *s, int ns,
                        const double *vlines, int nv, const char *empty);

/* ---- screens ------------------------------------------------------------------ */
/* ui/screens/setup_screen.c (ui_setup_screen) */
/* Lists the presets again, selecting select_path (NULL: the one selected). */
void ui_setup_reload(ui_lab *lab, const char *select_path);
ui_action ui_setup_key(ui_lab *lab, int ch);
/* Waits for a survey still running and frees the preset list (quitting). */
void ui_setup_free(ui_lab *lab);
/* The devices a run (sweep 0) or a sweep (1) of the settings would use;
 * returns how many, or -1 after saying on the status row why it cannot. */
int ui_setup_start_devices(ui_lab *lab, int sweep, const char **names, int max);

/* ui/screens/dashboard.c (ui_run_screen) */
ui_action ui_dashboard_key(ui_lab *lab, int ch);
void ui_draw_sysinfo(ui_lab *lab, ui_rect box);


/* ui/panels/export_key.c: `x` on the run and the sweep screens writes the run or
 * the sweep as CSV and JSON (nnlab/export.h) and says where on the status row */
void ui_export_run(ui_lab *lab, const nn_race_ways *ways);

/* ---- ui/panels/long_job.c: the question before a job predicted over 10 minutes ---- */
/* 1 when the run the settings describe is predicted (nn_job_predict_s, the
 * calibrations the lab holds) to take over NN_JOB_ASK_S and the user has
 * not said yes yet: the question is up, nothing starts. 0: go on. */
int ui_long_job_ask(ui_lab *lab);
ui_action ui_long_job_key(ui_lab *lab, int ch);
void ui_long_job_draw(ui_lab *lab);
void ui_export_sweep(ui_lab *lab);

/* ui/screens/sweep_screen.c (ui_sweep_screen) */
ui_action ui_sweep_screen_key(ui_lab *lab, int ch);

/* ui/panels/job_keys.c: the keys the run and the sweep screens share (l log scale,
 * e explain, Esc/b/Enter back); running: the screen's job runs, which Esc
 * asks about and Enter leaves alone. Each screen handles its own keys first
 * (c cancel and x export among them). */
ui_action ui_job_screen_key(ui_lab *lab, int ch, int running);

/* ui/panels/explain_panel.c: the Explain panel, on the dashboard and the sweep */
/* `e`: shows the panel in the chart's place, or the chart again (narrow
 * terminals; a wide one shows both). */
void ui_explain_toggle(ui_lab *lab);
/* The rest, which the screens hand their state: ui/panels/explain_panel.h. */

/* ui/panels/calib_dialog.c: calibrating on first use */
/* Measures the devices that have no calibration, then asks for `after`
 * (UI_ACT_GO_RUN or UI_ACT_GO_SWEEP, returned at once when nothing needs
 * measuring, else by the poll that sees the last measurement end). */
ui_action ui_calibrate_then(ui_lab *lab, int after, const char *const *devices, int n);
/* Follows the measurement; starts the next one, or returns what waited. */
ui_action ui_calibrate_poll(ui_lab *lab);
int ui_calibrating_now(const ui_lab *lab);
void ui_calibrate_draw(ui_lab *lab);
ui_action ui_calibrate_key(ui_lab *lab, int ch);
/* Waits for a measurement still running (quitting). */
void ui_calibrate_free(ui_lab *lab);

/* ui/panels/help.c */
void ui_help_draw(ui_lab *lab);
/* A key while the help is open: scrolls it, or closes it. */
ui_action ui_help_key(ui_lab *lab, int ch);

/* ui/panels/dialog.c: save, overwrite, quit and back questions */
void ui_dialog_open_save(ui_lab *lab);
void ui_dialog_draw(ui_lab *lab);
ui_action ui_dialog_key(ui_lab *lab, int ch);

/* ui/lab.c */
/* 1 when a screen's job runs (its ui_screen_def.active). */
int ui_jobs_active(const ui_lab *lab);
/* A lab with every screen's state allocated and zeroed, no terminal touched
 * (nn_lab_main, and the tests); NULL when out of memory. */
ui_lab *ui_lab_create(void);
/* Closes every screen (waiting for their jobs) and frees the lab; NULL is allowed. */
void ui_lab_free(ui_lab *lab);

#endif

/* ui/lab_state.h - what the lab's screens and panels share: the lab
 * (ui_lab: the terminal, the screen shown, the dialogs, the preset chosen
 * and its settings, the devices, the jobs), what a key handler returns to
 * the main loop, the panels a frame redraws, and a screen as the main loop
 * sees it. Each screen's own state is in its own header (ui/screens/);
 * each screen's and panel's functions are in theirs; drawing is
 * ui/draw.h. Only the UI thread touches any of this: jobs run on the
 * engine's threads and are read through snapshots (ui/text/run.h,
 * ui/text/sweep.h). No curses here. */
#ifndef NNLAB_UI_LAB_STATE_H
#define NNLAB_UI_LAB_STATE_H

#include <stddef.h>

#include "nnlab/device.h"
#include "nnlab/engine.h"
#include "nnlab/preset.h"
#include "text/calib.h"
#include "text/chart.h"
#include "text/explain_text.h"
#include "text/layout.h"
#include "text/overlay.h"
#include "text/run.h"
#include "text/scroll.h"
#include "text/sweep.h"
#include "text/sysinfo.h"

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
    UI_ACT_ASK_QUIT,                 /* quit, asking first when a job runs */
    UI_ACT_GO_LESSON,                /* L: the lessons (refused while a job runs) */
    UI_ACT_ADD_STEP                  /* setup: the settings added as a step of a lesson of yours */
} ui_action;

/* The panels a frame redraws (bits); UI_D_ALL after a resize or an overlay. */
enum {
    UI_D_TITLE = 1 << 0, UI_D_STATUS = 1 << 1,
    UI_D_LIST = 1 << 2, UI_D_FIELDS = 1 << 3, UI_D_DETAILS = 1 << 4,
    UI_D_CHART = 1 << 5, UI_D_SIDE = 1 << 6, UI_D_JOBS = 1 << 7, UI_D_SYS = 1 << 8,
    UI_D_OVERLAY = 1 << 9, UI_D_EXPLAIN = 1 << 10,
    UI_D_ALL = (1 << 11) - 1
};

typedef struct ui_settings {
    char device[16];                 /* the device run, as the survey names it */
    char compare[16];                /* the one run beside it; "" alone */
    int sequential;                  /* side by side: 1 one after the other, 0 race */
    int ranks;                       /* > 1: 1 rank against that many on the device (the
                                        ranks a child under mpirun: NN_JOB_RANKS); 1 alone */
    int no_overlap;                  /* ranks: one sum after backward (a lesson's step with
                                        overlap = false; no field) */
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
    int sweep_pytorch;               /* sweeps and races measure the framework way with PyTorch too
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
    nn_file_seen save_seen;          /* that file as it was when the name was given */
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
    /* a lesson's race or sweep step runs on the run or sweep screen: back
     * from it returns to the lesson (ui/screens/lesson_screen.c) */
    int in_lesson;
    int n_lesson_batches;            /* its sweep's batch sizes (0: the settings' powers of two) */
    int lesson_batches[NN_SWEEP_MAX_BATCHES];
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

/* The screens, each defined in its own file (its header in ui/screens/ names it);
 * ui/screens/screens.c lists them by enum ui_screen. */
extern const ui_screen_def *const ui_screens[UI_N_SCREENS];

/* ---- ui/lab.c ---- */
/* 1 when a screen's job runs (its ui_screen_def.active). */
int ui_jobs_active(const ui_lab *lab);
/* A lab with every screen's state allocated and zeroed, no terminal touched
 * (nn_lab_main, and the tests); NULL when out of memory. */
ui_lab *ui_lab_create(void);
/* Closes every screen (waiting for their jobs) and frees the lab; NULL is allowed. */
void ui_lab_free(ui_lab *lab);

#endif

/* ui/lab.c - the lab's main loop: curses set-up and tear-down, signals,
 * screen switching, key dispatch and the frame budget. Key handlers and
 * polls return an action (lab_state.h); act() alone moves between screens.
 *
 * The screens are a table (ui_screens, ui/screens/screens.c: enter, leave, draw,
 * key, poll per screen); the loop calls the current screen's entry and
 * never asks which screen it is. It wakes on getch with a timeout (100 ms
 * while a job runs), has the current screen copy what its jobs published
 * since the last wake (its poll: ui/text/run.c, src/analysis/model/sweep.c), and
 * redraws only the panels whose data changed: the job rows and the chart at
 * most five times a second, the machine panel once a second, everything at
 * once on a key or a change of state. Signal handlers only set flags; the
 * loop acts on them. */
#include "lab.h"
#include "panels/rank_rows.h"
#include "draw.h"
#include "lab_state.h"
#include "panels/long_job.h"
#include "panels/calib_dialog.h"
#include "panels/help.h"
#include "panels/lesson_add.h"
#include "panels/dialog.h"
#include "screens/setup_screen.h"
#include "text/format.h"
#include "panels/race_predicted.h"

#include <langinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JOBS_FRAME_S 0.2             /* job rows and chart: at most 5 redraws a second */

static volatile sig_atomic_t got_interrupt, got_terminate;   /* got_terminate: the signal */

static void on_interrupt(int sig)
{
    (void)sig;
    got_interrupt = 1;
}

static void on_terminate(int sig)
{
    got_terminate = sig;
}

/* After a signal ended the lab, its jobs get LAB_GRACE_S to stop: one whose
 * thread is stuck inside a library (an allocation OpenBLAS retries forever
 * under ulimit -v) must not keep the process alive, so a watchdog thread
 * ends it with the signal's code once the terminal is restored. */
#define LAB_GRACE_S 2

static void *exit_watchdog(void *arg)
{
    int code = (int)(intptr_t)arg;
    struct timespec ts = { LAB_GRACE_S, 0 };
    nanosleep(&ts, NULL);
    fprintf(stderr, "nnlab: a job did not stop within %d s of the signal; leaving it\n", LAB_GRACE_S);
    _exit(code);
}

static void start_exit_watchdog(int code)
{
    pthread_t t;
    if (pthread_create(&t, NULL, exit_watchdog, (void *)(intptr_t)code) == 0)
        pthread_detach(t);
}

/* A crash must not leave the terminal in curses mode: restore it, then die
 * of the same signal (SA_RESETHAND put the default action back). endwin is
 * not async-signal-safe, but the process is ending either way. */
static void on_crash(int sig)
{
    endwin();
    raise(sig);
}

static const int crash_signals[] = { SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL };
#define N_CRASH ((int)(sizeof crash_signals / sizeof crash_signals[0]))

typedef struct saved_signals {
    struct sigaction intr, term, hup, crash[N_CRASH];
} saved_signals;

static int install_signals(saved_signals *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_interrupt;    /* no SA_RESTART: getch returns at once */
    if (sigaction(SIGINT, &sa, &old->intr) != 0)
        return -1;
    sa.sa_handler = on_terminate;
    if (sigaction(SIGTERM, &sa, &old->term) != 0 || sigaction(SIGHUP, &sa, &old->hup) != 0)
        return -1;
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_RESETHAND;
    for (int i = 0; i < N_CRASH; i++)
        if (sigaction(crash_signals[i], &sa, &old->crash[i]) != 0)
            return -1;
    return 0;
}

static void restore_signals(const saved_signals *old)
{
    sigaction(SIGINT, &old->intr, NULL);
    sigaction(SIGTERM, &old->term, NULL);
    sigaction(SIGHUP, &old->hup, NULL);
    for (int i = 0; i < N_CRASH; i++)
        sigaction(crash_signals[i], &old->crash[i], NULL);
}

/* ---- screens ---------------------------------------------------------------------- */

static const ui_screen_def *current(const ui_lab *lab)
{
    return ui_screens[lab->screen];
}

int ui_jobs_active(const ui_lab *lab)
{
    for (int s = 0; s < UI_N_SCREENS; s++)
        if (ui_screens[s]->active && ui_screens[s]->active(lab))
            return 1;
    return 0;
}

static void relayout(ui_lab *lab)
{
    getmaxyx(stdscr, lab->rows, lab->cols);
    ui_layout_compute(lab->cols, lab->rows, lab->screen, lab->run.n_jobs + (ui_predicted_rows(lab) + ui_rank_rows_total(&lab->run) + 1) / 2,
                      &lab->layout);
    erase();
    lab->dirty = UI_D_ALL;
}

/* Shows screen s once it has started its job (it stays on the current one,
 * which says why, when it cannot); the one left cancels and frees its own. */
static void show(ui_lab *lab, enum ui_screen s)
{
    const ui_screen_def *from = current(lab), *to = ui_screens[s];
    if (to->enter && to->enter(lab) != 0)
        return;
    if (from != to && from->leave)
        from->leave(lab);
    lab->screen = s;
    lab->frame_at = 0;
    lab->pending = 0;
    lab->explain_scroll = lab->main_scroll = (ui_scroll){ 0, 0, 0 };   /* a new job's text from its top */
    relayout(lab);
}

static void ask(ui_lab *lab, enum ui_dialog d)
{
    lab->dialog = d;
    lab->dirty |= UI_D_OVERLAY;
}

static ui_action start_jobs(ui_lab *lab, int sweep)
{
    const char *names[NN_MAX_DEVICES];
    int n = ui_setup_start_devices(lab, sweep, names, NN_MAX_DEVICES);
    if (n < 0)
        return UI_ACT_HANDLED;       /* the status row says why */
    /* a device without a calibration is measured first (a few seconds) */
    return ui_calibrate_then(lab, sweep ? UI_ACT_GO_SWEEP : UI_ACT_GO_RUN, names, n);
}

/* The one place that moves between screens, asks the guarding questions
 * and quits: every key handler and poll returns its wish here. */
static void act(ui_lab *lab, ui_action a)
{
    while (a > UI_ACT_HANDLED) {
        ui_action next = UI_ACT_HANDLED;
        switch (a) {
        case UI_ACT_START_RUN: next = start_jobs(lab, 0); break;
        case UI_ACT_START_SWEEP: next = start_jobs(lab, 1); break;
        case UI_ACT_GO_RUN:
            if (!ui_long_job_ask(lab))   /* over 10 minutes predicted: asked first */
                show(lab, UI_RUN);
            break;
        case UI_ACT_GO_SWEEP: show(lab, UI_SWEEP); break;
        case UI_ACT_GO_SETUP: show(lab, lab->in_lesson ? UI_LESSON : UI_SETUP); break;   /* a lesson's step ended */
        case UI_ACT_GO_LESSON: show(lab, UI_LESSON); break;
        case UI_ACT_ADD_STEP: ui_lesson_add_step(lab); break;
        case UI_ACT_ASK_BACK: ask(lab, UI_DLG_BACK); break;
        case UI_ACT_ASK_SAVE: ui_dialog_open_save(lab); break;
        case UI_ACT_ASK_QUIT:
            if (ui_jobs_active(lab))
                ask(lab, UI_DLG_QUIT);
            else
                lab->quit = 1;
            break;
        case UI_ACT_QUIT: lab->quit = 1; break;
        default: break;
        }
        a = next;
    }
}

/* ---- input -------------------------------------------------------------------------- */

static ui_action handle_key(ui_lab *lab, int ch)
{
    if (lab->layout.too_small)
        return ch == 'q' ? UI_ACT_ASK_QUIT : UI_ACT_HANDLED;
    if (lab->dialog != UI_DLG_NONE)
        return ui_dialog_key(lab, ch);
    if (lab->help)
        return ui_help_key(lab, ch);   /* scrolls it, or closes it */
    if (lab->message[0]) {           /* a message lasts until the next key */
        lab->message[0] = '\0';
        lab->dirty |= UI_D_STATUS;
    }
    if (ch == KEY_F(1) || ch == '?') {
        lab->help = 1;
        lab->dirty |= UI_D_OVERLAY;
        return UI_ACT_HANDLED;
    }
    if (ch == 'q' && lab->screen != UI_LESSON)   /* there q leaves the lesson */
        return UI_ACT_ASK_QUIT;
    if (ch == 'L' && lab->screen != UI_LESSON) {
        if (!ui_jobs_active(lab))
            return UI_ACT_GO_LESSON;
        ui_set_message(lab, 1, "a job runs: cancel it (c) or let it end, then L opens the lessons");
        return UI_ACT_HANDLED;
    }
    return current(lab)->key(lab, ch);
}

static void handle_signals(ui_lab *lab)
{
    if (got_terminate) {
        lab->quit_signal = got_terminate;
        got_terminate = 0;
        lab->quit = 1;
    }
    if (got_interrupt) {
        got_interrupt = 0;
        /* a second Ctrl-C at the question quits */
        if (lab->dialog == UI_DLG_QUIT || !ui_jobs_active(lab)) {
            lab->quit = 1;
            lab->quit_signal = SIGINT;
        } else {
            act(lab, UI_ACT_ASK_QUIT);
        }
    }
}

/* ---- polling the jobs ---------------------------------------------------------------- */

/* New data marks panels pending; they are redrawn at most every
 * JOBS_FRAME_S, except on a change of state, which is drawn at once. */
static void poll_jobs(ui_lab *lab, double now)
{
    act(lab, ui_calibrate_poll(lab));   /* may start the run or the sweep that waited */
    if (current(lab)->poll)
        current(lab)->poll(lab, now);
    if (lab->pending && now - lab->frame_at >= JOBS_FRAME_S) {
        lab->dirty |= lab->pending;
        lab->pending = 0;
    }
}

/* ---- drawing -------------------------------------------------------------------------- */

static void draw_too_small(ui_lab *lab)
{
    char msg[96];
    erase();
    snprintf(msg, sizeof msg, "terminal too small: %dx%d", lab->cols, lab->rows);
    mvaddnstr(lab->rows / 2 - 1, 0, msg, lab->cols);
    snprintf(msg, sizeof msg, "the lab needs %dx%d (q quits)", UI_MIN_COLS, UI_MIN_ROWS);
    mvaddnstr(lab->rows / 2, 0, msg, lab->cols);
}

static void draw(ui_lab *lab, double now)
{
    unsigned d = lab->dirty;
    if (!d)
        return;
    lab->dirty = 0;
    if (lab->layout.too_small) {
        draw_too_small(lab);
    } else {
        if (d & (UI_D_JOBS | UI_D_CHART))
            lab->frame_at = now;
        current(lab)->draw(lab, d);
        if (lab->help)
            ui_help_draw(lab);
        if (lab->dialog != UI_DLG_NONE)
            ui_dialog_draw(lab);
    }
    refresh();                       /* one terminal update per frame, changed cells only */
}

static void run_loop(ui_lab *lab)
{
    while (!lab->quit) {
        int active = ui_jobs_active(lab) || ui_calibrating_now(lab);
        timeout(active ? 100 : 500);
        int ch = getch();
        double now = nn_now();
        handle_signals(lab);
        if (ch == KEY_RESIZE)
            relayout(lab);
        else if (ch != ERR)
            act(lab, handle_key(lab, ch));
        if (!lab->quit)
            poll_jobs(lab, now);
        if (lab->help || lab->dialog != UI_DLG_NONE)
            lab->dirty |= lab->dirty ? UI_D_OVERLAY : 0;   /* keep the box on top */
        draw(lab, now);
    }
}

/* ---- set-up and tear-down --------------------------------------------------------------- */

static int start_curses(ui_lab *lab, SCREEN **scr)
{
    *scr = newterm(NULL, stdout, stdin);
    if (!*scr)
        return -1;
    set_term(*scr);
    if (cbreak() == ERR || noecho() == ERR || keypad(stdscr, TRUE) == ERR)
        return -1;
    curs_set(0);                     /* may fail on a terminal without cursor control */
    set_escdelay(25);                /* Esc alone must not wait a second */
    lab->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    ui_colors_init(lab);
    return 0;
}

ui_lab *ui_lab_create(void)
{
    ui_lab *lab = calloc(1, sizeof *lab);
    for (int s = 0; lab && s < UI_N_SCREENS; s++)
        if (!(lab->state[s] = calloc(1, ui_screens[s]->state_size ? ui_screens[s]->state_size : 1))) {
            ui_lab_free(lab);
            return NULL;
        }
    return lab;
}

void ui_lab_free(ui_lab *lab)
{
    if (!lab)
        return;
    ui_calibrate_free(lab);          /* waits for a measurement still running */
    for (int s = 0; s < UI_N_SCREENS; s++) {
        if (lab->state[s] && ui_screens[s]->close)
            ui_screens[s]->close(lab);   /* waits for its job; frees what it holds */
        free(lab->state[s]);
    }
    free(lab);
}

int nn_lab_main(void)
{
    saved_signals old;
    SCREEN *scr = NULL;
    memset(&old, 0, sizeof old);     /* SIG_DFL wherever install_signals stopped */
    setlocale(LC_CTYPE, "");         /* only the character type follows the environment */
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "nnlab: the lab needs a terminal; see nnlab --help for the headless commands\n");
        return 1;
    }
    ui_lab *lab = ui_lab_create();
    if (!lab) {
        fprintf(stderr, "nnlab: out of memory\n");
        return 1;
    }
    if (install_signals(&old) != 0 || start_curses(lab, &scr) != 0) {
        if (scr) {
            endwin();
            delscreen(scr);
        }
        restore_signals(&old);
        ui_lab_free(lab);
        fprintf(stderr, "nnlab: cannot use this terminal (TERM=%s)\n", getenv("TERM") ? getenv("TERM") : "");
        return 1;
    }
    ui_sysinfo_open(&lab->sys);
    for (int s = 0; s < UI_N_SCREENS; s++)
        if (ui_screens[s]->open)
            ui_screens[s]->open(lab);
    relayout(lab);
    run_loop(lab);
    erase();
    refresh();
    endwin();
    /* ended by a signal: the shell's code for it, 128 + its number */
    int code = lab->quit_signal ? 128 + lab->quit_signal : 0;
    if (code)
        start_exit_watchdog(code);
    ui_sysinfo_close(&lab->sys);
    ui_lab_free(lab);
    delscreen(scr);
    restore_signals(&old);
    return code;
}

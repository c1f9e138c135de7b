/* tests/test_ui_keys.c - the lab's key handlers return actions and only the
 * main loop acts on them: the questions that guard a running job, the keys
 * the run and the sweep screens share (one handler), and the setup keys
 * that start a run or a sweep. No terminal: handlers draw nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "nnlab/device.h"
#include "nnlab/jacobian.h"
#include "screens/setup_fields.h"
#include <curses.h>
#include "lab_state.h"
#include "panels/help.h"
#include "panels/dialog.h"
#include "screens/dashboard.h"
#include "screens/sweep_screen.h"
#include "screens/setup_screen.h"
#include "panels/run_view.h"

static ui_lab *new_lab(enum ui_screen screen)
{
    ui_lab *lab = ui_lab_create();
    assert_non_null(lab);
    lab->screen = screen;
    return lab;
}

/* Every kind of job has a whole view on the run screen (run_view.h): a
 * title, the chart's place, Explain, the side panel, the row under a job's
 * bar, keys and export. The Jacobian's has its own keys, with no smoothing
 * (it has no loss), and takes `s` itself; training's offers it. */
static void every_kind_has_a_whole_view(void **state)
{
    (void)state;
    ui_lab *lab = new_lab(UI_RUN);
    const enum nn_job_kind kinds[] = { NN_JOB_TRAIN, NN_JOB_CALIBRATE, NN_JOB_JACOBIAN };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        lab->run.cfg.kind = kinds[i];
        const ui_run_view *v = ui_run_view_of(lab);
        assert_non_null(v);
        assert_true(v->title && v->draw_main && v->draw_explain && v->draw_side && v->job_line && v->keys &&
                    v->export_run);
    }
    lab->run.cfg.kind = NN_JOB_JACOBIAN;
    const ui_run_view *jac = ui_run_view_of(lab);
    assert_null(strstr(jac->keys(1), "smooth"));
    assert_non_null(jac->key);
    assert_int_equal(jac->key(lab, 's'), 1);
    assert_int_equal(jac->key(lab, 'x'), 0);
    lab->run.cfg.kind = NN_JOB_TRAIN;
    assert_ptr_not_equal(ui_run_view_of(lab), jac);
    assert_non_null(strstr(ui_run_view_of(lab)->keys(1), "s smooth"));
    ui_lab_free(lab);
}

static void dialog_back_yes_goes_to_setup(void **state)
{
    (void)state;
    ui_lab *lab = new_lab(UI_RUN);
    lab->dialog = UI_DLG_BACK;
    assert_int_equal(ui_dialog_key(lab, 'y'), UI_ACT_GO_SETUP);
    assert_int_equal(lab->dialog, UI_DLG_NONE);
    lab->dialog = UI_DLG_BACK;
    assert_int_equal(ui_dialog_key(lab, 'n'), UI_ACT_HANDLED);
    assert_int_equal(lab->dialog, UI_DLG_NONE);
    ui_lab_free(lab);
}

static void dialog_quit_yes_quits(void **state)
{
    (void)state;
    ui_lab *lab = new_lab(UI_SETUP);
    lab->dialog = UI_DLG_QUIT;
    assert_int_equal(ui_dialog_key(lab, 'y'), UI_ACT_QUIT);
    assert_int_equal(lab->quit, 0);          /* the loop quits, not the dialog */
    ui_lab_free(lab);
}

/* A finished run and a finished sweep answer the shared keys alike. */
static void finished_screens_share_keys(void **state)
{
    (void)state;
    enum ui_screen screens[] = { UI_RUN, UI_SWEEP };
    for (int i = 0; i < 2; i++) {
        ui_lab *lab = new_lab(screens[i]);
        ui_action (*key)(ui_lab *, int) = screens[i] == UI_RUN ? ui_dashboard_key : ui_sweep_screen_key;
        assert_int_equal(key(lab, 27), UI_ACT_GO_SETUP);
        assert_int_equal(key(lab, '\n'), UI_ACT_GO_SETUP);
        assert_int_equal(key(lab, 'b'), UI_ACT_GO_SETUP);
        assert_int_equal(key(lab, 'l'), UI_ACT_HANDLED);
        assert_int_equal(lab->log_scale, 1);
        assert_int_equal(key(lab, 'c'), UI_ACT_HANDLED);   /* nothing to cancel */
        assert_int_equal(key(lab, 'z'), UI_ACT_IGNORED);
        ui_lab_free(lab);
    }
}

/* While a job runs, Esc asks first and Enter (pressed once too often after
 * starting) throws nothing away. */
static void running_job_is_guarded(void **state)
{
    (void)state;
    ui_lab *lab = new_lab(UI_RUN);
    nn_preset p;
    nn_job_config cfg;
    char err[NN_ERR_LEN];
    assert_int_equal(nn_preset_load(PRESETS_SRCDIR "/mnist-mlp-128.ini", &p, err, sizeof err), 0);
    nn_job_config_init(&cfg, &p);
    cfg.steps = 1000000;
    nn_device_status cpu_ref;
    assert_int_equal(nn_device_status_of("cpu-ref", &cpu_ref), 0);
    assert_int_equal(ui_run_start(&lab->run, &cfg, &cpu_ref, NULL, 0, err, sizeof err), 0);
    assert_int_equal(ui_dashboard_key(lab, 27), UI_ACT_ASK_BACK);
    assert_int_equal(ui_dashboard_key(lab, '\n'), UI_ACT_HANDLED);
    assert_int_equal(ui_dashboard_key(lab, 'c'), UI_ACT_HANDLED);
    ui_run_free(&lab->run);
    ui_lab_free(lab);
}

static void setup_keys_ask_to_start(void **state)
{
    (void)state;
    ui_lab *lab = new_lab(UI_SETUP);
    assert_int_equal(ui_setup_key(lab, 'w'), UI_ACT_START_SWEEP);
    assert_int_equal(ui_setup_key(lab, 'r'), UI_ACT_START_RUN);
    assert_int_equal(ui_setup_key(lab, '\n'), UI_ACT_START_RUN);
    /* a preset that does not load starts nothing, and says why */
    const char *names[NN_MAX_DEVICES];
    snprintf(lab->chosen.preset_err, sizeof lab->chosen.preset_err, "broken.ini: [train] batch = x: not a number");
    assert_int_equal(ui_setup_start_devices(lab, 0, names, NN_MAX_DEVICES), -1);
    assert_non_null(strstr(lab->message, "does not load"));
    ui_lab_free(lab);
}

/* Two jobs racing get cores of their own: a one-thread device (cpu-ref, a
 * GPU's host thread) one core, the cpu job the rest; not every core each. */
static void race_gives_each_job_its_own_cores(void **state)
{
    (void)state;
    nn_device_status cpu, cpu_ref, gpu_dev;
    (void)nn_device_status_of("cpu", &cpu);
    (void)nn_device_status_of("cpu-ref", &cpu_ref);
    (void)nn_device_status_of("gpu", &gpu_dev);      /* what it is, here or not */
    const nn_device_status *ref[2] = { &cpu, &cpu_ref }, *gpu[2] = { &cpu, &gpu_dev }, *two[2] = { &cpu, &cpu };
    int t[2];
    ui_race_threads(ref, 2, 2, t);
    assert_true(t[0] == 1 && t[1] == 1);
    ui_race_threads(gpu, 2, 8, t);
    assert_true(t[0] == 7 && t[1] == 1);
    ui_race_threads(two, 2, 8, t);
    assert_true(t[0] == 4 && t[1] == 4);
    ui_race_threads(ref, 2, 1, t);
    assert_true(t[0] == 1 && t[1] == 1);

    /* a race started by the lab asks the engine for those shares */
    ui_run r;
    nn_preset p;
    nn_job_config cfg;
    char err[NN_ERR_LEN];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(nn_preset_load(PRESETS_SRCDIR "/mnist-mlp-128.ini", &p, err, sizeof err), 0);
    nn_job_config_init(&cfg, &p);
    cfg.steps = 3;
    assert_int_equal(ui_run_start(&r, &cfg, &cpu, &cpu_ref, 0, err, sizeof err), 0);
    assert_int_equal(r.j[1].threads, 1);
    assert_true(r.j[0].threads >= 1 && r.j[0].threads <= (cores > 1 ? cores - 1 : 1));
    nn_job_wait(r.j[0].job);
    nn_job_wait(r.j[1].job);
    ui_run_poll(&r);
    assert_int_equal(r.j[0].snap.threads, r.j[0].threads);
    assert_int_equal(r.j[1].snap.threads, 1);
    ui_run_free(&r);
    /* one after the other: each may use every core (the engine's choice) */
    assert_int_equal(ui_run_start(&r, &cfg, &cpu, &cpu_ref, 1, err, sizeof err), 0);
    assert_int_equal(r.j[0].threads, 0);
    ui_run_free(&r);
}

/* ---- the settings: typing numbers ------------------------------------------------- */

static ui_action keys(ui_lab *lab, const char *typed)
{
    ui_action act = UI_ACT_IGNORED;
    for (const char *c = typed; *c; c++)
        act = ui_setup_key(lab, (unsigned char)*c);
    return act;
}

static ui_lab *fields_lab(int field)
{
    ui_lab *lab = new_lab(UI_SETUP);
    ui_settings_defaults(&lab->chosen.set);
    ui_setup_of(lab)->focus_fields = 1;
    ui_setup_of(lab)->field = field;
    return lab;
}

/* The Enter that confirms a typed value does not start a run; the next one
 * does. r and w alike. */
static void enter_confirms_then_runs(void **state)
{
    (void)state;
    ui_lab *lab = fields_lab(UI_F_BATCH);
    assert_int_equal(keys(lab, "64"), UI_ACT_HANDLED);
    assert_string_equal(ui_setup_of(lab)->edit, "64");
    assert_int_equal(ui_setup_key(lab, '\n'), UI_ACT_HANDLED);
    assert_int_equal(lab->chosen.set.batch, 64);
    assert_string_equal(ui_setup_of(lab)->edit, "");
    assert_non_null(strstr(lab->message, "Enter or r runs"));
    assert_int_equal(ui_setup_key(lab, '\n'), UI_ACT_START_RUN);
    assert_int_equal(keys(lab, "128"), UI_ACT_HANDLED);
    assert_int_equal(ui_setup_key(lab, 'r'), UI_ACT_HANDLED);     /* confirms only */
    assert_int_equal(lab->chosen.set.batch, 128);
    assert_int_equal(ui_setup_key(lab, 'r'), UI_ACT_START_RUN);
    assert_int_equal(keys(lab, "3"), UI_ACT_HANDLED);
    assert_int_equal(ui_setup_key(lab, 'w'), UI_ACT_HANDLED);
    assert_int_equal(ui_setup_key(lab, 'w'), UI_ACT_START_SWEEP);
    ui_lab_free(lab);
}

/* "1.5" and "1e3" are not batch sizes: refused with the range, the old
 * value kept, and the text left in the field, so that pressing Enter again
 * does not start a run with the old value. Esc drops it. */
static void typed_numbers_are_strict(void **state)
{
    (void)state;
    const char *bad[] = { "1.5", "1e3", "0", "2000000", "3-4" };
    ui_lab *lab = fields_lab(UI_F_BATCH);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ui_setup_of(lab)->edit[0] = '\0';
        keys(lab, bad[i]);
        assert_string_equal(ui_setup_of(lab)->edit, bad[i]);
        assert_int_equal(ui_setup_key(lab, '\n'), UI_ACT_HANDLED);
        assert_int_equal(lab->chosen.set.batch, 32);
        assert_int_equal(lab->message_error, 1);
        assert_non_null(strstr(lab->message, "Batch size: "));
        assert_non_null(strstr(lab->message, "1..1048576"));
        assert_non_null(strstr(lab->message, "kept the old value"));
        assert_int_equal(ui_setup_key(lab, '\n'), UI_ACT_HANDLED);   /* still not a run */
        assert_int_equal(ui_setup_key(lab, KEY_DOWN), UI_ACT_HANDLED);
        assert_int_equal(ui_setup_of(lab)->field, UI_F_BATCH);               /* stays to be fixed */
    }
    assert_int_equal(ui_setup_key(lab, 27), UI_ACT_HANDLED);
    assert_string_equal(ui_setup_of(lab)->edit, "");
    assert_int_equal(ui_setup_key(lab, '\n'), UI_ACT_START_RUN);

    /* the learning rate takes 1e3 and 1.5; not what a float cannot hold */
    ui_setup_of(lab)->field = UI_F_LR;
    keys(lab, "1e3\n");
    assert_true(lab->chosen.set.lr == 1000.0);
    keys(lab, "1.5\n");
    assert_true(lab->chosen.set.lr == 1.5);
    keys(lab, "1e39\n");
    assert_true(lab->chosen.set.lr == 1.5);
    assert_non_null(strstr(lab->message, "Learning rate: 1e39 is out of range"));
    ui_lab_free(lab);
}

/* Digits typed on a row that takes no number are refused aloud (a message,
 * a beep in the lab), nothing is kept in the field, and Enter still does
 * what the status row says: it runs. */
static void digits_on_a_choice_row_are_refused_aloud(void **state)
{
    (void)state;
    ui_lab *lab = fields_lab(UI_F_DEVICE);
    assert_int_equal(keys(lab, "4"), UI_ACT_HANDLED);
    assert_string_equal(ui_setup_of(lab)->edit, "");
    assert_int_equal(lab->message_error, 1);
    assert_non_null(strstr(lab->message, "Device is not a number: '4' ignored"));
    assert_int_equal(ui_setup_key(lab, '\n'), UI_ACT_START_RUN);
    ui_setup_of(lab)->field = UI_F_CUDA_GRAPH;
    lab->message[0] = '\0';
    assert_int_equal(keys(lab, "1"), UI_ACT_HANDLED);
    assert_non_null(strstr(lab->message, "CUDA graph is not a number"));
    assert_string_equal(ui_setup_of(lab)->edit, "");
    assert_int_equal(ui_setup_key(lab, '\n'), UI_ACT_START_RUN);
    ui_setup_of(lab)->field = UI_F_BATCH;     /* a number row still takes them */
    assert_int_equal(keys(lab, "64"), UI_ACT_HANDLED);
    assert_string_equal(ui_setup_of(lab)->edit, "64");
    ui_lab_free(lab);
}

/* The help scrolls at 80x24 down to its last line; another key closes it. */
static void help_scrolls_then_closes(void **state)
{
    (void)state;
    ui_lab *lab = new_lab(UI_SETUP);
    lab->cols = 80;
    lab->rows = 24;
    lab->help = 1;
    assert_int_equal(ui_help_key(lab, KEY_NPAGE), UI_ACT_HANDLED);
    assert_int_equal(lab->help, 1);
    assert_true(lab->help_scroll.top > 0);
    assert_true(lab->help_scroll.total > lab->help_scroll.view);   /* it overflows at 80x24 */
    assert_int_equal(ui_help_key(lab, KEY_END), UI_ACT_HANDLED);
    assert_int_equal(ui_scroll_below(&lab->help_scroll, lab->help_scroll.total, lab->help_scroll.view), 0);
    int end = lab->help_scroll.top;
    ui_help_key(lab, KEY_NPAGE);               /* past the end: stays */
    assert_int_equal(lab->help_scroll.top, end);
    ui_help_key(lab, KEY_HOME);
    assert_int_equal(lab->help_scroll.top, 0);
    assert_int_equal(ui_help_key(lab, 'x'), UI_ACT_HANDLED);
    assert_int_equal(lab->help, 0);
    ui_lab_free(lab);
}

/* The second job of a one-after-the-other run says what it waits for, or,
 * the run cancelled before its turn, that it was not run; never both. */
static void sequential_second_job_words(void **state)
{
    static ui_run r;
    char buf[128];
    (void)state;
    memset(&r, 0, sizeof r);
    r.n_jobs = 2;
    r.sequential = 1;
    snprintf(r.j[0].device, sizeof r.j[0].device, "cpu");
    snprintf(r.j[1].device, sizeof r.j[1].device, "cpu-ref");
    r.j[0].started = 1;
    ui_run_not_started_text(&r, 1, buf, sizeof buf);
    assert_string_equal(buf, "waiting: starts when cpu ends (one after the other)");
    r.cancelled = 1;
    ui_run_not_started_text(&r, 1, buf, sizeof buf);
    assert_string_equal(buf, "not run: cancelled while cpu ran (one after the other)");
    assert_null(strstr(buf, "starts when"));
    r.j[1].started = 1;
    ui_run_not_started_text(&r, 1, buf, sizeof buf);
    assert_string_equal(buf, "");
}

/* The sweep doubles the batch: its ends are powers of two. */
static void sweep_ends_are_powers_of_two(void **state)
{
    (void)state;
    ui_lab *lab = fields_lab(UI_F_SWEEP_FROM);
    keys(lab, "13\n");
    assert_int_equal(lab->chosen.set.sweep_from, 1);
    assert_non_null(strstr(lab->message, "Sweep from: 13 is not a power of two"));
    assert_non_null(strstr(lab->message, "8 or 16"));
    ui_setup_key(lab, 27);
    keys(lab, "16\n");
    assert_int_equal(lab->chosen.set.sweep_from, 16);
    ui_setup_of(lab)->field = UI_F_SWEEP_TO;
    keys(lab, "8\n");                  /* below Sweep from */
    assert_int_equal(lab->chosen.set.sweep_to, 4096);
    assert_non_null(strstr(lab->message, "16..1048576"));
    ui_lab_free(lab);
}

/* The survey's answer as the lab keeps it: the cpu device, available. */
static void survey_cpu(ui_lab *lab)
{
    assert_int_equal(nn_device_status_of("cpu", &lab->devices.st[0]), 0);
    lab->devices.n = 1;
    lab->devices.known = 1;
}

static ui_lab *lab_with_preset(const char *name)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    ui_lab *lab = fields_lab(UI_F_BATCH);
    snprintf(path, sizeof path, "%s/%s.ini", PRESETS_SRCDIR, name);
    assert_int_equal(nn_preset_load(path, &lab->chosen.preset, err, sizeof err), 0);
    lab->chosen.preset_ok = 1;
    ui_settings_from_preset(&lab->chosen.set, &lab->chosen.preset);
    return lab;
}

/* No batch larger than the training set: typed, doubled, or started. */
static void batch_is_bounded_by_the_data(void **state)
{
    (void)state;
    ui_lab *lab = lab_with_preset("mnist-mlp-128");
    const char *names[2];
    assert_int_equal(ui_batch_max(lab), 60000);
    keys(lab, "1048576\n");
    assert_int_equal(lab->chosen.set.batch, 32);
    assert_non_null(strstr(lab->message, "1..60000 (the training set's size)"));
    ui_setup_key(lab, 27);
    lab->chosen.set.batch = 32768;
    ui_setup_key(lab, '+');
    assert_int_equal(lab->chosen.set.batch, 60000);
    /* a value set some other way is refused at the start, naming the field */
    lab->chosen.set.batch = 1048576;
    survey_cpu(lab);
    assert_int_equal(ui_setup_start_devices(lab, 0, names, 2), -1);
    assert_non_null(strstr(lab->message, "Batch size 1048576: larger than the training set (60000 samples)"));
    lab->chosen.set.batch = 60000;
    assert_int_equal(ui_setup_start_devices(lab, 0, names, 2), 1);
    ui_lab_free(lab);
}

/* ---- saving the settings ------------------------------------------------------------ */

/* Every setting survives a save and a load: the device run beside, race or
 * in turn, the GPU switches, the sweep. */
static void settings_roundtrip_through_a_preset(void **state)
{
    (void)state;
    char dir[] = "/tmp/nnlab-ui-keys-XXXXXX", path[NN_PATH_LEN], err[NN_ERR_LEN];
    ui_lab *lab = lab_with_preset("lenet-cifar10");
    ui_settings a = lab->chosen.set, b;
    nn_preset p = lab->chosen.preset, q;
    snprintf(a.device, sizeof a.device, "cpu");
    memset(a.compare, 0, sizeof a.compare);
    snprintf(a.compare, sizeof a.compare, "cpu-ref");
    a.sequential = 0;
    a.batch = 64;
    a.epochs = 3;
    a.lr = 0.25;
    a.data_on_device = 0;
    a.sync_every_step = 1;
    a.cuda_graph = 0;
    a.deterministic = 1;
    a.sweep_from = 8;
    a.sweep_to = 512;
    a.sweep_steps = 11;
    a.sweep_all = 1;
    ui_settings_to_preset(&a, &p);
    ui_settings_describe(&a, "lenet-cifar10", p.description, sizeof p.description);
    assert_string_equal(p.description, "Saved from lenet-cifar10 in the lab: cpu and cpu-ref racing, "
                                       "batch 64, 3 epochs, lr 0.25");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/copy.ini", dir);
    assert_int_equal(nn_preset_save(path, &p, err, sizeof err), 0);
    assert_int_equal(nn_preset_load(path, &q, err, sizeof err), 0);
    assert_string_equal(q.compare, "cpu-ref");
    ui_settings_defaults(&b);
    ui_settings_from_preset(&b, &q);
    b.steps = a.steps;                       /* not a preset's */
    assert_memory_equal(&a, &b, sizeof a);
    unlink(path);
    rmdir(dir);
    ui_lab_free(lab);
}

/* The Deterministic field: off by default, space toggles it, the
 * job runs with it, and a save keeps it as [train] deterministic. */
static void deterministic_field_toggles_and_saves(void **state)
{
    (void)state;
    char dir[] = "/tmp/nnlab-ui-keys-XXXXXX", path[NN_PATH_LEN], err[NN_ERR_LEN];
    char label[64], value[64];
    nn_job_config cfg;
    nn_preset p, q;
    ui_lab *lab = lab_with_preset("lenet-cifar10");
    ui_setup_of(lab)->field = UI_F_DETERMINISTIC;
    ui_field_text(lab, UI_F_DETERMINISTIC, label, sizeof label, value, sizeof value);
    assert_string_equal(label, "Deterministic");
    assert_string_equal(value, "[ ] GPU only");
    assert_int_equal(ui_setup_key(lab, ' '), UI_ACT_HANDLED);
    assert_int_equal(lab->chosen.set.deterministic, 1);
    ui_field_text(lab, UI_F_DETERMINISTIC, label, sizeof label, value, sizeof value);
    assert_string_equal(value, "[x] GPU only");
    ui_setup_job_config(lab, &cfg);
    assert_int_equal(cfg.deterministic, 1);
    p = lab->chosen.preset;
    ui_settings_to_preset(&lab->chosen.set, &p);
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/det.ini", dir);
    assert_int_equal(nn_preset_save(path, &p, err, sizeof err), 0);
    assert_int_equal(nn_preset_load(path, &q, err, sizeof err), 0);
    assert_int_equal(q.deterministic, 1);
    assert_int_equal(ui_setup_key(lab, ' '), UI_ACT_HANDLED);   /* and off again */
    assert_int_equal(lab->chosen.set.deterministic, 0);
    unlink(path);
    rmdir(dir);
    ui_lab_free(lab);
}

/* ---- a Jacobian preset: val and the method ----------------------------------------- */

/* Its batch field is val (its [task] val, up to NN_JAC_MAX_VAL: no training
 * set bounds it); Method takes the training fields' place; Down and Up step
 * over the fields it does not show. */
static void jacobian_preset_shows_val_and_method(void **state)
{
    (void)state;
    char label[32], value[96];
    ui_lab *lab = lab_with_preset("mlp-jacobian");
    assert_int_equal(lab->chosen.set.kind, NN_JOB_JACOBIAN);
    assert_int_equal(lab->chosen.set.batch, 100);
    assert_int_equal(lab->chosen.set.method, NN_JAC_ROWS);
    ui_field_text(lab, UI_F_BATCH, label, sizeof label, value, sizeof value);
    assert_string_equal(label, "val");
    ui_field_text(lab, UI_F_METHOD, label, sizeof label, value, sizeof value);
    assert_string_equal(label, "Method");
    assert_string_equal(value, "rows");
    assert_true(ui_field_shown(lab, UI_F_METHOD));
    assert_false(ui_field_shown(lab, UI_F_EPOCHS) || ui_field_shown(lab, UI_F_STEPS) ||
                 ui_field_shown(lab, UI_F_LR));
    ui_setup_key(lab, KEY_DOWN);
    assert_int_equal(ui_setup_of(lab)->field, UI_F_METHOD);
    ui_setup_key(lab, KEY_DOWN);
    assert_int_equal(ui_setup_of(lab)->field, UI_F_DATA_ON_DEVICE);
    ui_setup_key(lab, KEY_UP);
    ui_setup_key(lab, KEY_UP);
    assert_int_equal(ui_setup_of(lab)->field, UI_F_BATCH);
    keys(lab, "5000\n");                     /* above the preset's 1000 training rows */
    assert_int_equal(lab->chosen.set.batch, 5000);
    assert_non_null(strstr(lab->message, "val set"));
    keys(lab, "100001\n");
    assert_int_equal(lab->chosen.set.batch, 5000);
    assert_non_null(strstr(lab->message, "val: 100001 is out of range: type 1..100000"));
    assert_null(strstr(lab->message, "training set"));
    ui_setup_key(lab, 27);
    lab->chosen.set.batch = 65536;
    ui_setup_key(lab, '+');
    assert_int_equal(lab->chosen.set.batch, NN_JAC_MAX_VAL);
    ui_lab_free(lab);

    /* nor the batch sweep's rows: it has no batch sweep */
    lab = lab_with_preset("mlp-jacobian");
    for (int f = UI_F_SWEEP_FROM; f <= UI_F_SWEEP_DEVICES; f++)
        assert_false(ui_field_shown(lab, f));
    ui_setup_of(lab)->field = UI_F_DETERMINISTIC;
    ui_setup_key(lab, KEY_DOWN);
    assert_int_equal(ui_setup_of(lab)->field, UI_F_DEVICE);   /* round to the top, past no sweep row */
    ui_lab_free(lab);

    /* a training preset has no Method, and has the sweep's rows */
    lab = lab_with_preset("mnist-mlp-128");
    assert_false(ui_field_shown(lab, UI_F_METHOD));
    for (int f = UI_F_SWEEP_FROM; f <= UI_F_SWEEP_DEVICES; f++)
        assert_true(ui_field_shown(lab, f));
    ui_setup_key(lab, KEY_DOWN);
    assert_int_equal(ui_setup_of(lab)->field, UI_F_EPOCHS);
    ui_field_text(lab, UI_F_BATCH, label, sizeof label, value, sizeof value);
    assert_string_equal(label, "Batch size");
    ui_lab_free(lab);
}

/* Right and space pick the next method, Left the one before, round the
 * four; the job runs the one picked at the val set, and a save keeps both
 * as the preset's [task] method and val. */
static void jacobian_method_cycles_runs_and_saves(void **state)
{
    (void)state;
    static const int right[] = { NN_JAC_BATCHED, NN_JAC_PER_SAMPLE, NN_JAC_FORWARD, NN_JAC_ROWS };
    char dir[] = "/tmp/nnlab-ui-keys-XXXXXX", path[NN_PATH_LEN], err[NN_ERR_LEN];
    ui_lab *lab = lab_with_preset("mlp-jacobian");
    nn_job_config cfg;
    nn_preset p = lab->chosen.preset, q;
    ui_setup_of(lab)->field = UI_F_METHOD;
    for (int i = 0; i < 4; i++) {
        ui_setup_key(lab, i % 2 ? ' ' : KEY_RIGHT);
        assert_int_equal(lab->chosen.set.method, right[i]);
    }
    ui_setup_key(lab, KEY_LEFT);
    assert_int_equal(lab->chosen.set.method, NN_JAC_FORWARD);
    ui_setup_key(lab, KEY_LEFT);
    assert_int_equal(lab->chosen.set.method, NN_JAC_PER_SAMPLE);
    /* w would time training steps such a job never takes: refused, said why */
    assert_int_equal(ui_setup_key(lab, 'w'), UI_ACT_HANDLED);
    assert_non_null(strstr(lab->message, "a Jacobian preset has no batch sweep"));
    lab->chosen.set.batch = 70;
    ui_setup_job_config(lab, &cfg);
    assert_int_equal(cfg.kind, NN_JOB_JACOBIAN);
    assert_int_equal(cfg.jac_method, NN_JAC_PER_SAMPLE);
    assert_int_equal(cfg.jac_val, 70);

    ui_settings_to_preset(&lab->chosen.set, &p);
    ui_settings_describe(&lab->chosen.set, "mlp-jacobian", p.description, sizeof p.description);
    assert_string_equal(p.description, "Saved from mlp-jacobian in the lab: cpu, Jacobian by per-sample at val 70");
    assert_int_equal(p.batch, 100);          /* [train] batch: not the val */
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/copy.ini", dir);
    assert_int_equal(nn_preset_save(path, &p, err, sizeof err), 0);
    assert_int_equal(nn_preset_load(path, &q, err, sizeof err), 0);
    assert_int_equal(q.task, NN_TASK_JACOBIAN);
    assert_int_equal(q.task_method, NN_JAC_PER_SAMPLE);
    assert_int_equal(q.task_val, 70);
    ui_settings b;
    ui_settings_defaults(&b);
    ui_settings_from_preset(&b, &q);
    b.steps = lab->chosen.set.steps;
    assert_memory_equal(&b, &lab->chosen.set, sizeof b);
    unlink(path);
    rmdir(dir);
    ui_lab_free(lab);
}

/* The engine's size rule in the lab: val 100000 by batched, under an
 * address-space limit that leaves 256 MB, is refused at the start naming
 * [task] val and the bytes. */
static void jacobian_too_large_is_refused_in_the_lab(void **state)
{
    (void)state;
    const char *names[2];
    struct rlimit old, small;
    unsigned long pages = 0;
    ui_lab *lab = lab_with_preset("mlp-jacobian");
    FILE *f = fopen("/proc/self/statm", "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    lab->chosen.set.batch = 100000;
    lab->chosen.set.method = NN_JAC_BATCHED;
    survey_cpu(lab);
    assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
    small = old;
    small.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)256 << 20);
    if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < small.rlim_cur)
        small.rlim_cur = old.rlim_cur;
    assert_int_equal(setrlimit(RLIMIT_AS, &small), 0);
    int n = ui_setup_start_devices(lab, 0, names, 2);
    assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
    assert_int_equal(n, -1);
    assert_int_equal(lab->message_error, 1);
    assert_non_null(strstr(lab->message, "[task] val = 100000: needs ~1."));
    assert_non_null(strstr(lab->message, " GB of memory (method batched: "));
    lab->chosen.set.batch = 100;              /* fits: started */
    assert_int_equal(ui_setup_start_devices(lab, 0, names, 2), 1);
    ui_lab_free(lab);
}

static void type_name(ui_lab *lab, const char *name)
{
    lab->input[0] = '\0';
    for (const char *c = name; *c; c++)
        ui_dialog_key(lab, (unsigned char)*c);
}

/* A name that is not ASCII is said so, not cut ("caf"); a shipped
 * preset's name asks before hiding it; the copy describes itself. */
static void save_dialog_names(void **state)
{
    (void)state;
    char dir[] = "/tmp/nnlab-ui-keys-XXXXXX", path[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_preset q;
    assert_non_null(mkdtemp(dir));
    setenv("XDG_CONFIG_HOME", dir, 1);
    setenv("NNLAB_PRESETS_DIR", PRESETS_SRCDIR, 1);
    ui_lab *lab = lab_with_preset("lenet-cifar10");
    ui_dialog_open_save(lab);
    assert_int_equal(lab->dialog, UI_DLG_SAVE);
    type_name(lab, "caf\xc3\xa9");
    assert_string_equal(lab->input, "caf");
    assert_non_null(strstr(lab->message, "ASCII"));

    type_name(lab, "lenet-cifar10");
    ui_dialog_key(lab, '\n');
    assert_int_equal(lab->dialog, UI_DLG_SHADOW);
    ui_dialog_key(lab, 'n');
    assert_int_equal(lab->dialog, UI_DLG_SAVE);
    ui_dialog_key(lab, '\n');
    assert_int_equal(lab->dialog, UI_DLG_SHADOW);
    ui_dialog_key(lab, 'y');
    assert_int_equal(lab->dialog, UI_DLG_NONE);
    snprintf(path, sizeof path, "%s/nnlab/presets/lenet-cifar10.ini", dir);
    assert_int_equal(nn_preset_load(path, &q, err, sizeof err), 0);
    assert_non_null(strstr(q.description, "Saved from lenet-cifar10 in the lab: cpu, batch 4"));
    assert_null(strstr(q.description, "measured"));

    /* yours exists now: the question is the overwrite one */
    ui_dialog_open_save(lab);
    type_name(lab, "lenet-cifar10");
    ui_dialog_key(lab, '\n');
    assert_int_equal(lab->dialog, UI_DLG_OVERWRITE);
    ui_dialog_key(lab, 27);
    ui_dialog_key(lab, 27);
    ui_setup_free(lab);
    unlink(path);
    snprintf(path, sizeof path, "%s/nnlab/presets", dir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/nnlab", dir);
    rmdir(path);
    rmdir(dir);
    ui_lab_free(lab);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dialog_back_yes_goes_to_setup),
        cmocka_unit_test(dialog_quit_yes_quits),
        cmocka_unit_test(finished_screens_share_keys),
        cmocka_unit_test(running_job_is_guarded),
        cmocka_unit_test(setup_keys_ask_to_start),
        cmocka_unit_test(race_gives_each_job_its_own_cores),
        cmocka_unit_test(enter_confirms_then_runs),
        cmocka_unit_test(typed_numbers_are_strict),
        cmocka_unit_test(digits_on_a_choice_row_are_refused_aloud),
        cmocka_unit_test(help_scrolls_then_closes),
        cmocka_unit_test(sequential_second_job_words),
        cmocka_unit_test(sweep_ends_are_powers_of_two),
        cmocka_unit_test(batch_is_bounded_by_the_data),
        cmocka_unit_test(settings_roundtrip_through_a_preset),
        cmocka_unit_test(deterministic_field_toggles_and_saves),
        cmocka_unit_test(save_dialog_names),
        cmocka_unit_test(every_kind_has_a_whole_view),
        cmocka_unit_test(jacobian_preset_shows_val_and_method),
        cmocka_unit_test(jacobian_method_cycles_runs_and_saves),
        cmocka_unit_test(jacobian_too_large_is_refused_in_the_lab),
    };
    return cmocka_run_group_tests_name("ui_keys", tests, NULL, NULL);
}

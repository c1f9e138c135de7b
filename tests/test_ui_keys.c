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

#include <cmocka.h>

#include "ui.h"

static ui_lab *new_lab(enum ui_screen screen)
{
    ui_lab *lab = calloc(1, sizeof *lab);
    assert_non_null(lab);
    lab->screen = screen;
    return lab;
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
    free(lab);
}

static void dialog_quit_yes_quits(void **state)
{
    (void)state;
    ui_lab *lab = new_lab(UI_SETUP);
    lab->dialog = UI_DLG_QUIT;
    assert_int_equal(ui_dialog_key(lab, 'y'), UI_ACT_QUIT);
    assert_int_equal(lab->quit, 0);          /* the loop quits, not the dialog */
    free(lab);
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
        free(lab);
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
    assert_int_equal(ui_run_start(&lab->dashboard.run, &cfg, "cpu-ref", NULL, 0, err, sizeof err), 0);
    assert_int_equal(ui_dashboard_key(lab, 27), UI_ACT_ASK_BACK);
    assert_int_equal(ui_dashboard_key(lab, '\n'), UI_ACT_HANDLED);
    assert_int_equal(ui_dashboard_key(lab, 'c'), UI_ACT_HANDLED);
    ui_run_free(&lab->dashboard.run);
    free(lab);
}

static void setup_keys_ask_to_start(void **state)
{
    (void)state;
    ui_lab *lab = new_lab(UI_SETUP);
    assert_int_equal(ui_setup_key(lab, 'w'), UI_ACT_START_SWEEP);
    assert_int_equal(ui_setup_key(lab, 'r'), UI_ACT_START_RUN);
    assert_int_equal(ui_setup_key(lab, '\n'), UI_ACT_START_RUN);
    /* a preset that does not load starts nothing, and says why */
    const char *names[UI_N_DEVICES];
    snprintf(lab->setup.preset_err, sizeof lab->setup.preset_err, "broken.ini: [train] batch = x: not a number");
    assert_int_equal(ui_setup_start_devices(lab, 0, names, UI_N_DEVICES), -1);
    assert_non_null(strstr(lab->message, "does not load"));
    free(lab);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dialog_back_yes_goes_to_setup),
        cmocka_unit_test(dialog_quit_yes_quits),
        cmocka_unit_test(finished_screens_share_keys),
        cmocka_unit_test(running_job_is_guarded),
        cmocka_unit_test(setup_keys_ask_to_start),
    };
    return cmocka_run_group_tests_name("ui_keys", tests, NULL, NULL);
}

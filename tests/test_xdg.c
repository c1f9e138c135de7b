/* tests/test_xdg.c - nn_xdg_dir (src/common/xdg.h), the one reading of the
 * XDG base directory variables behind the presets', profiles',
 * calibrations' and exports' folders: each kind's variable and its default
 * under $HOME, a relative value ignored, a sub-folder or none, and -1 when
 * no variable helps or the path does not fit. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1      /* setenv */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "xdg.h"

static void clear_env(void)
{
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("XDG_DATA_HOME");
    unsetenv("HOME");
}

static void test_each_kind_reads_its_variable(void **state)
{
    char dir[256];
    (void)state;
    clear_env();
    assert_int_equal(setenv("XDG_CONFIG_HOME", "/x/cfg", 1), 0);
    assert_int_equal(setenv("XDG_CACHE_HOME", "/x/cache", 1), 0);
    assert_int_equal(setenv("XDG_DATA_HOME", "/x/data", 1), 0);
    assert_int_equal(setenv("HOME", "/home/u", 1), 0);
    assert_int_equal(nn_xdg_dir(NN_XDG_CONFIG, "presets", dir, sizeof dir), 0);
    assert_string_equal(dir, "/x/cfg/nnlab/presets");
    assert_int_equal(nn_xdg_dir(NN_XDG_CACHE, NULL, dir, sizeof dir), 0);
    assert_string_equal(dir, "/x/cache/nnlab");
    assert_int_equal(nn_xdg_dir(NN_XDG_DATA, "exports", dir, sizeof dir), 0);
    assert_string_equal(dir, "/x/data/nnlab/exports");
}

static void test_home_defaults(void **state)
{
    char dir[256];
    (void)state;
    clear_env();
    assert_int_equal(setenv("HOME", "/home/u", 1), 0);
    assert_int_equal(setenv("XDG_CONFIG_HOME", "relative", 1), 0);   /* the spec: ignored */
    assert_int_equal(setenv("XDG_DATA_HOME", "", 1), 0);
    assert_int_equal(nn_xdg_dir(NN_XDG_CONFIG, "profiles", dir, sizeof dir), 0);
    assert_string_equal(dir, "/home/u/.config/nnlab/profiles");
    assert_int_equal(nn_xdg_dir(NN_XDG_CACHE, "", dir, sizeof dir), 0);
    assert_string_equal(dir, "/home/u/.cache/nnlab");
    assert_int_equal(nn_xdg_dir(NN_XDG_DATA, "exports", dir, sizeof dir), 0);
    assert_string_equal(dir, "/home/u/.local/share/nnlab/exports");
}

static void test_no_folder(void **state)
{
    char dir[256];
    (void)state;
    clear_env();
    assert_int_equal(nn_xdg_dir(NN_XDG_CONFIG, "presets", dir, sizeof dir), -1);
    assert_int_equal(setenv("HOME", "", 1), 0);                      /* empty: no home */
    assert_int_equal(nn_xdg_dir(NN_XDG_DATA, "exports", dir, sizeof dir), -1);
    assert_int_equal(setenv("HOME", "/home/u", 1), 0);
    /* "/home/u/.config/nnlab/presets" needs 30 bytes with its terminator */
    assert_int_equal(nn_xdg_dir(NN_XDG_CONFIG, "presets", dir, 29), -1);
    assert_int_equal(nn_xdg_dir(NN_XDG_CONFIG, "presets", dir, 30), 0);
    assert_int_equal(nn_xdg_dir((nn_xdg_kind)7, "presets", dir, sizeof dir), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_kind_reads_its_variable),
        cmocka_unit_test(test_home_defaults),
        cmocka_unit_test(test_no_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* tests/test_ui_banner.c - the lesson's big headline (ui/text/banner.c): a
 * headline fits one banner line of three rows at 80 columns, each row
 * exactly its columns wide; a narrow width wraps it at its words; a word
 * wider than the width, a character outside the font or more lines than
 * allowed give 0 (the caller says it in words); the glyphs are the half
 * blocks with UTF-8 and '#', '"' and '.' without. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "text/banner.h"
#include "text/format.h"

static void test_headline_one_line(void **state)
{
    char rows[6][256];
    (void)state;
    assert_int_equal(ui_banner_cols("GPU 2.62x slower"), 57);   /* 4 a letter, 2 a space or a dot, less the last gap */
    assert_int_equal(ui_banner("GPU 2.62x slower", 76, 1, 2, rows, sizeof rows[0]), 1);
    for (int r = 0; r < UI_BANNER_ROWS; r++)
        assert_int_equal(ui_text_cols(rows[r]), ui_banner_cols("GPU 2.62x slower"));
    /* G's top row: a blank, then two upper halves over its lower ones */
    assert_memory_equal(rows[0], "\xe2\x96\x84\xe2\x96\x80\xe2\x96\x80", 9);
}

static void test_wraps_at_words(void **state)
{
    char rows[6][256];
    (void)state;
    assert_int_equal(ui_banner("GPU ahead from batch 256", 60, 1, 2, rows, sizeof rows[0]), 2);
    for (int r = 0; r < 6; r++)
        assert_true(ui_text_cols(rows[r]) <= 60);
    assert_int_equal(ui_banner("GPU ahead from batch 256", 20, 1, 2, rows, sizeof rows[0]), 0);   /* 3 lines */
    assert_int_equal(ui_banner("launches", 20, 1, 2, rows, sizeof rows[0]), 0);   /* 31 columns, one word */
    assert_int_equal(ui_banner("GPU <3", 76, 1, 2, rows, sizeof rows[0]), 0);   /* '<' not in the font */
    assert_int_equal(ui_banner("", 76, 1, 2, rows, sizeof rows[0]), 0);
}

static void test_ascii(void **state)
{
    char rows[6][256];
    (void)state;
    assert_int_equal(ui_banner("71%", 76, 0, 1, rows, sizeof rows[0]), 1);
    for (int r = 0; r < UI_BANNER_ROWS; r++)
        assert_int_equal(strspn(rows[r], "#\". "), strlen(rows[r]));
    assert_string_equal(rows[0], "\"\"# .#  \" #");   /* 7, 1 and % : pixel rows 1-2 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_headline_one_line),
        cmocka_unit_test(test_wraps_at_words),
        cmocka_unit_test(test_ascii),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

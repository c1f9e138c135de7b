/* tests/test_preset_files.c - what a preset path can be besides a preset:
 * a folder, a FIFO, a device, a dangling link, a file far too large, one
 * that starts with a UTF-8 byte-order mark, one that gives a section or a
 * key twice. Each gets its true reason in one line, from nn_preset_load and
 * from nn_preset_find (what `--preset PATH` calls), and nothing blocks or
 * reads forever. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1      /* mkdtemp, symlink */
#endif
#define _XOPEN_SOURCE 700      /* nftw */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_tmp.h"

#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nnlab/preset.h"
#include "util.h"

#ifndef FIXTURES_DIR
#define FIXTURES_DIR "tests/fixtures"
#endif

static char tmp_root[256];

static void in_tmp(char *out, const char *name)
{
    int n = snprintf(out, NN_PATH_LEN, "%s/%s", tmp_root, name);
    assert_true(n > 0 && n < NN_PATH_LEN);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* nn_preset_load (and nn_preset_find too when by_find; it resolves a path
 * without reading it) refuses path with a one-line message that starts with
 * the path and holds want. An alarm turns a read that blocks into a failure. */
static void expect_refused_by(const char *path, const char *want, int by_find)
{
    char err[NN_ERR_LEN] = "", found[NN_PATH_LEN];
    nn_preset *p = malloc(sizeof *p);
    assert_non_null(p);
    alarm(10);
    for (int find = 0; find <= by_find; find++) {
        int rc = find ? nn_preset_find(path, found, sizeof found, err, sizeof err)
                      : nn_preset_load(path, p, err, sizeof err);
        assert_int_equal(rc, -1);
        if (strncmp(err, path, strlen(path)) != 0 || !strstr(err, want) || strchr(err, '\n'))
            fail_msg("%s: \"%s\", want \"%s\"", find ? "find" : "load", err, want);
    }
    alarm(0);
    free(p);
}

static void expect_refused(const char *path, const char *want)
{
    expect_refused_by(path, want, 1);
}

static void test_not_a_file(void **state)
{
    char path[NN_PATH_LEN];
    (void)state;
    in_tmp(path, "folder.ini");
    assert_int_equal(mkdir(path, 0755), 0);
    expect_refused(path, ": is a directory");

    in_tmp(path, "fifo.ini");
    assert_int_equal(mkfifo(path, 0644), 0);      /* no writer: opening must not wait */
    expect_refused(path, ": not a regular file (a FIFO)");

    expect_refused("/dev/zero", ": not a regular file (a character device)");
    in_tmp(path, "zero.ini");
    assert_int_equal(symlink("/dev/zero", path), 0);   /* a link to it: the target counts */
    expect_refused(path, ": not a regular file (a character device)");
}

static void test_missing_and_dangling(void **state)
{
    char path[NN_PATH_LEN], target[NN_PATH_LEN], want[2 * NN_PATH_LEN];
    (void)state;
    in_tmp(path, "absent.ini");
    expect_refused(path, ": cannot open: no such preset file");

    in_tmp(path, "dangling.ini");
    in_tmp(target, "moved-away.ini");
    assert_int_equal(symlink(target, path), 0);
    snprintf(want, sizeof want, ": dangling link to %s", target);
    expect_refused(path, want);
}

/* A sparse 2 MiB file: refused from its size, not read. */
static void test_too_large(void **state)
{
    char path[NN_PATH_LEN];
    (void)state;
    in_tmp(path, "huge.ini");
    write_text(path, "[data]\nset = random\n");
    assert_int_equal(truncate(path, 2L << 20), 0);
    expect_refused_by(path, ": too large for a preset (2097152 bytes; at most 1048576)", 0);
}

/* A UTF-8 BOM before the first line is an editor's, not a syntax error; the
 * same text without it loads the same preset. */
static void test_bom_accepted(void **state)
{
    char err[NN_ERR_LEN] = "", plain[NN_PATH_LEN];
    nn_preset *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    FILE *in, *out;
    int c;
    (void)state;
    assert_true(a && b);
    if (nn_preset_load(FIXTURES_DIR "/good-bom.ini", a, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_string_equal(a->description, "starts with a BOM");
    assert_int_equal(a->batch, 16);
    in = fopen(FIXTURES_DIR "/good-bom.ini", "rb");
    in_tmp(plain, "good-bom.ini");
    out = fopen(plain, "wb");
    assert_true(in && out);
    assert_int_equal(fgetc(in), 0xef);
    assert_int_equal(fgetc(in), 0xbb);
    assert_int_equal(fgetc(in), 0xbf);
    while ((c = fgetc(in)) != EOF)
        assert_int_equal(fputc(c, out), c);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(nn_preset_load(plain, b, err, sizeof err), 0);
    assert_memory_equal(a, b, sizeof *a);
    free(a);
    free(b);
}

static const char base[] =
    "[data]\nset = random\n[train]\nloss = mse\n%s[optimizer]\ntype = adam\n"
    "[layer1]\ntype = linear\nout = 4\n[layer2]\ntype = relu\n[layer3]\ntype = linear\nout = 1\n";

/* base with extra lines in [train]; loads it, returns the rc. */
static int load_with(const char *train_lines, nn_preset *p, char *err)
{
    char path[NN_PATH_LEN], text[2048];
    in_tmp(path, "dup.ini");
    snprintf(text, sizeof text, base, train_lines);
    write_text(path, text);
    return nn_preset_load(path, p, err, NN_ERR_LEN);
}

/* What iniparser reads as one entry is not a repeat: the same key in two
 * sections, a continued value whose next line looks like a key, comments. */
static void test_duplicates_only_real_ones(void **state)
{
    char err[NN_ERR_LEN] = "";
    nn_preset *p = malloc(sizeof *p);
    (void)state;
    assert_non_null(p);
    if (load_with("batch = 8\n; batch = 9\n# batch = 10\n", p, err) != 0)
        fail_msg("%s", err);
    assert_int_equal(p->batch, 8);
    /* "type" and "out" in every layer; a description continued on a line
     * that reads "batch = 3" */
    if (load_with("batch = 8\n", p, err) != 0)
        fail_msg("%s", err);
    char path[NN_PATH_LEN];
    in_tmp(path, "continued.ini");
    write_text(path, "[preset]\ndescription = one \\\nbatch = 3\n[data]\nset = random\n"
                     "[train]\nloss = mse\nbatch = 5\n[optimizer]\ntype = adam\n"
                     "[layer1]\ntype = linear\nout = 1\n");
    if (nn_preset_load(path, p, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(p->batch, 5);

    assert_int_equal(load_with("batch = 8\n  BATCH=9\n", p, err), -1);
    assert_non_null(strstr(err, "dup.ini: [train] BATCH given twice (lines 5 and 6)"));
    assert_int_equal(load_with("batch = 8\n[ layer2 ]\ntype = relu\n", p, err), -1);
    assert_non_null(strstr(err, "dup.ini: [layer2] given twice (lines 6 and 13)"));
    free(p);
}

/* head, then count lines of fmt (each given its number), into path. */
static void write_many(const char *path, const char *head, const char *fmt, int count)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(head, f) >= 0);
    for (int i = 1; i <= count; i++)
        assert_true(fprintf(f, fmt, i) > 0);
    assert_int_equal(fclose(f), 0);
}

/* More sections or keys than any preset has are refused before iniparser
 * reads them, naming the file, the limit and the line; a NUL byte is named
 * as such, not "line too long". */
static void test_limits_and_nul(void **state)
{
    char path[NN_PATH_LEN];
    (void)state;
    in_tmp(path, "sections.ini");
    write_many(path, "", "[s%d]\n", 300);
    expect_refused_by(path, ": line 257: more than 256 sections (no preset needs that many)", 0);
    in_tmp(path, "keys.ini");
    write_many(path, "[train]\n", "k%d = 1\n", 5000);
    expect_refused_by(path, ": line 4098: more than 4096 keys (no preset needs that many)", 0);
    /* keys before any section are refused at the first, before iniparser
     * reads the 100,000 (they took 4.4 s to be refused after it had) */
    in_tmp(path, "no-section.ini");
    write_many(path, "", "k%d=1\n", 100000);
    expect_refused_by(path, ": line 1: k1: key outside any section", 0);
    in_tmp(path, "nul.ini");
    write_text(path, "[data]\nset = random\n[train]\nloss = mse\n");
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    assert_int_equal(fwrite("batch = 1\0\n", 1, 12, f), 12);
    assert_int_equal(fclose(f), 0);
    expect_refused_by(path, ": NUL byte at line 5 (a preset is text)", 0);
}

/* Control bytes from files are shown, never sent (ESC, BEL, DEL, a UTF-8 C1
 * control, a stray byte), text and UTF-8 kept; a message too long for its
 * buffer loses its middle, not its reason; a preset's control bytes reach no
 * message raw. */
static void test_text_safe_and_long_messages(void **state)
{
    char out[64], err[NN_ERR_LEN], path[NN_PATH_LEN], dir[300];
    (void)state;
    assert_string_equal(nn_text_safe(out, sizeof out, "a\x1b]0;t\x07\tb\n\x7f"),
                        "a\\x1B]0;t\\x07\tb\n\\x7F");
    assert_string_equal(nn_text_safe(out, sizeof out, "caf\xc3\xa9 \xc2\x9b" "1m \xff"),
                        "caf\xc3\xa9 \\xC2\\x9B1m \\xFF");
    assert_string_equal(nn_text_safe(out, 6, "ab\x1b"), "ab");       /* no half escape */
    /* U+202E (right-to-left override) and U+2067 (right-to-left isolate)
     * escaped, byte by byte; U+2022 (a bullet) beside them kept */
    assert_string_equal(nn_text_safe(out, sizeof out, "a\xe2\x80\xae" "b\xe2\x81\xa7" "c\xe2\x80\xa2"),
                        "a\\xE2\\x80\\xAEb\\xE2\\x81\\xA7c" "\xe2\x80\xa2");
    assert_string_equal(nn_safe("x\x1b[2Jy"), "x\\x1B[2Jy");

    char very_long[900];
    memset(very_long, 'd', sizeof very_long - 1);
    very_long[sizeof very_long - 1] = '\0';
    nn_errorf(err, sizeof err, "/%s/x.ini: cannot open: no such preset file", very_long);
    assert_true(strlen(err) < sizeof err);
    assert_true(strncmp(err, "/ddd", 4) == 0);
    assert_non_null(strstr(err, " ... "));
    assert_non_null(strstr(err, "/x.ini: cannot open: no such preset file"));

    snprintf(dir, sizeof dir, "%s/esc", tmp_root);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/t\x1b]0;title\x07.ini", dir);
    write_text(path, "[data]\nset = \x1b]52;c;cHduZWQ=\x07\n");
    nn_preset *p = malloc(sizeof *p);
    assert_non_null(p);
    assert_int_equal(nn_preset_load(path, p, err, sizeof err), -1);
    free(p);
    if (strpbrk(err, "\x1b\x07") || !strstr(err, "/t\\x1B]0;title\\x07.ini: "))
        fail_msg("control bytes in \"%s\"", err);
}

/* Two labs save the same new preset at once: both looked while it was not
 * there; one saves, the other is refused saying so, and the file is the
 * first one's whole. Then in two processes at the same moment: exactly one
 * saves (the folder's lock holds from the look to the rename). */
static void test_save_changed_meanwhile(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN + 16], err[NN_ERR_LEN];
    nn_preset *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    nn_file_seen seen_a, seen_b;
    assert_non_null(a);
    assert_non_null(b);
    in_tmp(dir, "save-race");          /* made by the save (mkdir -p) */
    snprintf(path, sizeof path, "%s/mine.ini", dir);
    assert_int_equal(nn_preset_load(FIXTURES_DIR "/graph-net.ini", a, err, sizeof err), 0);
    *b = *a;
    snprintf(a->name, sizeof a->name, "first");
    snprintf(b->name, sizeof b->name, "second");
    assert_int_equal(nn_file_seen_now(path, &seen_a), 0);
    assert_int_equal(seen_a.exists, 0);
    seen_b = seen_a;
    assert_int_equal(nn_preset_save_unchanged(path, a, &seen_a, err, sizeof err), 0);
    assert_int_equal(nn_preset_save_unchanged(path, b, &seen_b, err, sizeof err), -1);
    assert_non_null(strstr(err, "mine.ini: saved by another lab meanwhile (it appeared since this one looked)"));
    assert_int_equal(nn_preset_load(path, b, err, sizeof err), 0);
    assert_string_equal(b->name, "first");
    /* looked again: the file as it is now, so replacing it is the user's choice */
    assert_int_equal(nn_file_seen_now(path, &seen_b), 0);
    snprintf(b->name, sizeof b->name, "second");
    assert_int_equal(nn_preset_save_unchanged(path, b, &seen_b, err, sizeof err), 0);
    /* an overwrite after another save: refused too */
    assert_int_equal(nn_preset_save_unchanged(path, a, &seen_b, err, sizeof err), -1);
    assert_non_null(strstr(err, "(it changed since this one looked)"));

    /* two processes at once, both having looked before either saved */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(nn_file_seen_now(path, &seen_a), 0);
    fflush(NULL);
    pid_t pids[2];
    for (int i = 0; i < 2; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0)
            _exit(nn_preset_save_unchanged(path, i ? b : a, &seen_a, err, sizeof err) == 0 ? 0 : 1);
    }
    int saved = 0;
    for (int i = 0; i < 2; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        saved += WEXITSTATUS(status) == 0;
    }
    assert_int_equal(saved, 1);
    free(a);
    free(b);
}

/* ---- the group ---------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    return test_tmp_create(tmp_root, sizeof tmp_root, "preset-files");
}

static int group_teardown(void **state)
{
    (void)state;
    return test_tmp_remove(tmp_root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_a_file),
        cmocka_unit_test(test_missing_and_dangling),
        cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_bom_accepted),
        cmocka_unit_test(test_duplicates_only_real_ones),
        cmocka_unit_test(test_limits_and_nul),
        cmocka_unit_test(test_text_safe_and_long_messages),
        cmocka_unit_test(test_save_changed_meanwhile),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

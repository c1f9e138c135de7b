/* tests/test_atomic_file.c - nn_write_atomic's temp files and links: the
 * temp files of writers killed with SIGKILL before their rename are removed
 * by the next save to that folder once they are stale (and only ours, and
 * only stale ones), and saving over a symbolic link writes through to the
 * file it names, keeping the link; a link to nothing is refused. */
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

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "nnlab/preset.h"   /* NN_PATH_LEN */
#include "util.h"

static char tmp_root[256];

static void join(char *out, size_t len, const char *dir, const char *name)
{
    int n = snprintf(out, len, "%s/%s", dir, name);
    assert_true(n > 0 && (size_t)n < len);
}

static void in_tmp(char *out, size_t len, const char *name)
{
    join(out, len, tmp_root, name);
}

static int fill_text(FILE *f, const void *ctx)
{
    return fputs(ctx, f) < 0 ? -1 : 0;
}

/* Writes part of the file, then dies as by kill -9: no rename, no clean-up. */
static int fill_then_die(FILE *f, const void *ctx)
{
    (void)ctx;
    fputs("half a preset", f);
    fflush(f);
    raise(SIGKILL);
    return 0;
}

static void save(const char *path, const char *text)
{
    char err[NN_ERR_LEN] = "";
    if (nn_write_atomic(path, fill_text, text, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static char *slurp(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The names in dir that start with prefix, counted. */
static int count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* Ages every file in dir starting with prefix by `seconds`. */
static void age(const char *dir, const char *prefix, int seconds)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    struct timespec t[2];
    assert_non_null(d);
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= seconds;
    t[1] = t[0];
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            assert_int_equal(utimensat(dirfd(d), e->d_name, t, AT_SYMLINK_NOFOLLOW), 0);
    closedir(d);
}

/* A child saving path is killed in the middle of its write. */
static void killed_save(const char *path)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char err[NN_ERR_LEN];
        nn_write_atomic(path, fill_then_die, NULL, err, sizeof err);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void test_killed_saves_cleaned_up(void **state)
{
    char dir[NN_PATH_LEN], path[NN_PATH_LEN], other[NN_PATH_LEN], look[NN_PATH_LEN];
    (void)state;
    in_tmp(dir, sizeof dir, "kills");
    assert_int_equal(mkdir(dir, 0755), 0);
    join(path, sizeof path, dir, "my.ini");
    join(other, sizeof other, dir, "other.ini");
    save(path, "v1\n");
    for (int i = 0; i < 5; i++)
        killed_save(path);
    killed_save(other);
    assert_int_equal(count_prefixed(dir, ".my.ini."), 5);
    assert_string_equal(slurp(path), "v1\n");            /* the old file stands */

    /* a minute old is not yet stale: a slow writer may still be at work */
    age(dir, ".", NN_STALE_TEMP_S - 5);
    save(path, "v2\n");
    assert_int_equal(count_prefixed(dir, ".my.ini."), 5);

    /* stale, with look-alikes that are not ours (no infix, not hidden, a
     * folder): only the six temp files go, the other file's too */
    join(look, sizeof look, dir, ".my.ini.abcdef");
    save(look, "someone else's\n");
    join(look, sizeof look, dir, "my.ini.nnlab-tmp.abcdef");
    save(look, "someone else's\n");
    join(look, sizeof look, dir, ".x.ini.nnlab-tmp.folder");
    assert_int_equal(mkdir(look, 0755), 0);
    age(dir, "", 2 * NN_STALE_TEMP_S);
    age(dir, ".", 2 * NN_STALE_TEMP_S);
    save(path, "v3\n");
    assert_string_equal(slurp(path), "v3\n");
    assert_int_equal(count_prefixed(dir, ".my.ini.nnlab-tmp."), 0);
    assert_int_equal(count_prefixed(dir, ".other.ini."), 0);
    assert_int_equal(count_prefixed(dir, ".my.ini.abcdef"), 1);
    assert_int_equal(count_prefixed(dir, "my.ini.nnlab-tmp.abcdef"), 1);
    assert_int_equal(count_prefixed(dir, ".x.ini.nnlab-tmp.folder"), 1);
}

/* The link stays a link; the file it names holds the new text, with no
 * temp file left in either folder. */
static void test_symlink_written_through(void **state)
{
    char real_dir[NN_PATH_LEN], link_dir[NN_PATH_LEN], target[NN_PATH_LEN], link[NN_PATH_LEN];
    struct stat st;
    (void)state;
    in_tmp(real_dir, sizeof real_dir, "real");
    in_tmp(link_dir, sizeof link_dir, "links");
    assert_int_equal(mkdir(real_dir, 0755), 0);
    assert_int_equal(mkdir(link_dir, 0755), 0);
    join(target, sizeof target, real_dir, "shared.ini");
    join(link, sizeof link, link_dir, "mine.ini");
    save(target, "old\n");
    assert_int_equal(chmod(target, 0640), 0);
    assert_int_equal(symlink(target, link), 0);

    save(link, "new\n");
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(slurp(target), "new\n");
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);           /* the target's mode kept */
    assert_int_equal(count_prefixed(real_dir, "."), 2);   /* "." and ".." only */
    assert_int_equal(count_prefixed(link_dir, "."), 2);
}

static void test_dangling_link_refused(void **state)
{
    char link[NN_PATH_LEN], target[NN_PATH_LEN], err[NN_ERR_LEN] = "", back[NN_PATH_LEN];
    (void)state;
    in_tmp(link, sizeof link, "dangling.ini");
    in_tmp(target, sizeof target, "gone/away.ini");
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(nn_write_atomic(link, fill_text, "x\n", err, sizeof err), -1);
    assert_non_null(strstr(err, link));
    assert_non_null(strstr(err, "not saved: a link to"));
    assert_non_null(strstr(err, target));
    ssize_t n = readlink(link, back, sizeof back - 1);        /* the link is untouched */
    assert_true(n > 0);
    back[n] = '\0';
    assert_string_equal(back, target);
}

/* A link planted by another user (as in a world-writable /tmp) is refused,
 * and the file it names is left as it was. Planting one needs root
 * (lchown); a user's run skips it. */
static void test_foreign_link_refused(void **state)
{
    char link[NN_PATH_LEN], target[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    in_tmp(target, sizeof target, "victim.txt");
    in_tmp(link, sizeof link, "x.npy");
    save(target, "precious\n");
    assert_int_equal(symlink(target, link), 0);
    uid_t other = geteuid() == 65534 ? 65533 : 65534;
    if (lchown(link, other, (gid_t)-1) != 0)
        skip();
    assert_int_equal(nn_write_atomic(link, fill_text, "dump\n", err, sizeof err), -1);
    assert_non_null(strstr(err, link));
    assert_non_null(strstr(err, "not saved: a link owned by another user"));
    assert_string_equal(slurp(target), "precious\n");
}

/* ... and so is one further down a chain: mine -> another user's link ->
 * the victim. Every link of the chain is checked, not the first alone. */
static void test_foreign_link_in_chain_refused(void **state)
{
    char mine[NN_PATH_LEN], theirs[NN_PATH_LEN], target[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    in_tmp(target, sizeof target, "victim2.txt");
    in_tmp(theirs, sizeof theirs, "theirs.svg");
    in_tmp(mine, sizeof mine, "chain.svg");
    save(target, "precious\n");
    assert_int_equal(symlink(target, theirs), 0);
    assert_int_equal(symlink("theirs.svg", mine), 0);       /* relative, as a user writes it */
    uid_t other = geteuid() == 65534 ? 65533 : 65534;
    if (lchown(theirs, other, (gid_t)-1) != 0)
        skip();
    assert_int_equal(nn_write_atomic(mine, fill_text, "dump\n", err, sizeof err), -1);
    assert_non_null(strstr(err, mine));
    assert_non_null(strstr(err, "not saved: a link owned by another user"));
    assert_non_null(strstr(err, theirs));
    assert_string_equal(slurp(target), "precious\n");
}

/* A link that names itself is a loop, said as one, not a missing file. */
static void test_link_loop_said(void **state)
{
    char link[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    (void)state;
    in_tmp(link, sizeof link, "loop.svg");
    assert_int_equal(symlink("loop.svg", link), 0);
    assert_int_equal(nn_write_atomic(link, fill_text, "x\n", err, sizeof err), -1);
    assert_non_null(strstr(err, link));
    assert_non_null(strstr(err, "a chain of more than 40 links (a loop?)"));
}

/* A new file's mode is what the umask leaves (0600 under 077, as any
 * program's), an old file's is kept. */
static void test_umask_applies(void **state)
{
    char path[NN_PATH_LEN];
    struct stat st;
    (void)state;
    in_tmp(path, sizeof path, "private.ini");
    mode_t old = umask(077);
    save(path, "a\n");
    umask(old);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(chmod(path, 0640), 0);
    save(path, "b\n");
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    in_tmp(path, sizeof path, "shared.ini");
    old = umask(022);
    save(path, "c\n");
    umask(old);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
}

static int group_setup(void **state)
{
    (void)state;
    return test_tmp_create(tmp_root, sizeof tmp_root, "atomic");
}

static int group_teardown(void **state)
{
    (void)state;
    return test_tmp_remove(tmp_root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_killed_saves_cleaned_up),
        cmocka_unit_test(test_symlink_written_through),
        cmocka_unit_test(test_dangling_link_refused),
        cmocka_unit_test(test_foreign_link_refused),
        cmocka_unit_test(test_foreign_link_in_chain_refused),
        cmocka_unit_test(test_link_loop_said),
        cmocka_unit_test(test_umask_applies),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

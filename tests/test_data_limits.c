/* tests/test_data_limits.c - the data readers against files that lie (issue
 * 11): a header claiming far more than the file holds, a gzip trailer
 * claiming any size, a sparse file of gigabytes beside a 3-entry labels file,
 * files that are FIFOs or folders, a folder we may not open. Each must fail at
 * once (well under 2 s and 200 MB) with a one-line reason naming the file,
 * and never say "out of memory" for a file that is merely short. */
#define _XOPEN_SOURCE 700   /* nftw */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1   /* mkdtemp */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_tmp.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "data.h"
#include "util.h"

#define SIDE 28
#define PIXELS (SIDE * SIDE)
#define CIFAR_RECORD 3073
#define FAST_S 2.0                       /* the bounds for a refusal */
#define SMALL_KB (200L * 1024)

static char tmp_root[256];

/* ---- helpers ------------------------------------------------------------ */

static void assert_has(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle))
        fail_msg("\"%s\"\n  does not contain \"%s\"", haystack, needle);
}

static void assert_lacks(const char *haystack, const char *needle)
{
    if (strstr(haystack, needle))
        fail_msg("\"%s\"\n  contains \"%s\"", haystack, needle);
}

static void join(char *out, size_t len, const char *dir, const char *name)
{
    int n = snprintf(out, len, "%s/%s", dir, name);
    assert_true(n > 0 && (size_t)n < len);
}

static void make_dir(char *out, size_t len, const char *name)
{
    join(out, len, tmp_root, name);
    assert_int_equal(mkdir(out, 0755), 0);
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static void write_plain(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* One gzip member per part, appended: zlib reads them as one stream, and the
 * trailer's ISIZE is the last part's size only. */
static void write_gz_parts(const char *path, const unsigned char *data, const size_t *part,
                           int parts)
{
    for (int i = 0; i < parts; i++) {
        gzFile f = gzopen(path, i ? "ab" : "wb");
        assert_non_null(f);
        if (part[i])
            assert_int_equal(gzwrite(f, data, (unsigned)part[i]), (int)part[i]);
        assert_int_equal(gzclose(f), Z_OK);
        data += part[i];
    }
}

static void idx_name(char *out, size_t len, const char *dir, const char *split, int images,
                     int gz)
{
    int n = snprintf(out, len, "%s/%s-%s-%s-ubyte%s", dir, split, images ? "images" : "labels",
                     images ? "idx3" : "idx1", gz ? ".gz" : "");
    assert_true(n > 0 && (size_t)n < len);
}

/* header + payload bytes of an images (16-byte header) or labels (8) file */
static unsigned char *idx_bytes(int images, uint32_t count, size_t payload, size_t *n)
{
    size_t header = images ? 16 : 8;
    unsigned char *b = calloc(1, header + payload);
    assert_non_null(b);
    put_be32(b, images ? 0x803 : 0x801);
    put_be32(b + 4, count);
    if (images) {
        put_be32(b + 8, SIDE);
        put_be32(b + 12, SIDE);
    }
    for (size_t k = 0; k < payload; k++)
        b[header + k] = images ? (unsigned char)(k * 7 + 3) : (unsigned char)(k % 10);
    *n = header + payload;
    return b;
}

static void write_idx(const char *dir, const char *split, int images, uint32_t count,
                      size_t payload, int gz)
{
    char path[NN_PATH_LEN];
    size_t n;
    unsigned char *b = idx_bytes(images, count, payload, &n);
    idx_name(path, sizeof path, dir, split, images, gz);
    if (gz)
        write_gz_parts(path, b, &n, 1);
    else
        write_plain(path, b, n);
    free(b);
}

/* A valid t10k split, so that only train is at fault. */
static void write_good_t10k(const char *dir)
{
    write_idx(dir, "t10k", 1, 2, 2 * PIXELS, 0);
    write_idx(dir, "t10k", 0, 2, 2, 0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long max_rss_kb(void)
{
    struct rusage ru;
    assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
    return ru.ru_maxrss;
}

/* Loads dir (IDX or CIFAR-10), expecting a quick, small failure whose
 * message holds every needle and never "out of memory"; returns nothing,
 * leaves the message in err. */
static void expect_quick_error(const char *dir, int cifar, const char *const *needles)
{
    char err[NN_ERR_LEN] = "";
    nn_dataset ds;
    long rss0 = max_rss_kb();
    double t0 = now_s();
    int rc = cifar ? nn_data_load_cifar10_dir(dir, &ds, err, sizeof err)
                   : nn_data_load_idx_dir(dir, &ds, err, sizeof err);
    double took = now_s() - t0;
    assert_int_equal(rc, -1);
    for (; *needles; needles++)
        assert_has(err, *needles);
    assert_lacks(err, "out of memory");
    assert_null(strchr(err, '\n'));
    if (took > FAST_S)
        fail_msg("took %.1f s (more than %.0f s): %s", took, FAST_S, err);
    if (max_rss_kb() - rss0 > SMALL_KB)
        fail_msg("peak memory grew by %ld KiB (more than %ld): %s", max_rss_kb() - rss0,
                 SMALL_KB, err);
}

/* ---- IDX: headers that claim too much ------------------------------------ */

/* A folder whose training files (plain or gzip) hold only headers claiming
 * `claim` images must be refused quickly with the images file's path, what
 * `want` formats with the claim (%u, or %llu of its pixels), and `also`. */
static void expect_claim_refused(const char *tag, uint32_t claim, const char *want, const char *also)
{
    for (int gz = 0; gz < 2; gz++) {
        char dir[NN_PATH_LEN], name[64], path[NN_PATH_LEN], text[160];
        snprintf(name, sizeof name, "%s-%u-%s", tag, claim, gz ? "gz" : "plain");
        make_dir(dir, sizeof dir, name);
        write_idx(dir, "train", 1, claim, 0, gz);
        write_idx(dir, "train", 0, claim, 0, gz);
        write_good_t10k(dir);
        idx_name(path, sizeof path, dir, "train", 1, gz);
        if (strstr(want, "%llu"))
            snprintf(text, sizeof text, want, (unsigned long long)claim * PIXELS);
        else
            snprintf(text, sizeof text, want, claim);
        const char *needles[] = { path, text, also, NULL };
        expect_quick_error(dir, 0, needles);
    }
}

/* A header claiming more images than an MNIST-format set holds (60,001,
 * 10,000,000, 2^32 - 1) is refused from the header, before any reading:
 * the memory estimate and the epochs were made for at most that many. */
static void test_idx_claim_beyond_set(void **state)
{
    (void)state;
    static const uint32_t claims[] = { 60001u, 10000000u, 0xffffffffu };
    for (int c = 0; c < 3; c++)
        expect_claim_refused("set", claims[c], ": the header claims %u images (count at offset 4)",
                             "holds at most 60000");
}

/* A 16-byte file claiming a whole training set (and one image fewer) is
 * short, not too big for memory. */
static void test_idx_claim_beyond_file(void **state)
{
    (void)state;
    static const uint32_t claims[] = { 60000u, 59999u };
    for (int c = 0; c < 2; c++)
        expect_claim_refused("claim", claims[c], ": truncated at offset 16: expected %llu bytes of pixels",
                             ": truncated");
}

/* The other reproducer: a 2 GB sparse images file claiming 2,700,000
 * images beside a 3-entry labels file fails on the count, before reading. */
static void test_idx_sparse_count_mismatch(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN], labels[NN_PATH_LEN];
    const uint32_t n = 2700000;
    make_dir(dir, sizeof dir, "sparse");
    write_idx(dir, "train", 1, n, 0, 0);
    idx_name(path, sizeof path, dir, "train", 1, 0);
    assert_int_equal(truncate(path, 16 + (off_t)n * PIXELS), 0);   /* sparse: no blocks */
    write_idx(dir, "train", 0, 3, 3, 0);
    write_good_t10k(dir);
    idx_name(labels, sizeof labels, dir, "train", 0, 0);
    const char *needles[] = { labels, ": count mismatch: 2700000 images", "but 3 labels", NULL };
    expect_quick_error(dir, 0, needles);
}

/* A plain file's size against its header, both ways, before reading it. */
static void test_idx_plain_size_checked_first(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    make_dir(dir, sizeof dir, "plain-long");
    write_idx(dir, "train", 1, 3, 3 * PIXELS, 0);
    write_idx(dir, "train", 0, 3, 3, 0);
    write_good_t10k(dir);
    idx_name(path, sizeof path, dir, "train", 0, 0);
    /* labels 3 + a sparse gigabyte: refused from its size, not read */
    assert_int_equal(truncate(path, (off_t)1 << 30), 0);
    const char *needles[] = { path, ": unexpected data at offset 11 after the last of 3 labels",
                              NULL };
    expect_quick_error(dir, 0, needles);
}

/* gzip's trailer says the data is 4 GiB: only a hint, so a short stream is
 * still read with little memory and reported for what it is. The header
 * claims a little more than the megabyte of data (1276 images), so that the
 * stream is read to its trailer: a claim beyond what the file could hold at
 * all is refused before reading (test_idx_gzip_bomb). */
static void test_idx_gzip_lying_trailer(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    make_dir(dir, sizeof dir, "gz-trailer");
    /* a megabyte of data, more than zlib inflates ahead while the header is
     * read, so the trailer is checked only after a buffer has been taken */
    write_idx(dir, "train", 1, 1276u, 1000000, 1);
    write_idx(dir, "train", 0, 1276u, 0, 1);   /* gzip too: no size known up front */
    write_good_t10k(dir);
    idx_name(path, sizeof path, dir, "train", 1, 1);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, -4, SEEK_END), 0);
    assert_int_equal(fwrite("\xf0\xff\xff\xff", 1, 4, f), 4);   /* ISIZE 4294967280 */
    assert_int_equal(fclose(f), 0);
    const char *needles[] = { path, ": corrupt gzip data after offset ", "incorrect length check",
                              NULL };
    expect_quick_error(dir, 0, needles);
}

/* The gzip bomb, small: a file of a few kilobytes holding a megabyte
 * of zeros, whose header claims a whole training set (60,000 images) and whose trailer tells the
 * true size. The claim is more than deflate can make of the file: refused
 * before any buffer is taken (it used to take the trailer's size at once,
 * then read the whole stream; bench/hardening.sh times the 1 MB one). */
static void test_idx_gzip_bomb(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    size_t n = 16 + ((size_t)1 << 20);
    unsigned char *b = calloc(1, n);
    assert_non_null(b);
    put_be32(b, 0x803);
    put_be32(b + 4, 60000u);
    put_be32(b + 8, SIDE);
    put_be32(b + 12, SIDE);
    make_dir(dir, sizeof dir, "gz-bomb");
    idx_name(path, sizeof path, dir, "train", 1, 1);
    write_gz_parts(path, b, &n, 1);
    free(b);
    write_idx(dir, "train", 0, 60000u, 0, 1);
    write_good_t10k(dir);
    const char *needles[] = { path, ": truncated at offset 16: expected 47040000 bytes of "
                              "pixels", "more than a gzip file of ", NULL };
    expect_quick_error(dir, 0, needles);
}

/* Several gzip members: the trailer gives the last one's size, far below
 * the data; the buffer grows as the data arrives, and every byte is kept. */
static void test_idx_gzip_grows_past_hint(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    const uint32_t count = 1500;                 /* > 1 Mi pixels: past the first guess too */
    size_t n, parts[3];
    nn_dataset ds;
    make_dir(dir, sizeof dir, "gz-members");
    unsigned char *b = idx_bytes(1, count, (size_t)count * PIXELS, &n);
    parts[0] = 16 + 5 * PIXELS;
    parts[2] = 2 * PIXELS;                       /* the hint: 1568 bytes */
    parts[1] = n - parts[0] - parts[2];
    idx_name(path, sizeof path, dir, "train", 1, 1);
    write_gz_parts(path, b, parts, 3);
    write_idx(dir, "train", 0, count, count, 1);
    write_good_t10k(dir);
    assert_int_equal(nn_data_load_idx_dir(dir, &ds, err, sizeof err), 0);
    assert_int_equal(ds.n_train, count);
    for (size_t k = 0; k < (size_t)count * PIXELS; k++)
        if (ds.train_x[k] != (float)b[16 + k] / 255.0f)
            fail_msg("pixel %zu: %g, want %g", k, (double)ds.train_x[k], b[16 + k] / 255.0);
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(ds.train_y[i], (int)(i % 10));
    nn_data_free(&ds);
    free(b);
}

/* Bytes after the gzip member's trailer that start no member: refused,
 * naming the file and the byte of it where they start (zlib's gzread took
 * them for trailing garbage and ignored them). Bytes that start with gzip's
 * magic but are no member: corrupt data. */
static void test_idx_gzip_junk_after(void **state)
{
    (void)state;
    const char *tails[] = { "junk after the data", "\x1f\x8b not a member" };
    for (int t = 0; t < 2; t++) {
        char dir[NN_PATH_LEN], path[NN_PATH_LEN], name[32], at[64];
        struct stat st;
        snprintf(name, sizeof name, "gz-junk-%d", t);
        make_dir(dir, sizeof dir, name);
        write_idx(dir, "train", 1, 3u, 3 * PIXELS, 1);
        write_idx(dir, "train", 0, 3u, 3, 0);
        write_good_t10k(dir);
        idx_name(path, sizeof path, dir, "train", 1, 1);
        assert_int_equal(stat(path, &st), 0);
        FILE *f = fopen(path, "ab");
        assert_non_null(f);
        assert_int_equal(fwrite(tails[t], 1, strlen(tails[t]), f), strlen(tails[t]));
        assert_int_equal(fclose(f), 0);
        snprintf(at, sizeof at, ": junk after the gzip stream at byte %lld of the file", (long long)st.st_size);
        const char *junk[] = { path, at, NULL };
        const char *corrupt[] = { path, ": corrupt gzip data after offset ", NULL };
        expect_quick_error(dir, 0, t == 0 ? junk : corrupt);
    }
}

/* ---- files that are not files ------------------------------------------- */

static void test_idx_not_regular_files(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    make_dir(dir, sizeof dir, "idx-fifo");
    write_idx(dir, "train", 1, 3, 3 * PIXELS, 0);
    write_good_t10k(dir);
    idx_name(path, sizeof path, dir, "train", 0, 0);
    assert_int_equal(mkfifo(path, 0644), 0);     /* no writer: opening it must not wait */
    const char *fifo[] = { path, ": not a regular file (a FIFO)", NULL };
    expect_quick_error(dir, 0, fifo);

    make_dir(dir, sizeof dir, "idx-folder");
    write_idx(dir, "train", 0, 3, 3, 0);
    write_good_t10k(dir);
    idx_name(path, sizeof path, dir, "train", 1, 0);
    assert_int_equal(mkdir(path, 0755), 0);
    const char *folder[] = { path, ": not a regular file (a directory)", NULL };
    expect_quick_error(dir, 0, folder);
}

static const char *const cifar_names[6] = {
    "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
    "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin",
};

static void write_cifar_set(const char *dir, long records)
{
    size_t n = (size_t)records * CIFAR_RECORD;
    unsigned char *b = calloc(1, n);
    assert_non_null(b);
    for (int f = 0; f < 6; f++) {
        char path[NN_PATH_LEN];
        join(path, sizeof path, dir, cifar_names[f]);
        write_plain(path, b, n);
    }
    free(b);
}

static void test_cifar_not_regular_files(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    make_dir(dir, sizeof dir, "cifar-fifo");
    write_cifar_set(dir, 2);
    join(path, sizeof path, dir, cifar_names[1]);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0644), 0);
    const char *fifo[] = { path, ": not a regular file (a FIFO)", NULL };
    expect_quick_error(dir, 1, fifo);

    make_dir(dir, sizeof dir, "cifar-folder");
    write_cifar_set(dir, 2);
    join(path, sizeof path, dir, cifar_names[0]);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
    const char *folder[] = { path, ": not a regular file (a directory)", NULL };
    expect_quick_error(dir, 1, folder);
}

/* A sparse 2 GB first batch beside files of 3 records: refused from the
 * sizes, before memory is taken or a byte is read. */
static void test_cifar_sparse_mismatch(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    make_dir(dir, sizeof dir, "cifar-sparse");
    write_cifar_set(dir, 3);
    join(path, sizeof path, dir, cifar_names[0]);
    assert_int_equal(truncate(path, (off_t)700000 * CIFAR_RECORD), 0);
    const char *needles[] = { "data_batch_2.bin: truncated at offset 9219: 3 records where "
                              "the other files hold 700000", NULL };
    expect_quick_error(dir, 1, needles);
}

/* ---- a folder we may not open -------------------------------------------- */

/* 0 when loading dir fails saying "permission denied" (IDX and CIFAR-10). */
static int permission_denied_said(const char *dir)
{
    char err[NN_ERR_LEN] = "";
    nn_dataset ds;
    for (int cifar = 0; cifar < 2; cifar++) {
        int rc = cifar ? nn_data_load_cifar10_dir(dir, &ds, err, sizeof err)
                       : nn_data_load_idx_dir(dir, &ds, err, sizeof err);
        if (rc != -1 || !strstr(err, "permission denied") || !strstr(err, dir)) {
            fprintf(stderr, "# %s: rc %d: %s\n", cifar ? "cifar" : "idx", rc, err);
            return 1;
        }
    }
    return 0;
}

/* Root opens any folder, so as root the check runs in a child that has
 * become the unprivileged user 65534 ("nobody"); the folder above it must
 * then be open to all. */
static void test_unreadable_folder(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN];
    assert_int_equal(chmod(tmp_root, 0755), 0);
    make_dir(dir, sizeof dir, "locked");
    write_idx(dir, "train", 1, 1, PIXELS, 0);
    write_cifar_set(dir, 1);
    assert_int_equal(chmod(dir, 0), 0);
    if (geteuid() != 0) {
        assert_int_equal(permission_denied_said(dir), 0);
        assert_int_equal(chmod(dir, 0755), 0);
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        _exit(permission_denied_said(dir));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(chmod(dir, 0755), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- the group ---------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    return test_tmp_create(tmp_root, sizeof tmp_root, "limits");
}

static int group_teardown(void **state)
{
    (void)state;
    return test_tmp_remove(tmp_root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idx_claim_beyond_file),
        cmocka_unit_test(test_idx_claim_beyond_set),
        cmocka_unit_test(test_idx_sparse_count_mismatch),
        cmocka_unit_test(test_idx_plain_size_checked_first),
        cmocka_unit_test(test_idx_gzip_lying_trailer),
        cmocka_unit_test(test_idx_gzip_bomb),
        cmocka_unit_test(test_idx_gzip_grows_past_hint),
        cmocka_unit_test(test_idx_gzip_junk_after),
        cmocka_unit_test(test_idx_not_regular_files),
        cmocka_unit_test(test_cifar_not_regular_files),
        cmocka_unit_test(test_cifar_sparse_mismatch),
        cmocka_unit_test(test_unreadable_folder),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

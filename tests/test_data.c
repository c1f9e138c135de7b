/* tests/test_data.c - the data module.
 *
 * Small IDX and CIFAR-10 files are written into a temporary folder, good and
 * broken in each way a download can be broken; every error must name the file
 * and the offset. Then the preset defaults and fallbacks, the synthetic and
 * random generators, and the real Fashion-MNIST when it is installed. */
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

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "data.h"
#include "util.h"

#define SIDE 28
#define PIXELS (SIDE * SIDE)
#define CIFAR_PIXELS 3072
#define CIFAR_RECORD 3073

static char tmp_root[256];

/* ---- helpers ------------------------------------------------------------ */

static void assert_has(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle))
        fail_msg("\"%s\"\n  does not contain \"%s\"", haystack, needle);
}

/* After an error nothing may be left allocated or half filled. */
static void assert_empty(const nn_dataset *ds)
{
    nn_dataset zero;
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(ds, &zero, sizeof zero);
}

/* "dir/name", failing the test rather than truncating. */
static void join(char *out, size_t len, const char *dir, const char *name)
{
    int n = snprintf(out, len, "%s/%s", dir, name);
    assert_true(n > 0 && (size_t)n < len);
}

/* A fresh folder under the temporary root. */
static void make_dir(char *out, size_t len, const char *name)
{
    join(out, len, tmp_root, name);
    assert_int_equal(mkdir(out, 0700), 0);
}

static void write_bytes(const char *path, const void *data, size_t n, int gz)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        if (n)
            assert_int_equal(gzwrite(f, data, (unsigned)n), (int)n);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, n, f), n);
        assert_int_equal(fclose(f), 0);
    }
}

static unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    unsigned char *buf = malloc(*n);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, *n, f), *n);
    fclose(f);
    return buf;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* The test pattern: split 0 is train, 1 is t10k, so the two differ. */
static unsigned char pixel(int split, long i, int j)
{
    return (unsigned char)(i * 31 + j * 7 + split * 101);
}

static int label(int split, long i)
{
    return (int)((i * 3 + split) % 10);
}

/* "DIR/train-images-idx3-ubyte.gz" or, dotted, "DIR/train-images.idx3-ubyte". */
static void idx_path(char *out, size_t len, const char *dir, int split, int images,
                     int gz, int dotted)
{
    int n = snprintf(out, len, "%s/%s-%s%c%s-ubyte%s", dir, split ? "t10k" : "train",
                     images ? "images" : "labels", dotted ? '.' : '-',
                     images ? "idx3" : "idx1", gz ? ".gz" : "");
    assert_true(n > 0 && (size_t)n < len);
}

/* An images file: header (magic, count, rows, cols) and `payload` pixel bytes
 * of the pattern (count * rows * cols for a whole file). */
static void write_images(const char *path, int split, uint32_t magic, uint32_t count,
                         uint32_t rows, uint32_t cols, size_t payload, int gz)
{
    unsigned char *buf = malloc(16 + payload);
    assert_non_null(buf);
    put_be32(buf, magic);
    put_be32(buf + 4, count);
    put_be32(buf + 8, rows);
    put_be32(buf + 12, cols);
    for (size_t k = 0; k < payload; k++)
        buf[16 + k] = pixel(split, (long)(k / PIXELS), (int)(k % PIXELS));
    write_bytes(path, buf, 16 + payload, gz);
    free(buf);
}

static void write_labels(const char *path, int split, uint32_t magic, uint32_t count,
                         size_t payload, int gz)
{
    unsigned char *buf = malloc(8 + payload);
    assert_non_null(buf);
    put_be32(buf, magic);
    put_be32(buf + 4, count);
    for (size_t k = 0; k < payload; k++)
        buf[8 + k] = (unsigned char)label(split, (long)k);
    write_bytes(path, buf, 8 + payload, gz);
    free(buf);
}

/* A complete, valid set: n[0] train and n[1] t10k images. */
static void write_idx_set(const char *dir, const long n[2], int gz, int dotted)
{
    char path[NN_PATH_LEN];
    for (int s = 0; s < 2; s++) {
        idx_path(path, sizeof path, dir, s, 1, gz, dotted);
        write_images(path, s, 0x803, (uint32_t)n[s], SIDE, SIDE, (size_t)n[s] * PIXELS, gz);
        idx_path(path, sizeof path, dir, s, 0, gz, dotted);
        write_labels(path, s, 0x801, (uint32_t)n[s], (size_t)n[s], gz);
    }
}

static void check_idx_split(const float *x, const int32_t *y, long n, int split)
{
    for (long i = 0; i < n; i++) {
        assert_int_equal(y[i], label(split, i));
        for (int j = 0; j < PIXELS; j++) {
            float want = (float)pixel(split, i, j) / 255.0f;
            if (x[i * PIXELS + j] != want)
                fail_msg("split %d image %ld pixel %d: %g, want %g", split, i, j,
                         (double)x[i * PIXELS + j], (double)want);
        }
    }
}

/* Loads dir, expecting an error that contains every needle. */
static void expect_idx_error(const char *dir, const char *const *needles)
{
    char err[NN_ERR_LEN] = "";
    nn_dataset ds;
    memset(&ds, 0xab, sizeof ds);   /* garbage in: the loader must not trust it */
    assert_int_equal(nn_data_load_idx_dir(dir, &ds, err, sizeof err), -1);
    for (; *needles; needles++)
        assert_has(err, *needles);
    assert_empty(&ds);
}

static void preset_for(nn_preset *p, enum nn_data_kind kind)
{
    memset(p, 0, sizeof *p);
    p->data = kind;
    p->rows = 1000000;
    p->val_rows = 2000;
    p->features = 84;
    p->targets = 1;
}

/* ---- IDX: good files ---------------------------------------------------- */

static void test_idx_gzip_reads_back_exactly(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    const long n[2] = { 5, 3 };
    nn_dataset ds;
    make_dir(dir, sizeof dir, "idx-gz");
    write_idx_set(dir, n, 1, 0);

    assert_int_equal(nn_data_load_idx_dir(dir, &ds, err, sizeof err), 0);
    assert_int_equal(ds.n_train, 5);
    assert_int_equal(ds.n_val, 3);
    assert_int_equal(ds.input.rank, 3);
    assert_int_equal(ds.input.dim[0], 1);
    assert_int_equal(ds.input.dim[1], SIDE);
    assert_int_equal(ds.input.dim[2], SIDE);
    assert_int_equal(ds.sample_floats, PIXELS);
    assert_int_equal(ds.classes, 10);
    assert_int_equal(ds.synthetic, 0);
    assert_null(ds.train_t);
    assert_string_equal(ds.name, "MNIST-format IDX");
    assert_has(ds.description, "(real, ");
    assert_has(ds.description, dir);
    assert_has(ds.description, "5 train, 3 validation");
    check_idx_split(ds.train_x, ds.train_y, 5, 0);
    check_idx_split(ds.val_x, ds.val_y, 3, 1);
    nn_data_free(&ds);
}

/* A load stops at the cancel flag watched on its thread (SIGINT used to
 * wait for a slow gzip file to end); unwatched, it runs. */
static void test_idx_load_stops_at_cancel(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    const long n[2] = { 5, 3 };
    nn_dataset ds;
    atomic_int cancel = 1;
    make_dir(dir, sizeof dir, "idx-cancel");
    write_idx_set(dir, n, 1, 0);
    nn_data_watch_cancel(&cancel);
    assert_true(nn_data_cancelled());
    assert_int_equal(nn_data_load_idx_dir(dir, &ds, err, sizeof err), -1);
    assert_has(err, "load cancelled at offset");
    assert_null(ds.train_x);
    atomic_store(&cancel, 0);
    assert_int_equal(nn_data_load_idx_dir(dir, &ds, err, sizeof err), 0);
    nn_data_free(&ds);
    atomic_store(&cancel, 1);
    nn_data_watch_cancel(NULL);
    assert_false(nn_data_cancelled());
    assert_int_equal(nn_data_load_idx_dir(dir, &ds, err, sizeof err), 0);
    nn_data_free(&ds);
}

/* Plain files, and the "train-images.idx3-ubyte" spelling for train. */
static void test_idx_plain_and_dotted_names(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    const long n[2] = { 4, 2 };
    nn_dataset ds;
    make_dir(dir, sizeof dir, "idx-plain");
    write_idx_set(dir, n, 0, 0);
    /* replace train with the dotted spelling */
    idx_path(path, sizeof path, dir, 0, 1, 0, 0);
    assert_int_equal(unlink(path), 0);
    idx_path(path, sizeof path, dir, 0, 0, 0, 0);
    assert_int_equal(unlink(path), 0);
    idx_path(path, sizeof path, dir, 0, 1, 0, 1);
    write_images(path, 0, 0x803, 4, SIDE, SIDE, 4 * PIXELS, 0);
    idx_path(path, sizeof path, dir, 0, 0, 0, 1);
    write_labels(path, 0, 0x801, 4, 4, 0);

    assert_int_equal(nn_data_load_idx_dir(dir, &ds, err, sizeof err), 0);
    assert_int_equal(ds.n_train, 4);
    assert_int_equal(ds.n_val, 2);
    check_idx_split(ds.train_x, ds.train_y, 4, 0);
    check_idx_split(ds.val_x, ds.val_y, 2, 1);
    nn_data_free(&ds);
}

static void test_idx_fashion_dir_is_named(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], slash[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    const long n[2] = { 2, 1 };
    nn_dataset ds;
    make_dir(dir, sizeof dir, "fashion-mnist");
    write_idx_set(dir, n, 1, 0);
    join(slash, sizeof slash, dir, "");
    assert_int_equal(nn_data_load_idx_dir(slash, &ds, err, sizeof err), 0);
    assert_string_equal(ds.name, "Fashion-MNIST");
    assert_has(ds.description, "Fashion-MNIST (real, ");
    nn_data_free(&ds);
}

/* ---- IDX: broken files -------------------------------------------------- */

/* A fresh valid set in its own folder, whose one file the test then breaks. */
static void broken_set(char *dir, size_t len, const char *name, int gz)
{
    const long n[2] = { 5, 3 };
    make_dir(dir, len, name);
    write_idx_set(dir, n, gz, 0);
}

static void test_idx_truncated_images(void **state)
{
    (void)state;
    for (int gz = 0; gz < 2; gz++) {
        char dir[NN_PATH_LEN], path[NN_PATH_LEN];
        broken_set(dir, sizeof dir, gz ? "trunc-images-gz" : "trunc-images", gz);
        idx_path(path, sizeof path, dir, 0, 1, gz, 0);
        /* header says 5 images; 2 and 100 bytes follow: 16 + 1568 + 100 = 1684 */
        write_images(path, 0, 0x803, 5, SIDE, SIDE, 2 * PIXELS + 100, gz);
        const char *needles[] = {
            path, ": truncated at offset 1684: expected 3920 bytes of pixels after the "
            "16-byte header", NULL
        };
        expect_idx_error(dir, needles);
    }
}

static void test_idx_truncated_header(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    static const unsigned char half[10] = { 0, 0, 8, 3, 0, 0, 0, 5, 0, 0 };
    broken_set(dir, sizeof dir, "trunc-header", 1);
    idx_path(path, sizeof path, dir, 1, 1, 1, 0);   /* t10k images */
    write_bytes(path, half, sizeof half, 1);
    const char *needles[] = {
        path, ": truncated at offset 10: expected the 16-byte IDX header", NULL
    };
    expect_idx_error(dir, needles);
}

static void test_idx_truncated_labels(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    broken_set(dir, sizeof dir, "trunc-labels", 1);
    idx_path(path, sizeof path, dir, 0, 0, 1, 0);
    write_labels(path, 0, 0x801, 5, 3, 1);
    const char *needles[] = {
        path, ": truncated at offset 11: expected 5 labels after the 8-byte header", NULL
    };
    expect_idx_error(dir, needles);
}

static void test_idx_wrong_magic(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    broken_set(dir, sizeof dir, "magic-images", 1);
    idx_path(path, sizeof path, dir, 0, 1, 1, 0);
    write_images(path, 0, 0x804, 5, SIDE, SIDE, 5 * PIXELS, 1);
    const char *images[] = {
        path, ": wrong magic number 0x00000804 at offset 0 (expected 0x00000803, "
        "IDX unsigned-byte 3-D)", NULL
    };
    expect_idx_error(dir, images);

    /* an images file where the labels belong */
    broken_set(dir, sizeof dir, "magic-labels", 0);
    idx_path(path, sizeof path, dir, 1, 0, 0, 0);
    write_labels(path, 1, 0x803, 3, 3, 0);
    const char *labels[] = {
        path, ": wrong magic number 0x00000803 at offset 0 (expected 0x00000801, "
        "IDX unsigned-byte 1-D)", NULL
    };
    expect_idx_error(dir, labels);
}

static void test_idx_wrong_image_size(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    broken_set(dir, sizeof dir, "dims", 1);
    idx_path(path, sizeof path, dir, 0, 1, 1, 0);
    write_images(path, 0, 0x803, 5, 32, 32, 5 * 32 * 32, 1);
    const char *needles[] = { path, ": image size 32x32 at offset 8 is not 28x28", NULL };
    expect_idx_error(dir, needles);
}

static void test_idx_count_mismatch(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    broken_set(dir, sizeof dir, "count", 1);
    idx_path(path, sizeof path, dir, 0, 0, 1, 0);
    write_labels(path, 0, 0x801, 4, 4, 1);
    const char *needles[] = { path, ": count mismatch: 5 images", "but 4 labels", NULL };
    expect_idx_error(dir, needles);
}

static void test_idx_bad_label(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    unsigned char buf[8 + 5];
    broken_set(dir, sizeof dir, "bad-label", 1);
    idx_path(path, sizeof path, dir, 0, 0, 1, 0);
    put_be32(buf, 0x801);
    put_be32(buf + 4, 5);
    for (int i = 0; i < 5; i++)
        buf[8 + i] = (unsigned char)label(0, i);
    buf[8 + 2] = 12;
    write_bytes(path, buf, sizeof buf, 1);
    const char *needles[] = { path, ": label 12 at offset 10 is not a class 0..9", NULL };
    expect_idx_error(dir, needles);
}

static void test_idx_trailing_data(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    broken_set(dir, sizeof dir, "trailing", 0);
    idx_path(path, sizeof path, dir, 0, 1, 0, 0);
    write_images(path, 0, 0x803, 5, SIDE, SIDE, 5 * PIXELS + 1, 0);
    const char *needles[] = { path, ": unexpected data at offset 3936", NULL };
    expect_idx_error(dir, needles);
}

static void test_idx_corrupt_gzip(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    size_t n;

    /* a bad CRC-32 in the trailer: every byte decodes, the check fails */
    broken_set(dir, sizeof dir, "gz-crc", 1);
    idx_path(path, sizeof path, dir, 0, 1, 1, 0);
    unsigned char *gz = read_bytes(path, &n);
    gz[n - 8] ^= 0xff;
    write_bytes(path, gz, n, 0);
    free(gz);
    const char *crc[] = {
        path, ": corrupt gzip data after offset ", ": incorrect data check", NULL
    };
    expect_idx_error(dir, crc);

    /* the compressed stream cut in half, as by an interrupted download */
    broken_set(dir, sizeof dir, "gz-cut", 1);
    idx_path(path, sizeof path, dir, 0, 1, 1, 0);
    gz = read_bytes(path, &n);
    write_bytes(path, gz, n / 2, 0);
    free(gz);
    const char *cut[] = { path, ": gzip stream ends unexpectedly after offset", NULL };
    expect_idx_error(dir, cut);

    /* garbage in the middle of the deflate data: some error naming the file */
    broken_set(dir, sizeof dir, "gz-garbage", 1);
    idx_path(path, sizeof path, dir, 0, 1, 1, 0);
    gz = read_bytes(path, &n);
    assert_true(n > 40);
    for (size_t i = n / 2 - 4; i < n / 2 + 4; i++)
        gz[i] ^= 0x5a;
    write_bytes(path, gz, n, 0);
    free(gz);
    const char *garbage[] = { path, NULL };
    expect_idx_error(dir, garbage);
}

static void test_idx_missing_files(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], missing[NN_PATH_LEN], path[NN_PATH_LEN];
    join(missing, sizeof missing, tmp_root, "no-such-dir");
    const char *gone[] = { missing, ": No such file or directory", NULL };
    expect_idx_error(missing, gone);

    make_dir(dir, sizeof dir, "idx-empty");
    const char *empty[] = {
        dir, ": no train-images-idx3-ubyte[.gz] (nor train-images.idx3-ubyte[.gz])", NULL
    };
    expect_idx_error(dir, empty);

    broken_set(dir, sizeof dir, "idx-no-t10k-labels", 1);
    idx_path(path, sizeof path, dir, 1, 0, 1, 0);
    assert_int_equal(unlink(path), 0);
    const char *labels[] = { ": no t10k-labels-idx1-ubyte[.gz]", NULL };
    expect_idx_error(dir, labels);
}

/* ---- CIFAR-10 ----------------------------------------------------------- */

static const char *const cifar_names[6] = {
    "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
    "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin",
};

static unsigned char cifar_pixel(int file, long rec, int j)
{
    return (unsigned char)(file * 53 + rec * 29 + j * 11);
}

static int cifar_label(int file, long rec)
{
    return (int)((file * 7 + rec) % 10);
}

/* `records` whole records of the pattern, then `extra` bytes of the next. */
static void write_cifar_file(const char *dir, int file, long records, size_t extra)
{
    char path[NN_PATH_LEN];
    size_t n = (size_t)records * CIFAR_RECORD + extra;
    unsigned char *buf = malloc(n + 1);
    assert_non_null(buf);
    for (size_t k = 0; k < n; k++) {
        long rec = (long)(k / CIFAR_RECORD);
        int j = (int)(k % CIFAR_RECORD);
        buf[k] = j == 0 ? (unsigned char)cifar_label(file, rec)
                        : cifar_pixel(file, rec, j - 1);
    }
    join(path, sizeof path, dir, cifar_names[file]);
    write_bytes(path, buf, n, 0);
    free(buf);
}

static void write_cifar_set(const char *dir, long records)
{
    for (int f = 0; f < 6; f++)
        write_cifar_file(dir, f, records, 0);
}

static float cifar_value(unsigned char v)
{
    return ((float)v / 255.0f - 0.5f) / 0.5f;
}

static void check_cifar_split(const float *x, const int32_t *y, int first_file, int files,
                              long records)
{
    for (int f = 0; f < files; f++) {
        for (long r = 0; r < records; r++) {
            long s = f * records + r;
            assert_int_equal(y[s], cifar_label(first_file + f, r));
            for (int j = 0; j < CIFAR_PIXELS; j++) {
                float want = cifar_value(cifar_pixel(first_file + f, r, j));
                if (fabsf(x[s * CIFAR_PIXELS + j] - want) > 1e-6f)
                    fail_msg("file %d record %ld pixel %d: %g, want %g", first_file + f, r, j,
                             (double)x[s * CIFAR_PIXELS + j], (double)want);
            }
        }
    }
}

static void expect_cifar_error(const char *dir, const char *const *needles)
{
    char err[NN_ERR_LEN] = "";
    nn_dataset ds;
    memset(&ds, 0xab, sizeof ds);
    assert_int_equal(nn_data_load_cifar10_dir(dir, &ds, err, sizeof err), -1);
    for (; *needles; needles++)
        assert_has(err, *needles);
    assert_empty(&ds);
}

/* In the cifar-10-batches-bin/ folder the archive unpacks to, and directly. */
static void test_cifar_reads_back_exactly(void **state)
{
    (void)state;
    char root[NN_PATH_LEN], sub[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    nn_dataset ds;
    make_dir(root, sizeof root, "cifar");
    join(sub, sizeof sub, root, "cifar-10-batches-bin");
    assert_int_equal(mkdir(sub, 0700), 0);
    write_cifar_set(sub, 3);

    const char *dirs[2] = { root, sub };
    for (int i = 0; i < 2; i++) {
        assert_int_equal(nn_data_load_cifar10_dir(dirs[i], &ds, err, sizeof err), 0);
        assert_string_equal(ds.name, "CIFAR-10");
        assert_has(ds.description, "CIFAR-10 (real, ");
        assert_has(ds.description, "15 train, 3 validation");
        assert_int_equal(ds.synthetic, 0);
        assert_int_equal(ds.classes, 10);
        assert_int_equal(ds.input.rank, 3);
        assert_int_equal(ds.input.dim[0], 3);
        assert_int_equal(ds.input.dim[1], 32);
        assert_int_equal(ds.input.dim[2], 32);
        assert_int_equal(ds.sample_floats, CIFAR_PIXELS);
        assert_int_equal(ds.n_train, 15);
        assert_int_equal(ds.n_val, 3);
        check_cifar_split(ds.train_x, ds.train_y, 0, 5, 3);
        check_cifar_split(ds.val_x, ds.val_y, 5, 1, 3);
        assert_true(cifar_value(0) == -1.0f && cifar_value(255) == 1.0f);
        nn_data_free(&ds);
    }
}

static void test_cifar_truncated(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN];
    make_dir(dir, sizeof dir, "cifar-partial");
    write_cifar_set(dir, 3);
    write_cifar_file(dir, 2, 2, 100);   /* a partial third record */
    const char *partial[] = {
        "data_batch_3.bin: truncated at offset 6146: partial record of 100 bytes", NULL
    };
    expect_cifar_error(dir, partial);

    /* cut exactly at a record boundary: fewer records than the other files */
    make_dir(dir, sizeof dir, "cifar-short");
    write_cifar_set(dir, 3);
    write_cifar_file(dir, 5, 2, 0);
    const char *shorter[] = {
        "test_batch.bin: truncated at offset 6146: 2 records where the other files hold 3",
        NULL
    };
    expect_cifar_error(dir, shorter);

    make_dir(dir, sizeof dir, "cifar-empty-file");
    write_cifar_set(dir, 3);
    write_cifar_file(dir, 0, 0, 0);
    const char *empty[] = { "data_batch_1.bin: truncated at offset 0", NULL };
    expect_cifar_error(dir, empty);
}

static void test_cifar_bad_label(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    make_dir(dir, sizeof dir, "cifar-label");
    write_cifar_set(dir, 3);
    join(path, sizeof path, dir, "test_batch.bin");
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, CIFAR_RECORD, SEEK_SET), 0);   /* record 1's label */
    assert_int_equal(fputc(10, f), 10);
    assert_int_equal(fclose(f), 0);
    const char *needles[] = { path, ": label 10 at offset 3073 is not a class 0..9", NULL };
    expect_cifar_error(dir, needles);
}

static void test_cifar_missing_files(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN];
    make_dir(dir, sizeof dir, "cifar-none");
    const char *none[] = {
        dir, ": no data_batch_1.bin (nor cifar-10-batches-bin/data_batch_1.bin)", NULL
    };
    expect_cifar_error(dir, none);

    make_dir(dir, sizeof dir, "cifar-no-4");
    write_cifar_set(dir, 2);
    join(path, sizeof path, dir, "data_batch_4.bin");
    assert_int_equal(unlink(path), 0);
    const char *four[] = { path, ": No such file or directory", NULL };
    expect_cifar_error(dir, four);
}

/* ---- presets: explicit directories, defaults, fallbacks ----------------- */

static void test_preset_named_dir_must_work(void **state)
{
    (void)state;
    char missing[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_preset p;
    nn_dataset ds;
    join(missing, sizeof missing, tmp_root, "not-there");

    /* the --data argument, then the preset's own data_dir */
    preset_for(&p, NN_DATA_MNIST);
    assert_int_equal(nn_data_for_preset(&p, missing, 1, &ds, err, sizeof err), -1);
    assert_has(err, missing);
    assert_empty(&ds);
    nn_strlcpy(p.data_dir, missing, sizeof p.data_dir);
    assert_int_equal(nn_data_for_preset(&p, NULL, 1, &ds, err, sizeof err), -1);
    assert_has(err, missing);
    assert_empty(&ds);

    preset_for(&p, NN_DATA_CIFAR10);
    assert_int_equal(nn_data_for_preset(&p, missing, 1, &ds, err, sizeof err), -1);
    assert_has(err, missing);
    assert_empty(&ds);

    /* random data reads no files, so a directory is a mistake */
    preset_for(&p, NN_DATA_RANDOM);
    assert_int_equal(nn_data_for_preset(&p, tmp_root, 1, &ds, err, sizeof err), -1);
    assert_has(err, "random data reads no files");
    assert_empty(&ds);
}

static void test_preset_named_dir_is_read(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    const long n[2] = { 3, 2 };
    nn_preset p;
    nn_dataset ds;
    make_dir(dir, sizeof dir, "preset-idx");
    write_idx_set(dir, n, 1, 0);
    preset_for(&p, NN_DATA_MNIST);
    nn_strlcpy(p.data_dir, "/definitely/not/used", sizeof p.data_dir);
    /* --data wins over the preset's data_dir */
    assert_int_equal(nn_data_for_preset(&p, dir, 1, &ds, err, sizeof err), 0);
    assert_int_equal(ds.n_train, 3);
    assert_int_equal(ds.synthetic, 0);
    nn_data_free(&ds);

    make_dir(dir, sizeof dir, "preset-cifar");
    write_cifar_set(dir, 2);
    preset_for(&p, NN_DATA_CIFAR10);
    nn_strlcpy(p.data_dir, dir, sizeof p.data_dir);
    assert_int_equal(nn_data_for_preset(&p, "", 1, &ds, err, sizeof err), 0);   /* "" = not given */
    assert_int_equal(ds.n_train, 10);
    assert_string_equal(ds.name, "CIFAR-10");
    nn_data_free(&ds);
}

static void test_mnist_default_falls_back_to_synthetic(void **state)
{
    (void)state;
    char dir[NN_PATH_LEN], path[NN_PATH_LEN], err[NN_ERR_LEN] = "";
    nn_dataset ds;

    /* a default folder that does not exist, then one that holds no IDX files */
    join(dir, sizeof dir, tmp_root, "no-default");
    for (int round = 0; round < 2; round++) {
        if (round == 1)
            make_dir(dir, sizeof dir, "empty-default");
        assert_int_equal(nn_data_mnist_default(dir, 3, &ds, err, sizeof err), 0);
        assert_int_equal(ds.synthetic, 1);
        assert_string_equal(ds.name, "synthetic");
        assert_int_equal(ds.n_train, 60000);
        assert_int_equal(ds.n_val, 10000);
        assert_int_equal(ds.sample_floats, PIXELS);
        assert_int_equal(ds.classes, 10);
        assert_has(ds.description, "synthetic 1x28x28, 10 classes");
        assert_has(ds.description, "no IDX files in ");
        assert_has(ds.description, dir);
        assert_has(ds.description, "apt-get install dataset-fashion-mnist, or --data DIR");
        nn_data_free(&ds);
    }

    /* a partial install is reported, not silently replaced */
    broken_set(dir, sizeof dir, "partial-default", 1);
    idx_path(path, sizeof path, dir, 1, 1, 1, 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(nn_data_mnist_default(dir, 3, &ds, err, sizeof err), -1);
    assert_has(err, "no t10k-images-idx3-ubyte");
    assert_empty(&ds);

    /* and a good default is read */
    broken_set(dir, sizeof dir, "good-default", 1);
    assert_int_equal(nn_data_mnist_default(dir, 3, &ds, err, sizeof err), 0);
    assert_int_equal(ds.synthetic, 0);
    assert_int_equal(ds.n_train, 5);
    nn_data_free(&ds);
}

static void test_cifar_default_is_synthetic(void **state)
{
    (void)state;
    char err[NN_ERR_LEN] = "";
    nn_preset p;
    nn_dataset ds;
    preset_for(&p, NN_DATA_CIFAR10);
    assert_int_equal(nn_data_for_preset(&p, NULL, 9, &ds, err, sizeof err), 0);
    assert_int_equal(ds.synthetic, 1);
    assert_int_equal(ds.n_train, 50000);
    assert_int_equal(ds.n_val, 10000);
    assert_int_equal(ds.input.rank, 3);
    assert_int_equal(ds.input.dim[0], 3);
    assert_int_equal(ds.input.dim[1], 32);
    assert_int_equal(ds.input.dim[2], 32);
    assert_int_equal(ds.sample_floats, CIFAR_PIXELS);
    assert_has(ds.description, "synthetic 3x32x32, 10 classes: 50000 train, 10000 validation");
    assert_has(ds.description, "pass --data DIR (the lab: its Data folder) with data_batch_1.bin ... for real CIFAR-10");
    assert_true(isfinite(ds.train_x[(size_t)50000 * CIFAR_PIXELS - 1]));
    assert_true(isfinite(ds.val_x[(size_t)10000 * CIFAR_PIXELS - 1]));
    nn_data_free(&ds);
}

static void test_preset_random(void **state)
{
    (void)state;
    char err[NN_ERR_LEN] = "";
    nn_preset p;
    nn_dataset ds;
    preset_for(&p, NN_DATA_RANDOM);
    p.rows = 3000;
    p.val_rows = 200;
    p.features = 84;
    p.targets = 2;
    assert_int_equal(nn_data_for_preset(&p, NULL, 1, &ds, err, sizeof err), 0);
    assert_int_equal(ds.n_train, 3000);
    assert_int_equal(ds.n_val, 200);
    assert_int_equal(ds.input.rank, 1);
    assert_int_equal(ds.input.dim[0], 84);
    assert_int_equal(ds.target_width, 2);
    assert_int_equal(ds.classes, 0);
    nn_data_free(&ds);

    p.rows = 0;
    assert_int_equal(nn_data_for_preset(&p, NULL, 1, &ds, err, sizeof err), -1);
    assert_has(err, "random data");
    assert_empty(&ds);
}

/* ---- synthetic classification ------------------------------------------- */

static void test_synthetic_shapes_and_seed(void **state)
{
    (void)state;
    char err[NN_ERR_LEN] = "";
    nn_dataset a, b, c;
    nn_shape mnist = { 3, { 1, 28, 28 } };
    assert_int_equal(nn_data_synthetic(mnist, 10, 2000, 500, 5, &a, err, sizeof err), 0);
    assert_int_equal(nn_data_synthetic(mnist, 10, 2000, 500, 5, &b, err, sizeof err), 0);
    assert_int_equal(nn_data_synthetic(mnist, 10, 2000, 500, 6, &c, err, sizeof err), 0);
    assert_int_equal(a.sample_floats, PIXELS);
    assert_int_equal(a.classes, 10);
    assert_int_equal(a.synthetic, 1);
    assert_null(a.train_t);
    assert_has(a.description, "synthetic 1x28x28, 10 classes: 2000 train, 500 validation");
    /* the same seed gives the same data, another seed other data */
    assert_memory_equal(a.train_x, b.train_x, 2000 * PIXELS * sizeof(float));
    assert_memory_equal(a.val_x, b.val_x, 500 * PIXELS * sizeof(float));
    assert_memory_equal(a.train_y, b.train_y, 2000 * sizeof(int32_t));
    assert_memory_not_equal(a.train_x, c.train_x, 2000 * PIXELS * sizeof(float));
    /* inputs of roughly unit scale, nothing wild */
    for (size_t i = 0; i < 2000 * PIXELS; i++)
        if (!(fabsf(a.train_x[i]) < 3.0f))
            fail_msg("train_x[%zu] = %g", i, (double)a.train_x[i]);
    nn_data_free(&a);
    nn_data_free(&b);
    nn_data_free(&c);

    /* (features) and (C, L) shapes too, with an odd sample size */
    nn_shape flat = { 1, { 21 } }, seq = { 2, { 2, 16 } };
    assert_int_equal(nn_data_synthetic(flat, 3, 30, 0, 1, &a, err, sizeof err), 0);
    assert_int_equal(a.sample_floats, 21);
    assert_int_equal(a.n_val, 0);
    assert_null(a.val_x);
    assert_has(a.description, "synthetic 21, 3 classes");
    nn_data_free(&a);
    assert_int_equal(nn_data_synthetic(seq, 4, 40, 8, 1, &a, err, sizeof err), 0);
    assert_int_equal(a.sample_floats, 32);
    assert_has(a.description, "synthetic 2x16, 4 classes");
    nn_data_free(&a);
}

static void test_synthetic_labels_balanced(void **state)
{
    (void)state;
    char err[NN_ERR_LEN] = "";
    nn_dataset ds;
    nn_shape s = { 1, { 8 } };
    long count[10] = { 0 };
    assert_int_equal(nn_data_synthetic(s, 10, 1005, 20, 2, &ds, err, sizeof err), 0);
    for (long i = 0; i < ds.n_train; i++) {
        assert_in_range(ds.train_y[i], 0, 9);
        count[ds.train_y[i]]++;
    }
    for (int c = 0; c < 10; c++)
        assert_in_range(count[c], 100, 101);
    /* shuffled, not 0, 1, 2, ... */
    int in_order = 1;
    for (long i = 0; i < 20; i++)
        in_order &= ds.train_y[i] == i % 10;
    assert_false(in_order);
    nn_data_free(&ds);
}

/* Nearest class mean (means from train, scored on val): well above chance
 * (10%), and not a trivially separable 100%. */
static double nearest_mean_accuracy(const nn_dataset *ds)
{
    size_t m = ds->sample_floats;
    int k = ds->classes;
    double *mean = calloc((size_t)k * m, sizeof *mean);
    long *count = calloc((size_t)k, sizeof *count);
    long right = 0;
    assert_non_null(mean);
    assert_non_null(count);
    for (long i = 0; i < ds->n_train; i++) {
        count[ds->train_y[i]]++;
        for (size_t j = 0; j < m; j++)
            mean[ds->train_y[i] * m + j] += ds->train_x[i * m + j];
    }
    for (int c = 0; c < k; c++)
        for (size_t j = 0; j < m; j++)
            mean[c * m + j] /= (double)count[c];
    for (long i = 0; i < ds->n_val; i++) {
        int best = -1;
        double best_d = INFINITY;
        for (int c = 0; c < k; c++) {
            double d = 0.0;
            for (size_t j = 0; j < m; j++) {
                double t = ds->val_x[i * m + j] - mean[c * m + j];
                d += t * t;
            }
            if (d < best_d) {
                best_d = d;
                best = c;
            }
        }
        right += best == ds->val_y[i];
    }
    free(mean);
    free(count);
    return (double)right / (double)ds->n_val;
}

static void test_synthetic_is_learnable(void **state)
{
    (void)state;
    char err[NN_ERR_LEN] = "";
    nn_dataset ds;
    nn_shape shapes[2] = { { 3, { 1, 28, 28 } }, { 3, { 3, 32, 32 } } };
    for (int i = 0; i < 2; i++) {
        assert_int_equal(nn_data_synthetic(shapes[i], 10, 5000, 1000, 11, &ds, err, sizeof err), 0);
        double acc = nearest_mean_accuracy(&ds);
        if (acc < 0.70 || acc > 0.97)
            fail_msg("shape %d: nearest-mean accuracy %.3f, want 0.70..0.97", i, acc);
        nn_data_free(&ds);
    }
}

static void test_synthetic_rejects_bad_arguments(void **state)
{
    (void)state;
    char err[NN_ERR_LEN];
    nn_dataset ds;
    nn_shape good = { 1, { 4 } }, rank0 = { 0, { 4 } }, zero = { 2, { 3, 0 } };
    assert_int_equal(nn_data_synthetic(good, 1, 10, 10, 1, &ds, err, sizeof err), -1);
    assert_has(err, "1 classes");
    assert_empty(&ds);
    assert_int_equal(nn_data_synthetic(rank0, 2, 10, 10, 1, &ds, err, sizeof err), -1);
    assert_has(err, "rank 0");
    assert_int_equal(nn_data_synthetic(zero, 2, 10, 10, 1, &ds, err, sizeof err), -1);
    assert_has(err, "dimension 1 is 0");
    assert_int_equal(nn_data_synthetic(good, 2, 0, 10, 1, &ds, err, sizeof err), -1);
    assert_has(err, "0 train");
    assert_empty(&ds);
    /* sizes whose products would overflow are refused, not attempted */
    nn_shape huge = { 3, { 4096, 4096, 4096 } };
    assert_int_equal(nn_data_synthetic(huge, 10, 10, 10, 1, &ds, err, sizeof err), -1);
    assert_has(err, "floats per sample");
    assert_int_equal(nn_data_synthetic(good, 1 << 20, 10, 10, 1, &ds, err, sizeof err), -1);
    assert_has(err, "need 2..1000");
    assert_empty(&ds);
}

/* ---- random regression -------------------------------------------------- */

/* Mean, variance and the two-sided tail frequencies beyond 2 and 3. */
static void moments(const float *x, size_t n, double *mean, double *var, double *p2, double *p3)
{
    double s = 0.0, s2 = 0.0;
    size_t t2 = 0, t3 = 0;
    for (size_t i = 0; i < n; i++) {
        s += x[i];
        s2 += (double)x[i] * x[i];
        t2 += fabsf(x[i]) > 2.0f;
        t3 += fabsf(x[i]) > 3.0f;
    }
    *mean = s / (double)n;
    *var = s2 / (double)n - *mean * *mean;
    *p2 = (double)t2 / (double)n;
    *p3 = (double)t3 / (double)n;
}

static void test_random_regression(void **state)
{
    (void)state;
    char err[NN_ERR_LEN] = "";
    nn_dataset ds, again;
    double mean, var, p2, p3;
    assert_int_equal(nn_data_random_regression(84, 1, 50000, 2000, 4, &ds, err, sizeof err), 0);
    assert_string_equal(ds.name, "random");
    assert_int_equal(ds.synthetic, 1);
    assert_int_equal(ds.classes, 0);
    assert_int_equal(ds.target_width, 1);
    assert_int_equal(ds.input.rank, 1);
    assert_int_equal(ds.input.dim[0], 84);
    assert_int_equal(ds.sample_floats, 84);
    assert_int_equal(ds.n_train, 50000);
    assert_int_equal(ds.n_val, 2000);
    assert_null(ds.train_y);
    assert_null(ds.val_y);
    assert_has(ds.description, "50000 train, 2000 validation rows of 84 features -> 1 target");

    /* 4.2M inputs: standard errors ~0.0005 on the mean and ~0.0007 on the
     * variance; the tails check the ziggurat's wedges and its tail past 3.44 */
    moments(ds.train_x, (size_t)50000 * 84, &mean, &var, &p2, &p3);
    assert_true(fabs(mean) < 0.003);
    assert_true(fabs(var - 1.0) < 0.004);
    assert_true(fabs(p2 - 0.0455) < 0.0006);
    assert_true(fabs(p3 - 0.0027) < 0.00015);
    moments(ds.train_t, 50000, &mean, &var, &p2, &p3);
    assert_true(fabs(mean) < 0.02);
    assert_true(fabs(var - 1.0) < 0.03);
    moments(ds.val_x, (size_t)2000 * 84, &mean, &var, &p2, &p3);
    assert_true(fabs(mean) < 0.02);
    assert_true(fabs(var - 1.0) < 0.03);

    assert_int_equal(nn_data_random_regression(84, 1, 50000, 2000, 4, &again, err, sizeof err), 0);
    assert_memory_equal(ds.train_x, again.train_x, (size_t)50000 * 84 * sizeof(float));
    assert_memory_equal(ds.val_t, again.val_t, 2000 * sizeof(float));
    nn_data_free(&again);
    nn_data_free(&ds);

    assert_int_equal(nn_data_random_regression(0, 1, 10, 10, 4, &ds, err, sizeof err), -1);
    assert_empty(&ds);
}

static void test_free_zeroes(void **state)
{
    (void)state;
    char err[NN_ERR_LEN] = "";
    nn_dataset ds;
    nn_shape s = { 1, { 4 } };
    assert_int_equal(nn_data_synthetic(s, 2, 10, 4, 1, &ds, err, sizeof err), 0);
    nn_data_free(&ds);
    assert_empty(&ds);
    nn_data_free(&ds);   /* twice is harmless */
    nn_data_free(NULL);
}

/* ---- the real Fashion-MNIST, when installed ----------------------------- */

static void test_real_fashion_mnist(void **state)
{
    (void)state;
    char err[NN_ERR_LEN] = "", path[NN_PATH_LEN];
    nn_preset p;
    nn_dataset ds;
    static const int first_train[10] = { 9, 0, 0, 3, 0, 2, 7, 2, 5, 5 };
    static const int first_val[10] = { 9, 2, 1, 1, 6, 1, 4, 6, 5, 7 };
    join(path, sizeof path, NN_FASHION_MNIST_DIR, "train-images-idx3-ubyte.gz");
    if (access(path, R_OK) != 0)
        skip();   /* apt-get install dataset-fashion-mnist */

    preset_for(&p, NN_DATA_MNIST);
    assert_int_equal(nn_data_for_preset(&p, NULL, 1, &ds, err, sizeof err), 0);
    assert_string_equal(ds.name, "Fashion-MNIST");
    assert_string_equal(ds.description, "Fashion-MNIST (real, " NN_FASHION_MNIST_DIR "): "
                        "60000 train, 10000 validation");
    assert_int_equal(ds.synthetic, 0);
    assert_int_equal(ds.n_train, 60000);
    assert_int_equal(ds.n_val, 10000);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(ds.train_y[i], first_train[i]);
        assert_int_equal(ds.val_y[i], first_val[i]);
    }
    /* Fashion-MNIST is exactly balanced: 6000 and 1000 per class */
    long count[10] = { 0 };
    for (long i = 0; i < ds.n_train; i++)
        count[ds.train_y[i]]++;
    for (int c = 0; c < 10; c++)
        assert_int_equal(count[c], 6000);
    float lo = 1.0f, hi = 0.0f;
    for (size_t i = 0; i < (size_t)60000 * PIXELS; i++) {
        lo = fminf(lo, ds.train_x[i]);
        hi = fmaxf(hi, ds.train_x[i]);
    }
    assert_true(lo == 0.0f && hi == 1.0f);
    /* the first image's bytes sum to 76247 */
    double sum = 0.0;
    for (int j = 0; j < PIXELS; j++)
        sum += ds.train_x[j];
    assert_true(fabs(sum * 255.0 - 76247.0) < 0.01);
    nn_data_free(&ds);
}

/* ---- the group ---------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    return test_tmp_create(tmp_root, sizeof tmp_root, "data");
}

static int group_teardown(void **state)
{
    (void)state;
    return test_tmp_remove(tmp_root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idx_gzip_reads_back_exactly),
        cmocka_unit_test(test_idx_load_stops_at_cancel),
        cmocka_unit_test(test_idx_plain_and_dotted_names),
        cmocka_unit_test(test_idx_fashion_dir_is_named),
        cmocka_unit_test(test_idx_truncated_images),
        cmocka_unit_test(test_idx_truncated_header),
        cmocka_unit_test(test_idx_truncated_labels),
        cmocka_unit_test(test_idx_wrong_magic),
        cmocka_unit_test(test_idx_wrong_image_size),
        cmocka_unit_test(test_idx_count_mismatch),
        cmocka_unit_test(test_idx_bad_label),
        cmocka_unit_test(test_idx_trailing_data),
        cmocka_unit_test(test_idx_corrupt_gzip),
        cmocka_unit_test(test_idx_missing_files),
        cmocka_unit_test(test_cifar_reads_back_exactly),
        cmocka_unit_test(test_cifar_truncated),
        cmocka_unit_test(test_cifar_bad_label),
        cmocka_unit_test(test_cifar_missing_files),
        cmocka_unit_test(test_preset_named_dir_must_work),
        cmocka_unit_test(test_preset_named_dir_is_read),
        cmocka_unit_test(test_mnist_default_falls_back_to_synthetic),
        cmocka_unit_test(test_cifar_default_is_synthetic),
        cmocka_unit_test(test_preset_random),
        cmocka_unit_test(test_synthetic_shapes_and_seed),
        cmocka_unit_test(test_synthetic_labels_balanced),
        cmocka_unit_test(test_synthetic_is_learnable),
        cmocka_unit_test(test_synthetic_rejects_bad_arguments),
        cmocka_unit_test(test_random_regression),
        cmocka_unit_test(test_free_zeroes),
        cmocka_unit_test(test_real_fashion_mnist),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

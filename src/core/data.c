/* src/core/data.c - see data.h.
 *
 * The readers stream their files in small chunks and keep a byte offset, so
 * that a truncated or corrupt file is reported where it goes wrong. Every
 * loader builds into a local nn_dataset and moves it into *ds only on success;
 * on error everything is freed and *ds is left zeroed. */
#define _POSIX_C_SOURCE 200809L
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1   /* madvise, MADV_HUGEPAGE */
#endif
#include "data.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>

#include "rng.h"
#include "util.h"

#define IDX_IMAGES_MAGIC 0x00000803u  /* unsigned bytes, 3 dimensions */
#define IDX_LABELS_MAGIC 0x00000801u  /* unsigned bytes, 1 dimension */
#define IDX_IMAGES_HEADER 16          /* magic, count, rows, cols */
#define IDX_LABELS_HEADER 8           /* magic, count */
#define IDX_SIDE 28
#define IDX_PIXELS (IDX_SIDE * IDX_SIDE)

#define CIFAR_SIDE 32
#define CIFAR_PIXELS (3 * CIFAR_SIDE * CIFAR_SIDE)  /* R, G, B planes: CHW already */
#define CIFAR_RECORD (1 + CIFAR_PIXELS)            /* label byte + pixels */
#define CIFAR_BATCH_RECORDS 10000                  /* in every official file */

#define N_CLASSES 10                  /* MNIST, Fashion-MNIST and CIFAR-10 */
#define READ_CHUNK 32768              /* bytes per gzread: bounds the stack use */

/* Sub-streams of one seed, so that e.g. the validation set does not change
 * when the training set's size does. */
enum { STREAM_PROTO = 1, STREAM_TRAIN, STREAM_VAL, STREAM_TRAIN_T, STREAM_VAL_T };

static void stream_rng(nn_rng *r, uint64_t seed, int stream)
{
    nn_rng_seed(r, seed ^ ((uint64_t)stream * 0xd1b54a32d192ed03ULL));
}

/* ---------------------------------------------------------------------------
 * Memory and the dataset struct
 */

#define HUGE_PAGE ((size_t)2 << 20)

/* 64-byte aligned like nn_alloc_aligned, but not zero-filled: every element is
 * written before use, and the pages of a buffer sized from a file's header are
 * only touched as the data really arrives. NULL when count is 0.
 * Buffers of many megabytes are 2 MiB aligned and asked for transparent huge
 * pages: faulting in 600 MB of 4 KiB pages costs more than generating the
 * synthetic data itself, and the training loop's random batches miss the TLB
 * less. */
static void *alloc_array(size_t count, size_t elem)
{
    void *p = NULL;
    if (count == 0 || count > SIZE_MAX / elem)
        return NULL;
    size_t bytes = count * elem;
    int huge = bytes >= 4 * HUGE_PAGE;
    if (posix_memalign(&p, huge ? HUGE_PAGE : 64, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (huge)
        madvise(p, bytes & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);   /* advice only: failure is fine */
#endif
    return p;
}

void nn_data_free(nn_dataset *ds)
{
    if (!ds)
        return;
    nn_free_aligned(ds->train_x);
    nn_free_aligned(ds->val_x);
    nn_free_aligned(ds->train_y);
    nn_free_aligned(ds->val_y);
    nn_free_aligned(ds->train_t);
    nn_free_aligned(ds->val_t);
    memset(ds, 0, sizeof *ds);
}

/* The single exit of every loader: hand d over on success, free it otherwise. */
static int finish(nn_dataset *d, int rc, nn_dataset *ds)
{
    if (rc == 0) {
        *ds = *d;
    } else {
        nn_data_free(d);
        memset(ds, 0, sizeof *ds);
    }
    return rc;
}

static void set_text(char *dst, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_text(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

static void set_shape(nn_dataset *d, int rank, int d0, int d1, int d2)
{
    d->input.rank = rank;
    d->input.dim[0] = d0;
    d->input.dim[1] = d1;
    d->input.dim[2] = d2;
    d->sample_floats = (size_t)d0 * (size_t)(rank > 1 ? d1 : 1) * (size_t)(rank > 2 ? d2 : 1);
}

/* "3x32x32"; preset.c has nn_shape_format, but data.c links on its own. */
static void format_shape(const nn_shape *s, char *buf, size_t len)
{
    if (s->rank == 3)
        snprintf(buf, len, "%dx%dx%d", s->dim[0], s->dim[1], s->dim[2]);
    else if (s->rank == 2)
        snprintf(buf, len, "%dx%d", s->dim[0], s->dim[1]);
    else
        snprintf(buf, len, "%d", s->dim[0]);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* An explicitly named directory must exist: say so before looking for files. */
static int check_dir(const char *dir, char *err, size_t err_len)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return nn_errorf(err, err_len, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return nn_errorf(err, err_len, "%s: not a directory", dir);
    return 0;
}

static int join_path(char *out, size_t len, const char *dir, const char *name,
                     char *err, size_t err_len)
{
    if ((size_t)snprintf(out, len, "%s/%s", dir, name) >= len)
        return nn_errorf(err, err_len, "%s/%s: path too long", dir, name);
    return 0;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---------------------------------------------------------------------------
 * IDX (MNIST format), gzip or plain: gzread passes plain files through.
 */

/* One IDX file being read. offset counts decompressed bytes, so messages point
 * into the layout the header describes whether or not the file is gzipped. */
typedef struct idx_file {
    gzFile gz;
    const char *path;
    long offset;
} idx_file;

static int idx_open(idx_file *f, const char *path, char *err, size_t err_len)
{
    f->path = path;
    f->offset = 0;
    errno = 0;
    f->gz = gzopen(path, "rb");
    if (!f->gz)
        return nn_errorf(err, err_len, "%s: %s", path,
                         errno ? strerror(errno) : "out of memory");
    gzbuffer(f->gz, 1 << 17);   /* fewer read() calls than the 8 KiB default */
    return 0;
}

static void idx_close(idx_file *f)
{
    if (f->gz)
        gzclose(f->gz);
    f->gz = NULL;
}

/* zlib prefixes its messages with the path; we already print it. */
static const char *gz_reason(const idx_file *f, int *errnum)
{
    const char *msg = gzerror(f->gz, errnum);
    size_t n = strlen(f->path);
    if (strncmp(msg, f->path, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
        msg += n + 2;
    return msg;
}

/* Why a read came up short. gzerror says Z_OK for a clean end of data: the
 * file is truncated, and the offset is exact ("truncated at offset N:
 * expected <what>"). Anything else is a damaged gzip stream or an I/O error.
 * zlib inflates ahead into its own buffer and drops the whole call's output
 * on an error, so then the offset is only a lower bound ("after offset N"): a
 * bad CRC in the trailer of a small file shows up while reading its header. */
static int idx_fail(const idx_file *f, const char *what, char *err, size_t err_len)
{
    int errnum = Z_OK;
    const char *reason = gz_reason(f, &errnum);
    switch (errnum) {
    case Z_OK:
        return nn_errorf(err, err_len, "%s: truncated at offset %ld: expected %s",
                         f->path, f->offset, what);
    case Z_BUF_ERROR:
        return nn_errorf(err, err_len, "%s: gzip stream ends unexpectedly after offset %ld "
                         "(incomplete download?)", f->path, f->offset);
    case Z_ERRNO:
        return nn_errorf(err, err_len, "%s: read error after offset %ld: %s",
                         f->path, f->offset, strerror(errno));
    case Z_MEM_ERROR:
        return nn_errorf(err, err_len, "%s: out of memory in zlib at offset %ld",
                         f->path, f->offset);
    default:
        return nn_errorf(err, err_len, "%s: corrupt gzip data after offset %ld: %s",
                         f->path, f->offset, reason);
    }
}

/* Reads exactly n bytes (n <= READ_CHUNK, so the int return cannot overflow). */
static int idx_read(idx_file *f, void *buf, size_t n, const char *what,
                    char *err, size_t err_len)
{
    int got = gzread(f->gz, buf, (unsigned)n);
    if (got > 0)
        f->offset += got;
    return got == (int)n ? 0 : idx_fail(f, what, err, err_len);
}

/* The header's count must cover the whole file. Reading one byte past the
 * data also makes zlib check the gzip trailer (CRC-32 and length). */
static int idx_expect_end(idx_file *f, const char *what, char *err, size_t err_len)
{
    unsigned char extra;
    int errnum = Z_OK;
    if (gzread(f->gz, &extra, 1) == 1)
        return nn_errorf(err, err_len, "%s: unexpected data at offset %ld after %s",
                         f->path, f->offset, what);
    gzerror(f->gz, &errnum);
    return errnum == Z_OK ? 0 : idx_fail(f, what, err, err_len);
}

static int idx_check_magic(const idx_file *f, uint32_t magic, uint32_t want,
                           const char *kind, char *err, size_t err_len)
{
    if (magic == want)
        return 0;
    return nn_errorf(err, err_len, "%s: wrong magic number 0x%08x at offset 0 "
                     "(expected 0x%08x, IDX unsigned-byte %s)", f->path, magic, want, kind);
}

/* Images: 16-byte header, then count x 28 x 28 bytes; pixels scaled to [0, 1]. */
static int idx_read_images(const char *path, long *count, float **x,
                           char *err, size_t err_len)
{
    idx_file f = {0};
    unsigned char buf[READ_CHUNK];
    char what[128];
    float scale[256];
    int rc = -1;

    *x = NULL;
    if (idx_open(&f, path, err, err_len))
        return -1;
    snprintf(what, sizeof what, "the %d-byte IDX header", IDX_IMAGES_HEADER);
    if (idx_read(&f, buf, IDX_IMAGES_HEADER, what, err, err_len))
        goto out;
    uint32_t n = be32(buf + 4), rows = be32(buf + 8), cols = be32(buf + 12);
    if (idx_check_magic(&f, be32(buf), IDX_IMAGES_MAGIC, "3-D", err, err_len))
        goto out;
    if (rows != IDX_SIDE || cols != IDX_SIDE) {
        nn_errorf(err, err_len, "%s: image size %ux%u at offset 8 is not %dx%d",
                  path, rows, cols, IDX_SIDE, IDX_SIDE);
        goto out;
    }
    if (n == 0) {
        nn_errorf(err, err_len, "%s: no images (count 0 at offset 4)", path);
        goto out;
    }
    size_t total = (size_t)n * IDX_PIXELS;   /* < 2^42: fits a 64-bit size_t */
    *x = alloc_array(total, sizeof(float));
    if (!*x) {
        nn_errorf(err, err_len, "%s: out of memory for %u images (count at offset 4)", path, n);
        goto out;
    }
    snprintf(what, sizeof what, "%zu bytes of pixels after the %d-byte header",
             total, IDX_IMAGES_HEADER);
    for (int v = 0; v < 256; v++)
        scale[v] = (float)v / 255.0f;
    for (size_t done = 0; done < total;) {
        size_t k = total - done < READ_CHUNK ? total - done : READ_CHUNK;
        if (idx_read(&f, buf, k, what, err, err_len))
            goto out;
        for (size_t i = 0; i < k; i++)
            (*x)[done + i] = scale[buf[i]];
        done += k;
    }
    snprintf(what, sizeof what, "the last of %u images", n);
    rc = idx_expect_end(&f, what, err, err_len);
    if (rc == 0)
        *count = n;
out:
    idx_close(&f);
    if (rc) {
        nn_free_aligned(*x);
        *x = NULL;
    }
    return rc;
}

/* Labels: 8-byte header, then one byte 0..9 per image. images_path and
 * n_images come from the images file, whose count must match. */
static int idx_read_labels(const char *path, const char *images_path, long n_images,
                           int32_t **y, char *err, size_t err_len)
{
    idx_file f = {0};
    unsigned char buf[READ_CHUNK];
    char what[128];
    int rc = -1;

    *y = NULL;
    if (idx_open(&f, path, err, err_len))
        return -1;
    snprintf(what, sizeof what, "the %d-byte IDX header", IDX_LABELS_HEADER);
    if (idx_read(&f, buf, IDX_LABELS_HEADER, what, err, err_len))
        goto out;
    if (idx_check_magic(&f, be32(buf), IDX_LABELS_MAGIC, "1-D", err, err_len))
        goto out;
    uint32_t n = be32(buf + 4);
    if ((long)n != n_images) {
        nn_errorf(err, err_len, "%s: count mismatch: %ld images (in %s) but %u labels "
                  "(count at offset 4)", path, n_images, images_path, n);
        goto out;
    }
    *y = alloc_array(n, sizeof(int32_t));
    if (!*y) {
        nn_errorf(err, err_len, "%s: out of memory for %u labels", path, n);
        goto out;
    }
    snprintf(what, sizeof what, "%u labels after the %d-byte header", n, IDX_LABELS_HEADER);
    for (size_t done = 0; done < n;) {
        size_t k = n - done < READ_CHUNK ? n - done : READ_CHUNK;
        if (idx_read(&f, buf, k, what, err, err_len))
            goto out;
        for (size_t i = 0; i < k; i++) {
            if (buf[i] >= N_CLASSES) {
                nn_errorf(err, err_len, "%s: label %u at offset %zu is not a class 0..%d",
                          path, buf[i], IDX_LABELS_HEADER + done + i, N_CLASSES - 1);
                goto out;
            }
            (*y)[done + i] = buf[i];
        }
        done += k;
    }
    snprintf(what, sizeof what, "the last of %u labels", n);
    rc = idx_expect_end(&f, what, err, err_len);
out:
    idx_close(&f);
    if (rc) {
        nn_free_aligned(*y);
        *y = NULL;
    }
    return rc;
}

/* MNIST's own names (train-images-idx3-ubyte), then the spelling some mirrors
 * use (train-images.idx3-ubyte), each gzipped or plain. Returns 0 if found. */
static int idx_find(const char *dir, const char *split, const char *kind, const char *dims,
                    char *path, size_t len)
{
    static const char seps[] = { '-', '.' };
    static const char *const exts[] = { ".gz", "" };
    for (int s = 0; s < 2; s++) {
        for (int e = 0; e < 2; e++) {
            if ((size_t)snprintf(path, len, "%s/%s-%s%c%s-ubyte%s",
                                 dir, split, kind, seps[s], dims, exts[e]) < len
                && is_file(path))
                return 0;
        }
    }
    return -1;
}

static int idx_find_or_fail(const char *dir, const char *split, const char *kind,
                            const char *dims, char *path, size_t len,
                            char *err, size_t err_len)
{
    if (idx_find(dir, split, kind, dims, path, len) == 0)
        return 0;
    return nn_errorf(err, err_len, "%s: no %s-%s-%s-ubyte[.gz] (nor %s-%s.%s-ubyte[.gz])",
                     dir, split, kind, dims, split, kind, dims);
}

/* How many of the four IDX files dir holds: 0 means "not installed here". */
static int idx_files_present(const char *dir)
{
    static const char *const splits[] = { "train", "t10k" };
    char path[NN_PATH_LEN];
    int found = 0;
    for (int s = 0; s < 2; s++) {
        found += idx_find(dir, splits[s], "images", "idx3", path, sizeof path) == 0;
        found += idx_find(dir, splits[s], "labels", "idx1", path, sizeof path) == 0;
    }
    return found;
}

/* One split ("train" or "t10k"): its images, then labels of matching count. */
static int idx_load_split(const char *dir, const char *split, long *n, float **x,
                          int32_t **y, char *err, size_t err_len)
{
    char images[NN_PATH_LEN], labels[NN_PATH_LEN];
    if (idx_find_or_fail(dir, split, "images", "idx3", images, sizeof images, err, err_len)
        || idx_find_or_fail(dir, split, "labels", "idx1", labels, sizeof labels, err, err_len))
        return -1;
    if (idx_read_images(images, n, x, err, err_len))
        return -1;
    return idx_read_labels(labels, images, *n, y, err, err_len);
}

/* "fashion-mnist" or "fashion-mnist/" names Fashion-MNIST; any other folder
 * holds some MNIST-format set we cannot name. */
static int is_fashion_dir(const char *dir)
{
    static const char want[] = "fashion-mnist";
    size_t end = strlen(dir);
    while (end > 1 && dir[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && dir[start - 1] != '/')
        start--;
    return end - start == sizeof want - 1 && strncmp(dir + start, want, end - start) == 0;
}

int nn_data_load_idx_dir(const char *dir, nn_dataset *ds, char *err, size_t err_len)
{
    nn_dataset d = {0};
    int rc = check_dir(dir, err, err_len);
    if (rc == 0)
        rc = idx_load_split(dir, "train", &d.n_train, &d.train_x, &d.train_y, err, err_len);
    if (rc == 0)
        rc = idx_load_split(dir, "t10k", &d.n_val, &d.val_x, &d.val_y, err, err_len);
    if (rc == 0) {
        nn_strlcpy(d.name, is_fashion_dir(dir) ? "Fashion-MNIST" : "MNIST-format IDX",
                   sizeof d.name);
        set_text(d.description, sizeof d.description, "%s (real, %s): %ld train, %ld validation",
                 d.name, dir, d.n_train, d.n_val);
        set_shape(&d, 3, 1, IDX_SIDE, IDX_SIDE);
        d.classes = N_CLASSES;
    }
    return finish(&d, rc, ds);
}

/* ---------------------------------------------------------------------------
 * CIFAR-10 binary version: records of 1 label byte + 3072 pixel bytes.
 */

static const char *const cifar_files[] = {
    "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
    "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin",
};
#define CIFAR_FILES 6
#define CIFAR_TRAIN_FILES 5

/* The files sit in dir itself or in the cifar-10-batches-bin/ folder that the
 * official archive unpacks to. */
static int cifar_find_dir(const char *dir, char *out, size_t len, char *err, size_t err_len)
{
    char probe[NN_PATH_LEN];
    if (check_dir(dir, err, err_len))
        return -1;
    if ((size_t)snprintf(out, len, "%s", dir) < len
        && (size_t)snprintf(probe, sizeof probe, "%s/%s", out, cifar_files[0]) < sizeof probe
        && is_file(probe))
        return 0;
    if ((size_t)snprintf(out, len, "%s/cifar-10-batches-bin", dir) < len
        && (size_t)snprintf(probe, sizeof probe, "%s/%s", out, cifar_files[0]) < sizeof probe
        && is_file(probe))
        return 0;
    return nn_errorf(err, err_len, "%s: no %s (nor cifar-10-batches-bin/%s)",
                     dir, cifar_files[0], cifar_files[0]);
}

/* Whole records only: a partial one is reported where it starts. */
static int cifar_records(const char *path, long *records, char *err, size_t err_len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return nn_errorf(err, err_len, "%s: %s", path, strerror(errno));
    long size = (long)st.st_size, whole = size / CIFAR_RECORD;
    if (size % CIFAR_RECORD != 0)
        return nn_errorf(err, err_len, "%s: truncated at offset %ld: partial record of %ld "
                         "bytes (a record is 1 label byte + %d pixel bytes)",
                         path, whole * CIFAR_RECORD, size % CIFAR_RECORD, CIFAR_PIXELS);
    if (whole == 0)
        return nn_errorf(err, err_len, "%s: truncated at offset 0: empty file", path);
    *records = whole;
    return 0;
}

/* Every official file holds 10000 records. Rather than hard-wire that (small
 * hand-made sets are useful), all six must hold the same number, which also
 * catches a file cut exactly at a record boundary. */
static int cifar_sizes(char paths[CIFAR_FILES][NN_PATH_LEN], long *per_file,
                       char *err, size_t err_len)
{
    long n[CIFAR_FILES], most = 0;
    for (int i = 0; i < CIFAR_FILES; i++) {
        if (cifar_records(paths[i], &n[i], err, err_len))
            return -1;
        if (n[i] > most)
            most = n[i];
    }
    for (int i = 0; i < CIFAR_FILES; i++) {
        if (n[i] < most)
            return nn_errorf(err, err_len, "%s: truncated at offset %ld: %ld records where "
                             "the other files hold %ld (an official batch has %d)",
                             paths[i], n[i] * CIFAR_RECORD, n[i], most, CIFAR_BATCH_RECORDS);
    }
    *per_file = most;
    return 0;
}

/* Reads `records` records of path into x (records, 3072) and y (records). */
static int cifar_read_file(const char *path, long records, const float table[256],
                           float *x, int32_t *y, char *err, size_t err_len)
{
    unsigned char rec[CIFAR_RECORD];
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return nn_errorf(err, err_len, "%s: %s", path, strerror(errno));
    int rc = 0;
    for (long r = 0; r < records && rc == 0; r++) {
        long offset = r * CIFAR_RECORD;
        if (fread(rec, 1, sizeof rec, fp) != sizeof rec) {
            /* the size was checked, so only an I/O error or a file that
             * shrank since gets here */
            rc = ferror(fp)
                ? nn_errorf(err, err_len, "%s: read error in the record at offset %ld: %s",
                            path, offset, strerror(errno))
                : nn_errorf(err, err_len, "%s: truncated at offset %ld: partial record",
                            path, offset);
        } else if (rec[0] >= N_CLASSES) {
            rc = nn_errorf(err, err_len, "%s: label %u at offset %ld is not a class 0..%d",
                           path, rec[0], offset, N_CLASSES - 1);
        } else {
            y[r] = rec[0];
            float *dst = x + (size_t)r * CIFAR_PIXELS;
            for (int i = 0; i < CIFAR_PIXELS; i++)
                dst[i] = table[rec[1 + i]];
        }
    }
    fclose(fp);
    return rc;
}

static int cifar_load(const char *root, nn_dataset *d, char *err, size_t err_len)
{
    char dir[NN_PATH_LEN], paths[CIFAR_FILES][NN_PATH_LEN];
    float table[256];
    long per_file = 0;

    if (cifar_find_dir(root, dir, sizeof dir, err, err_len))
        return -1;
    for (int i = 0; i < CIFAR_FILES; i++)
        if (join_path(paths[i], sizeof paths[i], dir, cifar_files[i], err, err_len))
            return -1;
    if (cifar_sizes(paths, &per_file, err, err_len))
        return -1;

    d->n_train = per_file * CIFAR_TRAIN_FILES;
    d->n_val = per_file;
    d->train_x = alloc_array((size_t)d->n_train * CIFAR_PIXELS, sizeof(float));
    d->train_y = alloc_array((size_t)d->n_train, sizeof(int32_t));
    d->val_x = alloc_array((size_t)d->n_val * CIFAR_PIXELS, sizeof(float));
    d->val_y = alloc_array((size_t)d->n_val, sizeof(int32_t));
    if (!d->train_x || !d->train_y || !d->val_x || !d->val_y)
        return nn_errorf(err, err_len, "%s: out of memory for %ld CIFAR-10 images",
                         dir, d->n_train + d->n_val);

    /* the normalisation of seed 000: transforms.Normalize((0.5,)*3, (0.5,)*3) */
    for (int v = 0; v < 256; v++)
        table[v] = ((float)v / 255.0f - 0.5f) / 0.5f;
    for (int i = 0; i < CIFAR_TRAIN_FILES; i++) {
        size_t first = (size_t)(i * per_file);
        if (cifar_read_file(paths[i], per_file, table, d->train_x + first * CIFAR_PIXELS,
                            d->train_y + first, err, err_len))
            return -1;
    }
    if (cifar_read_file(paths[CIFAR_TRAIN_FILES], per_file, table, d->val_x, d->val_y,
                        err, err_len))
        return -1;

    nn_strlcpy(d->name, "CIFAR-10", sizeof d->name);
    set_text(d->description, sizeof d->description,
             "CIFAR-10 (real, %s): %ld train, %ld validation", dir, d->n_train, d->n_val);
    set_shape(d, 3, 3, CIFAR_SIDE, CIFAR_SIDE);
    d->classes = N_CLASSES;
    return 0;
}

int nn_data_load_cifar10_dir(const char *dir, nn_dataset *ds, char *err, size_t err_len)
{
    nn_dataset d = {0};
    return finish(&d, cifar_load(dir, &d, err, err_len), ds);
}

/* ---------------------------------------------------------------------------
 * Synthetic classification
 *
 * Each class has a smooth prototype per channel (a few low-frequency plane
 * waves, max |value| 1). A sample is signal * prototype[label] + noise, the
 * noise white with deviation SYNTH_NOISE. The signal amplitude is set from
 * the prototypes so that the mean distance between two classes is
 * 2 * SYNTH_SEPARATION noise deviations whatever the shape. With 2.25 the
 * nearest class mean is right ~88% of the time on 1x28x28 and 3x32x32 (close
 * to what an MLP reaches on Fashion-MNIST), and a linear softmax trained like
 * seed 000 (SGD lr 0.001, momentum 0.9, batch 4) goes from loss 2.3 to 0.7 in
 * 3000 steps: the loss falls clearly, yet the task is not trivially separable.
 */
#define SYNTH_WAVES 4
#define SYNTH_MAX_FREQ 2.0      /* cycles per image side: smooth, blob-like */
#define SYNTH_NOISE 0.5f        /* noise deviation: inputs of roughly unit scale */
#define SYNTH_SEPARATION 2.25   /* half the mean class distance, in noise deviations */

/* A smooth random field over an h x w plane, scaled to max |v| = 1. */
static void smooth_field(float *out, int h, int w, nn_rng *r)
{
    double fy[SYNTH_WAVES], fx[SYNTH_WAVES], phase[SYNTH_WAVES], amp[SYNTH_WAVES];
    for (int k = 0; k < SYNTH_WAVES; k++) {
        fy[k] = h > 1 ? (2.0 * nn_rng_uniform(r) - 1.0) * SYNTH_MAX_FREQ : 0.0;
        fx[k] = (2.0 * nn_rng_uniform(r) - 1.0) * SYNTH_MAX_FREQ;
        phase[k] = 6.283185307179586 * nn_rng_uniform(r);
        amp[k] = 0.5 + 0.5 * nn_rng_uniform(r);
    }
    float peak = 0.0f;
    for (int i = 0; i < h; i++) {
        for (int j = 0; j < w; j++) {
            double v = 0.0;
            for (int k = 0; k < SYNTH_WAVES; k++)
                v += amp[k] * cos(6.283185307179586 * (fy[k] * i / h + fx[k] * j / w) + phase[k]);
            out[i * w + j] = (float)v;
            if (fabsf((float)v) > peak)
                peak = fabsf((float)v);
        }
    }
    for (int i = 0; i < h * w && peak > 0.0f; i++)
        out[i] /= peak;
}

/* Mean Euclidean distance between two prototypes (classes, m). */
static double mean_proto_distance(const float *proto, int classes, size_t m)
{
    double sum = 0.0;
    long pairs = 0;
    for (int a = 0; a < classes; a++) {
        for (int b = a + 1; b < classes; b++) {
            double d2 = 0.0;
            for (size_t i = 0; i < m; i++) {
                double t = (double)proto[a * m + i] - proto[b * m + i];
                d2 += t * t;
            }
            sum += sqrt(d2);
            pairs++;
        }
    }
    return pairs ? sum / pairs : 1.0;
}

/* Prototypes (classes, m), already multiplied by the signal amplitude. The
 * shape is read as (C, H, W), (C, 1, L) or (1, 1, features). */
static void make_prototypes(float *proto, const nn_shape *s, int classes, nn_rng *r)
{
    int c = s->rank == 1 ? 1 : s->dim[0];
    int h = s->rank == 3 ? s->dim[1] : 1;
    int w = s->dim[s->rank - 1];
    size_t plane = (size_t)h * w, m = plane * c;
    for (int k = 0; k < classes; k++)
        for (int ch = 0; ch < c; ch++)
            smooth_field(proto + k * m + ch * plane, h, w, r);
    double spread = mean_proto_distance(proto, classes, m);
    float amp = (float)(2.0 * SYNTH_SEPARATION * SYNTH_NOISE / spread);
    for (size_t i = 0; i < (size_t)classes * m; i++)
        proto[i] *= amp;
}

/* Labels 0..classes-1 in equal numbers (to within one), shuffled. */
static void balanced_labels(int32_t *y, long n, int classes, nn_rng *r)
{
    for (long i = 0; i < n; i++)
        y[i] = (int32_t)(i % classes);
    for (long i = n - 1; i > 0; i--) {
        long j = (long)nn_rng_below(r, (uint64_t)i + 1);
        int32_t t = y[i];
        y[i] = y[j];
        y[j] = t;
    }
}

/* x = prototype[y] + noise. The noise is the sum of two 16-bit uniforms (a
 * triangular law of deviation SYNTH_NOISE): one splitmix call gives two
 * pixels, with no log or sqrt per pixel, which keeps 150M pixels well under a
 * second. */
static void synth_samples(float *x, const int32_t *y, long n, const float *proto,
                          size_t m, nn_rng *r)
{
    /* a 16-bit uniform has variance 65536^2 / 12; two of them, twice that */
    const float scale = SYNTH_NOISE * 2.449489743f / 65536.0f;   /* sqrt(6) */
    for (long s = 0; s < n; s++) {
        const float *p = proto + (size_t)y[s] * m;
        float *dst = x + (size_t)s * m;
        size_t i = 0;
        for (; i + 1 < m; i += 2) {
            uint64_t u = nn_rng_u64(r);
            int a = (int)(u & 0xffff) + (int)((u >> 16) & 0xffff) - 65535;
            int b = (int)((u >> 32) & 0xffff) + (int)(u >> 48) - 65535;
            dst[i] = p[i] + (float)a * scale;
            dst[i + 1] = p[i + 1] + (float)b * scale;
        }
        if (i < m) {
            uint64_t u = nn_rng_u64(r);
            dst[i] = p[i] + (float)((int)(u & 0xffff) + (int)((u >> 16) & 0xffff) - 65535) * scale;
        }
    }
}

/* n * m floats without size_t overflow; NULL arrays when n is 0. */
static int alloc_split(long n, size_t m, float **x, int32_t **y)
{
    if (n == 0)
        return 0;
    if ((size_t)n > SIZE_MAX / sizeof(float) / m)
        return -1;
    *x = alloc_array((size_t)n * m, sizeof(float));
    if (y)
        *y = alloc_array((size_t)n, sizeof(int32_t));
    return *x && (!y || *y) ? 0 : -1;
}

static size_t shape_floats(const nn_shape *s)
{
    size_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= (size_t)s->dim[i];
    return n;
}

/* Caps that keep every index below in range: a sample's floats fit an int,
 * and the prototypes' all-pairs distance (classes^2 * m) stays cheap. */
#define SYNTH_MAX_SAMPLE (1L << 24)
#define SYNTH_MAX_CLASSES 1000

static int check_synth_args(const nn_shape *s, int classes, long n_train, long n_val,
                            char *err, size_t err_len)
{
    long m = 1;
    if (s->rank < 1 || s->rank > 3)
        return nn_errorf(err, err_len, "synthetic data: rank %d is not 1, 2 or 3", s->rank);
    for (int i = 0; i < s->rank; i++) {
        if (s->dim[i] <= 0 || s->dim[i] > SYNTH_MAX_SAMPLE)
            return nn_errorf(err, err_len, "synthetic data: dimension %d is %d", i, s->dim[i]);
        m *= s->dim[i];
        if (m > SYNTH_MAX_SAMPLE)
            return nn_errorf(err, err_len, "synthetic data: more than %ld floats per sample",
                             SYNTH_MAX_SAMPLE);
    }
    if (classes < 2 || classes > SYNTH_MAX_CLASSES)
        return nn_errorf(err, err_len, "synthetic data: %d classes (need 2..%d)",
                         classes, SYNTH_MAX_CLASSES);
    if (n_train <= 0 || n_val < 0)
        return nn_errorf(err, err_len, "synthetic data: %ld train and %ld validation samples "
                         "(need > 0 and >= 0)", n_train, n_val);
    return 0;
}

/* "synthetic 1x28x28, 10 classes: 60000 train, 10000 validation (why)" */
static void describe_synthetic(nn_dataset *d, const char *why)
{
    char shape[48];
    format_shape(&d->input, shape, sizeof shape);
    set_text(d->description, sizeof d->description, "synthetic %s, %d classes: %ld train, "
             "%ld validation%s%s%s", shape, d->classes, d->n_train, d->n_val,
             why ? " (" : "", why ? why : "", why ? ")" : "");
}

static int synth_build(nn_shape input, int classes, long n_train, long n_val, uint64_t seed,
                       nn_dataset *d, char *err, size_t err_len)
{
    nn_rng r;
    if (check_synth_args(&input, classes, n_train, n_val, err, err_len))
        return -1;
    size_t m = shape_floats(&input);
    float *proto = alloc_array((size_t)classes * m, sizeof(float));   /* (classes, m) */
    if (!proto || alloc_split(n_train, m, &d->train_x, &d->train_y)
        || alloc_split(n_val, m, &d->val_x, &d->val_y)) {
        nn_free_aligned(proto);
        return nn_errorf(err, err_len, "synthetic data: out of memory for %ld + %ld samples "
                         "of %zu floats", n_train, n_val, m);
    }
    stream_rng(&r, seed, STREAM_PROTO);
    make_prototypes(proto, &input, classes, &r);
    stream_rng(&r, seed, STREAM_TRAIN);
    balanced_labels(d->train_y, n_train, classes, &r);
    synth_samples(d->train_x, d->train_y, n_train, proto, m, &r);
    stream_rng(&r, seed, STREAM_VAL);
    balanced_labels(d->val_y, n_val, classes, &r);
    synth_samples(d->val_x, d->val_y, n_val, proto, m, &r);
    nn_free_aligned(proto);

    nn_strlcpy(d->name, "synthetic", sizeof d->name);
    d->synthetic = 1;
    d->input = input;
    d->sample_floats = m;
    d->classes = classes;
    d->n_train = n_train;
    d->n_val = n_val;
    describe_synthetic(d, NULL);
    return 0;
}

int nn_data_synthetic(nn_shape input, int classes, long n_train, long n_val,
                      uint64_t seed, nn_dataset *ds, char *err, size_t err_len)
{
    nn_dataset d = {0};
    return finish(&d, synth_build(input, classes, n_train, n_val, seed, &d, err, err_len), ds);
}

/* ---------------------------------------------------------------------------
 * Random regression (seed 001: torch.randn for both inputs and targets)
 */

/* Standard normals by Marsaglia and Tsang's ziggurat (128 layers): 99% of
 * draws cost one splitmix call, a compare and a multiply, three times faster
 * than the polar method (whose logf, division and unpredictable rejections
 * took 0.7 s for seed 001's 84M numbers). The layer index comes from the low
 * bits and the value from the high 32, so they are independent (the original
 * 32-bit version reused bits). Checked against the normal CDF by histogram
 * chi-square on 84M draws, tail beyond ZIG_R included. */
#define ZIG_LAYERS 128
#define ZIG_R 3.442619855899        /* where the tail starts */
#define ZIG_V 9.91256303526217e-3   /* area of each layer */

typedef struct zig_table {
    uint32_t k[ZIG_LAYERS];         /* |hz| below k[i]: inside layer i's rectangle */
    float w[ZIG_LAYERS];            /* hz * w[i] is the deviate */
    float f[ZIG_LAYERS];            /* the density exp(-x^2/2) at layer edges */
} zig_table;

static void zig_init(zig_table *z)
{
    const double m = 2147483648.0;  /* 2^31: hz is a signed 32-bit value */
    double d = ZIG_R, t = d, q = ZIG_V / exp(-0.5 * d * d);
    z->k[0] = (uint32_t)(d / q * m);
    z->k[1] = 0;
    z->w[0] = (float)(q / m);
    z->w[ZIG_LAYERS - 1] = (float)(d / m);
    z->f[0] = 1.0f;
    z->f[ZIG_LAYERS - 1] = (float)exp(-0.5 * d * d);
    for (int i = ZIG_LAYERS - 2; i >= 1; i--) {
        d = sqrt(-2.0 * log(ZIG_V / d + exp(-0.5 * d * d)));
        z->k[i + 1] = (uint32_t)(d / t * m);
        t = d;
        z->f[i] = (float)exp(-0.5 * d * d);
        z->w[i] = (float)(d / m);
    }
}

static uint32_t abs32(int32_t v)
{
    return v < 0 ? 0u - (uint32_t)v : (uint32_t)v;   /* defined for INT32_MIN too */
}

/* The rare draws outside a layer's rectangle: the tail (layer 0) by
 * Marsaglia's exponential method, the wedges by rejection on the density. */
static float zig_slow(const zig_table *z, nn_rng *r, int32_t hz, int i)
{
    for (;;) {
        float x = (float)hz * z->w[i];
        if (i == 0) {
            double a, b;
            do {
                a = -log(1.0 - nn_rng_uniform(r)) / ZIG_R;
                b = -log(1.0 - nn_rng_uniform(r));
            } while (b + b < a * a);
            return (float)(hz > 0 ? ZIG_R + a : -ZIG_R - a);
        }
        if (z->f[i] + (float)nn_rng_uniform(r) * (z->f[i - 1] - z->f[i]) < expf(-0.5f * x * x))
            return x;
        uint64_t u = nn_rng_u64(r);
        hz = (int32_t)(u >> 32);
        i = (int)(u & (ZIG_LAYERS - 1));
        if (abs32(hz) < z->k[i])
            return (float)hz * z->w[i];
    }
}

static void fill_normal(float *x, size_t n, const zig_table *z, nn_rng *r)
{
    for (size_t j = 0; j < n; j++) {
        uint64_t u = nn_rng_u64(r);
        int32_t hz = (int32_t)(u >> 32);
        int i = (int)(u & (ZIG_LAYERS - 1));
        x[j] = abs32(hz) < z->k[i] ? (float)hz * z->w[i] : zig_slow(z, r, hz, i);
    }
}

static int regression_build(int features, int targets, long rows, long val_rows,
                            uint64_t seed, nn_dataset *d, char *err, size_t err_len)
{
    nn_rng r;
    zig_table z;
    if (features <= 0 || targets <= 0 || rows <= 0 || val_rows < 0)
        return nn_errorf(err, err_len, "random data: %d features, %d targets, %ld rows, "
                         "%ld validation rows (need > 0, > 0, > 0, >= 0)",
                         features, targets, rows, val_rows);
    if (alloc_split(rows, (size_t)features, &d->train_x, NULL)
        || alloc_split(rows, (size_t)targets, &d->train_t, NULL)
        || alloc_split(val_rows, (size_t)features, &d->val_x, NULL)
        || alloc_split(val_rows, (size_t)targets, &d->val_t, NULL))
        return nn_errorf(err, err_len, "random data: out of memory for %ld + %ld rows of "
                         "%d features", rows, val_rows, features);
    zig_init(&z);
    stream_rng(&r, seed, STREAM_TRAIN);
    fill_normal(d->train_x, (size_t)rows * features, &z, &r);
    stream_rng(&r, seed, STREAM_TRAIN_T);
    fill_normal(d->train_t, (size_t)rows * targets, &z, &r);
    stream_rng(&r, seed, STREAM_VAL);
    fill_normal(d->val_x, (size_t)val_rows * features, &z, &r);
    stream_rng(&r, seed, STREAM_VAL_T);
    fill_normal(d->val_t, (size_t)val_rows * targets, &z, &r);

    nn_strlcpy(d->name, "random", sizeof d->name);
    set_text(d->description, sizeof d->description, "random regression: %ld train, %ld "
             "validation rows of %d features -> %d target%s, all N(0,1) (like seed 001)",
             rows, val_rows, features, targets, targets == 1 ? "" : "s");
    d->synthetic = 1;
    set_shape(d, 1, features, 0, 0);
    d->target_width = targets;
    d->n_train = rows;
    d->n_val = val_rows;
    return 0;
}

int nn_data_random_regression(int features, int targets, long rows, long val_rows,
                              uint64_t seed, nn_dataset *ds, char *err, size_t err_len)
{
    nn_dataset d = {0};
    return finish(&d, regression_build(features, targets, rows, val_rows, seed, &d,
                                       err, err_len), ds);
}

/* ---------------------------------------------------------------------------
 * The data a preset trains on
 */

#define MNIST_TRAIN 60000
#define MNIST_VAL 10000
#define CIFAR_TRAIN 50000
#define CIFAR_VAL 10000

/* A synthetic stand-in of the real set's shape and size; why goes into the
 * description so the screen says which data is in use and how to get real. */
static int synthetic_instead(int channels, int side, long n_train, long n_val, const char *why,
                             uint64_t seed, nn_dataset *ds, char *err, size_t err_len)
{
    nn_shape s = { 3, { channels, side, side } };
    if (nn_data_synthetic(s, N_CLASSES, n_train, n_val, seed, ds, err, err_len))
        return -1;
    describe_synthetic(ds, why);
    return 0;
}

int nn_data_mnist_default(const char *default_dir, uint64_t seed, nn_dataset *ds,
                          char *err, size_t err_len)
{
    char why[NN_TEXT_LEN];
    /* Only a folder holding none of the files falls back: a partial or
     * damaged install is reported, not silently replaced. */
    if (idx_files_present(default_dir) > 0)
        return nn_data_load_idx_dir(default_dir, ds, err, err_len);
    snprintf(why, sizeof why, "no IDX files in %s: apt-get install dataset-fashion-mnist, "
             "or --data DIR", default_dir);
    return synthetic_instead(1, IDX_SIDE, MNIST_TRAIN, MNIST_VAL, why, seed, ds, err, err_len);
}

int nn_data_for_preset(const nn_preset *p, const char *data_dir, uint64_t seed,
                       nn_dataset *ds, char *err, size_t err_len)
{
    /* an empty --data or data_dir counts as not given */
    const char *dir = data_dir && data_dir[0] ? data_dir : p->data_dir[0] ? p->data_dir : NULL;
    switch (p->data) {
    case NN_DATA_MNIST:
        if (dir)
            return nn_data_load_idx_dir(dir, ds, err, err_len);
        return nn_data_mnist_default(NN_FASHION_MNIST_DIR, seed, ds, err, err_len);
    case NN_DATA_CIFAR10:
        if (dir)
            return nn_data_load_cifar10_dir(dir, ds, err, err_len);
        return synthetic_instead(3, CIFAR_SIDE, CIFAR_TRAIN, CIFAR_VAL,
                                 "no CIFAR-10 directory given: pass --data DIR with "
                                 "data_batch_1.bin ... for real CIFAR-10",
                                 seed, ds, err, err_len);
    case NN_DATA_RANDOM:
        if (dir) {
            memset(ds, 0, sizeof *ds);
            return nn_errorf(err, err_len, "%s: random data reads no files; this preset "
                             "takes no data directory", dir);
        }
        return nn_data_random_regression(p->features, p->targets, p->rows, p->val_rows,
                                         seed, ds, err, err_len);
    }
    memset(ds, 0, sizeof *ds);
    return nn_errorf(err, err_len, "unknown data kind %d", (int)p->data);
}

/* src/core/data_idx.c - MNIST-format IDX files (MNIST, Fashion-MNIST), gzip
 * or plain: gzread passes plain files through. The reader streams its files
 * in small chunks and keeps a byte offset, so that a truncated or corrupt
 * file is reported where it goes wrong.
 */
#include "data_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "util.h"

#define IDX_IMAGES_MAGIC 0x00000803u  /* unsigned bytes, 3 dimensions */
#define IDX_LABELS_MAGIC 0x00000801u  /* unsigned bytes, 1 dimension */
#define IDX_IMAGES_HEADER 16          /* magic, count, rows, cols */
#define IDX_LABELS_HEADER 8           /* magic, count */
#define IDX_PIXELS (IDX_SIDE * IDX_SIDE)
#define READ_CHUNK 32768              /* bytes per gzread: bounds the stack use */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

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
    *x = data_alloc_array(total, sizeof(float));
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
    *y = data_alloc_array(n, sizeof(int32_t));
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
                && data_is_file(path))
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

int data_idx_files_present(const char *dir)
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
    int rc = data_check_dir(dir, err, err_len);
    if (rc == 0)
        rc = idx_load_split(dir, "train", &d.n_train, &d.train_x, &d.train_y, err, err_len);
    if (rc == 0)
        rc = idx_load_split(dir, "t10k", &d.n_val, &d.val_x, &d.val_y, err, err_len);
    if (rc == 0) {
        nn_strlcpy(d.name, is_fashion_dir(dir) ? "Fashion-MNIST" : "MNIST-format IDX",
                   sizeof d.name);
        data_set_text(d.description, sizeof d.description,
                      "%s (real, %s): %ld train, %ld validation", d.name, dir, d.n_train,
                      d.n_val);
        data_set_shape(&d, 3, 1, IDX_SIDE, IDX_SIDE);
        d.classes = N_CLASSES;
    }
    return data_finish(&d, rc, ds);
}

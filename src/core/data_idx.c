/* src/core/data_idx.c - MNIST-format IDX files (MNIST, Fashion-MNIST), gzip
 * or plain: gzip_read.c passes plain files through. The reader streams its files
 * in small chunks and keeps a byte offset, so that a truncated or corrupt
 * file is reported where it goes wrong.
 */
#define _POSIX_C_SOURCE 200809L   /* pread */
#include "data_internal.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "gzip_read.h"
#include "util.h"

#define IDX_IMAGES_MAGIC 0x00000803u  /* unsigned bytes, 3 dimensions */
#define IDX_LABELS_MAGIC 0x00000801u  /* unsigned bytes, 1 dimension */
#define IDX_IMAGES_HEADER 16          /* magic, count, rows, cols */
#define IDX_LABELS_HEADER 8           /* magic, count */
#define IDX_PIXELS (IDX_SIDE * IDX_SIDE)
#define READ_CHUNK 32768              /* bytes per read: bounds the stack use */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* One IDX file being read. offset counts decompressed bytes, so messages point
 * into the layout the header describes whether or not the file is gzipped. */
typedef struct idx_file {
    gzr gz;
    const char *path;
    long long offset;
    long long file_bytes;        /* on disk: the uncompressed size when plain */
    long long size_hint;         /* gzip: the ISIZE trailer (uncompressed size mod
                                    2^32), a hint only; -1 when none */
} idx_file;

/* gzip's trailer ends with ISIZE, little-endian. Anyone can write anything
 * there (and a file of several gzip members has only the last one's), so it
 * only sizes the first buffer. */
static long long gzip_size_hint(int fd, long long file_bytes)
{
    unsigned char t[4];
    if (file_bytes < 18 || pread(fd, t, 4, (off_t)(file_bytes - 4)) != 4)   /* 18: the smallest gzip file */
        return -1;
    return (long long)((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24);
}

static int idx_open(idx_file *f, const char *path, char *err, size_t err_len)
{
    struct stat st;
    f->path = path;
    f->offset = 0;
    int fd = data_open_regular(path, &st, err, err_len);
    if (fd < 0)
        return -1;
    f->file_bytes = (long long)st.st_size;
    f->size_hint = gzip_size_hint(fd, f->file_bytes);
    if (gzr_open(&f->gz, fd) == 0)
        return 0;
    int mem = f->gz.status == GZR_MEM, errnum = errno;
    gzr_close(&f->gz);
    return mem ? nn_errorf(err, err_len, "%s: out of memory in zlib", path)
               : nn_errorf(err, err_len, "%s: read error at offset 0: %s", path, strerror(errnum));
}

static void idx_close(idx_file *f)
{
    if (f->gz.in)                /* opened (an idx_file starts zeroed) */
        gzr_close(&f->gz);
}

/* Why a read came up short. The data's clean end: the file is truncated,
 * and the offset is exact ("truncated at offset N: expected <what>").
 * Anything else is a damaged gzip stream, junk after it or an I/O error;
 * inflate reads ahead, so then the offset is only a lower bound ("after
 * offset N"): a bad CRC in the trailer of a small file shows up while
 * reading its header. */
static int idx_fail(const idx_file *f, const char *what, char *err, size_t err_len)
{
    switch (f->gz.status) {
    case GZR_OK:
    case GZR_END:
        return nn_errorf(err, err_len, "%s: truncated at offset %lld: expected %s",
                         f->path, f->offset, what);
    case GZR_CUT:
        return nn_errorf(err, err_len, "%s: gzip stream ends unexpectedly after offset %lld "
                         "(incomplete download?)", f->path, f->offset);
    case GZR_IO:
        return nn_errorf(err, err_len, "%s: read error after offset %lld: %s",
                         f->path, f->offset, strerror(errno));
    case GZR_MEM:
        return nn_errorf(err, err_len, "%s: out of memory in zlib at offset %lld",
                         f->path, f->offset);
    case GZR_JUNK:
        return nn_errorf(err, err_len, "%s: junk after the gzip stream at byte %lld of the file "
                         "(%lld bytes that start no gzip member)", f->path, f->gz.junk_at,
                         f->file_bytes - f->gz.junk_at);
    default:
        return nn_errorf(err, err_len, "%s: corrupt gzip data after offset %lld: %s",
                         f->path, f->offset, gzr_why(&f->gz));
    }
}

/* Reads exactly n bytes. */
static int idx_read(idx_file *f, void *buf, size_t n, const char *what,
                    char *err, size_t err_len)
{
    size_t got = gzr_read(&f->gz, buf, n);
    f->offset += (long long)got;
    return got == n ? 0 : idx_fail(f, what, err, err_len);
}

/* The header's count must cover the whole file. Reading one byte past the
 * data also makes inflate check the gzip trailer (CRC-32 and length) and
 * whatever follows it. */
static int idx_expect_end(idx_file *f, const char *what, char *err, size_t err_len)
{
    unsigned char extra;
    if (gzr_read(&f->gz, &extra, 1) == 1)
        return nn_errorf(err, err_len, "%s: unexpected data at offset %lld after %s",
                         f->path, f->offset, what);
    return f->gz.status == GZR_END ? 0 : idx_fail(f, what, err, err_len);
}

/* A plain file's size is the size its header implies, or the header lies:
 * said before any memory is taken for what the header claims. A gzip file's
 * uncompressed size is known only once it is read (idx_read_payload). */
static int idx_check_size(const idx_file *f, long long implied, const char *what,
                          const char *last, char *err, size_t err_len)
{
    if (!f->gz.direct)
        return 0;
    if (f->file_bytes < implied)
        return nn_errorf(err, err_len, "%s: truncated at offset %lld: expected %s",
                         f->path, f->file_bytes, what);
    if (f->file_bytes > implied)
        return nn_errorf(err, err_len, "%s: unexpected data at offset %lld after %s",
                         f->path, implied, last);
    return 0;
}

static int idx_check_magic(const idx_file *f, uint32_t magic, uint32_t want,
                           const char *kind, char *err, size_t err_len)
{
    if (magic == want)
        return 0;
    return nn_errorf(err, err_len, "%s: wrong magic number 0x%08x at offset 0 "
                     "(expected 0x%08x, IDX unsigned-byte %s)", f->path, magic, want, kind);
}

/* ---------------------------------------------------------------------------
 * The payload: one 4-byte element (a float pixel, an int32 label) per byte
 */

/* Converts k bytes into elements [at, at + k) of dst; -1 with a message. */
typedef int (*idx_put_fn)(const idx_file *f, const unsigned char *src, size_t k,
                          void *dst, size_t at, char *err, size_t err_len);

#define PAYLOAD_ELEM 4                  /* sizeof(float) == sizeof(int32_t) */
#define GZIP_MAX_RATIO 1032             /* deflate expands at most ~1032-fold */
#define GROW_FIRST ((size_t)1 << 20)    /* elements, when the hint is no use */

#define FIRST_MAX ((size_t)64 << 20)  /* elements taken at once at most (256 MB) */

/* How many elements to take before any arrive: all of them for a plain file
 * (its size was checked); for gzip, what the header claims only when the
 * trailer agrees with it (a single-member file written whole, like MNIST's),
 * else a megabyte's worth, and never more than FIRST_MAX: the trailer is
 * anyone's to write (one 4 GiB allocation from a 1 MB file), so the buffer
 * grows as data arrives. */
static size_t first_capacity(const idx_file *f, size_t header, size_t claim)
{
    if (f->gz.direct)
        return claim;
    size_t cap = f->size_hint == (long long)((header + claim) & 0xffffffffu) ? claim : GROW_FIRST;
    cap = cap < FIRST_MAX ? cap : FIRST_MAX;
    return cap < claim ? cap : claim;
}

/* Host memory that can be had now (MemAvailable), -1 when the kernel does
 * not say. */
static long long memory_available(void)
{
    char line[256];
    long long kb = -1;
    FILE *m = fopen("/proc/meminfo", "r");
    if (!m)
        return -1;
    while (kb < 0 && fgets(line, sizeof line, m))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) != 1)
            kb = -1;
    fclose(m);
    return kb < 0 ? -1 : kb * 1024;
}

/* The header's claim against what the file can hold, before any memory is
 * taken: deflate expands at most GZIP_MAX_RATIO-fold, so a 1 MB gzip file
 * that claims 4 billion images is truncated however it is read (the offset
 * is where its payload starts); and a claim the memory cannot hold is
 * refused now rather than after reading gigabytes. */
static int idx_check_claim(const idx_file *f, size_t header, size_t claim, const char *what,
                           char *err, size_t err_len)
{
    long long can_hold = f->file_bytes * GZIP_MAX_RATIO, avail = memory_available();
    if (!f->gz.direct && (long long)(header + claim) > can_hold)
        return nn_errorf(err, err_len, "%s: truncated at offset %lld: expected %s, more than "
                         "a gzip file of %lld bytes can hold (%lld at most)",
                         f->path, f->offset, what, f->file_bytes, can_hold);
    if (avail >= 0 && (long long)claim > avail / PAYLOAD_ELEM)
        return nn_errorf(err, err_len, "%s: the header claims %s, which need %lld MB; "
                         "%lld MB of memory are available", f->path, what,
                         (long long)claim * PAYLOAD_ELEM >> 20, avail >> 20);
    return 0;
}

/* Moves the first `used` elements into a buffer of `cap`. */
static int regrow(void **buf, size_t used, size_t cap)
{
    void *bigger = data_alloc_array(cap, PAYLOAD_ELEM);
    if (!bigger)
        return -1;
    memcpy(bigger, *buf, used * PAYLOAD_ELEM);
    nn_free_aligned(*buf);
    *buf = bigger;
    return 0;
}

/* Reads the header's `claim` bytes of payload into *out (claim elements). The
 * buffer grows as data arrives, doubling up to the claim, so a header that
 * claims more than the file holds costs no more memory than the file. */
static int idx_read_payload(idx_file *f, size_t header, size_t claim, idx_put_fn put,
                            const char *what, void **out, char *err, size_t err_len)
{
    unsigned char buf[READ_CHUNK];
    if (idx_check_claim(f, header, claim, what, err, err_len) != 0)
        return -1;
    size_t cap = first_capacity(f, header, claim);
    *out = data_alloc_array(cap, PAYLOAD_ELEM);
    if (!*out)
        return nn_errorf(err, err_len, "%s: out of memory for %zu bytes at offset %lld",
                         f->path, cap * PAYLOAD_ELEM, f->offset);
    for (size_t done = 0; done < claim;) {
        size_t k = claim - done < READ_CHUNK ? claim - done : READ_CHUNK;
        if (nn_data_cancelled())
            return nn_errorf(err, err_len, "%s: load cancelled at offset %lld", f->path, f->offset);
        if (idx_read(f, buf, k, what, err, err_len))
            return -1;
        if (done + k > cap) {
            size_t grown = cap * 2 > done + k ? cap * 2 : done + k;
            grown = grown < claim ? grown : claim;
            if (regrow(out, done, grown) != 0)
                return nn_errorf(err, err_len, "%s: out of memory for %zu bytes at offset %lld",
                                 f->path, grown * PAYLOAD_ELEM, f->offset);
            cap = grown;
        }
        if (put(f, buf, k, *out, done, err, err_len))
            return -1;
        done += k;
    }
    return 0;
}

static int put_pixels(const idx_file *f, const unsigned char *src, size_t k, void *dst,
                      size_t at, char *err, size_t err_len)
{
    float *x = (float *)dst + at, scale[256];
    (void)f, (void)err, (void)err_len;
    for (int v = 0; v < 256; v++)       /* v / 255 exactly, as torchvision's ToTensor */
        scale[v] = (float)v / 255.0f;
    for (size_t i = 0; i < k; i++)
        x[i] = scale[src[i]];
    return 0;
}

static int put_labels(const idx_file *f, const unsigned char *src, size_t k, void *dst,
                      size_t at, char *err, size_t err_len)
{
    int32_t *y = (int32_t *)dst + at;
    for (size_t i = 0; i < k; i++) {
        if (src[i] >= N_CLASSES)
            return nn_errorf(err, err_len, "%s: label %u at offset %zu is not a class 0..%d",
                             f->path, src[i], IDX_LABELS_HEADER + at + i, N_CLASSES - 1);
        y[i] = src[i];
    }
    return 0;
}

/* ---------------------------------------------------------------------------
 * A split: both headers first, then the sizes, then the data
 */

/* Images: 16-byte header (magic, count, rows, cols). */
static int idx_images_header(idx_file *f, uint32_t *n, char *err, size_t err_len)
{
    unsigned char h[IDX_IMAGES_HEADER];
    char what[64];
    snprintf(what, sizeof what, "the %d-byte IDX header", IDX_IMAGES_HEADER);
    if (idx_read(f, h, sizeof h, what, err, err_len)
        || idx_check_magic(f, be32(h), IDX_IMAGES_MAGIC, "3-D", err, err_len))
        return -1;
    uint32_t rows = be32(h + 8), cols = be32(h + 12);
    *n = be32(h + 4);
    if (rows != IDX_SIDE || cols != IDX_SIDE)
        return nn_errorf(err, err_len, "%s: image size %ux%u at offset 8 is not %dx%d",
                         f->path, rows, cols, IDX_SIDE, IDX_SIDE);
    if (*n == 0)
        return nn_errorf(err, err_len, "%s: no images (count 0 at offset 4)", f->path);
    return 0;
}

/* Labels: 8-byte header (magic, count); the count must be the images'. */
static int idx_labels_header(idx_file *f, const idx_file *images, uint32_t n_images,
                             char *err, size_t err_len)
{
    unsigned char h[IDX_LABELS_HEADER];
    char what[64];
    snprintf(what, sizeof what, "the %d-byte IDX header", IDX_LABELS_HEADER);
    if (idx_read(f, h, sizeof h, what, err, err_len)
        || idx_check_magic(f, be32(h), IDX_LABELS_MAGIC, "1-D", err, err_len))
        return -1;
    uint32_t n = be32(h + 4);
    if (n != n_images)
        return nn_errorf(err, err_len, "%s: count mismatch: %u images (in %s) but %u labels "
                         "(count at offset 4)", f->path, n_images, images->path, n);
    return 0;
}

/* Both files' sizes against the count, then the pixels (scaled to [0, 1])
 * and the labels, each file read to its end. */
static int idx_read_data(idx_file *im, idx_file *lb, uint32_t n, float **x, int32_t **y,
                         char *err, size_t err_len)
{
    size_t pixels = (size_t)n * IDX_PIXELS;   /* < 2^42: fits a 64-bit size_t */
    char pix_what[96], lab_what[96], pix_last[48], lab_last[48];
    snprintf(pix_what, sizeof pix_what, "%zu bytes of pixels after the %d-byte header",
             pixels, IDX_IMAGES_HEADER);
    snprintf(lab_what, sizeof lab_what, "%u labels after the %d-byte header", n,
             IDX_LABELS_HEADER);
    snprintf(pix_last, sizeof pix_last, "the last of %u images", n);
    snprintf(lab_last, sizeof lab_last, "the last of %u labels", n);
    if (idx_check_size(im, IDX_IMAGES_HEADER + (long long)pixels, pix_what, pix_last, err, err_len)
        || idx_check_size(lb, IDX_LABELS_HEADER + (long long)n, lab_what, lab_last, err, err_len))
        return -1;
    if (idx_read_payload(im, IDX_IMAGES_HEADER, pixels, put_pixels, pix_what, (void **)x,
                         err, err_len)
        || idx_expect_end(im, pix_last, err, err_len))
        return -1;
    if (idx_read_payload(lb, IDX_LABELS_HEADER, n, put_labels, lab_what, (void **)y,
                         err, err_len)
        || idx_expect_end(lb, lab_last, err, err_len))
        return -1;
    return 0;
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
                && data_exists(path))
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

/* One split ("train" or "t10k"): both headers are read before anything
 * else, so a count mismatch or a lying size is said at once. */
/* A split's header may claim no more images than the set it stands for
 * holds: the memory estimate and every epoch's step count were made from
 * that size before the files were opened (data.h), and a gzip file can
 * inflate a thousandfold (990 KB holding 1.3 M blank images peaked at
 * 4.2 GB where the estimate said 275 MB). Fewer is a smaller set, fine. */
static int idx_check_count(const idx_file *f, uint32_t count, long most, const char *split, char *err,
                           size_t err_len)
{
    if ((long long)count <= most)
        return 0;
    return nn_errorf(err, err_len, "%s: the header claims %u images (count at offset 4); an MNIST-format "
                     "%s set holds at most %ld, the size nnlab's memory estimate and epochs count on",
                     f->path, count, strcmp(split, "train") == 0 ? "training" : "test", most);
}

static int idx_load_split(const char *dir, const char *split, long *n, float **x,
                          int32_t **y, char *err, size_t err_len)
{
    char images[NN_PATH_LEN], labels[NN_PATH_LEN];
    idx_file im = { 0 }, lb = { 0 };
    uint32_t count = 0;
    int rc = -1;
    *x = NULL;
    *y = NULL;
    if (idx_find_or_fail(dir, split, "images", "idx3", images, sizeof images, err, err_len)
        || idx_find_or_fail(dir, split, "labels", "idx1", labels, sizeof labels, err, err_len))
        return -1;
    if (idx_open(&im, images, err, err_len) == 0 && idx_open(&lb, labels, err, err_len) == 0
        && idx_images_header(&im, &count, err, err_len) == 0
        && idx_labels_header(&lb, &im, count, err, err_len) == 0
        && idx_check_count(&im, count, strcmp(split, "train") == 0 ? MNIST_TRAIN : MNIST_VAL, split,
                           err, err_len) == 0)
        rc = idx_read_data(&im, &lb, count, x, y, err, err_len);
    idx_close(&im);
    idx_close(&lb);
    if (rc == 0)
        *n = count;
    /* on failure the caller's data_finish frees what was taken */
    return rc;
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

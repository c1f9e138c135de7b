/* src/core/gzip_read.h - a file read whole through gzip, or as it is when
 * it is not gzip: the IDX reader's stream (data_idx.c). Every byte of a
 * gzip file must belong to a gzip member: members one after another are
 * read as one stream (as gunzip reads them), and anything else after a
 * member is refused with its offset in the file, where zlib's gzread
 * ignored it. */
#ifndef NNLAB_GZIP_READ_H
#define NNLAB_GZIP_READ_H

#include <stddef.h>
#include <zlib.h>

/* Why a read came up short. */
typedef enum gzr_status {
    GZR_OK,          /* nothing went wrong (yet) */
    GZR_END,         /* the data ended cleanly: a plain file's end, or the last member's */
    GZR_CUT,         /* the file ends inside a gzip member (an incomplete download) */
    GZR_CORRUPT,     /* inflate refused the data, or a member's CRC-32 or length (gzr_why) */
    GZR_IO,          /* read() failed: errno */
    GZR_MEM,         /* zlib had no memory */
    GZR_JUNK,        /* bytes after a member that start no member, from junk_at */
} gzr_status;

typedef struct gzr {
    int fd;
    int direct;                  /* not gzip: the bytes as they are */
    int ended;                   /* the last member (or the plain file) ended */
    int z_ready;                 /* inflateInit2 done */
    z_stream z;
    gzr_status status;
    long long in_pos;            /* the file offset of the next byte read() gives */
    long long junk_at;           /* GZR_JUNK: the file offset of the first byte no member holds */
    unsigned char *in;           /* GZR_IN_BYTES of input */
} gzr;

/* Opens the stream on fd (which gzr_close closes): gzip when it starts with
 * gzip's magic, else plain. 0, or -1 with g->status GZR_IO or GZR_MEM. */
int gzr_open(gzr *g, int fd);

/* Reads up to n bytes (at most INT_MAX); fewer when the data ended or on an
 * error, which g->status then says (and every later read returns 0). */
size_t gzr_read(gzr *g, void *buf, size_t n);

/* What inflate said of corrupt data ("invalid distance too far back"). */
const char *gzr_why(const gzr *g);

void gzr_close(gzr *g);

#endif

/* src/core/gzip_read.c - a file read through gzip, every byte accounted
 * for (gzip_read.h).
 *
 * zlib's gzread reads members one after another, but after a member it
 * takes anything that is not gzip's magic for "trailing garbage" and
 * ignores it: a train-images-idx3-ubyte.gz with bytes after its trailer
 * loaded as if they were not there. Here inflate runs on the file's bytes
 * directly, so the reader sees where each member ends: the file's end there
 * is the stream's end, another member's magic starts the next member (RFC
 * 1952 allows several, and gunzip reads them as one), and anything else is
 * refused with the offset where it starts. inflate checks each member's
 * CRC-32 and length (windowBits 16 + 15: gzip only).
 */
#define _POSIX_C_SOURCE 200809L   /* ssize_t, read */
#include "gzip_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GZR_IN_BYTES (1 << 17)        /* bytes per read(): as gzbuffer's 128 KiB */

/* Moves what input is left to the buffer's start and reads more after it:
 * the bytes read, 0 at the file's end, -1 on an error. */
static long fill(gzr *g)
{
    size_t keep = g->z.avail_in;
    if (keep > 0 && g->z.next_in != g->in)
        memmove(g->in, g->z.next_in, keep);
    g->z.next_in = g->in;
    ssize_t r;
    do
        r = read(g->fd, g->in + keep, GZR_IN_BYTES - keep);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        g->status = GZR_IO;
        return -1;
    }
    g->in_pos += r;
    g->z.avail_in = (uInt)(keep + (size_t)r);
    return (long)r;
}

/* At least n bytes of input, unless the file ends first; -1 on an error. */
static int want_input(gzr *g, size_t n)
{
    while (g->z.avail_in < n) {
        long r = fill(g);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
    }
    return 0;
}

static int at_magic(const gzr *g)
{
    return g->z.avail_in >= 2 && g->z.next_in[0] == 0x1f && g->z.next_in[1] == 0x8b;
}

int gzr_open(gzr *g, int fd)
{
    memset(g, 0, sizeof *g);
    g->fd = fd;
    g->in = malloc(GZR_IN_BYTES);
    if (!g->in) {
        g->status = GZR_MEM;
        return -1;
    }
    g->z.next_in = g->in;
    if (want_input(g, 2) != 0)
        return -1;
    g->direct = !at_magic(g);
    if (g->direct)
        return 0;
    if (inflateInit2(&g->z, 16 + 15) != Z_OK) {
        g->status = GZR_MEM;
        return -1;
    }
    g->z_ready = 1;
    return 0;
}

/* A member ended: the file's end ends the stream, a magic starts the next
 * member; anything else is junk. 0 to go on, -1 with the status. */
static int next_member(gzr *g)
{
    if (want_input(g, 2) != 0)
        return -1;
    if (g->z.avail_in == 0) {
        g->ended = 1;
        return 0;
    }
    if (at_magic(g) && inflateReset(&g->z) == Z_OK)
        return 0;
    g->junk_at = g->in_pos - (long long)g->z.avail_in;
    g->status = GZR_JUNK;
    return -1;
}

static size_t read_direct(gzr *g, unsigned char *out, size_t n)
{
    size_t done = 0;
    while (done < n) {
        if (g->z.avail_in == 0) {
            long r = fill(g);
            if (r <= 0) {
                if (r == 0)
                    g->ended = 1;
                break;
            }
        }
        size_t k = g->z.avail_in < n - done ? g->z.avail_in : n - done;
        memcpy(out + done, g->z.next_in, k);
        g->z.next_in += k;
        g->z.avail_in -= (uInt)k;
        done += k;
    }
    return done;
}

/* Inflates into out until it is full, the last member ends or an error. */
static void inflate_into(gzr *g, unsigned char *out, size_t n)
{
    g->z.next_out = out;
    g->z.avail_out = (uInt)n;
    while (g->z.avail_out > 0 && !g->ended) {
        if (g->z.avail_in == 0) {
            long r = fill(g);
            if (r < 0)
                return;
            if (r == 0) {
                g->status = GZR_CUT;
                return;
            }
        }
        int ret = inflate(&g->z, Z_NO_FLUSH);
        if (ret == Z_STREAM_END) {
            if (next_member(g) != 0)
                return;
        } else if (ret == Z_MEM_ERROR) {
            g->status = GZR_MEM;
            return;
        } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
            g->status = GZR_CORRUPT;
            return;
        }
    }
}

size_t gzr_read(gzr *g, void *buf, size_t n)
{
    if (g->status != GZR_OK)
        return 0;
    size_t got;
    if (g->direct) {
        got = read_direct(g, buf, n);
    } else {
        inflate_into(g, buf, n);
        got = n - g->z.avail_out;
    }
    if (got < n && g->status == GZR_OK)
        g->status = GZR_END;
    return got;
}

const char *gzr_why(const gzr *g)
{
    return g->z.msg ? g->z.msg : "invalid data";
}

void gzr_close(gzr *g)
{
    if (g->z_ready)
        inflateEnd(&g->z);
    free(g->in);
    if (g->fd >= 0)
        close(g->fd);
    memset(g, 0, sizeof *g);
    g->fd = -1;
}

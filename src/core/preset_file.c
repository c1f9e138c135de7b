/* src/core/preset_file.c - see preset_file.h: a preset file's bytes, checked
 * and read once, then handed to iniparser. */
#define _GNU_SOURCE 1               /* memfd_create */
#include "preset_file.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_LEN 4096
#define LINE_LEN 2048               /* iniparser refuses lines of 1023+ bytes first */

/* ---------------------------------------------------------------- what the path is */

static int missing(const char *path, int e, char *err, size_t err_len)
{
    struct stat lst;
    char target[PATH_LEN];
    if (e == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        return nn_errorf(err, err_len, "%s: dangling link to %s", path, target);
    }
    if (e == ENOENT)
        return nn_errorf(err, err_len, "%s: cannot open: no such preset file", path);
    if (e == EACCES)
        return nn_errorf(err, err_len, "%s: cannot open: permission denied", path);
    return nn_errorf(err, err_len, "%s: cannot open: %s", path, strerror(e));
}

static int not_regular(const char *path, unsigned mode, char *err, size_t err_len)
{
    if (S_ISDIR(mode))
        return nn_errorf(err, err_len, "%s: is a directory, not a regular file", path);
    return nn_errorf(err, err_len, "%s: not a regular file (%s)", path, nn_file_kind(mode));
}

int nn_preset_file_check(const char *path, char *err, size_t err_len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return missing(path, errno, err, err_len);
    return S_ISREG(st.st_mode) ? 0 : not_regular(path, st.st_mode, err, err_len);
}

/* ---------------------------------------------------------------- reading */

static int too_large(const char *path, long long bytes, char *err, size_t err_len)
{
    return nn_errorf(err, err_len, "%s: too large for a preset (%s%lld bytes; at most %ld)",
                     path, bytes > NN_PRESET_MAX_BYTES ? "" : "over ", bytes, NN_PRESET_MAX_BYTES);
}

/* Up to NN_PRESET_MAX_BYTES + 1 bytes of fd: one more than allowed says the
 * file grew past the limit since fstat. */
static int read_all(int fd, const char *path, char *buf, size_t *len, char *err, size_t err_len)
{
    size_t got = 0, cap = (size_t)NN_PRESET_MAX_BYTES + 1;
    for (;;) {
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return nn_errorf(err, err_len, "%s: read error at offset %zu: %s", path, got,
                             strerror(errno));
        if (r == 0)
            break;
        got += (size_t)r;
        if (got == cap)
            return too_large(path, (long long)got, err, err_len);
    }
    buf[got] = '\0';
    *len = got;
    return 0;
}

/* O_NONBLOCK: a FIFO with no writer opens at once (then fstat refuses it)
 * instead of waiting; a regular file reads the same either way. */
int nn_preset_file_read(const char *path, char **text, size_t *len, char *err, size_t err_len)
{
    struct stat st;
    *text = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return missing(path, errno, err, err_len);
    int rc = fstat(fd, &st) != 0 ? nn_errorf(err, err_len, "%s: %s", path, strerror(errno))
           : !S_ISREG(st.st_mode) ? not_regular(path, st.st_mode, err, err_len)
           : st.st_size > NN_PRESET_MAX_BYTES ? too_large(path, (long long)st.st_size, err, err_len)
           : 0;
    char *buf = rc == 0 ? malloc((size_t)NN_PRESET_MAX_BYTES + 2) : NULL;
    if (rc == 0 && !buf)
        rc = nn_errorf(err, err_len, "%s: out of memory", path);
    if (rc == 0)
        rc = read_all(fd, path, buf, len, err, err_len);
    close(fd);
    if (rc != 0) {
        free(buf);
        return -1;
    }
    if (*len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {   /* UTF-8 BOM (Windows editors) */
        memmove(buf, buf + 3, *len - 2);                       /* with the NUL */
        *len -= 3;
    }
    *text = buf;
    return 0;
}

/* ---------------------------------------------------------------- sections and keys given twice */

typedef struct name_seen {
    char name[1024];             /* iniparser's longest line */
    long line;
} name_seen;

typedef struct dup_scan {
    const char *path;
    name_seen *sections;         /* every section so far */
    size_t n_sections, cap_sections;
    name_seen *keys;             /* the current section's keys */
    size_t n_keys, cap_keys;
    int in_section;
    char *err;
    size_t err_len;
} dup_scan;

/* Trims blanks at both ends in place (iniparser's strstrip). */
static char *strip(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

/* The earlier line that gave name, or 0; adds it otherwise. */
static long remember(name_seen **list, size_t *n, size_t *cap, const char *name, long line)
{
    for (size_t i = 0; i < *n; i++)
        if (strcasecmp((*list)[i].name, name) == 0)
            return (*list)[i].line;
    if (*n == *cap) {
        size_t grown = *cap ? 2 * *cap : 16;
        name_seen *bigger = realloc(*list, grown * sizeof *bigger);
        if (!bigger)
            return -1;
        *list = bigger;
        *cap = grown;
    }
    nn_strlcpy((*list)[*n].name, name, sizeof (*list)[*n].name);
    (*list)[(*n)++].line = line;
    return 0;
}

/* One logical line, as iniparser_line reads it: a section header, a
 * comment, "key = value", or what iniparser has already refused. */
static int scan_line(dup_scan *s, char *text, long line)
{
    char *l = strip(text), *eq;
    size_t n = strlen(l);
    long first;
    if (n == 0 || l[0] == ';' || l[0] == '#')
        return 0;
    if (l[0] == '[' && l[n - 1] == ']') {
        l[strcspn(l, "]")] = '\0';
        char *name = strip(l + 1);
        first = remember(&s->sections, &s->n_sections, &s->cap_sections, name, line);
        if (first > 0)
            return nn_errorf(s->err, s->err_len, "%s: [%s] given twice (lines %ld and %ld)",
                             s->path, name, first, line);
        s->in_section = 1;
        s->n_keys = 0;
        return first < 0 ? nn_errorf(s->err, s->err_len, "%s: out of memory", s->path) : 0;
    }
    if (!s->in_section || !(eq = strchr(l, '=')) || eq == l)
        return 0;            /* a key outside sections or no key: the reader says so */
    *eq = '\0';
    char *key = strip(l);
    first = remember(&s->keys, &s->n_keys, &s->cap_keys, key, line);
    if (first > 0)
        return nn_errorf(s->err, s->err_len, "%s: [%s] %s given twice (lines %ld and %ld)",
                         s->path, s->sections[s->n_sections - 1].name, key, first, line);
    return first < 0 ? nn_errorf(s->err, s->err_len, "%s: out of memory", s->path) : 0;
}

/* Walks the text's lines, joining those that end in '\' with the next as
 * iniparser does; each logical line counts from its first line. */
static int scan_lines(dup_scan *s, const char *text)
{
    char logical[LINE_LEN];
    size_t used = 0;
    long line = 0, start = 1;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        line++;
        if (used == 0)
            start = line;
        size_t room = sizeof logical - 1 - used, take = n < room ? n : room;
        memcpy(logical + used, p, take);
        used += take;
        logical[used] = '\0';
        while (used > 0 && isspace((unsigned char)logical[used - 1]))
            logical[--used] = '\0';
        p += n + (p[n] == '\n');
        if (used > 0 && logical[used - 1] == '\\') {
            logical[--used] = '\0';          /* the value goes on on the next line */
            continue;
        }
        used = 0;
        if (scan_line(s, logical, start) != 0)
            return -1;
    }
    return used > 0 ? scan_line(s, logical, start) : 0;
}

int nn_preset_text_duplicates(const char *path, const char *text, char *err, size_t err_len)
{
    dup_scan s = { .path = path, .err = err, .err_len = err_len };
    int rc = scan_lines(&s, text);
    free(s.sections);
    free(s.keys);
    return rc;
}

/* ---------------------------------------------------------------- handing the text to iniparser */

/* iniparser 4.1 reads only from a path, so the checked bytes go into an
 * anonymous in-memory file that it opens through /proc. */
dictionary *nn_preset_text_parse(const char *text, size_t len)
{
    char proc[64];
    int fd = memfd_create("nnlab-preset", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            errno = e ? e : EIO;
            return NULL;
        }
        done += (size_t)w;
    }
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    dictionary *d = iniparser_load(proc);
    close(fd);
    return d;
}

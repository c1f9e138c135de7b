/* src/core/preset_file.c - see preset_file.h: a preset file's bytes, checked
 * and read once, then handed to iniparser. */
#define _GNU_SOURCE 1               /* memfd_create */
#include "preset_file.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
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

static int too_large(const char *path, const char *what, long long bytes, char *err, size_t err_len)
{
    return nn_errorf(err, err_len, "%s: too large for a %s (%s%lld bytes; at most %ld)",
                     path, what, bytes > NN_PRESET_MAX_BYTES ? "" : "over ", bytes, NN_PRESET_MAX_BYTES);
}

/* Up to NN_PRESET_MAX_BYTES + 1 bytes of fd: one more than allowed says the
 * file grew past the limit since fstat. */
static int read_all(int fd, const char *path, const char *what, char *buf, size_t *len, char *err,
                    size_t err_len)
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
            return too_large(path, what, (long long)got, err, err_len);
    }
    buf[got] = '\0';
    *len = got;
    return 0;
}

/* A NUL byte would end every string that holds the line: iniparser would
 * call it "too long", and the scans would stop there. */
static int nul_byte(const char *path, const char *what, const char *buf, size_t len, char *err,
                    size_t err_len)
{
    const char *nul = memchr(buf, '\0', len);
    if (!nul)
        return 0;
    long line = 1;
    for (const char *p = buf; p < nul; p++)
        line += *p == '\n';
    return nn_errorf(err, err_len, "%s: NUL byte at line %ld (a %s is text)", path, line, what);
}

/* O_NONBLOCK: a FIFO with no writer opens at once (then fstat refuses it)
 * instead of waiting; a regular file reads the same either way. */
int nn_ini_file_read(const char *path, const char *what, char **text, size_t *len, char *err,
                     size_t err_len)
{
    struct stat st;
    *text = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return missing(path, errno, err, err_len);
    int rc = fstat(fd, &st) != 0 ? nn_errorf(err, err_len, "%s: %s", path, strerror(errno))
           : !S_ISREG(st.st_mode) ? not_regular(path, st.st_mode, err, err_len)
           : st.st_size > NN_PRESET_MAX_BYTES ? too_large(path, what, (long long)st.st_size, err, err_len)
           : 0;
    char *buf = rc == 0 ? malloc((size_t)NN_PRESET_MAX_BYTES + 2) : NULL;
    if (rc == 0 && !buf)
        rc = nn_errorf(err, err_len, "%s: out of memory", path);
    if (rc == 0)
        rc = read_all(fd, path, what, buf, len, err, err_len);
    if (rc == 0)
        rc = nul_byte(path, what, buf, *len, err, err_len);
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

/* Every name seen is kept once in a hash set (open addressing, compared
 * case-blind as iniparser does): a file of 100k names is scanned in
 * milliseconds, where comparing each name with all before it took minutes.
 * A key's entry carries its section's number, so that "type" in [layer1]
 * and in [layer2] are different names. The table never fills: the limits on
 * sections and keys bound what goes in. */
typedef struct name_seen {
    size_t name;                 /* offset in the scan's pool; 0: an empty slot */
    long section;                /* 0 for a section's own entry, else its number */
    long line;
} name_seen;

#define SET_SLOTS 16384          /* a power of two over twice the limits' sum */

_Static_assert(SET_SLOTS >= 2 * (NN_PRESET_MAX_SECTIONS + NN_PRESET_MAX_KEYS),
               "the name set must stay at most half full");

typedef struct dup_scan {
    const char *path;
    const char *what;            /* "preset", "GPU profile": the kind of file, for messages */
    name_seen *set;              /* SET_SLOTS entries */
    char *pool;                  /* the names, NUL-terminated, from offset 1 */
    size_t pool_used, pool_cap;
    long n_sections, n_keys;
    size_t section_name;         /* the current section's name in the pool */
    int duplicate;               /* a repeat already reported in err */
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

/* FNV-1a over the lower-cased bytes and the section number. */
static size_t name_hash(const char *name, long section)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)section;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ (uint64_t)tolower(*p)) * 1099511628211ULL;
    return (size_t)h;
}

static size_t pool_add(dup_scan *s, const char *name)
{
    size_t n = strlen(name) + 1;
    if (s->pool_used + n > s->pool_cap) {
        size_t grown = 2 * (s->pool_cap + n);
        char *bigger = realloc(s->pool, grown);
        if (!bigger)
            return 0;
        s->pool = bigger;
        s->pool_cap = grown;
    }
    memcpy(s->pool + s->pool_used, name, n);
    s->pool_used += n;
    return s->pool_used - n;
}

/* The earlier line that gave name in section, or 0 after adding it; -1
 * when out of memory. */
static long remember(dup_scan *s, const char *name, long section, long line)
{
    size_t i = name_hash(name, section) & (SET_SLOTS - 1);
    for (; s->set[i].name; i = (i + 1) & (SET_SLOTS - 1))
        if (s->set[i].section == section && strcasecmp(s->pool + s->set[i].name, name) == 0)
            return s->set[i].line;
    size_t at = pool_add(s, name);
    if (!at)
        return -1;
    s->set[i] = (name_seen){ .name = at, .section = section, .line = line };
    return 0;
}

static int over_limit(const dup_scan *s, const char *what, long limit, long line)
{
    return nn_errorf(s->err, s->err_len,
                     "%s: line %ld: more than %ld %s (no %s needs that many)",
                     s->path, line, limit, what, s->what);
}

/* The first repeat is kept in err and the scan goes on, so that a limit
 * passed later still refuses the file before iniparser reads it. */
static int repeated(dup_scan *s, const char *key, long first, long line)
{
    if (s->duplicate)
        return 0;
    s->duplicate = 1;
    if (key)
        nn_errorf(s->err, s->err_len, "%s: [%s] %s given twice (lines %ld and %ld)", s->path,
                  s->pool + s->section_name, key, first, line);
    else
        nn_errorf(s->err, s->err_len, "%s: [%s] given twice (lines %ld and %ld)", s->path,
                  s->pool + s->section_name, first, line);
    return 0;
}

static int scan_section(dup_scan *s, char *l, long line)
{
    l[strcspn(l, "]")] = '\0';
    char *name = strip(l + 1);
    if (++s->n_sections > NN_PRESET_MAX_SECTIONS)
        return over_limit(s, "sections", NN_PRESET_MAX_SECTIONS, line);
    long first = remember(s, name, 0, line);
    if (first < 0)
        return nn_errorf(s->err, s->err_len, "%s: out of memory", s->path);
    if (first > 0) {
        s->section_name = pool_add(s, name);    /* for the message */
        return s->section_name ? repeated(s, NULL, first, line)
                               : nn_errorf(s->err, s->err_len, "%s: out of memory", s->path);
    }
    s->section_name = s->pool_used - strlen(name) - 1;   /* what remember just added */
    return 0;
}

/* One logical line, as iniparser_line reads it: a section header, a
 * comment, "key = value", or what iniparser has already refused. */
static int scan_line(dup_scan *s, char *text, long line)
{
    char *l = strip(text), *eq;
    size_t n = strlen(l);
    if (n == 0 || l[0] == ';' || l[0] == '#')
        return 0;
    if (l[0] == '[' && l[n - 1] == ']')
        return scan_section(s, l, line);
    if (!(eq = strchr(l, '=')) || eq == l)
        return 0;            /* no key: iniparser refuses the line, the reader says so */
    *eq = '\0';
    char *key = strip(l);
    if (s->n_sections == 0)  /* refused here, at its line: past the caps iniparser would read them all */
        return nn_errorf(s->err, s->err_len, "%s: line %ld: %s: key outside any section (a %s's "
                         "keys follow a [section] line)", s->path, line, key, s->what);
    if (++s->n_keys > NN_PRESET_MAX_KEYS)
        return over_limit(s, "keys", NN_PRESET_MAX_KEYS, line);
    long first = remember(s, key, s->n_sections, line);
    if (first < 0)
        return nn_errorf(s->err, s->err_len, "%s: out of memory", s->path);
    return first > 0 ? repeated(s, key, first, line) : 0;
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

int nn_ini_text_scan(const char *path, const char *what, const char *text, char *err, size_t err_len)
{
    dup_scan s = { .path = path, .what = what, .err = err, .err_len = err_len, .pool_used = 1 };
    s.set = calloc(SET_SLOTS, sizeof *s.set);
    if (!s.set)
        return nn_errorf(err, err_len, "%s: out of memory", path);
    int rc = scan_lines(&s, text);
    free(s.set);
    free(s.pool);
    return rc != 0 ? -1 : s.duplicate;
}

int nn_preset_file_read(const char *path, char **text, size_t *len, char *err, size_t err_len)
{
    return nn_ini_file_read(path, "preset", text, len, err, err_len);
}

int nn_preset_text_scan(const char *path, const char *text, char *err, size_t err_len)
{
    return nn_ini_text_scan(path, "preset", text, err, err_len);
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

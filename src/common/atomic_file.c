/* src/common/atomic_file.c - see atomic_file.h */
#define _POSIX_C_SOURCE 200809L
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1   /* realpath (XSI) */
#endif
#include "atomic_file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define PATH_LEN 4096

int nn_make_dirs(const char *dir)
{
    char buf[PATH_LEN];
    struct stat st;
    if (nn_strlcpy(buf, dir, sizeof buf) >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = buf + 1;; s++) {
        char c = *s;
        if (c != '/' && c != '\0')
            continue;
        *s = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *s = c;
        if (c == '\0')
            break;
    }
    if (stat(buf, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* The rename is durable only once the folder's entry is on disk; a failure
 * here cannot be undone, so it is not reported. */
static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* An existing file keeps its permissions. A new one gets what the umask
 * leaves of rw-rw-rw-, as any file a program creates: the temp file was
 * opened with 0666, which the kernel masked (a fixed 0644 ignored a umask
 * of 077). */
static void keep_mode(int fd, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        (void)fchmod(fd, st.st_mode & 07777);
}

/* Temporary names made so far, mixed into the next one. Process-wide: two
 * threads that create a temp file in the same folder in the same
 * nanosecond still try different names. */
static _Atomic unsigned long temp_names;

/* mkstemp, but created with 0666 so that the umask applies (mkstemp's 0600
 * would need a fchmod that cannot know the umask without changing it, and
 * umask() is process-wide while other threads create files). tmp ends in
 * six X's, replaced by letters and digits until O_EXCL creates a new file. */
static int create_temp(char *tmp)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char *x = tmp + strlen(tmp) - 6;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long v = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 32);
    for (int attempt = 0; attempt < 1000; attempt++) {
        unsigned long n = atomic_fetch_add_explicit(&temp_names, 1, memory_order_relaxed) + 1;
        v = v * 6364136223846793005ULL + 1442695040888963407ULL + n;
        for (int i = 0; i < 6; i++)
            x[i] = digits[(v >> (10 + 6 * i)) % (sizeof digits - 1)];
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Fills and closes fd: every write checked, flushed, fsynced, close checked. */
static int write_fd(int fd, const char *path, int (*fill)(FILE *, const void *), const void *ctx,
                    char *err, size_t err_len)
{
    FILE *f = fdopen(fd, "w");
    int e = 0;
    if (!f) {
        e = errno;
        close(fd);
        return nn_errorf(err, err_len, "%s: cannot write: %s", path, strerror(e));
    }
    errno = 0;
    if (fill(f, ctx) != 0 || ferror(f) || fflush(f) != 0)
        e = errno ? errno : EIO;
    else if (fsync(fileno(f)) != 0)
        e = errno;
    if (fclose(f) != 0 && !e)
        e = errno;
    return e ? nn_errorf(err, err_len, "%s: cannot write: %s", path, strerror(e)) : 0;
}

/* ---- temporary files left by a writer that was killed ------------------------------ */

/* A temp file is ".NAME" + TMP_INFIX + six characters of mkstemp's. The
 * infix keeps the clean-up away from anyone else's hidden files. */
#define TMP_INFIX NN_TEMP_INFIX
#define TMP_SUFFIX_LEN 6

/* ".x.ini.nnlab-tmp.AbC123" */
static int is_our_temp_name(const char *name)
{
    size_t n = strlen(name), infix = sizeof TMP_INFIX - 1;
    if (name[0] != '.' || n < 2 + infix + TMP_SUFFIX_LEN)
        return 0;
    const char *tail = name + n - TMP_SUFFIX_LEN;
    if (strncmp(tail - infix, TMP_INFIX, infix) != 0)
        return 0;
    for (int i = 0; i < TMP_SUFFIX_LEN; i++)
        if (!isalnum((unsigned char)tail[i]))
            return 0;
    return 1;
}

/* Removes the temp files of ours in dir whose last write is more than
 * NN_STALE_TEMP_S old: a save writes a few kilobytes and renames at once,
 * so such a file was left by a writer killed before its rename (kill -9, a
 * crash, a power cut). Age rather than "is its writer alive": a process id
 * says nothing about a save made from another machine into a shared folder.
 * Best effort: a file that cannot be removed stays, and the save goes on. */
static void remove_stale_temps(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    time_t now = time(NULL);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (!is_our_temp_name(e->d_name)
            || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0
            || !S_ISREG(st.st_mode) || now - st.st_mtime <= NN_STALE_TEMP_S)
            continue;
        (void)unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* ---- where the file really is ------------------------------------------------------- */

/* A path that is a symbolic link is saved through to the file it names (the
 * link stays a link, as in editors); the temp file then goes in the target's
 * folder, for the rename must not cross file systems. A link to nothing is
 * refused: creating its target somewhere else would surprise more. So is a
 * link someone else made: in a world-writable folder another user could
 * plant x.npy -> /etc/shadow for root's dump to replace. The rename itself
 * never follows a link: a link swapped in later is replaced, not its
 * target. */
#define LINK_HOPS_MAX 40          /* as the kernel's own limit on a chain (ELOOP) */

/* The link a link names, as a path: absolute, or relative to the folder of
 * the link. -1 when it cannot be read or does not fit. */
static int next_link(const char *link, char *next, size_t len)
{
    char target[PATH_LEN];
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0)
        return -1;
    target[n] = '\0';
    const char *slash = strrchr(link, '/');
    int w = target[0] == '/' || !slash ? snprintf(next, len, "%s", target)
                                       : snprintf(next, len, "%.*s/%s", (int)(slash - link), link, target);
    return w < 0 || (size_t)w >= len ? -1 : 0;
}

/* Every link of the chain must be this user's, not the first alone: with
 * mine.svg -> another user's link -> victim.txt, that user picks what is
 * overwritten by retargeting the middle link. */
static int check_link_chain(const char *path, char *err, size_t err_len)
{
    char cur[PATH_LEN], next[PATH_LEN];
    struct stat lst;
    if (nn_strlcpy(cur, path, sizeof cur) >= sizeof cur)
        return nn_errorf(err, err_len, "%.64s...: path too long", path);
    for (int hop = 0; hop < LINK_HOPS_MAX; hop++) {
        if (lstat(cur, &lst) != 0 || !S_ISLNK(lst.st_mode))
            return 0;                /* the end of the chain (or nothing: said below) */
        if (lst.st_uid != geteuid())
            return nn_errorf(err, err_len, "%s: not saved: a link owned by another user (uid %lu%s%s), "
                             "which could point anywhere", path, (unsigned long)lst.st_uid,
                             hop ? ", " : "", hop ? cur : "");
        if (next_link(cur, next, sizeof next) != 0)
            return 0;                /* realpath says why */
        memcpy(cur, next, sizeof cur);
    }
    return nn_errorf(err, err_len, "%s: not saved: a chain of more than %d links (a loop?)", path,
                     LINK_HOPS_MAX);
}

static int resolve_link(const char *path, char *out, size_t len, char *err, size_t err_len)
{
    struct stat lst;
    char target[PATH_LEN];
    if (lstat(path, &lst) != 0 || !S_ISLNK(lst.st_mode)) {
        if (nn_strlcpy(out, path, len) >= len)
            return nn_errorf(err, err_len, "%.64s...: path too long", path);
        return 0;
    }
    if (check_link_chain(path, err, err_len) != 0)
        return -1;
    char *real = realpath(path, NULL);
    if (!real) {
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        return nn_errorf(err, err_len, "%s: not saved: a link to %s, which cannot be reached (%s)",
                         path, target, strerror(errno));
    }
    size_t n = nn_strlcpy(out, real, len);
    free(real);
    return n < len ? 0 : nn_errorf(err, err_len, "%.64s...: path too long", path);
}

/* ---- the write -------------------------------------------------------------------------- */

/* dir and base of path; -1 when path names no file. */
static int split_path(const char *path, char *dir, size_t len, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!**base)
        return -1;
    if (!slash)
        nn_strlcpy(dir, ".", len);
    else
        snprintf(dir, len, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return 0;
}

int nn_atomic_prepare(nn_atomic_file *a, const char *given, int (*fill)(FILE *f, const void *ctx),
                      const void *ctx, char *err, size_t err_len)
{
    const char *base;
    a->tmp[0] = '\0';
    if (resolve_link(given, a->path, sizeof a->path, err, err_len) != 0)
        return -1;
    if (split_path(a->path, a->dir, sizeof a->dir, &base) != 0)
        return nn_errorf(err, err_len, "%s: not a file name", given);
    if ((size_t)snprintf(a->tmp, sizeof a->tmp, "%s/.%s" TMP_INFIX "XXXXXX", a->dir, base) >= sizeof a->tmp) {
        a->tmp[0] = '\0';
        return nn_errorf(err, err_len, "%.64s...: path too long", given);
    }
    if (nn_make_dirs(a->dir) != 0) {
        a->tmp[0] = '\0';
        return nn_errorf(err, err_len, "%s: cannot create the folder %s: %s", given, a->dir, strerror(errno));
    }
    remove_stale_temps(a->dir);
    int fd = create_temp(a->tmp);   /* hidden, and not *.ini: nn_preset_list never shows it */
    if (fd < 0) {
        a->tmp[0] = '\0';
        return nn_errorf(err, err_len, "%s: cannot create a file in %s: %s", given, a->dir, strerror(errno));
    }
    keep_mode(fd, a->path);
    if (write_fd(fd, given, fill, ctx, err, err_len) != 0) {
        nn_atomic_abandon(a);
        return -1;
    }
    return 0;
}

int nn_atomic_commit(nn_atomic_file *a, char *err, size_t err_len)
{
    if (rename(a->tmp, a->path) != 0) {
        int e = errno;
        nn_atomic_abandon(a);
        return nn_errorf(err, err_len, "%s: cannot replace: %s", a->path, strerror(e));
    }
    a->tmp[0] = '\0';
    sync_dir(a->dir);
    return 0;
}

void nn_atomic_abandon(nn_atomic_file *a)
{
    if (a->tmp[0])
        unlink(a->tmp);
    a->tmp[0] = '\0';
}

int nn_write_atomic(const char *given, int (*fill)(FILE *f, const void *ctx), const void *ctx,
                    char *err, size_t err_len)
{
    nn_atomic_file a;
    if (nn_atomic_prepare(&a, given, fill, ctx, err, err_len) != 0)
        return -1;
    return nn_atomic_commit(&a, err, err_len);
}

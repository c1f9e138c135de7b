/* src/common/atomic_file.c - see atomic_file.h */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Keeps the old file's permissions; a new file gets rw-r--r-- (mkstemp alone
 * would give rw-------). */
static void set_mode(int fd, const char *path)
{
    struct stat st;
    (void)fchmod(fd, stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644);
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

int nn_write_atomic(const char *path, int (*fill)(FILE *f, const void *ctx), const void *ctx,
                    char *err, size_t err_len)
{
    char dir[PATH_LEN], tmp[PATH_LEN];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    int fd, rc;
    if (!*base)
        return nn_errorf(err, err_len, "%s: not a file name", path);
    if (!slash)
        nn_strlcpy(dir, ".", sizeof dir);
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if ((size_t)snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, base) >= sizeof tmp)
        return nn_errorf(err, err_len, "%.64s...: path too long", path);
    if (nn_make_dirs(dir) != 0)
        return nn_errorf(err, err_len, "%s: cannot create the folder %s: %s", path, dir, strerror(errno));
    fd = mkstemp(tmp);     /* hidden, and not *.ini: nn_preset_list never shows it */
    if (fd < 0)
        return nn_errorf(err, err_len, "%s: cannot create a file in %s: %s", path, dir, strerror(errno));
    set_mode(fd, path);
    rc = write_fd(fd, path, fill, ctx, err, err_len);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = nn_errorf(err, err_len, "%s: cannot replace: %s", path, strerror(errno));
    if (rc != 0)
        unlink(tmp);
    else
        sync_dir(dir);
    return rc;
}

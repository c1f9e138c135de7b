/* src/common/atomic_file.h - replace a file so that a crash or a full disk never
 * leaves it half written: temp file in the same folder, every write checked,
 * fsync, rename, fsync of the folder (htop's Settings_write, plus fsync). */
#ifndef NNLAB_ATOMIC_FILE_H
#define NNLAB_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/* A temp file of ours whose last write is older than this was left by a
 * writer killed before its rename; the next save to the folder removes it. */
#define NN_STALE_TEMP_S 60

/* Writes the content fill(f, ctx) produces (0, or -1 with errno set) to path,
 * creating its folder (mkdir -p) if needed. The old file, if any, keeps its
 * permissions and is left intact on any failure. Messages name the path.
 * The temp file is ".NAME.nnlab-tmp.XXXXXX" beside the file; those older
 * than NN_STALE_TEMP_S in that folder are removed first. A new file's mode
 * is 0666 less the umask. A path that is a symbolic link of the user's own
 * is written through: the file it names is replaced and the link stays; a
 * link to nothing, or one owned by another user, is refused. */
int nn_write_atomic(const char *path, int (*fill)(FILE *f, const void *ctx), const void *ctx,
                    char *err, size_t err_len);

/* nn_write_atomic in two steps, for files that must appear together: the
 * content written whole to its temp file (prepare), then renamed over the
 * path (commit), or the temp removed (abandon, also after a failed commit).
 * Messages as nn_write_atomic's. */
#define NN_ATOMIC_PATH_LEN 4096
typedef struct nn_atomic_file {
    char path[NN_ATOMIC_PATH_LEN];    /* the file replaced (a link's target) */
    char dir[NN_ATOMIC_PATH_LEN];
    char tmp[NN_ATOMIC_PATH_LEN];     /* "" once committed or abandoned */
} nn_atomic_file;
int nn_atomic_prepare(nn_atomic_file *a, const char *path, int (*fill)(FILE *f, const void *ctx),
                      const void *ctx, char *err, size_t err_len);
int nn_atomic_commit(nn_atomic_file *a, char *err, size_t err_len);
void nn_atomic_abandon(nn_atomic_file *a);

/* The temp files' names: ".NAME" NN_TEMP_INFIX "XXXXXX" beside NAME. */
#define NN_TEMP_INFIX ".nnlab-tmp."

/* mkdir -p; 0 or -1 with errno. */
int nn_make_dirs(const char *dir);

#endif

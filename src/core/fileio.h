/* fileio.h — whole-file reads and atomic writes (temp file + rename), so a
 * failed run never leaves a half-written output behind. */
#ifndef XDNN_FILEIO_H
#define XDNN_FILEIO_H

#include "arena.h"
#include "diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Read a whole file into a malloc'ed, NUL-terminated buffer.  "-" is stdin.
 * Only regular files, FIFOs and stdin are read (a device such as /dev/zero
 * never ends): "'/dev/zero' is not a regular file", "'x' is a directory".  A
 * stream (FIFO, stdin) longer than FILE_STREAM_MAX bytes is an error. */
xdnn_status file_read_all(const char *path, char **data, size_t *len, xdnn_diags_t *d);
/* The same, reporting errors at `at` (an include statement) instead of at the
 * file itself. */
xdnn_status file_read_all_at(const char *path, xloc at, char **data, size_t *len, xdnn_diags_t *d);

#define FILE_STREAM_MAX ((size_t)1 << 30)

/* An input opened for reading in steps, so a reader that learns from a file's
 * header how long the file must be reads no further (file_in_fill). */
typedef struct file_in {
    FILE *f;
    const char *path;
    xloc at;            /* where errors are reported */
    bool regular;       /* a regular file of `size` bytes (else a stream) */
    size_t size;
    bool eof;           /* the end was reached */
    char *data;         /* what was read so far, NUL-terminated; malloc'ed */
    size_t len, cap;
} file_in;

/* Open `path` ("-" = stdin), refusing what file_read_all refuses; errors are
 * reported at `at`, or at the file when at.file is NULL. */
xdnn_status file_in_open(file_in *in, const char *path, xloc at, xdnn_diags_t *d);
/* Read until in->len >= upto or the input ends. */
xdnn_status file_in_fill(file_in *in, size_t upto, xdnn_diags_t *d);
/* Close the input and free in->data (set in->data = NULL first to keep it). */
void file_in_close(file_in *in);
/* Write atomically: path.tmpXXXXXX then rename.  "-" writes to stdout. */
xdnn_status file_write_atomic(const char *path, const void *data, size_t len, xdnn_diags_t *d);
/* For programs (the CLI, not the library's embedders, whose signals are
 * their own): on SIGINT, SIGTERM or SIGHUP remove the temp files being
 * written, then die of the signal as before. */
void file_remove_temps_on_signals(void);
/* The folder of xdnn's caches (tune results, compiled kernels) into buf:
 * $XDNN_CACHE_DIR, else $HOME/.cache/xdnn.  False when caching is off
 * (XDNN_CACHE_DIR=off, or no HOME) or the name does not fit in len bytes: a
 * truncated name would be another, maybe someone else's, folder. */
bool cache_dir(char *buf, size_t len);
/* write(2) / read(2) until all n bytes moved, retrying EINTR; false on an
 * error or (reading) an early end. */
bool fd_write_all(int fd, const void *buf, size_t n);
bool fd_read_all(int fd, void *buf, size_t n);
/* mkdir -p for a folder name of any length; false (errno set) when the
 * folder does not exist afterwards. */
bool make_dirs(const char *dir);
/* Directory part of a path ("." if none), into an arena string. */
char *path_dirname(arena *a, const char *path);
/* Join dir and a relative path (absolute paths are returned as is). */
char *path_join(arena *a, const char *dir, const char *rel);

#endif

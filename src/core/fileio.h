/* fileio.h — whole-file reads and atomic writes (temp file + rename), so a
 * failed run never leaves a half-written output behind. */
#ifndef XDNN_FILEIO_H
#define XDNN_FILEIO_H

#include "arena.h"
#include "diag.h"

#include <stddef.h>

/* Read a whole file into a malloc'ed, NUL-terminated buffer.  "-" is stdin. */
xdnn_status file_read_all(const char *path, char **data, size_t *len, xdnn_diags_t *d);
/* Write atomically: path.tmpXXXXXX then rename.  "-" writes to stdout. */
xdnn_status file_write_atomic(const char *path, const void *data, size_t len, xdnn_diags_t *d);
/* Directory part of a path ("." if none), into an arena string. */
char *path_dirname(arena *a, const char *path);
/* Join dir and a relative path (absolute paths are returned as is). */
char *path_join(arena *a, const char *dir, const char *rel);

#endif

/* kcache_file.h — the files of the GPU kernel cache on disk (nvrtc.c keeps
 * the cache itself): reading one back only when it is what was written, and
 * writing one so that no reader ever sees it half done. */
#ifndef XDNN_GPU_KCACHE_FILE_H
#define XDNN_GPU_KCACHE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest kernel the cache keeps (a generated cubin is tens of KB). */
#define KCACHE_MAX_BYTES ((size_t)64 << 20)

/* The code stored at `path` for `key`, malloc'ed into *code / *len.  False
 * (a miss) when the file is missing, not a regular file, larger than
 * KCACHE_MAX_BYTES, or its header, key, length or checksum disagree. */
bool kcache_read(const char *path, uint64_t key, char **code, size_t *len);
/* Store `code` for `key` at `path`, creating `dir` (and its parents) first:
 * a unique temp file (mkstemp) renamed into place.  False when it could not;
 * the cache is an optimisation, so callers go on without it. */
bool kcache_write(const char *dir, const char *path, uint64_t key, const void *code, size_t len);

#endif

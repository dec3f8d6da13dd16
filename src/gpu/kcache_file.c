/* kcache_file.c — see kcache_file.h.  A file is a 32-byte header, then the
 * code:
 *
 *   "XDNNKC01"  key (u64)  length (u64)  FNV-1a 64 of the code (u64)
 *
 * all little-endian as the host writes them (the cache never leaves the
 * machine).  The cache folder may be shared or left over from another
 * version, so what is read is checked before the driver ever sees it: a
 * truncated write, a file for another key, a planted symlink to a device or
 * a flipped byte are all misses, and the kernel is compiled again. */
#include "gpu/kcache_file.h"

#include "core/fileio.h"
#include "plan/fingerprint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char MAGIC[8] = {'X', 'D', 'N', 'N', 'K', 'C', '0', '1'};

typedef struct kc_header {
    char magic[8];
    uint64_t key, len, sum;
} kc_header;

_Static_assert(sizeof(kc_header) == 32, "the header is 32 bytes on disk");

bool kcache_read(const char *path, uint64_t key, char **code, size_t *len)
{
    *code = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return false;
    struct stat st;
    kc_header h;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)sizeof h &&
              (size_t)st.st_size - sizeof h <= KCACHE_MAX_BYTES && fd_read_all(fd, &h, sizeof h) &&
              memcmp(h.magic, MAGIC, sizeof MAGIC) == 0 && h.key == key && h.len > 0 &&
              h.len == (uint64_t)st.st_size - sizeof h;
    char *buf = ok ? malloc(h.len) : NULL;
    ok = buf && fd_read_all(fd, buf, h.len) && fnv1a64(FNV64_INIT, buf, h.len) == h.sum;
    close(fd);
    if (!ok) {
        free(buf);
        return false;
    }
    *code = buf;
    *len = h.len;
    return true;
}

bool kcache_write(const char *dir, const char *path, uint64_t key, const void *code, size_t len)
{
    if (len == 0 || len > KCACHE_MAX_BYTES || !make_dirs(dir))
        return false;
    /* header and code in one buffer through the atomic writer (a unique
     * mkstemp temp, renamed into place): a cubin is tens of KB */
    kc_header h = {.key = key, .len = len, .sum = fnv1a64(FNV64_INIT, code, len)};
    memcpy(h.magic, MAGIC, sizeof MAGIC);
    char *buf = malloc(sizeof h + len);
    if (!buf)
        return false;
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, code, len);
    xdnn_diags_t *quiet = xdnn_diags_create(); /* the cache is an optimisation: a failed store is silent */
    bool ok = file_write_atomic(path, buf, sizeof h + len, quiet) == XDNN_OK;
    xdnn_diags_destroy(quiet);
    free(buf);
    return ok;
}

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

static bool read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n) {
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        p += got;
        n -= (size_t)got;
    }
    return true;
}

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
              (size_t)st.st_size - sizeof h <= KCACHE_MAX_BYTES && read_all(fd, &h, sizeof h) &&
              memcmp(h.magic, MAGIC, sizeof MAGIC) == 0 && h.key == key && h.len > 0 &&
              h.len == (uint64_t)st.st_size - sizeof h;
    char *buf = ok ? malloc(h.len) : NULL;
    ok = buf && read_all(fd, buf, h.len) && fnv1a64(FNV64_INIT, buf, h.len) == h.sum;
    close(fd);
    if (!ok) {
        free(buf);
        return false;
    }
    *code = buf;
    *len = h.len;
    return true;
}

static bool write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

bool kcache_write(const char *dir, const char *path, uint64_t key, const void *code, size_t len)
{
    if (len == 0 || len > KCACHE_MAX_BYTES || !make_dirs(dir))
        return false;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + sizeof ".tmpXXXXXX");
    if (!tmp)
        return false;
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmpXXXXXX", sizeof ".tmpXXXXXX");
    int fd = mkstemp(tmp); /* unique and O_EXCL: nobody can plant the temp name */
    if (fd < 0) {
        free(tmp);
        return false;
    }
    kc_header h = {.key = key, .len = len, .sum = fnv1a64(FNV64_INIT, code, len)};
    memcpy(h.magic, MAGIC, sizeof MAGIC);
    bool ok = write_all(fd, &h, sizeof h) && write_all(fd, code, len);
    ok = close(fd) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok)
        unlink(tmp);
    free(tmp);
    return ok;
}

/* fileio.c — see fileio.h. */
#include "fileio.h"

#include "arena.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

xdnn_status file_read_all(const char *path, char **data, size_t *len, xdnn_diags_t *d)
{
    *data = NULL;
    *len = 0;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}), "cannot open: %s", strerror(errno));
        return XDNN_ERR_IO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            if (f != stdin)
                fclose(f);
            diag_error(d, XDNN_ERR_NOMEM, ((xloc){.file = path}), "out of memory reading file");
            return XDNN_ERR_NOMEM;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
        if (cap - n - 1 == 0) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    int err = ferror(f);
    if (f != stdin)
        fclose(f);
    if (err) {
        free(buf);
        diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}), "read error");
        return XDNN_ERR_IO;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return XDNN_OK;
}

xdnn_status file_write_atomic(const char *path, const void *data, size_t len, xdnn_diags_t *d)
{
    if (strcmp(path, "-") == 0) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0) {
            diag_error(d, XDNN_ERR_IO, xloc_none(), "cannot write to stdout");
            return XDNN_ERR_IO;
        }
        return XDNN_OK;
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp)
        return XDNN_ERR_NOMEM;
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmpXXXXXX", 11);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}), "cannot create: %s", strerror(errno));
        free(tmp);
        return XDNN_ERR_IO;
    }
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    int close_err = close(fd);
    if (left || close_err || rename(tmp, path) != 0) {
        diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}), "cannot write: %s", strerror(errno));
        unlink(tmp);
        free(tmp);
        return XDNN_ERR_IO;
    }
    free(tmp);
    return XDNN_OK;
}

char *path_dirname(arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return arena_strdup(a, ".");
    if (slash == path)
        return arena_strdup(a, "/");
    return arena_strndup(a, path, (size_t)(slash - path));
}

char *path_join(arena *a, const char *dir, const char *rel)
{
    if (rel[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0)
        return arena_strdup(a, rel);
    return arena_sprintf(a, "%s/%s", dir, rel);
}

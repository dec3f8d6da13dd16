/* fileio.c — see fileio.h: bounded whole-file and stepwise reads (regular
 * files, FIFOs and stdin only), atomic writes, path helpers. */
#include "fileio.h"

#include "arena.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* NULL when `st` may be read to its end; else why not.  A terminal on stdin
 * ends with ^D; other devices (/dev/zero, /dev/urandom) may never end. */
static const char *refusal(const struct stat *st, bool is_stdin, int fd)
{
    if (S_ISDIR(st->st_mode))
        return "is a directory";
    if (S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode))
        return NULL;
    if (is_stdin && (S_ISSOCK(st->st_mode) || isatty(fd)))
        return NULL;
    return "is not a regular file";
}

/* How long a named FIFO may wait for its first byte: XDNN_FIFO_TIMEOUT
 * seconds (default 30; 0 waits forever, as a plain open would). */
static int fifo_wait_ms(void)
{
    const char *e = getenv("XDNN_FIFO_TIMEOUT");
    char *end;
    long sec = e && *e ? strtol(e, &end, 10) : 30;
    if (e && *e && (*end || sec < 0))
        sec = 30;
    return sec == 0 ? -1 : sec > INT_MAX / 1000 ? INT_MAX : (int)sec * 1000;
}

/* Opens a named FIFO without blocking on a missing writer: a plain fopen()
 * would hang forever (`include "fifo"` with nobody at the other end).  It
 * waits, bounded, until a writer has sent something or hung up; NULL with
 * errno ETIMEDOUT when none came. */
static FILE *fifo_open(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, fifo_wait_ms())) < 0 && errno == EINTR)
        ;
    int flags = r > 0 ? fcntl(fd, F_GETFL) : -1;
    FILE *f = flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        int e = r == 0 ? ETIMEDOUT : errno;
        close(fd);
        errno = e;
    }
    return f;
}

xdnn_status file_in_open(file_in *in, const char *path, xloc at, xdnn_diags_t *d)
{
    *in = (file_in){.path = path, .at = at.file ? at : (xloc){.file = path}};
    bool is_stdin = strcmp(path, "-") == 0;
    struct stat named;
    bool fifo = !is_stdin && stat(path, &named) == 0 && S_ISFIFO(named.st_mode);
    FILE *f = is_stdin ? stdin : fifo ? fifo_open(path) : fopen(path, "rb");
    if (!f && fifo && errno == ETIMEDOUT) {
        diag_error(d, XDNN_ERR_IO, in->at, "'%s' is a FIFO and no writer sent anything in %d s (XDNN_FIFO_TIMEOUT)",
                   path, fifo_wait_ms() / 1000);
        return XDNN_ERR_IO;
    }
    if (!f) {
        diag_error(d, XDNN_ERR_IO, in->at, "cannot open: %s", strerror(errno));
        return XDNN_ERR_IO;
    }
    struct stat st;
    const char *why = fstat(fileno(f), &st) != 0 ? strerror(errno) : refusal(&st, is_stdin, fileno(f));
    if (why) {
        if (is_stdin)
            diag_error(d, XDNN_ERR_IO, in->at, "stdin %s", why);
        else
            diag_error(d, XDNN_ERR_IO, in->at, "'%s' %s", path, why);
        if (!is_stdin)
            fclose(f);
        return XDNN_ERR_IO;
    }
    in->f = f;
    in->regular = S_ISREG(st.st_mode);
    in->size = in->regular && st.st_size > 0 ? (size_t)st.st_size : 0;
    return XDNN_OK;
}

xdnn_status file_in_fill(file_in *in, size_t upto, xdnn_diags_t *d)
{
    while (!in->eof && in->len < upto) {
        if (in->len + 1 >= in->cap) {
            /* Regular files: room for the whole file at once (plus a byte to see
             * that it ended); streams grow by doubling. */
            size_t cap = in->cap ? in->cap * 2 : 1 << 16;
            if (in->regular && in->size < upto && in->size + 2 > cap)
                cap = in->size + 2;
            char *nb = cap > in->cap ? realloc(in->data, cap) : NULL;
            if (!nb) {
                diag_error(d, XDNN_ERR_NOMEM, in->at, "out of memory reading '%s'", in->path);
                return XDNN_ERR_NOMEM;
            }
            in->data = nb;
            in->cap = cap;
        }
        size_t want = in->cap - in->len - 1;
        if (want > upto - in->len)
            want = upto - in->len;
        size_t got = fread(in->data + in->len, 1, want, in->f);
        in->len += got;
        in->data[in->len] = 0;
        if (got < want) {
            if (ferror(in->f)) {
                diag_error(d, XDNN_ERR_IO, in->at, "cannot read '%s': %s", in->path, strerror(errno));
                return XDNN_ERR_IO;
            }
            in->eof = true;
        }
    }
    if (!in->data) { /* an empty read still hands back a NUL-terminated buffer */
        if (!(in->data = calloc(1, 1))) {
            diag_error(d, XDNN_ERR_NOMEM, in->at, "out of memory reading '%s'", in->path);
            return XDNN_ERR_NOMEM;
        }
        in->cap = 1;
    }
    return XDNN_OK;
}

void file_in_close(file_in *in)
{
    if (in->f && in->f != stdin)
        fclose(in->f);
    in->f = NULL;
    free(in->data);
    in->data = NULL;
}

xdnn_status file_read_all_at(const char *path, xloc at, char **data, size_t *len, xdnn_diags_t *d)
{
    *data = NULL;
    *len = 0;
    file_in in;
    xdnn_status st = file_in_open(&in, path, at, d);
    if (st != XDNN_OK)
        return st;
    /* A regular file ends; a stream gets a limit one past FILE_STREAM_MAX. */
    st = file_in_fill(&in, in.regular ? SIZE_MAX - 1 : FILE_STREAM_MAX + 1, d);
    if (st == XDNN_OK && !in.regular && in.len > FILE_STREAM_MAX) {
        diag_error(d, XDNN_ERR_IO, in.at, "'%s' goes on past %zu bytes; stopped reading it",
                   strcmp(path, "-") == 0 ? "stdin" : path, FILE_STREAM_MAX);
        st = XDNN_ERR_IO;
    }
    if (st == XDNN_OK) {
        *data = in.data;
        *len = in.len;
        in.data = NULL;
    }
    file_in_close(&in);
    return st;
}

xdnn_status file_read_all(const char *path, char **data, size_t *len, xdnn_diags_t *d)
{
    return file_read_all_at(path, xloc_none(), data, len, d);
}

/* Temp files being written right now, for file_remove_temps_on_signals():
 * slots claimed with an atomic exchange so the handler reads only complete
 * paths; paths longer than a slot are not tracked (they cannot be unlinked
 * from a handler without allocating). */
#define TEMP_SLOTS 8
static char temp_path[TEMP_SLOTS][4096];
static int temp_used[TEMP_SLOTS]; /* 0 free, -1 being filled in, 1 tracked; atomics only */

static int temp_track(const char *tmp)
{
    if (strlen(tmp) >= sizeof temp_path[0])
        return -1;
    for (int i = 0; i < TEMP_SLOTS; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&temp_used[i], &expected, -1, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            memcpy(temp_path[i], tmp, strlen(tmp) + 1);
            __atomic_store_n(&temp_used[i], 1, __ATOMIC_RELEASE);
            return i;
        }
    }
    return -1;
}

static void temp_untrack(int slot)
{
    if (slot >= 0)
        __atomic_store_n(&temp_used[slot], 0, __ATOMIC_RELEASE);
}

static void remove_temps_and_die(int sig)
{
    for (int i = 0; i < TEMP_SLOTS; i++)
        if (__atomic_load_n(&temp_used[i], __ATOMIC_ACQUIRE) == 1)
            unlink(temp_path[i]); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

void file_remove_temps_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa = {.sa_handler = remove_temps_and_die};
        sigemptyset(&sa.sa_mask);
        /* leave a signal that the parent told us to ignore (nohup) ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

xdnn_status file_write_atomic(const char *path, const void *data, size_t len, xdnn_diags_t *d)
{
    if (strcmp(path, "-") == 0) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0) {
            diag_error(d, XDNN_ERR_IO, xloc_none(), "cannot write to stdout: %s", strerror(errno));
            /* Reported: the command-line's final check of stdout (cli/main.c)
             * must not report it a second time. */
            clearerr(stdout);
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
    int slot = temp_track(tmp);
    /* mkstemp creates 0600; an output file should get the mode any new file
     * gets (0666 less the umask), so goldens saved by one user are readable. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    bool written = fd_write_all(fd, data, len);
    int close_err = close(fd);
    bool ok = written && !close_err && rename(tmp, path) == 0;
    int err = errno;
    if (!ok)
        unlink(tmp);
    temp_untrack(slot);
    free(tmp);
    if (!ok) {
        diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}), "cannot write: %s", strerror(err));
        return XDNN_ERR_IO;
    }
    return XDNN_OK;
}

bool cache_dir(char *buf, size_t len)
{
    const char *env = getenv("XDNN_CACHE_DIR");
    if (env && strcmp(env, "off") == 0)
        return false;
    if (env && *env)
        return (size_t)snprintf(buf, len, "%s", env) < len;
    const char *home = getenv("HOME");
    if (!home || !*home)
        return false;
    return (size_t)snprintf(buf, len, "%s/.cache/xdnn", home) < len;
}

bool fd_write_all(int fd, const void *buf, size_t n)
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

bool fd_read_all(int fd, void *buf, size_t n)
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

bool make_dirs(const char *dir)
{
    char *tmp = strdup(dir);
    if (!tmp)
        return false;
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            (void)mkdir(tmp, 0777); /* parents: only the last mkdir decides */
            *p = '/';
        }
    bool ok = mkdir(tmp, 0777) == 0 || errno == EEXIST;
    int err = errno;
    free(tmp);
    errno = err;
    return ok;
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

/* tune_cache.c — the persistent autotune cache (format in tune.h): lookup,
 * atomic store, list and clear.  A file that cannot be parsed is reported
 * (store, list) or treated as a miss (lookup); it never crashes a run. */
#include "plan/tune.h"

#include "core/fileio.h"
#include "plan/fingerprint.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void tune_entry_free(tune_entry *e)
{
    if (!e)
        return;
    free(e->sig);
    free(e->ranking);
    e->sig = NULL;
    e->ranking = NULL;
}

/* This device's and version's file; false when the cache is off. */
static bool cache_file(const char *fp, char *buf, size_t len)
{
    char dir[TUNE_DIR_MAX];
    if (!cache_dir(dir, sizeof dir))
        return false;
    uint64_t h = fnv1a64(FNV64_INIT, fp, strlen(fp));
    h = fnv1a64(h, "\n", 1);
    h = fnv1a64(h, XDNN_VERSION_STRING, strlen(XDNN_VERSION_STRING));
    return (size_t)snprintf(buf, len, "%s/tune-%016" PRIx64 ".jsonl", dir, h) < len;
}

static void copy_str(char *dst, size_t len, const cJSON *j)
{
    snprintf(dst, len, "%s", cJSON_IsString(j) ? j->valuestring : "");
}

/* One entry line; false if it is not a valid entry. */
static bool entry_from_json(const cJSON *j, tune_entry *e)
{
    memset(e, 0, sizeof *e);
    const cJSON *sig = cJSON_GetObjectItemCaseSensitive(j, "sig");
    const cJSON *eng = cJSON_GetObjectItemCaseSensitive(j, "engine");
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(j, "ms");
    if (!cJSON_IsString(sig) || !cJSON_IsString(eng) || !cJSON_IsNumber(ms))
        return false;
    e->sig = strdup(sig->valuestring);
    copy_str(e->engine, sizeof e->engine, eng);
    copy_str(e->knobs, sizeof e->knobs, cJSON_GetObjectItemCaseSensitive(j, "knobs"));
    copy_str(e->when, sizeof e->when, cJSON_GetObjectItemCaseSensitive(j, "when"));
    e->ms = ms->valuedouble;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "candidates");
    e->candidates = cJSON_IsNumber(c) ? c->valueint : 1;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "ranking"), *it;
    int n = cJSON_IsArray(r) ? cJSON_GetArraySize(r) : 0;
    if (n > 0 && (e->ranking = calloc((size_t)n, sizeof *e->ranking)) != NULL) {
        cJSON_ArrayForEach(it, r)
        {
            tune_rank *k = &e->ranking[e->nranking++];
            copy_str(k->engine, sizeof k->engine, cJSON_GetObjectItemCaseSensitive(it, "engine"));
            copy_str(k->knobs, sizeof k->knobs, cJSON_GetObjectItemCaseSensitive(it, "knobs"));
            const cJSON *kms = cJSON_GetObjectItemCaseSensitive(it, "ms");
            k->ms = cJSON_IsNumber(kms) ? kms->valuedouble : -1;
        }
    }
    return e->sig != NULL;
}

static cJSON *entry_to_json(const tune_entry *e)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "sig", e->sig);
    cJSON_AddStringToObject(j, "engine", e->engine);
    cJSON_AddStringToObject(j, "knobs", e->knobs);
    cJSON_AddNumberToObject(j, "ms", e->ms);
    cJSON_AddNumberToObject(j, "candidates", e->candidates);
    cJSON *r = cJSON_AddArrayToObject(j, "ranking");
    for (int i = 0; i < e->nranking; i++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddStringToObject(k, "engine", e->ranking[i].engine);
        cJSON_AddStringToObject(k, "knobs", e->ranking[i].knobs);
        cJSON_AddNumberToObject(k, "ms", e->ranking[i].ms);
        cJSON_AddItemToArray(r, k);
    }
    cJSON_AddStringToObject(j, "when", e->when);
    return j;
}

/* A parsed cache file: its header and entries. */
typedef struct cache_doc {
    char device[FINGERPRINT_MAX];
    char version[64];
    tune_entry *e;
    int n, cap;
} cache_doc;

static void doc_free(cache_doc *c)
{
    for (int i = 0; i < c->n; i++)
        tune_entry_free(&c->e[i]);
    free(c->e);
    memset(c, 0, sizeof *c);
}

static bool doc_push(cache_doc *c, tune_entry *e)
{
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        tune_entry *ne = realloc(c->e, (size_t)cap * sizeof *ne);
        if (!ne)
            return false;
        c->e = ne;
        c->cap = cap;
    }
    c->e[c->n++] = *e;
    return true;
}

/* Read `path`; a missing file is an empty doc.  *why set when it is damaged. */
static xdnn_status doc_read(const char *path, cache_doc *c, char *why, size_t whylen)
{
    memset(c, 0, sizeof *c);
    why[0] = 0;
    /* a regular file of bounded size only (which bounds every line too): the
     * folder may hold anything, a symlink to /dev/zero included */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT)
            return XDNN_OK;
        snprintf(why, whylen, "%s", errno == ELOOP ? "a symbolic link, not followed" : strerror(errno));
        return XDNN_ERR_IO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > TUNE_FILE_MAX) {
        snprintf(why, whylen, "not a regular file of at most %d MB", TUNE_FILE_MAX >> 20);
        close(fd);
        return XDNN_ERR_IO;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return XDNN_ERR_IO;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int lineno = 0;
    xdnn_status s = XDNN_OK;
    while ((got = getline(&line, &cap, f)) > 0) {
        lineno++;
        cJSON *j = cJSON_Parse(line);
        if (lineno == 1) {
            const cJSON *dev = cJSON_GetObjectItemCaseSensitive(j, "device");
            const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "xdnn");
            if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "xdnn_tune_cache")) || !cJSON_IsString(dev) ||
                !cJSON_IsString(ver)) {
                snprintf(why, whylen, "line 1 is not a tune-cache header");
                s = XDNN_ERR_IO;
            } else {
                copy_str(c->device, sizeof c->device, dev);
                copy_str(c->version, sizeof c->version, ver);
            }
        } else {
            tune_entry e;
            if (!j || !entry_from_json(j, &e)) {
                if (j)
                    tune_entry_free(&e);
                snprintf(why, whylen, "line %d is not a tune-cache entry", lineno);
                s = XDNN_ERR_IO;
            } else if (!doc_push(c, &e)) {
                tune_entry_free(&e);
                s = XDNN_ERR_NOMEM;
            }
        }
        cJSON_Delete(j);
        if (s != XDNN_OK)
            break;
    }
    free(line);
    fclose(f);
    if (s == XDNN_OK && lineno == 0) {
        snprintf(why, whylen, "empty file");
        s = XDNN_ERR_IO;
    }
    if (s != XDNN_OK)
        doc_free(c);
    return s;
}

bool tune_cache_lookup(const char *fp, const char *sig, tune_entry *out)
{
    char path[TUNE_DIR_MAX + 64], why[128];
    if (!cache_file(fp, path, sizeof path))
        return false;
    cache_doc c;
    if (doc_read(path, &c, why, sizeof why) != XDNN_OK)
        return false;
    bool found = false;
    /* the header must name this device and version: a hash collision or a
     * hand-copied file is a miss, not a wrong answer */
    if (strcmp(c.device, fp) == 0 && strcmp(c.version, XDNN_VERSION_STRING) == 0)
        for (int i = 0; i < c.n && !found; i++)
            if (strcmp(c.e[i].sig, sig) == 0) {
                *out = c.e[i];
                c.e[i] = (tune_entry){0};
                found = true;
            }
    doc_free(&c);
    return found;
}

/* Store is read, merge, rename: two processes storing at once (bench
 * --devices workers, shards of a job array on one machine) would each rename
 * their own merge and lose the other's entries.  An exclusive flock on
 * DIR/tune.lock makes the three steps one.  -1 when the lock cannot be had
 * (then the store goes on unlocked, as before, with a warning). */
static int lock_cache(const char *dir, xdnn_diags_t *d)
{
    char path[TUNE_DIR_MAX + 16];
    snprintf(path, sizeof path, "%s/tune.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd >= 0 && flock(fd, LOCK_EX) == 0)
        return fd;
    diag_warning(d, xloc_none(), "cannot lock '%s' (%s): a concurrent store may lose entries", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

static xdnn_status store_locked(const char *fp, const tune_entry *entries, int n, xdnn_diags_t *d);

xdnn_status tune_cache_store(const char *fp, const tune_entry *entries, int n, xdnn_diags_t *d)
{
    char dir[TUNE_DIR_MAX];
    if (!cache_dir(dir, sizeof dir))
        return XDNN_OK; /* caching is off: nothing to keep */
    if (!make_dirs(dir)) {
        diag_error(d, XDNN_ERR_IO, xloc_none(), "cannot create the tune cache directory '%s': %s", dir,
                   strerror(errno));
        return XDNN_ERR_IO;
    }
    int lock = lock_cache(dir, d);
    xdnn_status s = store_locked(fp, entries, n, d);
    if (lock >= 0)
        close(lock); /* releases the flock */
    return s;
}

static xdnn_status store_locked(const char *fp, const tune_entry *entries, int n, xdnn_diags_t *d)
{
    char path[TUNE_DIR_MAX + 64], why[128];
    xdnn_status s;
    if (!cache_file(fp, path, sizeof path))
        return XDNN_OK;
    cache_doc c;
    if (doc_read(path, &c, why, sizeof why) != XDNN_OK || (c.n && strcmp(c.device, fp) != 0)) {
        diag_warning(d, xloc_none(), "tune cache '%s' is damaged (%s); starting it again", path,
                     why[0] ? why : "another device's header");
        doc_free(&c);
    }
    cJSON *head = cJSON_CreateObject();
    cJSON_AddNumberToObject(head, "xdnn_tune_cache", 1);
    cJSON_AddStringToObject(head, "device", fp);
    cJSON_AddStringToObject(head, "xdnn", XDNN_VERSION_STRING);
    char *text = cJSON_PrintUnformatted(head);
    cJSON_Delete(head);
    size_t len = text ? strlen(text) : 0, cap = len + 2;
    char *buf = malloc(cap);
    if (!text || !buf) {
        free(text), free(buf), doc_free(&c);
        return XDNN_ERR_NOMEM;
    }
    memcpy(buf, text, len);
    buf[len++] = '\n';
    free(text);
    /* old entries not replaced, then the new ones */
    for (int pass = 0; pass < 2; pass++) {
        int count = pass ? n : c.n;
        for (int i = 0; i < count; i++) {
            const tune_entry *e = pass ? &entries[i] : &c.e[i];
            bool replaced = false;
            for (int k = 0; !pass && k < n && !replaced; k++)
                replaced = strcmp(entries[k].sig, e->sig) == 0;
            for (int k = 0; pass && k < i && !replaced; k++) /* the same work twice in one graph */
                replaced = strcmp(entries[k].sig, e->sig) == 0;
            if (replaced)
                continue;
            cJSON *j = entry_to_json(e);
            char *line = cJSON_PrintUnformatted(j);
            cJSON_Delete(j);
            size_t ll = line ? strlen(line) : 0;
            char *nb = line ? realloc(buf, len + ll + 2) : NULL;
            if (!nb) {
                free(line), free(buf), doc_free(&c);
                return XDNN_ERR_NOMEM;
            }
            buf = nb;
            memcpy(buf + len, line, ll);
            len += ll;
            buf[len++] = '\n';
            free(line);
        }
    }
    s = file_write_atomic(path, buf, len, d);
    free(buf);
    doc_free(&c);
    return s;
}

static bool is_cache_file(const char *name)
{
    size_t n = strlen(name);
    return strncmp(name, "tune-", 5) == 0 && n > 11 && strcmp(name + n - 6, ".jsonl") == 0;
}

static void list_doc_text(FILE *f, const char *file, const cache_doc *c, bool verbose)
{
    fprintf(f, "\n%s\n  device: %s\n  xdnn:   %s%s\n", file, c->device, c->version,
            strcmp(c->version, XDNN_VERSION_STRING) ? " (another version: not used)" : "");
    for (int i = 0; i < c->n; i++) {
        const tune_entry *e = &c->e[i];
        const char *paren = strchr(e->sig, '(');
        int oplen = paren ? (int)(paren - e->sig) : (int)strlen(e->sig);
        fprintf(f, "  %-10.*s %-16s%s%s %10.4f ms  %d candidate%s  %s\n", oplen, e->sig, e->engine,
                e->knobs[0] ? ":" : "", e->knobs, e->ms, e->candidates, e->candidates == 1 ? " " : "s", e->when);
        if (verbose)
            fprintf(f, "      %s\n", e->sig);
    }
}

static cJSON *list_doc_json(const char *file, const cache_doc *c)
{
    cJSON *o = cJSON_CreateObject(), *entries = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "file", file);
    cJSON_AddStringToObject(o, "device", c->device);
    cJSON_AddStringToObject(o, "xdnn", c->version);
    cJSON_AddBoolToObject(o, "used", strcmp(c->version, XDNN_VERSION_STRING) == 0);
    for (int i = 0; i < c->n; i++) {
        const tune_entry *e = &c->e[i];
        const char *paren = strchr(e->sig, '(');
        cJSON *j = cJSON_CreateObject();
        char op[64];
        snprintf(op, sizeof op, "%.*s", paren ? (int)(paren - e->sig) : 63, e->sig);
        cJSON_AddStringToObject(j, "op", op);
        cJSON_AddStringToObject(j, "engine", e->engine);
        cJSON_AddStringToObject(j, "knobs", e->knobs);
        cJSON_AddNumberToObject(j, "ms", e->ms);
        cJSON_AddNumberToObject(j, "candidates", e->candidates);
        cJSON_AddStringToObject(j, "when", e->when);
        cJSON_AddStringToObject(j, "sig", e->sig);
        cJSON_AddItemToArray(entries, j);
    }
    cJSON_AddItemToObject(o, "entries", entries);
    return o;
}

xdnn_status tune_cache_list(FILE *f, bool verbose, bool json, xdnn_diags_t *d)
{
    char dir[TUNE_DIR_MAX];
    bool on = cache_dir(dir, sizeof dir);
    cJSON *root = json ? cJSON_CreateObject() : NULL, *files_j = json ? cJSON_CreateArray() : NULL;
    if (json) {
        if (on)
            cJSON_AddStringToObject(root, "dir", dir);
        else
            cJSON_AddNullToObject(root, "dir"); /* caching is off */
        cJSON_AddItemToObject(root, "files", files_j);
    } else if (!on) {
        fprintf(f, "tune cache: off (XDNN_CACHE_DIR=off, too long a name, or no HOME)\n");
    } else {
        fprintf(f, "tune cache: %s\n", dir);
    }
    DIR *dp = on ? opendir(dir) : NULL;
    int total = 0, files = 0;
    for (struct dirent *de; dp && (de = readdir(dp)) != NULL;) {
        if (!is_cache_file(de->d_name))
            continue;
        char path[TUNE_DIR_MAX + 300], why[128];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        cache_doc c;
        if (doc_read(path, &c, why, sizeof why) != XDNN_OK) {
            diag_warning(d, xloc_none(), "tune cache file '%s' is damaged (%s); 'xdnn cache clear' removes it", path,
                         why);
            continue;
        }
        files++;
        if (json)
            cJSON_AddItemToArray(files_j, list_doc_json(de->d_name, &c));
        else
            list_doc_text(f, de->d_name, &c, verbose);
        total += c.n;
        doc_free(&c);
    }
    if (dp)
        closedir(dp);
    if (json) {
        cJSON_AddNumberToObject(root, "entries", total);
        char *text = cJSON_Print(root);
        cJSON_Delete(root);
        if (!text)
            return XDNN_ERR_NOMEM;
        fprintf(f, "%s\n", text);
        free(text);
    } else {
        fprintf(f, "%s%d entr%s in %d file%s\n", files ? "\n" : "", total, total == 1 ? "y" : "ies", files,
                files == 1 ? "" : "s");
    }
    return XDNN_OK;
}

xdnn_status tune_cache_clear(int *files, int *entries, xdnn_diags_t *d)
{
    char dir[TUNE_DIR_MAX];
    *files = *entries = 0;
    if (!cache_dir(dir, sizeof dir))
        return XDNN_OK;
    DIR *dp = opendir(dir);
    if (!dp)
        return XDNN_OK;
    struct dirent *de;
    xdnn_status s = XDNN_OK;
    while ((de = readdir(dp)) != NULL) {
        if (!is_cache_file(de->d_name))
            continue;
        char path[TUNE_DIR_MAX + 300], why[128];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        cache_doc c;
        if (doc_read(path, &c, why, sizeof why) == XDNN_OK)
            *entries += c.n;
        doc_free(&c);
        if (unlink(path) != 0) {
            diag_error(d, XDNN_ERR_IO, xloc_none(), "cannot remove '%s': %s", path, strerror(errno));
            s = XDNN_ERR_IO;
        } else {
            (*files)++;
        }
    }
    closedir(dp);
    return s;
}

void tune_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

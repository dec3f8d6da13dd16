/* diag.c — collects diagnostics and prints them gcc-style with the source
 * line and a caret/underline under the offending span. */
#include "diag.h"

#include "arena.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

typedef struct source {
    const char *file;
    const char *text;
    size_t len;
} source;

struct xdnn_diags {
    arena *ar;
    xdnn_diag *items;
    size_t n, cap;
    source *sources;
    size_t nsrc, capsrc;
    size_t errors;
};

xdnn_diags_t *xdnn_diags_create(void)
{
    xdnn_diags_t *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->ar = arena_create();
    return d;
}

void xdnn_diags_destroy(xdnn_diags_t *d)
{
    if (!d)
        return;
    arena_destroy(d->ar);
    free(d);
}

size_t xdnn_diags_count(const xdnn_diags_t *d) { return d ? d->n : 0; }
size_t xdnn_diags_error_count(const xdnn_diags_t *d) { return d ? d->errors : 0; }

const xdnn_diag *xdnn_diags_get(const xdnn_diags_t *d, size_t i)
{
    return d && i < d->n ? &d->items[i] : NULL;
}

xdnn_status xdnn_diags_status(const xdnn_diags_t *d)
{
    for (size_t i = 0; d && i < d->n; i++)
        if (d->items[i].severity == XDNN_SEV_ERROR)
            return d->items[i].status ? d->items[i].status : XDNN_ERR_INTERNAL;
    return XDNN_OK;
}

bool diag_too_many(const xdnn_diags_t *d) { return d && d->errors >= DIAG_MAX_ERRORS; }

void diag_add_source(xdnn_diags_t *d, const char *file, const char *text, size_t len)
{
    if (!d || !file)
        return;
    for (size_t i = 0; i < d->nsrc; i++)
        if (strcmp(d->sources[i].file, file) == 0)
            return;
    source s = {arena_strdup(d->ar, file), arena_strndup(d->ar, text, len), len};
    VEC_PUSH(d->ar, d->sources, d->nsrc, d->capsrc, s);
}

void diag_vreport(xdnn_diags_t *d, xdnn_severity sev, xdnn_status st, xloc loc, const char *json_path,
                  const char *fmt, va_list ap)
{
    if (!d)
        return;
    xdnn_diag r = {
        .severity = sev,
        .status = st,
        .file = loc.file ? arena_strdup(d->ar, loc.file) : NULL,
        .line = loc.line,
        .col = loc.col,
        .col_end = loc.col_end >= loc.col ? loc.col_end : loc.col,
        .message = arena_vsprintf(d->ar, fmt, ap),
        .json_path = json_path ? arena_strdup(d->ar, json_path) : NULL,
    };
    VEC_PUSH(d->ar, d->items, d->n, d->cap, r);
    if (sev == XDNN_SEV_ERROR)
        d->errors++;
}

void diag_report(xdnn_diags_t *d, xdnn_severity sev, xdnn_status st, xloc loc, const char *json_path,
                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(d, sev, st, loc, json_path, fmt, ap);
    va_end(ap);
}

/* Find line `line` (1-based) of a registered source; returns its length. */
static const char *source_line(const xdnn_diags_t *d, const char *file, int line, size_t *len)
{
    for (size_t i = 0; i < d->nsrc; i++) {
        if (strcmp(d->sources[i].file, file) != 0)
            continue;
        const char *p = d->sources[i].text, *end = p + d->sources[i].len;
        for (int l = 1; l < line && p < end; l++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl)
                return NULL;
            p = nl + 1;
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        *len = (size_t)((nl ? nl : end) - p);
        if (*len && p[*len - 1] == '\r')
            (*len)--;
        return p;
    }
    return NULL;
}

static const char *severity_word(xdnn_severity s)
{
    switch (s) {
    case XDNN_SEV_ERROR: return "error";
    case XDNN_SEV_WARNING: return "warning";
    case XDNN_SEV_NOTE: return "note";
    }
    return "error";
}

void xdnn_diags_print_json(const xdnn_diags_t *d, FILE *f)
{
    for (size_t i = 0; d && i < d->n; i++) {
        const xdnn_diag *r = &d->items[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "severity", severity_word(r->severity));
        cJSON_AddStringToObject(o, "status", xdnn_status_name(r->status));
        if (r->file)
            cJSON_AddStringToObject(o, "file", r->file);
        if (r->line > 0) {
            cJSON_AddNumberToObject(o, "line", r->line);
            cJSON_AddNumberToObject(o, "col", r->col);
            cJSON_AddNumberToObject(o, "col_end", r->col_end);
        }
        if (r->json_path)
            cJSON_AddStringToObject(o, "json_path", r->json_path);
        cJSON_AddStringToObject(o, "message", r->message);
        char *line = cJSON_PrintUnformatted(o);
        if (line)
            fprintf(f, "%s\n", line);
        free(line);
        cJSON_Delete(o);
    }
}

void xdnn_diags_print(const xdnn_diags_t *d, FILE *f)
{
    /* scripts that want records, not carets, ask for JSON lines once for all
     * commands (XDNN_DIAGNOSTICS=json) */
    const char *fmt = getenv("XDNN_DIAGNOSTICS");
    if (fmt && strcmp(fmt, "json") == 0) {
        xdnn_diags_print_json(d, f);
        return;
    }
    for (size_t i = 0; d && i < d->n; i++) {
        const xdnn_diag *r = &d->items[i];
        if (r->file && r->line > 0)
            fprintf(f, "%s:%d:%d: ", r->file, r->line, r->col);
        else if (r->file)
            fprintf(f, "%s: ", r->file);
        else
            fprintf(f, "xdnn: ");
        if (r->json_path)
            fprintf(f, "%s: ", r->json_path);
        fprintf(f, "%s: %s\n", severity_word(r->severity), r->message);
        size_t len = 0;
        const char *src = r->file && r->line > 0 ? source_line(d, r->file, r->line, &len) : NULL;
        if (!src)
            continue;
        fprintf(f, "%5d | %.*s\n      | ", r->line, (int)len, src);
        /* Tabs in the source are echoed so the caret lines up. */
        for (int c = 1; c < r->col && (size_t)(c - 1) < len; c++)
            fputc(src[c - 1] == '\t' ? '\t' : ' ', f);
        fputc('^', f);
        for (int c = r->col + 1; c <= r->col_end; c++)
            fputc('~', f);
        fputc('\n', f);
    }
}

const char *xdnn_status_name(xdnn_status s)
{
    switch (s) {
    case XDNN_OK: return "ok";
    case XDNN_ERR_USAGE: return "usage";
    case XDNN_ERR_SYNTAX: return "syntax";
    case XDNN_ERR_SEMANTIC: return "semantic";
    case XDNN_ERR_UNSUPPORTED: return "unsupported";
    case XDNN_ERR_IO: return "io";
    case XDNN_ERR_CHECK: return "check-failed";
    case XDNN_ERR_DEVICE: return "device";
    case XDNN_ERR_NOMEM: return "out-of-memory";
    case XDNN_ERR_INTERNAL: return "internal";
    }
    return "unknown";
}

void xdnn_diags_add(xdnn_diags_t *d, xdnn_severity sev, xdnn_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(d, sev, status, xloc_none(), NULL, fmt, ap);
    va_end(ap);
}

/* json_read.c — reading the JSON form of a module: the entry point (cJSON
 * parse, syntax errors with line:col), the module object, params and
 * asserts.  Graphs are read in json_read_graph.c; the value rule and the
 * error helpers are in json_value.c; the format is described at the top of
 * json_write.c.
 *
 * Every error names the JSON pointer of the offending value and its line:col.
 * Schema errors (wrong JSON type, unknown or missing key) are syntax errors;
 * name errors (unknown op, tensor, port, duplicates) are semantic.  Reading
 * goes on after an error, up to DIAG_MAX_ERRORS.
 */
#include "json.h"

#include "json_read.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- params, asserts */

/* A param value mentions another param (inf and nan are constants). */
static bool mentions_name(const expr *e)
{
    if (e->kind == EX_IDENT)
        return strcmp(e->s, "inf") != 0 && strcmp(e->s, "nan") != 0;
    for (int i = 0; i < e->nargs; i++)
        if (mentions_name(e->args[i]))
            return true;
    return false;
}

static void jr_param(jreader *r, const cJSON *item, xgraph *g)
{
    static const char *const keys[] = {"value", "expr", "sweep", "loc", NULL};
    const char *name = item->string;
    if (!dnn_is_plain_ident(name)) {
        jr_err(r, item, true, XDNN_ERR_SEMANTIC, "param name \"%s\" is not an identifier", name);
        return;
    }
    if (ir_find_param(r->m, g, name)) {
        jr_err(r, item, true, XDNN_ERR_SEMANTIC, "param '%s' is already defined", name);
        return;
    }
    if (!jr_want_object(r, item, "a param object {\"value\": ...} or {\"expr\": ...}") ||
        !jr_keys(r, item, keys, NULL))
        return;
    const cJSON *v = jr_get(item, "value"), *x = jr_get(item, "expr"), *sw = jr_get(item, "sweep");
    if (!v == !x) {
        jr_err(r, item, false, XDNN_ERR_SYNTAX, "a param has exactly one of \"value\" and \"expr\"");
        return;
    }
    xparam p = {.name = arena_strdup(r->ar, name), .loc = jr_loc(r, item, true)};
    size_t mark = jr_push_key(r, v ? "value" : "expr");
    if (v)
        p.value = jr_value(r, v, false, "a param value");
    else if (jr_want_string(r, x, "an expression string"))
        p.value = jr_expr_text(r, x);
    jr_pop(r, mark);
    bool ok = p.value != NULL && jr_loc_field(r, item, &p.loc);
    if (p.value)
        p.derived = mentions_name(p.value);
    if (sw) {
        mark = jr_push_key(r, "sweep");
        if (jr_want_array(r, sw, "a list of sweep values")) {
            if (p.derived)
                ok = jr_err(r, sw, true, XDNN_ERR_SEMANTIC,
                            "param '%s' is derived from other params, so it cannot have a sweep list", name);
            int n = cJSON_GetArraySize(sw), i = 0;
            p.sweep = arena_alloc(r->ar, sizeof *p.sweep * (size_t)(n ? n : 1));
            for (const cJSON *c = sw->child; c; c = c->next, i++) {
                size_t m2 = jr_push_index(r, (size_t)i);
                p.sweep[i] = jr_value(r, c, false, "a sweep value");
                ok &= p.sweep[i] != NULL;
                jr_pop(r, m2);
            }
            p.nsweep = n;
        } else {
            ok = false;
        }
        jr_pop(r, mark);
    }
    if (!ok)
        return;
    ir_add_param(r->m, g, p);
}

void jr_params(jreader *r, const cJSON *item, xgraph *g)
{
    if (!jr_want_object(r, item, "an object of params") || !jr_no_duplicate_keys(r, item))
        return;
    for (const cJSON *c = item->child; c && !jr_too_many(r); c = c->next) {
        size_t mark = jr_push_key(r, c->string);
        jr_param(r, c, g);
        jr_pop(r, mark);
    }
}

void jr_asserts(jreader *r, const cJSON *item, xgraph *g)
{
    static const char *const keys[] = {"expr", "msg", "loc", NULL};
    static const char *const required[] = {"expr", NULL};
    if (!jr_want_array(r, item, "a list of asserts"))
        return;
    size_t i = 0;
    for (const cJSON *c = item->child; c && !jr_too_many(r); c = c->next, i++) {
        size_t mark = jr_push_index(r, i);
        if (jr_want_object(r, c, "an assert object {\"expr\": ...}") && jr_keys(r, c, keys, required)) {
            xassert a = {.loc = jr_loc(r, c, false)};
            const cJSON *x = jr_get(c, "expr"), *msg = jr_get(c, "msg");
            size_t m2 = jr_push_key(r, "expr");
            if (jr_want_string(r, x, "an expression string"))
                a.cond = jr_expr_text(r, x);
            jr_pop(r, m2);
            bool ok = a.cond != NULL && jr_loc_field(r, c, &a.loc);
            if (msg) {
                m2 = jr_push_key(r, "msg");
                if (jr_want_string(r, msg, "a message string"))
                    a.msg = arena_strdup(r->ar, msg->valuestring);
                else
                    ok = false;
                jr_pop(r, m2);
            }
            if (ok && g)
                VEC_PUSH(r->ar, g->asserts, g->nasserts, g->capasserts, a);
            else if (ok)
                VEC_PUSH(r->ar, r->m->asserts, r->m->nasserts, r->m->capasserts, a);
        }
        jr_pop(r, mark);
    }
}

/* ---------------------------------------------------------------- module */

static void jr_sources(jreader *r, const cJSON *item)
{
    if (!jr_want_array(r, item, "a list of file names"))
        return;
    size_t i = 0;
    for (const cJSON *c = item->child; c; c = c->next, i++) {
        size_t mark = jr_push_index(r, i);
        if (jr_want_string(r, c, "a file name")) {
            bool seen = false;
            for (size_t k = 0; k < r->m->nsources; k++)
                seen |= strcmp(r->m->sources[k], c->valuestring) == 0;
            if (!seen) {
                const char *s = arena_strdup(r->ar, c->valuestring);
                VEC_PUSH(r->ar, r->m->sources, r->m->nsources, r->m->capsources, s);
            }
        }
        jr_pop(r, mark);
    }
}

static void jr_module(jreader *r, const cJSON *root)
{
    static const char *const keys[] = {"format", "version", "sources", "default_graph",
                                       "params", "asserts", "graphs",  NULL};
    static const char *const required[] = {"format", "version", NULL};
    if (!jr_want_object(r, root, "a JSON object at the top level"))
        return;
    if (!jr_keys(r, root, keys, required))
        return;
    const cJSON *fmt = jr_get(root, "format"), *ver = jr_get(root, "version");
    size_t mark = jr_push_key(r, "format");
    if (jr_want_string(r, fmt, "\"xdnn-graph\"") && strcmp(fmt->valuestring, "xdnn-graph") != 0)
        jr_err(r, fmt, false, XDNN_ERR_SYNTAX, "expected \"xdnn-graph\", got %s", jr_describe(r, fmt));
    jr_pop(r, mark);
    mark = jr_push_key(r, "version");
    int64_t v = 0;
    if (jr_int(r, ver, "version 1", &v) && v != 1)
        jr_err(r, ver, false, XDNN_ERR_SYNTAX, "unsupported version %lld (this xdnn reads version 1)",
               (long long)v);
    jr_pop(r, mark);
    if (r->errors)
        return; /* not our format: the rest would only add noise */

    static const char *const parts[] = {"sources", "params", "asserts", "graphs"};
    for (size_t p = 0; p < sizeof parts / sizeof parts[0] && !jr_too_many(r); p++) {
        const cJSON *item = jr_get(root, parts[p]);
        if (!item)
            continue;
        mark = jr_push_key(r, parts[p]);
        if (p == 0)
            jr_sources(r, item);
        else if (p == 1)
            jr_params(r, item, NULL);
        else if (p == 2)
            jr_asserts(r, item, NULL);
        else if (jr_want_array(r, item, "a list of graphs")) {
            size_t i = 0;
            for (const cJSON *c = item->child; c && !jr_too_many(r); c = c->next, i++) {
                size_t m2 = jr_push_index(r, i);
                jr_graph(r, c);
                jr_pop(r, m2);
            }
        }
        jr_pop(r, mark);
    }

    const cJSON *dg = jr_get(root, "default_graph");
    if (dg) {
        mark = jr_push_key(r, "default_graph");
        if (jr_want_string(r, dg, "a graph name")) {
            int found = -1;
            for (size_t i = 0; i < r->m->ngraphs; i++)
                if (strcmp(r->m->graphs[i]->name, dg->valuestring) == 0)
                    found = (int)i;
            if (found < 0)
                jr_err(r, dg, false, XDNN_ERR_SEMANTIC, "unknown graph \"%s\"", dg->valuestring);
            else
                r->m->default_graph = found;
        }
        jr_pop(r, mark);
    }
}

/* ---------------------------------------------------------------- entry */

/* Report a syntax error at byte `off` (line and column counted in bytes). */
static void syntax_error(jreader *r, size_t off, const char *msg)
{
    if (off > r->len)
        off = r->len;
    int line = 1, col = 1;
    for (size_t i = 0; i < off; i++) {
        if (r->text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    diag_error(r->d, XDNN_ERR_SYNTAX, ((xloc){r->file, line, col, col}), "JSON syntax error: %s", msg);
    r->errors++;
    r->first = XDNN_ERR_SYNTAX;
}

/* Where each line starts, so a location costs a binary search instead of a
 * rescan from the top (80k located values took minutes).  Left NULL on OOM:
 * offset_loc then falls back to scanning. */
static void index_lines(jreader *r)
{
    size_t n = 1;
    for (size_t i = 0; i < r->len; i++)
        n += r->text[i] == '\n';
    r->line_starts = malloc(n * sizeof *r->line_starts);
    if (!r->line_starts)
        return;
    r->line_starts[0] = 0;
    r->nlines = 1;
    for (size_t i = 0; i < r->len; i++)
        if (r->text[i] == '\n')
            r->line_starts[r->nlines++] = (long)i + 1;
}

xdnn_status json_read_into(xdnn_module_t *m, const char *file, const char *text, size_t len,
                           xdnn_diags_t *d)
{
    jreader r = {.m = m, .ar = m->ar, .d = d, .file = arena_strdup(m->ar, file ? file : "<json>")};
    diag_add_source(d, r.file, text, len);
    char *buf = malloc(len + 1);
    if (!buf) {
        diag_error(d, XDNN_ERR_NOMEM, xloc_none(), "out of memory reading %s", r.file);
        return XDNN_ERR_NOMEM;
    }
    memcpy(buf, text, len);
    buf[len] = 0;
    r.text = buf;
    r.len = len;
    index_lines(&r);

    size_t off = 0;
    const char *msg = NULL;
    char msgbuf[128];
    cJSON *root = NULL;
    if (!json_syntax_check(buf, len, &off, &msg, msgbuf, sizeof msgbuf)) {
        syntax_error(&r, off, msg);
    } else if (!(root = cJSON_ParseWithOpts(buf, NULL, 1))) {
        /* The strict check passed, so this is cJSON running out of memory. */
        diag_error(d, XDNN_ERR_NOMEM, ((xloc){.file = r.file}), "out of memory parsing the JSON text");
        r.errors++;
        r.first = XDNN_ERR_NOMEM;
    } else {
        jpos_build(&r.pos, buf, len, root);
        jr_module(&r, root);
    }
    cJSON_Delete(root);
    jpos_free(&r.pos);
    free(r.line_starts);
    free(r.path.s);
    free(buf);
    return r.errors ? r.first : XDNN_OK;
}

/* json_value.c — the JSON reader's helpers: JSON pointer paths, errors with
 * line:col, schema checks (types, keys), and values by the value rule
 * documented at the top of json_write.c. */
#include "json_read.h"

#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- paths */

size_t jr_push_key(jreader *r, const char *key)
{
    size_t mark = r->path.n;
    sb_putc(&r->path, '/');
    for (const char *p = key; *p; p++) {
        if (*p == '~')
            sb_puts(&r->path, "~0");
        else if (*p == '/')
            sb_puts(&r->path, "~1");
        else
            sb_putc(&r->path, *p);
    }
    return mark;
}

size_t jr_push_index(jreader *r, size_t i)
{
    size_t mark = r->path.n;
    sb_printf(&r->path, "/%zu", i);
    return mark;
}

void jr_pop(jreader *r, size_t mark)
{
    if (r->path.s && mark <= r->path.n) {
        r->path.n = mark;
        r->path.s[mark] = 0;
    }
}

/* ---------------------------------------------------------------- errors */

static xloc offset_loc(const jreader *r, long off, long n)
{
    if (off < 0 || (size_t)off > r->len)
        return (xloc){.file = r->file};
    int line = 1;
    long bol = 0;
    if (r->line_starts) {
        /* the last line starting at or before off (line_starts[0] == 0) */
        size_t lo = 0, hi = r->nlines;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (r->line_starts[mid] <= off)
                lo = mid;
            else
                hi = mid;
        }
        line = (int)lo + 1;
        bol = r->line_starts[lo];
    } else {
        for (long i = 0; i < off; i++)
            if (r->text[i] == '\n') {
                line++;
                bol = i + 1;
            }
    }
    int col = (int)(off - bol) + 1;
    int end = col;
    for (long i = off; i < off + n - 1 && r->text[i] && r->text[i] != '\n'; i++)
        end++;
    return (xloc){r->file, line, col, end};
}

xloc jr_loc(const jreader *r, const cJSON *item, bool key)
{
    const jspan *sp = jpos_get(&r->pos, item);
    if (!sp)
        return (xloc){.file = r->file};
    if (key && sp->key_off >= 0) {
        size_t klen = item->string ? strlen(item->string) + 2 : 1;
        return offset_loc(r, sp->key_off, (long)klen);
    }
    /* Underline scalars whole; containers only at their opening bracket. */
    bool container = cJSON_IsArray(item) || cJSON_IsObject(item);
    return offset_loc(r, sp->val_off, container ? 1 : sp->val_len);
}

bool jr_too_many(const jreader *r) { return diag_too_many(r->d); }

bool jr_err(jreader *r, const cJSON *at, bool at_key, xdnn_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(r->d, XDNN_SEV_ERROR, st, jr_loc(r, at, at_key), r->path.n ? r->path.s : NULL, fmt,
                 ap);
    va_end(ap);
    if (!r->errors++)
        r->first = st;
    return false;
}

/* ---------------------------------------------------------------- schema */

const char *jr_describe(jreader *r, const cJSON *item)
{
    if (cJSON_IsString(item)) {
        const char *s = item->valuestring;
        if (strlen(s) > 40)
            return arena_sprintf(r->ar, "string \"%.37s...\"", s);
        return arena_sprintf(r->ar, "string \"%s\"", s);
    }
    if (cJSON_IsNumber(item)) {
        const jspan *sp = jpos_get(&r->pos, item);
        if (sp && sp->val_len > 0 && sp->val_len < 64)
            return arena_sprintf(r->ar, "number %.*s", (int)sp->val_len, r->text + sp->val_off);
        return arena_sprintf(r->ar, "number %g", item->valuedouble);
    }
    if (cJSON_IsTrue(item))
        return "true";
    if (cJSON_IsFalse(item))
        return "false";
    if (cJSON_IsNull(item))
        return "null";
    if (cJSON_IsArray(item))
        return "an array";
    if (cJSON_IsObject(item))
        return "an object";
    return "nothing";
}

bool jr_want_object(jreader *r, const cJSON *item, const char *what)
{
    if (cJSON_IsObject(item))
        return true;
    return jr_err(r, item, false, XDNN_ERR_SYNTAX, "expected %s, got %s", what, jr_describe(r, item));
}

bool jr_want_array(jreader *r, const cJSON *item, const char *what)
{
    if (cJSON_IsArray(item))
        return true;
    return jr_err(r, item, false, XDNN_ERR_SYNTAX, "expected %s, got %s", what, jr_describe(r, item));
}

bool jr_want_string(jreader *r, const cJSON *item, const char *what)
{
    if (cJSON_IsString(item))
        return true;
    return jr_err(r, item, false, XDNN_ERR_SYNTAX, "expected %s, got %s", what, jr_describe(r, item));
}

const cJSON *jr_get(const cJSON *obj, const char *key)
{
    for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next)
        if (c->string && strcmp(c->string, key) == 0)
            return c;
    return NULL;
}

static bool in_list(const char *k, const char *const *list)
{
    for (; list && *list; list++)
        if (strcmp(*list, k) == 0)
            return true;
    return false;
}

typedef struct keyref {
    const cJSON *item;
    size_t order;
} keyref;

static int keyref_cmp(const void *a, const void *b)
{
    const keyref *x = a, *y = b;
    int c = strcmp(x->item->string, y->item->string);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* Sorting keeps this O(n log n) for objects with many tensors. */
bool jr_no_duplicate_keys(jreader *r, const cJSON *obj)
{
    size_t n = (size_t)cJSON_GetArraySize(obj), i = 0;
    if (n < 2)
        return true;
    keyref *keys = malloc(n * sizeof *keys);
    if (!keys)
        return true; /* duplicates then surface as "defined twice" further on */
    for (const cJSON *c = obj->child; c; c = c->next, i++)
        keys[i] = (keyref){c, i};
    qsort(keys, n, sizeof *keys, keyref_cmp);
    bool ok = true;
    for (i = 1; i < n && !jr_too_many(r); i++) {
        if (strcmp(keys[i].item->string, keys[i - 1].item->string) != 0)
            continue;
        size_t first = i - 1;
        while (first > 0 && strcmp(keys[first - 1].item->string, keys[i].item->string) == 0)
            first--;
        size_t mark = jr_push_key(r, keys[i].item->string);
        ok = jr_err(r, keys[i].item, true, XDNN_ERR_SYNTAX, "duplicate key \"%s\" (first at line %d)",
                    keys[i].item->string, jr_loc(r, keys[first].item, true).line);
        jr_pop(r, mark);
    }
    free(keys);
    return ok;
}

bool jr_keys(jreader *r, const cJSON *obj, const char *const *allowed, const char *const *required)
{
    bool ok = jr_no_duplicate_keys(r, obj);
    for (const cJSON *c = obj->child; c; c = c->next) {
        if (in_list(c->string, allowed) || jr_is_ext_key(c->string))
            continue;
        char *list = NULL;
        for (const char *const *a = allowed; *a; a++)
            list = list ? arena_sprintf(r->ar, "%s, %s", list, *a) : arena_strdup(r->ar, *a);
        size_t mark = jr_push_key(r, c->string);
        ok = jr_err(r, c, true, XDNN_ERR_SYNTAX, "unknown key \"%s\" (expected one of: %s; extensions start with \"x-\")",
                    c->string, list ? list : "none");
        jr_pop(r, mark);
    }
    for (; required && *required; required++)
        if (!jr_get(obj, *required))
            ok = jr_err(r, obj, false, XDNN_ERR_SYNTAX, "missing key \"%s\"", *required);
    return ok;
}

/* ---------------------------------------------------------------- values */

/* The number's lexeme as written (cJSON keeps only a double). */
static const char *lexeme(jreader *r, const cJSON *item)
{
    const jspan *sp = jpos_get(&r->pos, item);
    if (sp && sp->val_len > 0)
        return arena_strndup(r->ar, r->text + sp->val_off, (size_t)sp->val_len);
    return arena_sprintf(r->ar, "%.17g", item->valuedouble);
}

/* Strict JSON number syntax; cJSON also takes 01, 1. and -.5. */
static bool strict_json_number(const char *s, bool *is_float)
{
    const char *p = s;
    *is_float = false;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        *is_float = true;
        if (!(*++p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        *is_float = true;
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == 0;
}

static expr *number_expr(jreader *r, const cJSON *item)
{
    const char *lx = lexeme(r, item);
    bool is_float;
    xloc loc = jr_loc(r, item, false);
    if (!strict_json_number(lx, &is_float)) {
        jr_err(r, item, false, XDNN_ERR_SYNTAX, "invalid JSON number '%s'", lx);
        return NULL;
    }
    if (!is_float) {
        errno = 0;
        long long v = strtoll(lx, NULL, 10);
        if (errno == ERANGE) {
            jr_err(r, item, false, XDNN_ERR_SEMANTIC, "integer %s is out of range (64-bit)", lx);
            return NULL;
        }
        return expr_int(r->ar, (int64_t)v, loc);
    }
    double f = strtod(lx, NULL);
    if (!isfinite(f)) {
        jr_err(r, item, false, XDNN_ERR_SEMANTIC, "number %s is out of range (use {\"expr\": \"inf\"})", lx);
        return NULL;
    }
    expr *e = expr_float(r->ar, f, loc);
    e->text = lx;
    return e;
}

/* An int literal is a JSON number without '.' or exponent. */
bool jr_is_int_json(jreader *r, const cJSON *j)
{
    if (!cJSON_IsNumber(j))
        return false;
    const jspan *sp = jpos_get(&r->pos, j);
    if (!sp)
        return j->valuedouble == (double)(int64_t)j->valuedouble;
    for (long i = 0; i < sp->val_len; i++)
        if (strchr(".eE", r->text[sp->val_off + i]))
            return false;
    return true;
}

bool jr_int(jreader *r, const cJSON *item, const char *what, int64_t *out)
{
    if (!cJSON_IsNumber(item))
        return jr_err(r, item, false, XDNN_ERR_SYNTAX, "expected %s, got %s", what, jr_describe(r, item));
    int before = r->errors;
    expr *e = number_expr(r, item);
    if (!e)
        return false;
    if (e->kind != EX_INT)
        return jr_err(r, item, false, XDNN_ERR_SYNTAX, "expected %s, got %s", what, jr_describe(r, item));
    *out = e->i;
    return r->errors == before;
}

static bool tensor_visible(const jreader *r, int ti)
{
    const xtensor *t = &r->g->tensors[ti];
    switch (r->scope) {
    case CT_NO_TENSORS: return false;
    case CT_BEFORE: return (size_t)ti < r->scope_limit;
    case CT_DEFINED: return t->kind != TK_VIRTUAL || t->producer >= 0;
    case CT_ALL: return true;
    }
    return false;
}

/* What the .dnn front end checks in a compile-time expression of a graph
 * (lower_ct): names of tensors only inside dim(t, i), of a tensor defined
 * by then, and only the built-in functions. */
static bool ct_check(jreader *r, const cJSON *at, const expr *e)
{
    static const char *const builtins[] = {"sqrt", "exp", "log", "min", "max", "abs", "ceil", "floor", "dim"};
    if (e->kind == EX_IDENT && ir_find_tensor(r->g, e->s) >= 0)
        return jr_err(r, at, false, XDNN_ERR_SEMANTIC, "'%s' is a tensor; a compile-time value is expected here",
                      e->s);
    if (e->kind == EX_CALL) {
        bool known = false;
        for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
            known |= strcmp(builtins[i], e->s) == 0;
        if (!known)
            return jr_err(r, at, false, XDNN_ERR_SEMANTIC,
                          "unknown function '%s'; the compile-time functions are sqrt, exp, log, min, max, abs, "
                          "ceil, floor and dim",
                          e->s);
        if (strcmp(e->s, "dim") == 0) {
            bool named = e->names && (e->names[0] || (e->nargs > 1 && e->names[1]));
            if (e->nargs != 2 || named || e->args[0]->kind != EX_IDENT)
                return jr_err(r, at, false, XDNN_ERR_SEMANTIC, "dim takes a tensor and an axis: dim(x, 0)");
            int ti = ir_find_tensor(r->g, e->args[0]->s);
            if (ti < 0 || !tensor_visible(r, ti))
                return jr_err(r, at, false, XDNN_ERR_SEMANTIC, "dim(): '%s' is not a tensor defined before this point",
                              e->args[0]->s);
            return ct_check(r, at, e->args[1]);
        }
    }
    for (int i = 0; i < e->nargs; i++)
        if (!ct_check(r, at, e->args[i]))
            return false;
    return true;
}

expr *jr_expr_text(jreader *r, const cJSON *item)
{
    xloc base = jr_loc(r, item, false);
    if (base.line > 0)
        base.col++; /* past the opening quote */
    int before = (int)xdnn_diags_error_count(r->d);
    expr *e = expr_parse_text(r->ar, item->valuestring, base, r->d);
    if (!e) {
        /* The parser reported the error itself; say where it sits in the JSON. */
        if ((int)xdnn_diags_error_count(r->d) == before)
            jr_err(r, item, false, XDNN_ERR_SYNTAX, "invalid expression \"%s\"", item->valuestring);
        else {
            diag_report(r->d, XDNN_SEV_NOTE, XDNN_OK, jr_loc(r, item, false), r->path.n ? r->path.s : NULL,
                        "in this expression");
            if (!r->errors++)
                r->first = XDNN_ERR_SYNTAX;
        }
    }
    if (e && r->g && !ct_check(r, item, e))
        return NULL;
    return e;
}

/* A value that .dnn text writes as a call's argument (an initializer's, a node's attribute or port): the call
 * is one level more, and the parser takes trees of at most EXPR_MAX_DEPTH. */
expr *jr_call_arg(jreader *r, const cJSON *item, expr *e)
{
    if (e && e->depth > EXPR_MAX_DEPTH - 1) {
        jr_err(r, item, false, XDNN_ERR_SEMANTIC, "expression nests too deeply for a call's argument (more than "
               "%d levels)", EXPR_MAX_DEPTH - 1);
        return NULL;
    }
    return e;
}

expr *jr_value(jreader *r, const cJSON *item, bool dtype_names, const char *what)
{
    xloc loc = jr_loc(r, item, false);
    if (cJSON_IsNumber(item))
        return number_expr(r, item);
    if (cJSON_IsBool(item))
        return expr_bool(r->ar, cJSON_IsTrue(item), loc);
    if (cJSON_IsString(item)) {
        if (!dtype_names)
            return expr_string(r->ar, item->valuestring, loc);
        xdnn_dtype dt;
        if (!xdnn_dtype_from_name(item->valuestring, &dt)) {
            jr_err(r, item, false, XDNN_ERR_SEMANTIC, "unknown dtype \"%s\"", item->valuestring);
            return NULL;
        }
        return expr_dtype(r->ar, dt, loc);
    }
    if (cJSON_IsArray(item)) {
        int n = cJSON_GetArraySize(item), i = 0;
        expr **items = arena_alloc(r->ar, sizeof *items * (size_t)(n ? n : 1));
        bool ok = true;
        for (const cJSON *c = item->child; c; c = c->next, i++) {
            size_t mark = jr_push_index(r, (size_t)i);
            items[i] = jr_value(r, c, false, "a list item");
            ok &= items[i] != NULL;
            jr_pop(r, mark);
        }
        expr *list = ok ? expr_list(r->ar, items, n, loc) : NULL;
        if (list && list->depth > EXPR_MAX_DEPTH) { /* arrays of {"expr"} strings, each within the limit */
            jr_err(r, item, false, XDNN_ERR_SEMANTIC, "the list nests too deeply (more than %d levels)",
                   EXPR_MAX_DEPTH);
            return NULL;
        }
        return list;
    }
    if (cJSON_IsObject(item)) {
        static const char *const keys[] = {"expr", NULL};
        if (!jr_keys(r, item, keys, keys))
            return NULL;
        const cJSON *t = jr_get(item, "expr");
        size_t mark = jr_push_key(r, "expr");
        expr *e = jr_want_string(r, t, "an expression string") ? jr_expr_text(r, t) : NULL;
        jr_pop(r, mark);
        return e;
    }
    jr_err(r, item, false, XDNN_ERR_SYNTAX, "expected %s, got %s", what, jr_describe(r, item));
    return NULL;
}

/* ---------------------------------------------------------------- loc, init */

bool jr_loc_field(jreader *r, const cJSON *obj, xloc *out)
{
    const cJSON *l = jr_get(obj, "loc");
    if (!l)
        return true;
    size_t mark = jr_push_key(r, "loc");
    bool ok = jr_want_string(r, l, "\"file:line:col\"");
    const char *s = ok ? l->valuestring : "";
    const char *c2 = strrchr(s, ':');
    const char *c1 = c2 && c2 > s ? memrchr(s, ':', (size_t)(c2 - s)) : NULL;
    char *end1 = NULL, *end2 = NULL;
    long line = c1 ? strtol(c1 + 1, &end1, 10) : 0, col = c2 ? strtol(c2 + 1, &end2, 10) : 0;
    if (ok && (!c1 || c1 == s || end1 != c2 || *end2 || line <= 0 || col <= 0 || line > INT32_MAX ||
               col > INT32_MAX))
        ok = jr_err(r, l, false, XDNN_ERR_SYNTAX, "expected \"file:line:col\", got %s", jr_describe(r, l));
    jr_pop(r, mark);
    if (!ok)
        return false;
    size_t flen = (size_t)(c1 - s);
    const char *file = NULL;
    if (r->last_loc_file && strlen(r->last_loc_file) == flen && memcmp(r->last_loc_file, s, flen) == 0)
        file = r->last_loc_file;
    for (size_t i = 0; !file && i < r->m->nsources; i++)
        if (strlen(r->m->sources[i]) == flen && memcmp(r->m->sources[i], s, flen) == 0)
            file = r->m->sources[i];
    if (!file)
        file = arena_strndup(r->ar, s, flen);
    r->last_loc_file = file;
    *out = (xloc){file, (int)line, (int)col, (int)col};
    return true;
}

xinit *jr_init(jreader *r, const cJSON *item)
{
    if (!jr_want_object(r, item, "an initializer object {\"fn\": ...}") || !jr_no_duplicate_keys(r, item))
        return NULL;
    const cJSON *fn = jr_get(item, "fn");
    if (!fn) {
        jr_err(r, item, false, XDNN_ERR_SYNTAX, "missing key \"fn\"");
        return NULL;
    }
    size_t mark = jr_push_key(r, "fn");
    const init_spec *spec = NULL;
    if (jr_want_string(r, fn, "an initializer name") && !(spec = init_spec_find(fn->valuestring)))
        jr_err(r, fn, false, XDNN_ERR_SEMANTIC,
               "unknown initializer \"%s\" (known: uniform, randn, fill, zeros, ones, arange, values, load)",
               fn->valuestring);
    jr_pop(r, mark);
    if (!spec)
        return NULL;
    xinit *in = arena_alloc(r->ar, sizeof *in);
    in->fn = spec->fn;
    in->loc = jr_loc(r, item, false);
    int n = cJSON_GetArraySize(item);
    in->names = arena_alloc(r->ar, sizeof *in->names * (size_t)n);
    in->args = arena_alloc(r->ar, sizeof *in->args * (size_t)n);
    bool ok = jr_loc_field(r, item, &in->loc);
    for (const cJSON *c = item->child; c; c = c->next) {
        if (strcmp(c->string, "fn") == 0 || strcmp(c->string, "loc") == 0 || jr_is_ext_key(c->string))
            continue;
        const char *name = NULL;
        for (int p = 0; p < spec->nparams; p++)
            if (strcmp(spec->params[p], c->string) == 0)
                name = spec->params[p];
        mark = jr_push_key(r, c->string);
        if (!name) {
            char *list = NULL;
            for (int p = 0; p < spec->nparams; p++)
                list = list ? arena_sprintf(r->ar, "%s, %s", list, spec->params[p])
                            : arena_strdup(r->ar, spec->params[p]);
            ok = jr_err(r, c, true, XDNN_ERR_SEMANTIC, "%s has no argument \"%s\" (it takes: %s)", spec->fn,
                        c->string, list ? list : "none");
        } else {
            expr *e = jr_call_arg(r, c, jr_value(r, c, false, "an initializer argument"));
            if (e) {
                in->names[in->nargs] = name;
                in->args[in->nargs++] = e;
            } else {
                ok = false;
            }
        }
        jr_pop(r, mark);
    }
    return ok ? in : NULL;
}

/* parse.c — runs the flex/bison front end: whole files (handed on to the
 * lowering in lower.c), standalone expressions, initializer calls and keyword
 * lists, plus the table of initializers and their parameter names. */
#include "parse.h"

#include "ast.h"
#include "lower.h"

#include "parser.h"
#define YYSTYPE DNNSTYPE
#define YYLTYPE DNNLTYPE
#include "lexer.h"

#include <stdarg.h>
#include <string.h>

void ast_list_push(arena *a, ast_list *l, void *item)
{
    VEC_PUSH(a, l->items, l->n, l->cap, item);
}

void ps_error(pstate *ps, xloc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(ps->diags, XDNN_SEV_ERROR, XDNN_ERR_SYNTAX, loc, NULL, fmt, ap);
    va_end(ap);
    ps->errors++;
}

/* Keyword names carry their location just before the characters, so that
 * lowering can underline `stride` in `stride=x` although an expr keeps only
 * the name.  Only names made by ast_kwname may be passed to ast_kwname_loc. */
typedef struct kwname {
    xloc loc;
    char text[];
} kwname;

const char *ast_kwname(arena *a, const char *name, xloc loc)
{
    size_t n = strlen(name);
    kwname *k = arena_alloc(a, sizeof *k + n + 1);
    k->loc = loc;
    memcpy(k->text, name, n + 1);
    return k->text;
}

xloc ast_kwname_loc(const char *name)
{
    const kwname *k = (const kwname *)(const void *)(name - offsetof(kwname, text));
    return k->loc;
}

int ast_parse(pstate *ps, const char *text, size_t len)
{
    static const int start[] = {[PARSE_FILE] = START_FILE, [PARSE_EXPR] = START_EXPR,
                                [PARSE_KWARGS] = START_KWARGS};
    ps->start_token = start[ps->mode];
    ps->line = 1;
    ps->col = 1;
    yyscan_t scanner;
    if (dnnlex_init_extra(ps, &scanner) != 0) {
        ps_error(ps, (xloc){.file = ps->file}, "cannot start the lexer");
        return ps->errors;
    }
    YY_BUFFER_STATE buf = dnn_scan_bytes(text, (int)len, scanner);
    int rc = dnnparse(scanner, ps);
    dnn_delete_buffer(buf, scanner);
    dnnlex_destroy(scanner);
    if (rc != 0 && ps->errors == 0)
        ps_error(ps, (xloc){.file = ps->file}, "the parser gave up (memory exhausted)");
    return ps->errors;
}

static pstate ps_for_text(arena *a, xloc base, xdnn_diags_t *d, parse_mode mode)
{
    pstate ps = {.ar = a, .diags = d, .file = base.file, .mode = mode};
    if (base.line > 0) {
        ps.line_base = base.line - 1;
        ps.col_base = base.col > 0 ? base.col - 1 : 0;
    }
    return ps;
}

expr *expr_parse_text(arena *a, const char *text, xloc base, xdnn_diags_t *d)
{
    pstate ps = ps_for_text(a, base, d, PARSE_EXPR);
    if (ast_parse(&ps, text, strlen(text)) != 0)
        return NULL;
    return ps.expr_result;
}

xinit *init_parse_text(arena *a, const char *text, xloc base, xdnn_diags_t *d)
{
    expr *e = expr_parse_text(a, text, base, d);
    return e ? init_from_call(a, e, d, NULL) : NULL;
}

bool kwargs_parse_text(arena *a, const char *text, xloc base, xdnn_diags_t *d, const char ***names,
                       expr ***values, int *n)
{
    *names = NULL;
    *values = NULL;
    *n = 0;
    pstate ps = ps_for_text(a, base, d, PARSE_KWARGS);
    if (ast_parse(&ps, text, strlen(text)) != 0)
        return false;
    int k = ps.kwargs.n;
    const char **nm = arena_alloc(a, sizeof *nm * (size_t)(k ? k : 1));
    expr **vals = arena_alloc(a, sizeof *vals * (size_t)(k ? k : 1));
    for (int i = 0; i < k; i++) {
        const ast_arg *arg = ps.kwargs.items[i];
        nm[i] = arg->name;
        vals[i] = arg->e;
    }
    *names = nm;
    *values = vals;
    *n = k;
    return true;
}

/* ---------------------------------------------------------------- initializers */

static const char *const p_uniform[] = {"lo", "hi", "seed"};
static const char *const p_randn[] = {"mean", "std", "seed"};
static const char *const p_fill[] = {"value"};
static const char *const p_arange[] = {"start", "step"};
static const char *const p_values[] = {"data"};
static const char *const p_load[] = {"path", "key", "format", "layout", "dtype"};

static const init_spec init_specs[] = {
    {"uniform", p_uniform, 3}, {"randn", p_randn, 3},   {"fill", p_fill, 1},     {"zeros", NULL, 0},
    {"ones", NULL, 0},         {"arange", p_arange, 2}, {"values", p_values, 1}, {"load", p_load, 5},
};

const init_spec *init_spec_find(const char *fn)
{
    for (size_t i = 0; i < sizeof init_specs / sizeof init_specs[0]; i++)
        if (strcmp(init_specs[i].fn, fn) == 0)
            return &init_specs[i];
    return NULL;
}

static char *init_signature(arena *a, const init_spec *s)
{
    char *out = arena_sprintf(a, "%s(", s->fn);
    for (int i = 0; i < s->nparams; i++)
        out = arena_sprintf(a, "%s%s%s", out, i ? ", " : "", s->params[i]);
    return arena_sprintf(a, "%s)", out);
}

static void init_error(xdnn_diags_t *d, int *errors, xloc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void init_error(xdnn_diags_t *d, int *errors, xloc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(d, XDNN_SEV_ERROR, XDNN_ERR_SEMANTIC, loc, NULL, fmt, ap);
    va_end(ap);
    if (errors)
        ++*errors;
}

xinit *init_from_call(arena *a, const expr *e, xdnn_diags_t *d, int *errors)
{
    if (e->kind != EX_CALL) {
        init_error(d, errors, e->loc,
                   "an initializer is a call such as randn(std=0.5) or load(\"x.npy\"), not '%s'",
                   expr_to_text(a, e));
        return NULL;
    }
    const init_spec *s = init_spec_find(e->s);
    if (!s) {
        char *known = NULL;
        for (size_t i = 0; i < sizeof init_specs / sizeof init_specs[0]; i++)
            known = known ? arena_sprintf(a, "%s, %s", known, init_specs[i].fn) : arena_strdup(a, init_specs[i].fn);
        init_error(d, errors, e->loc, "unknown initializer '%s'; known: %s", e->s, known);
        return NULL;
    }
    xinit *in = arena_alloc(a, sizeof *in);
    in->fn = s->fn;
    in->loc = e->loc;
    in->names = arena_alloc(a, sizeof *in->names * (size_t)(e->nargs ? e->nargs : 1));
    in->args = arena_alloc(a, sizeof *in->args * (size_t)(e->nargs ? e->nargs : 1));
    bool ok = true;
    int next = 0;
    for (int i = 0; i < e->nargs; i++) {
        const char *kw = e->names ? e->names[i] : NULL;
        const char *name = NULL;
        if (!kw) {
            if (next >= s->nparams) {
                init_error(d, errors, e->args[i]->loc, "too many arguments: %s takes %d",
                           init_signature(a, s), s->nparams);
                ok = false;
                continue;
            }
            name = s->params[next++];
        } else {
            for (int p = 0; p < s->nparams; p++)
                if (strcmp(s->params[p], kw) == 0)
                    name = s->params[p];
            if (!name) {
                init_error(d, errors, e->args[i]->loc, "%s has no argument '%s'; it takes %s", s->fn, kw,
                           init_signature(a, s));
                ok = false;
                continue;
            }
        }
        bool dup = false;
        for (int j = 0; j < in->nargs; j++)
            dup |= strcmp(in->names[j], name) == 0;
        if (dup) {
            init_error(d, errors, e->args[i]->loc, "argument '%s' of %s is given twice", name, s->fn);
            ok = false;
            continue;
        }
        in->names[in->nargs] = name;
        in->args[in->nargs++] = e->args[i];
    }
    return ok ? in : NULL;
}

/* ---------------------------------------------------------------- files */

xdnn_status dnn_parse_into(xdnn_module_t *m, const char *file, const char *text, size_t len,
                           const char *const *include_dirs, xdnn_diags_t *d)
{
    lower_ctx cx = {.m = m, .ar = m->ar, .d = d, .include_dirs = include_dirs};
    lower_file(&cx, file, text, len, xloc_none());
    return cx.errors ? (cx.first_status ? cx.first_status : XDNN_ERR_SEMANTIC) : XDNN_OK;
}

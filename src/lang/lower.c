/* lower.c — lowering of a parsed .dnn file into the module IR: includes,
 * params, asserts, graphs and the statements of a graph body (declarations,
 * outputs, checks).  Tensor expressions are flattened by lower_expr.c and
 * fragments expanded by lower_frag.c.
 *
 * Every error counts toward DIAG_MAX_ERRORS; after a failed statement its
 * targets are still defined (as placeholders) so one mistake does not cascade
 * into "unknown tensor" errors further down.
 */
#include "lower.h"

#include "core/fileio.h"
#include "ops/op.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- reporting */

static void lvreport(lower_ctx *cx, xdnn_status st, xloc loc, const char *fmt, va_list ap)
{
    diag_vreport(cx->d, XDNN_SEV_ERROR, st, loc, NULL, fmt, ap);
    if (!cx->first_status)
        cx->first_status = st;
    cx->errors++;
}

void lerr_only(lower_ctx *cx, xdnn_status st, xloc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lvreport(cx, st, loc, fmt, ap);
    va_end(ap);
}

void lframes(lower_ctx *cx, const scope *sc)
{
    for (const frame *f = sc ? sc->fr : NULL; f; f = f->parent)
        diag_note(cx->d, f->call_loc, "in fragment '%s' called from here", f->frag->name);
}

void lerr(lower_ctx *cx, const scope *sc, xdnn_status st, xloc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lvreport(cx, st, loc, fmt, ap);
    va_end(ap);
    lframes(cx, sc);
}

static bool too_many(const lower_ctx *cx) { return cx->errors >= DIAG_MAX_ERRORS || diag_too_many(cx->d); }

/* Levenshtein distance, capped: only small distances matter for suggestions. */
static int edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 64 || m > 64)
        return 99;
    int row[65];
    for (size_t j = 0; j <= m; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        int prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int cur = row[j];
            int best = prev + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[m];
}

char *lower_suggest(arena *a, const char *name, const char *const *cands, size_t n)
{
    const char *best = NULL;
    int bestd = strlen(name) <= 3 ? 2 : 3;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i] || strcmp(cands[i], name) == 0)
            continue;
        int dist = edit_distance(name, cands[i]);
        if (dist < bestd) {
            bestd = dist;
            best = cands[i];
        }
    }
    return best ? arena_sprintf(a, " (did you mean '%s'?)", best) : arena_strdup(a, "");
}

bool lower_dtype(lower_ctx *cx, const scope *sc, const char *name, xloc loc, xdnn_dtype *out)
{
    if (xdnn_dtype_from_name(name, out))
        return true;
    char *known = NULL;
    for (int i = 0; i < XDNN_DTYPE_COUNT; i++) {
        const char *dn = xdnn_dtype_name((xdnn_dtype)i);
        known = known ? arena_sprintf(cx->ar, "%s, %s", known, dn) : arena_strdup(cx->ar, dn);
    }
    bool reserved = strcmp(name, "i16") == 0 || strcmp(name, "u8") == 0;
    lerr(cx, sc, XDNN_ERR_SEMANTIC, loc, "%s dtype '%s'; the dtypes are %s",
         reserved ? "unsupported" : "unknown", name, known);
    return false;
}

int lower_define_tensor(lower_ctx *cx, const scope *sc, const char *name, tensor_kind kind, xloc loc)
{
    xgraph *g = sc->g;
    if (!dnn_is_writable_name(name)) { /* `input _: ...`, or control characters between back-quotes */
        lerr(cx, sc, XDNN_ERR_SEMANTIC, loc, "a tensor cannot be named '%s' (\"_\" discards a result; no control "
             "characters)", name);
        return -1;
    }
    int prev = ir_find_tensor(g, name);
    if (prev >= 0) {
        lerr_only(cx, XDNN_ERR_SEMANTIC, loc, "tensor '%s' is already defined", name);
        if (g->tensors[prev].loc.file)
            diag_note(cx->d, g->tensors[prev].loc, "'%s' was first defined here", name);
        lframes(cx, sc);
        return -1;
    }
    return ir_add_tensor(g, name, kind, loc, cx->d);
}

/* ---------------------------------------------------------------- params */

static bool mentions_name(const expr *e)
{
    if (!e)
        return false;
    if (e->kind == EX_IDENT)
        return strcmp(e->s, "inf") != 0 && strcmp(e->s, "nan") != 0;
    for (int i = 0; i < e->nargs; i++)
        if (mentions_name(e->args[i]))
            return true;
    return false;
}

/* dim(t, i) anywhere in e */
static bool mentions_dim(const expr *e)
{
    if (!e)
        return false;
    if (e->kind == EX_CALL && strcmp(e->s, "dim") == 0)
        return true;
    for (int i = 0; i < e->nargs; i++)
        if (mentions_dim(e->args[i]))
            return true;
    return false;
}

static void lower_param(lower_ctx *cx, xgraph *g, const ast_stmt *st)
{
    xdnn_module_t *m = cx->m;
    scope sc = {.g = g, .prefix = ""};
    if (!dnn_is_plain_ident(st->name)) { /* back-quotes spell tensor names; JSON holds params by plain name */
        lerr(cx, NULL, XDNN_ERR_SEMANTIC, st->name_loc,
             "param name `%s` is not an identifier (letters, digits, _; not a keyword or dtype)", st->name);
        return;
    }
    bool dim_in_sweep = false;
    for (int i = 0; g && i < st->sweep.n; i++)
        dim_in_sweep |= mentions_dim(st->sweep.items[i]);
    if (g && (mentions_dim(st->e) || dim_in_sweep)) { /* both written forms list a graph's params first */
        lerr(cx, NULL, XDNN_ERR_SEMANTIC, st->e->loc,
             "param '%s' uses dim(): a param is fixed before any tensor; assert the dim instead", st->name);
        return;
    }
    const xparam *prev = ir_find_param(m, g, st->name);
    /* a module param after a graph that has one of its name: the JSON form, which reads module params first,
     * refuses the graph's as a redefinition, so the text does too, whatever the order */
    for (size_t i = 0; !prev && !g && i < m->ngraphs; i++)
        prev = ir_find_param(m, m->graphs[i], st->name);
    if (prev) {
        lerr(cx, NULL, XDNN_ERR_SEMANTIC, st->name_loc, "param '%s' is already defined", st->name);
        if (prev->loc.file)
            diag_note(cx->d, prev->loc, "'%s' was first defined here", st->name);
        return;
    }
    char *what = arena_sprintf(cx->ar, "the value of param '%s'", st->name);
    expr *v = g ? lower_ct(cx, &sc, st->e, what) : st->e;
    if (!v)
        return;
    xparam p = {.name = st->name, .value = v, .derived = mentions_name(v), .loc = st->name_loc};
    if (st->sweep.n) {
        if (p.derived) {
            lerr(cx, NULL, XDNN_ERR_SEMANTIC, st->name_loc,
                 "param '%s' is derived from other params, so it cannot have a sweep list", st->name);
            return;
        }
        p.sweep = (expr **)st->sweep.items;
        p.nsweep = st->sweep.n;
    }
    ir_add_param(m, g, p);
}

static void lower_assert(lower_ctx *cx, scope *sc, const ast_stmt *st)
{
    xassert a = {.msg = st->msg, .loc = st->loc};
    a.cond = sc && sc->g ? lower_ct(cx, sc, st->e, "an assert") : st->e;
    if (!a.cond)
        return;
    if (sc && sc->g)
        VEC_PUSH(cx->ar, sc->g->asserts, sc->g->nasserts, sc->g->capasserts, a);
    else
        VEC_PUSH(cx->ar, cx->m->asserts, cx->m->nasserts, cx->m->capasserts, a);
}

/* ---------------------------------------------------------------- declarations */

/* A layout tag is known when some rank accepts it (bind checks the rank). */
static bool layout_tag_known(const char *tag)
{
    int perm[XDNN_MAX_RANK];
    for (int r = 1; r <= XDNN_MAX_RANK; r++)
        if (layout_perm_for_tag(tag, r, perm))
            return true;
    return false;
}

static bool lower_layout(lower_ctx *cx, scope *sc, const xlayout *in, const char *tname, xlayout *out)
{
    *out = *in;
    if (in->kind == LAYOUT_NAMED && !layout_tag_known(in->name)) {
        static const char *const tags[] = {"row",  "col",   "nchw", "nhwc", "ncdhw", "ndhwc",
                                           "ncw",  "nwc",   "bhsd", "bshd", "sbhd"};
        lerr(cx, sc, XDNN_ERR_SEMANTIC, in->loc,
             "unknown layout '@%s'%s; the layouts are row, col, nchw, nhwc, ncdhw, ndhwc, ncw, nwc, bhsd, bshd, "
             "sbhd, @perm(...) and @strides(...)",
             in->name, lower_suggest(cx->ar, in->name, tags, sizeof tags / sizeof *tags));
        return false;
    }
    if (in->kind == LAYOUT_PERM || in->kind == LAYOUT_STRIDES) {
        out->args = arena_alloc(cx->ar, sizeof *out->args * (size_t)in->nargs);
        char *what = arena_sprintf(cx->ar, "the layout of '%s'", tname);
        for (int i = 0; i < in->nargs; i++)
            if (!(out->args[i] = lower_ct(cx, sc, in->args[i], what)))
                return false;
    }
    return true;
}

static void lower_decl(lower_ctx *cx, scope *sc, const ast_stmt *st)
{
    xgraph *g = sc->g;
    int ti = lower_define_tensor(cx, sc, st->name, st->kind == AST_INPUT ? TK_INPUT : TK_WEIGHT, st->name_loc);
    if (ti < 0)
        return;
    xdnn_dtype dt = XDNN_F32;
    bool ok = lower_dtype(cx, sc, st->type.dtype_name, st->type.dtype_loc, &dt);
    int rank = st->type.dims.n;
    expr **dims = arena_alloc(cx->ar, sizeof *dims * (size_t)(rank ? rank : 1));
    char *what = arena_sprintf(cx->ar, "a dim of '%s'", st->name);
    for (int i = 0; i < rank; i++)
        ok &= (dims[i] = lower_ct(cx, sc, st->type.dims.items[i], what)) != NULL;
    xlayout layout;
    ok &= lower_layout(cx, sc, &st->type.layout, st->name, &layout);
    xinit *init = NULL;
    if (st->e) {
        int before = cx->errors;
        init = init_from_call(cx->ar, st->e, cx->d, &cx->errors);
        if (cx->errors != before && !cx->first_status)
            cx->first_status = XDNN_ERR_SEMANTIC;
        for (int i = 0; init && i < init->nargs; i++) {
            char *w = arena_sprintf(cx->ar, "argument '%s' of %s", init->names[i], init->fn);
            if (!(init->args[i] = lower_ct(cx, sc, init->args[i], w)))
                init = NULL;
        }
        ok &= init != NULL;
    }
    xtensor *t = &g->tensors[ti];
    t->has_dtype = true;
    t->dtype = dt;
    t->dims = dims;
    t->rank = rank;
    if (ok) {
        t->layout = layout;
        t->init = init;
    }
}

bool lower_annotate(lower_ctx *cx, scope *sc, const ast_target *tg, int ti, bool in_output)
{
    xdnn_dtype dt;
    if (tg->annot.has_dtype) {
        if (!lower_dtype(cx, sc, tg->annot.dtype_name, tg->annot.dtype_loc, &dt))
            return false;
    }
    xlayout layout = {0};
    if (tg->annot.layout.kind != LAYOUT_DEFAULT && !lower_layout(cx, sc, &tg->annot.layout, tg->name, &layout))
        return false;
    if (ti < 0)
        return true;
    xtensor *t = &sc->g->tensors[ti];
    if (t->kind != TK_VIRTUAL && (tg->annot.has_dtype || layout.kind != LAYOUT_DEFAULT)) {
        lerr(cx, sc, XDNN_ERR_SEMANTIC, tg->loc, "'%s' is an %s: its dtype and layout come from its declaration",
             tg->name, t->kind == TK_INPUT ? "input" : "weight");
        return false;
    }
    if (tg->annot.has_dtype && in_output) { /* the stored copy's dtype: consumers read the value */
        t->has_odtype = true;
        t->odtype = dt;
    } else if (tg->annot.has_dtype) {
        t->has_dtype = true;
        t->dtype = dt;
    }
    if (layout.kind != LAYOUT_DEFAULT)
        t->layout = layout;
    return true;
}

static void lower_output(lower_ctx *cx, scope *sc, const ast_stmt *st)
{
    xgraph *g = sc->g;
    for (int i = 0; i < st->targets.n; i++) {
        const ast_target *tg = st->targets.items[i];
        int ti = ir_find_tensor(g, tg->name);
        if (ti < 0) {
            expr id = {.kind = EX_IDENT, .s = tg->name, .loc = tg->loc};
            lower_unknown_name(cx, sc, &id);
            continue;
        }
        if (g->tensors[ti].is_output) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, tg->loc, "'%s' is already an output", tg->name);
            continue;
        }
        if (!lower_annotate(cx, sc, tg, ti, true))
            continue;
        g->tensors[ti].is_output = true;
        VEC_PUSH(cx->ar, g->outputs, g->noutputs, g->capoutputs, ti);
    }
}

static void lower_check(lower_ctx *cx, scope *sc, const ast_stmt *st)
{
    xgraph *g = sc->g;
    xcheck k = {.tensor = -1, .loc = st->loc};
    int npos = 0;
    bool ok = true;
    for (int i = 0; i < st->args.n; i++) {
        const ast_arg *a = st->args.items[i];
        if (!a->name) {
            if (npos == 0) {
                if (a->e->kind != EX_IDENT || (k.tensor = ir_find_tensor(g, a->e->s)) < 0) {
                    if (a->e->kind == EX_IDENT)
                        lower_unknown_name(cx, sc, a->e);
                    else
                        lerr(cx, sc, XDNN_ERR_SEMANTIC, a->e->loc,
                             "check: the first argument must name a tensor");
                    ok = false;
                }
            } else if (npos == 1) {
                int before = cx->errors;
                k.ref = init_from_call(cx->ar, a->e, cx->d, &cx->errors);
                if (cx->errors != before && !cx->first_status)
                    cx->first_status = XDNN_ERR_SEMANTIC;
                for (int j = 0; k.ref && j < k.ref->nargs; j++)
                    if (!(k.ref->args[j] = lower_ct(cx, sc, k.ref->args[j], "a check reference")))
                        k.ref = NULL;
                ok &= k.ref != NULL;
            } else {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, a->e->loc,
                     "check takes a tensor, a reference and rtol=/atol=: check y, load(\"y.npy\"), rtol=1e-3;");
                ok = false;
            }
            npos++;
            continue;
        }
        expr **slot = strcmp(a->name, "rtol") == 0 ? &k.rtol : strcmp(a->name, "atol") == 0 ? &k.atol : NULL;
        if (!slot) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, a->name_loc, "check has no option '%s'; its options are rtol and atol",
                 a->name);
            ok = false;
            continue;
        }
        if (*slot) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, a->name_loc, "check option '%s' is given twice", a->name);
            ok = false;
            continue;
        }
        char *what = arena_sprintf(cx->ar, "check option '%s'", a->name);
        ok &= (*slot = lower_ct(cx, sc, a->e, what)) != NULL;
    }
    if (ok && npos < 2) {
        lerr(cx, sc, XDNN_ERR_SEMANTIC, st->loc,
             "check needs a tensor and a reference: check y, load(\"y.npy\"), rtol=1e-3;");
        ok = false;
    }
    if (ok)
        VEC_PUSH(cx->ar, g->checks, g->nchecks, g->capchecks, k);
}

/* ---------------------------------------------------------------- graphs */

static void lower_graph_options(lower_ctx *cx, scope *sc, const ast_stmt *st)
{
    xgraph *g = sc->g;
    for (int i = 0; i < st->args.n; i++) {
        const ast_arg *a = st->args.items[i];
        static const char *const opts[] = {"io", "compute", "intermediate", "seed", "tf32"};
        expr **slot = NULL;
        int k = 0;
        for (; k < 5; k++)
            if (strcmp(a->name, opts[k]) == 0)
                break;
        switch (k) {
        case 0: slot = &g->ctx_io; break;
        case 1: slot = &g->ctx_compute; break;
        case 2: slot = &g->ctx_intermediate; break;
        case 3: slot = &g->ctx_seed; break;
        case 4: slot = &g->ctx_tf32; break;
        default:
            lerr(cx, sc, XDNN_ERR_SEMANTIC, a->name_loc,
                 "unknown graph option '%s'%s; the options are io, compute, intermediate, seed and tf32", a->name,
                 lower_suggest(cx->ar, a->name, opts, 5));
            continue;
        }
        if (*slot) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, a->name_loc, "graph option '%s' is given twice", a->name);
            continue;
        }
        if (k <= 2 && a->e->kind != EX_DTYPE) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, a->e->loc, "graph option '%s' must be a dtype such as f16, not '%s'",
                 a->name, expr_to_text(cx->ar, a->e));
            continue;
        }
        char *what = arena_sprintf(cx->ar, "graph option '%s'", a->name);
        *slot = lower_ct(cx, sc, a->e, what);
    }
}

/* After a failed assignment, define its targets anyway (no producer) so later
 * uses do not report them as unknown.  The module is not bound after errors. */
static void define_placeholders(lower_ctx *cx, scope *sc, const ast_stmt *st)
{
    for (int i = 0; i < st->targets.n; i++) {
        const ast_target *tg = st->targets.items[i];
        if (strcmp(tg->name, "_") != 0 && ir_find_tensor(sc->g, tg->name) < 0)
            ir_add_tensor(sc->g, tg->name, TK_VIRTUAL, tg->loc, cx->d);
    }
}

static void lower_graph(lower_ctx *cx, const ast_stmt *st)
{
    xdnn_module_t *m = cx->m;
    if (!dnn_is_plain_ident(st->name)) {
        lerr(cx, NULL, XDNN_ERR_SEMANTIC, st->name_loc,
             "graph name `%s` is not an identifier (letters, digits, _; not a keyword or dtype)", st->name);
        return;
    }
    for (size_t i = 0; i < m->ngraphs; i++) {
        if (strcmp(m->graphs[i]->name, st->name) == 0) {
            lerr(cx, NULL, XDNN_ERR_SEMANTIC, st->name_loc, "graph '%s' is already defined", st->name);
            if (m->graphs[i]->loc.file)
                diag_note(cx->d, m->graphs[i]->loc, "'%s' was first defined here", st->name);
            return;
        }
    }
    xgraph *g = ir_add_graph(m, st->name, st->name_loc);
    if (cx->nstack == 1)
        m->default_graph = (int)m->ngraphs - 1;
    scope sc = {.g = g, .body = &st->body, .prefix = ""};
    lower_graph_options(cx, &sc, st);
    for (int i = 0; i < st->body.n && !too_many(cx); i++) {
        const ast_stmt *s = st->body.items[i];
        switch (s->kind) {
        case AST_PARAM: lower_param(cx, g, s); break;
        case AST_ASSERT: lower_assert(cx, &sc, s); break;
        case AST_INPUT:
        case AST_WEIGHT: lower_decl(cx, &sc, s); break;
        case AST_ASSIGN:
            if (!lower_assign(cx, &sc, s))
                define_placeholders(cx, &sc, s);
            break;
        case AST_OUTPUT: lower_output(cx, &sc, s); break;
        case AST_CHECK: lower_check(cx, &sc, s); break;
        default: break; /* the grammar allows nothing else in a graph */
        }
    }
}

/* ---------------------------------------------------------------- includes */

static bool readable(const char *path) { return access(path, R_OK) == 0; }

static char *canonical(arena *a, const char *path)
{
    char buf[PATH_MAX];
    return realpath(path, buf) ? arena_strdup(a, buf) : arena_strdup(a, path);
}

static void lower_include(lower_ctx *cx, const char *from_file, const ast_stmt *st)
{
    arena *a = cx->ar;
    const char *rel = st->name;
    const char *found = NULL;
    char *looked = NULL;
    const char *dir = path_dirname(a, from_file);
    char *cand = path_join(a, dir, rel);
    looked = arena_strdup(a, dir);
    const char *why = module_confinement(cx->m, rel, cand);
    if (why && rel[0] == '/') { /* nothing to search: refuse before touching the file */
        lerr(cx, NULL, XDNN_ERR_IO, st->name_loc, "include '%s' is refused in a confined graph (--sandbox): %s",
             rel, why);
        return;
    }
    if (readable(cand))
        found = cand;
    for (int i = 0; !found && rel[0] != '/' && cx->include_dirs && cx->include_dirs[i]; i++) {
        cand = path_join(a, cx->include_dirs[i], rel);
        looked = arena_sprintf(a, "%s, %s", looked, cx->include_dirs[i]);
        if (readable(cand))
            found = cand;
    }
    const char *env = cx->m->nroots ? NULL : getenv("XDNN_PATH"); /* a confined graph reads its own folders only */
    if (!found && rel[0] != '/' && env && *env) {
        char *copy = arena_strdup(a, env), *save = NULL;
        for (char *p = strtok_r(copy, ":", &save); p && !found; p = strtok_r(NULL, ":", &save)) {
            cand = path_join(a, p, rel);
            looked = arena_sprintf(a, "%s, %s", looked, p);
            if (readable(cand))
                found = cand;
        }
    }
    if (!found) {
        lerr(cx, NULL, XDNN_ERR_IO, st->name_loc, "cannot find include file '%s' (looked in %s)", rel, looked);
        return;
    }
    if ((why = module_confinement(cx->m, rel, found)) != NULL) {
        lerr(cx, NULL, XDNN_ERR_IO, st->name_loc, "include '%s' is refused in a confined graph (--sandbox): %s",
             rel, why);
        return;
    }
    const char *canon = canonical(a, found);
    for (size_t i = 0; i < cx->nstack; i++) {
        if (strcmp(cx->stack[i], canon) != 0)
            continue;
        char *chain = NULL;
        for (size_t j = i; j < cx->nstack; j++)
            chain = chain ? arena_sprintf(a, "%s -> %s", chain, cx->stack_names[j])
                          : arena_strdup(a, cx->stack_names[j]);
        lerr(cx, NULL, XDNN_ERR_SEMANTIC, st->name_loc, "include cycle: %s -> %s", chain, cx->stack_names[i]);
        return;
    }
    if (strmap_get(&cx->seen, canon) >= 0)
        return; /* each file once */
    if (cx->nstack >= LOWER_MAX_INCLUDE_DEPTH) {
        /* each level recurses through the parser: 20k nested includes overflowed the stack */
        lerr(cx, NULL, XDNN_ERR_SEMANTIC, st->name_loc, "includes nest deeper than %d files (including '%s')",
             LOWER_MAX_INCLUDE_DEPTH, rel);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    xdnn_status s = file_read_all_at(found, st->name_loc, &text, &len, cx->d);
    if (s != XDNN_OK) {
        if (!cx->first_status)
            cx->first_status = s;
        cx->errors++;
        return;
    }
    int before = cx->errors;
    lower_file(cx, found, text, len, st->loc);
    free(text);
    if (cx->errors != before)
        diag_note(cx->d, st->loc, "in file included from here");
}

/* ---------------------------------------------------------------- files */

void lower_file(lower_ctx *cx, const char *file, const char *text, size_t len, xloc included_at)
{
    (void)included_at;
    xdnn_module_t *m = cx->m;
    const char *fname = arena_strdup(cx->ar, file);
    /* Diagnostics quote source lines of graphs only: the file the user named,
     * and included .dnn/.json files.  `include "/etc/shadow"` is reported
     * (file:line:col) but its lines are never echoed. */
    size_t flen = strlen(fname);
    if (cx->nstack == 0 || (flen > 4 && strcmp(fname + flen - 4, ".dnn") == 0) ||
        (flen > 5 && strcmp(fname + flen - 5, ".json") == 0))
        diag_add_source(cx->d, fname, text, len);
    VEC_PUSH(m->ar, m->sources, m->nsources, m->capsources, fname);
    const char *canon = canonical(cx->ar, file);
    strmap_put(&cx->seen, cx->ar, canon, 1);
    size_t depth = cx->nstack;
    VEC_PUSH(cx->ar, cx->stack_names, depth, cx->capstack_names, fname);
    VEC_PUSH(cx->ar, cx->stack, cx->nstack, cx->capstack, canon);

    pstate ps = {.ar = cx->ar, .diags = cx->d, .file = fname, .mode = PARSE_FILE};
    if (ast_parse(&ps, text, len) != 0) {
        cx->errors += ps.errors;
        if (!cx->first_status)
            cx->first_status = XDNN_ERR_SYNTAX;
    } else {
        for (int i = 0; i < ps.items.n && !too_many(cx); i++) {
            ast_stmt *st = ps.items.items[i];
            switch (st->kind) {
            case AST_INCLUDE: lower_include(cx, fname, st); break;
            case AST_PARAM: lower_param(cx, NULL, st); break;
            case AST_ASSERT: lower_assert(cx, NULL, st); break;
            case AST_FRAGMENT: lower_fragment_def(cx, st); break;
            case AST_GRAPH: lower_graph(cx, st); break;
            default: break;
            }
        }
    }
    cx->nstack--;
}

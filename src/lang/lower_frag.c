/* lower_frag.c — fragments: checking a definition, and expanding a call
 * inline.
 *
 * `fragment linear(x, w, b, trans_w: bool = false) -> (y) { ... }` called as
 * `h = linear(x, w1, b1, trans_w=true)` expands in place: tensor parameters
 * bind to the call's operands, typed (compile-time) parameters to the call's
 * expressions, the result `y` becomes the call-site name `h`, and any other
 * local `t` becomes `h/t` (temporaries `h/y.0`, ...), so expanded names never
 * collide with user names.  Each node records where it was expanded from.
 */
#include "lower.h"

#include "ops/op.h"

#include <string.h>

static const char *const attr_types[] = {"int", "float", "bool", "string", "ints", "floats", "dtype"};

static bool is_tensor_param(const ast_fparam *p) { return !p->type || strcmp(p->type, "tensor") == 0; }

const ast_stmt *lower_find_fragment(const lower_ctx *cx, const char *name)
{
    int i = strmap_get(&cx->frag_index, name);
    return i >= 0 ? cx->frags[i] : NULL;
}

static int find_fparam(const ast_stmt *f, const char *name)
{
    for (int i = 0; i < f->fparams.n; i++)
        if (strcmp(((const ast_fparam *)f->fparams.items[i])->name, name) == 0)
            return i;
    return -1;
}

static int find_result(const ast_stmt *f, const char *name)
{
    for (int i = 0; i < f->results.n; i++)
        if (strcmp(((const ast_target *)f->results.items[i])->name, name) == 0)
            return i;
    return -1;
}

void lower_fragment_def(lower_ctx *cx, ast_stmt *st)
{
    const ast_stmt *prev = lower_find_fragment(cx, st->name);
    if (prev) {
        lerr_only(cx, XDNN_ERR_SEMANTIC, st->name_loc, "fragment '%s' is already defined", st->name);
        diag_note(cx->d, prev->name_loc, "'%s' was first defined here", st->name);
        return;
    }
    /* A fragment may take an op's name (mlp_gelu.dnn defines gelu_tanh): in
     * this module the fragment shadows the op. */
    int before = cx->errors;
    for (int i = 0; i < st->fparams.n; i++) {
        const ast_fparam *p = st->fparams.items[i];
        if (find_fparam(st, p->name) != i)
            lerr(cx, NULL, XDNN_ERR_SEMANTIC, p->loc, "parameter '%s' of fragment '%s' is declared twice", p->name,
                 st->name);
        if (!is_tensor_param(p)) {
            bool known = false;
            for (size_t k = 0; k < sizeof attr_types / sizeof *attr_types; k++)
                known |= strcmp(attr_types[k], p->type) == 0;
            if (!known)
                lerr(cx, NULL, XDNN_ERR_SEMANTIC, p->type_loc,
                     "unknown parameter type '%s'; the types are tensor, int, float, bool, string, ints, floats "
                     "and dtype",
                     p->type);
        }
    }
    for (int i = 0; i < st->results.n; i++) {
        const ast_target *r = st->results.items[i];
        if (find_result(st, r->name) != i)
            lerr(cx, NULL, XDNN_ERR_SEMANTIC, r->loc, "result '%s' of fragment '%s' is listed twice", r->name,
                 st->name);
        if (find_fparam(st, r->name) >= 0)
            lerr(cx, NULL, XDNN_ERR_SEMANTIC, r->loc, "'%s' is both a parameter and a result of fragment '%s'",
                 r->name, st->name);
    }
    /* Locals: assigned once, never a parameter; every result assigned. */
    const char **seen = NULL;
    xloc *seen_at = NULL;
    size_t nseen = 0, cap = 0, cap2 = 0;
    for (int i = 0; i < st->body.n; i++) {
        const ast_stmt *s = st->body.items[i];
        if (s->kind == AST_INPUT || s->kind == AST_WEIGHT) {
            lerr(cx, NULL, XDNN_ERR_SEMANTIC, s->loc,
                 "a fragment cannot declare %ss (it has no hidden state); pass '%s' as a parameter",
                 s->kind == AST_INPUT ? "input" : "weight", s->name);
            continue;
        }
        if (s->kind != AST_ASSIGN && s->kind != AST_ASSERT) {
            static const char *const what[] = {[AST_PARAM] = "param", [AST_OUTPUT] = "output", [AST_CHECK] = "check"};
            lerr(cx, NULL, XDNN_ERR_SEMANTIC, s->loc,
                 "'%s' is not allowed in a fragment; a fragment holds assignments and asserts",
                 s->kind < (int)(sizeof what / sizeof *what) && what[s->kind] ? what[s->kind] : "this");
            continue;
        }
        for (int j = 0; s->kind == AST_ASSIGN && j < s->targets.n; j++) {
            const ast_target *tg = s->targets.items[j];
            if (strcmp(tg->name, "_") == 0)
                continue;
            if (find_fparam(st, tg->name) >= 0) {
                lerr(cx, NULL, XDNN_ERR_SEMANTIC, tg->loc, "fragment '%s' assigns to its parameter '%s'", st->name,
                     tg->name);
                continue;
            }
            size_t k = 0;
            while (k < nseen && strcmp(seen[k], tg->name) != 0)
                k++;
            if (k < nseen) {
                lerr_only(cx, XDNN_ERR_SEMANTIC, tg->loc, "'%s' is assigned twice in fragment '%s'", tg->name,
                          st->name);
                diag_note(cx->d, seen_at[k], "'%s' was first assigned here", tg->name);
                continue;
            }
            VEC_PUSH(cx->ar, seen, nseen, cap, tg->name);
            size_t n2 = nseen - 1;
            VEC_PUSH(cx->ar, seen_at, n2, cap2, tg->loc);
        }
    }
    for (int i = 0; i < st->results.n; i++) {
        const ast_target *r = st->results.items[i];
        size_t k = 0;
        while (k < nseen && strcmp(seen[k], r->name) != 0)
            k++;
        if (k == nseen)
            lerr(cx, NULL, XDNN_ERR_SEMANTIC, r->loc, "result '%s' of fragment '%s' is never assigned", r->name,
                 st->name);
    }
    st->bad = cx->errors != before;
    VEC_PUSH(cx->ar, cx->frags, cx->nfrags, cx->capfrags, st);
    if (strmap_get(&cx->frag_index, st->name) < 0)
        strmap_put(&cx->frag_index, cx->ar, st->name, (int)cx->nfrags - 1);
}

static char *param_list(arena *a, const ast_stmt *f)
{
    char *out = NULL;
    for (int i = 0; i < f->fparams.n; i++) {
        const ast_fparam *p = f->fparams.items[i];
        out = out ? arena_sprintf(a, "%s, %s", out, p->name) : arena_strdup(a, p->name);
    }
    return out ? out : arena_strdup(a, "none");
}

static char *result_list(arena *a, const ast_stmt *f)
{
    char *out = NULL;
    for (int i = 0; i < f->results.n; i++) {
        const ast_target *r = f->results.items[i];
        out = out ? arena_sprintf(a, "%s, %s", out, r->name) : arena_strdup(a, r->name);
    }
    return out ? out : arena_strdup(a, "");
}

bool lower_fragment_call(lower_ctx *cx, scope *sc, namer *nm, const expr *call, const ast_stmt *frag,
                         int nnames, const char *const *names, const xloc *locs, int *results)
{
    arena *a = cx->ar;
    if (frag->bad)
        return false; /* its definition was reported */
    int nres = frag->results.n;
    if (nnames == 0 && nres != 1) {
        lerr(cx, sc, XDNN_ERR_SEMANTIC, call->loc,
             "fragment '%s' returns %d results (%s), so it cannot be used inside an expression", frag->name, nres,
             result_list(a, frag));
        return false;
    }
    if (nnames != 0 && nnames != nres) {
        lerr(cx, sc, XDNN_ERR_SEMANTIC, locs[0], "fragment '%s' returns %d result%s (%s), but %d target%s assigned",
             frag->name, nres, nres == 1 ? "" : "s", result_list(a, frag), nnames, nnames == 1 ? " is" : "s are");
        return false;
    }
    int depth = 0;
    for (const frame *f = sc->fr; f; f = f->parent, depth++) {
        if (f->frag == frag) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, call->loc, "fragment '%s' calls itself; recursion is not allowed",
                 frag->name);
            return false;
        }
    }
    if (depth >= LOWER_MAX_FRAGMENT_DEPTH) {
        /* One note, for the outermost call: a note per frame would be a hundred. */
        const frame *outermost = sc->fr;
        while (outermost->parent)
            outermost = outermost->parent;
        lerr_only(cx, XDNN_ERR_SEMANTIC, call->loc, "fragment calls nest too deeply (more than %d levels)",
                  LOWER_MAX_FRAGMENT_DEPTH);
        diag_note(cx->d, outermost->call_loc, "the outermost of them calls fragment '%s' here",
                  outermost->frag->name);
        return false;
    }

    /* Bind the arguments, evaluated in the caller's scope, in written order. */
    int np = frag->fparams.n;
    binding *bs = arena_alloc(a, sizeof *bs * (size_t)(np ? np : 1));
    bool *given = arena_alloc(a, (size_t)np + 1);
    bool ok = true;
    int next = 0;
    for (int i = 0; i < call->nargs; i++) {
        const char *kw = call->names ? call->names[i] : NULL;
        int k;
        if (kw) {
            k = find_fparam(frag, kw);
            if (k < 0) {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, ast_kwname_loc(kw),
                     "fragment '%s' has no parameter '%s'; its parameters are %s", frag->name, kw,
                     param_list(a, frag));
                ok = false;
                continue;
            }
        } else {
            k = next++;
            if (k >= np) {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, call->args[i]->loc,
                     "too many arguments: fragment '%s' takes %d (%s)", frag->name, np, param_list(a, frag));
                ok = false;
                continue;
            }
        }
        const ast_fparam *p = frag->fparams.items[k];
        if (given[k]) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, call->args[i]->loc, "argument '%s' of fragment '%s' is given twice",
                 p->name, frag->name);
            ok = false;
            continue;
        }
        given[k] = true;
        bs[k] = (binding){.name = p->name, .tensor = -1, .is_tensor_param = is_tensor_param(p)};
        if (is_tensor_param(p)) {
            operand o;
            if (!lower_value(cx, sc, nm, call->args[i], &o)) {
                ok = false;
                continue;
            }
            bs[k].tensor = o.tensor;
            bs[k].value = o.tensor >= 0 ? NULL : o.scalar;
        } else {
            char *what = arena_sprintf(a, "argument '%s' of fragment '%s'", p->name, frag->name);
            ok &= (bs[k].value = lower_ct(cx, sc, call->args[i], what)) != NULL;
        }
    }
    for (int k = 0; k < np && ok; k++) {
        const ast_fparam *p = frag->fparams.items[k];
        if (!given[k] && !p->dflt) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, call->loc, "fragment '%s' needs argument '%s' (its parameters are %s)",
                 frag->name, p->name, param_list(a, frag));
            ok = false;
        }
    }
    if (!ok)
        return false;

    /* Call-site names: the targets, or one generated name (post-order). */
    const char *const *rnames = names;
    const xloc *rlocs = locs;
    if (nnames == 0) {
        const char **one = arena_alloc(a, sizeof *one);
        xloc *oneloc = arena_alloc(a, sizeof *oneloc);
        one[0] = arena_sprintf(a, "%s.%d", nm->base, nm->k++);
        oneloc[0] = call->loc;
        rnames = one;
        rlocs = oneloc;
    }
    /* The expansion's prefix: its first call-site name (`h/t`).  Inside a fragment a target that is the
     * fragment's first result maps to the outer call-site name, whose prefix the outer expansion's own locals
     * use: that call takes the statement's base instead (`h/y/t`). */
    const char *site = NULL;
    for (int i = 0; i < nres && !site; i++)
        site = rnames[i];
    if (sc->fr && nnames > 0 && site && strncmp(sc->prefix, site, strlen(site)) == 0 &&
        strcmp(sc->prefix + strlen(site), "/") == 0)
        site = nm->base;
    frame fr = {.frag = frag, .call_loc = call->loc, .parent = sc->fr};
    char *origin = arena_sprintf(a, "in fragment '%s' called from %s:%d:%d", frag->name,
                                 call->loc.file ? call->loc.file : "?", call->loc.line, call->loc.col);
    if (sc->origin)
        origin = arena_sprintf(a, "%s, %s", origin, sc->origin);
    int *rt = arena_alloc(a, sizeof *rt * (size_t)(nres ? nres : 1));
    for (int i = 0; i < nres; i++)
        rt[i] = -1;
    scope inner = {
        .g = sc->g,
        .body = &frag->body,
        .fr = &fr,
        .prefix = arena_sprintf(a, "%s/", site ? site : "_"),
        .result_names = rnames,
        .result_locs = rlocs,
        .result_tensors = rt,
        .origin = origin,
    };
    /* in parameter order; a missing argument's default is lowered in the fragment's scope, seeing the
     * parameters before it (bound to the call's values), not the caller's names */
    for (int k = 0; k < np; k++) {
        const ast_fparam *p = frag->fparams.items[k];
        if (!given[k]) {
            char *what = arena_sprintf(a, "the default of parameter '%s' of fragment '%s'", p->name, frag->name);
            bs[k] = (binding){.name = p->name, .tensor = -1, .is_tensor_param = is_tensor_param(p)};
            if (!(bs[k].value = lower_ct(cx, &inner, p->dflt, what)))
                return false;
        }
        VEC_PUSH(a, inner.b, inner.nb, inner.capb, bs[k]);
    }

    for (int i = 0; i < frag->body.n; i++) {
        const ast_stmt *s = frag->body.items[i];
        if (s->kind == AST_ASSIGN) {
            ok &= lower_assign(cx, &inner, s);
        } else if (s->kind == AST_ASSERT) {
            expr *cond = lower_ct(cx, &inner, s->e, "an assert");
            if (!cond) {
                ok = false;
                continue;
            }
            xassert as = {.cond = cond, .msg = s->msg, .loc = s->loc};
            VEC_PUSH(a, sc->g->asserts, sc->g->nasserts, sc->g->capasserts, as);
        }
    }
    if (!ok)
        return false;
    for (int i = 0; i < nres; i++) {
        results[i] = rt[i];
        if (rnames[i] && rt[i] < 0)
            return false;
    }
    return true;
}

/* lower_expr.c — flattening tensor expressions into nodes.
 *
 * `y = relu(conv(x, w, stride=1, pad=1) + b);` is walked post-order: every
 * inner call or operator becomes a node writing `y.0`, `y.1`, ... (k counts in
 * evaluation order) and the outermost one writes `y`.  Identifiers that name
 * tensors make tensor operands; literals, params and compile-time built-ins
 * stay expressions (by-value scalars on a port, or attributes).
 *
 * Argument mapping for `op(a, b, k=v)`:
 *  - a positional tensor takes the next input port;
 *  - a positional compile-time number takes the next *required* port that is
 *    still empty (`pow(x, 2)`); lists, strings, dtypes and anything after the
 *    required ports are filled go to the op's attributes in order
 *    (`reshape(x, [B, S])`, `cast(x, f16)`);
 *  - a keyword naming a port is an input (`sdpa(q, k, v, bias=b)`), any other
 *    keyword must be an attribute and compile-time.
 */
#include "lower.h"

#include "ops/op.h"
#include "parse.h"

#include <string.h>

static const char *const builtins[] = {"sqrt", "exp", "log", "min", "max", "abs", "ceil", "floor", "dim"};
enum { NBUILTINS = sizeof builtins / sizeof builtins[0] };

static bool is_builtin(const char *fn)
{
    for (int i = 0; i < NBUILTINS; i++)
        if (strcmp(builtins[i], fn) == 0)
            return true;
    return false;
}

const binding *scope_find(const scope *sc, const char *name)
{
    for (size_t i = sc->nb; i-- > 0;)
        if (strcmp(sc->b[i].name, name) == 0)
            return &sc->b[i];
    return NULL;
}

static bool is_param(const lower_ctx *cx, const scope *sc, const char *name)
{
    return strcmp(name, "inf") == 0 || strcmp(name, "nan") == 0 || ir_find_param(cx->m, sc->g, name);
}

/* ---------------------------------------------------------------- names */

/* Where a statement of `body` defines `name`, if it does. */
static bool find_definition(const ast_list *body, const char *name, xloc *where)
{
    for (int i = 0; body && i < body->n; i++) {
        const ast_stmt *st = body->items[i];
        if ((st->kind == AST_INPUT || st->kind == AST_WEIGHT) && strcmp(st->name, name) == 0) {
            *where = st->name_loc;
            return true;
        }
        for (int j = 0; st->kind == AST_ASSIGN && j < st->targets.n; j++) {
            const ast_target *tg = st->targets.items[j];
            if (strcmp(tg->name, name) == 0) {
                *where = tg->loc;
                return true;
            }
        }
    }
    return false;
}

void lower_unknown_name(lower_ctx *cx, const scope *sc, const expr *e)
{
    xloc def;
    if (find_definition(sc->body, e->s, &def)) {
        lerr_only(cx, XDNN_ERR_SEMANTIC, e->loc, "'%s' is used before its definition", e->s);
        diag_note(cx->d, def, "'%s' is defined here", e->s);
        lframes(cx, sc);
        return;
    }
    /* Candidates for a suggestion: user-visible tensors and params. */
    const char **cands = NULL;
    size_t n = 0, cap = 0;
    if (sc->fr) {
        for (size_t i = 0; i < sc->nb; i++)
            VEC_PUSH(cx->ar, cands, n, cap, sc->b[i].name);
    } else if (sc->g) {
        for (size_t i = 0; i < sc->g->ntensors; i++)
            if (!strpbrk(sc->g->tensors[i].name, "./"))
                VEC_PUSH(cx->ar, cands, n, cap, sc->g->tensors[i].name);
        for (size_t i = 0; i < sc->g->nparams; i++)
            VEC_PUSH(cx->ar, cands, n, cap, sc->g->params[i].name);
    }
    for (size_t i = 0; i < cx->m->nparams; i++)
        VEC_PUSH(cx->ar, cands, n, cap, cx->m->params[i].name);
    if (sc->fr)
        lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc, "unknown name '%s' in fragment '%s'%s", e->s, sc->fr->frag->name,
             lower_suggest(cx->ar, e->s, cands, n));
    else
        lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc, "unknown tensor or param '%s'%s", e->s,
             lower_suggest(cx->ar, e->s, cands, n));
}

static char *gen_name(lower_ctx *cx, namer *nm) { return arena_sprintf(cx->ar, "%s.%d", nm->base, nm->k++); }

/* ---------------------------------------------------------------- compile-time values */

static expr *expr_copy(arena *a, const expr *e)
{
    expr *c = arena_alloc(a, sizeof *c);
    *c = *e;
    if (e->nargs) {
        c->args = arena_alloc(a, sizeof *c->args * (size_t)e->nargs);
        memcpy(c->args, e->args, sizeof *c->args * (size_t)e->nargs);
    }
    return c;
}

/* Substituting fragment arguments (`k=k+1` passed on through nested calls)
 * can build a tree deeper than the parser allows; refuse it here, because
 * bind and the writers recurse once per level.  `c` has new operands. */
static bool depth_ok(lower_ctx *cx, const scope *sc, expr *c)
{
    expr_refresh_depth(c);
    if (c->depth <= EXPR_MAX_DEPTH)
        return true;
    lerr(cx, sc, XDNN_ERR_SEMANTIC, c->loc,
         "expression nests too deeply (more than %d levels) once fragment arguments are substituted",
         EXPR_MAX_DEPTH);
    return false;
}

static void tensor_in_ct(lower_ctx *cx, const scope *sc, const expr *e, const char *what)
{
    lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc, "%s must be a compile-time value; '%s' is a tensor", what, e->s);
}

expr *lower_ct(lower_ctx *cx, const scope *sc, expr *e, const char *what)
{
    switch (e->kind) {
    case EX_INT:
    case EX_FLOAT:
    case EX_BOOL:
    case EX_STRING:
    case EX_DTYPE: return e;
    case EX_IDENT:
        if (sc && sc->fr) {
            const binding *b = scope_find(sc, e->s);
            if (b && b->tensor >= 0) {
                tensor_in_ct(cx, sc, e, what);
                return NULL;
            }
            if (b)
                return b->value; /* NULL when the binding failed earlier (already reported) */
        } else if (sc && sc->g && ir_find_tensor(sc->g, e->s) >= 0) {
            tensor_in_ct(cx, sc, e, what);
            return NULL;
        }
        return e; /* a param; bind reports unknown names with their location */
    case EX_CALL:
        if (!is_builtin(e->s)) {
            if (op_lookup(e->s) >= 0 || lower_find_fragment(cx, e->s))
                lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc, "%s must be a compile-time value; %s(...) makes a tensor",
                     what, e->s);
            else
                lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc,
                     "unknown function '%s' in %s; the compile-time functions are sqrt, exp, log, min, max, abs, "
                     "ceil, floor and dim",
                     e->s, what);
            return NULL;
        }
        if (strcmp(e->s, "dim") == 0) {
            if (e->nargs != 2 || e->names || e->args[0]->kind != EX_IDENT) {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc, "dim takes a tensor and an axis: dim(x, 0)");
                return NULL;
            }
            expr *c = expr_copy(cx->ar, e);
            const expr *t = e->args[0];
            if (sc && sc->fr) {
                const binding *b = scope_find(sc, t->s);
                if (!b || b->tensor < 0) {
                    if (!b || b->value)
                        lerr(cx, sc, XDNN_ERR_SEMANTIC, t->loc, "dim(): '%s' is not a tensor of fragment '%s'",
                             t->s, sc->fr->frag->name);
                    return NULL;
                }
                c->args[0] = expr_ident(cx->ar, sc->g->tensors[b->tensor].name, t->loc);
            } else if (sc && sc->g && ir_find_tensor(sc->g, t->s) < 0) {
                lower_unknown_name(cx, sc, t);
                return NULL;
            }
            if (!(c->args[1] = lower_ct(cx, sc, e->args[1], what)))
                return NULL;
            return depth_ok(cx, sc, c) ? c : NULL;
        }
        /* other built-ins fold their arguments, like any operator */
        __attribute__((fallthrough));
    case EX_LIST:
    case EX_UNARY:
    case EX_BINARY: {
        expr *c = expr_copy(cx->ar, e);
        for (int i = 0; i < e->nargs; i++)
            if (!(c->args[i] = lower_ct(cx, sc, e->args[i], what)))
                return NULL;
        return depth_ok(cx, sc, c) ? c : NULL;
    }
    }
    return e;
}

/* ---------------------------------------------------------------- nodes */

static int node_new(lower_ctx *cx, scope *sc, int op, const char *name, xloc loc)
{
    xnode *n = ir_add_node(sc->g, op, name, loc);
    n->origin = sc->origin;
    return ir_node_index(sc->g, n);
}

/* Give node ni its written result k, a new virtual tensor. */
static int node_result(lower_ctx *cx, scope *sc, int ni, int k, const char *name, xloc loc)
{
    int ti = lower_define_tensor(cx, sc, name, TK_VIRTUAL, loc);
    if (ti < 0)
        return -1;
    sc->g->tensors[ti].producer = ni;
    sc->g->nodes[ni].results[k] = ti;
    return ti;
}

static bool result_count_ok(const op_desc *d, int k)
{
    if (d->variadic_results)
        return k >= 1 && k <= d->nresults;
    if (d->result_counts)
        return k < 32 && ((d->result_counts >> k) & 1u);
    return k == d->nresults;
}

/* "1 or 3 results (y, mean, inv_var)" */
static char *result_signature(arena *a, const op_desc *d)
{
    char *counts = NULL;
    if (d->variadic_results) {
        counts = arena_sprintf(a, "1 to %d", d->nresults);
    } else if (!d->result_counts) {
        counts = arena_sprintf(a, "%d", d->nresults);
    } else {
        int ks[32], n = 0;
        for (int k = 0; k < 32; k++)
            if ((d->result_counts >> k) & 1u)
                ks[n++] = k;
        for (int i = 0; i < n; i++)
            counts = i == 0 ? arena_sprintf(a, "%d", ks[i])
                            : arena_sprintf(a, "%s%s%d", counts, i == n - 1 ? " or " : ", ", ks[i]);
    }
    char *names = NULL;
    for (int i = 0; i < d->nresults && d->results; i++)
        names = names ? arena_sprintf(a, "%s, %s", names, d->results[i]) : arena_strdup(a, d->results[i]);
    bool one = !d->variadic_results && !d->result_counts && d->nresults == 1;
    return arena_sprintf(a, "%s result%s (%s)", counts ? counts : "?", one ? "" : "s", names ? names : "");
}

static char *join_names(arena *a, const char *const *names, int n)
{
    char *out = NULL;
    for (int i = 0; i < n; i++)
        out = out ? arena_sprintf(a, "%s, %s", out, names[i]) : arena_strdup(a, names[i]);
    return out ? out : arena_strdup(a, "none");
}

static char *attr_names(arena *a, const op_desc *d)
{
    char *out = NULL;
    for (int i = 0; i < d->nattrs; i++)
        out = out ? arena_sprintf(a, "%s, %s", out, d->attrs[i].name) : arena_strdup(a, d->attrs[i].name);
    return out ? out : arena_strdup(a, "none");
}

static bool is_scalar_kind(const expr *e)
{
    return e->kind != EX_LIST && e->kind != EX_STRING && e->kind != EX_DTYPE;
}

/* Targets of the node being built: names[k] NULL = discarded; n == 0 =
 * nested in an expression (one generated result). */
typedef struct targets {
    int n;
    const char *const *names;
    const xloc *locs;
    int *results;
} targets;

/* Build the node for op `opid` called as `e`.  `pre` holds already-lowered
 * positional operands (built-ins whose arguments were lowered to decide
 * whether they fold), else NULL. */
static bool op_node(lower_ctx *cx, scope *sc, namer *nm, expr *e, int opid, const operand *pre,
                    const targets *tg, operand *out)
{
    arena *a = cx->ar;
    const op_desc *d = op_get(opid);
    int nargs = e->nargs;
    size_t cap = (size_t)(nargs + d->nports + 1);
    operand *pos = arena_alloc(a, sizeof *pos * cap);
    expr **pos_e = arena_alloc(a, sizeof *pos_e * cap);
    xport *in = arena_alloc(a, sizeof *in * cap);
    bool *in_set = arena_alloc(a, cap);
    xattr *attrs = arena_alloc(a, sizeof *attrs * cap);
    int npos = 0, nattrs = 0;
    bool ok = true;
    for (size_t i = 0; i < cap; i++)
        in[i].tensor = -1;

    for (int i = 0; i < nargs; i++) {
        const char *kw = e->names ? e->names[i] : NULL;
        if (!kw) {
            if (pre)
                pos[npos] = pre[i];
            else
                ok &= lower_value(cx, sc, nm, e->args[i], &pos[npos]);
            pos_e[npos++] = e->args[i];
            continue;
        }
        xloc kwloc = ast_kwname_loc(kw);
        int p = op_port_index(d, kw);
        if (p >= 0) {
            operand o;
            if (!lower_value(cx, sc, nm, e->args[i], &o)) {
                ok = false;
                continue;
            }
            if (in_set[p]) {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, kwloc, "input '%s' of %s is given twice", kw, d->name);
                ok = false;
                continue;
            }
            if (o.tensor < 0 && !is_scalar_kind(o.scalar)) {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, e->args[i]->loc, "input '%s' of %s must be a tensor or a number",
                     kw, d->name);
                ok = false;
                continue;
            }
            in[p] = (xport){o.tensor, o.tensor >= 0 ? NULL : o.scalar};
            in_set[p] = true;
            continue;
        }
        if (op_attr_index(d, kw) >= 0) {
            bool dup = false;
            for (int j = 0; j < nattrs; j++)
                dup |= strcmp(attrs[j].name, kw) == 0;
            char *what = arena_sprintf(a, "attribute '%s' of %s", kw, d->name);
            expr *v = lower_ct(cx, sc, e->args[i], what);
            if (dup) {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, kwloc, "attribute '%s' of %s is given twice", kw, d->name);
                ok = false;
            } else if (v) {
                attrs[nattrs++] = (xattr){kw, v, kwloc};
            } else {
                ok = false;
            }
            continue;
        }
        const char **cands = arena_alloc(a, sizeof *cands * (size_t)(d->nattrs + d->nports + 1));
        int nc = 0;
        for (int j = 0; j < d->nattrs; j++)
            cands[nc++] = d->attrs[j].name;
        for (int j = 0; j < d->nports; j++)
            cands[nc++] = d->ports[j];
        lerr(cx, sc, XDNN_ERR_SEMANTIC, kwloc, "%s has no input or attribute '%s'%s; its attributes are %s (inputs: %s)",
             d->name, kw, lower_suggest(a, kw, cands, (size_t)nc), attr_names(a, d),
             join_names(a, d->ports, d->nports));
        ok = false;
    }
    if (!ok)
        return false;

    /* Positional operands: ports first, then attributes in order. */
    int p = 0, ai = 0;
    for (int j = 0; j < npos; j++) {
        const operand *o = &pos[j];
        while (p < d->nports && in_set[p] && !(d->variadic && p == d->nports - 1))
            p++;
        bool room = p < d->nports || d->variadic;
        bool to_port = o->tensor >= 0 || (room && p < d->nrequired && is_scalar_kind(o->scalar));
        if (to_port) {
            if (!room) {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, pos_e[j]->loc, "too many tensor arguments: %s takes %d (%s)",
                     d->name, d->nports, join_names(a, d->ports, d->nports));
                return false;
            }
            if ((size_t)p >= cap) {
                lerr(cx, sc, XDNN_ERR_INTERNAL, pos_e[j]->loc, "too many inputs");
                return false;
            }
            in[p] = (xport){o->tensor, o->tensor >= 0 ? NULL : o->scalar};
            in_set[p++] = true;
            continue;
        }
        while (ai < d->nattrs) {
            bool given = false;
            for (int k = 0; k < nattrs; k++)
                given |= strcmp(attrs[k].name, d->attrs[ai].name) == 0;
            if (!given)
                break;
            lerr(cx, sc, XDNN_ERR_SEMANTIC, pos_e[j]->loc, "attribute '%s' of %s is given twice",
                 d->attrs[ai].name, d->name);
            return false;
        }
        if (ai >= d->nattrs) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, pos_e[j]->loc,
                 "too many arguments to %s: it takes inputs (%s) and attributes (%s)", d->name,
                 join_names(a, d->ports, d->nports), attr_names(a, d));
            return false;
        }
        attrs[nattrs++] = (xattr){d->attrs[ai].name, o->scalar, o->scalar->loc};
        ai++;
    }
    int ninputs = d->nports;
    if (d->variadic) {
        ninputs = 0;
        for (int k = 0; k < (int)cap; k++)
            if (in_set[k])
                ninputs = k + 1;
        if (ninputs < d->nports - 1)
            ninputs = d->nports - 1;
    }
    for (int k = 0; k < d->nrequired; k++) {
        if (!in_set[k]) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc, "%s needs input '%s' (its inputs are %s)", d->name,
                 d->ports[k], join_names(a, d->ports, d->nports));
            return false;
        }
    }

    /* Results: the number of targets selects the variant. */
    int nres = tg->n ? tg->n : 1;
    if (!result_count_ok(d, nres)) {
        if (tg->n == 0)
            lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc,
                 "%s returns %s, so it cannot be used inside an expression; assign its results to targets", d->name,
                 result_signature(a, d));
        else
            lerr(cx, sc, XDNN_ERR_SEMANTIC, tg->locs[0], "%s returns %s, but %d target%s assigned", d->name,
                 result_signature(a, d), tg->n, tg->n == 1 ? " is" : "s are");
        return false;
    }
    if (nres > OP_MAX_RESULTS) {
        lerr(cx, sc, XDNN_ERR_SEMANTIC, tg->locs[0], "%s: at most %d results", d->name, OP_MAX_RESULTS);
        return false;
    }
    const char *name = NULL;
    for (int k = 0; k < tg->n && !name; k++)
        name = tg->names[k];
    if (!name)
        name = gen_name(cx, nm);
    int ni = node_new(cx, sc, opid, name, e->loc);
    xnode *n = &sc->g->nodes[ni];
    if (ninputs > n->ninputs) {
        n->inputs = arena_alloc(cx->m->ar, sizeof *n->inputs * (size_t)ninputs);
        n->ninputs = ninputs;
    }
    n->ninputs = ninputs;
    memcpy(n->inputs, in, sizeof *in * (size_t)ninputs);
    n->attrs = attrs;
    n->nattrs = nattrs;
    n->nresults = nres;
    if (tg->n == 0) {
        out->tensor = node_result(cx, sc, ni, 0, name, e->loc);
        return out->tensor >= 0;
    }
    for (int k = 0; k < tg->n; k++) {
        tg->results[k] = -1;
        if (tg->names[k] && (tg->results[k] = node_result(cx, sc, ni, k, tg->names[k], tg->locs[k])) < 0)
            ok = false;
    }
    out->tensor = tg->results[0];
    out->wrote_root = true;
    return ok;
}

static bool lower_call(lower_ctx *cx, scope *sc, namer *nm, expr *e, const targets *tg, operand *out)
{
    const char *fn = e->s;
    const ast_stmt *frag = lower_find_fragment(cx, fn);
    if (frag) {
        int one = -1;
        if (!lower_fragment_call(cx, sc, nm, e, frag, tg->n, tg->names, tg->locs, tg->n ? tg->results : &one))
            return false;
        out->tensor = tg->n ? tg->results[0] : one;
        out->wrote_root = tg->n > 0;
        return true;
    }
    if (is_builtin(fn)) {
        if (strcmp(fn, "dim") == 0) {
            out->scalar = lower_ct(cx, sc, e, "dim()");
            return out->scalar != NULL;
        }
        operand *ops = arena_alloc(cx->ar, sizeof *ops * (size_t)(e->nargs + 1));
        bool any_tensor = false, ok = true;
        for (int i = 0; i < e->nargs; i++) {
            if (e->names && e->names[i]) {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, ast_kwname_loc(e->names[i]), "%s takes no keyword arguments", fn);
                return false;
            }
            ok &= lower_value(cx, sc, nm, e->args[i], &ops[i]);
            any_tensor |= ops[i].tensor >= 0;
        }
        if (!ok)
            return false;
        if (!any_tensor) {
            expr *c = expr_copy(cx->ar, e);
            for (int i = 0; i < e->nargs; i++)
                c->args[i] = ops[i].scalar;
            out->scalar = c;
            return depth_ok(cx, sc, c);
        }
        int opid = op_lookup(fn);
        if (opid < 0) {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc, "%s of a tensor needs the op '%s', which xdnn does not have", fn,
                 fn);
            return false;
        }
        return op_node(cx, sc, nm, e, opid, ops, tg, out);
    }
    int opid = op_lookup(fn);
    if (opid >= 0)
        return op_node(cx, sc, nm, e, opid, NULL, tg, out);

    const char **cands = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < OP_COUNT; i++)
        VEC_PUSH(cx->ar, cands, n, cap, op_table[i]->name);
    for (size_t i = 0; i < cx->nfrags; i++)
        VEC_PUSH(cx->ar, cands, n, cap, cx->frags[i]->name);
    const char *why = init_spec_find(fn) ? " (initializers go on input and weight declarations)" : "";
    lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc, "unknown op or fragment '%s'%s%s", fn,
         lower_suggest(cx->ar, fn, cands, n), why);
    return false;
}

static const char *infix_op_name(int op)
{
    switch (op) {
    case '+': return "add";
    case '-': return "sub";
    case '*': return "mul";
    case '/': return "div";
    case '%': return "mod";
    case '<': return "lt";
    case '>': return "gt";
    case EXPR_OP_EQ: return "eq";
    case EXPR_OP_NE: return "ne";
    case EXPR_OP_LE: return "le";
    case EXPR_OP_GE: return "ge";
    case EXPR_OP_AND: return "logical_and";
    case EXPR_OP_OR: return "logical_or";
    }
    return "?";
}

static const char *infix_op_text(int op)
{
    static char one[2];
    switch (op) {
    case EXPR_OP_EQ: return "==";
    case EXPR_OP_NE: return "!=";
    case EXPR_OP_LE: return "<=";
    case EXPR_OP_GE: return ">=";
    case EXPR_OP_AND: return "&&";
    case EXPR_OP_OR: return "||";
    }
    one[0] = (char)op;
    return one;
}

/* A node for an operator on tensors: `a + b` -> add(a, b), `-x` -> neg(x). */
static bool operator_node(lower_ctx *cx, scope *sc, namer *nm, const expr *e, const char *opname,
                          const char *optext, const operand *ops, int nops, const char *root, operand *out)
{
    int opid = op_lookup(opname);
    if (opid < 0) {
        lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc, "'%s' on tensors needs the op '%s', which xdnn does not have",
             optext, opname);
        return false;
    }
    const op_desc *d = op_get(opid);
    if (d->nports < nops) {
        lerr(cx, sc, XDNN_ERR_INTERNAL, e->loc, "op '%s' has %d inputs, '%s' needs %d", opname, d->nports, optext,
             nops);
        return false;
    }
    const char *name = root ? root : gen_name(cx, nm);
    int ni = node_new(cx, sc, opid, name, e->loc);
    xnode *n = &sc->g->nodes[ni];
    for (int i = 0; i < nops; i++)
        n->inputs[i] = (xport){ops[i].tensor, ops[i].tensor >= 0 ? NULL : ops[i].scalar};
    n->nresults = 1;
    out->tensor = node_result(cx, sc, ni, 0, name, root ? nm->root_loc : e->loc);
    out->wrote_root = root != NULL;
    return out->tensor >= 0;
}

static bool lower_value_root(lower_ctx *cx, scope *sc, namer *nm, expr *e, const char *root, operand *out)
{
    *out = (operand){.tensor = -1};
    switch (e->kind) {
    case EX_INT:
    case EX_FLOAT:
    case EX_BOOL:
    case EX_STRING:
    case EX_DTYPE:
        out->scalar = e;
        return true;
    case EX_LIST:
        out->scalar = lower_ct(cx, sc, e, "a list");
        return out->scalar != NULL;
    case EX_IDENT:
        if (sc->fr) {
            const binding *b = scope_find(sc, e->s);
            if (b) {
                out->tensor = b->tensor;
                out->scalar = b->value;
                return b->tensor >= 0 || b->value; /* neither: failed earlier, reported */
            }
        } else if ((out->tensor = ir_find_tensor(sc->g, e->s)) >= 0) {
            return true;
        }
        if (is_param(cx, sc, e->s)) {
            out->scalar = e;
            return true;
        }
        lower_unknown_name(cx, sc, e);
        return false;
    case EX_UNARY: {
        operand x;
        if (!lower_value(cx, sc, nm, e->args[0], &x))
            return false;
        if (x.tensor < 0) {
            out->scalar = expr_unary(cx->ar, e->op, x.scalar, e->loc);
            return depth_ok(cx, sc, out->scalar);
        }
        return operator_node(cx, sc, nm, e, e->op == '-' ? "neg" : "logical_not", e->op == '-' ? "-" : "!", &x, 1,
                             root, out);
    }
    case EX_BINARY: {
        operand ops[2];
        bool ok = lower_value(cx, sc, nm, e->args[0], &ops[0]);
        ok &= lower_value(cx, sc, nm, e->args[1], &ops[1]);
        if (!ok)
            return false;
        if (ops[0].tensor < 0 && ops[1].tensor < 0) {
            out->scalar = expr_binary(cx->ar, e->op, ops[0].scalar, ops[1].scalar, e->loc);
            return depth_ok(cx, sc, out->scalar);
        }
        return operator_node(cx, sc, nm, e, infix_op_name(e->op), infix_op_text(e->op), ops, 2, root, out);
    }
    case EX_CALL: {
        xloc loc = nm->root_loc;
        int result = -1;
        targets tg = {root ? 1 : 0, &root, &loc, &result};
        return lower_call(cx, sc, nm, e, &tg, out);
    }
    }
    return false;
}

/* Each tree is at most EXPR_MAX_DEPTH deep, but a call of a fragment nests
 * the lowering of the fragment's expressions inside the caller's, so the
 * levels are counted across calls too. */
bool lower_value(lower_ctx *cx, scope *sc, namer *nm, expr *e, operand *out)
{
    if (cx->nesting >= LOWER_MAX_NESTING) {
        *out = (operand){.tensor = -1};
        if (!cx->nesting_reported)
            lerr(cx, sc, XDNN_ERR_SEMANTIC, e->loc,
                 "expressions nest too deeply (more than %d levels, counting the fragments they call)",
                 LOWER_MAX_NESTING);
        cx->nesting_reported = true;
        return false;
    }
    cx->nesting++;
    bool ok = lower_value_root(cx, sc, nm, e, NULL, out);
    cx->nesting--;
    return ok;
}

/* ---------------------------------------------------------------- assignments */

/* The tensor name a target of this scope writes. */
static const char *full_name(lower_ctx *cx, const scope *sc, const char *local, xloc *loc)
{
    if (!sc->fr)
        return local;
    const ast_list *res = &sc->fr->frag->results;
    for (int j = 0; j < res->n; j++) {
        const ast_target *r = res->items[j];
        if (strcmp(r->name, local) == 0 && sc->result_names[j]) {
            if (sc->result_locs)
                *loc = sc->result_locs[j];
            return sc->result_names[j];
        }
    }
    return arena_sprintf(cx->ar, "%s%s", sc->prefix, local);
}

static void bind_local(lower_ctx *cx, scope *sc, const char *local, int tensor)
{
    binding b = {.name = local, .tensor = tensor};
    VEC_PUSH(cx->ar, sc->b, sc->nb, sc->capb, b);
    const ast_list *res = &sc->fr->frag->results;
    for (int j = 0; j < res->n; j++)
        if (strcmp(((const ast_target *)res->items[j])->name, local) == 0)
            sc->result_tensors[j] = tensor;
}

bool lower_assign(lower_ctx *cx, scope *sc, const ast_stmt *st)
{
    arena *a = cx->ar;
    int n = st->targets.n;
    const char **names = arena_alloc(a, sizeof *names * (size_t)n);
    xloc *locs = arena_alloc(a, sizeof *locs * (size_t)n);
    int *results = arena_alloc(a, sizeof *results * (size_t)n);
    const char *base = NULL;
    bool ok = true;
    for (int i = 0; i < n; i++) {
        const ast_target *tg = st->targets.items[i];
        results[i] = -1;
        locs[i] = tg->loc;
        if (strcmp(tg->name, "_") == 0)
            continue;
        for (int j = 0; j < i; j++) {
            if (names[j] && strcmp(((const ast_target *)st->targets.items[j])->name, tg->name) == 0) {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, tg->loc, "'%s' is assigned twice in one statement", tg->name);
                ok = false;
            }
        }
        names[i] = full_name(cx, sc, tg->name, &locs[i]);
        if (!base)
            base = sc->fr ? arena_sprintf(a, "%s%s", sc->prefix, tg->name) : tg->name;
        int prev = ir_find_tensor(sc->g, names[i]);
        if (prev >= 0) {
            lerr_only(cx, XDNN_ERR_SEMANTIC, tg->loc, "tensor '%s' is already defined", names[i]);
            if (sc->g->tensors[prev].loc.file)
                diag_note(cx->d, sc->g->tensors[prev].loc, "'%s' was first defined here", names[i]);
            lframes(cx, sc);
            ok = false;
        }
    }
    if (!base) {
        lerr(cx, sc, XDNN_ERR_SEMANTIC, st->loc, "every target is '_': nothing would be computed");
        ok = false;
    }
    if (ok) {
        namer nm = {.base = base, .root_loc = locs[0]};
        for (int i = 0; i < n; i++)
            if (names[i]) {
                nm.root_loc = locs[i];
                break;
            }
        operand o = {.tensor = -1};
        if (st->e->kind == EX_CALL) {
            targets tg = {n, names, locs, results};
            ok = lower_call(cx, sc, &nm, st->e, &tg, &o);
        } else if (n == 1) {
            ok = lower_value_root(cx, sc, &nm, st->e, names[0], &o);
            results[0] = o.tensor;
        } else {
            lerr(cx, sc, XDNN_ERR_SEMANTIC, st->e->loc,
                 "%d targets need a call of an op or fragment with %d results; this expression gives one tensor", n,
                 n);
            ok = false;
        }
        if (ok && !o.wrote_root) {
            if (o.tensor < 0) {
                lerr(cx, sc, XDNN_ERR_SEMANTIC, st->e->loc,
                     "the right-hand side of '%s' is a compile-time value, not a tensor", names[0]);
                ok = false;
            } else {
                int opid = op_lookup("identity");
                if (opid < 0) {
                    lerr(cx, sc, XDNN_ERR_SEMANTIC, st->e->loc, "'%s' would only rename '%s'; use '%s' directly",
                         names[0], sc->g->tensors[o.tensor].name, sc->g->tensors[o.tensor].name);
                    ok = false;
                } else {
                    int ni = node_new(cx, sc, opid, names[0], st->e->loc);
                    sc->g->nodes[ni].inputs[0].tensor = o.tensor;
                    sc->g->nodes[ni].nresults = 1;
                    results[0] = node_result(cx, sc, ni, 0, names[0], locs[0]);
                    ok = results[0] >= 0;
                }
            }
        }
    }
    for (int i = 0; i < n; i++) {
        const ast_target *tg = st->targets.items[i];
        if (!names[i])
            continue;
        if (sc->fr)
            bind_local(cx, sc, tg->name, ok ? results[i] : -1);
        if (ok && !lower_annotate(cx, sc, tg, results[i], false))
            ok = false;
    }
    return ok;
}

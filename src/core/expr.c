/* expr.c — compile-time expressions: construction (recording each tree's
 * depth, which the builders bound by EXPR_MAX_DEPTH), folding with overflow,
 * exactness and nesting checks, and printing back in .dnn syntax. */
#include "expr.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static expr *expr_new(arena *a, expr_kind k, xloc loc)
{
    expr *e = arena_alloc(a, sizeof *e);
    e->kind = k;
    e->loc = loc;
    e->depth = 1;
    return e;
}

void expr_refresh_depth(expr *e)
{
    int deepest = 0;
    for (int i = 0; i < e->nargs; i++)
        if (e->args[i] && e->args[i]->depth > deepest)
            deepest = e->args[i]->depth;
    e->depth = deepest + 1;
}

expr *expr_int(arena *a, int64_t v, xloc loc)
{
    expr *e = expr_new(a, EX_INT, loc);
    e->i = v;
    return e;
}

expr *expr_float(arena *a, double v, xloc loc)
{
    expr *e = expr_new(a, EX_FLOAT, loc);
    e->f = v;
    return e;
}

expr *expr_bool(arena *a, bool v, xloc loc)
{
    expr *e = expr_new(a, EX_BOOL, loc);
    e->b = v;
    return e;
}

expr *expr_string(arena *a, const char *s, xloc loc)
{
    expr *e = expr_new(a, EX_STRING, loc);
    e->s = arena_strdup(a, s);
    return e;
}

expr *expr_dtype(arena *a, xdnn_dtype t, xloc loc)
{
    expr *e = expr_new(a, EX_DTYPE, loc);
    e->dt = t;
    return e;
}

expr *expr_ident(arena *a, const char *name, xloc loc)
{
    expr *e = expr_new(a, EX_IDENT, loc);
    e->s = arena_strdup(a, name);
    return e;
}

expr *expr_list(arena *a, expr **items, int n, xloc loc)
{
    expr *e = expr_new(a, EX_LIST, loc);
    e->args = items;
    e->nargs = n;
    expr_refresh_depth(e);
    return e;
}

expr *expr_unary(arena *a, int op, expr *x, xloc loc)
{
    expr *e = expr_new(a, EX_UNARY, loc);
    e->op = op;
    e->args = arena_alloc(a, sizeof *e->args);
    e->args[0] = x;
    e->nargs = 1;
    expr_refresh_depth(e);
    return e;
}

expr *expr_binary(arena *a, int op, expr *l, expr *r, xloc loc)
{
    expr *e = expr_new(a, EX_BINARY, loc);
    e->op = op;
    e->args = arena_alloc(a, 2 * sizeof *e->args);
    e->args[0] = l;
    e->args[1] = r;
    e->nargs = 2;
    expr_refresh_depth(e);
    return e;
}

expr *expr_call(arena *a, const char *fn, expr **args, const char **names, int n, xloc loc)
{
    expr *e = expr_new(a, EX_CALL, loc);
    e->s = arena_strdup(a, fn);
    e->args = args;
    e->names = names;
    e->nargs = n;
    expr_refresh_depth(e);
    return e;
}

/* ------------------------------------------------------------------ values */

const char *val_kind_name(val_kind k)
{
    static const char *const names[] = {"nothing", "int", "float", "bool", "string", "dtype", "list"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

bool value_as_int(const value *v, int64_t *out)
{
    if (v->kind == VAL_INT) {
        *out = v->i;
        return true;
    }
    if (v->kind == VAL_BOOL) {
        *out = v->b;
        return true;
    }
    return false;
}

bool value_as_float(const value *v, double *out)
{
    if (v->kind == VAL_FLOAT) {
        *out = v->f;
        return true;
    }
    if (v->kind == VAL_INT) {
        *out = (double)v->i;
        return true;
    }
    return false;
}

/* Shortest text that reads back as the same double, always with a '.' or 'e'. */
static void float_text(char *buf, size_t len, double f)
{
    if (isinf(f)) {
        snprintf(buf, len, f > 0 ? "inf" : "-inf");
        return;
    }
    if (isnan(f)) {
        snprintf(buf, len, "nan");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, f);
        if (strtod(buf, NULL) == f)
            break;
    }
    if (!strpbrk(buf, ".eEn"))
        strncat(buf, ".0", len - strlen(buf) - 1);
}

static void text_append(arena *a, char **buf, size_t *n, size_t *cap, const char *s)
{
    size_t k = strlen(s);
    if (*n + k + 1 > *cap) {
        size_t nc = (*cap ? *cap : 64);
        while (nc < *n + k + 1)
            nc *= 2;
        *buf = arena_grow(a, *buf, *n, nc, 1);
        *cap = nc;
    }
    memcpy(*buf + *n, s, k + 1);
    *n += k;
}

typedef struct textbuf {
    arena *a;
    char *s;
    size_t n, cap;
} textbuf;

static void tb_put(textbuf *t, const char *s) { text_append(t->a, &t->s, &t->n, &t->cap, s); }

static void tb_string_literal(textbuf *t, const char *s)
{
    tb_put(t, "\"");
    for (const char *p = s; *p; p++) {
        char c[3] = {*p, 0, 0};
        if (*p == '"' || *p == '\\') {
            c[0] = '\\';
            c[1] = *p;
        } else if (*p == '\n') {
            c[0] = '\\';
            c[1] = 'n';
        }
        tb_put(t, c);
    }
    tb_put(t, "\"");
}

static void tb_value(textbuf *t, const value *v)
{
    char buf[64];
    switch (v->kind) {
    case VAL_NONE: tb_put(t, "none"); break;
    case VAL_INT: snprintf(buf, sizeof buf, "%" PRId64, v->i); tb_put(t, buf); break;
    case VAL_FLOAT: float_text(buf, sizeof buf, v->f); tb_put(t, buf); break;
    case VAL_BOOL: tb_put(t, v->b ? "true" : "false"); break;
    case VAL_STRING: tb_string_literal(t, v->s); break;
    case VAL_DTYPE: tb_put(t, xdnn_dtype_name(v->dt)); break;
    case VAL_LIST:
        tb_put(t, "[");
        for (int i = 0; i < v->n; i++) {
            if (i)
                tb_put(t, ", ");
            tb_value(t, &v->items[i]);
        }
        tb_put(t, "]");
        break;
    }
}

char *value_to_text(arena *a, const value *v)
{
    textbuf t = {a, NULL, 0, 0};
    tb_put(&t, "");
    tb_value(&t, v);
    return t.s;
}

void value_print(FILE *f, const value *v)
{
    arena *a = arena_create();
    fputs(value_to_text(a, v), f);
    arena_destroy(a);
}

/* ------------------------------------------------------------------ printing */

static const char *binop_text(int op)
{
    switch (op) {
    case '+': return "+";
    case '-': return "-";
    case '*': return "*";
    case '/': return "/";
    case '%': return "%";
    case '<': return "<";
    case '>': return ">";
    case EXPR_OP_EQ: return "==";
    case EXPR_OP_NE: return "!=";
    case EXPR_OP_LE: return "<=";
    case EXPR_OP_GE: return ">=";
    case EXPR_OP_AND: return "&&";
    case EXPR_OP_OR: return "||";
    }
    return "?";
}

/* Binding strength, matching the grammar's precedence table. */
static int prec_of(const expr *e)
{
    if (e->kind == EX_UNARY)
        return 6;
    if (e->kind == EX_INT && e->i == INT64_MIN) /* written as a subtraction (tb_expr): parenthesized as one */
        return 4;
    if (e->kind != EX_BINARY)
        return 7;
    switch (e->op) {
    case EXPR_OP_OR: return 1;
    case EXPR_OP_AND: return 2;
    case '+': case '-': return 4;
    case '*': case '/': case '%': return 5;
    default: return 3; /* comparisons: non-associative */
    }
}

static void tb_expr(textbuf *t, const expr *e);

static void tb_operand(textbuf *t, const expr *e, bool paren)
{
    if (paren)
        tb_put(t, "(");
    tb_expr(t, e);
    if (paren)
        tb_put(t, ")");
}

bool dnn_is_writable_name(const char *s)
{
    if (!s || !*s || strcmp(s, "_") == 0)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p == '`' || *p < 32 || *p == 127)
            return false;
    return true;
}

static const char *const dnn_reserved[] = {
    "dnn",  "graph", "param", "sweep", "input", "weight", "output", "fragment", "include", "assert",
    "check", "true", "false", "f64",   "f32",   "f16",    "bf16",   "f8e4m3",   "f8e5m2",  "i64",
    "i32",  "i16",   "i8",    "u8",    "bool",  "fp8_e4m3", "fp8_e5m2", "e8m0", "f8e8m0",
};

bool dnn_is_plain_ident(const char *s)
{
    if (!s || !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
        return false;
    for (const char *p = s + 1; *p; p++)
        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            return false;
    for (size_t i = 0; i < sizeof dnn_reserved / sizeof dnn_reserved[0]; i++)
        if (strcmp(s, dnn_reserved[i]) == 0)
            return false;
    return true;
}

/* A name as .dnn text reads it back: back-quoted unless plain. */
static void tb_name(textbuf *t, const char *name)
{
    bool plain = dnn_is_plain_ident(name);
    if (!plain)
        tb_put(t, "`");
    tb_put(t, name);
    if (!plain)
        tb_put(t, "`");
}

static void tb_expr(textbuf *t, const expr *e)
{
    char buf[64];
    switch (e->kind) {
    case EX_INT: /* -2^63 has no literal (its magnitude is out of range): spelled as the subtraction that reads
                  * back as itself (prec_of gives it a subtraction's precedence) */
        if (e->i == INT64_MIN)
            snprintf(buf, sizeof buf, "-9223372036854775807 - 1");
        else
            snprintf(buf, sizeof buf, "%" PRId64, e->i);
        tb_put(t, buf);
        break;
    case EX_FLOAT:
        if (e->text)
            tb_put(t, e->text);
        else {
            float_text(buf, sizeof buf, e->f);
            tb_put(t, buf);
        }
        break;
    case EX_BOOL: tb_put(t, e->b ? "true" : "false"); break;
    case EX_STRING: tb_string_literal(t, e->s); break;
    case EX_DTYPE: tb_put(t, xdnn_dtype_name(e->dt)); break;
    case EX_IDENT: /* a generated or fragment-local tensor in dim(t, i) (`b.0`, `b/t`) is back-quoted */
        tb_name(t, e->s);
        break;
    case EX_LIST:
        tb_put(t, "[");
        for (int i = 0; i < e->nargs; i++) {
            if (i)
                tb_put(t, ", ");
            tb_expr(t, e->args[i]);
        }
        tb_put(t, "]");
        break;
    case EX_UNARY:
        tb_put(t, e->op == '!' ? "!" : "-");
        tb_operand(t, e->args[0], prec_of(e->args[0]) < 6);
        break;
    case EX_BINARY: {
        int p = prec_of(e);
        bool cmp = p == 3;
        tb_operand(t, e->args[0], cmp ? prec_of(e->args[0]) <= p : prec_of(e->args[0]) < p);
        tb_put(t, " ");
        tb_put(t, binop_text(e->op));
        tb_put(t, " ");
        tb_operand(t, e->args[1], prec_of(e->args[1]) <= p);
        break;
    }
    case EX_CALL: /* the callee and keywords too: the lexer takes any back-quoted text as a name there */
        tb_name(t, e->s);
        tb_put(t, "(");
        for (int i = 0; i < e->nargs; i++) {
            if (i)
                tb_put(t, ", ");
            if (e->names && e->names[i]) {
                tb_name(t, e->names[i]);
                tb_put(t, "=");
            }
            tb_expr(t, e->args[i]);
        }
        tb_put(t, ")");
        break;
    }
}

char *expr_to_text(arena *a, const expr *e)
{
    textbuf t = {a, NULL, 0, 0};
    tb_put(&t, "");
    tb_expr(&t, e);
    return t.s;
}

bool expr_is_literal(const expr *e)
{
    switch (e->kind) {
    case EX_IDENT:
    case EX_CALL:
        return false;
    case EX_LIST:
    case EX_UNARY:
    case EX_BINARY:
        for (int i = 0; i < e->nargs; i++)
            if (!expr_is_literal(e->args[i]))
                return false;
        return true;
    default:
        return true;
    }
}

/* ------------------------------------------------------------------ folding */

#define EVAL_FAIL(env, e, ...)                                                      \
    do {                                                                            \
        diag_error((env)->diags, XDNN_ERR_SEMANTIC, (e)->loc, __VA_ARGS__);         \
        return false;                                                               \
    } while (0)

static bool is_num(const value *v) { return v->kind == VAL_INT || v->kind == VAL_FLOAT; }

static bool eval_binary(const expr *e, const eval_env *env, const value *l, const value *r, value *out)
{
    const char *op = binop_text(e->op);
    if (e->op == EXPR_OP_AND || e->op == EXPR_OP_OR) {
        if (l->kind != VAL_BOOL || r->kind != VAL_BOOL)
            EVAL_FAIL(env, e, "operator '%s' needs bools, got %s and %s", op, val_kind_name(l->kind),
                      val_kind_name(r->kind));
        *out = (value){.kind = VAL_BOOL, .b = e->op == EXPR_OP_AND ? (l->b && r->b) : (l->b || r->b)};
        return true;
    }
    if ((e->op == EXPR_OP_EQ || e->op == EXPR_OP_NE) && !(is_num(l) && is_num(r))) {
        bool eq;
        if (l->kind != r->kind)
            eq = false;
        else if (l->kind == VAL_STRING)
            eq = strcmp(l->s, r->s) == 0;
        else if (l->kind == VAL_BOOL)
            eq = l->b == r->b;
        else if (l->kind == VAL_DTYPE)
            eq = l->dt == r->dt;
        else
            EVAL_FAIL(env, e, "cannot compare %s values", val_kind_name(l->kind));
        *out = (value){.kind = VAL_BOOL, .b = e->op == EXPR_OP_EQ ? eq : !eq};
        return true;
    }
    if (!is_num(l) || !is_num(r))
        EVAL_FAIL(env, e, "operator '%s' needs numbers, got %s and %s", op, val_kind_name(l->kind),
                  val_kind_name(r->kind));
    bool ints = l->kind == VAL_INT && r->kind == VAL_INT;
    double a = l->kind == VAL_INT ? (double)l->i : l->f, b = r->kind == VAL_INT ? (double)r->i : r->f;
    switch (e->op) {
    case '<': *out = (value){.kind = VAL_BOOL, .b = ints ? l->i < r->i : a < b}; return true;
    case '>': *out = (value){.kind = VAL_BOOL, .b = ints ? l->i > r->i : a > b}; return true;
    case EXPR_OP_LE: *out = (value){.kind = VAL_BOOL, .b = ints ? l->i <= r->i : a <= b}; return true;
    case EXPR_OP_GE: *out = (value){.kind = VAL_BOOL, .b = ints ? l->i >= r->i : a >= b}; return true;
    case EXPR_OP_EQ: *out = (value){.kind = VAL_BOOL, .b = ints ? l->i == r->i : a == b}; return true;
    case EXPR_OP_NE: *out = (value){.kind = VAL_BOOL, .b = ints ? l->i != r->i : a != b}; return true;
    }
    if (!ints) {
        double v = 0;
        switch (e->op) {
        case '+': v = a + b; break;
        case '-': v = a - b; break;
        case '*': v = a * b; break;
        case '/': v = a / b; break;
        case '%': EVAL_FAIL(env, e, "operator '%%' needs ints");
        }
        *out = (value){.kind = VAL_FLOAT, .f = v};
        return true;
    }
    int64_t x = l->i, y = r->i, v = 0;
    bool overflow = false;
    switch (e->op) {
    case '+': overflow = __builtin_add_overflow(x, y, &v); break;
    case '-': overflow = __builtin_sub_overflow(x, y, &v); break;
    case '*': overflow = __builtin_mul_overflow(x, y, &v); break;
    case '/':
    case '%':
        if (y == 0)
            EVAL_FAIL(env, e, "division by zero: %" PRId64 " %s 0", x, op);
        if (x == INT64_MIN && y == -1)
            overflow = true;
        else if (e->op == '%')
            v = x % y;
        else if (x % y != 0)
            EVAL_FAIL(env, e, "integer division is not exact: %" PRId64 " / %" PRId64 " (use a float operand for "
                      "float division)", x, y);
        else
            v = x / y;
        break;
    }
    if (overflow)
        EVAL_FAIL(env, e, "integer overflow: %" PRId64 " %s %" PRId64 " does not fit in 64 bits", x, op, y);
    *out = (value){.kind = VAL_INT, .i = v};
    return true;
}

static bool eval_call(const expr *e, const eval_env *env, value *out)
{
    value args[4];
    if (e->nargs > 4)
        EVAL_FAIL(env, e, "'%s' takes at most 2 arguments", e->s);
    for (int i = 0; i < e->nargs; i++) {
        if (e->names && e->names[i])
            EVAL_FAIL(env, e->args[i], "'%s' takes no keyword arguments", e->s);
        if (strcmp(e->s, "dim") == 0 && i == 0 && e->args[0]->kind == EX_IDENT) {
            args[0] = (value){.kind = VAL_STRING, .s = e->args[0]->s};
            continue;
        }
        if (!expr_eval(e->args[i], env, &args[i]))
            return false;
    }
    const char *fn = e->s;
    if (strcmp(fn, "dim") == 0) {
        int64_t axis, d;
        if (e->nargs != 2 || args[0].kind != VAL_STRING || !value_as_int(&args[1], &axis))
            EVAL_FAIL(env, e, "dim(tensor, axis) needs a tensor name and an int");
        if (!env->tensor_dim || !env->tensor_dim(env->self, args[0].s, axis, &d))
            EVAL_FAIL(env, e, "dim(%s, %" PRId64 "): no such tensor or axis here", args[0].s, axis);
        *out = (value){.kind = VAL_INT, .i = d};
        return true;
    }
    bool two = strcmp(fn, "min") == 0 || strcmp(fn, "max") == 0;
    if (e->nargs != (two ? 2 : 1))
        EVAL_FAIL(env, e, "'%s' takes %d argument%s, got %d", fn, two ? 2 : 1, two ? "s" : "", e->nargs);
    for (int i = 0; i < e->nargs; i++)
        if (!is_num(&args[i]))
            EVAL_FAIL(env, e->args[i], "'%s' needs a number, got %s", fn, val_kind_name(args[i].kind));
    if (two) {
        bool lt = args[0].kind == VAL_INT && args[1].kind == VAL_INT
                      ? args[0].i < args[1].i
                      : (args[0].kind == VAL_INT ? (double)args[0].i : args[0].f) <
                            (args[1].kind == VAL_INT ? (double)args[1].i : args[1].f);
        bool pick_first = fn[1] == 'i' ? lt : !lt;
        *out = pick_first ? args[0] : args[1];
        return true;
    }
    if (strcmp(fn, "abs") == 0 && args[0].kind == VAL_INT) {
        if (args[0].i == INT64_MIN)
            EVAL_FAIL(env, e, "integer overflow in abs");
        *out = (value){.kind = VAL_INT, .i = args[0].i < 0 ? -args[0].i : args[0].i};
        return true;
    }
    double x = args[0].kind == VAL_INT ? (double)args[0].i : args[0].f, v;
    if (strcmp(fn, "sqrt") == 0)
        v = sqrt(x);
    else if (strcmp(fn, "exp") == 0)
        v = exp(x);
    else if (strcmp(fn, "log") == 0)
        v = log(x);
    else if (strcmp(fn, "abs") == 0)
        v = fabs(x);
    else if (strcmp(fn, "ceil") == 0 || strcmp(fn, "floor") == 0) {
        v = fn[0] == 'c' ? ceil(x) : floor(x);
        if (!(fabs(v) < 9.2e18))
            EVAL_FAIL(env, e, "%s(%g) does not fit in an int", fn, x);
        *out = (value){.kind = VAL_INT, .i = (int64_t)v};
        return true;
    } else
        EVAL_FAIL(env, e, "unknown compile-time function '%s' (known: sqrt exp log min max abs ceil floor dim)", fn);
    *out = (value){.kind = VAL_FLOAT, .f = v};
    return true;
}

static bool eval_node(const expr *e, const eval_env *env, value *out);

/* Levels of expr_eval active on this thread.  A param's value is folded when
 * it is first looked up, from inside the expression that mentions it, so a
 * chain of params nests folds beyond any one tree's depth. */
static _Thread_local int eval_nesting;

bool expr_eval(const expr *e, const eval_env *env, value *out)
{
    *out = (value){0};
    if (eval_nesting >= EXPR_MAX_EVAL_NESTING)
        EVAL_FAIL(env, e, "expression nests too deeply to fold (more than %d levels, counting the params it refers "
                  "to)", EXPR_MAX_EVAL_NESTING);
    eval_nesting++;
    bool ok = eval_node(e, env, out);
    eval_nesting--;
    return ok;
}

static bool eval_node(const expr *e, const eval_env *env, value *out)
{
    *out = (value){0};
    switch (e->kind) {
    case EX_INT: *out = (value){.kind = VAL_INT, .i = e->i}; return true;
    case EX_FLOAT: *out = (value){.kind = VAL_FLOAT, .f = e->f}; return true;
    case EX_BOOL: *out = (value){.kind = VAL_BOOL, .b = e->b}; return true;
    case EX_STRING: *out = (value){.kind = VAL_STRING, .s = e->s}; return true;
    case EX_DTYPE: *out = (value){.kind = VAL_DTYPE, .dt = e->dt}; return true;
    case EX_IDENT: {
        bool failed = false;
        if (env->lookup && env->lookup(env->self, e->s, out, e->loc, env->diags, &failed))
            return true;
        if (failed)
            return false;
        if (strcmp(e->s, "inf") == 0 || strcmp(e->s, "nan") == 0) { /* dnn(5): predefined names */
            *out = (value){.kind = VAL_FLOAT, .f = e->s[0] == 'i' ? (double)INFINITY : (double)NAN};
            return true;
        }
        EVAL_FAIL(env, e, "unknown name '%s' (not a param)", e->s);
    }
    case EX_LIST: {
        value *items = e->nargs ? arena_alloc(env->ar, (size_t)e->nargs * sizeof *items) : NULL;
        for (int i = 0; i < e->nargs; i++)
            if (!expr_eval(e->args[i], env, &items[i]))
                return false;
        *out = (value){.kind = VAL_LIST, .items = items, .n = e->nargs};
        return true;
    }
    case EX_UNARY: {
        value x;
        if (!expr_eval(e->args[0], env, &x))
            return false;
        if (e->op == '!') {
            if (x.kind != VAL_BOOL)
                EVAL_FAIL(env, e, "operator '!' needs a bool, got %s", val_kind_name(x.kind));
            *out = (value){.kind = VAL_BOOL, .b = !x.b};
            return true;
        }
        if (x.kind == VAL_INT) {
            if (x.i == INT64_MIN)
                EVAL_FAIL(env, e, "integer overflow in negation");
            *out = (value){.kind = VAL_INT, .i = -x.i};
            return true;
        }
        if (x.kind == VAL_FLOAT) {
            *out = (value){.kind = VAL_FLOAT, .f = -x.f};
            return true;
        }
        EVAL_FAIL(env, e, "unary '-' needs a number, got %s", val_kind_name(x.kind));
    }
    case EX_BINARY: {
        value l, r;
        if (!expr_eval(e->args[0], env, &l) || !expr_eval(e->args[1], env, &r))
            return false;
        return eval_binary(e, env, &l, &r, out);
    }
    case EX_CALL:
        return eval_call(e, env, out);
    }
    return false;
}

/* expr.h — compile-time expressions and the values they fold to.
 *
 * Dims, strides, attributes, params and init arguments stay symbolic in the IR
 * (so JSON and canonical .dnn can be written back with "3*D" intact) and are
 * folded by expr_eval once params are bound.  Tensor-valued expressions never
 * reach here: the front end flattens them into nodes.
 */
#ifndef XDNN_EXPR_H
#define XDNN_EXPR_H

#include "arena.h"
#include "diag.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum val_kind {
    VAL_NONE = 0,
    VAL_INT,
    VAL_FLOAT,
    VAL_BOOL,
    VAL_STRING,
    VAL_DTYPE,
    VAL_LIST
} val_kind;

typedef struct value {
    val_kind kind;
    int64_t i;
    double f;
    bool b;
    const char *s;
    xdnn_dtype dt;
    struct value *items; /* VAL_LIST */
    int n;
} value;

typedef enum expr_kind {
    EX_INT,
    EX_FLOAT,
    EX_BOOL,
    EX_STRING,
    EX_DTYPE,
    EX_IDENT,  /* a param name (or, before flattening, a tensor name) */
    EX_LIST,   /* [a, b, ...] */
    EX_UNARY,  /* op: '-' or '!' */
    EX_BINARY, /* op: + - * / % < > and the EXPR_OP_* codes below */
    EX_CALL    /* compile-time built-in: sqrt exp log min max abs ceil floor dim */
} expr_kind;

enum { EXPR_OP_EQ = 256, EXPR_OP_NE, EXPR_OP_LE, EXPR_OP_GE, EXPR_OP_AND, EXPR_OP_OR };

/* Every consumer of an expression (lowering, folding, printing) recurses once
 * per level, so trees deeper than EXPR_MAX_DEPTH are refused where they are
 * built (the parser; lowering, for fragment arguments substituted into a
 * fragment's expressions).  Folding also follows param references, so it
 * stops at EXPR_MAX_EVAL_NESTING levels counted across params. */
enum { EXPR_MAX_DEPTH = 1000, EXPR_MAX_EVAL_NESTING = 5000 };

typedef struct expr {
    expr_kind kind;
    xloc loc;
    int64_t i;
    double f;
    bool b;
    const char *s;       /* string, identifier or callee name */
    const char *text;    /* original spelling of a FLOAT literal, for exact round trips */
    xdnn_dtype dt;
    int op;
    struct expr **args;  /* operands, list items or call arguments */
    const char **names;  /* call keyword names (NULL entries = positional); may be NULL */
    int nargs;
    int depth;           /* levels of this tree (a leaf is 1); set by the constructors */
} expr;

/* Constructors (arena-owned). */
expr *expr_int(arena *a, int64_t v, xloc loc);
expr *expr_float(arena *a, double v, xloc loc);
expr *expr_bool(arena *a, bool v, xloc loc);
expr *expr_string(arena *a, const char *s, xloc loc);
expr *expr_dtype(arena *a, xdnn_dtype t, xloc loc);
expr *expr_ident(arena *a, const char *name, xloc loc);
expr *expr_list(arena *a, expr **items, int n, xloc loc);
expr *expr_unary(arena *a, int op, expr *x, xloc loc);
expr *expr_binary(arena *a, int op, expr *l, expr *r, xloc loc);
expr *expr_call(arena *a, const char *fn, expr **args, const char **names, int n, xloc loc);
/* Recompute e->depth from its operands after they were replaced. */
void expr_refresh_depth(expr *e);

/* Name lookup during evaluation: params (and dim(t,i) for graphs). */
typedef struct eval_env {
    /* Return true and fill *out when `name` is a known compile-time value. */
    bool (*lookup)(void *self, const char *name, value *out, xloc loc, xdnn_diags_t *d, bool *failed);
    /* dim(t, i): return true and set *out; NULL when dims are not available. */
    bool (*tensor_dim)(void *self, const char *tensor, int64_t axis, int64_t *out);
    void *self;
    arena *ar;            /* where lists are allocated */
    xdnn_diags_t *diags;
} eval_env;

/* Fold `e`.  Errors (unknown name, inexact int division, overflow, type
 * mismatch, nesting deeper than EXPR_MAX_EVAL_NESTING) are reported with e's
 * location and return false. */
bool expr_eval(const expr *e, const eval_env *env, value *out);

/* Write `e` in .dnn syntax (minimal parentheses) into an arena string. */
char *expr_to_text(arena *a, const expr *e);
/* [A-Za-z_][A-Za-z0-9_]* and not a keyword, a dtype name, "true"/"false": a name .dnn text spells without
 * back-quotes (expr_to_text back-quotes the others; params and graphs must be plain). */
bool dnn_is_plain_ident(const char *s);
/* A tensor name .dnn can spell (back-quoted if need be) and JSON holds: non-empty, not "_", no back-quote or
 * control character. */
bool dnn_is_writable_name(const char *s);
/* True when `e` mentions no identifier (a literal or literal list). */
bool expr_is_literal(const expr *e);

/* Values */
void value_print(FILE *f, const value *v);
char *value_to_text(arena *a, const value *v);
bool value_as_int(const value *v, int64_t *out);      /* INT, or BOOL */
bool value_as_float(const value *v, double *out);     /* INT or FLOAT */
const char *val_kind_name(val_kind k);

#endif

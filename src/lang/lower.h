/* lower.h — internal interface of the lowering from AST to IR (lower*.c):
 * includes, params, graphs and statements (lower.c), tensor expressions into
 * nodes (lower_expr.c), fragments (lower_frag.c). */
#ifndef XDNN_LOWER_H
#define XDNN_LOWER_H

#include "ast.h"

/* Lowering recurses per expression level and per fragment call; these bound
 * the stack it needs whatever the input (lower_value, lower_fragment_call). */
enum { LOWER_MAX_NESTING = 10000, LOWER_MAX_FRAGMENT_DEPTH = 100 };
/* Includes nest at most this deep (each level is a recursion through
 * lower_file and the parser); documented in dnn(5). */
enum { LOWER_MAX_INCLUDE_DEPTH = 64 };

/* State of one dnn_parse_into call, shared by every file it includes. */
typedef struct lower_ctx {
    xdnn_module_t *m;
    arena *ar;
    xdnn_diags_t *d;
    const char *const *include_dirs;
    int errors;
    xdnn_status first_status;
    /* includes: every canonical path read so far, and the chain being read */
    strmap seen;             /* canonical path -> 1 */
    const char **stack;      /* canonical paths, outermost first */
    const char **stack_names;/* display names */
    size_t nstack, capstack, capstack_names;
    ast_stmt **frags;        /* fragment definitions, file order */
    size_t nfrags, capfrags;
    strmap frag_index;       /* name -> index into frags (the first definition) */
    int nesting;             /* lower_value levels active */
    bool nesting_reported;   /* LOWER_MAX_NESTING was reported (once is enough) */
} lower_ctx;

/* One call of a fragment being expanded (a chain up to the graph). */
typedef struct frame {
    const ast_stmt *frag;
    xloc call_loc;
    const struct frame *parent;
} frame;

/* A name visible in a fragment body: a tensor or a compile-time value. */
typedef struct binding {
    const char *name;
    int tensor;              /* >= 0: a tensor */
    expr *value;             /* else: compile-time value (tensor params may get scalars) */
    bool is_tensor_param;
} binding;

/* Where names resolve while lowering one statement. */
typedef struct scope {
    xgraph *g;
    const ast_list *body;    /* statements of the graph/fragment, for use-before-definition */
    const frame *fr;         /* NULL in a graph body */
    binding *b;
    size_t nb, capb;
    const char *prefix;      /* "<call-site>/" for fragment locals, "" in a graph */
    const char *const *result_names; /* fragment results -> call-site names (NULL = discarded) */
    const xloc *result_locs;
    int *result_tensors;
    const char *origin;      /* node->origin for nodes made here */
} scope;

/* A lowered operand: a tensor, or a compile-time scalar expression. */
typedef struct operand {
    int tensor;
    expr *scalar;
    bool wrote_root;         /* the outermost node wrote the statement's target */
} operand;

/* Generates `<base>.<k>` names for the temporaries of one statement. */
typedef struct namer {
    const char *base;
    int k;
    xloc root_loc;           /* where the statement's (first) target is written */
} namer;

/* ---- lower.c */
void lower_file(lower_ctx *cx, const char *file, const char *text, size_t len, xloc included_at);
/* Report an error (no fragment notes) / the fragment notes of scope sc. */
void lerr_only(lower_ctx *cx, xdnn_status st, xloc loc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void lframes(lower_ctx *cx, const scope *sc);
/* Report an error followed by the notes of the fragment calls that led here. */
void lerr(lower_ctx *cx, const scope *sc, xdnn_status st, xloc loc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Create or fetch the tensor a target names; -1 after a redefinition error. */
int lower_define_tensor(lower_ctx *cx, const scope *sc, const char *name, tensor_kind kind, xloc loc);
bool lower_dtype(lower_ctx *cx, const scope *sc, const char *name, xloc loc, xdnn_dtype *out);
/* Apply a target's `: dtype @layout` annotation to tensor ti (-1: check only). */
/* in_output: the annotation of an `output` statement, which types the stored
 * copy only (has_odtype); on an assignment's target it types the value. */
bool lower_annotate(lower_ctx *cx, scope *sc, const ast_target *tg, int ti, bool in_output);
/* " (did you mean 'x'?)" for the closest candidate, or "". */
char *lower_suggest(arena *a, const char *name, const char *const *cands, size_t n);

/* ---- lower_expr.c */
/* Resolve `e` as a tensor or a compile-time value; makes nodes (named by nm)
 * for tensor subexpressions. */
bool lower_value(lower_ctx *cx, scope *sc, namer *nm, expr *e, operand *out);
/* An assignment `targets = e`. */
bool lower_assign(lower_ctx *cx, scope *sc, const ast_stmt *st);
/* A compile-time expression in scope (fragment values substituted); NULL
 * after an error naming `what` ("attribute 'stride' of conv"). */
expr *lower_ct(lower_ctx *cx, const scope *sc, expr *e, const char *what);
/* Look a name up in a fragment's bindings. */
const binding *scope_find(const scope *sc, const char *name);
/* Report a name that is not visible (unknown, or used before its definition). */
void lower_unknown_name(lower_ctx *cx, const scope *sc, const expr *e);

/* ---- lower_frag.c */
void lower_fragment_def(lower_ctx *cx, ast_stmt *st);
const ast_stmt *lower_find_fragment(const lower_ctx *cx, const char *name);
/* Expand a call; results[i] receive the tensors of the fragment's results
 * (names[i]: call-site names; NULL = discarded). */
bool lower_fragment_call(lower_ctx *cx, scope *sc, namer *nm, const expr *call, const ast_stmt *frag,
                         int nnames, const char *const *names, const xloc *locs, int *results);

/* ---- parse.c */
/* Turn a call expression into an initializer; `errors` counts reports (may be NULL). */
xinit *init_from_call(arena *a, const expr *e, xdnn_diags_t *d, int *errors);

#endif

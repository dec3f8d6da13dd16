/* ast.h — the syntax tree the bison grammar builds, before lowering.
 *
 * Expressions reuse the IR's `expr` (a tensor expression is just an expr whose
 * identifiers name tensors or whose calls name ops); lowering decides which
 * parts are tensors and flattens those into nodes.  Everything lives in the
 * module's arena, so a syntax error in the middle of a file leaks nothing and
 * the grammar needs no %destructor for memory.
 */
#ifndef XDNN_AST_H
#define XDNN_AST_H

#include "../core/ir.h"

/* A growable arena-backed array of pointers. */
typedef struct ast_list {
    void **items;
    int n, cap;
} ast_list;

void ast_list_push(arena *a, ast_list *l, void *item);

/* `DTYPE[dims] @layout` in a declaration, or `: DTYPE @layout` on a target. */
typedef struct ast_type {
    bool has_dtype;
    const char *dtype_name; /* as written; checked during lowering */
    xloc dtype_loc;
    bool has_dims;
    ast_list dims;          /* expr * */
    xlayout layout;         /* kind LAYOUT_DEFAULT = none written */
} ast_type;

typedef struct ast_target {
    const char *name;       /* "_" = discarded */
    xloc loc;
    ast_type annot;
} ast_target;

/* A call argument or graph option: `name = e` or positional (name NULL). */
typedef struct ast_arg {
    const char *name;
    xloc name_loc;
    expr *e;
} ast_arg;

/* A fragment parameter: untyped / `tensor` = tensor, else compile-time. */
typedef struct ast_fparam {
    const char *name;
    const char *type;       /* NULL = tensor */
    xloc loc, type_loc;
    expr *dflt;             /* may be NULL */
} ast_fparam;

typedef enum ast_kind {
    AST_INCLUDE,
    AST_PARAM,
    AST_ASSERT,
    AST_FRAGMENT,
    AST_GRAPH,
    AST_INPUT,
    AST_WEIGHT,
    AST_ASSIGN,
    AST_OUTPUT,
    AST_CHECK
} ast_kind;

typedef struct ast_stmt {
    ast_kind kind;
    xloc loc;               /* the keyword, or the first target of an assignment */
    const char *name;       /* include path, param/fragment/graph/tensor name */
    xloc name_loc;
    expr *e;                /* param value, assert condition, init, assignment rhs */
    ast_list sweep;         /* param: expr * */
    const char *msg;        /* assert message */
    ast_type type;          /* input/weight */
    ast_list targets;       /* assign/output: ast_target * */
    ast_list args;          /* graph options, check arguments: ast_arg * */
    ast_list fparams;       /* fragment: ast_fparam * */
    ast_list results;       /* fragment: ast_target * (names only) */
    ast_list body;          /* graph/fragment: ast_stmt * */
    bool bad;               /* fragment: invalid definition (calls report nothing more) */
} ast_stmt;

/* What the grammar was asked to parse (the first token the lexer returns). */
typedef enum parse_mode { PARSE_FILE, PARSE_EXPR, PARSE_KWARGS } parse_mode;

/* State shared by the lexer and the parser for one run. */
typedef struct pstate {
    arena *ar;
    xdnn_diags_t *diags;
    const char *file;       /* interned name used in every xloc */
    int line_base, col_base;/* offset of the text (expr_parse_text's `base`) */
    parse_mode mode;
    int start_token;        /* returned once by the lexer, then 0 */
    int line, col;          /* lexer position of the next character */
    int errors;             /* lexical + syntax errors reported */
    ast_list items;         /* PARSE_FILE: ast_stmt * */
    expr *expr_result;      /* PARSE_EXPR */
    ast_list kwargs;        /* PARSE_KWARGS: ast_arg * */
} pstate;

/* A keyword argument's name that remembers where it was written, so lowering
 * can underline `stride` in `stride=x` (an expr keeps only the name).
 * ast_kwname_loc accepts only names made by ast_kwname. */
const char *ast_kwname(arena *a, const char *name, xloc loc);
xloc ast_kwname_loc(const char *kwname);

/* Run the grammar over text (parse.c).  Returns the number of errors. */
int ast_parse(pstate *ps, const char *text, size_t len);

/* Report at a location and count the error in ps. */
void ps_error(pstate *ps, xloc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif

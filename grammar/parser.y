/* parser.y — the .dnn grammar (dsl-proposal §5.3) building the AST of ast.h.
 *
 * LALR(1), no conflicts (%expect 0).  Pure and reentrant: the lexer's and the
 * parser's state live in a pstate, so the standalone expression parser (a
 * second start token) can run from inside bind or the JSON reader.  Values
 * are arena-owned (the module's arena), so nothing leaks when error recovery
 * discards them and no %destructor is needed for memory.  A syntax error in a
 * statement skips to its ';' (`error ';'`) so one run reports several errors.
 * Expression trees are at most EXPR_MAX_DEPTH levels deep (DEPTH_CHECK), so
 * no later pass can overflow the stack on them.
 */
%define api.pure full
%define api.prefix {dnn}
%define parse.error detailed
%define parse.lac full
%locations
%expect 0
%param {void *scanner}
%parse-param {pstate *ps}

%code requires {
#include "lang/ast.h"
}

%code provides {
int dnnlex(DNNSTYPE *lval, DNNLTYPE *lloc, void *scanner);
}

%code {
#include <string.h>

static xloc L(pstate *ps, DNNLTYPE l)
{
    return (xloc){ps->file, l.first_line + ps->line_base, l.first_column + (l.first_line == 1 ? ps->col_base : 0),
                  l.last_line == l.first_line ? l.last_column + (l.first_line == 1 ? ps->col_base : 0)
                                              : l.first_column + (l.first_line == 1 ? ps->col_base : 0)};
}

static void dnnerror(DNNLTYPE *loc, void *scanner, pstate *ps, const char *msg)
{
    (void)scanner;
    ps_error(ps, L(ps, *loc), "%s", msg);
}

static ast_stmt *stmt_new(pstate *ps, ast_kind k, DNNLTYPE loc)
{
    ast_stmt *s = arena_alloc(ps->ar, sizeof *s);
    s->kind = k;
    s->loc = L(ps, loc);
    return s;
}

static expr **list_exprs(const ast_list *l) { return (expr **)l->items; }

static expr *call_new(pstate *ps, const char *fn, DNNLTYPE loc, const ast_list *args)
{
    int n = args ? args->n : 0;
    expr **a = arena_alloc(ps->ar, sizeof *a * (size_t)(n ? n : 1));
    const char **names = NULL;
    for (int i = 0; i < n; i++) {
        ast_arg *arg = args->items[i];
        a[i] = arg->e;
        if (arg->name) {
            if (!names)
                names = arena_alloc(ps->ar, sizeof *names * (size_t)n);
            names[i] = arg->name;
        }
    }
    return expr_call(ps->ar, fn, a, names, n, L(ps, loc));
}

static ast_arg *arg_new(pstate *ps, const char *name, DNNLTYPE nloc, expr *e)
{
    ast_arg *a = arena_alloc(ps->ar, sizeof *a);
    a->name_loc = L(ps, nloc);
    a->name = name ? ast_kwname(ps->ar, name, a->name_loc) : NULL;
    a->e = e;
    return a;
}

static ast_target *target_new(pstate *ps, const char *name, DNNLTYPE loc)
{
    ast_target *t = arena_alloc(ps->ar, sizeof *t);
    t->name = name;
    t->loc = L(ps, loc);
    return t;
}

static xlayout layout_new(pstate *ps, const char *name, DNNLTYPE loc, const ast_list *args)
{
    xlayout l = {.loc = L(ps, loc)};
    if (!args) {
        l.kind = LAYOUT_NAMED;
        l.name = name;
        return l;
    }
    l.name = name;
    l.args = list_exprs(args);
    l.nargs = args->n;
    if (strcmp(name, "perm") == 0) {
        l.kind = LAYOUT_PERM;
    } else if (strcmp(name, "strides") == 0) {
        l.kind = LAYOUT_STRIDES;
    } else {
        ps_error(ps, l.loc, "unknown layout '@%s(...)'; with arguments only @perm(...) and @strides(...) exist", name);
        l.kind = LAYOUT_DEFAULT;
    }
    return l;
}

static expr *binop(pstate *ps, int op, expr *a, expr *b, DNNLTYPE loc)
{
    return expr_binary(ps->ar, op, a, b, L(ps, loc));
}

/* Refuse a tree deeper than EXPR_MAX_DEPTH where it is built, at its operator
 * (or call, or '[').  Left-associative chains (`x + x + ...`) reduce at once,
 * so bison's stack limit never sees them, while every later pass (lowering,
 * folding, printing, the JSON expression strings) recurses once per level.
 * YYERROR recovers at the statement, like any syntax error. */
#define DEPTH_CHECK(e, loc)                                                                                      \
    do {                                                                                                         \
        if ((e)->depth > EXPR_MAX_DEPTH) {                                                                       \
            ps_error(ps, L(ps, loc), "expression nests too deeply (more than %d levels)", EXPR_MAX_DEPTH);      \
            YYERROR;                                                                                             \
        }                                                                                                        \
    } while (0)
}

%union {
    int64_t i;
    struct { double f; const char *text; } num;
    const char *s;
    expr *e;
    ast_stmt *st;
    ast_list list;
    ast_type type;
    xlayout layout;
    ast_target *tgt;
    ast_arg *arg;
    ast_fparam *fp;
}

%token START_FILE START_EXPR START_KWARGS
%token DNN "dnn" GRAPH "graph" PARAM "param" SWEEP "sweep" INPUT "input" WEIGHT "weight"
%token OUTPUT "output" FRAGMENT "fragment" INCLUDE "include" ASSERT "assert" CHECK "check"
%token TRUE "true" FALSE "false"
%token <s> DTYPE "dtype" IDENT "identifier" STRING "string"
%token <i> INT "integer"
%token <num> FLOAT "number"
%token ARROW "->" EQ "==" NE "!=" LE "<=" GE ">=" AND "&&" OR "||"

%left OR
%left AND
%nonassoc EQ NE '<' '>' LE GE
%left '+' '-'
%left '*' '/' '%'
%precedence UMINUS '!'

%type <e> expr primary opt_init
%type <st> item include param assert fragment graph stmt decl assign output check
%type <list> items stmts exprs sweep_opt args kwargs gopts targets fparams fplist idlist
%type <type> ttype
%type <layout> layout opt_layout
%type <tgt> target
%type <arg> arg kwarg
%type <fp> fparam
%type <s> dtname ptype

%%

top
    : START_FILE file
    | START_EXPR expr           { ps->expr_result = $2; }
    | START_KWARGS              { ps->kwargs = (ast_list){0}; }
    | START_KWARGS kwargs       { ps->kwargs = $2; }
    ;

file
    : version items             { ps->items = $2; }
    ;

version
    : %empty
    | DNN INT ';'               {
        if ($2 != 1)
            ps_error(ps, L(ps, @2), "unsupported .dnn version %lld (this xdnn reads version 1)", (long long)$2);
      }
    ;

items
    : %empty                    { $$ = (ast_list){0}; }
    | items item                { $$ = $1; if ($2) ast_list_push(ps->ar, &$$, $2); }
    ;

item
    : include
    | param
    | assert
    | fragment
    | graph
    | error ';'                 { $$ = NULL; }
    ;

include
    : INCLUDE STRING ';'        { $$ = stmt_new(ps, AST_INCLUDE, @1); $$->name = $2; $$->name_loc = L(ps, @2); }
    ;

param
    : PARAM IDENT '=' expr sweep_opt ';' {
        $$ = stmt_new(ps, AST_PARAM, @1);
        $$->name = $2;
        $$->name_loc = L(ps, @2);
        $$->e = $4;
        $$->sweep = $5;
      }
    ;

sweep_opt
    : %empty                    { $$ = (ast_list){0}; }
    | SWEEP '[' exprs ']'       { $$ = $3; }
    ;

assert
    : ASSERT expr ';'           { $$ = stmt_new(ps, AST_ASSERT, @1); $$->e = $2; }
    | ASSERT expr ',' STRING ';' { $$ = stmt_new(ps, AST_ASSERT, @1); $$->e = $2; $$->msg = $4; }
    ;

graph
    : GRAPH IDENT gopts '{' stmts '}' {
        $$ = stmt_new(ps, AST_GRAPH, @1);
        $$->name = $2;
        $$->name_loc = L(ps, @2);
        $$->args = $3;
        $$->body = $5;
      }
    ;

gopts
    : %empty                    { $$ = (ast_list){0}; }
    | '(' ')'                   { $$ = (ast_list){0}; }
    | '(' kwargs ')'            { $$ = $2; }
    ;

kwargs
    : kwarg                     { $$ = (ast_list){0}; ast_list_push(ps->ar, &$$, $1); }
    | kwargs ',' kwarg          { $$ = $1; ast_list_push(ps->ar, &$$, $3); }
    ;

kwarg
    : IDENT '=' expr            { $$ = arg_new(ps, $1, @1, $3); }
    ;

stmts
    : %empty                    { $$ = (ast_list){0}; }
    | stmts stmt                { $$ = $1; if ($2) ast_list_push(ps->ar, &$$, $2); }
    ;

stmt
    : param
    | decl
    | assign
    | output
    | assert
    | check
    | error ';'                 { $$ = NULL; }
    ;

decl
    : INPUT IDENT ':' ttype opt_init ';' {
        $$ = stmt_new(ps, AST_INPUT, @1);
        $$->name = $2;
        $$->name_loc = L(ps, @2);
        $$->type = $4;
        $$->e = $5;
      }
    | WEIGHT IDENT ':' ttype opt_init ';' {
        $$ = stmt_new(ps, AST_WEIGHT, @1);
        $$->name = $2;
        $$->name_loc = L(ps, @2);
        $$->type = $4;
        $$->e = $5;
      }
    ;

opt_init
    : %empty                    { $$ = NULL; }
    | '=' expr                  { $$ = $2; }
    ;

ttype
    : dtname '[' ']' opt_layout {
        $$ = (ast_type){.has_dtype = true, .dtype_name = $1, .dtype_loc = L(ps, @1), .has_dims = true, .layout = $4};
      }
    | dtname '[' exprs ']' opt_layout {
        $$ = (ast_type){.has_dtype = true, .dtype_name = $1, .dtype_loc = L(ps, @1), .has_dims = true,
                        .dims = $3, .layout = $5};
      }
    ;

/* An identifier is accepted where a dtype belongs so the error can say
 * "unknown dtype 'f17'" instead of a bare syntax error. */
dtname
    : DTYPE
    | IDENT
    ;

opt_layout
    : %empty                    { $$ = (xlayout){0}; }
    | layout
    ;

layout
    : '@' IDENT                 { $$ = layout_new(ps, $2, @2, NULL); }
    | '@' IDENT '(' exprs ')'   { $$ = layout_new(ps, $2, @2, &$4); }
    ;

assign
    : targets '=' expr ';'      {
        $$ = stmt_new(ps, AST_ASSIGN, @1);
        $$->targets = $1;
        $$->e = $3;
      }
    ;

targets
    : target                    { $$ = (ast_list){0}; ast_list_push(ps->ar, &$$, $1); }
    | targets ',' target        { $$ = $1; ast_list_push(ps->ar, &$$, $3); }
    ;

target
    : IDENT                     { $$ = target_new(ps, $1, @1); }
    | IDENT ':' dtname opt_layout {
        $$ = target_new(ps, $1, @1);
        $$->annot = (ast_type){.has_dtype = true, .dtype_name = $3, .dtype_loc = L(ps, @3), .layout = $4};
      }
    | IDENT ':' layout          { $$ = target_new(ps, $1, @1); $$->annot.layout = $3; }
    ;

output
    : OUTPUT targets ';'        { $$ = stmt_new(ps, AST_OUTPUT, @1); $$->targets = $2; }
    ;

check
    : CHECK args ';'            { $$ = stmt_new(ps, AST_CHECK, @1); $$->args = $2; }
    ;

fragment
    : FRAGMENT IDENT '(' fparams ')' ARROW '(' idlist ')' '{' stmts '}' {
        $$ = stmt_new(ps, AST_FRAGMENT, @1);
        $$->name = $2;
        $$->name_loc = L(ps, @2);
        $$->fparams = $4;
        $$->results = $8;
        $$->body = $11;
      }
    ;

fparams
    : %empty                    { $$ = (ast_list){0}; }
    | fplist
    ;

fplist
    : fparam                    { $$ = (ast_list){0}; ast_list_push(ps->ar, &$$, $1); }
    | fplist ',' fparam         { $$ = $1; ast_list_push(ps->ar, &$$, $3); }
    ;

fparam
    : IDENT                     {
        $$ = arena_alloc(ps->ar, sizeof *$$); $$->name = $1; $$->loc = L(ps, @1);
      }
    | IDENT ':' ptype           {
        $$ = arena_alloc(ps->ar, sizeof *$$); $$->name = $1; $$->loc = L(ps, @1);
        $$->type = $3; $$->type_loc = L(ps, @3);
      }
    | IDENT ':' ptype '=' expr  {
        $$ = arena_alloc(ps->ar, sizeof *$$); $$->name = $1; $$->loc = L(ps, @1);
        $$->type = $3; $$->type_loc = L(ps, @3); $$->dflt = $5;
      }
    | IDENT '=' expr            {
        $$ = arena_alloc(ps->ar, sizeof *$$); $$->name = $1; $$->loc = L(ps, @1); $$->dflt = $3;
      }
    ;

/* `bool` lexes as a dtype, so a parameter type is either token. */
ptype
    : IDENT
    | DTYPE
    ;

idlist
    : IDENT                     { $$ = (ast_list){0}; ast_list_push(ps->ar, &$$, target_new(ps, $1, @1)); }
    | idlist ',' IDENT          { $$ = $1; ast_list_push(ps->ar, &$$, target_new(ps, $3, @3)); }
    ;

expr
    : expr OR expr              { $$ = binop(ps, EXPR_OP_OR, $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr AND expr             { $$ = binop(ps, EXPR_OP_AND, $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr EQ expr              { $$ = binop(ps, EXPR_OP_EQ, $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr NE expr              { $$ = binop(ps, EXPR_OP_NE, $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr '<' expr             { $$ = binop(ps, '<', $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr '>' expr             { $$ = binop(ps, '>', $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr LE expr              { $$ = binop(ps, EXPR_OP_LE, $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr GE expr              { $$ = binop(ps, EXPR_OP_GE, $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr '+' expr             { $$ = binop(ps, '+', $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr '-' expr             { $$ = binop(ps, '-', $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr '*' expr             { $$ = binop(ps, '*', $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr '/' expr             { $$ = binop(ps, '/', $1, $3, @2); DEPTH_CHECK($$, @2); }
    | expr '%' expr             { $$ = binop(ps, '%', $1, $3, @2); DEPTH_CHECK($$, @2); }
    | '-' expr %prec UMINUS     { $$ = expr_unary(ps->ar, '-', $2, L(ps, @1)); DEPTH_CHECK($$, @1); }
    | '!' expr                  { $$ = expr_unary(ps->ar, '!', $2, L(ps, @1)); DEPTH_CHECK($$, @1); }
    | primary
    ;

primary
    : INT                       { $$ = expr_int(ps->ar, $1, L(ps, @1)); }
    | FLOAT                     { $$ = expr_float(ps->ar, $1.f, L(ps, @1)); $$->text = $1.text; }
    | STRING                    { $$ = expr_string(ps->ar, $1, L(ps, @1)); }
    | TRUE                      { $$ = expr_bool(ps->ar, true, L(ps, @1)); }
    | FALSE                     { $$ = expr_bool(ps->ar, false, L(ps, @1)); }
    | IDENT                     { $$ = expr_ident(ps->ar, $1, L(ps, @1)); }
    | DTYPE                     {
        xdnn_dtype dt = XDNN_F32;
        if (!xdnn_dtype_from_name($1, &dt))
            ps_error(ps, L(ps, @1), "dtype '%s' is not supported", $1);
        $$ = expr_dtype(ps->ar, dt, L(ps, @1));
      }
    | IDENT '(' ')'             { $$ = call_new(ps, $1, @1, NULL); }
    | IDENT '(' args ')'        { $$ = call_new(ps, $1, @1, &$3); DEPTH_CHECK($$, @1); }
    | '(' expr ')'              { $$ = $2; }
    | '[' ']'                   { $$ = expr_list(ps->ar, NULL, 0, L(ps, @$)); }
    | '[' exprs ']'             {
        $$ = expr_list(ps->ar, list_exprs(&$2), $2.n, L(ps, @$));
        DEPTH_CHECK($$, @1);
      }
    ;

exprs
    : expr                      { $$ = (ast_list){0}; ast_list_push(ps->ar, &$$, $1); }
    | exprs ',' expr            { $$ = $1; ast_list_push(ps->ar, &$$, $3); }
    ;

args
    : arg                       { $$ = (ast_list){0}; ast_list_push(ps->ar, &$$, $1); }
    | args ',' arg              { $$ = $1; ast_list_push(ps->ar, &$$, $3); }
    ;

arg
    : expr                      { $$ = arg_new(ps, NULL, @1, $1); }
    | IDENT '=' expr            { $$ = arg_new(ps, $1, @1, $3); }
    ;

%%

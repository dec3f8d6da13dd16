/* test_parse.c — the .dnn front end: lexer positions, grammar, flattening
 * names, multi-result ops, fragments, includes, the text parsers used by the
 * JSON reader and bind, the C building API, and the four examples of
 * dsl-proposal §5.8 (tests/unit/data/).  Run from the repository root. */
#include "xdnn.h"
#include "test_util.h"

#include "core/ir.h"
#include "lang/parse.h"
#include "ops/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Parse text as a .dnn module; returns NULL (printing diags) on failure
 * unless `expect_fail`. */
static xdnn_module_t *parse(const char *text, xdnn_diags_t *d)
{
    xdnn_module_t *m = NULL;
    xdnn_status s = xdnn_module_parse("t.dnn", text, strlen(text), false, d, &m);
    if (s != XDNN_OK)
        return NULL;
    return m;
}

static const xnode *node_named(const xgraph *g, const char *name)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0)
            return &g->nodes[i];
    return NULL;
}

static const char *op_of(const xnode *n) { return n ? op_get(n->op)->name : "(no node)"; }

static const char *tname(const xgraph *g, int t) { return t >= 0 ? g->tensors[t].name : "_"; }

static xdnn_module_t *load_bound(const char *path, xdnn_diags_t *d)
{
    xdnn_module_t *m = NULL;
    if (xdnn_module_load(path, NULL, d, &m) != XDNN_OK) {
        xdnn_diags_print(d, stderr);
        return NULL;
    }
    if (xdnn_graph_bind(xdnn_module_find_graph(m, NULL), NULL, 0, d) != XDNN_OK) {
        xdnn_diags_print(d, stderr);
        xdnn_module_destroy(m);
        return NULL;
    }
    return m;
}

/* ---------------------------------------------------------------- examples */

static void test_conv_bias_relu(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = load_bound("tests/unit/data/conv_bias_relu.dnn", d);
    CHECK(m);
    if (m) {
        xgraph *g = xdnn_module_find_graph(m, NULL);
        CHECK_STR(g->name, "conv_bias_relu");
        CHECK(m->nparams == 5 && m->params[0].nsweep == 3 && !m->params[0].derived);
        CHECK(g->nnodes == 3);
        CHECK_STR(op_of(node_named(g, "y.0")), "conv");
        CHECK_STR(op_of(node_named(g, "y.1")), "add");
        CHECK_STR(op_of(node_named(g, "y")), "relu");
        const xnode *add = node_named(g, "y.1");
        CHECK(add && add->loc.line == 14 && add->loc.col == 40);
        const xnode *conv = node_named(g, "y.0");
        CHECK(conv && conv->loc.col == 12 && conv->loc.col_end == 15 && conv->nattrs == 2);
        int x = ir_find_tensor(g, "x"), w = ir_find_tensor(g, "w"), y = ir_find_tensor(g, "y");
        CHECK(x >= 0 && g->tensors[x].layout.kind == LAYOUT_NAMED && strcmp(g->tensors[x].layout.name, "nhwc") == 0);
        CHECK(g->tensors[x].rank == 4 && g->tensors[x].rdims[0] == 32 && g->tensors[x].rstrides[1] == 1);
        CHECK(w >= 0 && g->tensors[w].init && strcmp(g->tensors[w].init->fn, "randn") == 0);
        CHECK(g->tensors[w].init && g->tensors[w].init->nargs == 2 && strcmp(g->tensors[w].init->names[1], "seed") == 0);
        int b = ir_find_tensor(g, "b");
        CHECK(b >= 0 && g->tensors[b].init && strcmp(g->tensors[b].init->names[0], "path") == 0);
        CHECK(y >= 0 && g->tensors[y].is_output && g->noutputs == 1 && g->outputs[0] == y);
        /* `output y: f16` types the stored copy, not what other ops read */
        CHECK(!g->tensors[y].has_dtype && g->tensors[y].has_odtype && g->tensors[y].odtype == XDNN_F16);
        CHECK(g->tensors[y].rdtype == XDNN_F16 && g->tensors[y].rvdtype == XDNN_F16); /* nothing reads y */
        CHECK(g->ctx_io && g->ctx_io->kind == EX_DTYPE && g->ctx_io->dt == XDNN_F16);
        CHECK(g->ctx_seed && g->ctx_seed->kind == EX_INT && g->ctx_seed->i == 1);
        CHECK(m->nsources == 1);
    }
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
}

static void test_attention_block(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = load_bound("tests/unit/data/attention_block.dnn", d);
    CHECK(m);
    if (m) {
        xgraph *g = xdnn_module_find_graph(m, NULL);
        xparam *hd = ir_find_param(m, g, "HD");
        CHECK(hd && hd->derived && hd->rvalue.i == 64);
        CHECK(m->nasserts == 1 && strcmp(m->asserts[0].msg, "D must be a multiple of H") == 0);
        const xnode *split = node_named(g, "q");
        CHECK_STR(op_of(split), "split");
        CHECK(split && split->nresults == 3);
        if (split) {
            CHECK_STR(tname(g, split->results[1]), "k");
            CHECK_STR(tname(g, split->results[2]), "v");
        }
        CHECK_STR(op_of(node_named(g, "qh.0")), "reshape");
        const xnode *rs = node_named(g, "qh.0");
        CHECK(rs && rs->nattrs == 1 && strcmp(rs->attrs[0].name, "dims") == 0); /* positional attribute */
        const xnode *sdpa = node_named(g, "o");
        CHECK(sdpa && sdpa->nresults == 2);
        int o = ir_find_tensor(g, "o");
        CHECK(o >= 0 && g->tensors[o].dtype == XDNN_BF16 && g->tensors[o].layout.kind == LAYOUT_NAMED);
        CHECK(g->tensors[o].rdims[1] == 16 && g->tensors[o].rdims[3] == 64);
        CHECK_STR(op_of(node_named(g, "y.0")), "matmul");
        CHECK_STR(op_of(node_named(g, "y")), "add");
        CHECK(g->noutputs == 2);
    }
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
}

static void test_bn_train_step(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = load_bound("tests/unit/data/bn_train_step.dnn", d);
    CHECK(m);
    if (m) {
        xgraph *g = xdnn_module_find_graph(m, NULL);
        const xnode *bn = node_named(g, "z");
        CHECK(bn && bn->nresults == 5 && bn->nattrs == 2);
        if (bn) {
            int rm = op_port_index(op_get(bn->op), "running_mean");
            CHECK(rm >= 0 && bn->inputs[rm].tensor == ir_find_tensor(g, "rmean")); /* keyword port */
        }
        const xnode *mul = node_named(g, "gamma_next.0");
        CHECK_STR(op_of(mul), "mul");
        CHECK(mul && mul->inputs[0].tensor < 0 && mul->inputs[0].scalar && mul->inputs[0].scalar->kind == EX_IDENT);
        CHECK(mul && mul->rscalars && mul->rscalars[0].kind == VAL_FLOAT && mul->rscalars[0].f == 0.01);
        CHECK(g->noutputs == 6);
    }
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
}

static void test_mlp_gelu(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    CHECK(xdnn_module_load("tests/unit/data/mlp_gelu.dnn", NULL, d, &m) == XDNN_OK);
    if (m) {
        xgraph *g = xdnn_module_find_graph(m, NULL);
        CHECK(m->nsources == 2); /* the include */
        const xnode *mm = node_named(g, "h.0/y.0");
        CHECK_STR(op_of(mm), "matmul");
        CHECK(mm && mm->nattrs == 1 && mm->attrs[0].e->kind == EX_BOOL && mm->attrs[0].e->b);
        CHECK(mm && mm->origin && strcmp(mm->origin, "in fragment 'linear' called from tests/unit/data/mlp_gelu.dnn:24:12") == 0);
        CHECK_STR(op_of(node_named(g, "h.0")), "add");
        CHECK_STR(op_of(node_named(g, "h")), "gelu");
        CHECK_STR(op_of(node_named(g, "y/y.0")), "matmul");
        CHECK_STR(op_of(node_named(g, "y")), "add");
        CHECK(node_named(g, "h") && node_named(g, "h")->origin == NULL);
        xparam *f = ir_find_param(m, g, "F");
        CHECK(f && f->derived);
    }
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
}

/* ---------------------------------------------------------------- language details */

static void test_flatten_and_operators(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = parse("param s = 2.5;\n"
                             "graph a { input x: f32[4]; }\n"
                             "graph g(tf32=true) {\n"
                             "  input x: f32[4];\n"
                             "  input z: f32[4];\n"
                             "  y = -x * s + sqrt(x) / sqrt(4.0);\n"
                             "  c = !(x < z) && x >= z || x == z;\n"
                             "  k = concat(x, z, x, axis=0);\n"
                             "  a, _, iv = layernorm(x, z, z);\n"
                             "  r = max(x, 0.0);\n"
                             "  output y, c, k, a, iv, r;\n"
                             "}\n",
                             d);
    CHECK(m);
    if (m) {
        xgraph *g = xdnn_module_find_graph(m, NULL);
        CHECK_STR(g->name, "g"); /* the last graph of the main file */
        CHECK(xdnn_module_graph_count(m) == 2 && xdnn_module_find_graph(m, "a") == m->graphs[0]);
        CHECK_STR(op_of(node_named(g, "y.0")), "neg");
        CHECK_STR(op_of(node_named(g, "y.1")), "mul");
        CHECK_STR(op_of(node_named(g, "y.2")), "sqrt");
        CHECK_STR(op_of(node_named(g, "y.3")), "div");
        CHECK_STR(op_of(node_named(g, "y")), "add");
        const xnode *div = node_named(g, "y.3");
        CHECK(div && div->inputs[1].tensor < 0 && div->inputs[1].scalar && div->inputs[1].scalar->kind == EX_CALL);
        const xnode *mul = node_named(g, "y.1");
        CHECK(mul && mul->inputs[1].scalar && mul->inputs[1].scalar->kind == EX_IDENT);
        CHECK_STR(op_of(node_named(g, "c.0")), "lt");
        CHECK_STR(op_of(node_named(g, "c.1")), "logical_not");
        CHECK_STR(op_of(node_named(g, "c.2")), "ge");
        CHECK_STR(op_of(node_named(g, "c.3")), "logical_and");
        CHECK_STR(op_of(node_named(g, "c.4")), "eq");
        CHECK_STR(op_of(node_named(g, "c")), "logical_or");
        const xnode *k = node_named(g, "k");
        CHECK(k && k->ninputs == 3 && k->inputs[2].tensor == ir_find_tensor(g, "x"));
        const xnode *ln = node_named(g, "a");
        CHECK(ln && ln->nresults == 3 && ln->results[1] == -1 && ln->results[2] == ir_find_tensor(g, "iv"));
        const xnode *r = node_named(g, "r");
        CHECK(r && r->inputs[1].scalar && r->inputs[1].scalar->kind == EX_FLOAT);
        CHECK(g->ctx_tf32 && g->ctx_tf32->kind == EX_BOOL);
        CHECK(xdnn_graph_bind(g, NULL, 0, d) == XDNN_OK);
    }
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
}

static void test_fragments(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = parse("fragment inner(x, k: float = 2.0) -> (y) {\n"
                             "  t = x * k;\n"
                             "  y = exp(t) + t;\n"
                             "}\n"
                             "fragment outer(x) -> (y, z) {\n"
                             "  assert dim(x, 0) == 4;\n"
                             "  y = relu(inner(x, k=3.0));\n"
                             "  z = -y;\n"
                             "}\n"
                             "graph g {\n"
                             "  input x: f32[4];\n"
                             "  a, b = outer(x);\n"
                             "  c = inner(x) * 2;\n"
                             "  output a, b, c;\n"
                             "}\n",
                             d);
    CHECK(m);
    if (m) {
        xgraph *g = xdnn_module_find_graph(m, NULL);
        /* outer's locals live under the call site "a"; inner's under "a/y.0" */
        CHECK_STR(op_of(node_named(g, "a/y.0/t")), "mul");
        CHECK_STR(op_of(node_named(g, "a/y.0/y.0")), "exp");
        CHECK_STR(op_of(node_named(g, "a/y.0")), "add");
        CHECK_STR(op_of(node_named(g, "a")), "relu");
        CHECK_STR(op_of(node_named(g, "b")), "neg");
        CHECK_STR(op_of(node_named(g, "c.0/t")), "mul");
        CHECK_STR(op_of(node_named(g, "c")), "mul");
        const xnode *t = node_named(g, "a/y.0/t");
        CHECK(t && t->inputs[1].scalar && t->inputs[1].scalar->kind == EX_FLOAT && t->inputs[1].scalar->f == 3.0);
        const xnode *t2 = node_named(g, "c.0/t");
        CHECK(t2 && t2->inputs[1].scalar && t2->inputs[1].scalar->f == 2.0); /* the default */
        CHECK(t && t->origin &&
              strcmp(t->origin, "in fragment 'inner' called from t.dnn:7:12, in fragment 'outer' called from t.dnn:12:10") == 0);
        /* dim(x, 0) in the fragment's assert names the call's tensor */
        CHECK(g->nasserts == 1 && g->asserts[0].cond->args[0]->args[0]->kind == EX_IDENT &&
              strcmp(g->asserts[0].cond->args[0]->args[0]->s, "x") == 0);
    }
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
}

static void test_lexer_and_recovery(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    /* Three bad statements: each is reported, at the offending token. */
    xdnn_module_t *m = parse("graph g {\n"
                             "\tinput x: f32[4];   # a tab before 'input'\n"
                             "  y = relu(x +);\n"
                             "  z = \"abc;\n"
                             "  w = x ? 2;\n"
                             "}\n",
                             d);
    CHECK(!m);
    CHECK(xdnn_diags_error_count(d) == 3);
    CHECK(xdnn_diags_status(d) == XDNN_ERR_SYNTAX);
    const xdnn_diag *e0 = xdnn_diags_get(d, 0), *e1 = xdnn_diags_get(d, 1), *e2 = xdnn_diags_get(d, 2);
    CHECK(e0 && e0->line == 3 && e0->col == 15 && strstr(e0->message, "unexpected ')'"));
    CHECK(e1 && e1->line == 4 && e1->col == 7 && e1->col_end == 11 && strstr(e1->message, "unterminated string"));
    CHECK(e2 && e2->line == 5 && e2->col == 9 && strstr(e2->message, "'?'"));
    xdnn_diags_destroy(d);

    d = xdnn_diags_create();
    m = parse("param N = 9223372036854775807;\nparam M = 9223372036854775808;\n", d);
    CHECK(!m && xdnn_diags_error_count(d) == 1);
    CHECK(xdnn_diags_get(d, 0)->line == 2 && xdnn_diags_get(d, 0)->col == 11 && xdnn_diags_get(d, 0)->col_end == 29);
    xdnn_diags_destroy(d);

    d = xdnn_diags_create();
    m = parse("dnn 1;\nparam e = 1.5e-3;\nparam s = \"a\\\"b\\n\";\nparam t = fp8_e4m3;\n", d);
    CHECK(m);
    if (m) {
        CHECK(m->params[0].value->kind == EX_FLOAT && strcmp(m->params[0].value->text, "1.5e-3") == 0);
        CHECK(m->params[1].value->kind == EX_STRING && strcmp(m->params[1].value->s, "a\"b\n") == 0);
        CHECK(m->params[2].value->kind == EX_DTYPE && m->params[2].value->dt == XDNN_FP8_E4M3);
    }
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
}

static void test_text_parsers(void)
{
    arena *a = arena_create();
    xdnn_diags_t *d = xdnn_diags_create();
    expr *e = expr_parse_text(a, "3*D + 1", xloc_none(), d);
    CHECK(e && e->kind == EX_BINARY && e->op == '+');
    CHECK(e && strcmp(expr_to_text(a, e), "3 * D + 1") == 0);
    e = expr_parse_text(a, "1.0 / sqrt(HD)", (xloc){"g.json", 7, 20, 20}, d);
    CHECK(e && e->loc.file && strcmp(e->loc.file, "g.json") == 0 && e->loc.line == 7 && e->loc.col == 24);
    CHECK(expr_parse_text(a, "3 +", (xloc){"g.json", 2, 10, 10}, d) == NULL);
    CHECK(xdnn_diags_error_count(d) == 1 && xdnn_diags_get(d, 0)->line == 2 && xdnn_diags_get(d, 0)->col == 13);

    xinit *in = init_parse_text(a, "randn(0, 0.5)", xloc_none(), d);
    CHECK(in && strcmp(in->fn, "randn") == 0 && in->nargs == 2 && strcmp(in->names[1], "std") == 0);
    in = init_parse_text(a, "load(\"w.safetensors\", key=\"fc1.weight\")", xloc_none(), d);
    CHECK(in && in->nargs == 2 && strcmp(in->names[0], "path") == 0 && strcmp(in->args[1]->s, "fc1.weight") == 0);
    CHECK(init_parse_text(a, "gauss()", xloc_none(), d) == NULL);

    const char **names;
    expr **vals;
    int n;
    CHECK(kwargs_parse_text(a, "stride=2, pad=[1, 1]", xloc_none(), d, &names, &vals, &n));
    CHECK(n == 2 && strcmp(names[1], "pad") == 0 && vals[1]->kind == EX_LIST && vals[1]->nargs == 2);
    CHECK(kwargs_parse_text(a, "", xloc_none(), d, &names, &vals, &n) && n == 0);
    CHECK(!kwargs_parse_text(a, "stride 2", xloc_none(), d, &names, &vals, &n));

    const init_spec *s = init_spec_find("load");
    CHECK(s && s->nparams == 5 && strcmp(s->params[4], "dtype") == 0);
    CHECK(init_spec_find("zeros") && init_spec_find("zeros")->nparams == 0);
    CHECK(init_spec_find("nope") == NULL);
    xdnn_diags_destroy(d);
    arena_destroy(a);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_includes(void)
{
    char dir[] = "/tmp/xdnn_test_parse_XXXXXX";
    CHECK(mkdtemp(dir));
    char p_main[256], p_lib[256], p_sub[256], p_other[256], p_odir[256];
    snprintf(p_main, sizeof p_main, "%s/main.dnn", dir);
    snprintf(p_sub, sizeof p_sub, "%s/sub", dir);
    snprintf(p_lib, sizeof p_lib, "%s/sub/lib.dnn", dir);
    snprintf(p_odir, sizeof p_odir, "%s/other", dir);
    snprintf(p_other, sizeof p_other, "%s/other/extra.dnn", dir);
    mkdir(p_sub, 0700);
    mkdir(p_odir, 0700);
    /* lib.dnn is included twice (directly and through extra.dnn): read once. */
    write_file(p_lib, "param K = 3;\nfragment twice(x) -> (y) { y = x + x; }\n");
    write_file(p_other, "include \"sub/lib.dnn\";\ngraph side { input a: f32[K]; }\n");
    write_file(p_main, "include \"sub/lib.dnn\";\ninclude \"extra.dnn\";\n"
                       "graph g { input x: f32[K]; y = twice(x); output y; }\n");
    const char *dirs[] = {p_odir, NULL};
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    /* extra.dnn is found through include_dirs; its own include through $XDNN_PATH. */
    setenv("XDNN_PATH", dir, 1);
    CHECK(xdnn_module_load(p_main, dirs, d, &m) == XDNN_OK);
    unsetenv("XDNN_PATH");
    if (m) {
        CHECK(m->nsources == 3 && m->nparams == 1);
        CHECK(xdnn_module_graph_count(m) == 2);
        CHECK_STR(xdnn_module_find_graph(m, NULL)->name, "g");
        CHECK(xdnn_graph_bind(xdnn_module_find_graph(m, NULL), NULL, 0, d) == XDNN_OK);
    } else {
        xdnn_diags_print(d, stderr);
    }
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);

    /* Without the include dir, extra.dnn is missing: an I/O-class error. */
    d = xdnn_diags_create();
    CHECK(xdnn_module_load(p_main, NULL, d, &m) == XDNN_ERR_IO && m == NULL);
    CHECK(xdnn_diags_get(d, 0) && xdnn_diags_get(d, 0)->line == 2 && xdnn_diags_get(d, 0)->col == 9);
    xdnn_diags_destroy(d);

    unlink(p_main);
    unlink(p_lib);
    unlink(p_other);
    rmdir(p_sub);
    rmdir(p_odir);
    rmdir(dir);
}

static void test_building_api(void)
{
    xdnn_module_t *m = xdnn_module_create();
    xdnn_diags_t *d = xdnn_diags_create();
    CHECK(xdnn_module_add_param_int(m, "N", 4) == XDNN_OK);
    CHECK(xdnn_module_add_param_int(m, "N", 5) == XDNN_ERR_SEMANTIC);
    CHECK(xdnn_module_add_param_float(m, "lr", 0.5) == XDNN_OK);
    CHECK(xdnn_module_add_param_expr(m, "M", "2 * N", d) == XDNN_OK && m->params[2].derived);
    xdnn_graph_t *g = xdnn_module_add_graph(m, "g");
    CHECK(g && xdnn_module_add_graph(m, "g") == NULL);
    xdnn_graph_set_context(g, XDNN_F32, XDNN_F32, XDNN_F32, 7);
    int64_t dims[2] = {4, 8};
    CHECK(xdnn_graph_add_tensor(g, "x", XDNN_TENSOR_INPUT, XDNN_F32, 2, dims, "randn(std=0.5)", d) == 0);
    CHECK(xdnn_graph_add_tensor(g, "w", XDNN_TENSOR_WEIGHT, XDNN_F32, 2, (int64_t[]){8, 3}, NULL, d) == 1);
    CHECK(xdnn_graph_add_tensor(g, "bad", XDNN_TENSOR_INPUT, XDNN_F32, 1, dims, "gauss()", d) == -1);
    CHECK(xdnn_graph_set_layout(g, "x", "col", 0, NULL, d) == XDNN_OK);
    const char *in[] = {"x", "w"};
    const char *out[] = {"y"};
    CHECK(xdnn_graph_add_node(g, "matmul", 2, in, 1, out, "trans_a=false", d) == 0);
    const char *in2[] = {"y"};
    const char *out2[] = {"z"};
    CHECK(xdnn_graph_add_node(g, "relu", 1, in2, 1, out2, NULL, d) == 1);
    CHECK(xdnn_graph_add_node(g, "nope", 1, in2, 1, out2, NULL, d) == -1);
    CHECK(xdnn_graph_add_node(g, "relu", 1, in2, 1, out, "bogus=1", d) == -1);
    CHECK(xdnn_graph_mark_output(g, "z", d) == XDNN_OK);
    CHECK(xdnn_graph_mark_output(g, "q", d) == XDNN_ERR_SEMANTIC);
    xdnn_diags_t *d2 = xdnn_diags_create();
    CHECK(xdnn_graph_bind(g, NULL, 0, d2) == XDNN_OK);
    CHECK(g->tensors[2].rdims[0] == 4 && g->tensors[2].rdims[1] == 3);
    CHECK(g->tensors[0].rstrides[0] == 1 && g->tensors[0].rstrides[1] == 4); /* col layout */
    xdnn_diags_print(d2, stderr);
    xdnn_diags_destroy(d2);
    xdnn_diags_destroy(d);
    xdnn_module_destroy(m);
    xdnn_module_destroy(NULL);
}

/* Canonical text (with back-quoted generated names) parses back to the
 * same module: text -> IR -> text is a fixed point. */
static void test_round_trip(void)
{
    static const char *const files[] = {"conv_bias_relu", "attention_block", "bn_train_step", "mlp_gelu"};
    for (int i = 0; i < 4; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/unit/data/%s.dnn", files[i]);
        xdnn_diags_t *d = xdnn_diags_create();
        xdnn_module_t *m = NULL, *m2 = NULL;
        CHECK(xdnn_module_load(path, NULL, d, &m) == XDNN_OK);
        char *t1 = xdnn_module_to_dnn(m);
        CHECK(t1 && strstr(t1, "`"));
        CHECK(t1 && xdnn_module_parse("rt.dnn", t1, strlen(t1), false, d, &m2) == XDNN_OK);
        char *t2 = xdnn_module_to_dnn(m2);
        CHECK(t1 && t2 && strcmp(t1, t2) == 0);
        CHECK(m && m2 && xdnn_graph_node_count(xdnn_module_find_graph(m, NULL)) ==
                             xdnn_graph_node_count(xdnn_module_find_graph(m2, NULL)));
        xdnn_diags_print(d, stderr);
        free(t1);
        free(t2);
        xdnn_module_destroy(m);
        xdnn_module_destroy(m2);
        xdnn_diags_destroy(d);
    }
}

int main(void)
{
    unsetenv("XDNN_PATH");
    test_conv_bias_relu();
    test_attention_block();
    test_bn_train_step();
    test_mlp_gelu();
    test_flatten_and_operators();
    test_fragments();
    test_lexer_and_recovery();
    test_text_parsers();
    test_includes();
    test_building_api();
    test_round_trip();
    return test_summary("test_parse");
}

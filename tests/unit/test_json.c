/* test_json.c — the JSON form and the canonical .dnn writer.
 *
 *  - fixed points: text -> JSON -> IR -> JSON gives the same JSON (with and
 *    without locations), and text -> JSON -> text -> JSON too, for the
 *    example graphs and for a module that uses every construct;
 *  - the canonical .dnn text is itself a fixed point (text2 == text3);
 *  - numbers: ints vs floats and exact float round trips (%.17g digits);
 *  - bad JSON: exact messages with line:col and JSON pointer paths;
 *  - a module built with the C API (no parser) written and read back.
 * Run from the repository root (the examples are read from tests/unit/data). */
#include "core/ir.h"
#include "test_util.h"
#include "lang/json.h"
#include "ops/op.h"
#include "xdnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static xdnn_module_t *parse(const char *name, const char *text, bool is_json)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    xdnn_status s = xdnn_module_parse(name, text, strlen(text), is_json, d, &m);
    if (s != XDNN_OK) {
        fprintf(stderr, "--- %s did not parse (status %d):\n", name, s);
        xdnn_diags_print(d, stderr);
        fprintf(stderr, "--- text:\n%s\n", text);
    }
    xdnn_diags_destroy(d);
    return m;
}

/* "line:col: path: message" of the first diagnostic ("" if none) from
 * reading `json` and, when that succeeds, binding its default graph (the
 * reader leaves attribute types to bind, as the .dnn front end does). */
static char *first_error(const char *json, xdnn_status *st)
{
    static char buf[1024];
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    *st = xdnn_module_parse("t.json", json, strlen(json), true, d, &m);
    xdnn_graph_t *g = *st == XDNN_OK ? xdnn_module_find_graph(m, NULL) : NULL;
    if (g)
        *st = xdnn_graph_bind(g, NULL, 0, d);
    const xdnn_diag *r = xdnn_diags_get(d, 0);
    if (r)
        snprintf(buf, sizeof buf, "%d:%d: %s: %s", r->line, r->col, r->json_path ? r->json_path : "-", r->message);
    else
        buf[0] = 0;
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
    return buf;
}

/* Drop the "sources" line: canonical text flattens includes into one file. */
static void strip_sources(char *j)
{
    char *p = j ? strstr(j, "  \"sources\": [") : NULL;
    char *e = p ? strstr(p, "],\n") : NULL;
    if (e)
        memmove(p, e + 3, strlen(e + 3) + 1);
}

/* Text -> JSON -> IR -> JSON and text -> JSON -> text -> JSON -> text. */
static void check_fixed_points(const char *name, xdnn_module_t *m0)
{
    bool multi_file = m0->nsources > 1;
    char *j1 = json_write_module_ex(m0, JSON_WRITE_NO_LOCS);
    char *j1loc = json_write_module(m0);
    char *t1 = dnn_write_module(m0);
    CHECK(j1 && j1loc && t1, "%s: writers returned NULL", name);
    if (!j1 || !j1loc || !t1)
        return;

    /* JSON -> IR -> JSON, with and without locations */
    xdnn_module_t *mj = parse(name, j1loc, true);
    CHECK(mj != NULL, "%s: own JSON does not read back", name);
    if (mj) {
        char *j2loc = json_write_module(mj);
        char *j2 = json_write_module_ex(mj, JSON_WRITE_NO_LOCS);
        CHECK(j2loc && strcmp(j1loc, j2loc) == 0, "%s: JSON (with locs) changed on a round trip:\n%s\n---\n%s", name,
              j1loc, j2loc ? j2loc : "(null)");
        CHECK(j2 && strcmp(j1, j2) == 0, "%s: JSON changed on a round trip", name);
        char *tj = dnn_write_module(mj);
        CHECK(tj && strcmp(t1, tj) == 0, "%s: .dnn from JSON differs from .dnn from text:\n%s\n---\n%s", name, t1,
              tj ? tj : "(null)");
        free(tj);
        free(j2);
        free(j2loc);
        xdnn_module_destroy(mj);
    }

    /* text -> JSON -> text -> JSON: the canonical text parses to the same JSON */
    xdnn_module_t *mt = parse(name, t1, false);
    CHECK(mt != NULL, "%s: canonical .dnn does not parse back", name);
    if (mt) {
        char *j3 = json_write_module_ex(mt, JSON_WRITE_NO_LOCS);
        char *t2 = dnn_write_module(mt);
        if (multi_file) {
            strip_sources(j1);
            strip_sources(j3);
        }
        CHECK(j3 && strcmp(j1, j3) == 0, "%s: text -> JSON -> text -> JSON differs:\n%s\n---\n%s", name, j1,
              j3 ? j3 : "(null)");
        CHECK(t2 && strcmp(t1, t2) == 0, "%s: canonical .dnn is not a fixed point:\n%s\n---\n%s", name, t1,
              t2 ? t2 : "(null)");
        free(j3);
        free(t2);
        xdnn_module_destroy(mt);
    }
    free(j1);
    free(j1loc);
    free(t1);
}

/* ---------------------------------------------------------------- round trips */

static void test_examples(void)
{
    static const char *const files[] = {"conv_bias_relu.dnn", "attention_block.dnn", "bn_train_step.dnn",
                                        "mlp_gelu.dnn"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/unit/data/%s", files[i]);
        xdnn_diags_t *d = xdnn_diags_create();
        xdnn_module_t *m = NULL;
        xdnn_status s = xdnn_module_load(path, NULL, d, &m);
        if (s != XDNN_OK)
            xdnn_diags_print(d, stderr);
        CHECK(s == XDNN_OK, "%s does not load", path);
        xdnn_diags_destroy(d);
        if (m) {
            check_fixed_points(path, m);
            char *j = json_write_module(m);
            xdnn_module_t *mj = j ? parse(path, j, true) : NULL;
            char *j2 = mj ? json_write_module(mj) : NULL;
            CHECK(j2 && strcmp(j, j2) == 0, "%s: JSON round trip differs", path);
            free(j);
            free(j2);
            xdnn_module_destroy(mj);
        }
        xdnn_module_destroy(m);
    }
}

/* Every construct the writers know, in one module. */
static const char every_construct[] =
    "dnn 1;\n"
    "param N = 4 sweep [1, 2, 4];\n"
    "param D = 8;\n"
    "param HD = D / 2;\n"
    "param lr = 0.01;\n"
    "param tiny = 1e-300;\n"
    "param third = 0.3333333333333333;\n"
    "param big = 2.5e+20;\n"
    "param dot = 1.;\n"
    "param frac = .5;\n"
    "assert D % 2 == 0, \"D must be \\\"even\\\"\";\n"
    "assert N >= 1;\n"
    "graph first(io=f32, compute=f32, intermediate=f32, seed=3, tf32=false) {\n"
    "  param S = 2 * N;\n"
    "  input x: f32[N, D] = randn(mean=0.0, std=0.5, seed=7);\n"
    "  weight g: f32[D] = fill(1.0);\n"
    "  weight b: f32[D] = zeros();\n"
    "  weight w: f32[D, HD] @col = uniform(lo=-1, hi=1);\n"
    "  input p: f32[2, 3, 4] @perm(2, 0, 1) = arange(start=0, step=-0.5);\n"
    "  input q: f32[2, 3] @strides(4, 1) = values(data=[[1, 2, 3], [4, 5, 6]]);\n"
    "  input r: f32[] = ones();\n"
    "  h, mu, _ = layernorm(x, g, b, axes=[-1], eps=1e-5);\n"
    "  y: f16 = gelu(matmul(h, w) * lr + 0.5, approx=\"tanh\");\n"
    "  s1, s2 = split(y, axis=1, parts=2);\n"
    "  c = concat(s1, s2, s1, axis=-1);\n"
    "  k = cast(c, dtype=bf16);\n"
    "  m = reduce(p, op=\"max\", axes=[0, 2], keepdims=false);\n"
    "  z = relu(-1.5 * q, upper=inf) + r;\n"
    "  output y: f16, mu, k, m, z;\n"
    "  check y, load(\"ref/y.npy\"), rtol=1e-2, atol=1e-3;\n"
    "  check z, values([0.0]);\n"
    "}\n"
    "graph second {\n"
    "  input a: bf16[3, 5] @row = load(\"a.safetensors\", key=\"w\", dtype=f32);\n"
    "  t = exp(a);\n"
    "  output t;\n"
    "}\n";

static void test_every_construct(void)
{
    xdnn_module_t *m = parse("every.dnn", every_construct, false);
    CHECK(m != NULL, "every-construct module does not parse");
    if (!m)
        return;
    check_fixed_points("every.dnn", m);

    /* Spot checks on the JSON spelling of the value rule. */
    char *j = json_write_module_ex(m, JSON_WRITE_NO_LOCS);
    static const char *const want[] = {
        "\"tiny\": {\"value\": 1e-300}",
        "\"third\": {\"value\": 0.3333333333333333}",
        "\"big\": {\"value\": 2.5e+20}",
        "\"dot\": {\"value\": 1.0}",
        "\"frac\": {\"value\": 0.5}",
        "\"HD\": {\"expr\": \"D / 2\"}",
        "\"S\": {\"expr\": \"2 * N\"}",
        "\"dims\": [{\"expr\": \"N\"}, {\"expr\": \"D\"}]",
        "\"perm\": [2, 0, 1]",
        "\"strides\": [4, 1]",
        "\"layout\": \"col\"",
        "\"init\": {\"fn\": \"values\", \"data\": [[1, 2, 3], [4, 5, 6]]}",
        "\"init\": {\"fn\": \"arange\", \"start\": 0, \"step\": -0.5}",
        "\"attrs\": {\"axes\": [-1], \"eps\": 1e-5}",
        "\"attrs\": {\"approx\": \"tanh\"}",
        "\"attrs\": {\"dtype\": \"bf16\"}",
        "\"attrs\": {\"upper\": {\"expr\": \"inf\"}}",
        "\"inputs\": {\"a\": {\"scalar\": -1.5}, \"b\": \"q\"}",
        "{\"expr\": \"lr\"}",
        "\"inputs\": {\"x0\": \"s1\", \"x1\": \"s2\", \"x2\": \"s1\"}",
        "\"outputs\": {\"y0\": \"s1\", \"y1\": \"s2\"}",
        "\"outputs\": {\"y\": \"h\", \"mean\": \"mu\"}",
        "\"nresults\": 3",
        "\"output\": true, \"dtype\": \"f16\", \"output_dtype\": \"f16\"",
        "\"ref\": {\"fn\": \"load\", \"path\": \"ref/y.npy\"}, \"rtol\": 1e-2, \"atol\": 1e-3",
        "\"context\": {\"io\": \"f32\", \"compute\": \"f32\", \"intermediate\": \"f32\", \"seed\": 3, \"tf32\": false}",
        "\"msg\": \"D must be \\\"even\\\"\"",
        "\"init\": {\"fn\": \"load\", \"path\": \"a.safetensors\", \"key\": \"w\", \"dtype\": {\"expr\": \"f32\"}}",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(j && strstr(j, want[i]), "JSON lacks %s", want[i]);
    free(j);

    /* ... and of the canonical .dnn. */
    char *t = dnn_write_module(m);
    static const char *const want_dnn[] = {
        "param N = 4 sweep [1, 2, 4];\n",
        "assert D % 2 == 0, \"D must be \\\"even\\\"\";\n",
        "graph first(io=f32, compute=f32, intermediate=f32, seed=3, tf32=false) {\n",
        "  weight w: f32[D, HD] @col = uniform(lo=-1, hi=1);\n",
        "  input p: f32[2, 3, 4] @perm(2, 0, 1) = arange(start=0, step=-0.5);\n",
        "  h, mu, _ = layernorm(x, g, b, axes=[-1], eps=1e-5);\n",
        "  `y.0` = matmul(h, w);\n",
        "  y: f16 = gelu(`y.2`, approx=\"tanh\");\n",
        "  c = concat(s1, s2, s1, axis=-1);\n",
        "  `z.0` = mul(-1.5, q);\n",
        "  output y: f16, mu, k, m, z;\n", /* the output's own annotation, apart from the target's */
        "  check y, load(path=\"ref/y.npy\"), rtol=1e-2, atol=1e-3;\n",
        "graph second {\n",
    };
    for (size_t i = 0; i < sizeof want_dnn / sizeof want_dnn[0]; i++)
        CHECK(t && strstr(t, want_dnn[i]), "canonical .dnn lacks %s", want_dnn[i]);
    free(t);

    /* Floats come back bit-exact. */
    static const struct {
        const char *name;
        double v;
    } floats[] = {{"lr", 0.01}, {"tiny", 1e-300}, {"third", 0.3333333333333333}, {"big", 2.5e+20}};
    char *jl = json_write_module(m);
    xdnn_module_t *mj = jl ? parse("every.json", jl, true) : NULL;
    for (size_t i = 0; mj && i < sizeof floats / sizeof floats[0]; i++) {
        const xparam *p = ir_find_param(mj, NULL, floats[i].name);
        CHECK(p && p->value->kind == EX_FLOAT && memcmp(&p->value->f, &floats[i].v, sizeof(double)) == 0,
              "param %s is not bit-exact after JSON", floats[i].name);
    }
    const xparam *n = mj ? ir_find_param(mj, NULL, "N") : NULL;
    CHECK(n && n->value->kind == EX_INT && n->value->i == 4 && n->nsweep == 3, "N is not the int 4 with 3 sweeps");
    const xparam *dot = mj ? ir_find_param(mj, NULL, "dot") : NULL;
    CHECK(dot && dot->value->kind == EX_FLOAT && dot->value->f == 1.0, "1. must stay a float");
    /* locations come from "loc" */
    xgraph *g = mj ? xdnn_module_find_graph(mj, "first") : NULL;
    int ti = g ? ir_find_tensor(g, "w") : -1;
    CHECK(ti >= 0 && g->tensors[ti].loc.line == 18 && strcmp(g->tensors[ti].loc.file, "every.dnn") == 0,
          "tensor w keeps its .dnn location through JSON");
    free(jl);
    xdnn_module_destroy(mj);
    xdnn_module_destroy(m);
}

/* Where the two readers disagreed (session 14: fuzz_dnn in CI, then two helpers reading the readers): each of
 * these .dnn texts now reads back from its JSON to the same module, or is refused by both. */
static void test_reader_agreement(void)
{
    static const struct { const char *name, *text; } same[] = {
        /* the JSON reader read asserts before tensors: dim(x, 0) found no x */
        {"assert-dim.dnn", "dnn 1;\ngraph g {\n  input x: f32[4];\n  assert dim(x, 0) == 4;\n  output x;\n}\n"},
        /* a float literal in dims (bind refuses it) was written as a JSON number, which dims refuse */
        {"float-dim.dnn", "dnn 1;\ngraph g {\n  input x: f32[1.0];\n  output x;\n}\n"},
        {"bool-perm.dnn", "dnn 1;\ngraph g {\n  input x: f32[2, 3] @perm(true, 0);\n  output x;\n}\n"},
        /* dim() of a generated or fragment-local tensor was printed without back-quotes: dim(b.0, 0), b/t */
        {"frag-dim.dnn", "dnn 1;\nfragment f(x) -> (y) {\n  y = reshape(x, [dim(x, 0)]);\n}\n"
                         "graph g {\n  input a: f32[2];\n  b = f(relu(a));\n  output b;\n}\n"},
        /* a back-quoted callee or keyword was printed bare */
        {"quoted-call.dnn", "dnn 1;\nparam N = `a b`(`c d`=1);\n"},
        {"frag-assert.dnn", "dnn 1;\nfragment f(x) -> (y) {\n  t = relu(x);\n  assert dim(t, 0) == 2;\n"
                            "  y = relu(t);\n}\ngraph g {\n  input a: f32[2];\n  b = f(a);\n  output b;\n}\n"},
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        xdnn_module_t *m = parse(same[i].name, same[i].text, false);
        CHECK(m != NULL, "%s does not parse", same[i].name);
        if (m)
            check_fixed_points(same[i].name, m);
        xdnn_module_destroy(m);
    }
    /* a module param after a graph param of its name: JSON reads module params first and refuses the graph's */
    static const char later[] = "dnn 1;\ngraph g {\n  param n = 1;\n  input x: f32[n];\n  output x;\n}\nparam n = 2;\n";
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    CHECK(xdnn_module_parse("later.dnn", later, strlen(later), false, d, &m) == XDNN_ERR_SEMANTIC && !m,
          "a module param after a graph's param of the same name must be refused");
    CHECK(xdnn_diags_count(d) && strstr(xdnn_diags_get(d, 0)->message, "param 'n' is already defined"),
          "the refusal names the param");
    xdnn_diags_destroy(d);
    /* what JSON cannot hold is refused in the text too */
    static const struct { const char *name, *text, *why; } refused[] = {
        {"quoted-param.dnn", "dnn 1;\nparam `a b` = 1;\n", "param name `a b` is not an identifier"},
        {"quoted-graph.dnn", "dnn 1;\ngraph `f32` {\n  input x: f32[1];\n  output x;\n}\n",
         "graph name `f32` is not an identifier"},
        {"param-dim.dnn", "dnn 1;\ngraph g {\n  input x: f32[2];\n  param P = dim(x, 0);\n  output x;\n}\n",
         "param 'P' uses dim()"},
        {"sweep-dim.dnn", "dnn 1;\ngraph g {\n  input x: f32[3];\n  param P = 3 sweep [3, dim(x, 0)];\n  output x;\n}\n",
         "param 'P' uses dim()"},
        {"underscore.dnn", "dnn 1;\ngraph g {\n  input _: f32[1];\n  output _;\n}\n", "cannot be named '_'"},
        {"tab-name.dnn", "dnn 1;\ngraph g {\n  input `a\tb`: f32[1];\n  output `a\tb`;\n}\n", "cannot be named"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        d = xdnn_diags_create();
        m = NULL;
        xdnn_status st = xdnn_module_parse(refused[i].name, refused[i].text, strlen(refused[i].text), false, d, &m);
        CHECK(st == XDNN_ERR_SEMANTIC && !m, "%s must be refused", refused[i].name);
        CHECK(xdnn_diags_count(d) && strstr(xdnn_diags_get(d, 0)->message, refused[i].why), "%s: '%s'",
              refused[i].name, xdnn_diags_count(d) ? xdnn_diags_get(d, 0)->message : "(none)");
        xdnn_diags_destroy(d);
    }
    /* fragments (a helper): nested expansions whose locals shared the outer one's prefix (`h/t` defined twice);
     * a parameter's default that named another parameter read the module's param of that name */
    static const struct { const char *name, *text, *want; } frags[] = {
        {"nested-frag.dnn", "dnn 1;\nfragment inner(x) -> (y) {\n  t = relu(x);\n  y = relu(t);\n}\n"
                            "fragment outer(x) -> (y) {\n  t = relu(x);\n  y = inner(t);\n}\n"
                            "graph g {\n  input a: f32[2];\n  h = outer(a);\n  output h;\n}\n", "`h/y/t` = relu(`h/t`);"},
        {"frag-default.dnn", "dnn 1;\nparam a = 5;\nfragment f(x, a: int = 2, b: int = a) -> (y) {\n  y = x * b;\n}\n"
                             "graph g {\n  input x: f32[2];\n  h = f(x, a=3);\n  output h;\n}\n", "h = mul(x, 3);"},
    };
    for (size_t i = 0; i < sizeof frags / sizeof frags[0]; i++) {
        xdnn_module_t *fm = parse(frags[i].name, frags[i].text, false);
        char *t = fm ? dnn_write_module(fm) : NULL;
        CHECK(t && strstr(t, frags[i].want), "%s: '%s' in\n%s", frags[i].name, frags[i].want, t ? t : "(null)");
        free(t);
        xdnn_module_destroy(fm);
    }
    /* JSON that .dnn text cannot say is refused when read: an empty perm, a number on a variadic slot past the
     * required ports (`concat(a, 1)` reads the 1 as axis) */
    static const struct { const char *name, *text, *why; } json_refused[] = {
        {"empty-perm.json", "{\"format\": \"xdnn-graph\", \"version\": 1, \"graphs\": [{\"name\": \"g\", \"tensors\": "
                            "{\"x\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": [], \"perm\": []}}}]}",
         "\"perm\" is empty"},
        {"variadic-number.json", "{\"format\": \"xdnn-graph\", \"version\": 1, \"graphs\": [{\"name\": \"g\", "
                                 "\"tensors\": {\"a\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": [2]}, "
                                 "\"y\": {\"kind\": \"virtual\"}}, \"nodes\": [{\"name\": \"y\", \"op\": \"concat\", "
                                 "\"inputs\": {\"x0\": \"a\", \"x1\": {\"scalar\": 1}}, \"outputs\": {\"y\": \"y\"}}]}]}",
         "input 'x1' of concat must be a tensor"},
    };
    for (size_t i = 0; i < sizeof json_refused / sizeof json_refused[0]; i++) {
        d = xdnn_diags_create();
        m = NULL;
        const char *t = json_refused[i].text;
        CHECK(xdnn_module_parse(json_refused[i].name, t, strlen(t), true, d, &m) != XDNN_OK && !m, "%s must be refused",
              json_refused[i].name);
        CHECK(xdnn_diags_count(d) && strstr(xdnn_diags_get(d, 0)->message, json_refused[i].why), "%s: '%s'",
              json_refused[i].name, xdnn_diags_count(d) ? xdnn_diags_get(d, 0)->message : "(none)");
        xdnn_diags_destroy(d);
    }
    /* nesting near the parser's limit: a 995-deep literal list in an initializer round-trips (JSON writes lists
     * deeper than 64 as {"expr": ...}, keeping the document's own nesting under cJSON's 1000); JSON that composes
     * a tree deeper than .dnn text could spell is refused when read */
    {
        enum { N = 995 };
        char *deep = malloc(3 * N + 256);
        int k = sprintf(deep, "dnn 1;\ngraph g {\n  input x: f32[1] = fill(");
        for (int i = 0; i < N; i++)
            deep[k++] = '[';
        deep[k++] = '1';
        for (int i = 0; i < N; i++)
            deep[k++] = ']';
        sprintf(deep + k, ");\n  output x;\n}\n");
        xdnn_module_t *dm = parse("deep-list.dnn", deep, false);
        CHECK(dm != NULL, "a 995-deep list parses");
        if (dm)
            check_fixed_points("deep-list.dnn", dm);
        xdnn_module_destroy(dm);
        char *minus = malloc(N + 16);
        memset(minus, '-', 999);
        strcpy(minus + 999, "1");
        char *j = malloc(2 * N + 512);
        sprintf(j, "{\"format\": \"xdnn-graph\", \"version\": 1, \"params\": {\"P\": {\"value\": [[{\"expr\": \"%s\"}]]}}}",
                minus);
        d = xdnn_diags_create();
        m = NULL;
        CHECK(xdnn_module_parse("deep.json", j, strlen(j), true, d, &m) != XDNN_OK && !m, "a 1001-deep list from JSON");
        CHECK(xdnn_diags_count(d) && strstr(xdnn_diags_get(d, 0)->message, "nests too deeply"), "deep list: '%s'",
              xdnn_diags_count(d) ? xdnn_diags_get(d, 0)->message : "(none)");
        xdnn_diags_destroy(d);
        sprintf(j, "{\"format\": \"xdnn-graph\", \"version\": 1, \"graphs\": [{\"name\": \"g\", \"tensors\": "
                   "{\"x\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": [1], \"output\": true, "
                   "\"init\": {\"fn\": \"fill\", \"value\": {\"expr\": \"%s\"}}}}, \"outputs\": [\"x\"]}]}", minus);
        d = xdnn_diags_create();
        m = NULL;
        CHECK(xdnn_module_parse("deep-init.json", j, strlen(j), true, d, &m) != XDNN_OK && !m,
              "a 1000-deep initializer argument from JSON (fill(...) would be 1001 in .dnn)");
        xdnn_diags_destroy(d);
        free(j);
        free(minus);
        free(deep);
    }
    /* JSON that must be a fixed point: -2^63 inside expression text; a check's rtol that is no number; a number
     * lexeme of 64+ characters (the position scanner cut it at 63 and lost every later position and lexeme:
     * B = 2.0 read back as the int 2) */
    static const struct { const char *name, *text, *want; } fixed[] = {
        {"imin-list.json", "{\"format\": \"xdnn-graph\", \"version\": 1, \"params\": {\"A\": {\"value\": "
                           "[-9223372036854775808, {\"expr\": \"B\"}]}, \"B\": {\"value\": 1}}}", NULL},
        {"check-rtol.json", "{\"format\": \"xdnn-graph\", \"version\": 1, \"graphs\": [{\"name\": \"g\", \"tensors\": "
                            "{\"x\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": []}}, \"checks\": "
                            "[{\"tensor\": \"x\", \"ref\": {\"fn\": \"zeros\"}, \"rtol\": {\"expr\": \"true\"}}]}]}", NULL},
        {"long-number.json", "{\"format\": \"xdnn-graph\", \"version\": 1, \"params\": {\"A\": {\"value\": "
                             "1.00000000000000000000000000000000000000000000000000000000000000e5}, \"B\": {\"value\": 2.0}}}",
         "\"B\": {\"value\": 2.0"},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        xdnn_module_t *a = parse(fixed[i].name, fixed[i].text, true);
        char *j1 = a ? json_write_module(a) : NULL;
        xdnn_module_t *b = j1 ? parse(fixed[i].name, j1, true) : NULL;
        char *j2 = b ? json_write_module(b) : NULL;
        CHECK(j1 && j2 && strcmp(j1, j2) == 0, "%s: not a fixed point:\n%s\n---\n%s", fixed[i].name, j1 ? j1 : "(null)",
              j2 ? j2 : "(null)");
        if (fixed[i].want)
            CHECK(j1 && strstr(j1, fixed[i].want), "%s: '%s' in\n%s", fixed[i].name, fixed[i].want, j1 ? j1 : "");
        free(j1);
        free(j2);
        xdnn_module_destroy(a);
        xdnn_module_destroy(b);
    }
    /* -2^63 from JSON: its canonical .dnn spells it as an expression (no literal has that magnitude) */
    static const char imin[] = "{\"format\": \"xdnn-graph\", \"version\": 1, "
                               "\"params\": {\"A\": {\"value\": -9223372036854775808}}}";
    m = parse("imin.json", imin, true);
    CHECK(m != NULL, "imin.json reads");
    if (m) {
        char *t = dnn_write_module(m);
        xdnn_module_t *back = t ? parse("imin.dnn", t, false) : NULL;
        CHECK(back != NULL, "the canonical .dnn of -2^63 parses: %s", t ? t : "(null)");
        xdnn_module_destroy(back);
        free(t);
    }
    xdnn_module_destroy(m);
}

/* A module built with the C API, no .dnn text involved. */
static void test_c_api(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = xdnn_module_create();
    CHECK(xdnn_module_add_param_int(m, "N", 6) == XDNN_OK, "add param");
    CHECK(xdnn_module_add_param_float(m, "alpha", 0.1) == XDNN_OK, "add float param");
    xdnn_graph_t *g = xdnn_module_add_graph(m, "api");
    xdnn_graph_set_context(g, XDNN_F16, XDNN_F32, XDNN_F32, 5);
    int64_t dims[2] = {6, 7};
    CHECK(xdnn_graph_add_tensor(g, "x", XDNN_TENSOR_INPUT, XDNN_F16, 2, dims, "randn(std=0.5)", d) >= 0, "x");
    const char *in[1] = {"x"}, *out[1] = {"y"};
    CHECK(xdnn_graph_add_node(g, "relu", 1, in, 1, out, "upper=6.0", d) >= 0, "node");
    CHECK(xdnn_graph_mark_output(g, "y", d) == XDNN_OK, "output");
    xdnn_diags_print(d, stderr);
    /* names neither .dnn text nor JSON could hold are refused here too */
    xdnn_diags_t *bad = xdnn_diags_create();
    CHECK(xdnn_module_add_param_int(m, "a b", 1) == XDNN_ERR_USAGE, "a param name with a space");
    CHECK(xdnn_module_add_param_int(m, "f32", 1) == XDNN_ERR_USAGE, "a param named like a dtype");
    CHECK(xdnn_module_add_graph(m, "a b") == NULL, "a graph name with a space");
    CHECK(xdnn_graph_add_tensor(g, "_", XDNN_TENSOR_INPUT, XDNN_F16, 2, dims, NULL, bad) < 0, "a tensor named _");
    const char *tab[1] = {"a\tb"};
    CHECK(xdnn_graph_add_node(g, "relu", 1, in, 1, tab, NULL, bad) < 0, "a result with a control character");
    xdnn_diags_destroy(bad);
    char *j = json_write_module_ex(m, JSON_WRITE_NO_LOCS);
    CHECK(j && strstr(j, "\"alpha\": {\"value\": 0.1}"), "alpha in JSON: %s", j ? j : "(null)");
    CHECK(j && strstr(j, "\"attrs\": {\"upper\": 6.0}"), "relu attrs in JSON");
    xdnn_module_t *m2 = j ? parse("api.json", j, true) : NULL;
    char *j2 = m2 ? json_write_module_ex(m2, JSON_WRITE_NO_LOCS) : NULL;
    CHECK(j2 && strcmp(j, j2) == 0, "C-API module: JSON round trip differs:\n%s\n---\n%s", j ? j : "", j2 ? j2 : "");
    free(j);
    free(j2);
    xdnn_module_destroy(m2);
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
}

/* ---------------------------------------------------------------- bad JSON */

#define HEAD "{\"format\": \"xdnn-graph\", \"version\": 1,\n"
/* A graph with x (input), y = relu(x) (output); %s splices extra text. */
#define G_OPEN "\"graphs\": [{\"name\": \"g\",\n"
#define TENSORS                                                                               \
    "\"tensors\": {\"x\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": [2, 3]},\n" \
    "  \"y\": {\"kind\": \"virtual\", \"output\": true}},\n"
#define OUTPUTS "\"outputs\": [\"y\"]}]}\n"

static void test_errors(void)
{
    static const struct {
        const char *json;
        xdnn_status st;
        const char *want; /* line:col: path: message */
    } cases[] = {
        /* syntax */
        {"", XDNN_ERR_SYNTAX, "1:1: -: JSON syntax error: expected a value, got end of input"},
        {"{\"format\": \"xdnn-graph\",\n \"version\": 1,}", XDNN_ERR_SYNTAX,
         "2:15: -: JSON syntax error: expected a string key, got '}'"},
        {"{\"format\": \"xdnn-graph\",\n \"version\": 1} x", XDNN_ERR_SYNTAX,
         "2:16: -: JSON syntax error: expected the end of the text after the JSON value, got 'x'"},
        {"{\"format\": \"xdnn-graph\", \"version\": 1, \"sources\": [\"a.dnn]}", XDNN_ERR_SYNTAX,
         "1:52: -: JSON syntax error: unterminated string"},
        {"{\"format\": \"xdnn-graph\",\n \"version\" 1}", XDNN_ERR_SYNTAX,
         "2:12: -: JSON syntax error: expected ':' after the key, got '1'"},
        {"{\"format\": \"xdnn\n-graph\"}", XDNN_ERR_SYNTAX,
         "1:17: -: JSON syntax error: unterminated string (a JSON string ends on its line; write \\n)"},
        {"{\"format\": \"\\x\"}", XDNN_ERR_SYNTAX,
         "1:13: -: JSON syntax error: invalid escape in a string (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)"},
        {"{\"a\": [1, 2 3]}", XDNN_ERR_SYNTAX, "1:13: -: JSON syntax error: expected ',' or ']', got '3'"},
        {"{\"a\": tru}", XDNN_ERR_SYNTAX, "1:7: -: JSON syntax error: expected a value, got 't'"},
        {HEAD "\"params\": {\"N\": {\"value\": 01}}}", XDNN_ERR_SYNTAX,
         "2:27: -: JSON syntax error: invalid number (no leading zeros)"},
        {HEAD "\"params\": {\"N\": {\"value\": 1.}}}", XDNN_ERR_SYNTAX,
         "2:27: -: JSON syntax error: invalid number (a digit must follow '.')"},
        /* schema */
        {"[1, 2]", XDNN_ERR_SYNTAX, "1:1: -: expected a JSON object at the top level, got an array"},
        {"{\"version\": 1}", XDNN_ERR_SYNTAX, "1:1: -: missing key \"format\""},
        {"{\"format\": \"onnx\", \"version\": 1}", XDNN_ERR_SYNTAX, "1:12: /format: expected \"xdnn-graph\", got string \"onnx\""},
        {HEAD "\"version\": 1}", XDNN_ERR_SYNTAX, "2:1: /version: duplicate key \"version\" (first at line 1)"},
        {"{\"format\": \"xdnn-graph\", \"version\": 2}", XDNN_ERR_SYNTAX,
         "1:37: /version: unsupported version 2 (this xdnn reads version 1)"},
        {HEAD "\"grpahs\": []}", XDNN_ERR_SYNTAX,
         "2:1: /grpahs: unknown key \"grpahs\" (expected one of: format, version, sources, default_graph, params, "
         "asserts, graphs; extensions start with \"x-\")"},
        {HEAD G_OPEN "\"tensors\": {\"x\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": \"N\"}}}]}",
         XDNN_ERR_SYNTAX, "3:60: /graphs/0/tensors/x/dims: expected a list of dims, got string \"N\""},
        {HEAD G_OPEN "\"tensors\": {\"x\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": [\"N\", 3]}}}]}",
         XDNN_ERR_SYNTAX, "3:61: /graphs/0/tensors/x/dims/0: expected an int or {\"expr\": ...}, got string \"N\""},
        {HEAD G_OPEN "\"tensors\": {\"x\": {\"kind\": \"input\", \"dtype\": \"f17\", \"dims\": []}}}]}",
         XDNN_ERR_SEMANTIC, "3:45: /graphs/0/tensors/x/dtype: unknown dtype \"f17\""},
        {HEAD G_OPEN "\"tensors\": {\"x\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": [], \"layout\": \"nhcw\"}}}]}",
         XDNN_ERR_SEMANTIC,
         "3:74: /graphs/0/tensors/x/layout: unknown layout \"nhcw\" (known: row, col, nchw, nhwc, ncdhw, ndhwc, ncw, "
         "nwc, bhsd, bshd, sbhd; or \"perm\"/\"strides\")"},
        {HEAD G_OPEN "\"tensors\": {\"x\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": [], \"x-note\": 1},\n"
                     "  \"x\": {\"kind\": \"weight\", \"dtype\": \"f32\", \"dims\": []}}}]}",
         XDNN_ERR_SYNTAX, "4:3: /graphs/0/tensors/x: duplicate key \"x\" (first at line 3)"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"reluu\", \"inputs\": {\"x\": \"x\"}}]," OUTPUTS,
         XDNN_ERR_SEMANTIC, "5:31: /graphs/0/nodes/0/op: unknown op \"reluu\" (did you mean 'relu'?)"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": \"z\"}}]," OUTPUTS,
         XDNN_ERR_SEMANTIC, "5:55: /graphs/0/nodes/0/inputs/x: unknown tensor \"z\""},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": \"y\"}, "
                             "\"outputs\": {\"y\": \"y\"}}]," OUTPUTS,
         XDNN_ERR_SEMANTIC, "5:55: /graphs/0/nodes/0/inputs/x: tensor \"y\" is used before the node that produces it"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"a\": \"x\"}}]," OUTPUTS,
         XDNN_ERR_SEMANTIC, "5:50: /graphs/0/nodes/0/inputs/a: relu has no input port \"a\" (ports: x)"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {}, \"outputs\": {\"y\": \"y\"}}],"
             OUTPUTS,
         XDNN_ERR_SEMANTIC, "5:49: /graphs/0/nodes/0/inputs: missing input port \"x\" of relu"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": \"x\"}, "
                             "\"outputs\": {\"y\": \"y\"}, \"attrs\": {\"uper\": 6}}]," OUTPUTS,
         XDNN_ERR_SEMANTIC,
         "5:94: /graphs/0/nodes/0/attrs/uper: relu has no attribute \"uper\" (attributes: lower, upper, slope)"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": \"x\"}, "
                             "\"outputs\": {\"y\": \"y\"}, \"attrs\": {\"upper\": \"6\"}}]," OUTPUTS,
         XDNN_ERR_SEMANTIC, "5:103: -: relu: attribute 'upper' must be a number, got \"6\""},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": \"x\"}, "
                             "\"outputs\": {\"y\": \"y\"}, \"attrs\": {\"upper\": {\"expr\": \"6 *\"}}}]," OUTPUTS,
         XDNN_ERR_SYNTAX, "5:116: -: syntax error, unexpected end of file"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": \"x\"}, "
                             "\"outputs\": {\"y\": \"x\"}}]," OUTPUTS,
         XDNN_ERR_SEMANTIC,
         "5:78: /graphs/0/nodes/0/outputs/y: tensor \"x\" is an input; a node can only produce a virtual tensor"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": \"x\"}, "
                             "\"outputs\": {\"y\": \"y\"}, \"color\": \"red\"}]," OUTPUTS,
         XDNN_ERR_SYNTAX,
         "5:84: /graphs/0/nodes/0/color: unknown key \"color\" (expected one of: name, op, inputs, outputs, nresults, "
         "attrs, loc, origin; extensions start with \"x-\")"},
        {HEAD G_OPEN TENSORS "\"nodes\": []," OUTPUTS, XDNN_ERR_SEMANTIC,
         "4:3: /graphs/0/tensors/y: virtual tensor \"y\" is not produced by any node"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": \"x\"}, "
                             "\"outputs\": {\"y\": \"y\"}}], \"outputs\": [\"x\"]}]}",
         XDNN_ERR_SEMANTIC,
         "5:98: /graphs/0/outputs/0: tensor \"x\" is listed in \"outputs\" but its entry lacks \"output\": true"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": \"x\"}, "
                             "\"outputs\": {\"y\": \"y\"}, \"loc\": \"a.dnn:x:1\"}]," OUTPUTS,
         XDNN_ERR_SYNTAX, "5:91: /graphs/0/nodes/0/loc: expected \"file:line:col\", got string \"a.dnn:x:1\""},
        {HEAD "\"params\": {\"N\": {\"value\": 99999999999999999999}}}", XDNN_ERR_SEMANTIC,
         "2:27: /params/N/value: integer 99999999999999999999 is out of range (64-bit)"},
        {HEAD "\"params\": {\"N\": {\"value\": 4, \"expr\": \"2\"}}}", XDNN_ERR_SYNTAX,
         "2:17: /params/N: a param has exactly one of \"value\" and \"expr\""},
        {HEAD "\"params\": {\"HD\": {\"expr\": \"D / H\", \"sweep\": [1]}}}", XDNN_ERR_SEMANTIC,
         "2:36: /params/HD/sweep: param 'HD' is derived from other params, so it cannot have a sweep list"},
        {HEAD G_OPEN "\"tensors\": {\"x\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": [], "
                     "\"init\": {\"fn\": \"randn\", \"sd\": 1}}}}]}",
         XDNN_ERR_SEMANTIC, "3:88: /graphs/0/tensors/x/init/sd: randn has no argument \"sd\" (it takes: mean, std, seed)"},
        {HEAD G_OPEN "\"tensors\": {\"x\": {\"kind\": \"output\"}}}]}", XDNN_ERR_SYNTAX,
         "3:27: /graphs/0/tensors/x/kind: unknown tensor kind \"output\" (expected \"input\", \"weight\" or "
         "\"virtual\"; outputs are marked with \"output\": true)"},
        {HEAD G_OPEN "\"tensors\": {\"x\": {\"kind\": \"input\", \"dtype\": \"f32\", \"dims\": [], \"perm\": [0],\n"
                     " \"layout\": \"row\"}}}]}",
         XDNN_ERR_SYNTAX, "3:64: /graphs/0/tensors/x/perm: \"layout\" and \"perm\" both give the layout; keep one"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": 0.5}, "
                             "\"outputs\": {\"y\": \"y\"}}]," OUTPUTS,
         XDNN_ERR_SYNTAX,
         "5:55: /graphs/0/nodes/0/inputs/x: expected a tensor name, {\"scalar\": ...} or {\"expr\": ...}, got number 0.5"},
        {HEAD "\"default_graph\": \"nope\", \"graphs\": []}", XDNN_ERR_SEMANTIC,
         "2:18: /default_graph: unknown graph \"nope\""},
        {HEAD "\"params\": {\"N\": {\"value\": 1e999}}}", XDNN_ERR_SEMANTIC,
         "2:27: /params/N/value: number 1e999 is out of range (use {\"expr\": \"inf\"})"},
        /* What .dnn text cannot say is refused here too, so every JSON graph
         * read has a .dnn form (fuzz_json's round trip found these). */
        {HEAD G_OPEN "\"context\": {\"io\": -1}}]}", XDNN_ERR_SYNTAX,
         "3:19: /graphs/0/context/io: expected a dtype name such as \"f16\", got number -1"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": {\"expr\": \"M\"}}, "
                             "\"outputs\": {\"y\": \"y\"}}]," OUTPUTS,
         XDNN_ERR_SEMANTIC, "5:55: /graphs/0/nodes/0/inputs/x: unknown param 'M' in a scalar input"},
        {HEAD G_OPEN TENSORS "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": {\"scalar\": \"s\"}}, "
                             "\"outputs\": {\"y\": \"y\"}}]," OUTPUTS,
         XDNN_ERR_SEMANTIC, "5:66: /graphs/0/nodes/0/inputs/x: input 'x' of relu must be a tensor or a number, got string \"s\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        xdnn_status st;
        const char *got = first_error(cases[i].json, &st);
        CHECK(strcmp(got, cases[i].want) == 0, "case %zu:\n  got  %s\n  want %s", i, got, cases[i].want);
        CHECK(st == cases[i].st, "case %zu: status %d, want %d", i, st, cases[i].st);
    }

    /* Positive controls: the base graph reads, and x- keys are ignored. */
    xdnn_status st;
    const char *ok = HEAD "\"x-tool\": {\"anything\": [1]}, " G_OPEN TENSORS
        "\"nodes\": [{\"name\": \"y\", \"op\": \"relu\", \"inputs\": {\"x\": \"x\"}, \"outputs\": {\"y\": \"y\"}, "
        "\"x-note\": 1}]," OUTPUTS;
    CHECK(strcmp(first_error(ok, &st), "") == 0 && st == XDNN_OK, "base graph: %s", first_error(ok, &st));

    /* A NUL byte, and nesting deeper than cJSON's limit: errors, no crash. */
    const char nul[] = "{\"format\": \"xdnn-\0graph\"}";
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    st = xdnn_module_parse("nul.json", nul, sizeof nul - 1, true, d, &m);
    CHECK(st == XDNN_ERR_SYNTAX && m == NULL, "NUL byte: status %d", st);
    const xdnn_diag *r = xdnn_diags_get(d, 0);
    CHECK(r && r->line == 1 && r->col == 18 &&
              strcmp(r->message, "JSON syntax error: control character in a string (escape it as \\u00XX)") == 0,
          "NUL byte message: %s", r ? r->message : "(none)");
    xdnn_diags_destroy(d);
    size_t depth = 5000;
    char *deep = malloc(2 * depth + 1);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = 0;
    const char *got = first_error(deep, &st);
    CHECK(st == XDNN_ERR_SYNTAX && strcmp(got, "1:1001: -: JSON syntax error: nesting deeper than 1000 levels") == 0,
          "deep nesting: status %d, %s", st, got);
    free(deep);
}

/* Message of the first error binding the default graph of `text`. */
static char *bind_error(const char *name, const char *text, bool is_json)
{
    static char buf[512];
    buf[0] = 0;
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    xdnn_status st = xdnn_module_parse(name, text, strlen(text), is_json, d, &m);
    xdnn_graph_t *g = st == XDNN_OK ? xdnn_module_find_graph(m, NULL) : NULL;
    if (g)
        st = xdnn_graph_bind(g, NULL, 0, d);
    const xdnn_diag *r = xdnn_diags_get(d, 0);
    snprintf(buf, sizeof buf, "%s%s", st == XDNN_OK ? "(bound) " : "", r ? r->message : "(no diagnostic)");
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
    return buf;
}

/* An attribute of the wrong type is a bind error in .dnn text; the JSON that
 * convert writes for it must read back and fail at bind with the same
 * message (a string in a dtype attribute must not turn into a dtype). */
static void test_attribute_types_at_bind(void)
{
    static const struct {
        const char *body, *want;
    } cases[] = {
        {"y = relu(x, upper=\"6\");", "relu: attribute 'upper' must be a number, got \"6\""},
        {"y = cast(x, dtype=\"f16\");", "cast: attribute 'dtype' must be a dtype, got \"f16\""},
        {"y = gelu(x, approx=\"tan\");", "gelu: attribute 'approx' must be one of none|tanh, got \"tan\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "graph g {\n  input x: f32[4];\n  %s\n  output y;\n}\n", cases[i].body);
        char *dnn_msg = strdup(bind_error("t.dnn", text, false));
        CHECK(strcmp(dnn_msg, cases[i].want) == 0, "case %zu .dnn: %s", i, dnn_msg);
        xdnn_module_t *m = parse("t.dnn", text, false);
        char *json = m ? json_write_module(m) : NULL;
        CHECK(json != NULL, "case %zu: no JSON", i);
        if (json) {
            const char *json_msg = bind_error("t.json", json, true);
            CHECK(strcmp(json_msg, cases[i].want) == 0, "case %zu JSON: %s\n%s", i, json_msg, json);
        }
        free(json);
        free(dnn_msg);
        xdnn_module_destroy(m);
    }
}

int main(void)
{
    test_examples();
    test_every_construct();
    test_reader_agreement();
    test_c_api();
    test_errors();
    test_attribute_types_at_bind();
    return test_summary("test_json");
}

/* test_gpu_lower.c — lower.c, no GPU needed: an output that other ops read in
 * another dtype is lowered as its value (what the consumers read, a virtual
 * in the dtype it would have unmarked) plus a stored copy in the output dtype,
 * written by a cast node and carrying the IR index that binding, upload and
 * download go through (dnn(5): marking a tensor output changes no other
 * result).  An output nothing reads stays one tensor.  And every op of fixed
 * arity fits a GPU graph node, since lowering keeps at most GG_MAX_IN inputs
 * and GG_MAX_OUT results of a node.  Built with CUDA=1 only. */
#include <stdio.h>

#if XDNN_HAVE_CUDA
#include "core/ir.h"
#include "gpu_fixture.h"
#include "ops/op.h"
#include "test_util.h"

#include <string.h>

static int ir_index_of(const fixture *f, const char *name)
{
    const xgraph *xg = xdnn_module_find_graph(f->m, NULL);
    for (size_t i = 0; i < xg->ntensors; i++)
        if (strcmp(xg->tensors[i].name, name) == 0)
            return (int)i;
    CHECK(false, "no IR tensor %s", name);
    return 0;
}

/* The ggraph tensor other than `not` whose IR index is ir; -1 if none. */
static int stored_copy(const ggraph *g, int ir, int not)
{
    for (int t = 0; t < g->nt; t++)
        if (t != not && g->t[t].ir_index == ir)
            return t;
    return -1;
}

static void test_consumed_output(void)
{
    /* y is an f16 output (io=f16) and z reads it: z must read y's f32 value */
    const char *text = "dnn 1;\ngraph g(io=f16) {\n  input x: f16[8, 16];\n  y = x * 1.25;\n"
                       "  z = reduce(y - x, axes=[1]);\n  output y, z;\n}\n";
    fixture f;
    if (!fixture_setup(&f, text))
        return;
    const ggraph *g = f.g;
    int iy = ir_index_of(&f, "y");
    const gtensor *v = &g->t[iy];
    CHECK(v->dtype == XDNN_F32 && !v->is_output && v->ir_index == -1, "y's value: %s, output %d, ir %d",
          gg_dtype_name(v->dtype), v->is_output, v->ir_index);
    CHECK(strcmp(v->name, "y.value") == 0, "value named %s", v->name);
    int k = stored_copy(g, iy, iy);
    CHECK(k >= 0, "y has a stored copy");
    if (k >= 0) {
        const gtensor *s = &g->t[k];
        CHECK(s->dtype == XDNN_F16 && s->is_output && strcmp(s->name, "y") == 0, "stored copy %s %s output %d",
              s->name, gg_dtype_name(s->dtype), s->is_output);
        CHECK(s->producer >= 0 && strcmp(g->n[s->producer].name, "y.store") == 0 &&
                  g->n[s->producer].kind == GN_POINTWISE && g->n[s->producer].in[0] == iy,
              "the copy is written by a cast of y's value");
        CHECK(s->rank == 2 && s->dims[0] == 8 && s->dims[1] == 16 && s->numel == 128, "copy has y's shape");
    }
    /* the sub reads the value, not the copy */
    int consumers_of_copy = 0;
    for (int n = 0; n < g->nn; n++)
        for (int i = 0; i < g->n[n].nin; i++)
            consumers_of_copy += k >= 0 && g->n[n].in[i] == k;
    CHECK_EQ(consumers_of_copy, 0, "nothing reads the stored copy");
    /* z, read by nothing, is stored in the output dtype directly */
    int iz = ir_index_of(&f, "z");
    CHECK(g->t[iz].dtype == XDNN_F16 && g->t[iz].is_output && g->t[iz].ir_index == iz && stored_copy(g, iz, iz) < 0,
          "z is one f16 output tensor");
    fixture_teardown(&f);
}

static void test_same_dtype_output(void)
{
    /* an output read in its own dtype (an f32 graph) needs no copy */
    const char *text = "dnn 1;\ngraph g {\n  input x: f32[4, 4];\n  y = relu(x);\n  z = y * 2.0;\n"
                       "  output y, z;\n}\n";
    fixture f;
    if (!fixture_setup(&f, text))
        return;
    int iy = ir_index_of(&f, "y");
    CHECK(f.g->t[iy].is_output && f.g->t[iy].ir_index == iy && stored_copy(f.g, iy, iy) < 0, "y stays one tensor");
    fixture_teardown(&f);
}

/* lower_node copies at most GG_MAX_IN ports and GG_MAX_OUT results into a
 * gnode: an op with more would lose its last ones without a word (engines
 * read an absent port as "not given").  Variadic ops (concat, split) are
 * checked by the engines that take them, which read the IR node's counts. */
static void test_ops_fit_gpu_nodes(void)
{
    for (int i = 0; i < OP_COUNT; i++) {
        const op_desc *d = op_get(i);
        CHECK(d->variadic || d->nports <= GG_MAX_IN, "op %s has %d ports; a GPU node holds GG_MAX_IN = %d", d->name,
              d->nports, GG_MAX_IN);
        CHECK(d->variadic_results || d->nresults <= GG_MAX_OUT,
              "op %s has %d results; a GPU node holds GG_MAX_OUT = %d", d->name, d->nresults, GG_MAX_OUT);
    }
}

int main(void)
{
    test_ops_fit_gpu_nodes();
    test_consumed_output();
    test_same_dtype_output();
    return test_summary("test_gpu_lower");
}
#else
int main(void)
{
    puts("test_gpu_lower: built without CUDA, nothing to test");
    return 0;
}
#endif

/* gpu_fixture.c — see gpu_fixture.h. */
#include "gpu_fixture.h"

#if XDNN_HAVE_CUDA
#include "test_util.h"

#include "gpu/engine.h"
#include "gpu/lower.h"

#include <stdio.h>
#include <string.h>

bool fixture_setup(fixture *f, const char *text)
{
    memset(f, 0, sizeof *f);
    f->d = xdnn_diags_create();
    if (xdnn_module_parse("test.dnn", text, strlen(text), false, f->d, &f->m) != XDNN_OK ||
        xdnn_graph_bind(xdnn_module_find_graph(f->m, NULL), NULL, 0, f->d) != XDNN_OK) {
        xdnn_diags_print(f->d, stderr);
        CHECK(false, "the test graph sets up (diagnostics above)");
        return false;
    }
    f->ar = arena_create();
    f->g = gpu_lower(xdnn_module_find_graph(f->m, NULL), f->ar);
    f->pl = gpu_partition(f->g, false);
    return true;
}

void fixture_teardown(fixture *f)
{
    if (f->ar)
        arena_destroy(f->ar);
    xdnn_module_destroy(f->m);
    xdnn_diags_destroy(f->d);
}

const gpart *fixture_part_of_op(const gplan *p, const char *op)
{
    for (int i = 0; i < p->nparts; i++)
        if (p->parts[i].anchor >= 0 && strcmp(p->g->n[p->parts[i].anchor].op, op) == 0)
            return &p->parts[i];
    CHECK(false, "no partition for op %s", op);
    return NULL;
}

int fixture_tensor(const ggraph *g, const char *name)
{
    for (int i = 0; i < g->nt; i++)
        if (strcmp(g->t[i].name, name) == 0)
            return i;
    CHECK(false, "no tensor %s", name);
    return 0;
}

int fixture_partition_kernel(const gplan *pl, const gpart *p, cg_kernel *k, char *why, size_t len)
{
    const ggraph *g = pl->g;
    xdnn_status st;
    if (p->kind == GP_POINTWISE) {
        st = cg_pointwise(g, p->nodes, p->nnodes, p->outs, p->nouts, "k", k);
    } else if (p->kind == GP_REDUCE) {
        int pro[64], npro = 0;
        for (int j = 0; j < p->nnodes && npro < 64; j++)
            if (p->nodes[j] != p->anchor)
                pro[npro++] = p->nodes[j];
        st = cg_reduce(g, p->anchor, pro, npro, "k", k);
    } else if (p->kind == GP_MATMUL) {
        mm_shape s;
        if (!gpu_matmul_analyze(pl, p, false, &s, why, len))
            return -1;
        if (!s.need_kernel)
            return 0;
        st = cg_pointwise(g, s.epi_nodes, s.nepi, p->outs, p->nouts, "k", k);
    } else {
        return 0;
    }
    if (st != XDNN_OK)
        snprintf(why, len, "code generation failed: %s", xdnn_status_name(st));
    return st == XDNN_OK ? 1 : -1;
}
#else
/* ISO C needs a declaration in every translation unit. */
typedef int gpu_fixture_unused;
#endif

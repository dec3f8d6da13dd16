/* gpu_fixture.c — see gpu_fixture.h. */
#include "gpu_fixture.h"

#if XDNN_HAVE_CUDA
#include "test_util.h"

#include "gpu/lower.h"

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
#else
/* ISO C needs a declaration in every translation unit. */
typedef int gpu_fixture_unused;
#endif

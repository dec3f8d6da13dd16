/* gen.c — reduce v2 emulation (sweep.sh): the generated kernel of a one-reduce graph, its prelude stripped,
 * into FILE, and its geometry into META, for emu.cpp.  Usage: gen GRAPH_TEXT FILE META (XDNN_REDUCE_V2=1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpu/engine.h"
#include "gpu/lower.h"
#include "gpu_fixture.h"
int main(int argc, char **argv)
{
    const char *text = argv[1];
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    if (xdnn_module_parse("x", text, strlen(text), false, d, &m) != XDNN_OK ||
        xdnn_graph_bind(xdnn_module_find_graph(m, NULL), NULL, 0, d) != XDNN_OK) { xdnn_diags_print(d, stderr); return 1; }
    arena *ar = arena_create();
    ggraph *g = gpu_lower(xdnn_module_find_graph(m, NULL), ar);
    gplan *pl = gpu_partition(g, false);
    for (int i = 0; i < pl->nparts; i++) {
        gpart *p = &pl->parts[i];
        cg_kernel k; char why[256];
        if (p->kind != GP_REDUCE || fixture_partition_kernel(pl, p, &k, why, sizeof why) != 1) continue;
        cg_redv2 rc;
        if (!cg_reduce_v2_plan(g, p->anchor, 0, &rc)) { printf("OLD\n"); return 3; }
        const gnode *n = &g->n[p->anchor];
        FILE *f = fopen(argv[2], "w");
        const char *body = k.src + strlen(cg_prelude()), *own = strstr(body, "#define XD_");
        fputs(own ? own : body, f); /* from the kernel's own defines: a packed kernel's xd_pk (PTX) is emu.cpp's */
        fclose(f);
        f = fopen(argv[3], "w");
        fprintf(f, "%d %lld %u %d %lld %zu %lld %lld %lld %d %d %d %d\n", k.form, (long long)k.work, k.grid_y,
                k.name2 != NULL, (long long)k.work2, k.ws_bytes, (long long)rc.outer, (long long)rc.rlen,
                (long long)rc.cols, (int)g->t[n->in[0]].dtype, (int)g->t[n->out].dtype, (int)n->red, (int)XDNN_F32);
        fclose(f);
        printf("form=%d work=%lld splits=%u fold=%d outer=%lld rlen=%lld cols=%lld vec=%d lanes_c=%d\n", k.form,
               (long long)k.work, k.grid_y, k.name2 != NULL, (long long)rc.outer, (long long)rc.rlen, (long long)rc.cols, rc.vec, rc.lanes_c);
        return 0;
    }
    return 2;
}

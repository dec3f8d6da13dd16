/* plan_explain.c — `xdnn plan --explain`: plan a graph through the public
 * API and say what was decided and why: every partition, the engine chosen,
 * the other engines that could run it with their estimated cost, and (-v)
 * the ones that declined with their reason.  With --device-model it plans for
 * a described GPU, so it runs on a machine without one.  Public header only. */
#include "plan_explain.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void print_partition(const xdnn_plan_t *p, size_t i, bool verbose, FILE *f)
{
    xdnn_partition_info pi;
    if (xdnn_plan_partition(p, i, &pi) != XDNN_OK)
        return;
    fprintf(f, "partition %zu  %s  (%s)\n", i, pi.name, pi.ops);
    size_t declined = 0;
    for (int pass = 0; pass < 3; pass++) /* chosen, other candidates, declined */
        for (size_t k = 0; k < pi.ncandidates; k++) {
            xdnn_candidate_info c;
            if (xdnn_plan_candidate(p, i, k, &c) != XDNN_OK)
                continue;
            int kind = c.chosen ? 0 : c.supported ? 1 : 2;
            if (kind != pass)
                continue;
            if (kind == 2 && !verbose) {
                declined++;
                continue;
            }
            if (kind < 2) {
                fprintf(f, "  %-9s %-20s%s%s cost %.1f us", kind ? "candidate" : "chosen", c.engine,
                        kind == 0 && pi.knobs[0] ? " " : "", kind == 0 ? pi.knobs : "", c.cost_us);
                if (c.measured_ms >= 0)
                    fprintf(f, ", measured %.4f ms", c.measured_ms);
                fputc('\n', f);
            } else {
                fprintf(f, "  %-9s %-20s %s\n", "declined", c.engine, c.reason);
            }
        }
    if (pi.ncandidates == 0)
        fprintf(f, "  chosen    %-20s (restored from the plan; no candidates recorded)\n", pi.engine);
    if (declined)
        fprintf(f, "  (%zu other engine%s declined; -v says why)\n", declined, declined == 1 ? "" : "s");
}

xdnn_status plan_explain(xdnn_graph_t *g, const explain_opts *o, FILE *f)
{
    xdnn_plan_options po;
    xdnn_plan_options_init(&po);
    po.backend = o->backend;
    po.device_model = o->device_model;
    po.force = o->force;
    po.nforce = o->nforce;
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_plan_t *p = NULL;
    xdnn_status s = xdnn_plan_build(g, &po, d, &p);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    if (s != XDNN_OK)
        return s;
    plan_explain_print(p, o->verbose, f);
    xdnn_plan_destroy(p);
    return XDNN_OK;
}

void plan_explain_print(const xdnn_plan_t *p, bool verbose, FILE *f)
{
    size_t np = xdnn_plan_partition_count(p);
    fprintf(f, "plan of graph %s for %s (%s backend%s): %zu partition%s, workspace %zu bytes\n",
            xdnn_graph_name(xdnn_plan_graph((xdnn_plan_t *)(uintptr_t)p)), xdnn_plan_device(p),
            xdnn_backend_name(xdnn_plan_backend(p)),
            xdnn_plan_executable(p) ? "" : ", selection only: not executable here", np, np == 1 ? "" : "s",
            xdnn_plan_workspace_size(p));
    for (size_t i = 0; i < np; i++)
        print_partition(p, i, verbose, f);
}

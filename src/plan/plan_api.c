/* plan_api.c — the public plan API of xdnn.h: create, serialize,
 * deserialize (verify, check device and version, parse and bind), destroy. */
#include "plan/plan.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

xdnn_status xdnn_plan_create(xdnn_graph_t *g, bool use_gpu, bool tune, xdnn_diags_t *diags, xdnn_plan_t **out)
{
    if (!out)
        return XDNN_ERR_USAGE;
    *out = NULL;
    if (!g)
        return XDNN_ERR_USAGE;
    char fp[FINGERPRINT_MAX];
    xdnn_status s = fingerprint_device(use_gpu, fp, sizeof fp);
    if (s != XDNN_OK) {
        diag_error(diags, s, xloc_none(), "cannot identify the device: %s", fp);
        return s;
    }
    select_opts o = {.use_gpu = use_gpu, .tune = tune, .warmup = 1, .iters = 5, .fp = fp};
    return plan_build(g, &o, diags, out);
}

xdnn_status xdnn_plan_serialize(const xdnn_plan_t *p, void **data, size_t *len, xdnn_diags_t *diags)
{
    if (!p || !data || !len)
        return XDNN_ERR_USAGE;
    unsigned char *bytes;
    xdnn_status s = plan_to_bytes(p, &bytes, len, diags);
    *data = s == XDNN_OK ? bytes : NULL;
    return s;
}

xdnn_status xdnn_plan_deserialize(const void *data, size_t len, unsigned flags, xdnn_diags_t *diags,
                                  xdnn_plan_t **out)
{
    if (!out)
        return XDNN_ERR_USAGE;
    *out = NULL;
    if (!data)
        return XDNN_ERR_USAGE;
    double t0 = now_ms();
    xdnn_plan_t *p;
    xdnn_status s = plan_from_bytes("<plan>", data, len, diags, &p);
    if (s != XDNN_OK)
        return s;
    bool gpu = strncmp(p->device, "gpu", 3) == 0;
    if (!(flags & XDNN_PLAN_ANY_DEVICE))
        s = plan_check_compatible(p, gpu, diags);
    if (s == XDNN_OK)
        s = plan_parse_graph(p->module_json, p->graph_name, &p->m, &p->g, diags);
    /* a CPU plan must name every node once, each run by the CPU reference */
    if (s == XDNN_OK && !gpu) {
        bool ok = (size_t)p->nparts == p->g->nnodes;
        for (int i = 0; ok && i < p->nparts; i++)
            ok = strcmp(p->parts[i].name, p->g->nodes[i].name) == 0 && strcmp(p->parts[i].engine, "cpu_reference") == 0;
        if (!ok) {
            diag_error(diags, XDNN_ERR_IO, xloc_none(),
                       "corrupt plan: its %d partitions do not match the %zu nodes of graph '%s' on the CPU reference",
                       p->nparts, p->g->nnodes, p->graph_name);
            s = XDNN_ERR_IO;
        }
    }
    if (s != XDNN_OK) {
        xdnn_plan_destroy(p);
        return s;
    }
    p->load_ms = now_ms() - t0;
    *out = p;
    return XDNN_OK;
}

xdnn_graph_t *xdnn_plan_graph(xdnn_plan_t *p) { return p ? p->g : NULL; }

void xdnn_plan_destroy(xdnn_plan_t *p)
{
    if (!p)
        return;
    free(p->graph_name);
    free(p->module_json);
    plan_parts_free(p->parts, p->nparts);
    for (int i = 0; i < p->nblobs; i++)
        free(p->blobs[i].data);
    free(p->blobs);
    xdnn_module_destroy(p->m);
    free(p);
}

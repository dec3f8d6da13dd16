/* plan_api.c — the public plan API of xdnn.h: create, serialize,
 * deserialize (verify, check device and version, parse and bind), destroy. */
#include "plan/backend.h"

#include "core/fileio.h"

#include <stddef.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

xdnn_status xdnn_plan_build(xdnn_graph_t *g, const xdnn_plan_options *o, xdnn_diags_t *diags, xdnn_plan_t **out)
{
    if (!out)
        return XDNN_ERR_USAGE;
    *out = NULL;
    /* a caller built against an older header passes a shorter struct: the
     * fields it does not know keep their defaults */
    xdnn_plan_options full;
    xdnn_plan_options_init(&full);
    size_t known = offsetof(xdnn_plan_options, tf32) + sizeof full.tf32;
    if (!g || (o && o->struct_size < known)) {
        diag_error(diags, XDNN_ERR_USAGE, xloc_none(),
                   g ? "xdnn_plan_build: options not set up by xdnn_plan_options_init" : "xdnn_plan_build: graph is NULL");
        return XDNN_ERR_USAGE;
    }
    if (o)
        memcpy(&full, o, o->struct_size < sizeof full ? o->struct_size : sizeof full);
    full.struct_size = sizeof full;
    return plan_build(g, &full, full.log, diags, out);
}

xdnn_status xdnn_plan_create(xdnn_graph_t *g, bool use_gpu, bool tune, xdnn_diags_t *diags, xdnn_plan_t **out)
{
    xdnn_plan_options o;
    xdnn_plan_options_init(&o);
    o.backend = use_gpu ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU;
    o.heuristic = tune ? XDNN_HEUR_MEASURED : XDNN_HEUR_FAST;
    return xdnn_plan_build(g, &o, diags, out);
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

/* Deserialize; `name` labels the diagnostics (a file's path, or "<plan>"). */
static xdnn_status load_named(const char *name, const void *data, size_t len, unsigned flags, double t0,
                              xdnn_diags_t *diags, xdnn_plan_t **out)
{
    xdnn_plan_t *p;
    xdnn_status s = plan_from_bytes(name, data, len, diags, &p);
    if (s != XDNN_OK)
        return s;
    if (flags & XDNN_PLAN_INSPECT) { /* the records only: no device touched, nothing parsed */
        p->build_ms = p->load_ms = now_ms() - t0;
        *out = p;
        return XDNN_OK;
    }
    bool gpu = strncmp(p->device, "gpu", 3) == 0;
    /* a plan for another device or version can be inspected, not executed;
     * for a GPU plan this is the process's first CUDA call (driver and runtime
     * start-up), timed as device setup */
    double tf = now_ms();
    xdnn_status compat = plan_check_compatible(p, gpu, flags & XDNN_PLAN_ANY_DEVICE ? NULL : diags);
    double setup_ms = gpu ? now_ms() - tf : 0;
    bool here = compat == XDNN_OK;
    if (!(flags & XDNN_PLAN_ANY_DEVICE))
        s = compat;
    if (s == XDNN_OK)
        s = plan_parse_graph(p->module_json, p->graph_name, &p->m, &p->g, diags);
    if (s == XDNN_OK)
        s = plan_collect_tensors(p, diags);
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
    /* restore the choices as data and load the plan's kernels: ready to execute */
    if (s == XDNN_OK && here) {
        p->be = plan_backend_get(gpu ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU);
        if (gpu)
            s = plan_gpu_import_blobs(p->blobs, p->nblobs, diags);
        plan_prepare_opts po = {.restore = true};
        if (s == XDNN_OK)
            s = p->be->prepare(p, &po, diags);
    }
    if (s != XDNN_OK) {
        xdnn_plan_destroy(p);
        return s;
    }
    p->build_ms = now_ms() - t0;
    p->context_ms += setup_ms;
    p->load_ms = p->build_ms - p->context_ms;
    *out = p;
    return XDNN_OK;
}

xdnn_status xdnn_plan_deserialize(const void *data, size_t len, unsigned flags, xdnn_diags_t *diags,
                                  xdnn_plan_t **out)
{
    if (!out)
        return XDNN_ERR_USAGE;
    *out = NULL;
    if (!data)
        return XDNN_ERR_USAGE;
    return load_named("<plan>", data, len, flags, now_ms(), diags, out);
}

xdnn_status xdnn_plan_load(const char *path, unsigned flags, xdnn_diags_t *diags, xdnn_plan_t **out)
{
    if (!out)
        return XDNN_ERR_USAGE;
    *out = NULL;
    if (!path)
        return XDNN_ERR_USAGE;
    double t0 = now_ms();
    char *data;
    size_t len;
    xdnn_status s = file_read_all(path, &data, &len, diags);
    if (s == XDNN_OK)
        s = load_named(path, data, len, flags, t0, diags, out);
    free(data);
    return s;
}

xdnn_status xdnn_plan_read_graph(xdnn_plan_t *p, xdnn_diags_t *diags)
{
    if (!p)
        return XDNN_ERR_USAGE;
    if (p->g)
        return XDNN_OK;
    xdnn_status s = plan_parse_graph(p->module_json, p->graph_name, &p->m, &p->g, diags);
    if (s != XDNN_OK)
        p->g = NULL;
    return s;
}

const char *xdnn_plan_xdnn_version(const xdnn_plan_t *p) { return p ? p->xdnn_version : NULL; }

unsigned xdnn_plan_format_version(const xdnn_plan_t *p) { return p ? p->format_version : 0; }

const char *xdnn_plan_graph_name(const xdnn_plan_t *p) { return p ? p->graph_name : NULL; }

void xdnn_plan_print(const xdnn_plan_t *p, FILE *f)
{
    if (p && f)
        plan_print_info(p, f);
}

xdnn_graph_t *xdnn_plan_graph(xdnn_plan_t *p) { return p ? p->g : NULL; }

double xdnn_plan_load_ms(const xdnn_plan_t *p) { return p ? p->load_ms : 0; }

void xdnn_plan_destroy(xdnn_plan_t *p)
{
    if (!p)
        return;
    if (p->be)
        p->be->release(p);
    free(p->tensors);
    free(p->bindable_of);
    free(p->graph_name);
    free(p->module_json);
    plan_parts_free(p->parts, p->nparts);
    for (int i = 0; i < p->nblobs; i++)
        free(p->blobs[i].data);
    free(p->blobs);
    free(p->dyn);
    xdnn_module_destroy(p->m);
    free(p);
}

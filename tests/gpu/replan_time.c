/* replan_time.c — host time of a new size (issue 14 item 5), through the
 * public API only:
 *
 *   replan_time GRAPH PARAM LO:HI BASE V... [-- P=X ...]
 *
 * binds GRAPH with PARAM=BASE (and the P=X after --), builds a CUDA plan with
 * PARAM dynamic in LO:HI, then for each V:
 *   resize   xdnn_plan_resize to V, first time (its generated kernels are
 *            compiled unless the kernel cache has them),
 *   again    the same resize once more (a known size: nothing compiled),
 *   fresh    xdnn_plan_build of the graph bound to V (binding + selection +
 *            building; kernels already in memory from the resize),
 * each as host wall time with its NVRTC time and kernel counts, then
 * executes the resized and the fresh plan on the graph's initializer values
 * and compares every output (largest |a-b| / (|b| + 1e-3); bf16 and f16
 * outputs widened).  Exit 1 when an output differs by more than 2e-2 or any
 * step fails.
 *
 * Without a GPU it times `fresh` alone with device_model h100: the host's
 * planning (bind, lower, partition, select, lay out), nothing built. */
#include "xdnn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if XDNN_HAVE_CUDA
#include <cuda_runtime.h>
#endif

enum { MAXV = 32, MAXT = 64, MAXSET = 8 };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int fail(const char *what, xdnn_diags_t *d)
{
    fprintf(stderr, "replan_time: %s failed\n", what);
    xdnn_diags_print(d, stderr);
    return 1;
}

static float widen(const void *p, size_t i, xdnn_dtype dt)
{
    if (dt == XDNN_F32)
        return ((const float *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    if (dt == XDNN_BF16) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    /* f16 */
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

#if XDNN_HAVE_CUDA
/* Execute p on its initializers; outputs back in host[] (malloc'ed, caller frees). */
static int execute(const xdnn_plan_t *p, void **host, xdnn_tensor_info *info, size_t *n)
{
    xdnn_diags_t *d = xdnn_diags_create();
    *n = xdnn_plan_tensor_count(p);
    if (*n > MAXT)
        return fail("too many tensors", d);
    xdnn_tensor_binding b[MAXT];
    void *ws = NULL;
    int rc = 0;
    for (size_t i = 0; i < *n && !rc; i++) {
        xdnn_plan_tensor(p, i, &info[i]);
        host[i] = calloc(1, info[i].bytes + 1);
        b[i] = (xdnn_tensor_binding){.name = info[i].name, .id = -1};
        if (!host[i] || cudaMalloc(&b[i].ptr, info[i].bytes + 1) != cudaSuccess)
            rc = fail("allocation", d);
        else if (!info[i].is_output &&
                 (xdnn_plan_fill_tensor(p, info[i].name, host[i], info[i].bytes, NULL, d) != XDNN_OK ||
                  cudaMemcpy(b[i].ptr, host[i], info[i].bytes, cudaMemcpyHostToDevice) != cudaSuccess))
            rc = fail("input fill", d);
    }
    size_t wsb = xdnn_plan_workspace_size(p);
    if (!rc && wsb && cudaMalloc(&ws, wsb) != cudaSuccess)
        rc = fail("workspace", d);
    if (!rc && (xdnn_plan_execute(p, b, *n, ws, NULL, d) != XDNN_OK || cudaDeviceSynchronize() != cudaSuccess))
        rc = fail("execute", d);
    for (size_t i = 0; i < *n; i++) {
        if (!rc && info[i].is_output)
            cudaMemcpy(host[i], b[i].ptr, info[i].bytes, cudaMemcpyDeviceToHost);
        cudaFree(b[i].ptr);
    }
    cudaFree(ws);
    xdnn_diags_destroy(d);
    return rc;
}

/* The largest relative difference over every output of two runs. */
static double compare(const xdnn_plan_t *a, const xdnn_plan_t *b, int *rc)
{
    void *ha[MAXT] = {0}, *hb[MAXT] = {0};
    xdnn_tensor_info ia[MAXT], ib[MAXT];
    size_t na = 0, nb = 0;
    double worst = 0;
    *rc = execute(a, ha, ia, &na) || execute(b, hb, ib, &nb) || na != nb;
    for (size_t i = 0; !*rc && i < na; i++) {
        if (!ia[i].is_output)
            continue;
        size_t es = ia[i].dtype == XDNN_F32 ? 4 : 2, n = ia[i].bytes / es;
        if (ia[i].bytes != ib[i].bytes || (es == 2 && ia[i].dtype != XDNN_BF16 && ia[i].dtype != XDNN_F16)) {
            *rc = 1;
            break;
        }
        for (size_t k = 0; k < n; k++) {
            double x = widen(ha[i], k, ia[i].dtype), y = widen(hb[i], k, ib[i].dtype);
            double e = fabs(x - y) / (fabs(y) + 1e-3);
            if (!(e <= worst))
                worst = e;
        }
    }
    for (size_t i = 0; i < MAXT; i++)
        free(ha[i]), free(hb[i]);
    return worst;
}
#endif

static void stats_line(const char *what, const xdnn_plan_t *p, double host_ms)
{
    xdnn_plan_stats st;
    xdnn_plan_get_stats(p, &st);
    printf("  %-7s %9.2f ms host (%8.2f ms NVRTC, %3d compiled, %3d cached; context %.1f ms)\n", what, host_ms,
           st.compile_ms, st.kernels_compiled, st.kernels_cached, st.context_ms);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: replan_time GRAPH PARAM LO:HI BASE V... [-- P=X ...]\n");
        return 2;
    }
    const char *path = argv[1], *param = argv[2], *range = argv[3], *base = argv[4];
    const char *values[MAXV];
    xdnn_binding sets[MAXSET + 1];
    char setbuf[MAXSET][64];
    int nv = 0, ns = 0, i = 5;
    for (; i < argc && strcmp(argv[i], "--") && nv < MAXV; i++)
        values[nv++] = argv[i];
    for (i++; i < argc && ns < MAXSET; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq || (size_t)(eq - argv[i]) >= sizeof setbuf[0])
            return 2;
        snprintf(setbuf[ns], sizeof setbuf[ns], "%.*s", (int)(eq - argv[i]), argv[i]);
        sets[ns] = (xdnn_binding){setbuf[ns], eq + 1};
        ns++;
    }
    sets[ns] = (xdnn_binding){param, base};
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    if (xdnn_module_load(path, NULL, d, &m) != XDNN_OK)
        return fail("load", d);
    xdnn_graph_t *g = xdnn_module_find_graph(m, NULL);
    if (!g || xdnn_graph_bind(g, sets, (size_t)ns + 1, d) != XDNN_OK)
        return fail("bind", d);
    char why[256];
    bool gpu = xdnn_backend_available(XDNN_BACKEND_CUDA, why, sizeof why);
    xdnn_plan_options o;
    xdnn_plan_options_init(&o);
    o.backend = XDNN_BACKEND_CUDA;
    o.device_model = gpu ? NULL : "h100";
    char dyn[96];
    snprintf(dyn, sizeof dyn, "%s=%s", param, range);
    const char *dyns[] = {dyn};
    o.dynamic = dyns;
    o.ndynamic = 1;
    printf("replan_time: %s, %s dynamic in %s, built at %s=%s, %s\n", path, param, range, param, base,
           gpu ? "on the GPU" : "no GPU: host planning for a described h100 only");
    double t0 = now_ms();
    xdnn_plan_t *p = NULL;
    if (xdnn_plan_build(g, &o, d, &p) != XDNN_OK)
        return fail("the dynamic plan's build", d);
    stats_line("build", p, now_ms() - t0);
    int rc = 0;
    o.dynamic = NULL;
    o.ndynamic = 0;
    for (int k = 0; k < nv && !rc; k++) {
        printf("%s=%s\n", param, values[k]);
        xdnn_binding v = {param, values[k]};
        xdnn_plan_t *q = NULL, *q2 = NULL, *fresh = NULL;
        if (gpu) {
            t0 = now_ms();
            if (xdnn_plan_resize(p, &v, 1, d, &q) != XDNN_OK)
                return fail("resize", d);
            stats_line("resize", q, now_ms() - t0);
            t0 = now_ms();
            if (xdnn_plan_resize(p, &v, 1, d, &q2) != XDNN_OK)
                return fail("resize again", d);
            stats_line("again", q2, now_ms() - t0);
        }
        sets[ns] = v;
        t0 = now_ms();
        if (xdnn_graph_bind(g, sets, (size_t)ns + 1, d) != XDNN_OK || xdnn_plan_build(g, &o, d, &fresh) != XDNN_OK)
            return fail("fresh plan", d);
        stats_line("fresh", fresh, now_ms() - t0);
#if XDNN_HAVE_CUDA
        if (gpu) {
            double e = compare(q2, fresh, &rc);
            printf("  outputs: resized vs fresh plan, max rel diff %.3g%s\n", e, rc ? " (a run failed)" : "");
            if (!(e <= 2e-2))
                rc = 1;
        }
#endif
        xdnn_plan_destroy(q);
        xdnn_plan_destroy(q2);
        xdnn_plan_destroy(fresh);
    }
    xdnn_plan_destroy(p);
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
    xdnn_release_caches();
    printf("replan_time: %s\n", rc ? "FAILED" : "ok");
    return rc;
}

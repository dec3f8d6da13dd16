/* api_services.c — the public face (include/xdnn.h) of what a program around
 * plans needs besides them: the devices and the engine catalogue, the
 * partition picture of a graph, the tune cache, and the library's file
 * conventions (whole-file reads, atomic writes, temp files removed on a
 * signal), so that `xdnn` and any other client behave alike. */
#include "core/fileio.h"
#include "gpu/gpu.h"
#include "plan/fingerprint.h"
#include "plan/plan.h"
#include "plan/tune.h"

#include <math.h>

int xdnn_device_count(char *why, size_t len)
{
    char none[8];
    return why && len ? gpu_device_count(why, len) : gpu_device_count(none, sizeof none);
}

xdnn_status xdnn_device_fingerprint(xdnn_backend b, char *buf, size_t len)
{
    if (!buf || !len)
        return XDNN_ERR_USAGE;
    if (b == XDNN_BACKEND_AUTO)
        b = xdnn_backend_available(XDNN_BACKEND_CUDA, NULL, 0) ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU;
    return fingerprint_device(b == XDNN_BACKEND_CUDA, buf, len);
}

void xdnn_engines_print(FILE *f)
{
    if (f)
        gpu_print_engines(f);
}

char *xdnn_engines_json(void) { return gpu_engines_json(); }

xdnn_status xdnn_graph_print_partitions_dot(const xdnn_graph_t *g, FILE *f, xdnn_diags_t *diags)
{
    return g && f ? gpu_print_partitions_dot(g, f, diags) : XDNN_ERR_USAGE;
}

void xdnn_release_caches(void) { gpu_release_caches(); }

bool xdnn_cache_dir(char *buf, size_t len) { return buf && len && cache_dir(buf, len); }

xdnn_status xdnn_tune_cache_list(FILE *f, bool verbose, bool json, xdnn_diags_t *diags)
{
    return f ? tune_cache_list(f, verbose, json, diags) : XDNN_ERR_USAGE;
}

xdnn_status xdnn_tune_cache_clear(int *files, int *entries, xdnn_diags_t *diags)
{
    int nf = 0, ne = 0;
    xdnn_status s = tune_cache_clear(&nf, &ne, diags);
    if (files)
        *files = nf;
    if (entries)
        *entries = ne;
    return s;
}

xdnn_status xdnn_file_read(const char *path, char **data, size_t *len, xdnn_diags_t *diags)
{
    if (data)
        *data = NULL;
    return path && data && len ? file_read_all(path, data, len, diags) : XDNN_ERR_USAGE;
}

xdnn_status xdnn_file_write_atomic(const char *path, const void *data, size_t len, xdnn_diags_t *diags)
{
    return path && (data || !len) ? file_write_atomic(path, data, len, diags) : XDNN_ERR_USAGE;
}

void xdnn_remove_temps_on_signals(void) { file_remove_temps_on_signals(); }

_Static_assert(XDNN_FINGERPRINT_MAX == FINGERPRINT_MAX, "xdnn.h promises buffers that hold any fingerprint");

void xdnn_time_stats_of(double *ms, size_t n, xdnn_time_stats *out)
{
    if (!out)
        return;
    int k = ms ? (int)n : 0;
    plan_time_stats(ms, k, &out->median_ms, &out->min_ms, &out->max_ms, &out->p90_ms); /* sorts ms */
    out->mean_ms = out->stddev_ms = out->p95_ms = out->p99_ms = 0;
    if (k <= 0)
        return;
    double sum = 0, dev2 = 0;
    for (int i = 0; i < k; i++)
        sum += ms[i];
    out->mean_ms = sum / k;
    for (int i = 0; i < k; i++)
        dev2 += (ms[i] - out->mean_ms) * (ms[i] - out->mean_ms);
    out->stddev_ms = k > 1 ? sqrt(dev2 / (k - 1)) : 0;
    /* nearest rank, as p90: index ceil(p * k) - 1 of the sorted times */
    out->p95_ms = ms[(19 * k + 19) / 20 - 1];
    out->p99_ms = ms[(99 * k + 99) / 100 - 1];
}

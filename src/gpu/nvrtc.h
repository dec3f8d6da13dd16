/* nvrtc.h — run-time compilation of generated kernels with NVRTC, loaded with
 * cudaLibraryLoadData, cached in memory (per process) and on disk
 * ($XDNN_CACHE_DIR, default ~/.cache/xdnn; set it to "off" to disable) under a
 * 64-bit hash of the source, the target arch, the options and the NVRTC
 * version.  The disk cache stores the cubin. */
#ifndef XDNN_GPU_NVRTC_H
#define XDNN_GPU_NVRTC_H

#include "gpu/device.h"

#include <stdint.h>

typedef struct gpu_kernel {
    cudaLibrary_t lib;     /* owned by the cache */
    cudaKernel_t fn;
} gpu_kernel;

typedef struct gpu_compile_stats {
    double compile_ms;     /* NVRTC time spent (0 on a cache hit) */
    int compiled, mem_hits, disk_hits;
} gpu_compile_stats;

/* The cache key (exposed for unit tests): FNV-1a 64 over every part. */
uint64_t gpu_nvrtc_key(const char *src, const char *arch, const char *const *opts, int nopts,
                       int nvrtc_major, int nvrtc_minor);
/* Compile (or fetch) `src` for dev's arch and get kernel `name`.  A compile
 * error reports the NVRTC log and the first lines of the source. */
xdnn_status gpu_nvrtc_get(const gpu_device *dev, const char *src, const char *name, gpu_kernel *out,
                          gpu_compile_stats *stats, xdnn_diags_t *d);
/* Compile only (no device needed): checks generated source in CPU CI.
 * `arch` is e.g. "sm_90". */
xdnn_status gpu_nvrtc_check(const char *src, const char *name, const char *arch, xdnn_diags_t *d);
/* Unload every cached library (end of process or tests). */
void gpu_nvrtc_cache_clear(void);

/* Carrying compiled kernels in a plan (plan_hooks.c).  A module is named by
 * its cache key as on disk: "<16 hex digits>.cubin" (or ".ptx"). */
typedef struct gpu_nvrtc_module {
    char name[32];
    const void *code;      /* borrowed from the cache */
    size_t len;
} gpu_nvrtc_module;
/* Start a new use period; returns its mark. */
unsigned gpu_nvrtc_use_mark(void);
/* The modules fetched (compiled, loaded or hit) since `mark`: writes up to
 * max, returns how many there are. */
int gpu_nvrtc_used_since(unsigned mark, gpu_nvrtc_module *out, int max);
/* Load a module under its name so gpu_nvrtc_get finds it without compiling;
 * a malformed name or a module the device rejects is an error. */
xdnn_status gpu_nvrtc_preload(const char *name, const void *code, size_t len, xdnn_diags_t *d);

#endif

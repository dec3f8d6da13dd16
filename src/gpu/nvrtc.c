/* nvrtc.c — compiling generated CUDA C at run time, with a memory and a disk
 * cache (see nvrtc.h).  The arch is the device's own (sm_90 on Hopper) when
 * this NVRTC knows it; otherwise PTX for the newest virtual arch it knows,
 * which the driver compiles on load. */
#include "gpu/nvrtc.h"

#include "core/fileio.h"
#include "gpu/dl.h"
#include "gpu/kcache_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct cache_entry {
    uint64_t key;
    cudaLibrary_t lib;
    struct cache_entry *next;
    /* kept so a plan can carry it (plan_hooks.c): the cubin or PTX bytes */
    char *code;
    size_t len;
    bool cubin;
    unsigned last_use;   /* g_use_mark when it was last fetched */
} cache_entry;

static cache_entry *g_cache;
static unsigned g_use_mark;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    /* A separator so ("ab","c") and ("a","bc") differ. */
    h ^= 0xff;
    h *= 1099511628211ull;
    return h;
}

uint64_t gpu_nvrtc_key(const char *src, const char *arch, const char *const *opts, int nopts,
                       int nvrtc_major, int nvrtc_minor)
{
    uint64_t h = 14695981039346656037ull;
    h = fnv(h, src, strlen(src));
    h = fnv(h, arch, strlen(arch));
    for (int i = 0; i < nopts; i++)
        h = fnv(h, opts[i], strlen(opts[i]));
    int v[2] = {nvrtc_major, nvrtc_minor};
    return fnv(h, v, sizeof v);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* "sm_90" when NVRTC supports 90, else "compute_<newest>" (PTX). */
static void pick_arch(const gpu_device *dev, char *arch, size_t len, bool *cubin)
{
    int want = dev->cc_major * 10 + dev->cc_minor, n = 0, best = 0;
    *cubin = false;
    if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0 && n < 256) {
        int archs[256];
        if (nvrtcGetSupportedArchs(archs) == NVRTC_SUCCESS)
            for (int i = 0; i < n; i++) {
                if (archs[i] == want)
                    *cubin = true;
                if (archs[i] <= want && archs[i] > best)
                    best = archs[i];
            }
    }
    if (*cubin)
        snprintf(arch, len, "sm_%d", want);
    else
        snprintf(arch, len, "compute_%d", best ? best : want);
}

static xdnn_status compile(const char *src, const char *name, const char *const *opts, int nopts,
                           bool cubin, char **code, size_t *code_len, xdnn_diags_t *d)
{
    nvrtcProgram prog;
    NVRTC_TRY(nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL));
    nvrtcResult r = nvrtcCompileProgram(prog, nopts, opts);
    if (getenv("XDNN_DUMP_SRC"))
        fprintf(stderr, "---- %s\n%s\n", name, src);
    if (r != NVRTC_SUCCESS) {
        size_t loglen = 0;
        char *log = NULL;
        if (nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && (log = malloc(loglen + 1)))
            if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
                log[0] = '\0';
        diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "NVRTC could not compile generated kernel '%s': %s\n%s", name,
                   nvrtcGetErrorString(r), log ? log : "(no log)");
        diag_note(d, xloc_none(), "generated source of '%s':\n%s", name, src);
        free(log);
        nvrtcDestroyProgram(&prog);
        return XDNN_ERR_DEVICE;
    }
    size_t n = 0;
    xdnn_status st = gpu_check_nvrtc(cubin ? nvrtcGetCUBINSize(prog, &n) : nvrtcGetPTXSize(prog, &n),
                                     "nvrtcGetCUBINSize/PTXSize", __FILE__, __LINE__, d);
    if (st == XDNN_OK) {
        *code = malloc(n ? n : 1);
        *code_len = n;
        if (!*code)
            st = XDNN_ERR_NOMEM;
        else
            st = gpu_check_nvrtc(cubin ? nvrtcGetCUBIN(prog, *code) : nvrtcGetPTX(prog, *code),
                                 "nvrtcGetCUBIN/PTX", __FILE__, __LINE__, d);
    }
    nvrtcDestroyProgram(&prog);
    return st;
}

xdnn_status gpu_nvrtc_get(const gpu_device *dev, const char *src, const char *name, gpu_kernel *out,
                          gpu_compile_stats *stats, xdnn_diags_t *d)
{
    /* NVRTC is needed even on a cache hit: the arch and the key depend on it. */
    xdnn_status dl = gpu_dl_require(GPU_DL_NVRTC, d);
    if (dl != XDNN_OK)
        return dl;
    char arch[32], archopt[64];
    bool cubin;
    pick_arch(dev, arch, sizeof arch, &cubin);
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    const char *opts[] = {archopt, "--std=c++17", "-lineinfo"};
    int nopts = 2; /* -lineinfo only under XDNN_LINEINFO (sanitizer runs) */
    if (getenv("XDNN_LINEINFO"))
        nopts = 3;
    int maj = 0, min = 0;
    nvrtcVersion(&maj, &min);
    uint64_t key = gpu_nvrtc_key(src, arch, opts, nopts, maj, min);

    cudaLibrary_t lib = NULL;
    for (cache_entry *e = g_cache; e; e = e->next)
        if (e->key == key) {
            lib = e->lib;
            e->last_use = g_use_mark;
            stats->mem_hits++;
            break;
        }
    if (!lib) {
        char dir[4096], path[4096 + 32];
        bool use_disk = cache_dir(dir, sizeof dir);
        snprintf(path, sizeof path, "%s/%016" PRIx64 ".%s", dir, key, cubin ? "cubin" : "ptx");
        size_t len = 0;
        char *code = NULL;
        if (use_disk && kcache_read(path, key, &code, &len)) {
            stats->disk_hits++;
        } else {
            double t0 = now_ms();
            xdnn_status st = compile(src, name, opts, nopts, cubin, &code, &len, d);
            stats->compile_ms += now_ms() - t0;
            stats->compiled++;
            if (st != XDNN_OK)
                return st;
            if (use_disk)
                (void)kcache_write(dir, path, key, code, len);
        }
        cudaError_t e = cudaLibraryLoadData(&lib, code, NULL, NULL, 0, NULL, NULL, 0);
        if (e != cudaSuccess)
            free(code);
        CUDA_TRY(e);
        cache_entry *ce = malloc(sizeof *ce);
        if (!ce) {
            free(code);
            cudaLibraryUnload(lib);
            return XDNN_ERR_NOMEM;
        }
        *ce = (cache_entry){key, lib, g_cache, code, len, cubin, g_use_mark};
        g_cache = ce;
    }
    out->lib = lib;
    CUDA_TRY(cudaLibraryGetKernel(&out->fn, lib, name));
    return XDNN_OK;
}

xdnn_status gpu_nvrtc_check(const char *src, const char *name, const char *arch, xdnn_diags_t *d)
{
    xdnn_status dl = gpu_dl_require(GPU_DL_NVRTC, d);
    if (dl != XDNN_OK)
        return dl;
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    const char *opts[] = {archopt, "--std=c++17"};
    char *code = NULL;
    size_t len = 0;
    xdnn_status st = compile(src, name, opts, 2, strncmp(arch, "sm_", 3) == 0, &code, &len, d);
    free(code);
    return st;
}

void gpu_nvrtc_cache_clear(void)
{
    while (g_cache) {
        cache_entry *e = g_cache;
        g_cache = e->next;
        cudaLibraryUnload(e->lib);
        free(e->code);
        free(e);
    }
}

unsigned gpu_nvrtc_use_mark(void) { return ++g_use_mark; }

static void entry_name(const cache_entry *e, char *buf, size_t len)
{
    snprintf(buf, len, "%016" PRIx64 ".%s", e->key, e->cubin ? "cubin" : "ptx");
}

int gpu_nvrtc_used_since(unsigned mark, gpu_nvrtc_module *out, int max)
{
    int n = 0;
    for (cache_entry *e = g_cache; e; e = e->next)
        if (e->last_use >= mark && e->code) {
            if (n < max) {
                entry_name(e, out[n].name, sizeof out[n].name);
                out[n].code = e->code;
                out[n].len = e->len;
            }
            n++;
        }
    return n;
}

xdnn_status gpu_nvrtc_preload(const char *name, const void *code, size_t len, xdnn_diags_t *d)
{
    /* the name is the one gpu_nvrtc_used_since gave: 16 hex digits of the key, then .cubin or .ptx */
    char hex[17], ext[8];
    int used = 0;
    if (strlen(name) < 17 || sscanf(name, "%16[0-9a-f].%7[a-z]%n", hex, ext, &used) != 2 || name[used] != '\0' ||
        strlen(hex) != 16 || (strcmp(ext, "cubin") != 0 && strcmp(ext, "ptx") != 0)) {
        diag_error(d, XDNN_ERR_IO, xloc_none(), "compiled GPU module '%s': expected a name like "
                   "0123456789abcdef.cubin (16 hex digits of the kernel-cache key, then .cubin or .ptx)", name);
        return XDNN_ERR_IO;
    }
    uint64_t key = strtoull(hex, NULL, 16);
    for (cache_entry *e = g_cache; e; e = e->next)
        if (e->key == key)
            return XDNN_OK; /* already loaded */
    bool cubin = strcmp(ext, "cubin") == 0;
    if (len == 0 || (!cubin && memchr(code, '\0', len) == NULL)) {
        diag_error(d, XDNN_ERR_IO, xloc_none(), "compiled GPU module '%s': %s", name,
                   len == 0 ? "empty" : "PTX text is not NUL-terminated");
        return XDNN_ERR_IO;
    }
    char *copy = malloc(len);
    cache_entry *ce = malloc(sizeof *ce);
    if (!copy || !ce) {
        free(copy);
        free(ce);
        return XDNN_ERR_NOMEM;
    }
    memcpy(copy, code, len);
    cudaLibrary_t lib = NULL;
    cudaError_t e = cudaLibraryLoadData(&lib, copy, NULL, NULL, 0, NULL, NULL, 0);
    if (e != cudaSuccess) {
        free(copy);
        free(ce);
        diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "compiled GPU module '%s' (%zu bytes) does not load on this "
                   "device: %s: %s (rebuild the plan with --replan)", name, len, cudaGetErrorName(e),
                   cudaGetErrorString(e));
        return XDNN_ERR_DEVICE;
    }
    *ce = (cache_entry){key, lib, g_cache, copy, len, cubin, g_use_mark};
    g_cache = ce;
    return XDNN_OK;
}

/* dl.c — the cuBLASLt / cuBLAS / NVRTC entry points xdnn calls, defined here
 * under their own names as forwarders that dlopen the library on first use
 * (see dl.h for why and for the search order). */
#include "gpu/dl.h"

#include "gpu/cuda_sys.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a forwarder returns when its library cannot be loaded. */
#define LT_MISSING CUBLAS_STATUS_NOT_INITIALIZED
#define RTC_MISSING NVRTC_ERROR_INTERNAL_ERROR
#define NAME_MISSING "(library not loaded)"

/* Every entry point the GPU code calls, one line each:
 *   X(library, return type, name, (parameters), (arguments), value when missing)
 * The parameters must match NVIDIA's prototype (the compiler checks: the
 * headers declare the same names). */
#define GPU_DL_FUNCS(X)                                                                                           \
    X(CUBLASLT, cublasStatus_t, cublasLtCreate, (cublasLtHandle_t * handle), (handle), LT_MISSING)                \
    X(CUBLASLT, cublasStatus_t, cublasLtDestroy, (cublasLtHandle_t handle), (handle), LT_MISSING)                 \
    X(CUBLASLT, const char *, cublasLtGetStatusName, (cublasStatus_t status), (status), NAME_MISSING)             \
    X(CUBLASLT, const char *, cublasLtGetStatusString, (cublasStatus_t status), (status), NAME_MISSING)           \
    X(CUBLASLT, cublasStatus_t, cublasLtMatrixLayoutCreate,                                                       \
      (cublasLtMatrixLayout_t * layout, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld),             \
      (layout, type, rows, cols, ld), LT_MISSING)                                                                 \
    X(CUBLASLT, cublasStatus_t, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout),           \
      LT_MISSING)                                                                                                 \
    X(CUBLASLT, cublasStatus_t, cublasLtMatrixLayoutSetAttribute,                                                 \
      (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, const void *buf, size_t size),        \
      (layout, attr, buf, size), LT_MISSING)                                                                      \
    X(CUBLASLT, cublasStatus_t, cublasLtMatmulDescCreate,                                                         \
      (cublasLtMatmulDesc_t * desc, cublasComputeType_t compute, cudaDataType_t scale), (desc, compute, scale),   \
      LT_MISSING)                                                                                                 \
    X(CUBLASLT, cublasStatus_t, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc), LT_MISSING)       \
    X(CUBLASLT, cublasStatus_t, cublasLtMatmulDescSetAttribute,                                                   \
      (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void *buf, size_t size),             \
      (desc, attr, buf, size), LT_MISSING)                                                                        \
    X(CUBLASLT, cublasStatus_t, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * pref), (pref),      \
      LT_MISSING)                                                                                                 \
    X(CUBLASLT, cublasStatus_t, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t pref), (pref),       \
      LT_MISSING)                                                                                                 \
    X(CUBLASLT, cublasStatus_t, cublasLtMatmulPreferenceSetAttribute,                                             \
      (cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void *buf, size_t size), \
      (pref, attr, buf, size), LT_MISSING)                                                                        \
    X(CUBLASLT, cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,                                                   \
      (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,    \
       cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,        \
       cublasLtMatmulHeuristicResult_t results[], int *returned),                                                 \
      (handle, desc, a, b, c, d, pref, requested, results, returned), LT_MISSING)                                 \
    X(CUBLASLT, cublasStatus_t, cublasLtMatmulAlgoConfigGetAttribute,                                             \
      (const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr, void *buf, size_t size,       \
       size_t *written),                                                                                          \
      (algo, attr, buf, size, written), LT_MISSING)                                                               \
    X(CUBLASLT, cublasStatus_t, cublasLtMatmul,                                                                   \
      (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,                      \
       cublasLtMatrixLayout_t a, const void *B, cublasLtMatrixLayout_t b, const void *beta, const void *C,        \
       cublasLtMatrixLayout_t c, void *D, cublasLtMatrixLayout_t d, const cublasLtMatmulAlgo_t *algo,             \
       void *workspace, size_t workspace_bytes, cudaStream_t stream),                                             \
      (handle, desc, alpha, A, a, B, b, beta, C, c, D, d, algo, workspace, workspace_bytes, stream), LT_MISSING)  \
    X(NVRTC, const char *, nvrtcGetErrorString, (nvrtcResult result), (result), NAME_MISSING)                     \
    X(NVRTC, nvrtcResult, nvrtcVersion, (int *major, int *minor), (major, minor), RTC_MISSING)                    \
    X(NVRTC, nvrtcResult, nvrtcGetNumSupportedArchs, (int *n), (n), RTC_MISSING)                                  \
    X(NVRTC, nvrtcResult, nvrtcGetSupportedArchs, (int *archs), (archs), RTC_MISSING)                             \
    X(NVRTC, nvrtcResult, nvrtcCreateProgram,                                                                     \
      (nvrtcProgram * prog, const char *src, const char *name, int nheaders, const char *const *headers,          \
       const char *const *include_names),                                                                         \
      (prog, src, name, nheaders, headers, include_names), RTC_MISSING)                                           \
    X(NVRTC, nvrtcResult, nvrtcCompileProgram, (nvrtcProgram prog, int nopts, const char *const *opts),           \
      (prog, nopts, opts), RTC_MISSING)                                                                           \
    X(NVRTC, nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram prog, size_t *size), (prog, size), RTC_MISSING)   \
    X(NVRTC, nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram prog, char *text), (prog, text), RTC_MISSING)         \
    X(NVRTC, nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram * prog), (prog), RTC_MISSING)                        \
    X(NVRTC, nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram prog, size_t *size), (prog, size), RTC_MISSING)        \
    X(NVRTC, nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram prog, char *cubin), (prog, cubin), RTC_MISSING)            \
    X(NVRTC, nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram prog, size_t *size), (prog, size), RTC_MISSING)          \
    X(NVRTC, nvrtcResult, nvrtcGetPTX, (nvrtcProgram prog, char *ptx), (prog, ptx), RTC_MISSING)

/* The function table: SYM_<name> indexes the resolved addresses. */
enum {
#define X(lib, ret, name, params, args, missing) SYM_##name,
    GPU_DL_FUNCS(X)
#undef X
    NSYMS
};

static const struct {
    gpu_dl_lib lib;
    const char *name;
} sym_info[NSYMS] = {
#define X(lib, ret, name, params, args, missing) {GPU_DL_##lib, #name},
    GPU_DL_FUNCS(X)
#undef X
};

static void *sym_addr[NSYMS];

/* The libraries: file-name stem and what the user would call it. */
static const char *const lib_base[GPU_DL_NLIBS] = {"libcublasLt", "libcublas", "libnvrtc"};
_Static_assert(sizeof lib_base / sizeof lib_base[0] == GPU_DL_NLIBS, "one stem per gpu_dl_lib");

/* The sonames follow the toolkit's major version (libnvrtc.so.13 for 13.x). */
#define CUDA_MAJOR (CUDART_VERSION / 1000)

typedef struct lib_state {
    void *handle;     /* NULL until loaded, or when loading failed */
    char path[512];   /* the file it came from */
    char error[1024]; /* why it failed */
} lib_state;

static lib_state libs[GPU_DL_NLIBS];
static pthread_once_t once[GPU_DL_NLIBS] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
_Static_assert(GPU_DL_NLIBS == 3, "one pthread_once_t per gpu_dl_lib");

/* dlerror() text without a leading "<name>: " (the caller names the file). */
static const char *strip_name(const char *msg, const char *name)
{
    size_t n = strlen(name);
    if (msg && strncmp(msg, name, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
        return msg + n + 2;
    return msg ? msg : "unknown dlopen error";
}

void *gpu_dl_open(const char *base, int major, char *err, size_t len)
{
    const char *cuda_home = getenv("CUDA_HOME");
    const char *dirs[3] = {"", NULL, "/usr/local/cuda/lib64/"};
    char home_dir[512];
    if (cuda_home && *cuda_home) {
        snprintf(home_dir, sizeof home_dir, "%s/lib64/", cuda_home);
        dirs[1] = home_dir;
    }
    char versioned[128], first_error[1024] = "";
    snprintf(versioned, sizeof versioned, "%s.so.%d", base, major);
    bool real_error = false; /* a file was there but would not load: say that, not "not found" */
    for (int unversioned = 0; unversioned < 2; unversioned++)
        for (int i = 0; i < 3; i++) {
            if (!dirs[i])
                continue;
            char path[700];
            snprintf(path, sizeof path, "%s%s%s", dirs[i], unversioned ? base : versioned, unversioned ? ".so" : "");
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (h)
                return h;
            const char *why = strip_name(dlerror(), path);
            bool not_found = strstr(why, "No such file") != NULL;
            if (!first_error[0] || (!not_found && !real_error)) {
                snprintf(first_error, sizeof first_error, "%s%s%s", not_found ? "" : path,
                         not_found ? "" : ": ", why);
                real_error = !not_found;
            }
        }
    snprintf(err, len,
             "cannot load %s: %s; install the CUDA toolkit or set LD_LIBRARY_PATH "
             "(also tried %s.so, $CUDA_HOME/lib64 and /usr/local/cuda/lib64)",
             versioned, first_error, base);
    return NULL;
}

/* NVRTC dlopens libnvrtc-builtins.so.<major>.<minor> itself, by bare name, so
 * it is found only through LD_LIBRARY_PATH or the ld.so cache.  Preload it
 * from libnvrtc's own folder: dlopen then matches it by soname. */
static void preload_nvrtc_builtins(const char *nvrtc_path)
{
    int major = 0, minor = 0;
    nvrtcResult (*version)(int *, int *) = (nvrtcResult(*)(int *, int *))sym_addr[SYM_nvrtcVersion];
    const char *slash = strrchr(nvrtc_path, '/');
    if (!slash || version(&major, &minor) != NVRTC_SUCCESS)
        return;
    char path[700];
    snprintf(path, sizeof path, "%.*s/libnvrtc-builtins.so.%d.%d", (int)(slash - nvrtc_path), nvrtc_path, major,
             minor);
    (void)dlopen(path, RTLD_NOW | RTLD_LOCAL); /* kept for the process's life; on failure NVRTC says why */
}

static void load(gpu_dl_lib lib)
{
    lib_state *s = &libs[lib];
    void *h = gpu_dl_open(lib_base[lib], CUDA_MAJOR, s->error, sizeof s->error);
    if (!h)
        return;
    for (int i = 0; i < NSYMS; i++) {
        if (sym_info[i].lib != lib)
            continue;
        (void)dlerror();
        sym_addr[i] = dlsym(h, sym_info[i].name);
        if (!sym_addr[i]) {
            const char *why = dlerror();
            snprintf(s->error, sizeof s->error,
                     "%s.so.%d has no symbol %s (%s); install a CUDA %d toolkit or set LD_LIBRARY_PATH",
                     lib_base[lib], CUDA_MAJOR, sym_info[i].name, why ? why : "dlsym returned NULL", CUDA_MAJOR);
            for (int j = 0; j < NSYMS; j++)
                if (sym_info[j].lib == lib)
                    sym_addr[j] = NULL;
            dlclose(h);
            return;
        }
    }
    /* The file actually opened (dlopen may have found a bare name anywhere). */
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
        snprintf(s->path, sizeof s->path, "%s", lm->l_name);
    if (lib == GPU_DL_NVRTC && s->path[0])
        preload_nvrtc_builtins(s->path);
    s->handle = h;
}

static void load_cublaslt(void) { load(GPU_DL_CUBLASLT); }
static void load_cublas(void) { load(GPU_DL_CUBLAS); }
static void load_nvrtc(void) { load(GPU_DL_NVRTC); }
static void (*const loader[GPU_DL_NLIBS])(void) = {load_cublaslt, load_cublas, load_nvrtc};

bool gpu_dl_available(gpu_dl_lib lib)
{
    /* pthread_once also orders the loader's writes before our reads. */
    return pthread_once(&once[lib], loader[lib]) == 0 && libs[lib].handle != NULL;
}

xdnn_status gpu_dl_require(gpu_dl_lib lib, xdnn_diags_t *d)
{
    if (gpu_dl_available(lib))
        return XDNN_OK;
    diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "%s", libs[lib].error);
    return XDNN_ERR_DEVICE;
}

const char *gpu_dl_error(gpu_dl_lib lib) { return libs[lib].error; }

const char *gpu_dl_path(gpu_dl_lib lib) { return libs[lib].handle ? libs[lib].path : NULL; }

/* The forwarders, under the libraries' own names. */
#define X(lib, ret, name, params, args, missing)                                                                  \
    ret name params                                                                                               \
    {                                                                                                             \
        if (!gpu_dl_available(GPU_DL_##lib))                                                                      \
            return missing;                                                                                       \
        return ((ret(*) params)sym_addr[SYM_##name]) args;                                                        \
    }
GPU_DL_FUNCS(X)
#undef X

/* test_gpu_dl.c — the lazy loader of cuBLASLt / cuBLAS / NVRTC (src/gpu/dl.h):
 * nothing of them is mapped before the first call; the search order
 * (versioned name, $CUDA_HOME/lib64, unversioned fallback); the "cannot load"
 * message; several threads racing on the first call; and the real libraries
 * answering through the forwarders.  Needs the toolkit, not a GPU. */
#include <stdio.h>
#include <string.h>

#if XDNN_HAVE_CUDA
#include "test_util.h"

#include "gpu/cuda_sys.h"
#include "gpu/dl.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is a file whose name contains `needle` mapped into this process? */
static bool mapped(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    bool found = false;
    while (f && fgets(line, sizeof line, f))
        found = found || strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return found;
}

static void test_nothing_loaded_at_start(void)
{
    CHECK(!mapped("libcublasLt"));
    CHECK(!mapped("libnvrtc"));
    CHECK(gpu_dl_path(GPU_DL_CUBLASLT) == NULL);
}

static void *first_call(void *out)
{
    *(const char **)out = cublasLtGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED);
    return NULL;
}

/* Four threads make the very first cuBLASLt call at once: one load, four right answers. */
static void test_threads_race_on_first_call(void)
{
    pthread_t th[4];
    const char *name[4] = {0};
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&th[i], NULL, first_call, &name[i]) == 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(name[i] && strcmp(name[i], "CUBLAS_STATUS_NOT_SUPPORTED") == 0);
    }
    CHECK(mapped("libcublasLt.so.13"));
    CHECK(!mapped("libnvrtc")); /* one library's first call loads only that one */
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

static void test_real_libraries(void)
{
    xdnn_diags_t *d = xdnn_diags_create();
    CHECK(gpu_dl_require(GPU_DL_NVRTC, d) == XDNN_OK);
    CHECK(gpu_dl_require(GPU_DL_CUBLASLT, d) == XDNN_OK);
    CHECK(gpu_dl_require(GPU_DL_CUBLAS, d) == XDNN_OK);
    CHECK(xdnn_diags_count(d) == 0);
    CHECK(gpu_dl_path(GPU_DL_NVRTC) && ends_with(gpu_dl_path(GPU_DL_NVRTC), "libnvrtc.so.13"));
    CHECK(gpu_dl_path(GPU_DL_CUBLAS) && ends_with(gpu_dl_path(GPU_DL_CUBLAS), "libcublas.so.13"));
    CHECK(strcmp(gpu_dl_error(GPU_DL_NVRTC), "") == 0);
    int major = 0, minor = -1;
    CHECK(nvrtcVersion(&major, &minor) == NVRTC_SUCCESS);
    CHECK(major == CUDART_VERSION / 1000 && minor >= 0);
    CHECK(strcmp(nvrtcGetErrorString(NVRTC_ERROR_INVALID_INPUT), "NVRTC_ERROR_INVALID_INPUT") == 0);
    CHECK(mapped("libnvrtc-builtins")); /* preloaded from libnvrtc's folder */

    /* A full round trip: compile a kernel and get a non-empty PTX. */
    nvrtcProgram prog;
    CHECK(nvrtcCreateProgram(&prog, "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }", "k.cu", 0, NULL,
                             NULL) == NVRTC_SUCCESS);
    const char *opts[] = {"--gpu-architecture=compute_80"};
    CHECK(nvrtcCompileProgram(prog, 1, opts) == NVRTC_SUCCESS);
    size_t n = 0;
    CHECK(nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS && n > 100);
    char *ptx = malloc(n);
    CHECK(ptx && nvrtcGetPTX(prog, ptx) == NVRTC_SUCCESS && strstr(ptx, ".entry k") != NULL);
    free(ptx);
    CHECK(nvrtcDestroyProgram(&prog) == NVRTC_SUCCESS);

    /* cuBLASLt calls that need no GPU (cublasLtCreate does). */
    cublasLtMatrixLayout_t layout = NULL;
    int32_t batch = 3;
    CHECK(cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, 4, 5, 4) == CUBLAS_STATUS_SUCCESS && layout);
    CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch) ==
          CUBLAS_STATUS_SUCCESS);
    CHECK(cublasLtMatrixLayoutDestroy(layout) == CUBLAS_STATUS_SUCCESS);
    xdnn_diags_destroy(d);
}

/* The message a user sees when a library is nowhere. */
static void test_missing_library_message(void)
{
    char err[1024] = "";
    CHECK(gpu_dl_open("libxdnn_no_such_lib", 13, err, sizeof err) == NULL);
    CHECK(strncmp(err, "cannot load libxdnn_no_such_lib.so.13: ", 39) == 0);
    CHECK(strstr(err, "No such file") != NULL);
    CHECK(strstr(err, "install the CUDA toolkit or set LD_LIBRARY_PATH") != NULL);
}

/* $CUDA_HOME/lib64 is searched, versioned names first, then unversioned ones.
 * The stand-in library is a link to libm (already mapped, so dlopen reuses it). */
static void test_search_order(void)
{
    void *m = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    struct link_map *lm = NULL;
    CHECK(m && dlinfo(m, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name[0] == '/');
    if (!lm)
        return;
    char dir[] = "/tmp/xdnn_test_dl_XXXXXX", lib64[64], versioned[128], unversioned[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(lib64, sizeof lib64, "%s/lib64", dir);
    CHECK(mkdir(lib64, 0755) == 0);
    snprintf(versioned, sizeof versioned, "%s/libxdnn_dl_a.so.13", lib64);
    snprintf(unversioned, sizeof unversioned, "%s/libxdnn_dl_b.so", lib64);
    CHECK(symlink(lm->l_name, versioned) == 0 && symlink(lm->l_name, unversioned) == 0);

    char err[1024] = "";
    CHECK(gpu_dl_open("libxdnn_dl_a", 13, err, sizeof err) == NULL); /* not on any path yet */
    CHECK(setenv("CUDA_HOME", dir, 1) == 0);
    void *a = gpu_dl_open("libxdnn_dl_a", 13, err, sizeof err);
    void *b = gpu_dl_open("libxdnn_dl_b", 13, err, sizeof err);
    CHECK(a == m); /* the same object: found through $CUDA_HOME/lib64 */
    CHECK(b == m); /* libxdnn_dl_b.so.13 is nowhere: the unversioned name */
    CHECK(gpu_dl_open("libxdnn_dl_a", 12, err, sizeof err) == NULL); /* a wrong major is not taken */
    unsetenv("CUDA_HOME");
    if (a)
        dlclose(a);
    if (b)
        dlclose(b);
    dlclose(m);
    unlink(versioned);
    unlink(unversioned);
    rmdir(lib64);
    rmdir(dir);
}

int main(void)
{
    test_nothing_loaded_at_start();
    test_threads_race_on_first_call();
    test_real_libraries();
    test_missing_library_message();
    test_search_order();
    return test_summary("test_gpu_dl");
}
#else
int main(void)
{
    printf("test_gpu_dl: skipped (built without CUDA)\n");
    return 0;
}
#endif

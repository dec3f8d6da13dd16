/* dl.h — cuBLASLt, cuBLAS and NVRTC, loaded with dlopen on first use.
 *
 * Why: linking them (about 0.7 GB of shared libraries) made every xdnn
 * invocation, even `xdnn --version` on a machine without a GPU, spend most of
 * a second in the dynamic loader.  cudart stays statically linked.
 *
 * How: dl.c defines, under NVIDIA's own names, each entry point the GPU code
 * calls (cublasLtMatmul, nvrtcCompileProgram, ...).  Each definition loads its
 * library once per process (pthread_once, RTLD_NOW | RTLD_LOCAL) and calls
 * through the address dlsym resolved.  So call sites are plain library calls
 * and the compiler checks every forwarder against NVIDIA's prototype.  When a
 * library or one of its symbols is missing, the call returns the library's
 * failure code (CUBLAS_STATUS_NOT_INITIALIZED, NVRTC_ERROR_INTERNAL_ERROR;
 * the status-string functions return a placeholder) and gpu_check_cublas /
 * gpu_check_nvrtc (device.h) report gpu_dl_error()'s text instead of the code:
 *   cannot load libnvrtc.so.13: <dlerror>; install the CUDA toolkit or set LD_LIBRARY_PATH
 *
 * Search order for library L (major M = the toolkit's CUDA major, 13):
 *   L.so.M as dlopen finds it (LD_LIBRARY_PATH, the RUNPATH the Makefile gives
 *   our binaries, the ld.so cache), then $CUDA_HOME/lib64/L.so.M and
 *   /usr/local/cuda/lib64/L.so.M, then the same three for the unversioned L.so.
 *   Versioned names come first everywhere: an unversioned one may be another
 *   toolkit's.
 *
 * A new entry point is one line in dl.c's GPU_DL_FUNCS list; without it the
 * link fails with "undefined reference to `cublasLt...'" (the libraries are
 * no longer on the link line).  /work/notes/dl-for-engines.md says more. */
#ifndef XDNN_GPU_DL_H
#define XDNN_GPU_DL_H

#include "core/diag.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum gpu_dl_lib {
    GPU_DL_CUBLASLT, /* libcublasLt.so.13 */
    GPU_DL_CUBLAS,   /* libcublas.so.13 (no entry point used yet; one X line adds it) */
    GPU_DL_NVRTC,    /* libnvrtc.so.13 (its builtins library is preloaded from the same folder) */
    GPU_DL_NLIBS
} gpu_dl_lib;

/* Load `lib` if not yet tried (once per process; afterwards one atomic load):
 * true when every entry point of it is resolved. */
bool gpu_dl_available(gpu_dl_lib lib);
/* XDNN_OK, or XDNN_ERR_DEVICE with gpu_dl_error(lib) reported. */
xdnn_status gpu_dl_require(gpu_dl_lib lib, xdnn_diags_t *d);
/* Why `lib` could not be loaded ("" when it was, or was not tried yet). */
const char *gpu_dl_error(gpu_dl_lib lib);
/* The file `lib` was loaded from (NULL when it was not). */
const char *gpu_dl_path(gpu_dl_lib lib);

/* The search itself, exposed for unit tests: open `base`.so.`major` (or
 * `base`.so) along the order above.  Returns the handle, or NULL with the
 * "cannot load ..." message in err. */
void *gpu_dl_open(const char *base, int major, char *err, size_t len);

#endif

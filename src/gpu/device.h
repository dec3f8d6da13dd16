/* device.h — the CUDA device as the GPU backend sees it, and the checks that
 * turn every CUDA runtime, cuBLAS(Lt) and NVRTC failure into an xdnn_status
 * plus a diagnostic naming the call and its file:line.  Never aborts. */
#ifndef XDNN_GPU_DEVICE_H
#define XDNN_GPU_DEVICE_H

#include "core/diag.h"

#include "gpu/cuda_sys.h"
#include <stddef.h>

typedef struct gpu_device {
    int ordinal;
    char name[256];
    int sm_count, cc_major, cc_minor;
    size_t mem_total, l2_bytes, smem_optin;
    char arch[16];           /* "sm_90": what NVRTC compiles for */
} gpu_device;

/* Count devices without crashing when there is no driver; false with the
 * reason (the CUDA error's name and text) when none is usable. */
bool gpu_probe(char *why, size_t len);
/* Select device 0 (or `ordinal`) and read its properties. */
xdnn_status gpu_device_open(gpu_device *dev, xdnn_diags_t *d);
xdnn_status gpu_device_open_at(gpu_device *dev, int ordinal, xdnn_diags_t *d);
/* A described GPU ("h100", "h200", "a100"; device_model.c): false when unknown.
 * Its ordinal is -1: nothing can run on it. */
bool gpu_device_model(const char *key, gpu_device *out);
/* "h100, h200, a100" */
void gpu_device_model_names(char *buf, size_t len);
/* The shared memory one block may opt in to: the device's figure, else
 * (a device without it read) the architecture's (sm_90 227 KiB, sm_80 163). */
size_t gpu_smem_per_block(const gpu_device *dev);
/* "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB, L2 50 MiB)" */
void gpu_device_describe(const gpu_device *dev, char *buf, size_t len);

/* Each returns XDNN_OK, or reports "<call> failed: <name>: <text> (file:line)"
 * (for cuBLASLt / NVRTC, when the library could not be loaded, the loader's
 * "cannot load ..." text from dl.h instead of <name>: <text>). */
xdnn_status gpu_check_cuda(cudaError_t e, const char *call, const char *file, int line, xdnn_diags_t *d);
xdnn_status gpu_check_cublas(cublasStatus_t e, const char *call, const char *file, int line, xdnn_diags_t *d);
xdnn_status gpu_check_nvrtc(nvrtcResult e, const char *call, const char *file, int line, xdnn_diags_t *d);

/* Evaluate `call`; on failure report it and `return` its status from the
 * enclosing function (which must have an xdnn_diags_t *d in scope). */
#define CUDA_TRY(call)                                                                      \
    do {                                                                                    \
        xdnn_status st_ = gpu_check_cuda((call), #call, __FILE__, __LINE__, d);             \
        if (st_ != XDNN_OK)                                                                 \
            return st_;                                                                     \
    } while (0)
#define CUBLAS_TRY(call)                                                                    \
    do {                                                                                    \
        xdnn_status st_ = gpu_check_cublas((call), #call, __FILE__, __LINE__, d);           \
        if (st_ != XDNN_OK)                                                                 \
            return st_;                                                                     \
    } while (0)
#define NVRTC_TRY(call)                                                                     \
    do {                                                                                    \
        xdnn_status st_ = gpu_check_nvrtc((call), #call, __FILE__, __LINE__, d);            \
        if (st_ != XDNN_OK)                                                                 \
            return st_;                                                                     \
    } while (0)
/* The same, but jump to `label` after storing the status in `st`. */
#define CUDA_GOTO(call, st, label)                                                          \
    do {                                                                                    \
        if (((st) = gpu_check_cuda((call), #call, __FILE__, __LINE__, d)) != XDNN_OK)       \
            goto label;                                                                     \
    } while (0)

#endif

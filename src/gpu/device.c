/* device.c — device discovery, "no GPU" detection and the error checks shared
 * by every CUDA, cuBLAS(Lt) and NVRTC call (see device.h). */
#include "gpu/device.h"

#include "gpu/dl.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <string.h>

static const char *base_name(const char *file)
{
    const char *s = strrchr(file, '/');
    return s ? s + 1 : file;
}

xdnn_status gpu_check_cuda(cudaError_t e, const char *call, const char *file, int line, xdnn_diags_t *d)
{
    if (e == cudaSuccess)
        return XDNN_OK;
    xdnn_status st = e == cudaErrorMemoryAllocation ? XDNN_ERR_NOMEM : XDNN_ERR_DEVICE;
    diag_error(d, st, xloc_none(), "%s failed: %s: %s (%s:%d)", call, cudaGetErrorName(e),
               cudaGetErrorString(e), base_name(file), line);
    (void)cudaGetLastError(); /* clear a non-sticky error so later calls report their own */
    return st;
}

xdnn_status gpu_check_cublas(cublasStatus_t e, const char *call, const char *file, int line, xdnn_diags_t *d)
{
    if (e == CUBLAS_STATUS_SUCCESS)
        return XDNN_OK;
    if (!gpu_dl_available(GPU_DL_CUBLASLT)) { /* the call never ran: say why */
        diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "%s failed: %s (%s:%d)", call, gpu_dl_error(GPU_DL_CUBLASLT),
                   base_name(file), line);
        return XDNN_ERR_DEVICE;
    }
    xdnn_status st = e == CUBLAS_STATUS_ALLOC_FAILED ? XDNN_ERR_NOMEM
                   : e == CUBLAS_STATUS_NOT_SUPPORTED ? XDNN_ERR_UNSUPPORTED : XDNN_ERR_DEVICE;
    diag_error(d, st, xloc_none(), "%s failed: %s: %s (%s:%d)", call, cublasLtGetStatusName(e),
               cublasLtGetStatusString(e), base_name(file), line);
    return st;
}

xdnn_status gpu_check_nvrtc(nvrtcResult e, const char *call, const char *file, int line, xdnn_diags_t *d)
{
    if (e == NVRTC_SUCCESS)
        return XDNN_OK;
    if (!gpu_dl_available(GPU_DL_NVRTC)) { /* the call never ran: say why */
        diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "%s failed: %s (%s:%d)", call, gpu_dl_error(GPU_DL_NVRTC),
                   base_name(file), line);
        return XDNN_ERR_DEVICE;
    }
    diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "%s failed: %s (%s:%d)", call, nvrtcGetErrorString(e),
               base_name(file), line);
    return XDNN_ERR_DEVICE;
}

bool gpu_probe(char *why, size_t len)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(why, len, "no usable CUDA device: cudaGetDeviceCount failed: %s: %s", cudaGetErrorName(e),
                 cudaGetErrorString(e));
        (void)cudaGetLastError();
        return false;
    }
    if (n == 0) {
        snprintf(why, len, "no CUDA device found (cudaGetDeviceCount returned 0)");
        return false;
    }
    if (why && len)
        why[0] = '\0';
    return true;
}

int gpu_device_count(char *why, size_t len)
{
    int n = 0;
    if (gpu_probe(why, len) && cudaGetDeviceCount(&n) != cudaSuccess)
        n = 0;
    return n;
}

xdnn_status gpu_device_open(gpu_device *dev, xdnn_diags_t *d) { return gpu_device_open_at(dev, 0, d); }

xdnn_status gpu_device_open_at(gpu_device *dev, int ordinal, xdnn_diags_t *d)
{
    memset(dev, 0, sizeof *dev);
    char why[256];
    if (!gpu_probe(why, sizeof why)) {
        diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "%s; use --device cpu", why);
        return XDNN_ERR_DEVICE;
    }
    int count = 0;
    CUDA_TRY(cudaGetDeviceCount(&count));
    if (ordinal < 0 || ordinal >= count) {
        diag_error(d, XDNN_ERR_DEVICE, xloc_none(), "device ordinal %d: this machine has %d CUDA device%s (0..%d)",
                   ordinal, count, count == 1 ? "" : "s", count - 1);
        return XDNN_ERR_DEVICE;
    }
    struct cudaDeviceProp p;
    CUDA_TRY(cudaSetDevice(ordinal));
    CUDA_TRY(cudaGetDeviceProperties(&p, ordinal));
    dev->ordinal = ordinal;
    snprintf(dev->name, sizeof dev->name, "%s", p.name);
    dev->sm_count = p.multiProcessorCount;
    dev->cc_major = p.major;
    dev->cc_minor = p.minor;
    dev->mem_total = p.totalGlobalMem;
    dev->l2_bytes = (size_t)p.l2CacheSize;
    dev->smem_optin = p.sharedMemPerBlockOptin;
    snprintf(dev->arch, sizeof dev->arch, "sm_%d%d", p.major, p.minor);
    return XDNN_OK;
}

size_t gpu_smem_per_block(const gpu_device *dev)
{
    if (dev->smem_optin)
        return dev->smem_optin;
    return dev->cc_major >= 9 ? 232448 : 166912;
}

void gpu_device_describe(const gpu_device *dev, char *buf, size_t len)
{
    snprintf(buf, len, "%s (%s, %d SMs, %.1f GiB, L2 %zu MiB)", dev->name, dev->arch, dev->sm_count,
             (double)dev->mem_total / (1024.0 * 1024.0 * 1024.0), dev->l2_bytes >> 20);
}

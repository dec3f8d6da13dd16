/* cuda_sys.h — the CUDA, cuBLASLt and NVRTC headers, included as system
 * headers so the project's strict warning list does not fire on them (the
 * Makefile passes the toolkit as -I, not -isystem).  cudart is linked
 * statically; cuBLASLt and NVRTC are not linked at all: their entry points are
 * defined in dl.c, which loads the libraries on first use (see dl.h). */
#ifndef XDNN_GPU_CUDA_SYS_H
#define XDNN_GPU_CUDA_SYS_H
#pragma GCC system_header

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#endif

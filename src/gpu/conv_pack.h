/* conv_pack.h — a forward conv run on channels-last, contiguous copies of
 * its x and w with C padded by zero channels to the kernel's 16-byte chunk
 * (the C = 3 stem, odd C, NCHW): the plan of the copies (plain C, the unit
 * test runs it without a GPU) and their launch (kconv_pack_cl,
 * kernels/conv_pack.cu).  Shared by conv_igemm (eng_conv.c) and
 * conv_igemm_wgmma (eng_conv_wgmma.c); each puts the two copies at the start
 * of its workspace, x first. */
#ifndef XDNN_GPU_CONV_PACK_H
#define XDNN_GPU_CONV_PACK_H

#include "gpu/kern_conv.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct gconv_packed {
    bool on;               /* the engine runs on the copies */
    kconv_params k;        /* the problem on the copies: C padded, packed channels-last strides */
    size_t xbytes, wbytes; /* the two copies, each rounded up to 256 bytes */
} gconv_packed;

/* Fill pk for k on copies with C rounded up to a multiple of vec (8 for
 * f16/bf16, 4 for f32: one 16-byte chunk), pk->on set.  False (pk->on
 * clear) when a copy would span 2^31 elements or more (the kernels' 32-bit
 * offsets). */
bool gpu_conv_pack_plan(const kconv_params *k, int64_t vec, gconv_packed *pk);

/* An engine's estimate on the copies: gemm_us, its estimate of the conv on
 * k's own C, scaled by the padded channels' wasted multiply-adds (C_pad / C),
 * plus the two copy launches (~2 us each) and the copies written and read
 * again at ~2.5 TB/s. */
double gpu_conv_pack_cost_us(const kconv_params *k, const gconv_packed *pk, double gemm_us);

/* Launch the copies of x (to ws) and w (to ws + pk->xbytes) on stream s;
 * k: the conv's own problem (dims and strides of x and w).  A cudaError_t
 * value, 0 when both launched. */
int gpu_conv_pack_run(const kconv_params *k, const gconv_packed *pk, const void *x, const void *w, char *ws,
                      void *stream);

#endif

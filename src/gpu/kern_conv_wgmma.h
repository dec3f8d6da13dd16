/* kern_conv_wgmma.h — the launchers of the Hopper implicit-GEMM forward conv
 * (kernels/conv_igemm_wgmma_sm90a.cu, the conv_igemm_wgmma engine), callable
 * from C.  Plain C; the kernel file includes it. */
#ifndef XDNN_GPU_KERN_CONV_WGMMA_H
#define XDNN_GPU_KERN_CONV_WGMMA_H

#include "gpu/kern_conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's tile: KCW_BM rows of M = N*P*Q by bn (KCW_BN_*) filters, the
 * reduction R*S*C in KCW_BK-deep slices (one 128-byte swizzled row of f16). */
enum { KCW_BM = 128, KCW_BK = 64, KCW_BN_NARROW = 32, KCW_BN_SMALL = 64, KCW_BN_BIG = 128 };
/* The most zero-filled lattices one store may carry (conv_dgrad.h's GCONV_MAX_ZERO); the most stride
 * phases one launch of kconv_wgmma_phases runs (a 3-D stride-2 dgrad's eight). */
enum { KCW_ZERO_MAX = 3, KCW_PH_MAX = 8 };
/* kconv_wgmma_fwd's tma bits: the 1-/2-D code's producer may load by a 4-d
 * im2col map, the 3-D code's (3-D convs and the 32-wide tile) by a 5-d one. */
enum { KCW_TMA_2D = 1, KCW_TMA_3D = 2 };

/* 1 when this build holds the sm_90a code (the Makefile rule of kernels/..._sm90a.cu). */
int kconv_wgmma_built(void);
/* Dynamic shared memory one CTA of tile width bn takes (bytes; the larger of
 * the staged and the register store's). */
int kconv_wgmma_smem(int bn);
/* 1 when tiles of width bn may use the staged store (kconv_wgmma_fwd's
 * stage): the 128-wide ones. */
int kconv_wgmma_staged(int bn);
/* The ring's stages at tile width bn with the staged store (staged != 0) or
 * the register store: the staging rows cost the 128-wide tile one. */
int kconv_wgmma_stages(int bn, int staged);
/* y = epilogue(conv(x, w)) for a 1-, 2- or 3-D conv with groups 1,
 * x and w channel-contiguous of one type, f16 or bf16, C % 8 == 0, K even
 * (a forward conv's K % 8 == 0; a dgrad's dx of C = 4 is stored in pairs),
 * 16-byte aligned x / w rows (the engine checks: eng_conv_wgmma.c); y any
 * strides and type.  bn: 32 (the 3-D code, register store: any dims), 64
 * or 128.  splits > 1 (normalised as
 * gpu_conv_wgmma_splits does: none empty): each CTA writes its f32 partial to
 * part[split][M][K] and kconv_igemm_reduce finishes (deterministic).
 * nzero (<= KCW_ZERO_MAX, unsplit only): the store also writes zeros at each
 * y element's offset + zoff[i] (multiples of 8 elements): a dgrad's empty
 * stride phases on the same lattice as this one.  stats (unsplit only, y f16
 * or bf16; NULL = none): for each KCW_BM-row M tile t and filter k, the
 * (count, mean, M2) of the tile's y[., k] as stored (rounded to y's dtype)
 * at stats[(t * K + k) * 4 + 0..2] (norm_cl.cu's partials: genstats.h).
 * stage (!= 0): y leaves through shared-memory staging rows by bulk copies
 * while the next tile's wgmmas run, where the tile and y allow it
 * (kconv_wgmma_staged(bn); unsplit, f16 / bf16, unit channel stride, 16-byte
 * aligned rows and zero lattices); else, and with stage 0, the consumers
 * store from registers.  tma (KCW_TMA_* bits): the producer loads x's im2col
 * slices and w's rows through TMA maps (one thread, two or three bulk tensor
 * copies a slice) where kconv_wgmma_tma(p, bn, tma) holds and x / w are
 * 16-byte aligned; else its 128 threads gather them by cp.async.  pingpong (!= 0):
 * on 64-wide tiles of a 1-/2-D conv without stats, each consumer warpgroup
 * runs whole tiles and the two take turns at the tensor pipe, so that one's
 * store overlaps the other's mainloop (session 12; the engine asks for it
 * only without a fused epilogue other than a relu_bwd mask); else, and with
 * pingpong 0, both consumers share each tile (64 rows each). */
int kconv_wgmma_fwd(const kconv_params *p, const void *x, const void *w, void *y, const kconv_epi *epi, float *part,
                    int splits, int bn, int nzero, const int64_t *zoff, float *stats, int stage, int tma,
                    int pingpong, void *stream);
/* The GEMM phases of one conv_dgrad in ONE launch (session 11; the kernel's
 * MP instances: its 3-D code, cp.async gather, register store, unsplit): phase i is the
 * forward conv f[i] of x (dy) with the weights at w + woff[i] elements into
 * y + yoff[i] (dx's sub-lattice), zero-filling nzero[i] lattices at zoff[i];
 * the persistent CTAs take every phase's tiles from one list, so the small
 * phases of a strided dgrad share the SMs instead of running one after
 * another.  n <= KCW_PH_MAX, every f[i].K the same (dx's C).  epi: NULL or
 * the relu_bwd mask alone, in dx's coordinates through the phases' strides
 * (f[i].sy), shifted by yoff[i] as y is; kconv_wgmma_phases_ok(epi) says
 * whether it can be served.  A cudaError_t value. */
int kconv_wgmma_phases(int n, const kconv_params *f, const int64_t *woff, const int64_t *yoff, const int *nzero,
                       const int64_t (*zoff)[KCW_ZERO_MAX], const void *x, const void *w, void *y,
                       const kconv_epi *epi, int bn, void *stream);
/* 1 when kconv_wgmma_phases can apply epi (NULL, none, or a 16-bit
 * channel-contiguous relu_bwd mask read as 4-byte pairs at every phase's
 * offset yoff[0..n)). */
int kconv_wgmma_phases_ok(const kconv_epi *epi, int n, const int64_t *yoff);
/* Which producer a launch of p on a bn-wide tile with the tma bits runs:
 * 1, the 4-d im2col map (the 1-/2-D code, KCW_TMA_2D: C % 64 == 0, a slice
 * one tap's 64 channels; the map's corners, -pad and the last output's tap
 * past the edge, in [-128, 127]); 2, the 5-d one (the 3-D code: 3-D convs and
 * the 32-wide tile, KCW_TMA_3D: C % 64 == 0, or C == 32 with two taps a slice;
 * tap offsets <= 31, corners in [-16, 15]); 0, the cp.async gather.  Both
 * need w dense in (t, r, s, c) with rows a multiple of 8 elements, x's
 * strides multiples of 8 elements and strides <= 8. */
int kconv_wgmma_tma(const kconv_params *p, int bn, int tma);
/* conv_igemm's split-K second pass (kernels/conv_igemm.cu): y = epilogue(sum
 * of part[0..splits)[M][K] in split order), through y's strides. */
int kconv_igemm_reduce(const kconv_params *p, const float *part, int splits, void *y, const kconv_epi *epi,
                       void *stream);

#ifdef __cplusplus
}
#endif

#endif

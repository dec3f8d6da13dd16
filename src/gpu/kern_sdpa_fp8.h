/* kern_sdpa_fp8.h — the launcher of the Hopper fp8 attention forward
 * (kernels/sdpa_fp8_wgmma_sm90a.cu, engine sdpa_fp8_wgmma in
 * eng_sdpa_fp8.c) and the parameter block the host fills.  Plain C on both
 * sides: fixed-width fields only.  Semantics: src/ops/sdpa_fp8.c.
 *
 * q [B, Hq, Sq, D], k and v [B, Hk, Skv, D]: fp8_e4m3, element strides
 * (st[3] = 1, the others multiples of 16 bytes); D = 128.  o [B, Hq, Sq, D]
 * bf16, or fp8 (o_fp8 1: e4m3, 2: e5m2) quantized with o_scale.  stats
 * [B, Hq, Sq] f32 or NULL.  The scales, in port order q, k, v, s, o: a
 * device pointer to one f32 each, or NULL and the value in sc_v (a scalar
 * operand of the graph); o's is unused unless o_fp8.  amax_s, amax_o: one
 * f32 each or NULL.  vt: the
 * workspace, xk_sdpa_fp8_ws bytes, where a pre-pass writes V transposed
 * ([B, Hk, D, Skv16] with a key order permuted inside each 16-key group, see
 * the kernel file) and zeroes the amax results. */
#ifndef XDNN_GPU_KERN_SDPA_FP8_H
#define XDNN_GPU_KERN_SDPA_FP8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xk_sdpa_fp8 {
    int32_t B, Hq, Hk, Sq, Skv, D;
    int32_t causal, bottom_right; /* the causal band, aligned top-left or bottom-right (sdpa.h) */
    int32_t o_fp8;                /* 0: o bf16; 1: fp8_e4m3; 2: fp8_e5m2 (with o_scale) */
    float scale;                  /* the softmax scale, > 0 */
    const void *q, *k, *v;
    void *o;
    float *stats;
    int64_t q_st[4], k_st[4], v_st[4], o_st[4], stats_st[3];
    const float *sc_p[5];         /* q, k, v, s, o scales: device pointers, or NULL: */
    float sc_v[5];                /* the value itself */
    int32_t pad_;
    float *amax_s, *amax_o;
    void *vt;
} xk_sdpa_fp8;

/* cudaError_t as int (0 = launched): the V transpose pre-pass, then the attention kernel. */
int xk_sdpa_fp8_fwd(const xk_sdpa_fp8 *p, void *stream);
/* 1 when the sm_90a code is in this build. */
int xk_sdpa_fp8_built(void);
/* Workspace bytes (the transposed V) and shared memory per block of the attention kernel. */
size_t xk_sdpa_fp8_ws(int B, int Hk, int Skv, int D);
int xk_sdpa_fp8_smem(void);

#ifdef __cplusplus
}
#endif

#endif

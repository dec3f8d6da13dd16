/* conv_analyze.h — host-side analysis of a conv-family or pooling partition
 * for the conv_direct, conv_igemm and pool_direct engines: which op, which
 * tensor plays which role, the resolved window geometry (from the node's
 * bound attributes through ops/conv_util.h, so it is the CPU reference's
 * geometry exactly) and the kernel parameter blocks of kern_conv.h.
 * No CUDA calls: the unit test runs it on a GPU-less machine. */
#ifndef XDNN_GPU_CONV_ANALYZE_H
#define XDNN_GPU_CONV_ANALYZE_H

#include "gpu/kern_conv.h"
#include "gpu/partition.h"

#include <stddef.h>

typedef enum gconv_dir { GCONV_FWD, GCONV_DGRAD, GCONV_WGRAD } gconv_dir;

typedef struct gconv_problem {
    const gnode *node;
    gconv_dir dir;
    int nsp;                  /* spatial dims 1..3 */
    int x, w, y;              /* tensor ids by role (x/dx, w/dw, y/dy); y: the chain's end */
    kconv_params kp;
    kconv_epi epi;            /* fused steps (tensor addresses unset) */
    int epi_t[KEPI_MAX];      /* their operand tensor ids, -1 for none */
} gconv_problem;

/* Fill cp for a partition that is a lone conv / conv_dgrad / conv_wgrad node,
 * a forward conv with its epilogue chain (conv_epi.h; y is then the
 * chain's last result, written in its dtype and strides), or a conv_dgrad
 * with its relu_bwd mask (x is then the relu_bwd's result); false with a
 * reason (naming op, tensor/attribute, expected and actual). */
bool gpu_conv_analyze(const gplan *pl, const gpart *p, gconv_problem *cp, char *why, size_t len);

/* cp->epi with each operand's device address from dptr (per tensor id). */
void gpu_conv_epi_bind(const gconv_problem *cp, void *const *dptr, kconv_epi *out);

/* The extra rules of the implicit-GEMM kernel: conv, or conv_dgrad (run as
 * the stride-phase forward convs of gpu_conv_dgrad_phases); 1-, 2- or 3-D,
 * groups 1, f16/bf16 (or f32 when the graph allows tf32), x and w channel-
 * contiguous with 16-byte aligned rows (C % 8 == 0, or C % 4 == 0 for f32;
 * for dgrad the channels of dy, K), 32-bit offsets, at most GCONV_MAX_PHASES
 * stride phases.  False with the reason. */
bool gpu_conv_igemm_check(const ggraph *g, const gconv_problem *cp, bool tf32, char *why, size_t len);

/* conv_igemm's split-K for one forward problem f (a conv, or one stride
 * phase of a dgrad): 1 when the M x K tiles alone fill the device (at least
 * one CTA per SM); otherwise as many splits of the k slices as fill two
 * CTAs per SM, each at least 8 slices long, at most 16.  The environment
 * knob XDNN_CONV_SPLITK=n forces n (tests; clamped to [1, slices]).  The
 * count is normalised so that no split is empty: with per = ceil(KT / s),
 * s = ceil(KT / per).  ws_bytes: the f32 partials, s * M * K floats
 * (0 when unsplit), rounded to 256. */
int gpu_conv_igemm_splits(const kconv_params *f, int sm_count);
/* The rule behind it, for a reduction of kt slices over `tiles` output tiles
 * of a kernel that fits per_sm CTAs on an SM: splits of at least min_slices
 * slices each (at most 16) while the tiles leave SMs idle; the environment
 * knob and the normalisation as above (conv_igemm_wgmma shares it). */
int gpu_conv_split_k(int64_t kt, int64_t tiles, int per_sm, int64_t min_slices, int sm_count);
size_t gpu_conv_igemm_split_ws_bytes(const kconv_params *f, int splits);

/* The implicit-GEMM engines (conv_igemm, conv_igemm_wgmma) on a 16-bit 1x1
 * conv (any stride) or stride-1 1x1 conv_dgrad, as measured on the H100
 * (session 8, ResNet-50's 1x1 shapes at N = 256, bf16; bench/RESULTS-conv.md):
 * outputs x (2.13 ps + red x 7.25 fs), red = C (dgrad: K), fits
 * conv_igemm_wgmma's 21 measured shapes (0.10-0.66 ms) and conv_igemm's two
 * (C = 64) within 20%.  Each output costs ~2 ps however short the
 * reduction: the tiles' stores write ~1 TB/s, so these layers ran at
 * 79-263 TFLOP/s (2.5-2.9x cuDNN at reductions of 128-512), far below the
 * rooflines the 3x3 layers reach.  0 for any other problem.  The engines
 * take the larger of it and their own estimate, plus 1% of their own (so
 * that their order between them stays as it was). */
double gpu_conv_1x1_floor_us(const gconv_problem *cp);

/* A forward conv whose x or w the kernel cannot read as is (C not a
 * multiple of the 16-byte chunk, as in the C = 3 stem; channels not
 * contiguous, as in NCHW) runs on copies of both, channels-last with C
 * padded to the chunk (kconv_pack_cl, in the workspace).  gpu_conv_igemm_check
 * accepts it when the copies pass the rules.  Fills pk (the problem on the
 * copies) and the 256-aligned bytes of the two copies; false when the conv
 * reads its own tensors (or is not a forward conv). */
bool gpu_conv_igemm_packed(const gconv_problem *cp, bool tf32, kconv_params *pk, size_t *xbytes, size_t *wbytes);

/* A conv_dgrad as stride-1 forward convs, one per stride phase
 * phi = (i0 % s0, i1 % s1, i2 % s2) of dx: the dx positions of one phase
 * take the taps r with (phi + pad - r*dil) % s == 0 (per dim r = r0 +
 * i*rstep, i < taps, rstep = s / gcd(s, dil)), at dy offsets stepping by
 * dil / gcd(s, dil).  Each phase is the forward problem f:
 * dx_phase = conv(dy, wt_phase), stride 1, dilation dil/gcd, pad' =
 * (taps-1)*dil/gcd - (phi + pad - r0*dil)/s, where wt_phase is w's taps of the
 * phase flipped with K and C swapped, packed [C][taps0][taps1][taps2][K] at
 * wt_off elements into the workspace (kconv_pack_phase writes it), and the
 * output is dx's sub-lattice (start dx_off, strides s * dx's).  A phase
 * with no tap (empty) is all zeros (kconv_zero_lattice); one with no dx
 * position (out 0) is skipped.  Stride 1 is one phase: the flipped-weight
 * conv.  Returns the phase count, or -1 with the reason. */
enum { GCONV_MAX_PHASES = 64 };
typedef struct gconv_phase {
    kconv_params f;
    int64_t dx_off, wt_off;
    int64_t r0[KCONV_SP], rstep[KCONV_SP], taps[KCONV_SP];
    bool empty;    /* no tap: the sub-lattice is zero */
    bool none;     /* no dx position in this phase */
} gconv_phase;
int gpu_conv_dgrad_phases(const gconv_problem *cp, gconv_phase *ph, int max, char *why, size_t len);

/* conv_wgrad_mma's rules: conv_wgrad with dy and x both f16 or both bf16,
 * 32-bit offsets.  *vec: the 16-byte cp.async path applies (channel-
 * contiguous dy and x, K/G and C/G multiples of 8, pixel strides too);
 * otherwise elements are gathered one by one (any layout). */
bool gpu_conv_wgrad_mma_check(const ggraph *g, const gconv_problem *cp, bool *vec, char *why, size_t len);
/* Its split of the N x out reduction for a device of sm_count SMs (one
 * wave of 2 CTAs per SM, at least 8 steps of 32 rows per split, at most
 * 65535 CTAs along z), and the f32 workspace of the partials. */
int gpu_conv_wgrad_mma_splits(const kconv_params *k, int sm_count);
size_t gpu_conv_wgrad_mma_ws_bytes(const kconv_params *k, int sm_count);

/* conv_dw's rules: conv, conv_dgrad or conv_wgrad with groups == C == K,
 * x and y (dx, dy) channel-contiguous and of one dtype, the window's taps *
 * 32 bytes within KDW_SMEM_MAX (fwd and dgrad: the weights sit in shared
 * memory), sizes and offsets within 32 bits.  False with the reason. */
bool gpu_conv_dw_check(const ggraph *g, const gconv_problem *cp, char *why, size_t len);

typedef struct gpool_problem {
    const gnode *node;
    bool bwd;
    int nsp;
    int x, y, dx;             /* fwd: x -> y; bwd: (dy = y, x) -> dx */
    kpool_params kp;
} gpool_problem;

bool gpu_pool_analyze(const gplan *pl, const gpart *p, gpool_problem *pp, char *why, size_t len);

/* conv_direct's tiled wgrad (groups 1): how many slices the N x out
 * reduction is split into (enough CTAs for ~2048 tiles, at least 8 steps of
 * 32 per slice), and the f32 workspace of their partials. */
int gpu_conv_wgrad_splits(const kconv_params *k);
size_t gpu_conv_wgrad_ws_bytes(const kconv_params *k);

/* The strides of a rank 3..5 tensor in the 5-slot view [N, C, D, H, W]
 * (the leading spatial slots of a 1-D or 2-D tensor get stride 0). */
void gpu_conv_strides5(const gtensor *t, int64_t *s5);

/* KDT_* code of a dtype, or -1 when the kernels do not take it. */
int gpu_kdt(xdnn_dtype t);

#endif

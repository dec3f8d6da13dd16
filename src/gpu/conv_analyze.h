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
    int x, w, y;              /* tensor ids by role (x/dx, w/dw, y/dy) */
    kconv_params kp;
} gconv_problem;

/* Fill cp for a partition that is a lone conv / conv_dgrad / conv_wgrad node;
 * false with a reason (naming op, tensor/attribute, expected and actual). */
bool gpu_conv_analyze(const gplan *pl, const gpart *p, gconv_problem *cp, char *why, size_t len);

/* The extra rules of the implicit-GEMM kernel: conv, or conv_dgrad with
 * stride 1 (run as the forward conv of gpu_conv_dgrad_as_fwd); 2-D, groups 1,
 * f16/bf16 (or f32 when the graph allows tf32), x and w channel-contiguous
 * with 16-byte aligned rows (C % 8 == 0, or C % 4 == 0 for f32; for dgrad
 * the channels of dy, K), 32-bit offsets.  False with the reason. */
bool gpu_conv_igemm_check(const ggraph *g, const gconv_problem *cp, bool tf32, char *why, size_t len);
/* A stride-1, groups-1, 2-D conv_dgrad as the forward problem
 * dx = conv(dy, wt), wt = w flipped in R and S with K and C swapped, packed
 * [C, R, S, K] (kconv_flip_weights writes it).  False with the reason. */
bool gpu_conv_dgrad_as_fwd(const gconv_problem *cp, kconv_params *f, char *why, size_t len);

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

/* KDT_* code of a dtype, or -1 when the kernels do not take it. */
int gpu_kdt(xdnn_dtype t);

#endif

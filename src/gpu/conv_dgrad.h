/* conv_dgrad.h — a conv_dgrad run as the stride-phase forward convs of
 * gpu_conv_dgrad_phases (conv_analyze.h) on an implicit-GEMM forward kernel:
 * the plan (the phases, each one's split-K, the workspace) and the launches
 * (each phase's flipped weights packed, then its GEMM; phases no tap reaches
 * zero-filled).  Shared by conv_igemm (eng_conv.c) and conv_igemm_wgmma
 * (eng_conv_wgmma.c), which differ in their split rule and their GEMM
 * launch only.  The plan is plain C: the unit test runs it without a GPU. */
#ifndef XDNN_GPU_CONV_DGRAD_H
#define XDNN_GPU_CONV_DGRAD_H

#include "gpu/conv_analyze.h"

/* An empty phase (no tap) whose dx positions are a fixed offset from a GEMM
 * phase's (the same output lattice: the 1x1 stride-2 projection's three
 * zero phases beside its one GEMM) can have its zeros written by that
 * GEMM's store instead of a launch of its own: at most GCONV_MAX_ZERO each. */
enum { GCONV_MAX_ZERO = 3 };

typedef struct gconv_dgrad {
    int nph;
    gconv_phase ph[GCONV_MAX_PHASES];
    int splits[GCONV_MAX_PHASES];   /* split-K of each phase's GEMM (1 for empty ones) */
    bool folded[GCONV_MAX_PHASES];  /* an empty phase another phase's GEMM zero-fills */
    int nzero[GCONV_MAX_PHASES];    /* a GEMM phase: how many empty phases it zero-fills ... */
    int64_t zoff[GCONV_MAX_PHASES][GCONV_MAX_ZERO]; /* ... at these element offsets from its own dx positions */
    size_t split_off, ws_total;     /* workspace: [phase weights][split-K partials, shared by the phases] */
    bool one_launch;                /* the GEMM phases in one launch (gpu_conv_dgrad_run_one), unsplit */
} gconv_dgrad;

/* The engine's split-K rule for one forward problem (gpu_conv_igemm_splits, gpu_conv_wgmma_splits). */
typedef int (*gconv_split_fn)(const kconv_params *f, int sm_count);

/* Fill dg for the conv_dgrad cp: its phases, split (the engine's rule) on
 * a device of sm_count SMs, and the workspace they need.  False with the
 * reason (gpu_conv_dgrad_phases'). */
bool gpu_conv_dgrad_plan(const gconv_problem *cp, int sm_count, gconv_split_fn split, gconv_dgrad *dg, char *why,
                         size_t len);
/* Every GEMM unsplit (a workspace planned for another SM count). */
void gpu_conv_dgrad_unsplit(gconv_dgrad *dg);
/* Hand each empty phase to an unsplit GEMM phase with the same output
 * lattice, when its offset from that phase is a multiple of align elements
 * (the kernel's vector stores), at most max_zero (<= GCONV_MAX_ZERO) to one
 * GEMM: the GEMM's store then writes its zeros. */
void gpu_conv_dgrad_fold(gconv_dgrad *dg, int64_t align, int max_zero);
/* The launches the plan makes (packs, GEMMs, zero fills), and its phases with no tap. */
int gpu_conv_dgrad_launches(const gconv_dgrad *dg);
int gpu_conv_dgrad_empty(const gconv_dgrad *dg);

/* One phase's GEMM: dx_phase = epi(conv(dy, wt)) for dg->ph[i].f (split-K
 * partials at part when dg->splits[i] > 1; dg->zoff[i] zero-filled when
 * dg->nzero[i] > 0; epi: the phase's view of the fused relu_bwd mask, or
 * NULL).  A cudaError_t value. */
typedef int (*gconv_phase_gemm)(const void *ctx, const gconv_dgrad *dg, int i, const void *dy, const void *wt,
                                void *dx_phase, const kconv_epi *epi, float *part, void *stream);
/* Launch the whole dgrad on stream: per phase, its weights packed into the
 * workspace ws and gemm (or a zero fill).  epi (bound, or NULL): the fused
 * relu_bwd mask in dx's coordinates; each GEMM reads it through its phase's
 * dx strides from the phase's first position (the mask has dx's layout:
 * gconv_dgrad_epi_step), and zero phases skip it (relu_bwd(0, a) = 0 for a
 * finite slope).  A cudaError_t value. */
int gpu_conv_dgrad_run(const gconv_problem *cp, const gconv_dgrad *dg, const void *dy, const void *w, void *dx,
                       const kconv_epi *epi, char *ws, gconv_phase_gemm gemm, const void *ctx, void *stream);
/* The GEMM phases of dg in one launch (gpu_conv_dgrad_run_one): the weights
 * of phase i at wt + dg->ph[i].wt_off elements, its dx at dx + dx_off; epi
 * (NULL or bound) in dx's coordinates through the phases' dx strides, each
 * phase reading it at its own offset as it writes dx.  A cudaError_t value. */
typedef int (*gconv_phases_gemm)(const void *ctx, const gconv_dgrad *dg, const void *dy, const void *wt, void *dx,
                                 const kconv_epi *epi, void *stream);
/* gpu_conv_dgrad_run with every GEMM phase in one launch (dg->one_launch:
 * unsplit): the phases' weights packed, the empty phases that no GEMM's
 * store writes zero-filled, then all. */
int gpu_conv_dgrad_run_one(const gconv_problem *cp, const gconv_dgrad *dg, const void *dy, const void *w, void *dx,
                           const kconv_epi *epi, char *ws, gconv_phases_gemm all, const void *ctx, void *stream);
/* The phase q's view of epi (every tensor operand shifted to q's first dx
 * position and read through q's dx strides). */
void gpu_conv_dgrad_phase_epi(const kconv_epi *epi, const gconv_phase *q, kconv_epi *out);

#endif

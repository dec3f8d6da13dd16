/* kern_norm.h — the precompiled normalization kernels (kernels/norm.cu) as the
 * host sees them: plain C structs passed by value and extern "C" launchers.
 *
 * Every normalization (batch, layer, rms, group, instance; forward and
 * backward) and softmax_bwd is described by "canonical dims": x's dims, with
 * the channel dim of group norm split into [G, C/G], each marked as a ROW dim
 * (one statistic per row index) or a reduced dim, and each carrying one
 * element stride per operand (NG_* below; 0 = the operand does not vary along
 * it).  Pseudo-operands NG_ROW and NG_PAR carry the row-major coefficients of
 * the flat row index and the flat parameter index.  The kernels are:
 *   reduce   partial sums over the inner dims for every outer index, split
 *            into `nsplit` chunks (Welford for statistics), written to
 *            part[split][O][4];
 *   finalize one thread per outer index: combine the chunks, write per-row
 *            workspace arrays and the user-visible statistics / running
 *            statistics / parameter gradients;
 *   apply    elementwise y (forward), dx (backward) from the row arrays.
 * Dtype codes are xdnn_dtype values (0 f32, 1 f16, 2 bf16, 9 f64 for stats).
 */
#ifndef XDNN_GPU_KERN_NORM_H
#define XDNN_GPU_KERN_NORM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { NG_MAXD = 8 };

typedef enum ng_operand {
    NG_X,      /* x (softmax_bwd: y) */
    NG_Y,      /* forward output y */
    NG_DY,     /* incoming gradient */
    NG_DX,     /* backward output dx */
    NG_ROW,    /* flat row index (workspace arrays) */
    NG_PAR,    /* flat parameter index (parameter-gradient reduction) */
    NG_SC,     /* scale */
    NG_BI,     /* bias */
    NG_MEAN,   /* statistics tensors: forward outputs or backward inputs */
    NG_INV,
    NG_RM,     /* batchnorm running statistics in and out */
    NG_RV,
    NG_RMO,
    NG_RVO,
    NG_DSC,    /* parameter gradients */
    NG_DBI,
    NG_NOPS
} ng_operand;

typedef struct ng_dims {
    int n;                                 /* innermost last */
    int64_t size[NG_MAXD];
    int64_t stride[NG_NOPS][NG_MAXD];      /* elements */
} ng_dims;

/* Device pointers and dtypes of every operand (NULL = absent). */
typedef struct ng_ptrs {
    void *p[NG_NOPS];
    int dt[NG_NOPS];
} ng_ptrs;

typedef enum ng_red_mode {
    NGR_WELFORD,   /* x: count, mean, M2 */
    NGR_SQUARES,   /* x: sum x^2 (rms) */
    NGR_BWD,       /* sum g, sum g xhat, sum dy, sum dy xhat (g = dy * scale) */
    NGR_SMB        /* softmax_bwd: sum dy * y, sum dy */
} ng_red_mode;

typedef enum ng_fin_mode {
    NGF_STATS,     /* -> mean, inv (+ outputs, running statistics) */
    NGF_SUMS,      /* -> a, b, c, e arrays (+ dscale/dbias from c/e when `write_pgrad`) */
    NGF_LOAD       /* backward: mean/inv input tensors -> mean, inv arrays */
} ng_fin_mode;

typedef struct ng_job {
    ng_dims outer, inner;          /* reduce / finalize geometry */
    ng_dims all;                   /* apply geometry (every dim, output-coalesced order) */
    ng_ptrs t;
    int64_t O, Q;                  /* outer count, inner count */
    int64_t chunk;                 /* inner elements per split */
    int nsplit;
    int col;                       /* reduce with threads across outer indices */
    int mode;                      /* ng_red_mode */
    int fin;                       /* ng_fin_mode */
    int rms;                       /* no mean: rmsnorm */
    int log_softmax;               /* softmax_bwd of log_softmax */
    int write_pgrad;               /* NGF_SUMS writes dscale/dbias (rows are the channels) */
    float eps, momentum, D;        /* D: elements per row (as float) */
    float unbias;                  /* M / (M - 1) for running_var */
    float *part;                   /* workspace: nsplit * O * 4 */
    float *mean, *inv, *a, *b, *c, *e; /* workspace row arrays (length rows) */
    int vec4;                      /* row kernels: rows 4-element aligned, vector loads;
                                      apply: 4 consecutive innermost elements per thread */
    int act;                       /* forward: ng_act applied to y before it is stored */
    int act_dt;                    /* the dtype of the activation's input (rounded to it first) */
    int pg_blocks;                 /* ng_launch_row_bwd_pg: the most blocks (part holds
                                      pg_blocks * 2 * D floats) */
    int res_dt;                    /* backward with a residual (NG_Y set: an x-shaped addend):
                                      dx rounded to this dtype, then NG_Y added (the fused
                                      `dx + r` of partition.c); batchnorm forward with a
                                      residual (NG_DY set): y rounded to this dtype, then NG_DY
                                      added, then the activation (generic and channels-last apply) */
    int cl_pdl;                    /* channels-last: finalize and apply as programmatic dependent launches */
    int cl_l2;                     /* channels-last persistent launch (norm_cl1.cu): 1 walks each split's
                                      re-read rows last-read-first (the ones still in L2 first), loads them and
                                      stores its output evict-first, pass 1 the held rows evict-first; 0 as
                                      before session 13 (plan_cl: x of 32-256 MB; XDNN_NORM_CL_L2) */
    int cl1;                       /* channels-last: one persistent launch (norm_cl1.cu; plan_cl1 sets it) */
    int64_t cl1_rows;              /* ... the most rows of its split a block holds on chip (-1: what fits;
                                      XDNN_NORM_CL1_ROWS, for the tests of the re-read rows) */
    int join;                      /* batchnorm backward, channels last: dy made by the reduce from the
                                      fused join (NG_JA..NG_JM below): 0 none, 1 relu_bwd(a, m),
                                      2 relu_bwd(a + b, m) (a + b rounded to join_dt first); the reduce
                                      stores dy (NG_DY) for the apply */
    int join_dt;
    float jp0, jp1, jp2;           /* relu_bwd's lower, upper, slope: m > p0 ? (m < p1 ? v : 0) : v * p2 */
    int no_wide_bwd;               /* layer/rms backward rows past the warp rows: 1 leaves them to norm.cu's row
                                      kernels instead of norm_wide_bwd.cu (XDNN_NORM_WIDE_BWD=0, read when the
                                      plan is built) */
    int no_pair_bwd;               /* layer/rms backward rows of 4-8 warps: 1 keeps norm_warp_bwd.cu's v2 (one row a
                                      barrier) instead of v4 (XDNN_NORM_BWD_PAIR=0, read when the plan is built) */
} ng_job;

/* What the warp-row kernels (kernels/norm_warp.cu's layernorm / rmsnorm
 * forward, norm_warp_bwd.cu, norm_wide_bwd.cu) read of an ng_job: their
 * launch parameter, ~1 KB where ng_job is 3.6 KB (a launch copies its
 * parameter: 1-3 us less a launch, session 12; also fewer registers spilled
 * by the backward's v3).  ng_job's member names, so the
 * kernels' code reads either; outer strides of the operands up to NG_INV
 * only (the row kernels' x, y, dy, dx, mean, inv), the first inner stride of
 * every operand (scale / bias / dscale / dbias along the row).  Filled from
 * an ng_job by the launchers (wr_row_job, kernels/norm_warp.cuh). */
enum { NG_ROW_NOPS = NG_INV + 1 };
typedef struct ng_row_dims {
    int n;
    int64_t size[NG_MAXD];
    int64_t stride[NG_ROW_NOPS][NG_MAXD];
} ng_row_dims;
typedef struct ng_row_stride {
    int64_t stride[NG_NOPS][1];
} ng_row_stride;
typedef struct ng_row_job {
    ng_row_dims outer;
    ng_row_stride inner;
    ng_ptrs t;
    float *part;
    float eps;
    int rms, act, act_dt, res_dt;
} ng_row_job;

/* The join's x-shaped operands sit in slots a batchnorm backward leaves
 * empty (its bias, its forward output, the running statistics); they are
 * read through NG_DY's strides (eng_norm.c requires the same layout). */
enum { NG_JA = NG_Y, NG_JB = NG_BI, NG_JM = NG_RM };

/* The activation a forward norm partition applies after normalizing (the
 * pointwise node fused behind it, partition.c / eng_norm.c). */
typedef enum ng_act { NGACT_NONE, NGACT_RELU, NGACT_SILU, NGACT_GELU_TANH, NGACT_GELU_ERF } ng_act;

/* Launchers (return a cudaError_t value; 0 = success).  `stream` is a
 * cudaStream_t.  `index64` selects 64-bit index arithmetic. */
int ng_launch_reduce(const ng_job *j, int index64, void *stream);
int ng_launch_finalize(const ng_job *j, void *stream);
int ng_launch_apply(const ng_job *j, int apply_mode, int index64, int64_t numel, void *stream);
/* One block per row, the row held in registers (layernorm / rmsnorm forward,
 * inner dims one contiguous run of D <= NG_ROW_MAX elements). */
enum { NG_ROW_MAX = 8192 };
int ng_launch_row_fwd(const ng_job *j, int64_t rows, int64_t D, void *stream);
/* The same for the backward dx of layernorm / rmsnorm (mean/inv from the
 * workspace arrays, filled by a NGF_LOAD finalize first). */
int ng_launch_row_bwd(const ng_job *j, int64_t rows, int64_t D, void *stream);
/* The same with dscale / dbias (NG_DSC / NG_DBI, per feature: inner stride
 * only) summed in the same pass: per-block column partials in part, then a
 * column sum.  Rows 4-element aligned (vec4), D <= NG_ROW_PG_MAX. */
enum { NG_ROW_PG_MAX = 8192 };
int ng_launch_row_bwd_pg(const ng_job *j, int64_t rows, int64_t D, void *stream);
/* dscale / dbias (NG_DSC / NG_DBI) of column c = the sum over nblk blocks b of
 * part[b][0][c] / part[b][1][c] (the row backward kernels' partials). */
int ng_launch_pgrad_cols(const ng_job *j, int64_t D, int nblk, void *stream);

/* A warp (or 2, 4, 8 warps) per row, the row in registers, 16-byte loads
 * (kernels/norm_warp.cu), for rows of D <= NG_WARP_ROW_MAX elements.
 * ng_launch_warp_norm: layernorm / rmsnorm forward as ng_launch_row_fwd;
 * returns -1 without launching when a row is not 16-byte aligned (x / y
 * pointers, outer strides, D a multiple of 16 bytes): the caller then runs
 * ng_launch_row_fwd.  ng_launch_warp_softmax: softmax (log = 0) or
 * log_softmax of `rows` rows of D elements of dtype dt (an xdnn dtype code),
 * row r at x + r * ldx and y + r * ldy (elements), any alignment. */
enum { NG_WARP_ROW_MAX = 8192 };
int ng_launch_warp_norm(const ng_job *j, int64_t rows, int64_t D, void *stream);
int ng_launch_warp_softmax(const void *x, void *y, int dt, int log, int64_t rows, int64_t D, int64_t ldx,
                           int64_t ldy, void *stream);
/* Layernorm / rmsnorm backward dx (+ the residual NG_Y, + dscale / dbias per
 * feature through j->part, j->pg_blocks as ng_launch_row_bwd_pg) over the same
 * warp rows (kernels/norm_warp_bwd.cu), mean / inv read from the statistics
 * tensors themselves (no NGF_LOAD finalize first).  Rows over 4096 16-bit /
 * 2048 f32 elements go to ng_launch_wide_norm_bwd (unless
 * XDNN_NORM_WIDE_BWD=0).  Returns -1 without launching when the rows do not
 * fit it (not 16-byte aligned, a scale not contiguous of x's dtype, rows over
 * 8192 elements, XDNN_NORM_WARP_V=1): the caller then takes norm.cu's row
 * kernels. */
int ng_launch_warp_norm_bwd(const ng_job *j, int64_t rows, int64_t D, void *stream);
/* The same backward with a block per row (kernels/norm_wide_bwd.cu), rows of
 * up to NG_WIDE_ROW_MAX elements of any dtype, 16-byte aligned as the warp
 * rows; dscale / dbias partials one per block in j->part (at most
 * j->pg_blocks blocks), summed by ng_launch_block_pgrad_cols.  -1: not
 * launched (the caller's checks first: ng_launch_warp_norm_bwd's). */
enum { NG_WIDE_ROW_MAX = 8192 };
/* The warp-row backward's widest row in bytes (8 warps x 32 lanes x 2 chunks
 * of 16 bytes: 4096 16-bit, 2048 f32 elements): wider ones take the block per row. */
enum { NG_WARP_BWD_ROW_BYTES = 8192 };
int ng_launch_wide_norm_bwd(const ng_job *j, int64_t rows, int64_t D, void *stream);
/* dscale / dbias (NG_DSC / NG_DBI) of column c = the sum over nblk blocks b of
 * part[b][0][c] / part[b][1][c], in block order (kernels/norm_warp_bwd.cu:
 * 16 warps a column block, 8 loads in flight a thread). */
int ng_launch_block_pgrad_cols(const ng_job *j, int64_t D, int nblk, void *stream);

/* softmax_bwd / log_softmax_bwd (j->log_softmax) of `rows` rows of D
 * elements (kernels/softmax_warp_bwd.cu: the warp rows, y = NG_X and dy
 * read once, one reduction a row, dx = NG_DX written once): the row is one
 * contiguous run (inner stride 1) of y, dy and dx, all of one dtype, any
 * outer strides (16-byte loads where every row is 16-byte aligned, element
 * loads otherwise), D * dtype bytes <= NG_SMB_ROW_BYTES (16-bit rows up to
 * 8192 elements, f32 up to 4096).  Returns -1 without launching when the
 * rows do not fit it: the caller then runs the split path.  The default
 * (XDNN_SOFTMAX_BWD_ROWS=0: the split path for all; eng_norm.c). */
enum { NG_SMB_ROW_BYTES = 16384 };
int ng_launch_warp_softmax_bwd(const ng_job *j, int64_t rows, int64_t D, void *stream);

typedef enum ng_apply_mode { NGA_FWD, NGA_BWD, NGA_SMB } ng_apply_mode;

/* Batchnorm training forward / backward over channels-last x
 * (kernels/norm_cl.cu): outer = the C channels (stride 1 in every x-shaped
 * operand, O = C), inner = the M rows (one stride each, Q = M), all x-shaped
 * operands of x's dtype; `nsplit` chunks of `chunk` rows.  The reduce writes
 * part[nsplit][C][4] (mode NGR_WELFORD or NGR_BWD), the finalize stores what
 * ng_launch_finalize would (fin NGF_STATS / NGF_SUMS), the apply writes y
 * (NGA_FWD, with j->act and the residual NG_DY when set) or dx (NGA_BWD, mean / inv from the saved tensors,
 * sum g / sum g xhat from the a / b arrays). */
enum { NG_CL_THREADS = 256, NG_CL_UNROLL = 4 };
/* Resident blocks per SM the kernels are built for (norm_cl.cu's header). */
enum { NG_CL_BLOCKS = 3 };
int ng_launch_cl_reduce(const ng_job *j, void *stream);
int ng_launch_cl_finalize(const ng_job *j, void *stream);
int ng_launch_cl_apply(const ng_job *j, int apply_mode, void *stream);
/* The same three in one persistent launch (kernels/norm_cl1.cu): a grid of
 * exactly the resident blocks (one of NG_CL1_THREADS per SM, cooperative),
 * each split's rows loaded once and held in shared memory as far as they fit
 * (the rest read again), two grid barriers around the merge of the splits'
 * partials.  part needs room for one split per SM.  Forward with no
 * activation or relu (and a residual), backward without one.  Returns -1
 * having launched nothing when the grid cannot be resident at once (or the
 * activation is another): the caller runs the three launches. */
enum { NG_CL1_THREADS = 512 };
int ng_launch_cl1(const ng_job *j, int apply_mode, void *stream);

/* Group / instance norm over packed NCHW x, or NHWC (nhwc) (kernels/norm_group.cu; eng_norm.c
 * plans it unless XDNN_GROUPNORM_V2=0; session 12, the default since 13): group
 * (n, g) is the run of D = C/G * S elements at (n * G + g) * D of every
 * x-shaped operand (x, y, dy, dx: one dtype `dt`), channel c = g * C/G + i / S
 * of element i of the run.  scale / bias / dscale / dbias: one element per
 * channel at c * stride (their own dtypes; NULL: scale 1, bias 0, not
 * written; one element: every channel's); mean / inv: one element per group at n * G + g (NULL in a forward
 * with one target).  Forward: row_smem = one 512-thread block per group, the
 * group held in shared memory (x read once), else nsplit chunks of `chunk`
 * elements a group (partials in part[rows][nsplit][4], then the apply).
 * Backward: part[N][C][2] (sum dy, sum dy xhat per channel), then dx in the
 * same chunks, then dscale / dbias summed over n in order (deterministic);
 * row_smem: one 512-thread block a group holds its x and dy in shared memory
 * (read once) for the sums and dx, then the same dscale / dbias.
 * vec: D (backward: S too) a multiple of 16 bytes; the launchers check the
 * pointers and take the scalar loops when one is not 16-byte aligned. */
enum { NG_GN_THREADS = 256, NG_GN_ROW_THREADS = 512, NG_GN_MAX_CG = 8192, NG_GN_ROW_BYTES = 98304 };
/* The backward's row path: x and dy of a group (+ 12 bytes a channel) in at most this much shared memory: two
 * blocks an SM on Hopper (the 64x256x56x56 / 32-group bf16 case: 2 x 50 KB a group), one on Ampere. */
enum { NG_GN_BWD_ROW_BYTES = 112640 };
typedef struct ng_gn_job {
    const void *x, *dy, *sc, *bi;
    void *y, *dx, *mean, *inv, *dsc, *dbi;
    int dt, sc_dt, bi_dt, mean_dt, inv_dt, dsc_dt, dbi_dt;
    int64_t sc_st, bi_st, dsc_st, dbi_st;
    int64_t N, C, G, CG, S, D, rows;   /* D = CG * S < 2^31, rows = N * G */
    int64_t chunk;                     /* split chunk: elements, a multiple of 16 bytes of dt */
    int nsplit, row_smem, vec;
    int pg_one;                        /* dscale / dbias one element (a one-element scale): the sum of all */
    int nhwc;                          /* x-shaped operands channels last, packed: element (n, s, c) at
                                          (n * S + s) * C + c; the split paths' scalar loops only */
    float eps;
    int act, act_dt;                   /* the fused activation (ng_act) and its input's dtype */
    float *part;                       /* workspace: forward rows * nsplit * 4 floats, backward N * C * 2 */
} ng_gn_job;
int ng_launch_gn_fwd(const ng_gn_job *j, void *stream);
int ng_launch_gn_bwd(const ng_gn_job *j, void *stream);

#ifdef __cplusplus
}
#endif

#endif

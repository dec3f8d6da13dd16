/* engine.h — engines as data.  Every way of running a partition is one
 * gpu_engine registered in engine_table.c; heuristics rank the engines that
 * support a partition by their cost; `--engine OP=ENGINE` or
 * `PARTNAME=ENGINE` forces one (an error naming the engine and its reason when
 * it cannot run the partition). */
#ifndef XDNN_GPU_ENGINE_H
#define XDNN_GPU_ENGINE_H

#include "gpu/codegen.h"
#include "gpu/nvrtc.h"
#include "gpu/partition.h"
#include "ops/op.h"

#include <stdio.h>

/* Everything one execution of a plan needs. */
typedef struct gpu_ctx {
    gpu_device dev;
    cudaStream_t stream;
    cublasLtHandle_t lt;
    gplan *plan;
    void **dptr;               /* per tensor: device address, NULL if in registers */
    char *ws;                  /* workspace base (plan->ws_total bytes) */
    gpu_compile_stats cstats;
    bool consts_done;          /* the once partitions (constfold.c) have run: executes skip them */
} gpu_ctx;

enum { GPU_KNOB_LEN = 64 };

typedef struct gpu_engine {
    const char *name;
    const char *summary;
    /* Can it run p?  If not, a one-line reason in why. */
    bool (*supports)(const gplan *pl, const gpart *p, const gpu_device *dev, char *why, size_t len);
    /* Estimated microseconds (lower wins). */
    double (*cost)(const gplan *pl, const gpart *p, const gpu_device *dev);
    /* Scratch bytes needed during the partition (planned by liveness). */
    size_t (*workspace)(const gplan *pl, const gpart *p, const gpu_device *dev);
    /* Compile / query libraries once device pointers are known. */
    xdnn_status (*build)(gpu_ctx *c, gpart *p, xdnn_diags_t *d);
    /* Enqueue the partition on stream s (no allocation, no sync). */
    xdnn_status (*execute)(gpu_ctx *c, gpart *p, cudaStream_t s, xdnn_diags_t *d);
    void (*release)(gpart *p);
    /* A line about the choice made in build (e.g. the cuBLASLt algorithm). */
    const char *(*detail)(const gpart *p);
} gpu_engine;

/* Knobs of an engine that has them (named in the engine's row of the engine
 * table, so the engine structs stay as they are; an engine whose row has none
 * takes no knob text: forcing some is an error).  variants writes up to `max`
 * variant texts for p (e.g. "algo=2"; --tune times each) and returns how
 * many; valid checks a forced "PART=ENGINE:KNOBS" text before anything is
 * built.  build() reads the forced text from p->knobs ("" = its own choice). */
typedef struct gpu_knobs {
    const gpu_engine *engine;
    int (*variants)(const gplan *pl, const gpart *p, const gpu_device *dev, char (*out)[GPU_KNOB_LEN], int max);
    bool (*valid)(const char *knobs, char *why, size_t len);
} gpu_knobs;

/* NULL when the engine has no knobs. */
const gpu_knobs *gpu_engine_knobs(const gpu_engine *e);

/* THE engine table (engine_table.c): each engine with the op classes it serves
 * (bit OPC_x of `serves`, ops/op.h) and its knobs (NULL: none). */
typedef struct gpu_engine_row {
    const gpu_engine *engine;
    unsigned serves;
    const gpu_knobs *knobs;
} gpu_engine_row;

extern const gpu_engine_row gpu_engine_rows[];
extern const int gpu_nengines;

/* The op class of a partition (its kind, or its lone node's family); OPC_COUNT
 * when unknown, which every engine serves. */
op_class gpu_part_class(const gplan *pl, const gpart *p);
/* Does engine row `row` serve class c? */
bool gpu_engine_serves(int row, op_class c);

const gpu_engine *gpu_engine_find(const char *name);

/* A supports()/analysis refusal: the reason into why[len], then false.
 * GPU_REFUSE("fmt", ...) is `return gpu_refuse(why, len, ...)` for functions
 * whose reason buffer is named why/len, as every engine's is. */
bool gpu_refuse(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define GPU_REFUSE(...) return gpu_refuse(why, len, __VA_ARGS__)
/* Choose an engine for every partition (forced ones first).  -v prints each
 * partition with every engine considered, its cost or why it was rejected. */
xdnn_status gpu_select_engines(gplan *pl, const gpu_device *dev, const char *const *force, int nforce,
                               int verbose, FILE *log, xdnn_diags_t *d);
/* Roofline estimate in microseconds from nominal device rates. */
double gpu_roofline_us(const gpart *p, double tflops);

/* Launch a generated kernel with the context's device pointers. */
xdnn_status gpu_launch_generated(gpu_ctx *c, const gpu_kernel *kern, const cg_kernel *k, int block,
                                 cudaStream_t s, xdnn_diags_t *d);

/* ---- matmul analysis (eng_matmul.c), host-only so unit tests can check it */
typedef struct mm_mat {
    int64_t rows, cols, ld;   /* the stored column-major matrix cuBLASLt sees */
    bool trans;               /* op applied to it */
    int64_t bstride;          /* inner batch stride, elements */
} mm_mat;

typedef struct mm_shape {
    int first, second;        /* tensor ids of cuBLASLt's A and B */
    mm_mat a, b, d;
    int64_t m, n, k, batch;
    int nouter;               /* leading batch dims looped on the host */
    int64_t outer_dims[XDNN_MAX_RANK];
    int64_t outer_stride[3][XDNN_MAX_RANK]; /* first, second, D; elements */
    bool row_major_out;       /* D computed as C^T = B^T A^T */
    int c_tensor;             /* the matmul node's own output */
    int d_tensor;             /* where the GEMM writes (final output with an lt epilogue) */
    int lt_epilogue;          /* cublasLtEpilogue_t */
    int bias;                 /* bias tensor for the lt epilogue, or -1 */
    int addend;               /* residual added as cuBLASLt's C (beta = 1), or -1 */
    bool need_kernel;         /* GEMM into scratch + generated epilogue */
    int *epi_nodes;           /* the chain (everything but the matmul) */
    int nepi;
} mm_shape;

bool gpu_matmul_analyze(const gplan *pl, const gpart *p, bool tf32, mm_shape *s, char *why, size_t len);
/* Destroys what a cuBLASLt engine's plan state holds (NULL handles skipped):
 * the matmul descriptor and its three layouts. */
void gpu_lt_destroy(cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                    cublasLtMatrixLayout_t c);

/* ---- the low-precision "TN" GEMM of the lowp cuBLASLt engines
 * (eng_mm_scaled.c, eng_scaled_conv.c): cuBLASLt's int8 and fp8 kernels take
 * both operands K-contiguous, column-major k x cols with ld >= k. */
enum { GPU_LT_LOWP_WORKSPACE = 32 << 20 }; /* cuBLASLt's own workspace, at the start of the engine's */
typedef struct gpu_lt_operand {
    cudaDataType_t type;
    uint64_t k, cols, ld;
} gpu_lt_operand;
typedef struct gpu_lt_gemm {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;  /* lc: C and D */
    cublasLtMatrixLayout_t lcc;         /* C's own layout when it differs from D's (else NULL; the caller destroys it) */
    cublasLtMatmulAlgo_t algo;
    int algo_id, tile, splitk;          /* of algo, for the detail line */
} gpu_lt_gemm;
/* D [a.cols x b.cols] (type td, column-major, ld ldd) = A^T B: int32
 * compute for i8 (scale type int32), else f32; the heuristic's best algo
 * within GPU_LT_LOWP_WORKSPACE.  Fills lg (release with gpu_lt_destroy);
 * XDNN_ERR_UNSUPPORTED, reported as "WHO: cuBLASLt has no algorithm ...",
 * when there is none. */
/* Any cuBLASLt GEMM: D = op(A) op(B) (column-major layouts; batched when
 * batch > 1, with the element stride between items), compute type ct and
 * scale type `scale`, the heuristic's best algo within `ws` workspace bytes.
 * Fills lg (release with gpu_lt_destroy); XDNN_ERR_UNSUPPORTED as below when
 * cuBLASLt has no algorithm.  gpu_lt_lowp_gemm is the "TN" case of it. */
typedef struct gpu_lt_mat {
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
    int32_t batch;
    int64_t stride;
} gpu_lt_mat;
xdnn_status gpu_lt_gemm_plan(gpu_ctx *c, cublasComputeType_t ct, cudaDataType_t scale, bool ta, bool tb,
                             const gpu_lt_mat *a, const gpu_lt_mat *b, const gpu_lt_mat *dm, uint64_t ws,
                             const char *who, gpu_lt_gemm *lg, xdnn_diags_t *d);
/* The same with the byte alignment every item's address of A, B and D has
 * (align[3], 4 .. 16: the heuristic's MIN_ALIGNMENT preferences; cuBLASLt
 * otherwise assumes 256-byte aligned items: conv_f32_gemm's per-image views
 * are not), a pointwise cuBLASLt epilogue (CUBLASLT_EPILOGUE_RELU, ...;
 * DEFAULT for none: no pointer attribute is set) and cm, C's own layout
 * when C is not D (a broadcast C of batch stride 0: lg->lcc; NULL: C is D). */
xdnn_status gpu_lt_gemm_plan_aligned(gpu_ctx *c, cublasComputeType_t ct, cudaDataType_t scale, bool ta, bool tb,
                                     const gpu_lt_mat *a, const gpu_lt_mat *b, const gpu_lt_mat *dm, uint64_t ws,
                                     const int *align, int epilogue, const gpu_lt_mat *cm, const char *who,
                                     gpu_lt_gemm *lg, xdnn_diags_t *d);
xdnn_status gpu_lt_lowp_gemm(gpu_ctx *c, bool i8, const gpu_lt_operand *a, const gpu_lt_operand *b, cudaDataType_t td,
                             uint64_t ldd, const char *who, gpu_lt_gemm *lg, xdnn_diags_t *d);

#endif

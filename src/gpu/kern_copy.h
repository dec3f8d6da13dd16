/* kern_copy.h — the strided-copy kernels (kernels/copy.cu) as the host sees
 * them.  One job copies every element of an iteration space (the output
 * region, innermost dim last) from src to dst: the output offset is
 * obase + sum i_d * ost[d]; the input offset is
 *   CPK_AFFINE   ibase + sum i_d * ist[d]                  (permute, slice,
 *                broadcast, concat/split pieces, packed reshapes);
 *   CPK_PAD      per dim s = i_d - before[d], mapped into [0, ilen[d]) by the
 *                pad mode (or the fill value when constant and outside);
 *   CPK_RESHAPE  the flat row-major index of the output decomposed over the
 *                input's own dims (in_size, in_st): reshapes of non-packed
 *                tensors.
 * Same-dtype jobs move `esize`-byte units (1, 2, 4, 8 or 16: the host folds
 * a contiguous innermost run into 16-byte vectors when everything is
 * aligned); jobs with idt != odt convert f32/f16/bf16 through f32. */
#ifndef XDNN_GPU_KERN_COPY_H
#define XDNN_GPU_KERN_COPY_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { CP_MAXD = 8 };

typedef enum cp_kind { CPK_AFFINE, CPK_PAD, CPK_RESHAPE } cp_kind;
typedef enum cp_pad_mode { CPP_CONSTANT, CPP_REFLECT, CPP_REPLICATE, CPP_CIRCULAR } cp_pad_mode;

typedef struct cp_job {
    int kind;                      /* cp_kind */
    int n;                         /* iteration dims, innermost last */
    int64_t size[CP_MAXD], ost[CP_MAXD], ist[CP_MAXD];
    int64_t ibase, obase;          /* in units of esize (or elements when converting) */
    int pad_mode;                  /* cp_pad_mode */
    int64_t before[CP_MAXD], ilen[CP_MAXD];
    int in_n;                      /* CPK_RESHAPE: the input's dims */
    int64_t in_size[CP_MAXD], in_st[CP_MAXD];
    int esize;                     /* bytes per moved unit (same dtype) */
    int idt, odt;                  /* xdnn_dtype codes; converting when different */
    unsigned char fill[16];        /* the constant, in the output dtype's bytes */
    int64_t numel;                 /* iteration count */
    const void *src;
    void *dst;
} cp_job;

/* The affine pieces of one op (concat's inputs, split's results) as one launch: a table of at most CP_GROUP_MAX
 * pieces of at most CP_GROUP_DIMS dims, one flat index over them (kernels/copy.cu k_copy_pieces). */
enum { CP_GROUP_MAX = 8, CP_GROUP_DIMS = 4 };

typedef struct cp_piece {
    int n;                         /* dims, innermost last */
    int64_t size[CP_GROUP_DIMS], ost[CP_GROUP_DIMS], ist[CP_GROUP_DIMS];
    int64_t ibase, obase;          /* in units of the group's esize */
    int64_t start;                 /* the piece's first flat index */
    const void *src;
    void *dst;
} cp_piece;

typedef struct cp_group {
    int np;
    int64_t total;                 /* the pieces' iteration counts summed */
    cp_piece p[CP_GROUP_MAX];
} cp_group;

/* Enqueue one job on `stream` (a cudaStream_t); returns a cudaError_t value. */
int cp_launch(const cp_job *j, void *stream);
/* The dim a that a transposing job is tiled over (input stride 1, while the output's last dim is strided in the
 * input): cp_launch takes the shared-memory tile for it; -1 when the element loop runs (XDNN_COPY_TILED=0). */
int cp_tiled_axis(const cp_job *j);
/* Does a tiled job run k_transpose_piped (the next tile's loads in flight: 2-, 4- and 8-byte units), not
 * k_transpose (1-byte units, or XDNN_COPY_TILED_V2=0)? */
bool cp_tiled_piped(const cp_job *j);
/* Does a tiled job run k_transpose_async (cp.async of the next two tiles into shared memory: 16-byte chunks
 * along the input's lines; XDNN_COPY_TILED_V2 unset or 3)?  Its pointers' alignment is checked at launch. */
bool cp_tiled_async(const cp_job *j);
/* Can jobs[0..n) run as one launch: 2 to CP_GROUP_MAX same-dtype affine jobs of one unit size, at most
 * CP_GROUP_DIMS dims, none tiled (false when XDNN_COPY_ONE_LAUNCH=0)?  cp_launch_group enqueues them so. */
bool cp_group_ok(const cp_job *jobs, int n);
int cp_launch_group(const cp_job *jobs, int n, void *stream);

#ifdef __cplusplus
}
#endif

#endif

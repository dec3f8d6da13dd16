/* eng_copy.h — host-side analysis of the copy_strided engine (eng_copy.c),
 * exposed for unit tests: the copy jobs a tensor op becomes. */
#ifndef XDNN_GPU_ENG_COPY_H
#define XDNN_GPU_ENG_COPY_H

#include "gpu/kern_copy.h"
#include "gpu/partition.h"

#include <stdbool.h>
#include <stddef.h>

struct xnode;
struct op_desc;

enum { CP_MAX_JOBS = GG_MAX_IN > GG_MAX_OUT ? GG_MAX_IN : GG_MAX_OUT };

typedef struct cp_plan {
    int njobs;
    cp_job jobs[CP_MAX_JOBS];
    int src[CP_MAX_JOBS], dst[CP_MAX_JOBS];   /* ggraph tensors of each job */
    bool one_launch;                          /* the jobs as one launch (cp_group_ok, decided at plan time) */
} cp_plan;

/* Is op (an op_id) one of the tensor family: reshape, permute, broadcast, slice, concat, split, pad? */
bool gpu_copy_op(int op);
/* Slice node n over an axis of length L: Python's slice.indices(L), then the count. */
void gpu_slice_resolve(const struct xnode *n, const struct op_desc *d, int64_t L, int64_t *start, int64_t *step,
                       int64_t *count);
/* The jobs for partition p; false with a reason naming the op and value. */
bool gpu_copy_analyze(const gplan *pl, const gpart *p, cp_plan *cp, char *why, size_t len);

#endif

/* gpu_fixture.h — the set-up the host-side GPU unit tests share: parse a
 * .dnn text, bind it, lower it to the GPU graph and partition it, all without
 * a GPU.  Linked into every unit test; empty when built without CUDA. */
#ifndef XDNN_TEST_GPU_FIXTURE_H
#define XDNN_TEST_GPU_FIXTURE_H

#if XDNN_HAVE_CUDA
#include "gpu/codegen.h"
#include "gpu/partition.h"
#include "xdnn.h"

#include <stdbool.h>

typedef struct fixture {
    xdnn_module_t *m;
    xdnn_diags_t *d;
    arena *ar;
    ggraph *g;
    gplan *pl;
} fixture;

/* False (with a failed CHECK and the diagnostics printed) if the text does not bind. */
bool fixture_setup(fixture *f, const char *text);
void fixture_teardown(fixture *f);
/* The partition anchored on the first node of `op`; a failed CHECK if none. */
const gpart *fixture_part_of_op(const gplan *p, const char *op);
/* The index of the ggraph tensor named `name`; a failed CHECK (and 0) if none. */
int fixture_tensor(const ggraph *g, const char *name);
/* The NVRTC kernel partition p generates, as its engine would: a pointwise fusion, a reduction with its
 * prologue, a matmul's epilogue.  1: *k holds it; 0: p has none (another kind, or a matmul that cuBLASLt
 * finishes alone); -1: generation failed (diagnostics in g's sink) or the matmul analysis refused (why). */
int fixture_partition_kernel(const gplan *pl, const gpart *p, cg_kernel *k, char *why, size_t len);
#endif

#endif

/* lower.h — from a bound IR graph to the GPU backend's ggraph, and running a
 * ggraph on the device with host buffers (what gpu_run and the differential
 * tester both use). */
#ifndef XDNN_GPU_LOWER_H
#define XDNN_GPU_LOWER_H

#include "core/ir.h"
#include "gpu/codegen.h"
#include "gpu/gpu.h"

/* Tensor i of the ggraph is tensor i of g (scalars are appended). */
ggraph *gpu_lower(const xgraph *g, arena *ar);
/* Drop reshape/permute/slice/split/broadcast nodes whose results strides can
 * express, making those results views (views.c); before gg_finish. */
void gpu_fold_views(ggraph *g);

/* Plan, build, run and time g.  host[t] holds each input's bytes (in its
 * dtype and strides, gg_span_bytes long) and receives each output's.  Plan
 * lifetime objects live in g->ar. */
xdnn_status gpu_run_ggraph(ggraph *g, void *const *host, const gpu_run_opts *o, gpu_report *rep,
                           xdnn_diags_t *d);

#endif

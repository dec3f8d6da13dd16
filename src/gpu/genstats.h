/* genstats.h — batchnorm statistics from the producing conv's store (cuDNN's
 * "genstats"): a forward conv on conv_igemm_wgmma whose y is the x of a
 * training batchnorm on norm_welford's channels-last kernels writes, besides
 * y, one (count, mean, M2) partial per channel and 128-row M tile of the
 * values it stored (rounded to y's dtype) in norm_cl.cu's part[split][C][4]
 * layout, split = the M tile, at the head of the batchnorm partition's
 * workspace; the batchnorm then runs its finalize and apply only, x read
 * once instead of twice.  The workspace is live from the conv's partition on
 * (plan.c).  XDNN_GENSTATS=1 / XDNN_NO_GENSTATS=1 switch it on / off
 * (gpu_genstats_enabled: the default, and why). */
#ifndef XDNN_GPU_GENSTATS_H
#define XDNN_GPU_GENSTATS_H

#include "gpu/device.h"
#include "gpu/partition.h"

/* After the engine selection (or a restore): mark every such pair (the
 * partitions' genstats / gen_peer) and recompute both workspaces.  Returns
 * the number of pairs; with log, one line per pair. */
int gpu_genstats_pair(gplan *pl, const gpu_device *dev, FILE *log);

/* Is genstats on (the environment, else the default)? */
bool gpu_genstats_enabled(void);

/* Clears p's pairing and its peer's (a partition timed or run alone). */
void gpu_genstats_unpair(gplan *pl, gpart *p);

#endif

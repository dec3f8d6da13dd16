/* eng_rng.h — host-side analysis of the rng_philox engine (eng_rng.c),
 * exposed for unit tests: the Philox key, stream and addressing of a
 * dropout / rng node. */
#ifndef XDNN_GPU_ENG_RNG_H
#define XDNN_GPU_ENG_RNG_H

#include "gpu/kern_rng.h"
#include "gpu/partition.h"

#include <stdbool.h>
#include <stddef.h>

/* The job for partition p; tids = the x, y, mask tensors (-1 = none). */
bool gpu_rng_analyze(const gplan *pl, const gpart *p, rg_job *j, int tids[3], char *why, size_t len);

#endif

/* fingerprint.h — who a plan or a tune result belongs to: a one-line device
 * fingerprint and the FNV-1a hash used for cache keys and plan checksums.
 *
 * CPU:  "cpu; model=<model name from /proc/cpuinfo>" (no thread count: a run-time choice)
 * GPU:  "gpu; name=<device name>; sm=<SM count>; cc=<major.minor>; driver=<version>"
 *       (filled by the GPU backend through plan_gpu_fingerprint; see plan_gpu_hooks.h)
 * Two fingerprints are the same device exactly when the strings are equal;
 * a plan also accepts one that differs in the driver field only (see
 * fingerprint_same_hardware). */
#ifndef XDNN_PLAN_FINGERPRINT_H
#define XDNN_PLAN_FINGERPRINT_H

#include "xdnn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { FINGERPRINT_MAX = 512 };

/* Fingerprint of the CPU this process runs on (always succeeds). */
void fingerprint_cpu(char *buf, size_t len);
/* Fingerprint of the device a run goes to: the GPU when use_gpu, else the CPU.
 * XDNN_ERR_DEVICE when the GPU one cannot be read. */
xdnn_status fingerprint_device(bool use_gpu, char *buf, size_t len);

/* Equal apart from the "; driver=" field: the same GPU model, SMs and
 * compute capability under another driver.  A plan's choices and its sm_XX
 * cubins stay valid there (the driver loads cubins of any older toolkit), so
 * a plan made under another driver loads with a note, not a refusal; the
 * tune cache keeps the whole string as its key (timings may move with the
 * driver). */
bool fingerprint_same_hardware(const char *a, const char *b);

/* FNV-1a 64-bit over bytes; `h` chains (start with FNV64_INIT). */
#define FNV64_INIT UINT64_C(0xcbf29ce484222325)
uint64_t fnv1a64(uint64_t h, const void *data, size_t len);

#endif

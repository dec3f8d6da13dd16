/* device_model.c — GPUs described rather than opened, so the host-side
 * planner (lowering, partitioning, engine selection, workspace layout) can
 * plan for a device that is not in this machine: `xdnn plan --device-model
 * h100 --explain G` on a laptop or in CI.  The figures are the vendor's
 * (SM count, the opt-in shared memory per block, L2) for the common SKUs. */
#include "gpu/device.h"

#include <stdio.h>
#include <string.h>

typedef struct device_model {
    const char *key;
    gpu_device dev;
} device_model;

static const device_model models[] = {
    {"h100", {.name = "NVIDIA H100 80GB HBM3 (model)", .sm_count = 132, .cc_major = 9, .cc_minor = 0,
              .mem_total = (size_t)80 << 30, .l2_bytes = (size_t)50 << 20, .smem_optin = 232448, .arch = "sm_90"}},
    {"h200", {.name = "NVIDIA H200 (model)", .sm_count = 132, .cc_major = 9, .cc_minor = 0,
              .mem_total = (size_t)141 << 30, .l2_bytes = (size_t)50 << 20, .smem_optin = 232448, .arch = "sm_90"}},
    {"a100", {.name = "NVIDIA A100-SXM4-80GB (model)", .sm_count = 108, .cc_major = 8, .cc_minor = 0,
              .mem_total = (size_t)80 << 30, .l2_bytes = (size_t)40 << 20, .smem_optin = 166912, .arch = "sm_80"}},
};

bool gpu_device_model(const char *key, gpu_device *out)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcmp(models[i].key, key) == 0) {
            *out = models[i].dev;
            out->ordinal = -1;
            return true;
        }
    return false;
}

void gpu_device_model_names(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof models / sizeof models[0] && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", models[i].key);
}

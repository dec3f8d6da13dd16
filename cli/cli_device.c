/* cli_device.c — `--device N` for run, plan and bench: GPU N, counted as CUDA
 * counts (nvidia-smi's order unless CUDA_DEVICE_ORDER says otherwise).
 *
 * The process narrows its own CUDA_VISIBLE_DEVICES to that GPU before CUDA
 * starts, as a Slurm GPU binding does: everything in it (plans, the device
 * fingerprint, the tune cache) then sees the chosen GPU as device 0, and two
 * identical GPUs share one tune-cache key.  An existing CUDA_VISIBLE_DEVICES
 * list is honoured: N counts within it. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static int selected = -1;          /* for cli_device_note */
static char selected_vis[256];

int cli_device_ordinal(const char *arg)
{
    if (!arg[0] || strspn(arg, "0123456789") != strlen(arg) || strlen(arg) > 4)
        return -1;
    return atoi(arg);
}

bool cli_visible_device(int n, char *buf, size_t len, char *why, size_t wlen)
{
    const char *list = getenv("CUDA_VISIBLE_DEVICES");
    if (!list) {
        snprintf(buf, len, "%d", n);
        return true;
    }
    const char *p = list;
    for (int i = 0; i < n && p; i++) {
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    size_t l = p ? strcspn(p, ",") : 0;
    if (!p || l == 0 || l >= len) {
        snprintf(why, wlen, "GPU %d: CUDA_VISIBLE_DEVICES='%s' shows fewer GPUs", n, list);
        return false;
    }
    snprintf(buf, len, "%.*s", (int)l, p);
    return true;
}

int cli_select_device(const char *cmd, int n)
{
    char vis[256], why[512];
    if (!cli_visible_device(n, vis, sizeof vis, why, sizeof why))
        return cli_usage_error(cmd, "--device %s", why);
    setenv("CUDA_VISIBLE_DEVICES", vis, 1);
    selected = n;
    snprintf(selected_vis, sizeof selected_vis, "%s", vis);
    return -1;
}

void cli_device_note(char *why, size_t len)
{
    size_t at = strlen(why);
    if (selected >= 0 && at + 1 < len)
        snprintf(why + at, len - at, " (--device %d: this process sees only CUDA_VISIBLE_DEVICES=%s)", selected,
                 selected_vis);
}

/* cli_memory.c — the host-memory budget of a CPU reference run: sizes as
 * users write them (--max-memory 64G), as people read them (3.2 GiB), what
 * the machine has free, and the early refusal when a graph cannot fit. */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cli_parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v >= 0))
        return false;
    double unit = 1;
    if (*end) {
        const char *units = "KMGT";
        const char *u = strchr(units, *end == 'k' ? 'K' : *end);
        if (!u || !*u)
            return false;
        unit = pow(1024, (double)(u - units + 1));
        end++;
        if (*end == 'i')
            end++;
        if (*end == 'B')
            end++;
    }
    if (*end || v * unit >= 18446744073709551616.0)
        return false;
    *out = (uint64_t)(v * unit);
    return true;
}

const char *cli_format_bytes(char *buf, size_t len, uint64_t bytes)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6)
        v /= 1024, u++;
    if (u == 0)
        snprintf(buf, len, "%" PRIu64 " bytes", bytes);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

bool cli_mem_available(uint64_t *bytes)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return false;
    char line[256];
    bool found = false;
    unsigned long long kb;
    while (!found && fgets(line, sizeof line, f))
        found = sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
    fclose(f);
    if (found)
        *bytes = (uint64_t)kb * 1024;
    return found;
}

int cli_check_reference_memory(const char *cmd, const xdnn_graph_t *g, uint64_t max_memory)
{
    uint64_t tensors, scratch;
    if (xdnn_graph_reference_memory(g, &tensors, &scratch) != XDNN_OK)
        return -1;
    uint64_t need = tensors > UINT64_MAX - scratch ? UINT64_MAX : tensors + scratch, limit = max_memory;
    if (!limit && !cli_mem_available(&limit))
        return -1; /* no budget to hold it to */
    if (need <= limit)
        return -1;
    char a[32], b[32], c[32], l[32];
    fprintf(stderr, "xdnn %s: graph '%s' needs %s of host memory on the CPU reference (tensors %s + scratch %s), ",
            cmd, xdnn_graph_name(g), cli_format_bytes(a, sizeof a, need), cli_format_bytes(b, sizeof b, tensors),
            cli_format_bytes(c, sizeof c, scratch));
    if (max_memory)
        fprintf(stderr, "over the limit of %s (--max-memory); nothing was run\n", cli_format_bytes(l, sizeof l, limit));
    else
        fprintf(stderr, "more than the %s available (MemAvailable); nothing was run (--max-memory sets the limit)\n",
                cli_format_bytes(l, sizeof l, limit));
    return XDNN_ERR_NOMEM;
}

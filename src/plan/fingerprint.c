/* fingerprint.c — device fingerprints (the CPU model, or what the
 * GPU backend reports) and FNV-1a 64, the hash of cache keys and plan checksums. */
#include "plan/fingerprint.h"

#include "plan/plan_gpu_hooks.h"

#include <stdio.h>
#include <string.h>

uint64_t fnv1a64(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

/* "model name : Intel(R) Xeon(R) ..." from /proc/cpuinfo; the machine type
 * when there is none (e.g. some ARM kernels). */
static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Model", 5) != 0)
            continue;
        const char *colon = strchr(line, ':');
        if (!colon)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        snprintf(buf, len, "%s", colon);
        buf[strcspn(buf, "\r\n")] = 0;
        /* ';' separates fingerprint fields: keep it out of the model name */
        for (char *c = buf; *c; c++)
            if (*c == ';')
                *c = ',';
        break;
    }
    fclose(f);
}

void fingerprint_cpu(char *buf, size_t len)
{
    char model[256];
    cpu_model(model, sizeof model);
    /* No thread count: threads are chosen at run time (OMP_NUM_THREADS), and
     * the CPU reference computes the same result with any number of them. */
    snprintf(buf, len, "cpu; model=%s", model);
}

xdnn_status fingerprint_device(bool use_gpu, char *buf, size_t len)
{
    if (!use_gpu) {
        fingerprint_cpu(buf, len);
        return XDNN_OK;
    }
    return plan_gpu_fingerprint(buf, len);
}

/* s without its "; driver=..." field (up to the next ';' or the end) into
 * out[FINGERPRINT_MAX]; whether s had one. */
static bool strip_driver(const char *s, char *out)
{
    snprintf(out, FINGERPRINT_MAX, "%s", s);
    char *f = strstr(out, "; driver=");
    if (!f)
        return false;
    char *end = strchr(f + 1, ';');
    memmove(f, end ? end : f + strlen(f), strlen(end ? end : f + strlen(f)) + 1);
    return true;
}

bool fingerprint_same_hardware(const char *a, const char *b)
{
    char sa[FINGERPRINT_MAX], sb[FINGERPRINT_MAX];
    bool da = strip_driver(a, sa), db = strip_driver(b, sb);
    return da && db && strcmp(sa, sb) == 0;
}

/* fuzz_plan.c — libFuzzer harness for the plan reader (src/plan/plan_format.c
 * and xdnn_plan_deserialize): any byte string must load or give an error,
 * never crash, leak or read out of bounds.
 *
 * The checksum would stop almost every mutation at the door, so each input is
 * tried twice: as is, and with its trailer rewritten to a correct checksum,
 * which sends mutated sections, JSON and graphs through the whole reader
 * (structure, partitions, blobs, graph parse and bind).
 *
 *   make fuzz-build FUZZ_BUILD=build-fuzz && build-fuzz/fuzz_plan -max_total_time=60 CORPUS
 * Seeds: plans written by `xdnn plan` (tests/fuzz/seeds/ has none checked in:
 * make some with `xdnn plan graphs/mlp_gelu.dnn --set T=2 --set D=4 -o s.xplan`). */
#include "plan/plan.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void try_bytes(const unsigned char *bytes, size_t len)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_plan_t *p = NULL;
    xdnn_status s = xdnn_plan_deserialize(bytes, len, XDNN_PLAN_ANY_DEVICE, d, &p);
    if (s == XDNN_OK) {
        if (!p || !xdnn_plan_graph(p))
            abort(); /* success must give a plan with a bound graph */
        /* what loads must serialize again */
        void *out;
        size_t olen;
        if (xdnn_plan_serialize(p, &out, &olen, d) != XDNN_OK)
            abort();
        free(out);
    } else if (p || xdnn_diags_error_count(d) == 0) {
        abort(); /* a failure must report an error and return no plan */
    }
    xdnn_plan_destroy(p);
    xdnn_diags_destroy(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_bytes(data, size);
    if (size < 36 || size > (1u << 20))
        return 0;
    unsigned char *copy = malloc(size);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    size_t body = size - 20;
    uint64_t h = fnv1a64(FNV64_INIT, copy, body);
    memcpy(copy + body, "CSUM", 4);
    unsigned char le[16] = {8};
    for (int i = 0; i < 8; i++)
        le[8 + i] = (unsigned char)(h >> (8 * i));
    memcpy(copy + body + 4, le, 16);
    try_bytes(copy, size);
    free(copy);
    return 0;
}

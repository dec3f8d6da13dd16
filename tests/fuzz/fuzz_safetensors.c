/* fuzz_safetensors.c — libFuzzer harness for the safetensors reader: any
 * byte string must parse or fail with an error, never crash, leak or read
 * out of bounds.  Each input is read twice: the only tensor (no key) and the
 * tensor named "a".
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *       tests/fuzz/fuzz_safetensors.c src/data/{dtype,philox,npy,raw,safetensors,stats}.c \
 *       src/core/{tensor,diag,arena,fileio}.c -lcjson -lm -o fuzz_safetensors
 *   ./fuzz_safetensors -max_total_time=30 */
#include "data/data.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const keys[2] = {NULL, "a"};
    for (int k = 0; k < 2; k++) {
        xdnn_diags_t *d = xdnn_diags_create();
        host_tensor t;
        xdnn_status st = safetensors_parse("fuzz.safetensors", data, size, keys[k], &t, d);
        if (st == XDNN_OK) {
            tensor_stats s;
            tensor_compute_stats(&t, &s);
        } else if (xdnn_diags_error_count(d) == 0 || t.data) {
            abort();
        }
        host_tensor_free(&t);
        xdnn_diags_destroy(d);
    }
    return 0;
}

/* fuzz_npy.c — libFuzzer harness for the .npy reader: any byte string must
 * either parse into a consistent tensor or give an error, never crash, leak
 * or read out of bounds.  A parsed tensor is walked (stats) so its size and
 * data are checked too.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *       tests/fuzz/fuzz_npy.c src/data/{dtype,philox,npy,raw,safetensors,stats}.c \
 *       src/core/{tensor,diag,arena,fileio}.c -lcjson -lm -o fuzz_npy
 *   ./fuzz_npy -max_total_time=30 */
#include "data/data.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xdnn_diags_t *d = xdnn_diags_create();
    host_tensor t;
    xdnn_status st = npy_parse("fuzz.npy", data, size, &t, d);
    if (st == XDNN_OK) {
        if (t.numel > (int64_t)size)
            abort(); /* more elements than input bytes: a size check is missing */
        tensor_stats s;
        tensor_compute_stats(&t, &s);
    } else if (xdnn_diags_error_count(d) == 0 || t.data) {
        abort(); /* a failure must report an error and allocate nothing */
    }
    host_tensor_free(&t);
    xdnn_diags_destroy(d);
    return 0;
}

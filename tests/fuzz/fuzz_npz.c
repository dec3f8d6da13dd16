/* fuzz_npz.c — libFuzzer harness for the .npz reader (src/data/npz.c): every
 * offset and size in a zip comes from the file, so any byte string must give
 * the array or an error, never crash, leak or read out of bounds.  Each input
 * is asked for two keys ("x", the seeds' array, and one that is absent).
 * Seeds: tests/fuzz/seeds.sh writes np.savez-like archives. */
#include "data/data.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const keys[2] = {"x", "absent"};
    for (int k = 0; k < 2; k++) {
        xdnn_diags_t *d = xdnn_diags_create();
        host_tensor t;
        xdnn_status st = npz_parse("fuzz.npz", data, size, keys[k], &t, d);
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
    }
    return 0;
}

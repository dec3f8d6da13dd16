/* fuzz_dnn.c — libFuzzer harness for the .dnn front end and inference.
 *
 * Any byte string must be rejected with diagnostics or accepted; never a
 * crash, a sanitizer report, a hang or a leak.  Text that parses is pushed
 * further: every graph is bound (params, asserts, dims, attributes, shape and
 * dtype inference, validation of every node), twice, because bind may be
 * called again on the same graph; and when every graph binds, the module's
 * JSON must read back (the JSON reader checks attribute types as it reads,
 * so a module that fails bind may legitimately give unreadable JSON).
 * A parse that succeeds without an error-free diagnostics list, or a failure
 * without an error, traps so the fuzzer keeps the input.
 *
 * `make fuzz` builds it with clang -fsanitize=fuzzer,address,undefined and
 * runs it on a seed corpus of every .dnn file under graphs/ and tests/.
 * Built with -DFUZZ_STANDALONE it is a plain program that runs the files
 * named on its command line through the same function (gcc, valgrind):
 *   cc -DFUZZ_STANDALONE -Iinclude -Isrc tests/fuzz/fuzz_dnn.c build/libxdnn.a ...
 */
#include "xdnn.h"

#include "fuzz_check.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bind every graph of m; traps if a bind fails without saying why.
 * Returns whether every graph bound. */
static bool bind_all(xdnn_module_t *m)
{
    bool all_ok = true;
    size_t n = xdnn_module_graph_count(m);
    for (size_t i = 0; i < n; i++) {
        xdnn_graph_t *g = xdnn_module_graph(m, i);
        for (int pass = 0; pass < 2; pass++) {
            xdnn_diags_t *d = xdnn_diags_create();
            xdnn_status st = xdnn_graph_bind(g, NULL, 0, d);
            FUZZ_CHECK(st == XDNN_OK || xdnn_diags_error_count(d) > 0, "a failed bind must report an error", NULL);
            xdnn_diags_destroy(d);
            if (st != XDNN_OK) {
                all_ok = false;
                break;
            }
        }
    }
    return all_ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    xdnn_status st = xdnn_module_parse("fuzz.dnn", (const char *)data, size, false, d, &m);
    if (st == XDNN_OK) {
        FUZZ_CHECK(m && xdnn_diags_error_count(d) == 0, "success must mean a module and no errors", d);
        bool bound = bind_all(m);
        char *json = xdnn_module_to_json(m);
        FUZZ_CHECK(json, "a parsed module must write JSON", NULL);
        xdnn_diags_t *d2 = xdnn_diags_create();
        xdnn_module_t *again = NULL;
        xdnn_status back = xdnn_module_parse("fuzz.json", json, strlen(json), true, d2, &again);
        FUZZ_CHECK(back == XDNN_OK || !bound, "the JSON of a module that binds must read back", d2);
        xdnn_module_destroy(again);
        xdnn_diags_destroy(d2);
        free(json);
    } else {
        FUZZ_CHECK(!m && xdnn_diags_error_count(d) > 0, "failure must mean no module and at least one error", NULL);
    }
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
    return 0;
}

#ifdef FUZZ_STANDALONE
#include <stdio.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        size_t cap = 1 << 16, n = 0;
        uint8_t *buf = malloc(cap);
        for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
            n += k;
            if (n == cap)
                buf = realloc(buf, cap *= 2);
        }
        fclose(f);
        if (!buf)
            return 1;
        fuzz_input = argv[i];
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
    }
    return 0;
}
#endif

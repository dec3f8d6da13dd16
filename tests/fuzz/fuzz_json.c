/* fuzz_json.c — libFuzzer harness for the JSON reader (and the writers).
 *
 * Any input must be rejected with diagnostics or accepted; never a crash, a
 * sanitizer report or a leak.  An accepted module must also survive the
 * round trips the unit tests pin: its JSON reads back and writes the same
 * JSON, and its canonical .dnn parses back.  A broken round trip traps, so
 * the fuzzer keeps the input.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *         tests/fuzz/fuzz_json.c <library objects> -lcjson -lm -fopenmp
 * Built with -DFUZZ_STANDALONE it is a plain program that runs the files
 * named on its command line through the same function (gcc, valgrind).
 */
#include "xdnn.h"

#include "fuzz_check.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    if (xdnn_module_parse("fuzz.json", (const char *)data, size, true, d, &m) == XDNN_OK) {
        char *json = xdnn_module_to_json(m);
        char *dnn = xdnn_module_to_dnn(m);
        FUZZ_CHECK(json && dnn, "a module read must write JSON and .dnn", NULL);
        xdnn_module_t *again = NULL;
        FUZZ_CHECK(xdnn_module_parse("fuzz.json", json, strlen(json), true, d, &again) == XDNN_OK,
                   "our own JSON must read back", d);
        char *json2 = xdnn_module_to_json(again);
        FUZZ_CHECK(json2 && strcmp(json, json2) == 0, "our own JSON must write the same JSON again", NULL);
        xdnn_module_t *from_dnn = NULL;
        /* The canonical .dnn must parse (includes are already flattened). */
        FUZZ_CHECK(xdnn_module_parse("fuzz.dnn", dnn, strlen(dnn), false, d, &from_dnn) == XDNN_OK,
                   "the canonical .dnn must parse", d);
        free(json2);
        free(json);
        free(dnn);
        xdnn_module_destroy(again);
        xdnn_module_destroy(from_dnn);
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

/* fuzz_check.h — the harnesses' invariants.  A broken one prints one line
 * starting "ERROR:" (libFuzzer's fork mode copies only such lines of a
 * child's log into `make fuzz`'s output, so CI says which invariant broke and,
 * from the diagnostics d when given, why) and traps, so the fuzzer keeps the
 * input. */
#ifndef XDNN_FUZZ_CHECK_H
#define XDNN_FUZZ_CHECK_H

#include "xdnn.h"

#include <stdio.h>

/* The file being run when built with -DFUZZ_STANDALONE (NULL under libFuzzer). */
static const char *fuzz_input;

static inline void fuzz_broken(const char *what, const xdnn_diags_t *d, int line)
{
    const xdnn_diag *first = NULL;
    for (size_t i = 0; d && i < xdnn_diags_count(d) && !first; i++)
        if (xdnn_diags_get(d, i)->severity == XDNN_SEV_ERROR)
            first = xdnn_diags_get(d, i);
    fprintf(stderr, "ERROR: fuzz invariant broken (line %d%s%s): %s%s%s\n", line, fuzz_input ? ", input " : "",
            fuzz_input ? fuzz_input : "", what, first ? ": " : "", first ? first->message : "");
    fflush(stderr);
    __builtin_trap();
}

/* FUZZ_CHECK(cond, what, d): d (may be NULL) holds the diagnostics that explain a failure. */
#define FUZZ_CHECK(cond, what, d) ((cond) ? (void)0 : fuzz_broken(what, d, __LINE__))

#endif

/* parse.h — the .dnn front end: flex/bison parser, include handling, fragment
 * expansion and expression flattening into the IR (see man/dnn.5). */
#ifndef XDNN_PARSE_H
#define XDNN_PARSE_H

#include "../core/ir.h"

/* Parse .dnn text `file` into module m (params, asserts, graphs).  Includes are
 * resolved relative to the file, then include_dirs, then $XDNN_PATH.  Reports
 * as many errors as it can (statement-level recovery) before returning the
 * status of the first. */
xdnn_status dnn_parse_into(xdnn_module_t *m, const char *file, const char *text, size_t len,
                           const char *const *include_dirs, xdnn_diags_t *d);

/* Parse a standalone compile-time expression ("3*D", "1.0 / sqrt(HD)").
 * `origin` names the text in diagnostics (e.g. "g.json:/graphs/0/..."); the
 * locations of the result are offset from `base`.  NULL on error. */
expr *expr_parse_text(arena *a, const char *text, xloc base, xdnn_diags_t *d);

/* Parse an initializer call ("randn(std=0.5)") into an xinit with positional
 * arguments named.  NULL on error. */
xinit *init_parse_text(arena *a, const char *text, xloc base, xdnn_diags_t *d);

/* Parse a keyword list "stride=2, pad=[1,1]" into names/exprs. */
bool kwargs_parse_text(arena *a, const char *text, xloc base, xdnn_diags_t *d, const char ***names,
                       expr ***values, int *n);

/* Parameter names of each initializer, positional order (shared with JSON). */
typedef struct init_spec {
    const char *fn;
    const char *const *params;
    int nparams;
} init_spec;
const init_spec *init_spec_find(const char *fn);

#endif

/* diag.h — internal side of diagnostics: source locations and the reporter.
 *
 * Every token, AST and IR node carries an xloc.  Reporting never stops the
 * caller; the caller decides when enough errors were seen (DIAG_MAX_ERRORS).
 */
#ifndef XDNN_DIAG_H
#define XDNN_DIAG_H

#include "xdnn.h"

#include <stdarg.h>

enum { DIAG_MAX_ERRORS = 20 };

typedef struct xloc {
    const char *file; /* interned in the diags or module arena; NULL = no location */
    int line, col, col_end;
} xloc;

static inline xloc xloc_none(void) { return (xloc){0}; }

/* Keep a copy of a file's text so errors can show the source line. */
void diag_add_source(xdnn_diags_t *d, const char *file, const char *text, size_t len);

void diag_report(xdnn_diags_t *d, xdnn_severity sev, xdnn_status st, xloc loc, const char *json_path,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void diag_vreport(xdnn_diags_t *d, xdnn_severity sev, xdnn_status st, xloc loc, const char *json_path,
                  const char *fmt, va_list ap);

#define diag_error(d, st, loc, ...) diag_report((d), XDNN_SEV_ERROR, (st), (loc), NULL, __VA_ARGS__)
#define diag_warning(d, loc, ...) diag_report((d), XDNN_SEV_WARNING, XDNN_OK, (loc), NULL, __VA_ARGS__)
#define diag_note(d, loc, ...) diag_report((d), XDNN_SEV_NOTE, XDNN_OK, (loc), NULL, __VA_ARGS__)

/* True once DIAG_MAX_ERRORS errors were reported: stop recovering. */
bool diag_too_many(const xdnn_diags_t *d);

#endif

/* json.h — the JSON form of a module (read and written with cJSON) and the
 * canonical .dnn writer.  See man/dnn.5, "JSON FORM". */
#ifndef XDNN_JSON_H
#define XDNN_JSON_H

#include "../core/ir.h"

/* Read a JSON module.  Syntax errors give line:col; semantic errors give a
 * JSON pointer (/graphs/0/nodes/3/attrs/stride) and line:col of the value. */
xdnn_status json_read_into(xdnn_module_t *m, const char *file, const char *text, size_t len,
                           xdnn_diags_t *d);
/* Serialize; malloc'ed NUL-terminated text, caller frees.  NULL on OOM. */
char *json_write_module(const xdnn_module_t *m);
/* Flags for json_write_module_ex. */
enum { JSON_WRITE_NO_LOCS = 1 }; /* leave out "loc" and "origin" (round-trip tests, diffs) */
char *json_write_module_ex(const xdnn_module_t *m, unsigned flags);
/* Canonical .dnn text of the (flattened) module. */
char *dnn_write_module(const xdnn_module_t *m);

#endif

/* json_read.h — internal interface of the JSON reader: where each cJSON item
 * sits in the text (json_scan.c), and the reader state with its error,
 * path and value helpers (json_value.c) used by the schema walk
 * (json_read.c, json_read_graph.c, json_read_node.c). */
#ifndef XDNN_JSON_READ_H
#define XDNN_JSON_READ_H

#include "json_internal.h"

#include <cjson/cJSON.h>

/* ---------------------------------------------------------------- positions */

/* Byte offsets of one item: its key (objects' members; -1 otherwise) and
 * its value's first byte and length (the number lexeme, for numbers). */
typedef struct jspan {
    long key_off, val_off, val_len;
} jspan;

typedef struct jposmap {
    const cJSON **keys;
    jspan *spans;
    size_t cap;
} jposmap;

/* Walk the text beside the tree cJSON built from it.  False on OOM (the map
 * is then empty and positions are unknown, which is not an error). */
bool jpos_build(jposmap *pm, const char *text, size_t len, const cJSON *root);
void jpos_free(jposmap *pm);
const jspan *jpos_get(const jposmap *pm, const cJSON *item);

/* Strict RFC 8259 syntax check (json_syntax.c).  On an error returns false
 * with the byte offset and a message (written into buf). */
bool json_syntax_check(const char *text, size_t len, size_t *err_off, const char **msg, char *buf, size_t buflen);

/* ---------------------------------------------------------------- reader state */

/* Which tensors an expression in a graph may name in dim(t, i), mirroring
 * what the .dnn front end allows at the statement the writer emits. */
typedef enum ct_scope {
    CT_NO_TENSORS, /* graph params and context: before any declaration */
    CT_BEFORE,     /* a declaration: tensors earlier in "tensors" */
    CT_DEFINED,    /* a node: inputs, weights and results of earlier nodes */
    CT_ALL         /* asserts and checks: after everything */
} ct_scope;

typedef struct jreader {
    xdnn_module_t *m;
    arena *ar;               /* the module arena: everything the IR keeps */
    xdnn_diags_t *d;
    const char *file;        /* interned in m->ar */
    const char *text;        /* NUL-terminated copy of the input */
    size_t len;
    long *line_starts;       /* offset of each line's first byte (malloc'ed; NULL after OOM) */
    size_t nlines;
    jposmap pos;
    sbuf path;               /* the JSON pointer of what is being read */
    int errors;
    xdnn_status first;
    const char *last_loc_file; /* cache for interning "loc" file names */
    xgraph *g;               /* graph being read; NULL at module level */
    ct_scope scope;          /* for expressions in g */
    size_t scope_limit;      /* CT_BEFORE: tensors [0, limit) are visible */
} jreader;

/* JSON pointer segments (RFC 6901 escaping).  Each push returns a mark to
 * give back to jr_pop. */
size_t jr_push_key(jreader *r, const char *key);
size_t jr_push_index(jreader *r, size_t i);
void jr_pop(jreader *r, size_t mark);

/* Location of an item's value (or of its key, for errors about the key). */
xloc jr_loc(const jreader *r, const cJSON *item, bool key);
/* Report an error at the current path; returns false for `return jr_err(...)`. */
bool jr_err(jreader *r, const cJSON *at, bool at_key, xdnn_status st, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
bool jr_too_many(const jreader *r);

/* "string \"1\"", "number 1.5", "true", "null", "an array", "an object". */
const char *jr_describe(jreader *r, const cJSON *item);
/* Schema helpers: each reports "expected <what>, got <describe>" at `item`. */
bool jr_want_object(jreader *r, const cJSON *item, const char *what);
bool jr_want_array(jreader *r, const cJSON *item, const char *what);
bool jr_want_string(jreader *r, const cJSON *item, const char *what);
/* Check an object's keys: every key must be in `allowed` (NULL-terminated)
 * or start with "x-", and no key may repeat.  `required` keys must exist. */
bool jr_keys(jreader *r, const cJSON *obj, const char *const *allowed, const char *const *required);
/* Report repeated keys of a map-like object (tensors, attrs, ...). */
bool jr_no_duplicate_keys(jreader *r, const cJSON *obj);
/* Member `key` of obj (first one), or NULL. */
const cJSON *jr_get(const cJSON *obj, const char *key);
static inline bool jr_is_ext_key(const char *k) { return k[0] == 'x' && k[1] == '-'; }

/* The value rule of json_write.c: JSON literal, array or {"expr": "..."}.
 * `dtype_names`: a JSON string is a dtype name (typed dtype positions).
 * NULL after an error. */
expr *jr_value(jreader *r, const cJSON *item, bool dtype_names, const char *what);
/* e, or NULL with an error when it is too deep to stand as a call's argument in .dnn text. */
expr *jr_call_arg(jreader *r, const cJSON *item, expr *e);
/* A .dnn expression held in a JSON string (`item`), parsed with the .dnn
 * grammar; NULL after an error. */
expr *jr_expr_text(jreader *r, const cJSON *item);
/* A JSON number written without fraction or exponent. */
bool jr_is_int_json(jreader *r, const cJSON *j);
/* An int literal: a JSON number without fraction or exponent. */
bool jr_int(jreader *r, const cJSON *item, const char *what, int64_t *out);
/* "file:line:col" into *out (file interned); false after an error. */
bool jr_loc_field(jreader *r, const cJSON *obj, xloc *out);
/* An initializer object {"fn": ..., <args>}. */
xinit *jr_init(jreader *r, const cJSON *item);

/* ---------------------------------------------------------------- schema walk */

/* json_read_graph.c */
void jr_graph(jreader *r, const cJSON *item);
/* json_read_node.c: one node of graph g */
void jr_node(jreader *r, xgraph *g, const cJSON *item);
/* Params ({name: {...}}) appended to a scope's vector; json_read.c. */
void jr_params(jreader *r, const cJSON *item, xgraph *g);
void jr_asserts(jreader *r, const cJSON *item, xgraph *g);

#endif

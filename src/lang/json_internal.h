/* json_internal.h — pieces shared by the JSON reader, the JSON writer and the
 * canonical .dnn writer: a growable malloc'ed string, name rules, the "loc"
 * spelling and the port/result names of a node. */
#ifndef XDNN_JSON_INTERNAL_H
#define XDNN_JSON_INTERNAL_H

#include "../core/ir.h"
#include "../ops/op.h"

#include <stdbool.h>
#include <stddef.h>

/* A malloc'ed string under construction.  After an allocation failure `oom`
 * is set and further appends do nothing, so callers check once at the end. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
    bool oom;
} sbuf;

void sb_putn(sbuf *b, const char *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_putc(sbuf *b, char c);
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hand over the string (NULL after OOM, which also frees it). */
char *sb_finish(sbuf *b);

/* dnn_is_plain_ident, dnn_is_writable_name: core/expr.h */

/* "file:line:col" of a location into `a`; NULL when there is none. */
char *loc_to_text(arena *a, xloc loc);

/* Port name of input slot i of a node of op `d` (variadic ports are x0, x1, ...).
 * Returns a static string or one written into buf. */
const char *port_name(const op_desc *d, int i, char *buf, size_t len);
/* Result name of result slot k (variadic results are y0, y1, ...). */
const char *result_name(const op_desc *d, int k);

/* A float literal as a number both JSON and .dnn read back exactly (keeps
 * the original spelling `text` when that is valid in both).  False for
 * inf/nan, which have no literal. */
bool float_literal_text(double f, const char *text, char *buf, size_t len);

#endif

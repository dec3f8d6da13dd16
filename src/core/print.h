/* print.h — words shared by the text views (print.c) and the JSON views
 * (print_json.c) of graphs and the op catalogue, so both say the same. */
#ifndef XDNN_CORE_PRINT_H
#define XDNN_CORE_PRINT_H

#include "ir.h"

#include "ops/op.h"

/* "input", "weight", "output" or "virtual" */
const char *print_kind_word(const xtensor *t);
/* "int", "floats", "dtype", ... */
const char *print_attr_type_word(attr_type t);

#endif

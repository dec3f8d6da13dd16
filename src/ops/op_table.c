/* op_table.c — the descriptor table generated from ops.def, and lookup. */
#include "op.h"

#include <string.h>

#define XDNN_OP(id) extern const op_desc op_##id##_desc;
#include "ops.def"
#undef XDNN_OP

const op_desc *const op_table[OP_COUNT] = {
#define XDNN_OP(id) &op_##id##_desc,
#include "ops.def"
#undef XDNN_OP
};

_Static_assert(sizeof op_table / sizeof op_table[0] == OP_COUNT, "op_table must match ops.def");

int op_lookup(const char *name)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(op_table[i]->name, name) == 0)
            return i;
    return -1;
}

int op_port_index(const op_desc *d, const char *port)
{
    for (int i = 0; i < d->nports; i++)
        if (strcmp(d->ports[i], port) == 0)
            return i;
    return -1;
}

int op_attr_index(const op_desc *d, const char *attr)
{
    for (int i = 0; i < d->nattrs; i++)
        if (strcmp(d->attrs[i].name, attr) == 0)
            return i;
    return -1;
}

size_t xdnn_op_count(void) { return OP_COUNT; }
const char *xdnn_op_name(size_t i) { return i < OP_COUNT ? op_table[i]->name : NULL; }

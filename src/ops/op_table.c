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

/* Each op's class: XDNN_OP_CLASS as ops.def sets it around each family. */
static const unsigned char op_classes[] = {
#define XDNN_OP(id) XDNN_OP_CLASS,
#include "ops.def"
#undef XDNN_OP
};

_Static_assert(sizeof op_classes == OP_COUNT, "op_classes must match ops.def");

op_class op_class_of(int op) { return op >= 0 && op < OP_COUNT ? (op_class)op_classes[op] : OPC_COUNT; }

const char *op_class_name(op_class c)
{
    static const char *const names[] = {"pointwise", "reduce", "matmul", "conv", "pool",
                                        "norm",      "sdpa",   "rnn",    "tensor", "random", "quant", "index"};
    _Static_assert(sizeof names / sizeof names[0] == OPC_COUNT, "one name per op class");
    return c < OPC_COUNT ? names[c] : "any";
}

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

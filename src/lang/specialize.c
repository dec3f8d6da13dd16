/* specialize.c — xdnn_module_specialize (include/xdnn.h): replace a param's
 * value in a module by a literal, so that the module converts or writes with
 * it (`xdnn convert --specialize P=V`).  The text is parsed by the .dnn
 * expression parser; derived params are refused (specialize what they use). */
#include "xdnn.h"

#include "core/ir.h"
#include "parse.h"

xdnn_status xdnn_module_specialize(xdnn_module_t *m, const char *name, const char *value_text, xdnn_diags_t *d)
{
    if (!m || !name || !value_text)
        return XDNN_ERR_USAGE;
    xparam *p = ir_find_param(m, NULL, name);
    for (size_t i = 0; !p && i < m->ngraphs; i++)
        p = ir_find_param(m, m->graphs[i], name);
    if (!p) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "--specialize: no param named '%s'", name);
        return XDNN_ERR_USAGE;
    }
    if (p->derived) {
        diag_error(d, XDNN_ERR_USAGE, p->loc, "--specialize: '%s' is derived; specialize the params it uses", name);
        return XDNN_ERR_USAGE;
    }
    expr *e = expr_parse_text(m->ar, value_text, (xloc){.file = "--specialize"}, d);
    if (!e)
        return XDNN_ERR_USAGE;
    if (!expr_is_literal(e)) {
        diag_error(d, XDNN_ERR_USAGE, xloc_none(), "--specialize %s=%s: the value must be a literal", name,
                   value_text);
        return XDNN_ERR_USAGE;
    }
    p->value = e;
    p->sweep = NULL;
    p->nsweep = 0;
    return XDNN_OK;
}

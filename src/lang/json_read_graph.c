/* json_read_graph.c — reading one graph of the JSON form: context, tensors,
 * outputs and checks; nodes are read in json_read_node.c.  Tensors are declared up front in "tensors"; a node
 * may only read a virtual tensor that an earlier node produced, and every
 * virtual tensor must be produced exactly once. */
#include "json_read.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- context */

static void jr_context(jreader *r, xgraph *g, const cJSON *item)
{
    static const char *const keys[] = {"io", "compute", "intermediate", "seed", "tf32", NULL};
    if (!jr_want_object(r, item, "a context object") || !jr_keys(r, item, keys, NULL))
        return;
    expr **slots[] = {&g->ctx_io, &g->ctx_compute, &g->ctx_intermediate, &g->ctx_seed, &g->ctx_tf32};
    for (int i = 0; i < 5; i++) {
        const cJSON *v = jr_get(item, keys[i]);
        if (!v)
            continue;
        size_t mark = jr_push_key(r, keys[i]);
        /* io, compute and intermediate are dtype names, never expressions:
         * the .dnn form (`graph g(io = f16)`) has no way to write anything else. */
        if (i < 3 && !jr_want_string(r, v, "a dtype name such as \"f16\""))
            *slots[i] = NULL;
        else
            *slots[i] = jr_value(r, v, i < 3, i < 3 ? "a dtype name" : "a value");
        jr_pop(r, mark);
    }
}

/* ---------------------------------------------------------------- tensors */

/* A list of dims, perm entries or strides: ints or {"expr": ...}. */
static expr **jr_int_list(jreader *r, const cJSON *item, const char *what, int *n)
{
    *n = 0;
    if (!jr_want_array(r, item, what))
        return NULL;
    int k = cJSON_GetArraySize(item), i = 0;
    if (k > XDNN_MAX_RANK) {
        jr_err(r, item, false, XDNN_ERR_SEMANTIC, "%d entries exceed the maximum rank %d", k, XDNN_MAX_RANK);
        return NULL;
    }
    expr **out = arena_alloc(r->ar, sizeof *out * (size_t)(k ? k : 1));
    bool ok = true;
    for (const cJSON *c = item->child; c; c = c->next, i++) {
        size_t mark = jr_push_index(r, (size_t)i);
        if (!cJSON_IsObject(c) && !jr_is_int_json(r, c))
            ok = jr_err(r, c, false, XDNN_ERR_SYNTAX, "expected an int or {\"expr\": ...}, got %s",
                        jr_describe(r, c));
        else if (!(out[i] = jr_value(r, c, false, "an int")))
            ok = false;
        jr_pop(r, mark);
    }
    *n = k;
    return ok ? out : NULL;
}

static bool layout_tag_known(const char *tag)
{
    int perm[XDNN_MAX_RANK];
    for (int rank = 1; rank <= XDNN_MAX_RANK; rank++)
        if (layout_perm_for_tag(tag, rank, perm))
            return true;
    return false;
}

static bool jr_layout(jreader *r, const cJSON *obj, xlayout *out)
{
    static const char *const names[] = {"layout", "perm", "strides"};
    const cJSON *found = NULL;
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        const cJSON *v = jr_get(obj, names[i]);
        if (!v)
            continue;
        size_t mark = jr_push_key(r, names[i]);
        if (found) {
            ok = jr_err(r, v, true, XDNN_ERR_SYNTAX, "\"%s\" and \"%s\" both give the layout; keep one",
                        found->string, names[i]);
        } else if (i == 0) {
            if (!jr_want_string(r, v, "a layout name such as \"nhwc\""))
                ok = false;
            else if (!layout_tag_known(v->valuestring))
                ok = jr_err(r, v, false, XDNN_ERR_SEMANTIC,
                            "unknown layout \"%s\" (known: row, col, nchw, nhwc, ncdhw, ndhwc, ncw, nwc, bhsd, "
                            "bshd, sbhd; or \"perm\"/\"strides\")",
                            v->valuestring);
            else
                *out = (xlayout){.kind = LAYOUT_NAMED, .name = arena_strdup(r->ar, v->valuestring),
                                 .loc = jr_loc(r, v, false)};
        } else {
            int n = 0;
            expr **args = jr_int_list(r, v, i == 1 ? "a list of dim indices" : "a list of strides", &n);
            if (args && n == 0) /* .dnn has no @perm() */
                ok = jr_err(r, v, false, XDNN_ERR_SEMANTIC, "\"%s\" is empty: a rank-0 tensor takes no layout",
                            i == 1 ? "perm" : "strides");
            else if (args)
                *out = (xlayout){.kind = i == 1 ? LAYOUT_PERM : LAYOUT_STRIDES, .args = args, .nargs = n,
                                 .loc = jr_loc(r, v, false)};
            else
                ok = false;
        }
        found = v;
        jr_pop(r, mark);
    }
    return ok;
}

static void jr_tensor(jreader *r, xgraph *g, const cJSON *item)
{
    static const char *const keys[] = {"kind",    "output",  "dtype", "output_dtype", "dims", "layout",
                                       "perm",    "strides", "init",  "loc",          NULL};
    static const char *const required[] = {"kind", NULL};
    const char *name = item->string;
    if (!dnn_is_writable_name(name)) {
        jr_err(r, item, true, XDNN_ERR_SEMANTIC,
               "tensor name \"%s\" cannot be used (empty, \"_\", or with a back-quote or control character)",
               name);
        return;
    }
    if (!jr_want_object(r, item, "a tensor object {\"kind\": ...}") || !jr_keys(r, item, keys, required))
        return;
    const cJSON *kind = jr_get(item, "kind");
    size_t mark = jr_push_key(r, "kind");
    int k = -1;
    if (jr_want_string(r, kind, "\"input\", \"weight\" or \"virtual\"")) {
        const char *ks = kind->valuestring;
        k = strcmp(ks, "input") == 0 ? TK_INPUT : strcmp(ks, "weight") == 0 ? TK_WEIGHT
                                              : strcmp(ks, "virtual") == 0  ? TK_VIRTUAL
                                                                            : -1;
        if (k < 0)
            jr_err(r, kind, false, XDNN_ERR_SYNTAX,
                   "unknown tensor kind \"%s\" (expected \"input\", \"weight\" or \"virtual\"; outputs are "
                   "marked with \"output\": true)",
                   ks);
    }
    jr_pop(r, mark);
    if (k < 0)
        return;
    int ti = ir_add_tensor(g, name, (tensor_kind)k, jr_loc(r, item, true), r->d);
    if (ti < 0)
        return;
    xtensor t = g->tensors[ti];
    r->scope_limit = (size_t)ti; /* dims, layout and init see earlier tensors only */
    bool ok = jr_loc_field(r, item, &t.loc);
    const cJSON *out = jr_get(item, "output"), *dt = jr_get(item, "dtype"), *dims = jr_get(item, "dims"),
                *init = jr_get(item, "init");
    if (out) {
        mark = jr_push_key(r, "output");
        if (!cJSON_IsBool(out))
            ok = jr_err(r, out, false, XDNN_ERR_SYNTAX, "expected true or false, got %s", jr_describe(r, out));
        t.is_output = cJSON_IsTrue(out);
        jr_pop(r, mark);
    }
    if (dt) {
        mark = jr_push_key(r, "dtype");
        if (!jr_want_string(r, dt, "a dtype name"))
            ok = false;
        else if (!xdnn_dtype_from_name(dt->valuestring, &t.dtype))
            ok = jr_err(r, dt, false, XDNN_ERR_SEMANTIC, "unknown dtype \"%s\"", dt->valuestring);
        else
            t.has_dtype = true;
        jr_pop(r, mark);
    } else if (k != TK_VIRTUAL) {
        ok = jr_err(r, item, false, XDNN_ERR_SYNTAX, "missing key \"dtype\" (an %s needs one)", kind->valuestring);
    }
    const cJSON *odt = jr_get(item, "output_dtype");
    if (odt) { /* the stored copy's dtype (`output y: dt`): consumers read the value */
        mark = jr_push_key(r, "output_dtype");
        if (!jr_want_string(r, odt, "a dtype name"))
            ok = false;
        else if (!xdnn_dtype_from_name(odt->valuestring, &t.odtype))
            ok = jr_err(r, odt, false, XDNN_ERR_SEMANTIC, "unknown dtype \"%s\"", odt->valuestring);
        else if (k != TK_VIRTUAL || !t.is_output)
            ok = jr_err(r, odt, false, XDNN_ERR_SEMANTIC, "\"output_dtype\" is for a virtual tensor with \"output\": true");
        else
            t.has_odtype = true;
        jr_pop(r, mark);
    }
    if (k == TK_VIRTUAL) {
        if (dims)
            ok = jr_err(r, dims, true, XDNN_ERR_SYNTAX, "a virtual tensor has no \"dims\" (its shape is inferred)");
        if (init)
            ok = jr_err(r, init, true, XDNN_ERR_SYNTAX, "a virtual tensor has no \"init\"");
    } else if (!dims) {
        ok = jr_err(r, item, false, XDNN_ERR_SYNTAX, "missing key \"dims\" (use [] for rank 0)");
    } else {
        mark = jr_push_key(r, "dims");
        t.dims = jr_int_list(r, dims, "a list of dims", &t.rank);
        ok &= t.dims != NULL;
        jr_pop(r, mark);
        if (init) {
            mark = jr_push_key(r, "init");
            ok &= (t.init = jr_init(r, init)) != NULL;
            jr_pop(r, mark);
        }
    }
    ok &= jr_layout(r, item, &t.layout);
    if (ok)
        g->tensors[ti] = t;
}

static void jr_tensors(jreader *r, xgraph *g, const cJSON *item)
{
    if (!jr_want_object(r, item, "an object of tensors") || !jr_no_duplicate_keys(r, item))
        return;
    for (const cJSON *c = item->child; c && !jr_too_many(r); c = c->next) {
        size_t mark = jr_push_key(r, c->string);
        if (ir_find_tensor(g, c->string) < 0)
            jr_tensor(r, g, c);
        jr_pop(r, mark);
    }
}

/* ---------------------------------------------------------------- outputs, checks */

static void jr_outputs(jreader *r, xgraph *g, const cJSON *item)
{
    if (!jr_want_array(r, item, "a list of tensor names"))
        return;
    /* listed[t]: t is in "outputs" already (a scan of g->outputs per entry was
     * quadratic in the number of outputs) */
    bool *listed = arena_alloc(r->ar, g->ntensors + 1);
    size_t i = 0;
    for (const cJSON *c = item->child; c; c = c->next, i++) {
        size_t mark = jr_push_index(r, i);
        int ti = jr_want_string(r, c, "a tensor name") ? ir_find_tensor(g, c->valuestring) : -2;
        bool dup = ti >= 0 && listed[ti];
        if (ti == -1)
            jr_err(r, c, false, XDNN_ERR_SEMANTIC, "unknown tensor \"%s\"", c->valuestring);
        else if (dup)
            jr_err(r, c, false, XDNN_ERR_SEMANTIC, "tensor \"%s\" is listed twice", c->valuestring);
        else if (ti >= 0 && !g->tensors[ti].is_output)
            jr_err(r, c, false, XDNN_ERR_SEMANTIC, "tensor \"%s\" is listed in \"outputs\" but its entry lacks \"output\": true",
                   c->valuestring);
        else if (ti >= 0) {
            VEC_PUSH(r->ar, g->outputs, g->noutputs, g->capoutputs, ti);
            listed[ti] = true;
        }
        jr_pop(r, mark);
    }
}

static void jr_checks(jreader *r, xgraph *g, const cJSON *item)
{
    static const char *const keys[] = {"tensor", "ref", "rtol", "atol", "loc", NULL};
    static const char *const required[] = {"tensor", "ref", NULL};
    if (!jr_want_array(r, item, "a list of checks"))
        return;
    size_t i = 0;
    for (const cJSON *c = item->child; c && !jr_too_many(r); c = c->next, i++) {
        size_t mark = jr_push_index(r, i);
        if (jr_want_object(r, c, "a check object {\"tensor\": ..., \"ref\": ...}") && jr_keys(r, c, keys, required)) {
            xcheck ck = {.tensor = -1, .loc = jr_loc(r, c, false)};
            bool ok = jr_loc_field(r, c, &ck.loc);
            const cJSON *t = jr_get(c, "tensor");
            size_t m2 = jr_push_key(r, "tensor");
            if (jr_want_string(r, t, "a tensor name") && (ck.tensor = ir_find_tensor(g, t->valuestring)) < 0)
                jr_err(r, t, false, XDNN_ERR_SEMANTIC, "unknown tensor \"%s\"", t->valuestring);
            ok &= ck.tensor >= 0;
            jr_pop(r, m2);
            m2 = jr_push_key(r, "ref");
            ok &= (ck.ref = jr_init(r, jr_get(c, "ref"))) != NULL;
            jr_pop(r, m2);
            static const char *const tols[] = {"rtol", "atol"};
            for (int k = 0; k < 2; k++) {
                const cJSON *v = jr_get(c, tols[k]);
                if (!v)
                    continue;
                m2 = jr_push_key(r, tols[k]);
                expr *e = NULL;
                if (!cJSON_IsObject(v) && !cJSON_IsNumber(v))
                    jr_err(r, v, false, XDNN_ERR_SYNTAX, "expected a number or {\"expr\": ...}, got %s",
                           jr_describe(r, v));
                else
                    e = jr_value(r, v, false, "a number");
                *(k ? &ck.atol : &ck.rtol) = e;
                ok &= e != NULL;
                jr_pop(r, m2);
            }
            if (ok)
                VEC_PUSH(r->ar, g->checks, g->nchecks, g->capchecks, ck);
        }
        jr_pop(r, mark);
    }
}

/* ---------------------------------------------------------------- graph */

void jr_graph(jreader *r, const cJSON *item)
{
    static const char *const keys[] = {"name",    "loc",   "context", "params", "asserts",
                                       "tensors", "nodes", "outputs", "checks", NULL};
    static const char *const required[] = {"name", NULL};
    if (!jr_want_object(r, item, "a graph object {\"name\": ...}") || !jr_keys(r, item, keys, required))
        return;
    const cJSON *name = jr_get(item, "name");
    size_t mark = jr_push_key(r, "name");
    bool ok = jr_want_string(r, name, "a graph name");
    if (ok && !dnn_is_plain_ident(name->valuestring))
        ok = jr_err(r, name, false, XDNN_ERR_SEMANTIC, "graph name \"%s\" is not an identifier", name->valuestring);
    for (size_t i = 0; ok && i < r->m->ngraphs; i++)
        if (strcmp(r->m->graphs[i]->name, name->valuestring) == 0)
            ok = jr_err(r, name, false, XDNN_ERR_SEMANTIC, "graph \"%s\" is already defined", name->valuestring);
    jr_pop(r, mark);
    if (!ok)
        return;
    int before = r->errors;
    xgraph *g = ir_add_graph(r->m, name->valuestring, jr_loc(r, item, false));
    r->g = g;
    jr_loc_field(r, item, &g->loc);
    /* asserts after every tensor, as .dnn text has them (dnn_write.c), so their dim(t, i) finds t */
    static const char *const parts[] = {"context", "params", "tensors", "nodes", "outputs", "asserts", "checks"};
    for (int p = 0; p < 7 && !jr_too_many(r); p++) {
        const cJSON *v = jr_get(item, parts[p]);
        if (!v)
            continue;
        mark = jr_push_key(r, parts[p]);
        static const ct_scope scopes[] = {CT_NO_TENSORS, CT_NO_TENSORS, CT_BEFORE, CT_DEFINED,
                                          CT_ALL,        CT_ALL,        CT_ALL};
        r->scope = scopes[p];
        switch (p) {
        case 0: jr_context(r, g, v); break;
        case 1: jr_params(r, v, g); break;
        case 2: jr_tensors(r, g, v); break;
        case 3:
            if (jr_want_array(r, v, "a list of nodes")) {
                size_t i = 0;
                for (const cJSON *c = v->child; c && !jr_too_many(r); c = c->next, i++) {
                    size_t m2 = jr_push_index(r, i);
                    jr_node(r, g, c);
                    jr_pop(r, m2);
                }
            }
            break;
        case 4: jr_outputs(r, g, v); break;
        case 5: jr_asserts(r, v, g); break;
        default: jr_checks(r, g, v); break;
        }
        jr_pop(r, mark);
    }
    r->g = NULL;
    if (r->errors != before)
        return; /* the checks below would repeat earlier errors */
    /* No errors: every entry of "tensors" became g->tensors[i], in order. */
    const cJSON *entry = jr_get(item, "tensors") ? jr_get(item, "tensors")->child : NULL;
    bool *listed = arena_alloc(r->ar, g->ntensors + 1);
    for (size_t k = 0; k < g->noutputs; k++)
        listed[g->outputs[k]] = true;
    for (size_t i = 0; i < g->ntensors && entry; i++, entry = entry->next) {
        const xtensor *t = &g->tensors[i];
        mark = jr_push_key(r, "tensors");
        size_t m2 = jr_push_key(r, t->name);
        if (t->kind == TK_VIRTUAL && t->producer < 0)
            jr_err(r, entry, true, XDNN_ERR_SEMANTIC, "virtual tensor \"%s\" is not produced by any node", t->name);
        if (t->is_output && !listed[i])
            jr_err(r, jr_get(entry, "output"), true, XDNN_ERR_SEMANTIC,
                   "tensor \"%s\" has \"output\": true but is not listed in \"outputs\"", t->name);
        jr_pop(r, m2);
        jr_pop(r, mark);
    }
}

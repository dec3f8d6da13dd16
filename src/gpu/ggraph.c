/* ggraph.c — building the GPU backend's flat graph (see ggraph.h). */
#include "gpu/ggraph.h"

#include "ops/op.h"

#include <string.h>

ggraph *gg_create(arena *ar)
{
    ggraph *g = arena_alloc(ar, sizeof *g);
    g->ar = ar;
    return g;
}

int gg_tensor(ggraph *g, const char *name, xdnn_dtype dt, int rank, const int64_t *dims,
              const int64_t *strides)
{
    gtensor t = {0};
    t.name = arena_strdup(g->ar, name ? name : "?");
    t.dtype = dt;
    t.rank = rank;
    t.numel = 1;
    for (int i = rank - 1; i >= 0; i--) {
        t.dims[i] = dims[i];
        t.strides[i] = strides ? strides[i] : t.numel;
        t.numel *= dims[i];
    }
    /* A size-1 dim is never stepped over: treat it as broadcast everywhere. */
    for (int i = 0; i < rank; i++)
        if (t.dims[i] == 1)
            t.strides[i] = 0;
    t.producer = -1;
    t.ir_index = -1;
    t.view_of = -1;
    VEC_PUSH(g->ar, g->t, g->nt, g->capt, t);
    return g->nt - 1;
}

int gg_scalar(ggraph *g, double v)
{
    int i = gg_tensor(g, "scalar", XDNN_F32, 0, NULL, NULL);
    g->t[i].is_scalar = true;
    g->t[i].scalar = v;
    return i;
}

int gg_node(ggraph *g, gnode_kind kind, const char *name, const char *op, int nin, const int *in, int out)
{
    gnode n = {0};
    n.name = arena_strdup(g->ar, name ? name : "?");
    n.op = arena_strdup(g->ar, op ? op : "?");
    n.op_id = op ? op_lookup(op) : -1; /* identity as data: engines compare ids, not names */
    n.kind = kind;
    n.nin = nin < GG_MAX_IN ? nin : GG_MAX_IN;
    for (int i = 0; i < n.nin; i++)
        n.in[i] = in[i];
    n.out = out;
    n.axis = -1;
    VEC_PUSH(g->ar, g->n, g->nn, g->capn, n);
    return g->nn - 1;
}

void gg_finish(ggraph *g)
{
    for (int i = 0; i < g->nt; i++)
        g->t[i].nconsumers = 0;
    for (int k = 0; k < g->nn; k++) {
        gnode *n = &g->n[k];
        if (n->out >= 0)
            g->t[n->out].producer = k;
        for (int r = 0; r < n->nouts; r++)
            if (n->outs[r] >= 0)
                g->t[n->outs[r]].producer = k;
        for (int j = 0; j < n->nin; j++)
            if (n->in[j] >= 0)
                g->t[n->in[j]].nconsumers++;
    }
    /* Fusion rules ask "is this its only reader?": a view's readers read it too. */
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].view_of >= 0)
            g->t[g->t[i].view_of].nconsumers += g->t[i].nconsumers;
}

void gg_bind_views(const ggraph *g, void **dptr)
{
    for (int i = 0; i < g->nt; i++) {
        const gtensor *v = &g->t[i];
        if (v->view_of >= 0 && dptr[v->view_of])
            dptr[i] = (char *)dptr[v->view_of] + v->view_offset * (int64_t)gg_dtype_bytes(v->dtype);
    }
}

size_t gg_span_bytes(const gtensor *t)
{
    if (t->is_scalar || t->numel == 0)
        return 0;
    int64_t span = 1;
    for (int i = 0; i < t->rank; i++)
        span += (t->dims[i] - 1) * t->strides[i];
    return (size_t)span * gg_dtype_bytes(t->dtype);
}

size_t gg_dtype_bytes(xdnn_dtype dt)
{
    switch (dt) {
    case XDNN_F32: case XDNN_I32: return 4;
    case XDNN_F16: case XDNN_BF16: return 2;
    case XDNN_I64: case XDNN_F64: return 8;
    default: return 1; /* fp8, i8, bool */
    }
}

bool gg_same_dims(const gtensor *a, const gtensor *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

bool gg_packed(const gtensor *t)
{
    int64_t want = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        if (t->dims[i] != 1 && t->strides[i] != want)
            return false;
        want *= t->dims[i];
    }
    return true;
}

const char *gg_kind_name(gnode_kind k)
{
    static const char *const names[] = {"pointwise", "reduce", "softmax", "matmul", "other"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

const char *gg_dtype_name(xdnn_dtype dt)
{
    static const char *const names[] = {"f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2", "i8",
                                        "i32", "bool", "i64", "f64", "e8m0"};
    _Static_assert(sizeof names / sizeof names[0] == XDNN_DTYPE_COUNT, "one name per dtype");
    return (unsigned)dt < sizeof names / sizeof names[0] ? names[dt] : "?";
}

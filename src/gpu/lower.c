/* lower.c — a bound xgraph as the GPU backend's ggraph: tensor i of the IR is
 * tensor i of the ggraph (an output that other ops read in another dtype adds
 * its stored copy after them: store_outputs); pointwise ops take their expression text from
 * pointwise_modes.def (through pw_mode_of) with p0..p2 folded to literals, the logistic family's
 * 16-bit results from pw_fast_form. */
#include "gpu/lower.h"

#include "ops/pointwise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void literal(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "NAN");
    else if (isinf(v))
        snprintf(buf, len, "%sINFINITY", v < 0 ? "(-" : "(");
    else
        snprintf(buf, len, "((float)%.17g)", v);
    if (isinf(v))
        strncat(buf, ")", len - strlen(buf) - 1);
}

static gpw_tag pw_tag(int op, const double *p)
{
    if (op == OP_add)
        return PWT_ADD;
    if (op == OP_relu && p[0] == 0 && isinf(p[1]) && p[1] > 0 && p[2] == 0)
        return PWT_RELU;
    if (op == OP_gelu_tanh || (op == OP_gelu && p[0] != 0))
        return PWT_GELU_TANH;
    if (op == OP_cast || op == OP_identity)
        return PWT_CAST;
    return PWT_OTHER;
}

/* The GPU's forms of the logistic family for values rounded to 16 bits (f16 / bf16 results): e^-x through
 * ex2.approx and the reciprocal through rcp.approx (codegen.c xd_sigmoid_fast, a few f32 ulp against the
 * half-ulp of 2^-9 / 2^-12 that the rounding adds) instead of expf and an IEEE division, which held silu bf16
 * at 82 % of copy on issue slots.  Written in pointwise_modes.def's variables (dy, a, p0, K) and its algebra
 * but for 1 - sigmoid(x), taken as sigmoid(-x): the same e^-|x| and reciprocal (the compiler computes them
 * once), and no cancellation where sigmoid(x) nears 1.  f32 / f64 results keep the exact expressions.
 * XDNN_PW_APPROX=0 keeps them everywhere. */
static const char *pw_fast_form(const char *op, xdnn_dtype out)
{
    static const struct { const char *op, *expr; } forms[] = {
        {"sigmoid", "xd_sigmoid_fast(a)"},
        {"silu", "a * xd_sigmoid_fast(a)"},
        {"swish", "a * xd_sigmoid_fast(p0 * a)"},
        {"sigmoid_bwd", "dy * xd_sigmoid_fast(a) * xd_sigmoid_fast(-a)"},
        {"silu_bwd", "dy * xd_sigmoid_fast(a) * (K(1) + a * xd_sigmoid_fast(-a))"},
        {"swish_bwd", "dy * xd_sigmoid_fast(p0 * a) * (K(1) + p0 * a * xd_sigmoid_fast(-(p0 * a)))"},
        {"softplus_bwd", "dy * xd_sigmoid_fast(p0 * a)"},
    };
    if (out != XDNN_F16 && out != XDNN_BF16)
        return NULL;
    const char *e = getenv("XDNN_PW_APPROX");
    if (e && strcmp(e, "0") == 0)
        return NULL;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (strcmp(op, forms[i].op) == 0)
            return forms[i].expr;
    return NULL;
}

static gred_op red_op(const char *s)
{
    static const struct { const char *name; gred_op op; } map[] = {
        {"sum", RED_SUM},   {"mean", RED_MEAN}, {"max", RED_MAX},     {"min", RED_MIN},
        {"amax", RED_AMAX}, {"prod", RED_PROD}, {"norm1", RED_NORM1}, {"norm2", RED_NORM2},
    };
    for (size_t i = 0; s && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(s, map[i].name) == 0)
            return map[i].op;
    return RED_SUM;
}

static void lower_node(ggraph *gg, const xgraph *g, const xnode *n)
{
    const op_desc *desc = op_get(n->op);
    int in[GG_MAX_IN], nin = 0;
    for (int i = 0; i < n->ninputs && nin < GG_MAX_IN; i++) {
        const xport *p = &n->inputs[i];
        if (p->tensor >= 0) {
            in[nin++] = p->tensor;
        } else if (p->scalar && n->rscalars) {
            double v = 0;
            if (!value_as_float(&n->rscalars[i], &v))
                v = n->rscalars[i].kind == VAL_BOOL ? n->rscalars[i].b : 0;
            in[nin++] = gg_scalar(gg, v);
        } else {
            in[nin++] = -1; /* absent optional port */
        }
    }
    int out = n->nresults > 0 ? n->results[0] : -1;
    const pw_mode *pw = pw_mode_of(desc);
    bool multi = n->nresults > 1 || out < 0;
    gnode_kind kind = GN_OTHER;
    if (!multi && pw && nin == pw->arity)
        kind = GN_POINTWISE;
    else if (!multi && strcmp(desc->name, "reduce") == 0)
        kind = GN_REDUCE;
    else if (!multi && (strcmp(desc->name, "softmax") == 0 || strcmp(desc->name, "log_softmax") == 0))
        kind = GN_SOFTMAX;
    else if (!multi && strcmp(desc->name, "matmul") == 0)
        kind = GN_MATMUL;
    for (int i = 0; i < nin; i++)
        if (in[i] < 0 && kind != GN_OTHER)
            kind = GN_OTHER;
    int k = gg_node(gg, kind, n->name, desc->name, nin, in, out >= 0 ? out : 0);
    gnode *gn = &gg->n[k];
    if (out < 0)
        gn->out = -1;
    gn->ir = n;
    for (int r = 0; r < n->nresults && r < GG_MAX_OUT; r++)
        gn->outs[gn->nouts++] = n->results[r];
    gn->flops = desc->flops ? desc->flops(g, n) : 0;
    int rank = kind != GN_OTHER && nin > 0 ? gg->t[in[0]].rank : 0;
    switch (kind) {
    case GN_POINTWISE: {
        double p[PW_MAX_PARAMS] = {0};
        pw_params(n, desc, p);
        char lit[PW_MAX_PARAMS][48];
        const char *from[5] = {"p0", "p1", "p2"}, *to[5] = {lit[0], lit[1], lit[2]};
        for (int i = 0; i < PW_MAX_PARAMS; i++)
            literal(lit[i], sizeof lit[i], p[i]);
        int nsub = 3;
        if (pw->backward) { /* (dy, x) -> operands a, b */
            from[3] = "dy", to[3] = "a";
            from[4] = "a", to[4] = "b";
            nsub = 5;
        }
        const char *fast = out >= 0 ? pw_fast_form(pw->name, gg->t[out].dtype) : NULL;
        gn->expr = cg_subst(gg->ar, fast ? fast : pw->expr, from, to, nsub);
        gn->tag = pw->backward ? PWT_OTHER : pw_tag(n->op, p);
        break;
    }
    case GN_REDUCE: {
        bool mask[XDNN_MAX_RANK] = {0};
        char why[128];
        if (!reduce_axes_mask(n, desc, rank, mask, why, sizeof why)) {
            gn->kind = GN_OTHER;
            break;
        }
        for (int i = 0; i < rank; i++)
            if (mask[i])
                gn->axes |= 1u << i;
        gn->red = red_op(op_attr_str(n, desc, "op"));
        break;
    }
    case GN_SOFTMAX: {
        int ax = -1;
        if (!op_axis(rank, op_attr_int(n, desc, "axis"), &ax))
            gn->kind = GN_OTHER;
        gn->axis = ax;
        gn->log_softmax = strcmp(desc->name, "log_softmax") == 0;
        break;
    }
    case GN_MATMUL:
        gn->trans_a = op_attr_bool(n, desc, "trans_a");
        gn->trans_b = op_attr_bool(n, desc, "trans_b");
        break;
    default:
        break;
    }
}

/* cuBLASLt multiplies operands of one dtype: when a matmul's operands differ
 * (an f32 intermediate times f16 weights), a cast node to the wider dtype is
 * inserted before it.  The cast is an ordinary pointwise node, so it fuses
 * with the producer's pointwise partition when it can. */
static void insert_matmul_casts(ggraph *gg)
{
    for (int k = 0; k < gg->nn; k++) {
        gnode *mm = &gg->n[k];
        if (mm->kind != GN_MATMUL || mm->nin < 2 || mm->in[0] < 0 || mm->in[1] < 0)
            continue;
        xdnn_dtype ta = gg->t[mm->in[0]].dtype, tb = gg->t[mm->in[1]].dtype;
        if (ta == tb)
            continue;
        xdnn_dtype wide = (ta == XDNN_F16 || ta == XDNN_BF16) && (tb == XDNN_F16 || tb == XDNN_BF16) ? XDNN_F32
                        : gg_dtype_bytes(ta) >= gg_dtype_bytes(tb) ? ta : tb;
        int port = gg->t[mm->in[0]].dtype == wide ? 1 : 0;
        const gtensor *src = &gg->t[mm->in[port]];
        char name[256];
        snprintf(name, sizeof name, "%s.cast%d", mm->name, port);
        int64_t dims[XDNN_MAX_RANK];
        memcpy(dims, src->dims, sizeof dims);
        int t = gg_tensor(gg, name, wide, src->rank, dims, NULL);
        int in = mm->in[port];
        int c = gg_node(gg, GN_POINTWISE, name, "cast", 1, &in, t);
        gg->n[c].expr = "a";
        gg->n[c].tag = PWT_CAST;
        /* Move the new node just before the matmul to keep topological order. */
        gnode cast = gg->n[c];
        memmove(&gg->n[k + 1], &gg->n[k], (size_t)(gg->nn - 1 - k) * sizeof *gg->n);
        gg->n[k] = cast;
        gg->n[k + 1].in[port] = t;
        k++;
    }
}

/* An output other ops read in another dtype (rvdtype != rdtype, bind.c):
 * tensor i stays the value they read, a virtual; its stored copy is a new
 * tensor, written by a cast node, that carries the IR index, so binding,
 * upload and download see the output in its declared dtype.  The cast is an
 * ordinary pointwise node and fuses with its producer's partition. */
static void store_outputs(ggraph *gg, const xgraph *g)
{
    for (size_t i = 0; i < g->ntensors; i++) {
        const xtensor *t = &g->tensors[i];
        if (!t->rdefined || t->rvdtype == t->rdtype || t->kind != TK_VIRTUAL)
            continue;
        int v = (int)i;
        gg->t[v].name = arena_sprintf(gg->ar, "%s.value", t->name);
        gg->t[v].is_output = false;
        gg->t[v].ir_index = -1;
        int k = gg_tensor(gg, t->name, t->rdtype, t->rrank, t->rdims, t->rstrides);
        gg->t[k].is_output = true;
        gg->t[k].ir_index = (int)i;
        int c = gg_node(gg, GN_POINTWISE, arena_sprintf(gg->ar, "%s.store", t->name), "cast", 1, &v, k);
        gg->n[c].expr = "a";
        gg->n[c].tag = PWT_CAST;
    }
}

ggraph *gpu_lower(const xgraph *g, arena *ar)
{
    ggraph *gg = gg_create(ar);
    gg->tf32 = g->rtf32;
    gg->seed = g->rseed;
    for (size_t i = 0; i < g->ntensors; i++) {
        const xtensor *t = &g->tensors[i];
        int k = gg_tensor(gg, t->name, t->rvdtype, t->rdefined ? t->rrank : 0, t->rdims,
                          t->rdefined ? t->rstrides : NULL);
        gg->t[k].is_input = t->kind != TK_VIRTUAL;
        gg->t[k].is_weight = t->kind == TK_WEIGHT;
        gg->t[k].is_output = t->is_output || t->keep;
        gg->t[k].ir_index = (int)i;
    }
    for (size_t i = 0; i < g->nnodes; i++)
        lower_node(gg, g, &g->nodes[i]);
    store_outputs(gg, g);
    insert_matmul_casts(gg);
    gpu_fold_views(gg);
    gg_finish(gg);
    return gg;
}

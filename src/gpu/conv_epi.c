/* conv_epi.c — matching a forward conv's pointwise chain to kconv_epi steps
 * (see conv_epi.h).  A node is taken only when its math is one the kernels'
 * conv_epi.cuh evaluates exactly as pointwise_modes.def writes it; anything
 * else ends the chain and stays a pointwise partition of its own. */
#include "gpu/conv_epi.h"

#include "ops/op.h"
#include "ops/pointwise.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

bool gconv_epi_anchor(const ggraph *g, int node)
{
    const gnode *n = &g->n[node];
    return n->op_id == OP_conv && n->ir && n->kind == GN_OTHER && n->out >= 0 && n->nin >= 2;
}

static bool float_dtype(xdnn_dtype t) { return t == XDNN_F32 || t == XDNN_F16 || t == XDNN_BF16; }

static int kdt_of(xdnn_dtype t) { return t == XDNN_F32 ? KDT_F32 : t == XDNN_F16 ? KDT_F16 : KDT_BF16; }

/* The strides of operand t read at the coordinates of y (NumPy broadcasting:
 * trailing dims aligned, 1 broadcasts), in the 5-slot view [N, K, D, H, W]. */
static bool operand_strides(const gtensor *t, const gtensor *y, int64_t *st)
{
    const int R = y->rank, nsp = R - 2;
    if (t->rank > R || R < 3 || R > 5)
        return false;
    for (int i = 0; i < 5; i++)
        st[i] = 0;
    for (int i = 0; i < R; i++) {
        const int j = i - (R - t->rank);
        int64_t s = 0;
        if (j >= 0 && t->dims[j] != 1) {
            if (t->dims[j] != y->dims[i])
                return false;
            s = t->strides[j];
        }
        st[i < 2 ? i : 2 + (3 - nsp) + (i - 2)] = s;
    }
    return true;
}

static bool unary_step(const gnode *n, kepi_step *st)
{
    double p[PW_MAX_PARAMS] = {0};
    pw_params(n->ir, op_get(n->op_id), p);
    st->p0 = (float)p[0];
    st->p1 = (float)p[1];
    st->p2 = (float)p[2];
    switch (n->op_id) {
    case OP_cast:
    case OP_identity: st->op = -1; return true;
    case OP_relu: st->op = KEPI_RELU; return true;
    case OP_gelu: st->op = p[0] != 0 ? KEPI_GELU_TANH : KEPI_GELU_ERF; return true;
    case OP_gelu_tanh: st->op = KEPI_GELU_TANH; return true;
    case OP_silu: st->op = KEPI_SWISH, st->p0 = 1.f; return true;
    case OP_swish: st->op = KEPI_SWISH; return true;
    case OP_sigmoid: st->op = KEPI_SIGMOID; return true;
    case OP_tanh: st->op = KEPI_TANH; return true;
    default: return false;
    }
}

bool gconv_epi_step(const ggraph *g, int node, int cur, kepi_step *st, int *tensor, char *why, size_t len)
{
    const gnode *n = &g->n[node];
    kepi_step tmp;
    int tid = -1;
    if (!st)
        st = &tmp;
    memset(st, 0, sizeof *st);
    if (n->kind != GN_POINTWISE || !n->ir || n->out < 0) {
        snprintf(why, len, "node %s (%s) is not a pointwise op", n->name, n->op);
        return false;
    }
    if (!float_dtype(g->t[n->out].dtype)) {
        snprintf(why, len, "node %s: result dtype %s", n->name, gg_dtype_name(g->t[n->out].dtype));
        return false;
    }
    if (n->nin == 1) {
        if (n->in[0] != cur || !unary_step(n, st)) {
            snprintf(why, len, "node %s: %s is not a conv epilogue step", n->name, n->op);
            return false;
        }
    } else {
        const bool add = n->op_id == OP_add, sub = n->op_id == OP_sub, mul = n->op_id == OP_mul;
        const int side = n->nin == 2 && n->in[0] == cur && n->in[1] != cur ? 0
                       : n->nin == 2 && n->in[1] == cur && n->in[0] != cur ? 1 : -1;
        if ((!add && !sub && !mul) || side < 0 || n->in[1 - side] < 0) {
            snprintf(why, len, "node %s: %s is not a conv epilogue step", n->name, n->op);
            return false;
        }
        const gtensor *o = &g->t[n->in[1 - side]];
        if (o->is_scalar) {
            if (sub && side == 1) {
                snprintf(why, len, "node %s: scalar minus the conv is not an epilogue step", n->name);
                return false;
            }
            st->op = mul ? KEPI_MUL_S : KEPI_ADD_S;
            st->p0 = (float)(sub ? -o->scalar : o->scalar);
        } else {
            if (!float_dtype(o->dtype) || !operand_strides(o, &g->t[cur], st->st)) {
                snprintf(why, len, "node %s: operand %s (%s) does not broadcast to the conv's output", n->name,
                         o->name, gg_dtype_name(o->dtype));
                return false;
            }
            st->op = add ? KEPI_ADD_T : mul ? KEPI_MUL_T : side == 0 ? KEPI_SUB_T : KEPI_RSUB_T;
            st->dt = kdt_of(o->dtype);
            tid = n->in[1 - side];
        }
    }
    if (tensor)
        *tensor = tid;
    return true;
}

bool gconv_dgrad_epi_anchor(const ggraph *g, int node)
{
    const gnode *n = &g->n[node];
    return n->op_id == OP_conv_dgrad && n->ir && n->kind == GN_OTHER && n->out >= 0 && n->nin >= 2;
}

bool gconv_dgrad_epi_step(const ggraph *g, int node, int cur, kepi_step *st, int *tensor, char *why, size_t len)
{
    const gnode *n = &g->n[node];
    kepi_step tmp;
    if (!st)
        st = &tmp;
    memset(st, 0, sizeof *st);
    if (n->op_id != OP_relu_bwd || !n->ir || n->out < 0 || n->nin != 2 || n->in[0] != cur || n->in[1] < 0 ||
        n->in[1] == cur) {
        snprintf(why, len, "node %s (%s) is not relu_bwd of the conv_dgrad's result and a mask", n->name, n->op);
        return false;
    }
    const gtensor *a = &g->t[n->in[1]], *dx = &g->t[n->out];
    if (!float_dtype(dx->dtype) || !float_dtype(a->dtype) || a->is_scalar) {
        snprintf(why, len, "node %s: relu_bwd of dtype %s with a mask %s of dtype %s", n->name,
                 gg_dtype_name(dx->dtype), a->name, gg_dtype_name(a->dtype));
        return false;
    }
    bool same_layout = a->rank == dx->rank && gg_same_dims(a, &g->t[cur]);
    for (int i = 0; same_layout && i < a->rank; i++)
        same_layout = a->dims[i] == 1 || a->strides[i] == dx->strides[i];
    if (!same_layout || !operand_strides(a, &g->t[cur], st->st)) {
        snprintf(why, len, "node %s: relu_bwd's mask %s is not of dx's dims and layout (a stride phase reads it "
                 "through dx's strides)", n->name, a->name);
        return false;
    }
    double p[PW_MAX_PARAMS] = {0};
    pw_params(n->ir, op_get(n->op_id), p);
    if (!isfinite(p[2])) {
        snprintf(why, len, "node %s: relu_bwd's slope %g is not finite (a zero-filled phase would not stay 0)",
                 n->name, p[2]);
        return false;
    }
    st->op = KEPI_RELU_BWD;
    st->dt = kdt_of(a->dtype);
    st->p0 = (float)p[0];
    st->p1 = (float)p[1];
    st->p2 = (float)p[2];
    if (tensor)
        *tensor = n->in[1];
    return true;
}

void gconv_epi_describe(const kconv_epi *e, char *buf, size_t len)
{
    static const char *const names[] = {"add", "sub", "rsub", "mul", "relu_bwd", "add_scalar", "scale", "relu",
                                        "gelu",  "gelu_tanh", "swish", "sigmoid", "tanh"};
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < e->n && k < len; i++) {
        const kepi_step *s = &e->s[i];
        const char *nm = names[s->op];
        /* a tensor read only along K is a bias */
        if (s->op == KEPI_ADD_T && s->st[0] == 0 && s->st[2] == 0 && s->st[3] == 0 && s->st[4] == 0)
            nm = "bias";
        else if (s->op == KEPI_ADD_T)
            nm = "residual";
        else if (s->op == KEPI_RELU && (s->p0 != 0 || !isinf(s->p1) || s->p2 != 0))
            nm = s->p2 != 0 ? "leaky_relu" : "clipped_relu";
        else if (s->op == KEPI_SWISH && s->p0 == 1)
            nm = "silu";
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "+" : "", nm);
    }
}

void gconv_epi_append(const kconv_epi *e, char *detail, size_t len)
{
    const size_t n = strlen(detail);
    if (!e->n || n + 1 >= len)
        return;
    char steps[128];
    gconv_epi_describe(e, steps, sizeof steps);
    snprintf(detail + n, len - n, ", fused epilogue %s", steps);
}

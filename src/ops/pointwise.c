/* pointwise.c — the pointwise family: descriptors, shape/dtype inference and
 * CPU reference of every op listed in pointwise_modes.def.
 *
 * Layout: inputs and output are packed row-major doubles in logical order
 * (ref_tensor); inputs broadcast NumPy-style against the output shape (a
 * by-value scalar is a rank-0 tensor).  Math: y[i] = expr(a[i], b[i], c[i])
 * evaluated in double with the op's numeric attributes as p0..p2; the
 * executor rounds y to its dtype afterwards (which is what makes `cast` a
 * conversion: round to nearest even, saturating, bool = v != 0).
 */
#include "pointwise.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the double evaluators, one per mode (K(x) is a plain double literal) */
#define K(x) (x)
#define PW_MODE(name, arity, out, grp, summary, expr)                                           \
    static double pw_eval_##name(double a, double b, double c, double p0, double p1, double p2) \
    {                                                                                           \
        return expr;                                                                            \
    }
#define PW_BWD(name, grp, expr)                                                                        \
    static double pw_eval_##name##_bwd(double dy, double a, double c, double p0, double p1, double p2) \
    {                                                                                                  \
        return expr;                                                                                   \
    }
#include "pointwise_modes.def"
#undef PW_MODE
#undef PW_BWD
#undef K

/* ---- mode records (desc->family) */
#define PW_MODE(name, arity, out, grp, summary, expr) \
    static const pw_mode pw_mode_##name = {#name, arity, PW_OUT_##out, false, #expr, pw_eval_##name};
#define PW_BWD(name, grp, expr) \
    static const pw_mode pw_mode_##name##_bwd = {#name "_bwd", 2, PW_OUT_SAME, true, #expr, pw_eval_##name##_bwd};
#include "pointwise_modes.def"
#undef PW_MODE
#undef PW_BWD

/* ---- attribute groups (the `attrs` column of pointwise_modes.def) */
#define PW_COUNT(arr) ((int)(sizeof(arr) / sizeof((arr)[0])))

#define pw_attrs_none NULL
enum { pw_nattrs_none = 0 };

static const attr_spec pw_attrs_relu[] = {
    {"lower", AT_FLOAT, "0", NULL, "lower clip: inputs at or below it map to lower + slope * (x - lower)"},
    {"upper", AT_FLOAT, NULL, NULL, "upper clip (default: unbounded)"},
    {"slope", AT_FLOAT, "0", NULL, "slope below `lower` (leaky relu when nonzero)"},
};
enum { pw_nattrs_relu = PW_COUNT(pw_attrs_relu) };

static const attr_spec pw_attrs_gelu[] = {
    {"approx", AT_STRING, "\"none\"", "none|tanh", "\"none\": exact erf form; \"tanh\": tanh approximation"},
};
enum { pw_nattrs_gelu = PW_COUNT(pw_attrs_gelu) };

static const attr_spec pw_attrs_swish[] = {
    {"beta", AT_FLOAT, "1", NULL, "y = x * sigmoid(beta * x); beta = 1 is silu"},
};
enum { pw_nattrs_swish = PW_COUNT(pw_attrs_swish) };

static const attr_spec pw_attrs_elu[] = {
    {"alpha", AT_FLOAT, "1", NULL, "scale of the negative branch alpha * (e^x - 1)"},
};
enum { pw_nattrs_elu = PW_COUNT(pw_attrs_elu) };

static const attr_spec pw_attrs_softplus[] = {
    {"beta", AT_FLOAT, "1", NULL, "sharpness: log(1 + e^(beta x)) / beta; must be nonzero"},
};
enum { pw_nattrs_softplus = PW_COUNT(pw_attrs_softplus) };

static const attr_spec pw_attrs_cast[] = {
    {"dtype", AT_DTYPE, NULL, NULL, "the output dtype (required)"},
};
enum { pw_nattrs_cast = PW_COUNT(pw_attrs_cast) };

/* ---- ports */
static const char *const pw_ports_1[] = {"x"};
static const char *const pw_ports_2[] = {"a", "b"};
static const char *const pw_ports_3[] = {"cond", "a", "b"};
static const char *const pw_ports_bwd[] = {"dy", "x"};
static const char *const pw_results_fwd[] = {"y"};
static const char *const pw_results_bwd[] = {"dx"};

/* ---- parameters */

/* Index of `s` in "a|b|c", or 0 when absent. */
static int choice_index(const char *choices, const char *s)
{
    if (!choices || !s)
        return 0;
    size_t len = strlen(s);
    int k = 0;
    for (const char *p = choices; *p; k++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, s, n) == 0)
            return k;
        if (!bar)
            break;
        p = bar + 1;
    }
    return 0;
}

int pw_params(const xnode *n, const op_desc *d, double p[PW_MAX_PARAMS])
{
    int k = 0;
    for (int i = 0; i < PW_MAX_PARAMS; i++)
        p[i] = 0;
    for (int i = 0; i < d->nattrs && k < PW_MAX_PARAMS; i++) {
        const attr_spec *s = &d->attrs[i];
        const value *v = n && n->rattrs ? &n->rattrs[i] : NULL;
        double x;
        switch (s->type) {
        case AT_DTYPE:
            continue;
        case AT_STRING:
            p[k++] = choice_index(s->choices, v && v->kind == VAL_STRING ? v->s : NULL);
            break;
        case AT_BOOL:
            p[k++] = v && v->kind == VAL_BOOL && v->b ? 1 : 0;
            break;
        default:
            /* absent numbers are unbounded clips (relu's upper) */
            p[k++] = v && value_as_float(v, &x) ? x : HUGE_VAL;
            break;
        }
    }
    return k;
}

/* ---- inference */

/* A port fed by a compile-time scalar (`0.5 * x`) rather than a tensor. */
static bool port_is_scalar(const xnode *n, int port)
{
    return n && n->inputs && port < n->ninputs && n->inputs[port].tensor < 0 && n->inputs[port].scalar;
}

/* Output dtype rule SAME: the first operand that is a real tensor (so that
 * `0.5 * h` keeps h's dtype), skipping select's condition. */
static xdnn_dtype pw_same_dtype(const op_infer_ctx *c, const pw_mode *m)
{
    int first = strcmp(m->name, "select") == 0 ? 1 : 0;
    for (int i = first; i < m->arity; i++)
        if (!port_is_scalar(c->node, i))
            return c->in[i]->dtype;
    return c->in[first]->dtype;
}

static xdnn_status pw_broadcast_error(op_infer_ctx *c, const pw_mode *m)
{
    char list[1024];
    size_t k = 0;
    for (int i = 0; i < m->arity && k < sizeof list; i++) {
        char shape[256];
        const char *sep = i == 0 ? "" : i == m->arity - 1 ? " and " : ", ";
        k += (size_t)snprintf(list + k, sizeof list - k, "%s%s %s", sep, c->desc->ports[i],
                              shape_str(shape, sizeof shape, c->in[i]->rank, c->in[i]->dims));
    }
    return op_error(c, "cannot broadcast shapes %s (NumPy rule: trailing dims must be equal or 1)", list);
}

static xdnn_status pw_check_attrs(op_infer_ctx *c)
{
    const xnode *n = c->node;
    const op_desc *d = c->desc;
    if (op_attr_index(d, "upper") >= 0 && op_attr_present(n, d, "upper")) {
        double lo = op_attr_float(n, d, "lower"), hi = op_attr_float(n, d, "upper");
        if (hi < lo)
            return op_error(c, "attribute 'upper' (%g) must be >= 'lower' (%g)", hi, lo);
    }
    if (strncmp(d->name, "softplus", 8) == 0 && op_attr_float(n, d, "beta") == 0)
        return op_error(c, "attribute 'beta' must be nonzero, got 0");
    return XDNN_OK;
}

static xdnn_status pw_infer(op_infer_ctx *c)
{
    const pw_mode *m = c->desc->family;
    const tinfo *ins[3] = {NULL, NULL, NULL};
    for (int i = 0; i < m->arity; i++) {
        if (!c->in[i])
            return op_error(c, "input '%s' is missing", c->desc->ports[i]);
        ins[i] = c->in[i];
    }
    tinfo *y = &c->out[0];
    if (!shape_broadcast(ins, m->arity, y))
        return pw_broadcast_error(c, m);
    xdnn_status st = pw_check_attrs(c);
    if (st != XDNN_OK)
        return st;
    switch (m->out) {
    case PW_OUT_BOOL:
        y->dtype = XDNN_BOOL;
        break;
    case PW_OUT_CAST: {
        const value *v = op_attr(c->node, c->desc, "dtype");
        if (!v || v->kind != VAL_DTYPE)
            return op_error(c, "attribute 'dtype' is required (e.g. dtype=f16)");
        y->dtype = v->dt;
        break;
    }
    case PW_OUT_SAME:
        y->dtype = pw_same_dtype(c, m);
        break;
    }
    return XDNN_OK;
}

const pw_mode *pw_mode_of(const op_desc *d)
{
    return d && d->infer == pw_infer ? (const pw_mode *)d->family : NULL;
}

/* ---- reference */

static xdnn_status pw_reference(op_ref_ctx *c)
{
    const pw_mode *m = c->desc->family;
    ref_tensor *y = c->out[0];
    if (!y)
        return op_ref_error(c, XDNN_ERR_INTERNAL, "no output tensor");
    for (int i = 0; i < m->arity; i++)
        if (!c->in[i])
            return op_ref_error(c, XDNN_ERR_INTERNAL, "input '%s' is missing", c->desc->ports[i]);
    double p[PW_MAX_PARAMS];
    pw_params(c->node, c->desc, p);
    if (y->numel == 0)
        return XDNN_OK;
    int64_t idx[XDNN_MAX_RANK] = {0};
    int64_t k = 0;
    do {
        double v[3] = {0, 0, 0};
        for (int i = 0; i < m->arity; i++)
            v[i] = c->in[i]->data[ref_broadcast_offset(c->in[i], y->rank, idx)];
        y->data[k++] = m->eval(v[0], v[1], v[2], p[0], p[1], p[2]);
    } while (index_next(y->rank, y->dims, idx));
    return XDNN_OK;
}

/* ---- descriptors */
#define PW_MODE(id, arity, out, grp, summ, expr) \
    const op_desc op_##id##_desc = {             \
        .name = #id,                             \
        .summary = summ,                         \
        .ports = pw_ports_##arity,               \
        .nports = arity,                         \
        .nrequired = arity,                      \
        .results = pw_results_fwd,               \
        .nresults = 1,                           \
        .attrs = pw_attrs_##grp,                 \
        .nattrs = pw_nattrs_##grp,               \
        .infer = pw_infer,                       \
        .reference = pw_reference,               \
        .family = &pw_mode_##id,                 \
    };
#define PW_BWD(id, grp, expr)                                       \
    const op_desc op_##id##_bwd_desc = {                            \
        .name = #id "_bwd",                                         \
        .summary = "gradient of " #id ": dx = dy * d" #id "(x)/dx", \
        .ports = pw_ports_bwd,                                      \
        .nports = 2,                                                \
        .nrequired = 2,                                             \
        .results = pw_results_bwd,                                  \
        .nresults = 1,                                              \
        .attrs = pw_attrs_##grp,                                    \
        .nattrs = pw_nattrs_##grp,                                  \
        .infer = pw_infer,                                          \
        .reference = pw_reference,                                  \
        .family = &pw_mode_##id##_bwd,                              \
    };
#include "pointwise_modes.def"
#undef PW_MODE
#undef PW_BWD

/* random.c — ops that draw from the counter-based Philox stream
 * (src/data/philox.c): dropout and rng.  The GPU kernels draw the same
 * numbers, so masks and samples match the reference element for element,
 * whatever the layout or launch configuration.
 *
 * Key (seed) of a node: the `seed` attribute when given (used directly, like
 * an initializer's explicit seed=s); otherwise "auto":
 *   key = rng_tensor_seed(graph seed, node name)
 * i.e. fnv1a64 of the graph seed and the node's name (its first target), as
 * for seed=auto initializers, so two dropouts in one graph differ and the
 * graph `seed` option changes them all.
 *
 * Layout: packed row-major doubles; i is the logical (row-major) element index.
 * dropout:  u_i = rng_uniform01(key, DROPOUT_STREAM = 1, i); keep_i = u_i >= p;
 *           y_i = keep_i ? x_i / (1 - p) : 0;  mask_i = keep_i (bool).
 *           p = 1 drops everything (y = 0).  P(keep) = 1 - p up to the 2^-24
 *           resolution of u.
 * rng:      dist "uniform": y_i = lo + (hi - lo) * rng_uniform01(key, 0, i);
 *           dist "normal":  y_i = mean + std * rng_normal(key, 0, i).
 *           Stream 0 is the initializers' stream, so rng(shape=s, lo=a, hi=b,
 *           seed=k) equals the initializer uniform(a, b, seed=k) bit for bit.
 */
#include "data/data.h"
#include "tensor_util.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

enum { DROPOUT_STREAM = 1, RNG_STREAM = 0 };

static uint64_t node_key(const xnode *n, const op_desc *d, uint64_t graph_seed)
{
    if (op_attr_present(n, d, "seed"))
        return (uint64_t)op_attr_int(n, d, "seed");
    return rng_tensor_seed(graph_seed, n->name);
}

/* ---- dropout */

static xdnn_status dropout_infer(op_infer_ctx *c)
{
    if (!infer_need(c, 0))
        return XDNN_ERR_SEMANTIC;
    double p = op_attr_float(c->node, c->desc, "p");
    if (!(p >= 0 && p <= 1)) {
        op_error(c, "attribute 'p' (drop probability) must be in [0, 1], got %g", p);
        return XDNN_ERR_SEMANTIC;
    }
    c->out[0] = *c->in[0];
    if (c->nresults == 2) {
        c->out[1] = *c->in[0];
        c->out[1].dtype = XDNN_BOOL;
    }
    return XDNN_OK;
}

static xdnn_status dropout_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0], *mask = c->nresults == 2 ? c->out[1] : NULL;
    double p = op_attr_float(c->node, c->desc, "p");
    double keep_scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
    uint64_t key = node_key(c->node, c->desc, c->seed);
#pragma omp parallel for schedule(static) if (x->numel > 65536)
    for (int64_t i = 0; i < x->numel; i++) {
        bool keep = rng_uniform01(key, DROPOUT_STREAM, (uint64_t)i) >= p;
        y->data[i] = keep ? x->data[i] * keep_scale : 0.0;
        if (mask)
            mask->data[i] = keep ? 1.0 : 0.0;
    }
    return XDNN_OK;
}

static const char *const dropout_ports[] = {"x"};
static const char *const dropout_results[] = {"y", "mask"};
static const attr_spec dropout_attrs[] = {
    {"p", AT_FLOAT, "0.5", NULL, "probability of dropping an element; kept ones are scaled by 1/(1-p)"},
    {"seed", AT_INT, NULL, NULL, "Philox key (default: auto = fnv1a64(graph seed, node name))"},
};

const op_desc op_dropout_desc = {
    .name = "dropout",
    .summary = "zero elements with probability p and scale the rest by 1/(1-p); 2 targets add the mask",
    .ports = dropout_ports, .nports = 1, .nrequired = 1,
    .results = dropout_results, .nresults = 2, .result_counts = 1u << 1 | 1u << 2,
    .attrs = dropout_attrs, .nattrs = 2,
    .infer = dropout_infer, .reference = dropout_ref,
};

/* ---- rng */

static xdnn_status rng_infer(op_infer_ctx *c)
{
    int64_t dims[XDNN_MAX_RANK];
    int n;
    if (!infer_int_list(c, "shape", XDNN_MAX_RANK, dims, &n))
        return XDNN_ERR_SEMANTIC;
    for (int i = 0; i < n; i++)
        if (dims[i] < 1) {
            char ds[128];
            op_error(c, "attribute 'shape' %s must hold sizes >= 1", shape_str(ds, sizeof ds, n, dims));
            return XDNN_ERR_SEMANTIC;
        }
    const char *dist = op_attr_str(c->node, c->desc, "dist");
    if (dist && strcmp(dist, "normal") == 0 && !(op_attr_float(c->node, c->desc, "std") >= 0)) {
        op_error(c, "attribute 'std' must be >= 0, got %g", op_attr_float(c->node, c->desc, "std"));
        return XDNN_ERR_SEMANTIC;
    }
    const value *dt = op_attr(c->node, c->desc, "dtype");
    c->out[0].dtype = dt && dt->kind == VAL_DTYPE ? dt->dt : XDNN_F32;
    c->out[0].rank = n;
    memcpy(c->out[0].dims, dims, (size_t)n * sizeof dims[0]);
    return XDNN_OK;
}

static xdnn_status rng_ref(op_ref_ctx *c)
{
    ref_tensor *y = c->out[0];
    const char *dist = op_attr_str(c->node, c->desc, "dist");
    bool normal = dist && strcmp(dist, "normal") == 0;
    double a = op_attr_float(c->node, c->desc, normal ? "mean" : "lo");
    double b = normal ? op_attr_float(c->node, c->desc, "std")
                      : op_attr_float(c->node, c->desc, "hi") - op_attr_float(c->node, c->desc, "lo");
    uint64_t key = node_key(c->node, c->desc, c->seed);
#pragma omp parallel for schedule(static) if (y->numel > 65536)
    for (int64_t i = 0; i < y->numel; i++)
        y->data[i] = a + b * (normal ? rng_normal(key, RNG_STREAM, (uint64_t)i)
                                     : rng_uniform01(key, RNG_STREAM, (uint64_t)i));
    return XDNN_OK;
}

static const char *const rng_results[] = {"y"};
static const attr_spec rng_attrs[] = {
    {"shape", AT_INTS, NULL, NULL, "dims of the result"},
    {"dist", AT_STRING, "\"uniform\"", "uniform|normal", "distribution"},
    {"lo", AT_FLOAT, "-1", NULL, "uniform: lower bound (inclusive)"},
    {"hi", AT_FLOAT, "1", NULL, "uniform: upper bound (exclusive)"},
    {"mean", AT_FLOAT, "0", NULL, "normal: mean"},
    {"std", AT_FLOAT, "1", NULL, "normal: standard deviation"},
    {"seed", AT_INT, NULL, NULL, "Philox key (default: auto = fnv1a64(graph seed, node name))"},
    {"dtype", AT_DTYPE, NULL, NULL, "natural dtype of the result (default f32)"},
};

/* One Philox block plus a multiply-add per element (normal adds log/cos). */
static double rng_flops(const xgraph *g, const xnode *n) { return 2.0 * (double)node_result_numel(g, n, 0); }

const op_desc op_rng_desc = {
    .name = "rng",
    .summary = "a tensor of Philox random numbers (uniform or normal), no tensor inputs",
    .ports = NULL, .nports = 0, .nrequired = 0,
    .results = rng_results, .nresults = 1,
    .attrs = rng_attrs, .nattrs = 8,
    .infer = rng_infer, .reference = rng_ref, .flops = rng_flops,
};

/* norm_infer_var.c — batchnorm_infer_var: batch normalization at inference
 * from the running statistics exactly as frameworks store them (PyTorch's
 * running_mean / running_var buffers and eps, ONNX BatchNormalization):
 *   y = (x - mean_c) / sqrt(var_c + eps) * scale_c + bias_c
 * batchnorm_infer (norm_batch.c) takes cuDNN's inverse standard deviation
 * instead; feeding it 1/sqrt(var + eps) computed elsewhere rounds twice.
 *
 * Layout: x is [N, C, ...] (rank >= 2), packed row-major doubles; scale, bias,
 * mean and var are per-channel parameters ([C], [1, C, 1, ...] or one
 * element; see norm_util.h).  The square root and division are in double.
 */
#include "norm_util.h"

#include <math.h>

enum { BV_X, BV_SCALE, BV_BIAS, BV_MEAN, BV_VAR };

static const char *const bv_ports[] = {"x", "scale", "bias", "mean", "var"};
static const char *const bv_results[] = {"y"};
static const attr_spec bv_attrs[] = {
    {"eps", AT_FLOAT, "1e-5", NULL, "added to var before the square root (PyTorch's default 1e-5)"},
};

static xdnn_status bv_infer(op_infer_ctx *c)
{
    if (!infer_need(c, BV_X))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[BV_X];
    if (!norm_check_nc(c, x) || !norm_check_eps(c, NULL))
        return XDNN_ERR_SEMANTIC;
    for (int p = BV_SCALE; p <= BV_VAR; p++)
        if (!norm_check_channel_param(c, p, x))
            return XDNN_ERR_SEMANTIC;
    c->out[0] = *x;
    return XDNN_OK;
}

static xdnn_status bv_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[BV_X], *scale = c->in[BV_SCALE], *bias = c->in[BV_BIAS];
    const ref_tensor *mean = c->in[BV_MEAN], *var = c->in[BV_VAR];
    ref_tensor *y = c->out[0];
    if (!x || !scale || !bias || !mean || !var || !y)
        return op_ref_error(c, XDNN_ERR_INTERNAL, "missing operand after inference");
    double eps = op_attr_float(c->node, c->desc, "eps");
    int64_t N = x->dims[0], C = x->dims[1], S = norm_spatial(x);
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++) {
            double m = mean->data[norm_pidx(mean, ch)], sd = sqrt(var->data[norm_pidx(var, ch)] + eps);
            double sc = scale->data[norm_pidx(scale, ch)], b = bias->data[norm_pidx(bias, ch)];
            for (int64_t s = 0; s < S; s++) {
                int64_t o = (n * C + ch) * S + s;
                y->data[o] = (x->data[o] - m) / sd * sc + b;
            }
        }
    return XDNN_OK;
}

/* subtract, divide, multiply, add */
static double bv_flops(const xgraph *g, const xnode *n) { return 4.0 * (double)node_port_numel(g, n, 0); }

const op_desc op_batchnorm_infer_var_desc = {
    .name = "batchnorm_infer_var",
    .summary = "batch normalization, inference, from running mean and var: y = (x - mean) / sqrt(var + eps) * scale + bias",
    .ports = bv_ports, .nports = 5, .nrequired = 5,
    .results = bv_results, .nresults = 1,
    .attrs = bv_attrs, .nattrs = 1,
    .infer = bv_infer, .reference = bv_ref, .flops = bv_flops,
};

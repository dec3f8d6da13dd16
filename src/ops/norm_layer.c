/* norm_layer.c — layer norm and RMS norm over the trailing axes, forward and
 * backward (cuDNN LAYER_NORM, LAYER_NORM_BPROP, RMS_NORM).
 *
 * Layout: x is viewed as [R, D] with D = the product of the normalized
 * trailing dims (attribute axes, default [-1]) and R = numel / D rows.
 * scale/bias are per-feature [D] (see norm_util.h); the statistics are one
 * value per row, shaped like x with the normalized dims set to 1.
 *
 * layernorm:  mean_r = sum_j x_rj / D,  var_r = sum_j (x_rj - mean_r)^2 / D (biased),
 *             inv_var_r = 1 / sqrt(var_r + eps),
 *             y_rj = (x_rj - mean_r) * inv_var_r * scale_j + bias_j.
 *   1 target = inference (y); 3 targets = training (y, mean, inv_var).
 * layernorm_bwd (xhat = (x - mean) * inv_var, g = dy * scale):
 *             dbias_j = sum_r dy_rj,  dscale_j = sum_r dy_rj * xhat_rj,
 *             dx_rj = inv_var_r / D * (D g_rj - sum_k g_rk - xhat_rj sum_k g_rk xhat_rk).
 * rmsnorm:    inv_rms_r = 1 / sqrt(sum_j x_rj^2 / D + eps),
 *             y_rj = x_rj * inv_rms_r * scale_j (+ bias_j when given).
 *   1 target = y; 2 targets = (y, inv_rms).
 * rmsnorm_bwd (xhat = x * inv_rms, g = dy * scale):
 *             dx_rj = inv_rms_r * (g_rj - xhat_rj * sum_k g_rk xhat_rk / D),
 *             dscale_j = sum_r dy_rj xhat_rj,  dbias_j = sum_r dy_rj (3 targets).
 * Sums are in double; rows run in parallel, parameter gradients per feature.
 */
#include "norm_util.h"

#include <math.h>

enum { LN_X, LN_SCALE, LN_BIAS };
enum { LNB_DY, LNB_X, LNB_SCALE, LNB_MEAN, LNB_INV };

/* Statistics shape: x with the normalized trailing k dims set to 1. */
static void row_stats_shape(const tinfo *x, int k, tinfo *out)
{
    *out = *x;
    out->dtype = norm_stats_dtype(x->dtype);
    for (int i = x->rank - k; i < x->rank; i++)
        out->dims[i] = 1;
}

static int64_t trailing_size(const tinfo *x, int k)
{
    return shape_numel(k, x->dims + x->rank - k);
}

/* ---- layernorm */

static xdnn_status layernorm_infer(op_infer_ctx *c)
{
    if (!infer_need(c, LN_X))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[LN_X];
    int k = norm_infer_trailing_axes(c, x);
    if (k < 0 || !norm_check_eps(c, NULL) || !norm_check_feature_param(c, LN_SCALE, x, k) ||
        !norm_check_feature_param(c, LN_BIAS, x, k))
        return XDNN_ERR_SEMANTIC;
    c->out[0] = *x;
    if (c->nresults == 3) {
        row_stats_shape(x, k, &c->out[1]);
        row_stats_shape(x, k, &c->out[2]);
    }
    return XDNN_OK;
}

static xdnn_status layernorm_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[LN_X], *scale = c->in[LN_SCALE], *bias = c->in[LN_BIAS];
    int k = norm_trailing_axes(c->node, c->desc, x->rank);
    double eps = op_attr_float(c->node, c->desc, "eps");
    int64_t D = shape_numel(k, x->dims + x->rank - k), R = D ? x->numel / D : 0;
    ref_tensor *y = c->out[0];
    ref_tensor *mean_out = c->nresults == 3 ? c->out[1] : NULL, *inv_out = c->nresults == 3 ? c->out[2] : NULL;
#pragma omp parallel for schedule(static) if (x->numel > 65536)
    for (int64_t r = 0; r < R; r++) {
        const double *xr = x->data + r * D;
        double sum = 0;
        for (int64_t j = 0; j < D; j++)
            sum += xr[j];
        double mean = sum / (double)D, sq = 0;
        for (int64_t j = 0; j < D; j++)
            sq += (xr[j] - mean) * (xr[j] - mean);
        double inv = 1.0 / sqrt(sq / (double)D + eps);
        for (int64_t j = 0; j < D; j++)
            y->data[r * D + j] =
                (xr[j] - mean) * inv * scale->data[norm_pidx(scale, j)] + bias->data[norm_pidx(bias, j)];
        if (mean_out) {
            mean_out->data[r] = mean;
            inv_out->data[r] = inv;
        }
    }
    return XDNN_OK;
}

static const char *const layernorm_ports[] = {"x", "scale", "bias"};
static const char *const layernorm_results[] = {"y", "mean", "inv_var"};
static const attr_spec layernorm_attrs[] = {
    {"axes", AT_INTS, "[-1]", NULL, "normalized axes: the trailing axes of x"},
    {"eps", AT_FLOAT, "1e-5", NULL, "added to the variance"},
};

const op_desc op_layernorm_desc = {
    .name = "layernorm",
    .summary = "layer normalization over trailing axes; 1 target = inference, 3 = training (y, mean, inv_var)",
    .ports = layernorm_ports, .nports = 3, .nrequired = 3,
    .results = layernorm_results, .nresults = 3, .result_counts = 1u << 1 | 1u << 3,
    .attrs = layernorm_attrs, .nattrs = 2,
    .infer = layernorm_infer, .reference = layernorm_ref, .flops = norm_flops_fwd,
};

/* ---- layernorm_bwd */

static xdnn_status layernorm_bwd_infer(op_infer_ctx *c)
{
    if (!infer_need(c, LNB_X))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[LNB_X];
    int k = norm_infer_trailing_axes(c, x);
    if (k < 0)
        return XDNN_ERR_SEMANTIC;
    tinfo stats;
    row_stats_shape(x, k, &stats);
    int64_t R = shape_numel(x->rank, x->dims) / (trailing_size(x, k) ? trailing_size(x, k) : 1);
    if (!norm_check_same_shape(c, LNB_DY, LNB_X) || !norm_check_feature_param(c, LNB_SCALE, x, k) ||
        !norm_check_stats(c, LNB_MEAN, R, &stats) || !norm_check_stats(c, LNB_INV, R, &stats))
        return XDNN_ERR_SEMANTIC;
    c->out[0] = *x;
    c->out[0].dtype = c->in[LNB_DY]->dtype;
    c->out[1] = *c->in[LNB_SCALE];
    c->out[2] = *c->in[LNB_SCALE];
    return XDNN_OK;
}

static xdnn_status layernorm_bwd_ref(op_ref_ctx *c)
{
    const ref_tensor *dy = c->in[LNB_DY], *x = c->in[LNB_X], *scale = c->in[LNB_SCALE];
    const ref_tensor *mean = c->in[LNB_MEAN], *inv = c->in[LNB_INV];
    ref_tensor *dx = c->out[0], *dscale = c->out[1], *dbias = c->out[2];
    int k = norm_trailing_axes(c->node, c->desc, x->rank);
    int64_t D = shape_numel(k, x->dims + x->rank - k), R = D ? x->numel / D : 0;
#pragma omp parallel for schedule(static) if (x->numel > 65536)
    for (int64_t r = 0; r < R; r++) {
        const double *xr = x->data + r * D, *dyr = dy->data + r * D;
        double m = mean->data[r], iv = inv->data[r], sum_g = 0, sum_gx = 0;
        for (int64_t j = 0; j < D; j++) {
            double g = dyr[j] * scale->data[norm_pidx(scale, j)];
            sum_g += g;
            sum_gx += g * (xr[j] - m) * iv;
        }
        for (int64_t j = 0; j < D; j++) {
            double g = dyr[j] * scale->data[norm_pidx(scale, j)], xhat = (xr[j] - m) * iv;
            dx->data[r * D + j] = iv / (double)D * ((double)D * g - sum_g - xhat * sum_gx);
        }
    }
    for (int64_t i = 0; i < dscale->numel; i++)
        dscale->data[i] = dbias->data[i] = 0;
    for (int64_t r = 0; r < R; r++)
        for (int64_t j = 0; j < D; j++) {
            double d = dy->data[r * D + j], xhat = (x->data[r * D + j] - mean->data[r]) * inv->data[r];
            dscale->data[norm_pidx(dscale, j)] += d * xhat;
            dbias->data[norm_pidx(dbias, j)] += d;
        }
    return XDNN_OK;
}

static const char *const layernorm_bwd_ports[] = {"dy", "x", "scale", "mean", "inv_var"};
static const char *const norm_bwd_results[] = {"dx", "dscale", "dbias"};
static const attr_spec layernorm_bwd_attrs[] = {
    {"axes", AT_INTS, "[-1]", NULL, "normalized axes, as in the forward"},
};

const op_desc op_layernorm_bwd_desc = {
    .name = "layernorm_bwd",
    .summary = "layer norm backward from the saved mean and inv_var: dx, dscale, dbias",
    .ports = layernorm_bwd_ports, .nports = 5, .nrequired = 5,
    .results = norm_bwd_results, .nresults = 3,
    .attrs = layernorm_bwd_attrs, .nattrs = 1,
    .infer = layernorm_bwd_infer, .reference = layernorm_bwd_ref, .flops = norm_flops_bwd,
};

/* ---- rmsnorm */

static xdnn_status rmsnorm_infer(op_infer_ctx *c)
{
    if (!infer_need(c, LN_X))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[LN_X];
    int k = norm_infer_trailing_axes(c, x);
    if (k < 0 || !norm_check_eps(c, NULL) || !norm_check_feature_param(c, LN_SCALE, x, k))
        return XDNN_ERR_SEMANTIC;
    if (c->nin > LN_BIAS && c->in[LN_BIAS] && !norm_check_feature_param(c, LN_BIAS, x, k))
        return XDNN_ERR_SEMANTIC;
    c->out[0] = *x;
    if (c->nresults == 2)
        row_stats_shape(x, k, &c->out[1]);
    return XDNN_OK;
}

static xdnn_status rmsnorm_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[LN_X], *scale = c->in[LN_SCALE];
    const ref_tensor *bias = c->nin > LN_BIAS ? c->in[LN_BIAS] : NULL;
    int k = norm_trailing_axes(c->node, c->desc, x->rank);
    double eps = op_attr_float(c->node, c->desc, "eps");
    int64_t D = shape_numel(k, x->dims + x->rank - k), R = D ? x->numel / D : 0;
    ref_tensor *y = c->out[0], *inv_out = c->nresults == 2 ? c->out[1] : NULL;
#pragma omp parallel for schedule(static) if (x->numel > 65536)
    for (int64_t r = 0; r < R; r++) {
        const double *xr = x->data + r * D;
        double sq = 0;
        for (int64_t j = 0; j < D; j++)
            sq += xr[j] * xr[j];
        double inv = 1.0 / sqrt(sq / (double)D + eps);
        for (int64_t j = 0; j < D; j++)
            y->data[r * D + j] = xr[j] * inv * scale->data[norm_pidx(scale, j)] +
                                 (bias ? bias->data[norm_pidx(bias, j)] : 0.0);
        if (inv_out)
            inv_out->data[r] = inv;
    }
    return XDNN_OK;
}

static const char *const rmsnorm_results[] = {"y", "inv_rms"};

const op_desc op_rmsnorm_desc = {
    .name = "rmsnorm",
    .summary = "RMS normalization over trailing axes (bias optional); 2 targets also give inv_rms",
    .ports = layernorm_ports, .nports = 3, .nrequired = 2,
    .results = rmsnorm_results, .nresults = 2, .result_counts = 1u << 1 | 1u << 2,
    .attrs = layernorm_attrs, .nattrs = 2,
    .infer = rmsnorm_infer, .reference = rmsnorm_ref, .flops = norm_flops_fwd,
};

/* ---- rmsnorm_bwd */

enum { RMB_DY, RMB_X, RMB_SCALE, RMB_INV };

static xdnn_status rmsnorm_bwd_infer(op_infer_ctx *c)
{
    if (!infer_need(c, RMB_X))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[RMB_X];
    int k = norm_infer_trailing_axes(c, x);
    if (k < 0)
        return XDNN_ERR_SEMANTIC;
    tinfo stats;
    row_stats_shape(x, k, &stats);
    int64_t D = trailing_size(x, k), R = shape_numel(x->rank, x->dims) / (D ? D : 1);
    if (!norm_check_same_shape(c, RMB_DY, RMB_X) || !norm_check_feature_param(c, RMB_SCALE, x, k) ||
        !norm_check_stats(c, RMB_INV, R, &stats))
        return XDNN_ERR_SEMANTIC;
    c->out[0] = *x;
    c->out[0].dtype = c->in[RMB_DY]->dtype;
    for (int i = 1; i < c->nresults; i++)
        c->out[i] = *c->in[RMB_SCALE];
    return XDNN_OK;
}

static xdnn_status rmsnorm_bwd_ref(op_ref_ctx *c)
{
    const ref_tensor *dy = c->in[RMB_DY], *x = c->in[RMB_X], *scale = c->in[RMB_SCALE], *inv = c->in[RMB_INV];
    ref_tensor *dx = c->out[0], *dscale = c->out[1], *dbias = c->nresults == 3 ? c->out[2] : NULL;
    int k = norm_trailing_axes(c->node, c->desc, x->rank);
    int64_t D = shape_numel(k, x->dims + x->rank - k), R = D ? x->numel / D : 0;
#pragma omp parallel for schedule(static) if (x->numel > 65536)
    for (int64_t r = 0; r < R; r++) {
        const double *xr = x->data + r * D, *dyr = dy->data + r * D;
        double iv = inv->data[r], sum_gx = 0;
        for (int64_t j = 0; j < D; j++)
            sum_gx += dyr[j] * scale->data[norm_pidx(scale, j)] * xr[j] * iv;
        for (int64_t j = 0; j < D; j++) {
            double g = dyr[j] * scale->data[norm_pidx(scale, j)];
            dx->data[r * D + j] = iv * (g - xr[j] * iv * sum_gx / (double)D);
        }
    }
    for (int64_t i = 0; i < dscale->numel; i++) {
        dscale->data[i] = 0;
        if (dbias)
            dbias->data[i] = 0;
    }
    for (int64_t r = 0; r < R; r++)
        for (int64_t j = 0; j < D; j++) {
            double d = dy->data[r * D + j];
            dscale->data[norm_pidx(dscale, j)] += d * x->data[r * D + j] * inv->data[r];
            if (dbias)
                dbias->data[norm_pidx(dbias, j)] += d;
        }
    return XDNN_OK;
}

static const char *const rmsnorm_bwd_ports[] = {"dy", "x", "scale", "inv_rms"};

const op_desc op_rmsnorm_bwd_desc = {
    .name = "rmsnorm_bwd",
    .summary = "RMS norm backward from the saved inv_rms: dx, dscale[, dbias]",
    .ports = rmsnorm_bwd_ports, .nports = 4, .nrequired = 4,
    .results = norm_bwd_results, .nresults = 3, .result_counts = 1u << 2 | 1u << 3,
    .attrs = layernorm_bwd_attrs, .nattrs = 1,
    .infer = rmsnorm_bwd_infer, .reference = rmsnorm_bwd_ref, .flops = norm_flops_bwd,
};

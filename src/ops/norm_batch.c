/* norm_batch.c — batch normalization: training forward (with optional
 * running-statistics update), inference and backward (cuDNN BATCHNORM,
 * BATCHNORM_INFERENCE, DBN).
 *
 * Layout: x is [N, C, ...] (rank >= 2); statistics are per channel c over
 * M = N * prod(dims[2..]) values.  scale, bias, mean, inv_var and the running
 * statistics are per-channel: [C] or [1, C, 1, ...] (see norm_util.h).
 *
 * batchnorm (training):
 *   mean_c = sum x / M,  var_c = sum (x - mean_c)^2 / M (biased),
 *   inv_var_c = 1 / sqrt(var_c + eps),
 *   y = (x - mean_c) * inv_var_c * scale_c + bias_c.
 *   3 targets: y, mean, inv_var.  5 targets (needs running_mean= and
 *   running_var=) also give, as PyTorch does (unbiased variance, M > 1):
 *     running_mean_next = (1 - momentum) * running_mean + momentum * mean_c
 *     running_var_next  = (1 - momentum) * running_var  + momentum * var_c * M / (M - 1)
 *   mean and inv_var take scale's shape when scale is per-channel, else
 *   [1, C, 1, ...]; the running results take their inputs' shapes.
 * batchnorm_infer (cuDNN takes the inverse standard deviation, not var):
 *   y = (x - mean_c) * inv_var_c * scale_c + bias_c.
 * batchnorm_bwd (xhat = (x - mean_c) * inv_var_c), sums over n and spatial:
 *   dbias_c = sum dy,  dscale_c = sum dy * xhat,
 *   dx = scale_c * inv_var_c / M * (M dy - dbias_c - xhat * dscale_c).
 * Channels run in parallel; sums in double.
 */
#include "norm_util.h"

#include <math.h>
#include <stdlib.h>

enum { BN_X, BN_SCALE, BN_BIAS, BN_RMEAN, BN_RVAR };

/* Per-channel statistics shape: scale's when it has C elements. */
static void channel_stats_shape(const tinfo *x, const tinfo *scale, tinfo *out)
{
    if (shape_numel(scale->rank, scale->dims) == x->dims[1] && scale->rank >= 1) {
        *out = *scale;
    } else {
        out->rank = x->rank;
        for (int i = 0; i < x->rank; i++)
            out->dims[i] = i == 1 ? x->dims[1] : 1;
    }
    out->dtype = norm_stats_dtype(x->dtype);
}

static bool has_port(const op_infer_ctx *c, int port) { return port < c->nin && c->in[port]; }

/* Offset of element (n, c, s) of a packed [N, C, S] tensor. */
static inline int64_t ncs(int64_t n, int64_t ch, int64_t s, int64_t C, int64_t S) { return (n * C + ch) * S + s; }

/* ---- batchnorm (training) */

static xdnn_status batchnorm_infer(op_infer_ctx *c)
{
    if (!infer_need(c, BN_X))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[BN_X];
    if (!norm_check_nc(c, x) || !norm_check_eps(c, NULL) || !norm_check_channel_param(c, BN_SCALE, x) ||
        !norm_check_channel_param(c, BN_BIAS, x))
        return XDNN_ERR_SEMANTIC;
    double momentum = op_attr_float(c->node, c->desc, "momentum");
    if (!(momentum >= 0 && momentum <= 1)) {
        op_error(c, "attribute 'momentum' must be in [0, 1], got %g", momentum);
        return XDNN_ERR_SEMANTIC;
    }
    bool running = has_port(c, BN_RMEAN) || has_port(c, BN_RVAR);
    if (c->nresults == 5) {
        if (!has_port(c, BN_RMEAN) || !has_port(c, BN_RVAR)) {
            op_error(c, "5 targets (y, mean, inv_var, running_mean_next, running_var_next) need both "
                        "running_mean= and running_var=");
            return XDNN_ERR_SEMANTIC;
        }
        if (!norm_check_channel_param(c, BN_RMEAN, x) || !norm_check_channel_param(c, BN_RVAR, x))
            return XDNN_ERR_SEMANTIC;
        int64_t M = shape_numel(x->rank, x->dims) / x->dims[1];
        if (M < 2) {
            char xs[128];
            op_error(c, "updating running_var needs more than 1 value per channel, x is %s",
                     tinfo_str(xs, sizeof xs, x));
            return XDNN_ERR_SEMANTIC;
        }
    } else if (running) {
        op_error(c, "running_mean/running_var are given but only %d targets are written; write 5 targets "
                    "(y, mean, inv_var, running_mean_next, running_var_next) to update them", c->nresults);
        return XDNN_ERR_SEMANTIC;
    }
    c->out[0] = *x;
    channel_stats_shape(x, c->in[BN_SCALE], &c->out[1]);
    c->out[2] = c->out[1];
    if (c->nresults == 5) {
        c->out[3] = *c->in[BN_RMEAN];
        c->out[4] = *c->in[BN_RVAR];
    }
    return XDNN_OK;
}

static xdnn_status batchnorm_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[BN_X], *scale = c->in[BN_SCALE], *bias = c->in[BN_BIAS];
    double eps = op_attr_float(c->node, c->desc, "eps"), momentum = op_attr_float(c->node, c->desc, "momentum");
    int64_t N = x->dims[0], C = x->dims[1], S = norm_spatial(x), M = N * S;
    ref_tensor *y = c->out[0], *mean_out = c->out[1], *inv_out = c->out[2];
    bool running = c->nresults == 5;
#pragma omp parallel for schedule(static) if (x->numel > 65536)
    for (int64_t ch = 0; ch < C; ch++) {
        double sum = 0, sq = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t s = 0; s < S; s++)
                sum += x->data[ncs(n, ch, s, C, S)];
        double mean = sum / (double)M;
        for (int64_t n = 0; n < N; n++)
            for (int64_t s = 0; s < S; s++) {
                double d = x->data[ncs(n, ch, s, C, S)] - mean;
                sq += d * d;
            }
        double var = sq / (double)M, inv = 1.0 / sqrt(var + eps);
        double sc = scale->data[norm_pidx(scale, ch)], b = bias->data[norm_pidx(bias, ch)];
        for (int64_t n = 0; n < N; n++)
            for (int64_t s = 0; s < S; s++) {
                int64_t o = ncs(n, ch, s, C, S);
                y->data[o] = (x->data[o] - mean) * inv * sc + b;
            }
        mean_out->data[ch] = mean;
        inv_out->data[ch] = inv;
        if (running) {
            const ref_tensor *rm = c->in[BN_RMEAN], *rv = c->in[BN_RVAR];
            double unbiased = M > 1 ? sq / (double)(M - 1) : var;
            c->out[3]->data[norm_pidx(c->out[3], ch)] = (1 - momentum) * rm->data[norm_pidx(rm, ch)] + momentum * mean;
            c->out[4]->data[norm_pidx(c->out[4], ch)] =
                (1 - momentum) * rv->data[norm_pidx(rv, ch)] + momentum * unbiased;
        }
    }
    return XDNN_OK;
}

static const char *const batchnorm_ports[] = {"x", "scale", "bias", "running_mean", "running_var"};
static const char *const batchnorm_results[] = {"y", "mean", "inv_var", "running_mean_next", "running_var_next"};
static const attr_spec batchnorm_attrs[] = {
    {"eps", AT_FLOAT, "1e-5", NULL, "added to the variance"},
    {"momentum", AT_FLOAT, "0.1", NULL, "weight of the batch statistics in the running-statistics update"},
};

const op_desc op_batchnorm_desc = {
    .name = "batchnorm",
    .summary = "batch normalization, training: y, mean, inv_var[, running_mean_next, running_var_next]",
    .ports = batchnorm_ports, .nports = 5, .nrequired = 3,
    .results = batchnorm_results, .nresults = 5, .result_counts = 1u << 3 | 1u << 5,
    .attrs = batchnorm_attrs, .nattrs = 2,
    .infer = batchnorm_infer, .reference = batchnorm_ref, .flops = norm_flops_fwd,
};

/* ---- batchnorm_infer */

enum { BNI_X, BNI_SCALE, BNI_BIAS, BNI_MEAN, BNI_INV };

static xdnn_status batchnorm_infer_infer(op_infer_ctx *c)
{
    if (!infer_need(c, BNI_X))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[BNI_X];
    if (!norm_check_nc(c, x))
        return XDNN_ERR_SEMANTIC;
    for (int p = BNI_SCALE; p <= BNI_INV; p++)
        if (!norm_check_channel_param(c, p, x))
            return XDNN_ERR_SEMANTIC;
    c->out[0] = *x;
    return XDNN_OK;
}

static xdnn_status batchnorm_infer_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[BNI_X], *scale = c->in[BNI_SCALE], *bias = c->in[BNI_BIAS];
    const ref_tensor *mean = c->in[BNI_MEAN], *inv = c->in[BNI_INV];
    int64_t N = x->dims[0], C = x->dims[1], S = norm_spatial(x);
    ref_tensor *y = c->out[0];
#pragma omp parallel for schedule(static) if (x->numel > 65536)
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++) {
            double m = mean->data[norm_pidx(mean, ch)], iv = inv->data[norm_pidx(inv, ch)];
            double sc = scale->data[norm_pidx(scale, ch)], b = bias->data[norm_pidx(bias, ch)];
            for (int64_t s = 0; s < S; s++) {
                int64_t o = ncs(n, ch, s, C, S);
                y->data[o] = (x->data[o] - m) * iv * sc + b;
            }
        }
    return XDNN_OK;
}

static const char *const batchnorm_infer_ports[] = {"x", "scale", "bias", "mean", "inv_var"};
static const char *const batchnorm_infer_results[] = {"y"};

static double batchnorm_infer_flops(const xgraph *g, const xnode *n) { return 4.0 * (double)node_port_numel(g, n, 0); }

const op_desc op_batchnorm_infer_desc = {
    .name = "batchnorm_infer",
    .summary = "batch normalization, inference: y from given per-channel mean and inv_var",
    .ports = batchnorm_infer_ports, .nports = 5, .nrequired = 5,
    .results = batchnorm_infer_results, .nresults = 1,
    .infer = batchnorm_infer_infer, .reference = batchnorm_infer_ref, .flops = batchnorm_infer_flops,
};

/* ---- batchnorm_bwd */

enum { BNB_DY, BNB_X, BNB_SCALE, BNB_MEAN, BNB_INV };

static xdnn_status batchnorm_bwd_infer(op_infer_ctx *c)
{
    if (!infer_need(c, BNB_X))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[BNB_X];
    if (!norm_check_nc(c, x) || !norm_check_same_shape(c, BNB_DY, BNB_X))
        return XDNN_ERR_SEMANTIC;
    for (int p = BNB_SCALE; p <= BNB_INV; p++)
        if (!norm_check_channel_param(c, p, x))
            return XDNN_ERR_SEMANTIC;
    c->out[0] = *x;
    c->out[0].dtype = c->in[BNB_DY]->dtype;
    c->out[1] = *c->in[BNB_SCALE];
    c->out[2] = *c->in[BNB_SCALE];
    return XDNN_OK;
}

static xdnn_status batchnorm_bwd_ref(op_ref_ctx *c)
{
    const ref_tensor *dy = c->in[BNB_DY], *x = c->in[BNB_X], *scale = c->in[BNB_SCALE];
    const ref_tensor *mean = c->in[BNB_MEAN], *inv = c->in[BNB_INV];
    ref_tensor *dx = c->out[0], *dscale = c->out[1], *dbias = c->out[2];
    int64_t N = x->dims[0], C = x->dims[1], S = norm_spatial(x), M = N * S;
    for (int64_t i = 0; i < dscale->numel; i++)
        dscale->data[i] = dbias->data[i] = 0;
    /* Per-channel sums first (a one-element scale gets the total: its gradient). */
    double *sum_dy = calloc((size_t)C, sizeof(double)), *sum_dyx = calloc((size_t)C, sizeof(double));
    if (!sum_dy || !sum_dyx) {
        free(sum_dy);
        free(sum_dyx);
        return op_ref_error(c, XDNN_ERR_NOMEM, "out of memory");
    }
#pragma omp parallel for schedule(static) if (x->numel > 65536)
    for (int64_t ch = 0; ch < C; ch++) {
        double m = mean->data[norm_pidx(mean, ch)], iv = inv->data[norm_pidx(inv, ch)];
        for (int64_t n = 0; n < N; n++)
            for (int64_t s = 0; s < S; s++) {
                int64_t o = ncs(n, ch, s, C, S);
                sum_dy[ch] += dy->data[o];
                sum_dyx[ch] += dy->data[o] * (x->data[o] - m) * iv;
            }
        double sc = scale->data[norm_pidx(scale, ch)];
        for (int64_t n = 0; n < N; n++)
            for (int64_t s = 0; s < S; s++) {
                int64_t o = ncs(n, ch, s, C, S);
                double xhat = (x->data[o] - m) * iv;
                dx->data[o] = sc * iv / (double)M * ((double)M * dy->data[o] - sum_dy[ch] - xhat * sum_dyx[ch]);
            }
    }
    for (int64_t ch = 0; ch < C; ch++) {
        dscale->data[norm_pidx(dscale, ch)] += sum_dyx[ch];
        dbias->data[norm_pidx(dbias, ch)] += sum_dy[ch];
    }
    free(sum_dy);
    free(sum_dyx);
    return XDNN_OK;
}

static const char *const batchnorm_bwd_ports[] = {"dy", "x", "scale", "mean", "inv_var"};
static const char *const batchnorm_bwd_results[] = {"dx", "dscale", "dbias"};

const op_desc op_batchnorm_bwd_desc = {
    .name = "batchnorm_bwd",
    .summary = "batch norm backward from the saved mean and inv_var: dx, dscale, dbias",
    .ports = batchnorm_bwd_ports, .nports = 5, .nrequired = 5,
    .results = batchnorm_bwd_results, .nresults = 3,
    .infer = batchnorm_bwd_infer, .reference = batchnorm_bwd_ref, .flops = norm_flops_bwd,
};

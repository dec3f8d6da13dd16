/* norm_group.c — group normalization and instance normalization (= group norm
 * with one channel per group), forward and backward.
 *
 * Layout: x is [N, C, ...] (rank >= 2), S = prod(dims[2..]); group g of
 * G groups (C % G == 0) holds channels [g*C/G, (g+1)*C/G), so one (n, g)
 * statistic covers D = C/G * S values, contiguous in the packed tensor.
 * scale and bias are per-channel: [C] or [1, C, 1, ...] (see norm_util.h).
 * mean and inv_var are [N, G, 1, ...] (x's rank; [N, C, 1, ...] for instance
 * norm); the backward accepts any shape with N * G elements.
 *
 * forward:   mean_ng = sum x / D,  var_ng = sum (x - mean_ng)^2 / D (biased),
 *            inv_var_ng = 1 / sqrt(var_ng + eps),
 *            y = (x - mean_ng) * inv_var_ng * scale_c + bias_c.
 *            1 target = y; 3 targets = y, mean, inv_var.
 * backward:  xhat = (x - mean_ng) * inv_var_ng,  g = dy * scale_c,
 *            dx = inv_var_ng / D * (D g - sum_grp g - xhat * sum_grp g xhat),
 *            dscale_c = sum_{n,s} dy xhat,  dbias_c = sum_{n,s} dy.
 * Sums in double; (n, g) blocks run in parallel.
 */
#include "norm_util.h"

#include <inttypes.h>
#include <math.h>

enum { GN_X, GN_SCALE, GN_BIAS };
enum { GNB_DY, GNB_X, GNB_SCALE, GNB_MEAN, GNB_INV };

/* Groups of a node: the `groups` attribute, or C for instance norm. */
static int64_t node_groups(const xnode *n, const op_desc *d, int64_t C)
{
    return op_attr_index(d, "groups") >= 0 ? op_attr_int(n, d, "groups") : C;
}

static bool check_groups(op_infer_ctx *c, const tinfo *x, int64_t *G)
{
    int64_t C = x->dims[1];
    if (op_attr_index(c->desc, "groups") >= 0 && !op_attr_present(c->node, c->desc, "groups")) {
        op_error(c, "attribute 'groups' is required (a divisor of C = %" PRId64 ")", C);
        return false;
    }
    *G = node_groups(c->node, c->desc, C);
    if (*G >= 1 && C % *G == 0)
        return true;
    char xs[128];
    op_error(c, "attribute 'groups' must divide the channels C = %" PRId64 " of x %s, got %" PRId64, C,
             tinfo_str(xs, sizeof xs, x), *G);
    return false;
}

static void group_stats_shape(const tinfo *x, int64_t G, tinfo *out)
{
    out->rank = x->rank;
    for (int i = 0; i < x->rank; i++)
        out->dims[i] = i == 0 ? x->dims[0] : i == 1 ? G : 1;
    out->dtype = norm_stats_dtype(x->dtype);
}

static xdnn_status groupnorm_infer(op_infer_ctx *c)
{
    if (!infer_need(c, GN_X))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[GN_X];
    int64_t G;
    if (!norm_check_nc(c, x) || !check_groups(c, x, &G) || !norm_check_eps(c, NULL) ||
        !norm_check_channel_param(c, GN_SCALE, x) || !norm_check_channel_param(c, GN_BIAS, x))
        return XDNN_ERR_SEMANTIC;
    c->out[0] = *x;
    if (c->nresults == 3) {
        group_stats_shape(x, G, &c->out[1]);
        c->out[2] = c->out[1];
    }
    return XDNN_OK;
}

static xdnn_status groupnorm_ref(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[GN_X], *scale = c->in[GN_SCALE], *bias = c->in[GN_BIAS];
    double eps = op_attr_float(c->node, c->desc, "eps");
    int64_t N = x->dims[0], C = x->dims[1], S = norm_spatial(x);
    int64_t G = node_groups(c->node, c->desc, C), CG = C / G, D = CG * S;
    ref_tensor *y = c->out[0];
    ref_tensor *mean_out = c->nresults == 3 ? c->out[1] : NULL, *inv_out = c->nresults == 3 ? c->out[2] : NULL;
#pragma omp parallel for schedule(static) if (x->numel > 65536)
    for (int64_t ng = 0; ng < N * G; ng++) {
        const double *xb = x->data + ng * D; /* block (n, g): channels g*CG.., all spatial */
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < D; i++)
            sum += xb[i];
        double mean = sum / (double)D;
        for (int64_t i = 0; i < D; i++)
            sq += (xb[i] - mean) * (xb[i] - mean);
        double inv = 1.0 / sqrt(sq / (double)D + eps);
        for (int64_t i = 0; i < D; i++) {
            int64_t ch = (ng % G) * CG + i / S;
            y->data[ng * D + i] =
                (xb[i] - mean) * inv * scale->data[norm_pidx(scale, ch)] + bias->data[norm_pidx(bias, ch)];
        }
        if (mean_out) {
            mean_out->data[ng] = mean;
            inv_out->data[ng] = inv;
        }
    }
    return XDNN_OK;
}

static xdnn_status groupnorm_bwd_infer(op_infer_ctx *c)
{
    if (!infer_need(c, GNB_X))
        return XDNN_ERR_SEMANTIC;
    const tinfo *x = c->in[GNB_X];
    int64_t G;
    if (!norm_check_nc(c, x) || !check_groups(c, x, &G) || !norm_check_same_shape(c, GNB_DY, GNB_X) ||
        !norm_check_channel_param(c, GNB_SCALE, x))
        return XDNN_ERR_SEMANTIC;
    tinfo stats;
    group_stats_shape(x, G, &stats);
    if (!norm_check_stats(c, GNB_MEAN, x->dims[0] * G, &stats) || !norm_check_stats(c, GNB_INV, x->dims[0] * G, &stats))
        return XDNN_ERR_SEMANTIC;
    c->out[0] = *x;
    c->out[0].dtype = c->in[GNB_DY]->dtype;
    c->out[1] = *c->in[GNB_SCALE];
    c->out[2] = *c->in[GNB_SCALE];
    return XDNN_OK;
}

static xdnn_status groupnorm_bwd_ref(op_ref_ctx *c)
{
    const ref_tensor *dy = c->in[GNB_DY], *x = c->in[GNB_X], *scale = c->in[GNB_SCALE];
    const ref_tensor *mean = c->in[GNB_MEAN], *inv = c->in[GNB_INV];
    ref_tensor *dx = c->out[0], *dscale = c->out[1], *dbias = c->out[2];
    int64_t N = x->dims[0], C = x->dims[1], S = norm_spatial(x);
    int64_t G = node_groups(c->node, c->desc, C), CG = C / G, D = CG * S;
#pragma omp parallel for schedule(static) if (x->numel > 65536)
    for (int64_t ng = 0; ng < N * G; ng++) {
        double m = mean->data[ng], iv = inv->data[ng], sum_g = 0, sum_gx = 0;
        for (int64_t i = 0; i < D; i++) {
            int64_t o = ng * D + i, ch = (ng % G) * CG + i / S;
            double g = dy->data[o] * scale->data[norm_pidx(scale, ch)];
            sum_g += g;
            sum_gx += g * (x->data[o] - m) * iv;
        }
        for (int64_t i = 0; i < D; i++) {
            int64_t o = ng * D + i, ch = (ng % G) * CG + i / S;
            double g = dy->data[o] * scale->data[norm_pidx(scale, ch)], xhat = (x->data[o] - m) * iv;
            dx->data[o] = iv / (double)D * ((double)D * g - sum_g - xhat * sum_gx);
        }
    }
    for (int64_t i = 0; i < dscale->numel; i++)
        dscale->data[i] = dbias->data[i] = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++) {
            int64_t ng = n * G + ch / CG;
            for (int64_t s = 0; s < S; s++) {
                int64_t o = (n * C + ch) * S + s;
                dscale->data[norm_pidx(dscale, ch)] += dy->data[o] * (x->data[o] - mean->data[ng]) * inv->data[ng];
                dbias->data[norm_pidx(dbias, ch)] += dy->data[o];
            }
        }
    return XDNN_OK;
}

static const char *const gn_ports[] = {"x", "scale", "bias"};
static const char *const gn_results[] = {"y", "mean", "inv_var"};
static const char *const gn_bwd_ports[] = {"dy", "x", "scale", "mean", "inv_var"};
static const char *const gn_bwd_results[] = {"dx", "dscale", "dbias"};
static const attr_spec groupnorm_attrs[] = {
    {"groups", AT_INT, NULL, NULL, "number of channel groups; must divide C"},
    {"eps", AT_FLOAT, "1e-5", NULL, "added to the variance"},
};
static const attr_spec groupnorm_bwd_attrs[] = {
    {"groups", AT_INT, NULL, NULL, "number of channel groups, as in the forward"},
};
static const attr_spec instancenorm_attrs[] = {
    {"eps", AT_FLOAT, "1e-5", NULL, "added to the variance"},
};

const op_desc op_groupnorm_desc = {
    .name = "groupnorm",
    .summary = "group normalization over channel groups and spatial dims; 3 targets add mean, inv_var",
    .ports = gn_ports, .nports = 3, .nrequired = 3,
    .results = gn_results, .nresults = 3, .result_counts = 1u << 1 | 1u << 3,
    .attrs = groupnorm_attrs, .nattrs = 2,
    .infer = groupnorm_infer, .reference = groupnorm_ref, .flops = norm_flops_fwd,
};

const op_desc op_groupnorm_bwd_desc = {
    .name = "groupnorm_bwd",
    .summary = "group norm backward from the saved mean and inv_var: dx, dscale, dbias",
    .ports = gn_bwd_ports, .nports = 5, .nrequired = 5,
    .results = gn_bwd_results, .nresults = 3,
    .attrs = groupnorm_bwd_attrs, .nattrs = 1,
    .infer = groupnorm_bwd_infer, .reference = groupnorm_bwd_ref, .flops = norm_flops_bwd,
};

const op_desc op_instancenorm_desc = {
    .name = "instancenorm",
    .summary = "instance normalization (per sample and channel over spatial dims); 3 targets add mean, inv_var",
    .ports = gn_ports, .nports = 3, .nrequired = 3,
    .results = gn_results, .nresults = 3, .result_counts = 1u << 1 | 1u << 3,
    .attrs = instancenorm_attrs, .nattrs = 1,
    .infer = groupnorm_infer, .reference = groupnorm_ref, .flops = norm_flops_fwd,
};

const op_desc op_instancenorm_bwd_desc = {
    .name = "instancenorm_bwd",
    .summary = "instance norm backward from the saved mean and inv_var: dx, dscale, dbias",
    .ports = gn_bwd_ports, .nports = 5, .nrequired = 5,
    .results = gn_bwd_results, .nresults = 3,
    .infer = groupnorm_bwd_infer, .reference = groupnorm_bwd_ref, .flops = norm_flops_bwd,
};

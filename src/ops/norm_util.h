/* norm_util.h — shape rules shared by the normalization ops (batch, layer,
 * rms, group, instance): which shapes a scale/bias/statistics tensor may have,
 * the dtype of statistics, eps checking and cost estimates.
 *
 * Parameter shapes (documented once, used by every norm op):
 *  - per-channel (batch, group, instance norm; channel = axis 1 of x [N, C, ...]):
 *    [C], or x's rank with every dim 1 except dim 1 = C ([1, C, 1, 1]), or a
 *    single element (any rank, all dims 1) that applies to every channel.
 *  - per-feature (layer and rms norm over the trailing k axes of x): right-
 *    aligned, the last k dims equal x's last k dims and any leading dims are 1
 *    ([D], [1, D], [1, 1, D] for k = 1), or a single element.
 *  A gradient (dscale, dbias) has the shape of the parameter it belongs to, so
 *  a single-element scale gets the sum over all channels/features.
 */
#ifndef XDNN_NORM_UTIL_H
#define XDNN_NORM_UTIL_H

#include "op.h"
#include "tensor_util.h"

/* Statistics (mean, inv_var, inv_rms) are f32, or f64 when x is f64. */
xdnn_dtype norm_stats_dtype(xdnn_dtype x);
/* The `eps` attribute must be finite and >= 0. */
bool norm_check_eps(op_infer_ctx *c, double *eps);
/* Input `port` is a per-channel parameter for x (rank >= 2, C = dims[1]). */
bool norm_check_channel_param(op_infer_ctx *c, int port, const tinfo *x);
/* Input `port` is a per-feature parameter for the last k axes of x. */
bool norm_check_feature_param(op_infer_ctx *c, int port, const tinfo *x, int k);
/* Input `port` has exactly the shape of input `like_port`. */
bool norm_check_same_shape(op_infer_ctx *c, int port, int like_port);
/* Input `port` (statistics) has `want` elements; `like` names the expected
 * shape in the message. */
bool norm_check_stats(op_infer_ctx *c, int port, int64_t want, const tinfo *like);
/* x must have rank >= 2 ([N, C, ...]). */
bool norm_check_nc(op_infer_ctx *c, const tinfo *x);

/* Number of trailing axes named by the `axes` attribute, which must name the
 * last k axes of a rank-`rank` tensor in any order; -1 otherwise. */
int norm_trailing_axes(const xnode *n, const op_desc *d, int rank);
/* The same with an error report naming x. */
int norm_infer_trailing_axes(op_infer_ctx *c, const tinfo *x);

/* Index into a parameter that is either per-channel/feature or one element. */
static inline int64_t norm_pidx(const ref_tensor *p, int64_t i) { return p->numel == 1 ? 0 : i; }
/* Product of dims[2..] (the spatial size of [N, C, ...]). */
int64_t norm_spatial(const ref_tensor *x);

/* Cost models: a forward reads x twice (mean, variance) and writes y, about 8
 * flops per element; a backward about 12. */
double norm_flops_fwd(const xgraph *g, const xnode *n);
double norm_flops_bwd(const xgraph *g, const xnode *n);

#endif

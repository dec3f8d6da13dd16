/* quant_conv.c — scaled_conv(x, w, x_scale, w_scale[, bias][, y_scale]): the
 * int8 / fp8 convolution (cuDNN's int8 conv, ONNX QLinearConv with zero
 * points 0), with the window attributes of conv (conv_util.h):
 *     acc[n, k, out...] = sum over c < C/groups and the window of x * w
 *     v = acc * x_scale * w_scale[k] + bias[k]
 *     y = v                           dtype bf16 (default), f16 or f32
 *     y = sat(RNE(v / y_scale))       dtype i8, fp8_e4m3 or fp8_e5m2
 * x and w are both i8 or both fp8 (any mix of e4m3 / e5m2); every scale is a
 * dequantization scale (x ~ q * s, as for quantize).  x_scale and y_scale are
 * per-tensor (one f32 element); w_scale is per-tensor or per output channel,
 * f32[K]: what quantize(w, s, axis=0) takes, the usual int8 weight
 * quantization.  bias is f32[K], added before the one rounding.  The result
 * keeps the dtype its attribute names even when virtual (exact_dtype).
 *
 * Reference: the sums of conv (conv_fwd_sums) in double: exact for i8 (each
 * product is at most 2^14, so below 2^39 taps nothing rounds) and for fp8
 * products (exact in double; their sum exact while it spans < 53 bits), then
 * the epilogue in double, then the store rounds once into dtype (dtype.c:
 * ties to even, saturating; the requantizing quotient is quantize's,
 * quant_quotient).  The epilogue's double steps are exact when the scales
 * have short significands (the tests' choice) and otherwise off by 2^-53
 * relative each, which moves the stored value only for a v that close to a
 * rounding boundary of dtype.  A GPU engine would keep i8 sums in int32: exact while
 * (C/groups) * window < 2^17, the bound scaled_matmul's int8 engine has. */
#include "conv_util.h"
#include "quant.h"

static const char *const sconv_ports[] = {"x", "w", "x_scale", "w_scale", "bias", "y_scale"};
static const char *const sconv_results[] = {"y"};
enum { P_X, P_W, P_XS, P_WS, P_BIAS, P_YS };

static const attr_spec sconv_attrs[] = {
    CONV_WINDOW_ATTRS,
    {"dtype", AT_DTYPE, "bf16", NULL,
     "the output dtype: bf16, f16 or f32; or i8, fp8_e4m3, fp8_e5m2 with y_scale (requantized)"},
};

static xdnn_dtype out_dtype(const xnode *n, const op_desc *d)
{
    const value *v = op_attr(n, d, "dtype");
    return v && v->kind == VAL_DTYPE ? v->dt : XDNN_BF16;
}

static bool requantizes(xdnn_dtype t) { return t == XDNN_I8 || quant_is_fp8(t); }

/* w_scale: one f32 element, or f32[K]; bias: f32[K]. */
static xdnn_status check_channel_ports(op_infer_ctx *c, int64_t K)
{
    const tinfo *ws = c->in[P_WS], *b = c->in[P_BIAS];
    char got[256];
    bool per_tensor = shape_numel(ws->rank, ws->dims) == 1, per_channel = ws->rank == 1 && ws->dims[0] == K;
    if (ws->dtype != XDNN_F32 || !(per_tensor || per_channel))
        return op_error(c,
                        "w_scale must be one f32 element (per-tensor) or f32[K] = f32[%lld] (per output channel), "
                        "got %s%s",
                        (long long)K, xdnn_dtype_name(ws->dtype), shape_str(got, sizeof got, ws->rank, ws->dims));
    if (b && (b->dtype != XDNN_F32 || b->rank != 1 || b->dims[0] != K))
        return op_error(c, "bias must be f32[K] = f32[%lld] (one per output channel), got %s%s", (long long)K,
                        xdnn_dtype_name(b->dtype), shape_str(got, sizeof got, b->rank, b->dims));
    return XDNN_OK;
}

static xdnn_status sconv_infer(op_infer_ctx *c)
{
    const tinfo *x = c->in[P_X], *w = c->in[P_W];
    if (!x || !w || !c->in[P_XS] || !c->in[P_WS])
        return op_error(c, "inputs x, w, x_scale and w_scale are required");
    xdnn_status st;
    if ((st = quant_check_operands(c, "x", x, "w", w)) != XDNN_OK)
        return st;
    if (!conv_check_ranks(c, "x", x, "w", w))
        return XDNN_ERR_SEMANTIC;
    tinfo *y = &c->out[0];
    conv_geom g;
    if (!conv_check(c, "x", x->dims, "w", w->dims, x->rank, &g, y->dims))
        return XDNN_ERR_SEMANTIC;
    if ((st = quant_check_tensor_scale(c, "x_scale", c->in[P_XS])) != XDNN_OK ||
        (st = check_channel_ports(c, w->dims[0])) != XDNN_OK)
        return st;
    xdnn_dtype t = out_dtype(c->node, c->desc);
    const tinfo *ys = c->in[P_YS];
    if (t != XDNN_BF16 && t != XDNN_F16 && t != XDNN_F32 && !requantizes(t))
        return op_error(c, "attribute 'dtype' must be bf16, f16, f32, i8, fp8_e4m3 or fp8_e5m2, got %s",
                        xdnn_dtype_name(t));
    if (requantizes(t) && !ys)
        return op_error(c, "dtype=%s needs y_scale, the output's per-tensor scale (y = sat(RNE(v / y_scale)))",
                        xdnn_dtype_name(t));
    if (!requantizes(t) && ys)
        return op_error(c, "y_scale requantizes into dtype i8, fp8_e4m3 or fp8_e5m2, but dtype is %s",
                        xdnn_dtype_name(t));
    if (ys && (st = quant_check_tensor_scale(c, "y_scale", ys)) != XDNN_OK)
        return st;
    y->rank = x->rank;
    y->dtype = t;
    y->exact_dtype = true;
    return XDNN_OK;
}

/* y = acc * (x_scale * w_scale[k]) + bias[k], then / y_scale when requantizing.
 * x_scale * w_scale is exact in double (two 24-bit significands). */
static xdnn_status sconv_reference(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[P_X], *w = c->in[P_W], *ws = c->in[P_WS], *b = c->in[P_BIAS], *ys = c->in[P_YS];
    ref_tensor *y = c->out[0];
    conv_geom g;
    if (!conv_ref_geom(c, x->dims, w->dims, x->rank, &g))
        return XDNN_ERR_INTERNAL;
    conv_fwd_sums(x, w, &g, op_attr_int(c->node, c->desc, "groups"), y);
    const int64_t K = y->dims[1], plane = shape_numel(y->rank - 2, y->dims + 2); /* elements per (n, k) */
    const double xs = c->in[P_XS]->data[0];
    for (int64_t i = 0; i < y->numel; i++) {
        const int64_t k = i / plane % K;
        double v = y->data[i] * (xs * ws->data[ws->numel == 1 ? 0 : k]);
        if (b)
            v += b->data[k];
        y->data[i] = ys ? quant_quotient(v, ys->data[0]) : v;
    }
    return XDNN_OK;
}

const op_desc op_scaled_conv_desc = {
    .name = "scaled_conv",
    .summary = "y = x_scale * w_scale * conv(x, w) + bias for i8 or fp8 x, w; y bf16/f16/f32, or requantized "
               "by y_scale to i8/fp8",
    .ports = sconv_ports, .nports = 6, .nrequired = 4,
    .results = sconv_results, .nresults = 1,
    .attrs = sconv_attrs, .nattrs = (int)(sizeof sconv_attrs / sizeof sconv_attrs[0]),
    .infer = sconv_infer, .reference = sconv_reference, .flops = conv_fwd_flops,
};

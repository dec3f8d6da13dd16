/* quant.c — quantize, dequantize and amax: per-tensor, per-channel and block
 * scales (the map in quant.h), f32 or e8m0 scales.
 *
 *   q = quantize(x, scale, dtype=fp8_e4m3)   q = sat(RNE(x / s))
 *   y = dequantize(q, scale, dtype=f32)      y = RNE(q * s)
 *   a = amax(x)                              a = max |x| per scale element
 *   s = quant_scale(a, dtype=fp8_e4m3)       s = a / qmax (f32) or 2^(floor(log2 a) - emax) (e8m0)
 *
 * `scale` is the dequantization scale (x ~ q * s), as in OCP MX and
 * torch._scaled_mm.  The reference divides in double: x (at most 24 bits)
 * over s (24 bits) is exact to well below half an fp8 / int8 step, so the one
 * rounding the executor applies when it stores q (dtype.c: ties to even,
 * saturating to +-448 / +-57344 / [-128, 127]; NaN -> NaN, int8 NaN -> 0) is
 * the rounding of the exact quotient.  q * s is exact in double (<= 32 bits),
 * so dequantize rounds once too.  amax propagates NaN (a block holding one
 * reports NaN) and is 0 for an all-zero block.
 *
 * quant_scale turns an amax into the scale that maps it onto the format:
 * f32 scales are amax / qmax (qmax 448 e4m3, 57344 e5m2, 127 i8; the
 * delayed-scaling recipe of Transformer Engine), e8m0 scales follow OCP MX
 * v1.0: 2^(floor(log2 amax) - emax) with emax the largest power of two of the
 * format (8 e4m3, 15 e5m2, 6 i8), so the block's largest element lands in
 * [2^emax, 2^(emax+1)) and may saturate (the spec's choice).  amax 0 gives 1.
 *
 * Layout: x, q, y are packed row-major doubles; scale elements are found
 * through quant_scale_offset (quant.h). */
#include "quant.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const q_ports[] = {"x", "scale"};
static const char *const dq_ports[] = {"q", "scale"};
static const char *const amax_ports[] = {"x"};
static const char *const q_results[] = {"q"};
static const char *const y_results[] = {"y"};

#define GRAN_ATTRS                                                                                             \
    {"axis", AT_INT, NULL, NULL, "per-channel: the scale is [x.dims[axis]] (default: per-tensor)"},             \
    {"block", AT_INTS, NULL, NULL, "block scales over the trailing dims, e.g. [1, 32] or [128, 128]"}

static const attr_spec q_attrs[] = {
    GRAN_ATTRS,
    {"dtype", AT_DTYPE, "fp8_e4m3", NULL, "the quantized dtype: fp8_e4m3, fp8_e5m2 or i8 (saturating)"},
};
static const attr_spec dq_attrs[] = {
    GRAN_ATTRS,
    {"dtype", AT_DTYPE, "f32", NULL, "the output dtype: f32, f16, bf16 or f64"},
};
static const attr_spec amax_attrs[] = {GRAN_ATTRS};
static const char *const qs_ports[] = {"amax"};
static const char *const qs_results[] = {"scale"};
static const attr_spec qs_attrs[] = {
    {"dtype", AT_DTYPE, "fp8_e4m3", NULL, "the format the scale is for: fp8_e4m3, fp8_e5m2 or i8"},
    {"scale_dtype", AT_DTYPE, "f32", NULL, "f32 (amax / qmax) or e8m0 (OCP MX: 2^(floor(log2 amax) - emax))"},
};

/* ---- the scale map */

bool quant_map_of(const xnode *n, const op_desc *d, int rank, const int64_t *dims, quant_map *m, char *why,
                  size_t len)
{
    memset(m, 0, sizeof *m);
    m->rank = rank;
    for (int i = 0; i < rank; i++)
        m->blk[i] = 1;
    const value *ax = op_attr(n, d, "axis"), *bl = op_attr(n, d, "block");
    bool has_axis = ax && ax->kind != VAL_NONE, has_block = bl && bl->kind != VAL_NONE;
    if (has_axis && has_block) {
        snprintf(why, len, "give 'axis' (per-channel) or 'block' (block scales), not both");
        return false;
    }
    if (has_axis) {
        int k;
        if (rank < 1 || !op_axis(rank, ax->i, &k)) {
            snprintf(why, len, "attribute 'axis' = %lld is out of range for a rank-%d x", (long long)ax->i, rank);
            return false;
        }
        m->kind = QM_CHANNEL;
        m->sst[k] = 1;
        m->srank = 1;
        m->sdims[0] = dims[k];
        return true;
    }
    if (!has_block) {
        m->kind = QM_TENSOR;
        return true;
    }
    int nb = bl->kind == VAL_LIST ? bl->n : 1;
    if (nb < 1 || nb > rank) {
        snprintf(why, len, "attribute 'block' has %d entries, x has rank %d (give 1..%d, for the trailing dims)", nb,
                 rank, rank);
        return false;
    }
    for (int j = 0; j < nb; j++) {
        const value *it = bl->kind == VAL_LIST ? &bl->items[j] : bl;
        if (it->kind != VAL_INT || it->i < 1) {
            snprintf(why, len, "attribute 'block': entry %d must be an int >= 1", j);
            return false;
        }
        m->blk[rank - nb + j] = it->i;
    }
    m->kind = QM_BLOCK;
    m->srank = rank;
    for (int i = 0; i < rank; i++)
        m->sdims[i] = (dims[i] + m->blk[i] - 1) / m->blk[i];
    shape_strides(rank, m->sdims, m->sst);
    return true;
}

bool quant_scale_fits(const quant_map *m, int srank, const int64_t *sdims)
{
    if (m->kind == QM_TENSOR)
        return shape_numel(srank, sdims) == 1;
    if (srank != m->srank)
        return false;
    for (int i = 0; i < srank; i++)
        if (sdims[i] != m->sdims[i])
            return false;
    return true;
}

/* Map + scale-shape check for quantize / dequantize (port 1 is the scale). */
static xdnn_status scaled_infer(op_infer_ctx *c, const char *xname, quant_map *m)
{
    const tinfo *x = c->in[0], *s = c->in[1];
    if (!x || !s)
        return op_error(c, "inputs '%s' and 'scale' are required", xname);
    char why[256], xs[256], ss[256], want[256];
    if (!quant_map_of(c->node, c->desc, x->rank, x->dims, m, why, sizeof why))
        return op_error(c, "%s", why);
    shape_str(xs, sizeof xs, x->rank, x->dims);
    shape_str(ss, sizeof ss, s->rank, s->dims);
    if (s->dtype != XDNN_F32 && s->dtype != XDNN_E8M0)
        return op_error(c, "scale must be f32 or e8m0, got %s", xdnn_dtype_name(s->dtype));
    if (!quant_scale_fits(m, s->rank, s->dims)) {
        if (m->kind == QM_TENSOR)
            snprintf(want, sizeof want, "one element (per-tensor; give axis= or block= for finer scales)");
        else
            shape_str(want, sizeof want, m->srank, m->sdims);
        return op_error(c, "scale is %s but %s %s with %s needs %s", ss, xname, xs,
                        m->kind == QM_CHANNEL ? "this axis" : m->kind == QM_BLOCK ? "this block" : "no axis or block",
                        want);
    }
    tinfo *y = &c->out[0];
    y->rank = x->rank;
    memcpy(y->dims, x->dims, sizeof y->dims);
    y->exact_dtype = true;
    return XDNN_OK;
}

static xdnn_status quantize_infer(op_infer_ctx *c)
{
    quant_map m;
    xdnn_status st = scaled_infer(c, "x", &m);
    if (st != XDNN_OK)
        return st;
    const value *v = op_attr(c->node, c->desc, "dtype");
    xdnn_dtype t = v && v->kind == VAL_DTYPE ? v->dt : XDNN_FP8_E4M3;
    if (t != XDNN_FP8_E4M3 && t != XDNN_FP8_E5M2 && t != XDNN_I8)
        return op_error(c, "attribute 'dtype' must be fp8_e4m3, fp8_e5m2 or i8, got %s", xdnn_dtype_name(t));
    c->out[0].dtype = t;
    return XDNN_OK;
}

static xdnn_status dequantize_infer(op_infer_ctx *c)
{
    quant_map m;
    xdnn_status st = scaled_infer(c, "q", &m);
    if (st != XDNN_OK)
        return st;
    const value *v = op_attr(c->node, c->desc, "dtype");
    xdnn_dtype t = v && v->kind == VAL_DTYPE ? v->dt : XDNN_F32;
    if (t != XDNN_F32 && t != XDNN_F16 && t != XDNN_BF16 && t != XDNN_F64)
        return op_error(c, "attribute 'dtype' must be f32, f16, bf16 or f64, got %s", xdnn_dtype_name(t));
    c->out[0].dtype = t;
    return XDNN_OK;
}

static xdnn_status amax_infer(op_infer_ctx *c)
{
    const tinfo *x = c->in[0];
    if (!x)
        return op_error(c, "input 'x' is missing");
    quant_map m;
    char why[256];
    if (!quant_map_of(c->node, c->desc, x->rank, x->dims, &m, why, sizeof why))
        return op_error(c, "%s", why);
    tinfo *y = &c->out[0];
    y->rank = m.srank; /* per-tensor: a scalar [] */
    memcpy(y->dims, m.sdims, sizeof y->dims);
    y->dtype = XDNN_F32;
    return XDNN_OK;
}

static xdnn_status quant_scale_infer(op_infer_ctx *c)
{
    const tinfo *a = c->in[0];
    if (!a)
        return op_error(c, "input 'amax' is missing");
    const value *v = op_attr(c->node, c->desc, "dtype"), *sv = op_attr(c->node, c->desc, "scale_dtype");
    xdnn_dtype t = v && v->kind == VAL_DTYPE ? v->dt : XDNN_FP8_E4M3;
    xdnn_dtype st = sv && sv->kind == VAL_DTYPE ? sv->dt : XDNN_F32;
    if (t != XDNN_FP8_E4M3 && t != XDNN_FP8_E5M2 && t != XDNN_I8)
        return op_error(c, "attribute 'dtype' must be fp8_e4m3, fp8_e5m2 or i8, got %s", xdnn_dtype_name(t));
    if (st != XDNN_F32 && st != XDNN_E8M0)
        return op_error(c, "attribute 'scale_dtype' must be f32 or e8m0, got %s", xdnn_dtype_name(st));
    tinfo *y = &c->out[0];
    *y = *a;
    y->dtype = st;
    y->exact_dtype = true;
    return XDNN_OK;
}

void quant_format_limits(xdnn_dtype t, double *qmax, int *emax)
{
    *qmax = t == XDNN_FP8_E5M2 ? 57344 : t == XDNN_I8 ? 127 : 448;
    *emax = t == XDNN_FP8_E5M2 ? 15 : t == XDNN_I8 ? 6 : 8;
}

xdnn_status quant_check_operands(op_infer_ctx *c, const char *an, const tinfo *a, const char *bn, const tinfo *b)
{
    if ((quant_is_fp8(a->dtype) && quant_is_fp8(b->dtype)) || (a->dtype == XDNN_I8 && b->dtype == XDNN_I8))
        return XDNN_OK;
    return op_error(c, "%s and %s must both be fp8 (fp8_e4m3 / fp8_e5m2) or both i8, got %s and %s", an, bn,
                    xdnn_dtype_name(a->dtype), xdnn_dtype_name(b->dtype));
}

xdnn_status quant_check_tensor_scale(op_infer_ctx *c, const char *name, const tinfo *s)
{
    char sh[256];
    if (s->dtype == XDNN_F32 && shape_numel(s->rank, s->dims) == 1)
        return XDNN_OK;
    return op_error(c, "%s must be one f32 element (a per-tensor scale), got %s%s", name, xdnn_dtype_name(s->dtype),
                    shape_str(sh, sizeof sh, s->rank, s->dims));
}

/* ---- references */

static bool ref_map(op_ref_ctx *c, quant_map *m)
{
    char why[256];
    const ref_tensor *x = c->in[0];
    if (!quant_map_of(c->node, c->desc, x->rank, x->dims, m, why, sizeof why)) {
        op_ref_error(c, XDNN_ERR_INTERNAL, "%s", why);
        return false;
    }
    return true;
}

/* y[i] = x[i] / s (quantize) or x[i] * s (dequantize); the store rounds. */
static xdnn_status scale_reference(op_ref_ctx *c, bool divide)
{
    const ref_tensor *x = c->in[0], *s = c->in[1];
    ref_tensor *y = c->out[0];
    quant_map m;
    if (!ref_map(c, &m))
        return XDNN_ERR_INTERNAL;
    int64_t idx[XDNN_MAX_RANK] = {0};
    for (int64_t i = 0; i < x->numel; i++) {
        double sv = s->data[quant_scale_offset(&m, idx)];
        y->data[i] = divide ? quant_quotient(x->data[i], sv) : x->data[i] * sv;
        index_next(x->rank, x->dims, idx);
    }
    return XDNN_OK;
}

static xdnn_status quantize_reference(op_ref_ctx *c) { return scale_reference(c, true); }
static xdnn_status dequantize_reference(op_ref_ctx *c) { return scale_reference(c, false); }

static xdnn_status amax_reference(op_ref_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    quant_map m;
    if (!ref_map(c, &m))
        return XDNN_ERR_INTERNAL;
    for (int64_t i = 0; i < y->numel; i++)
        y->data[i] = 0;
    int64_t idx[XDNN_MAX_RANK] = {0};
    for (int64_t i = 0; i < x->numel; i++) {
        double *a = &y->data[quant_scale_offset(&m, idx)];
        *a = quant_amax_fold(*a, x->data[i]);
        index_next(x->rank, x->dims, idx);
    }
    return XDNN_OK;
}

static xdnn_status quant_scale_reference(op_ref_ctx *c)
{
    const ref_tensor *a = c->in[0];
    ref_tensor *y = c->out[0];
    const value *v = op_attr(c->node, c->desc, "dtype"), *sv = op_attr(c->node, c->desc, "scale_dtype");
    bool e8 = sv && sv->kind == VAL_DTYPE && sv->dt == XDNN_E8M0;
    double qmax;
    int emax;
    quant_format_limits(v && v->kind == VAL_DTYPE ? v->dt : XDNN_FP8_E4M3, &qmax, &emax);
    for (int64_t i = 0; i < a->numel; i++) {
        double m = a->data[i];
        if (m == 0 || isnan(m) || !e8) {
            y->data[i] = m == 0 ? 1 : m / qmax; /* NaN stays NaN; the store rounds to f32 */
            continue;
        }
        int ex;
        frexp(fabs(m), &ex); /* floor(log2 |m|) = ex - 1; the store saturates to [2^-127, 2^127] */
        y->data[i] = isinf(m) ? m : ldexp(1.0, ex - 1 - emax);
    }
    return XDNN_OK;
}

const op_desc op_quantize_desc = {
    .name = "quantize",
    .summary = "q = saturate(round_even(x / scale)) to fp8_e4m3/fp8_e5m2/i8; per-tensor, per-channel or block scales",
    .ports = q_ports, .nports = 2, .nrequired = 2,
    .results = q_results, .nresults = 1,
    .attrs = q_attrs, .nattrs = (int)(sizeof q_attrs / sizeof q_attrs[0]),
    .infer = quantize_infer, .reference = quantize_reference,
};

const op_desc op_dequantize_desc = {
    .name = "dequantize",
    .summary = "y = q * scale (rounded once to dtype); per-tensor, per-channel or block scales (f32 or e8m0)",
    .ports = dq_ports, .nports = 2, .nrequired = 2,
    .results = y_results, .nresults = 1,
    .attrs = dq_attrs, .nattrs = (int)(sizeof dq_attrs / sizeof dq_attrs[0]),
    .infer = dequantize_infer, .reference = dequantize_reference,
};

const op_desc op_amax_desc = {
    .name = "amax",
    .summary = "max |x| per scale element (the shape quantize's scale has with the same axis/block); NaN sticks",
    .ports = amax_ports, .nports = 1, .nrequired = 1,
    .results = y_results, .nresults = 1,
    .attrs = amax_attrs, .nattrs = (int)(sizeof amax_attrs / sizeof amax_attrs[0]),
    .infer = amax_infer, .reference = amax_reference,
};

const op_desc op_quant_scale_desc = {
    .name = "quant_scale",
    .summary = "the scale for an amax: amax / qmax (f32) or OCP MX 2^(floor(log2 amax) - emax) (e8m0); amax 0 gives 1",
    .ports = qs_ports, .nports = 1, .nrequired = 1,
    .results = qs_results, .nresults = 1,
    .attrs = qs_attrs, .nattrs = (int)(sizeof qs_attrs / sizeof qs_attrs[0]),
    .infer = quant_scale_infer, .reference = quant_scale_reference,
};

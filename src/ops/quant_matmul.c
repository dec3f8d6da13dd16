/* quant_matmul.c — scaled_matmul(a, b, a_scale, b_scale[, c_scale]): the fp8 /
 * int8 GEMM with per-tensor dequantization scales, cuBLASLt's fp8 matmul and
 * torch._scaled_mm:
 *     v[m, n] = a_scale * b_scale * sum_k A[m, k] B[k, n]
 * with A = a (a given as [K, M] when trans_a) and B = b (b given as [N, K]
 * when trans_b: the usual weight layout, and the one cuBLASLt's fp8 kernels
 * want, K contiguous in both operands).  a and b are fp8_e4m3 / fp8_e5m2
 * (any mix; the GPU runs e4m3 x e4m3 and the e4m3/e5m2 mixes, as Hopper does)
 * or both i8; the scales are f32 with one element each.
 *
 * c is v in bf16 unless `dtype` says f16 or f32 (kept even for a virtual c),
 * or v requantized: with dtype fp8_e4m3 / fp8_e5m2 / i8, c_scale is c's own
 * dequantization scale (c ~ v / c_scale, the convention of every xdnn scale:
 * x ~ q * s) and c = sat(RNE(v / c_scale)), the rounding `quantize` applies.
 * The optional second result amax = max |v| (f32 scalar, NaN sticks) is what
 * delayed scaling records to pick the next c_scale (cuBLASLt's AMAX_D).
 * Matrices only: rank 2.
 *
 * Reference: exact products summed in double, times the scales, divided by
 * c_scale, rounded once when c is stored. */
#include "quant.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

extern const op_desc op_scaled_matmul_desc;

static const char *const smm_ports[] = {"a", "b", "a_scale", "b_scale", "c_scale"};
static const char *const smm_results[] = {"c", "amax"};

static const attr_spec smm_attrs[] = {
    {"trans_a", AT_BOOL, "false", NULL, "a is given as [K, M]"},
    {"trans_b", AT_BOOL, "false", NULL, "b is given as [N, K] (the layout cuBLASLt fp8 needs)"},
    {"dtype", AT_DTYPE, "bf16", NULL,
     "the output dtype: bf16, f16, f32, or fp8_e4m3 / fp8_e5m2 / i8 (requantized with c_scale)"},
};

static xdnn_status smm_infer(op_infer_ctx *c)
{
    const tinfo *a = c->in[0], *b = c->in[1], *sa = c->in[2], *sb = c->in[3];
    if (!a || !b || !sa || !sb)
        return op_error(c, "inputs a, b, a_scale and b_scale are required");
    if (a->rank != 2 || b->rank != 2)
        return op_error(c, "a and b must be matrices (rank 2), got ranks %d and %d", a->rank, b->rank);
    const tinfo *sc = c->nin > 4 ? c->in[4] : NULL;
    xdnn_status st;
    if ((st = quant_check_operands(c, "a", a, "b", b)) != XDNN_OK ||
        (st = quant_check_tensor_scale(c, "a_scale", sa)) != XDNN_OK ||
        (st = quant_check_tensor_scale(c, "b_scale", sb)) != XDNN_OK ||
        (sc && (st = quant_check_tensor_scale(c, "c_scale", sc)) != XDNN_OK))
        return st;
    bool ta = op_attr_bool(c->node, c->desc, "trans_a"), tb = op_attr_bool(c->node, c->desc, "trans_b");
    int64_t M = ta ? a->dims[1] : a->dims[0], K = ta ? a->dims[0] : a->dims[1];
    int64_t K2 = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
    if (K != K2)
        return op_error(c, "inner dimensions do not match: a has K = %lld (trans_a=%s), b has K = %lld (trans_b=%s)",
                        (long long)K, ta ? "true" : "false", (long long)K2, tb ? "true" : "false");
    const value *v = op_attr(c->node, c->desc, "dtype");
    xdnn_dtype t = v && v->kind == VAL_DTYPE ? v->dt : XDNN_BF16;
    bool quantized = quant_is_fp8(t) || t == XDNN_I8;
    if (!quantized && t != XDNN_BF16 && t != XDNN_F16 && t != XDNN_F32)
        return op_error(c, "attribute 'dtype' must be bf16, f16, f32, fp8_e4m3, fp8_e5m2 or i8, got %s",
                        xdnn_dtype_name(t));
    if (quantized && !sc)
        return op_error(c, "dtype %s needs c_scale, the dequantization scale of the quantized c (c ~ v / c_scale)",
                        xdnn_dtype_name(t));
    if (!quantized && sc)
        return op_error(c, "c_scale quantizes c, but dtype is %s (give dtype fp8_e4m3, fp8_e5m2 or i8)",
                        xdnn_dtype_name(t));
    tinfo *o = &c->out[0];
    o->rank = 2;
    o->dims[0] = M;
    o->dims[1] = N;
    o->dtype = t;
    o->exact_dtype = true;
    if (c->nresults > 1)
        c->out[1] = (tinfo){.dtype = XDNN_F32, .rank = 0, .exact_dtype = true};
    return XDNN_OK;
}

/* v[m][n] = sa * sb * sum_k A[m][k] B[k][n] (a, b packed as given); c = v, or
 * v / c_scale for a quantized c (the store rounds and saturates); amax = max |v|. */
static xdnn_status smm_reference(op_ref_ctx *c)
{
    const ref_tensor *a = c->in[0], *b = c->in[1];
    ref_tensor *o = c->out[0];
    bool ta = op_attr_bool(c->node, c->desc, "trans_a"), tb = op_attr_bool(c->node, c->desc, "trans_b");
    const int64_t M = o->dims[0], N = o->dims[1], K = ta ? a->dims[0] : a->dims[1];
    const double scale = c->in[2]->data[0] * c->in[3]->data[0];
    const double c_scale = c->nin > 4 && c->in[4] ? c->in[4]->data[0] : 1.0;
#pragma omp parallel for schedule(static)
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += (ta ? a->data[k * M + m] : a->data[m * K + k]) * (tb ? b->data[n * K + k] : b->data[k * N + n]);
            o->data[m * N + n] = acc * scale;
        }
    }
    if (c->nresults > 1 && c->out[1]) {
        double amax = 0;
        for (int64_t i = 0; i < M * N; i++)
            amax = quant_amax_fold(amax, o->data[i]);
        c->out[1]->data[0] = amax;
    }
    if (c->nin > 4 && c->in[4])
        for (int64_t i = 0; i < M * N; i++)
            o->data[i] = quant_quotient(o->data[i], c_scale);
    return XDNN_OK;
}

static double smm_flops(const xgraph *g, const xnode *n)
{
    const xtensor *a = &g->tensors[n->inputs[0].tensor];
    const xtensor *o = &g->tensors[n->results[0]];
    bool ta = op_attr_bool(n, &op_scaled_matmul_desc, "trans_a");
    return 2.0 * (double)o->rnumel * (double)(ta ? a->rdims[0] : a->rdims[1]);
}

const op_desc op_scaled_matmul_desc = {
    .name = "scaled_matmul",
    .summary = "c[, amax] = a_scale * b_scale * (a @ b) for fp8 (e4m3/e5m2) or i8 matrices; c bf16/f16/f32, or "
               "fp8/i8 requantized by c_scale; amax = max |c| before requantizing",
    .ports = smm_ports, .nports = 5, .nrequired = 4,
    .results = smm_results, .nresults = 2, .result_counts = (1u << 1) | (1u << 2),
    .attrs = smm_attrs, .nattrs = (int)(sizeof smm_attrs / sizeof smm_attrs[0]),
    .infer = smm_infer, .reference = smm_reference, .flops = smm_flops,
};

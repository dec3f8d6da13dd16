/* sdpa_fp8.c — the fp8 form of sdpa: cuDNN's fp8 SDPA forward in xdnn's
 * scale convention (every scale is a dequantization scale, x ~= q * s, as in
 * quantize, dequantize and scaled_matmul; quant.c).
 *
 *   o, stats, amax_s, amax_o = sdpa(q, k, v, q_scale=sq, k_scale=sk, v_scale=sv, s_scale=ss[, o_scale=so])
 *
 * q, k, v are fp8_e4m3 or fp8_e5m2; the scales are f32 with one element.
 * The form is entered when any scale port or an amax result is used; then
 * q_scale, k_scale, v_scale and s_scale are all required.  Math (every
 * other rule — mask, bias, dropout, stats — is the dense sdpa's, sdpa.h):
 *   Q = q * sq, K = k * sk, V = v * sv        exact in double
 *   P = the dense sdpa's probabilities of Q, K (after dropout)
 *   amax_s = max |P| over the whole tensor (before quantizing)
 *   P8 = sat(RNE(P / ss)) in fp8_e4m3         the store rule of dtype.c
 *   O = sum_j (P8_j * ss) V_j                 in double
 *   amax_o = max |O| over the whole tensor (before quantizing)
 *   o = O / so, rounded once to o's fp8 dtype (saturating) when o_scale is
 *       given; else o = O, rounded once to bf16.
 * cuDNN names: descale_q/k/v = q/k/v_scale, descale_s = s_scale and
 * scale_s = 1 / s_scale, scale_o = 1 / o_scale (cuDNN multiplies by
 * scale_s and scale_o; xdnn divides by the dequantization scale, exactly as
 * quantize does).  amax_s and amax_o are f32 scalars [] like amax's
 * per-tensor result.  Fully masked rows add nothing to either amax (0 for a
 * tensor that is masked everywhere); a NaN sticks, as in amax.
 *
 * The output dtype rule: o is fp8_e4m3 with o_scale (an annotation may pick
 * fp8_e5m2), bf16 without; kept when o is virtual, as quantize's dtype is.
 * An annotation that contradicts o_scale (a non-fp8 o with it, an fp8 o
 * without it) is an error: the stored values would not be what the scale
 * says.  Not with page_table or seq_offsets (sdpa.c refuses), and sdpa_bwd
 * has no fp8 form (its port list has no scales).
 */
#include "sdpa.h"

#include "data/data.h"
#include "quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

bool sdpa_fp8_form(int nin, const void *const *in, int nresults)
{
    for (int p = SDPA_Q_SCALE; p <= SDPA_O_SCALE; p++)
        if (p < nin && in[p])
            return true;
    return nresults > SDPA_R_AMAX_S;
}

/* What put the node in the fp8 form, for messages: the first scale port
 * given, else the amax results. */
static const char *fp8_trigger(const op_infer_ctx *c)
{
    for (int p = SDPA_Q_SCALE; p <= SDPA_O_SCALE; p++)
        if (p < c->nin && c->in[p])
            return c->desc->ports[p];
    return c->desc->results[SDPA_R_AMAX_S];
}

/* The dtype an annotation gives result r (on the target, or in `output`), or
 * XDNN_DTYPE_COUNT when none does.  Inference sees the graph only when the
 * node is bound in one (not in unit tests that call infer directly). */
static xdnn_dtype annotated_dtype(const op_infer_ctx *c, int r)
{
    if (!c->graph || !c->node->results || r >= c->node->nresults || c->node->results[r] < 0)
        return XDNN_DTYPE_COUNT;
    const xtensor *t = &c->graph->tensors[c->node->results[r]];
    return t->has_odtype ? t->odtype : t->has_dtype ? t->dtype : XDNN_DTYPE_COUNT;
}

xdnn_status sdpa_fp8_infer(op_infer_ctx *c, const sdpa_dims *n)
{
    const tinfo *q = c->in[SDPA_Q], *k = c->in[SDPA_K], *v = c->in[SDPA_V];
    const char *why = fp8_trigger(c);
    if (!quant_is_fp8(q->dtype) || !quant_is_fp8(k->dtype) || !quant_is_fp8(v->dtype))
        return op_error(c, "%s (fp8 attention) needs q, k and v in fp8_e4m3 or fp8_e5m2, got %s, %s, %s", why,
                        xdnn_dtype_name(q->dtype), xdnn_dtype_name(k->dtype), xdnn_dtype_name(v->dtype));
    for (int p = SDPA_Q_SCALE; p <= SDPA_O_SCALE; p++) {
        const tinfo *s = p < c->nin ? c->in[p] : NULL;
        const char *name = c->desc->ports[p];
        if (!s && p != SDPA_O_SCALE)
            return op_error(c, "%s (fp8 attention) needs %s too (q_scale, k_scale, v_scale and s_scale are required)",
                            why, name);
        xdnn_status st;
        if (s && (st = quant_check_tensor_scale(c, name, s)) != XDNN_OK)
            return st;
    }
    const bool has_o_scale = SDPA_O_SCALE < c->nin && c->in[SDPA_O_SCALE];
    const xdnn_dtype ann = annotated_dtype(c, SDPA_R_O);
    if (ann != XDNN_DTYPE_COUNT && has_o_scale && !quant_is_fp8(ann))
        return op_error(c, "o_scale quantizes o, so o must be fp8_e4m3 or fp8_e5m2, but it is annotated %s",
                        xdnn_dtype_name(ann));
    if (ann != XDNN_DTYPE_COUNT && !has_o_scale && quant_is_fp8(ann))
        return op_error(c, "o is annotated %s but no o_scale is given (an fp8 o needs the scale it is quantized with)",
                        xdnn_dtype_name(ann));
    c->out[SDPA_R_O] = (tinfo){.dtype = has_o_scale ? XDNN_FP8_E4M3 : XDNN_BF16, .rank = 4,
                               .dims = {n->B, n->Hq, n->Sq, n->Dv}, .exact_dtype = true};
    if (c->nresults > SDPA_R_STATS)
        c->out[SDPA_R_STATS] = (tinfo){.dtype = XDNN_F32, .rank = 4, .dims = {n->B, n->Hq, n->Sq, 1}};
    for (int r = SDPA_R_AMAX_S; r < c->nresults && r <= SDPA_R_AMAX_O; r++)
        c->out[r] = (tinfo){.dtype = XDNN_F32, .rank = 0};
    return XDNN_OK;
}

/* The value of a one-element scale port; 0 when absent.  A scale is a
 * factor (q/k/v) or a divisor (s, o): it must be finite and positive. */
static xdnn_status read_scale(op_ref_ctx *c, int port, double *out)
{
    const ref_tensor *t = port < c->nin ? c->in[port] : NULL;
    *out = t ? t->data[0] : 0;
    if (t && !(isfinite(*out) && *out > 0))
        return op_ref_error(c, XDNN_ERR_SEMANTIC, "%s = %g is not a positive finite scale", c->desc->ports[port], *out);
    return XDNN_OK;
}

/* x * s for every element of t: the dequantized copy (exact in double:
 * an fp8 value has 4 significant bits, an f32 scale 24). */
static double *dequantized(const ref_tensor *t, double s)
{
    double *x = malloc((size_t)(t->numel > 0 ? t->numel : 1) * sizeof *x);
    for (int64_t i = 0; x && i < t->numel; i++)
        x[i] = t->data[i] * s;
    return x;
}

xdnn_status sdpa_fp8_reference(op_ref_ctx *c)
{
    double sc[5]; /* q, k, v, s, o scales in port order */
    for (int p = SDPA_Q_SCALE; p <= SDPA_O_SCALE; p++) {
        xdnn_status st = read_scale(c, p, &sc[p - SDPA_Q_SCALE]);
        if (st)
            return st;
    }
    sdpa_cfg cfg;
    xdnn_status st = sdpa_config(c, SDPA_BIAS, SDPA_LEN_Q, SDPA_LEN_KV, &cfg);
    if (st)
        return st;
    double *q = dequantized(c->in[SDPA_Q], sc[0]), *k = dequantized(c->in[SDPA_K], sc[1]);
    double *v = dequantized(c->in[SDPA_V], sc[2]);
    double amax_s = 0, amax_o = 0;
    ref_tensor *o = c->out[SDPA_R_O];
    if (!q || !k || !v) {
        st = op_ref_error(c, XDNN_ERR_NOMEM, "out of memory for the dequantized q, k, v");
    } else {
        cfg.s_scale = sc[3];
        cfg.amax_s = &amax_s;
        ref_tensor *stats = c->nresults > SDPA_R_STATS ? c->out[SDPA_R_STATS] : NULL;
        st = sdpa_forward_ref(c, &cfg, q, k, v, o->data, stats ? stats->data : NULL);
    }
    if (!st) {
        const double o_scale = sc[4];
        for (int64_t i = 0; i < o->numel; i++) {
            amax_o = quant_amax_fold(amax_o, o->data[i]);
            if (o_scale > 0)
                o->data[i] = quant_quotient(o->data[i], o_scale); /* the store rounds once, saturating */
        }
        ref_tensor *amax[2] = {c->nresults > SDPA_R_AMAX_S ? c->out[SDPA_R_AMAX_S] : NULL,
                               c->nresults > SDPA_R_AMAX_O ? c->out[SDPA_R_AMAX_O] : NULL};
        if (amax[0])
            amax[0]->data[0] = amax_s;
        if (amax[1])
            amax[1]->data[0] = amax_o;
    }
    free(q);
    free(k);
    free(v);
    sdpa_config_free(&cfg);
    return st;
}

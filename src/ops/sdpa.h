/* sdpa.h — what sdpa (sdpa.c) and sdpa_bwd (sdpa_bwd.c) share: shape checks,
 * the attribute set, the one mask rule, the logits of a row and the dropout
 * keep decision.  Forward and backward must agree on all of these, so they
 * live in exactly one place.
 *
 * Conventions (logical BHSD; the executor handles memory layouts):
 *   q [B, Hq, Sq, D]   k [B, Hk, Skv, D]   v [B, Hk, Skv, Dv]   o [B, Hq, Sq, Dv]
 *   stats [B, Hq, Sq, 1] (f32): logsumexp of the masked, scaled, biased logits.
 *   GQA/MQA: Hq % Hk == 0; query head h reads kv head h / (Hq / Hk).
 *
 * Mask rule (sdpa_visible): key j is visible from query row i of batch b iff
 *   i < Lq(b) and j < Lkv(b)                       (padding: seq_len_q/seq_len_kv, else Sq/Skv)
 *   and (left  < 0 or j >= diag - left)            (window=[left, right]; -1 = unbounded side)
 *   and (right < 0 or j <= diag + right)           (causal=true sets right = 0)
 * with diag = i for align="top_left" (PyTorch is_causal, cuDNN causal_mask) or
 * diag = i + Lkv(b) - Lq(b) for align="bottom_right" (FlashAttention >= 2.1,
 * cuDNN causal_mask_bottom_right; the diagonal ends at the last valid key).
 * The window bounds are inclusive: row i sees [diag - left, diag + right].
 *
 * Fully masked rows (no visible key, including padded rows i >= Lq(b), or
 * every visible logit -inf through the bias) produce o = 0 and stats = -inf;
 * the backward gives them no gradient.
 *
 * Dropout (p = attribute dropout, key = attribute seed): one Philox-4x32-10
 * call per row and group of 8 consecutive keys (8x fewer calls than one per
 * element: the GPU engines' softmax was bound by them), 16 bits per element:
 *   r   = (b*Hq + h)*Sq + i,   g = j / 8,   G = ceil(Skv / 8)
 *   w[0..3] = philox4x32_10(ctr = (idx lo, idx hi, stream lo, stream hi),
 *                           key = (seed lo, seed hi)),  idx = r*G + g,
 *             stream = SDPA_DROPOUT_STREAM (philox.c's packing)
 *   u16 = (w[(j % 8) / 2] >> (16 * (j % 2))) & 0xffff   (low half for even j)
 *   keep iff u16 >= t,  t = round(p * 65536) clamped to [0, 65536];
 *   kept probabilities are scaled by 1/(1 - p) (exactly, not by 1/(1 - t/65536)).
 * So the keep probability is 1 - t/65536, quantized to 1/65536: within
 * 0.5/65536 < 7.7e-6 of 1 - p.  The mask is the same for every engine and
 * the CPU reference (a format: changing it changes every saved expectation).
 * It is applied to the softmax probabilities after the stats are taken, so
 * stats never depend on dropout.
 */
#ifndef XDNN_OPS_SDPA_H
#define XDNN_OPS_SDPA_H

#include "op.h"

#include <math.h>

/* -inf as a double (INFINITY is a float constant). */
#define SDPA_NEG_INF (-(double)INFINITY)

/* "sdpa" in ASCII: the Philox stream of the attention dropout mask. */
#define SDPA_DROPOUT_STREAM UINT64_C(0x73647061)

/* Port indices shared by both ops (sdpa_bwd inserts o, do, stats after v). */
enum { SDPA_Q = 0, SDPA_K = 1, SDPA_V = 2 };
/* The forward's optional ports: the serving inputs (sdpa_serve.c) follow the
 * padding ones, the fp8 scales (sdpa_fp8.c) come last. */
enum { SDPA_BIAS = 3, SDPA_LEN_Q = 4, SDPA_LEN_KV = 5, SDPA_PAGE_TABLE = 6, SDPA_OFF_Q = 7, SDPA_OFF_KV = 8 };
enum { SDPA_Q_SCALE = 9, SDPA_K_SCALE = 10, SDPA_V_SCALE = 11, SDPA_S_SCALE = 12, SDPA_O_SCALE = 13 };
/* The forward's results: o, then stats, then the fp8 form's amax_s, amax_o. */
enum { SDPA_R_O = 0, SDPA_R_STATS = 1, SDPA_R_AMAX_S = 2, SDPA_R_AMAX_O = 3 };
/* sdpa_bwd's ports after v: no page_table (training keeps K/V contiguous). */
enum { SDPA_BWD_O = 3, SDPA_BWD_DO = 4, SDPA_BWD_STATS = 5, SDPA_BWD_BIAS = 6, SDPA_BWD_LEN_Q = 7,
       SDPA_BWD_LEN_KV = 8, SDPA_BWD_OFF_Q = 9, SDPA_BWD_OFF_KV = 10 };

/* Where one op keeps its optional inputs (-1: the op has no such port), so
 * that the serving code of sdpa_serve.c reads both ops' nodes. */
typedef struct sdpa_port_map {
    int bias, len_q, len_kv, page_table, off_q, off_kv;
} sdpa_port_map;
extern const sdpa_port_map sdpa_fwd_port_map, sdpa_bwd_port_map;

typedef struct sdpa_dims {
    int64_t B, Hq, Hk, Sq, Skv, D, Dv;
} sdpa_dims;

/* Everything the reference needs besides the data of q, k, v. */
typedef struct sdpa_cfg {
    sdpa_dims n;
    double scale;
    int64_t left, right;      /* -1 = unbounded; causal already folded into right */
    bool bottom_right;
    double dropout;
    uint64_t seed;
    const ref_tensor *bias;   /* NULL = none; broadcast to [B, Hq, Sq, Skv] */
    int64_t *len_q, *len_kv;  /* [B], malloc'ed by sdpa_config, freed by sdpa_config_free */
    double s_scale;           /* fp8 form: P is quantized to e4m3 with this scale before P·V; 0 = it is not */
    double *amax_s;           /* fp8 form, NULL = not wanted: set to max |P| (before quantizing) */
} sdpa_cfg;

/* The attributes of sdpa and sdpa_bwd (identical lists). */
enum { SDPA_NATTRS = 6 };
extern const attr_spec sdpa_attrs[SDPA_NATTRS];

/* Check q, k, v, bias, seq_len_q, seq_len_kv (at the given ports) and the
 * attributes; fill *n.  Reports the first problem and returns its status. */
xdnn_status sdpa_check(op_infer_ctx *c, int bias_port, int len_q_port, int len_kv_port, sdpa_dims *n);

/* The window and scale attributes' checks (part of sdpa_check). */
xdnn_status sdpa_check_band(op_infer_ctx *c);

/* Read dims, attributes and sequence lengths for the reference. */
xdnn_status sdpa_config(op_ref_ctx *c, int bias_port, int len_q_port, int len_kv_port, sdpa_cfg *cfg);
void sdpa_config_free(sdpa_cfg *cfg);

/* scale, band, dropout and seed from a node's attributes (cfg->n.D set). */
void sdpa_config_attrs(const xnode *node, const op_desc *d, sdpa_cfg *cfg);

/* The forward on dense logical [B, H, S, D] data of cfg's dims: o and, when
 * not NULL, stats ([B, Hq, Sq]). */
xdnn_status sdpa_forward_ref(op_ref_ctx *c, const sdpa_cfg *cfg, const double *q, const double *k, const double *v,
                             double *o, double *stats);

/* The backward (sdpa_bwd.c) on dense logical data of cfg's dims: dq, dk, dv
 * (overwritten) from q, k, v, o, do and stats ([B, Hq, Sq]). */
xdnn_status sdpa_backward_ref(op_ref_ctx *c, const sdpa_cfg *cfg, const double *q, const double *k, const double *v,
                              const double *o, const double *dout, const double *stats, double *dq, double *dk,
                              double *dv);

/* ---- serving forms of sdpa (sdpa_serve.c): paged K/V and ragged THD
 * sequences.
 *   paged:  page_table [B, max_pages] (integer) names the page of each block
 *           of page_size keys: key j of sequence b is slot j % page_size of
 *           page page_table[b, j / page_size] of k, v [P, Hk, page_size, D]
 *           (logical; @bshd stores [P, page_size, Hk, D], vLLM's and cuDNN's
 *           layout).  seq_len_kv [B] is required: Lkv(b) <= max_pages *
 *           page_size; entries past a sequence's last page are not read.
 *   ragged: q (and o, stats) [Tq, Hq, D] with seq_offsets_q [B+1]: sequence b
 *           is tokens [off[b], off[b+1]); likewise k, v [Tkv, Hk, D] with
 *           seq_offsets_kv.  Offsets run from 0 to T, non-decreasing (every
 *           token in one sequence); Lq(b) / Lkv(b) are the differences.
 * The result is by definition that of the dense sdpa on the gathered,
 * zero-padded [B, H, max L, D] tensors with seq_len_q/seq_len_kv = the
 * lengths (the mask rule above, align included, uses Lq(b) and Lkv(b)).
 * Not with bias or dropout (their [B, Hq, Sq, Skv] index space is the
 * padded one).
 * sdpa_bwd takes the ragged form (not the paged one): q, o, do, dq packed
 * like the forward's q and o, k, v, dk, dv like its k and v, stats [Tq, Hq,
 * 1]; by definition the dense backward on the gathered tensors, dq, dk, dv
 * scattered back.  */
bool sdpa_serving(const sdpa_port_map *pm, int nin, const void *const *in);
/* Check a serving node (q, k, v, the offsets, lengths and page table, the
 * attributes) and give the shapes of o and stats (dtype: q's; stats f32). */
xdnn_status sdpa_serve_check(op_infer_ctx *c, const sdpa_port_map *pm, tinfo *o, tinfo *stats);
xdnn_status sdpa_serve_reference(op_ref_ctx *c);
xdnn_status sdpa_serve_bwd_reference(op_ref_ctx *c);

/* ---- the fp8 form of sdpa (sdpa_fp8.c): q, k, v in fp8 with their
 * dequantization scales, P quantized to e4m3 before P·V, o in bf16 or fp8
 * with o_scale, amax_s and amax_o results; the definition is in sdpa_fp8.c.
 * sdpa_fp8_form: is any of its ports or results used? */
bool sdpa_fp8_form(int nin, const void *const *in, int nresults);
xdnn_status sdpa_fp8_infer(op_infer_ctx *c, const sdpa_dims *n);
xdnn_status sdpa_fp8_reference(op_ref_ctx *c);

/* The one mask rule (see the header comment). */
bool sdpa_visible(const sdpa_cfg *cfg, int64_t b, int64_t i, int64_t j);

/* Logits of query row (b, h, i): s[j] = scale * q·k_j + bias, or -inf where
 * key j is not visible.  Returns the row maximum (-inf: fully masked). */
double sdpa_row_logits(const sdpa_cfg *cfg, const double *q, const double *k, int64_t b, int64_t h,
                       int64_t i, double *s);

/* Dropout factor of probability (b, h, i, j): 0 (dropped), 1/(1-p) (kept), or
 * 1 when dropout is 0 (the rule in the header comment). */
double sdpa_dropout_factor(const sdpa_cfg *cfg, int64_t b, int64_t h, int64_t i, int64_t j);
/* The rule's parts, for the GPU engines and the tests: t of probability p,
 * and the 16-bit value u16 of element (b, h, i, j). */
uint32_t sdpa_dropout_threshold(double p);
uint32_t sdpa_dropout_u16(uint64_t seed, const sdpa_dims *n, int64_t b, int64_t h, int64_t i, int64_t j);

/* FLOPs of the two (forward) or five (backward) matrix products over the
 * (query, key) pairs the causal/window band leaves visible (padding by
 * seq_len is run-time data and not subtracted). */
double sdpa_flops_of(const xgraph *g, const xnode *n, bool backward);

#endif

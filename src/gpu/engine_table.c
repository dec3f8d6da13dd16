/* engine_table.c — THE table of GPU engines, and choosing one per partition:
 * forced (--engine) first, else the supporting engine of lowest cost. */
#include "gpu/engine.h"
#include "gpu/genstats.h"
#include "gpu/gpu.h"
#include "ops/op.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

extern const gpu_engine gpu_engine_pointwise_nvrtc, gpu_engine_reduce_nvrtc, gpu_engine_matmul_cublaslt;
extern const gpu_engine gpu_engine_conv_direct, gpu_engine_conv_igemm, gpu_engine_conv_wgrad_mma, gpu_engine_conv_dw,
    gpu_engine_pool_direct; /* gpuconv */
extern const gpu_engine gpu_engine_conv_igemm_wgmma; /* convw */
extern const gpu_engine gpu_engine_conv_wgrad_wgmma; /* wgrad3 */
extern const gpu_engine gpu_engine_conv_im2col_gemm; /* stem */
extern const gpu_engine gpu_engine_conv_f32_gemm; /* f32conv */
extern const gpu_engine gpu_engine_conv_stem; /* stem: session 11 */
extern const gpu_engine gpu_engine_sdpa_splitkv; /* gpuseq: decode / chunked prefill */
extern const gpu_engine gpu_engine_sdpa_flash_wgmma, gpu_engine_sdpa_flash, gpu_engine_sdpa_flash_tf32,
    gpu_engine_sdpa_naive, gpu_engine_sdpa_bwd_flash, gpu_engine_sdpa_bwd, gpu_engine_rnn_cublas; /* gpuseq */
extern const gpu_engine gpu_engine_norm_welford, gpu_engine_copy_strided, gpu_engine_rng_philox; /* gpunorm */
extern const gpu_engine gpu_engine_rnn_bwd_direct; /* gpurnnbwd */
extern const gpu_engine gpu_engine_sdpa_bwd_wgmma; /* attnb */
extern const gpu_engine gpu_engine_sdpa_fp8_wgmma; /* fp8attn */
extern const gpu_engine gpu_engine_quant_direct, gpu_engine_matmul_fp8_cublaslt, gpu_engine_matmul_i8_cublaslt; /* lowp */
extern const gpu_engine gpu_engine_scaled_conv_im2col; /* sconv */
extern const gpu_engine gpu_engine_index_direct, gpu_engine_xent_direct, gpu_engine_bn_infer_var; /* ops */

/* Engines with knobs (engine.h: gpu_knobs). */
extern const gpu_knobs gpu_knobs_pointwise_nvrtc, gpu_knobs_reduce_nvrtc, gpu_knobs_matmul_cublaslt;

/* Every engine, the op classes (ops.def families) it serves and its knobs: selection
 * asks an engine only about partitions of those classes, so `-v` and the
 * plan's candidates list real candidates only.  A forced engine is always
 * asked, so its own reason is what a refusal reports. */
#define SERVES(c) (1u << OPC_##c)
const gpu_engine_row gpu_engine_rows[] = {
    {&gpu_engine_pointwise_nvrtc, SERVES(POINTWISE), &gpu_knobs_pointwise_nvrtc},
    {&gpu_engine_reduce_nvrtc, SERVES(REDUCE), &gpu_knobs_reduce_nvrtc},
    {&gpu_engine_matmul_cublaslt, SERVES(MATMUL), &gpu_knobs_matmul_cublaslt},
    {&gpu_engine_conv_direct, SERVES(CONV), NULL}, /* gpuconv */
    {&gpu_engine_conv_igemm_wgmma, SERVES(CONV), NULL}, /* convw */
    {&gpu_engine_conv_igemm, SERVES(CONV), NULL},
    {&gpu_engine_conv_wgrad_wgmma, SERVES(CONV), NULL}, /* wgrad3 */
    {&gpu_engine_conv_wgrad_mma, SERVES(CONV), NULL},
    {&gpu_engine_conv_dw, SERVES(CONV), NULL},
    {&gpu_engine_conv_im2col_gemm, SERVES(CONV), NULL}, /* stem */
    {&gpu_engine_conv_f32_gemm, SERVES(CONV), NULL}, /* f32conv */
    {&gpu_engine_conv_stem, SERVES(CONV), NULL}, /* stem: session 11 */
    {&gpu_engine_pool_direct, SERVES(POOL), NULL},
    {&gpu_engine_sdpa_fp8_wgmma, SERVES(SDPA), NULL}, /* fp8attn: the fp8 form only */
    {&gpu_engine_sdpa_flash_wgmma, SERVES(SDPA), NULL}, /* gpuseq */
    {&gpu_engine_sdpa_splitkv, SERVES(SDPA), NULL},
    {&gpu_engine_sdpa_flash, SERVES(SDPA), NULL},
    {&gpu_engine_sdpa_flash_tf32, SERVES(SDPA), NULL},
    {&gpu_engine_sdpa_naive, SERVES(SDPA), NULL},
    {&gpu_engine_sdpa_bwd_wgmma, SERVES(SDPA), NULL}, /* attnb */
    {&gpu_engine_sdpa_bwd_flash, SERVES(SDPA), NULL},
    {&gpu_engine_sdpa_bwd, SERVES(SDPA), NULL},
    {&gpu_engine_rnn_cublas, SERVES(RNN), NULL},
    {&gpu_engine_norm_welford, SERVES(NORM) | SERVES(REDUCE), NULL}, /* gpunorm; REDUCE: softmax_bwd */
    {&gpu_engine_copy_strided, SERVES(TENSOR), NULL},
    {&gpu_engine_rng_philox, SERVES(RANDOM), NULL},
    {&gpu_engine_rnn_bwd_direct, SERVES(RNN), NULL}, /* gpurnnbwd */
    {&gpu_engine_quant_direct, SERVES(QUANT), NULL}, /* lowp */
    {&gpu_engine_matmul_fp8_cublaslt, SERVES(QUANT), NULL},
    {&gpu_engine_matmul_i8_cublaslt, SERVES(QUANT), NULL},
    {&gpu_engine_scaled_conv_im2col, SERVES(QUANT), NULL}, /* sconv */
    {&gpu_engine_index_direct, SERVES(INDEX), NULL}, /* ops */
    {&gpu_engine_xent_direct, SERVES(INDEX), NULL},
    {&gpu_engine_bn_infer_var, SERVES(NORM), NULL},
};
#undef SERVES
const int gpu_nengines = (int)(sizeof gpu_engine_rows / sizeof gpu_engine_rows[0]);

op_class gpu_part_class(const gplan *pl, const gpart *p)
{
    switch (p->kind) {
    case GP_POINTWISE: return OPC_POINTWISE;
    case GP_REDUCE: return OPC_REDUCE;
    case GP_MATMUL: return OPC_MATMUL;
    case GP_SINGLE: break;
    }
    const gnode *n = &pl->g->n[p->anchor >= 0 ? p->anchor : p->nodes[0]];
    if (n->ir)
        return op_class_of(n->ir->op);
    /* a hand-built node (tests): its kind says what it is, else ask everyone */
    return n->kind == GN_POINTWISE ? OPC_POINTWISE
         : n->kind == GN_MATMUL    ? OPC_MATMUL
         : n->kind == GN_REDUCE || n->kind == GN_SOFTMAX ? OPC_REDUCE
                                   : OPC_COUNT;
}

bool gpu_engine_serves(int row, op_class c) { return c == OPC_COUNT || (gpu_engine_rows[row].serves >> c & 1u); }

const gpu_knobs *gpu_engine_knobs(const gpu_engine *e)
{
    for (int i = 0; i < gpu_nengines; i++)
        if (gpu_engine_rows[i].engine == e)
            return gpu_engine_rows[i].knobs;
    return NULL;
}

bool gpu_refuse(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return false;
}

const gpu_engine *gpu_engine_find(const char *name)
{
    for (int i = 0; i < gpu_nengines; i++)
        if (strcmp(gpu_engine_rows[i].engine->name, name) == 0)
            return gpu_engine_rows[i].engine;
    return NULL;
}

void gpu_print_engines(FILE *f)
{
    for (int i = 0; i < gpu_nengines; i++) {
        char classes[128] = "";
        size_t n = 0;
        for (int c = 0; c < OPC_COUNT; c++)
            if (gpu_engine_rows[i].serves >> c & 1u)
                n += (size_t)snprintf(classes + n, sizeof classes - n, "%s%s", n ? "," : "", op_class_name((op_class)c));
        fprintf(f, "%-18s %-16s %s\n", gpu_engine_rows[i].engine->name, classes, gpu_engine_rows[i].engine->summary);
    }
}

char *gpu_engines_json(void)
{
    cJSON *all = cJSON_CreateArray();
    for (int i = 0; i < gpu_nengines; i++) {
        cJSON *e = cJSON_CreateObject(), *classes = cJSON_CreateArray();
        cJSON_AddStringToObject(e, "name", gpu_engine_rows[i].engine->name);
        for (int c = 0; c < OPC_COUNT; c++)
            if (gpu_engine_rows[i].serves >> c & 1u)
                cJSON_AddItemToArray(classes, cJSON_CreateString(op_class_name((op_class)c)));
        cJSON_AddItemToObject(e, "classes", classes);
        cJSON_AddStringToObject(e, "summary", gpu_engine_rows[i].engine->summary);
        cJSON_AddItemToArray(all, e);
    }
    char *text = cJSON_Print(all);
    cJSON_Delete(all);
    return text;
}

/* Does "KEY=ENGINE" name this partition (by its name or any node's op or name)? */
static bool force_matches(const gplan *pl, const gpart *p, const char *key, size_t klen)
{
    if (strlen(p->name) == klen && strncmp(p->name, key, klen) == 0)
        return true;
    for (int i = 0; i < p->nnodes; i++) {
        const gnode *n = &pl->g->n[p->nodes[i]];
        if ((strlen(n->op) == klen && strncmp(n->op, key, klen) == 0) ||
            (strlen(n->name) == klen && strncmp(n->name, key, klen) == 0))
            return true;
    }
    return false;
}

/* The engine of "KEY=ENGINE[:KNOBS]" (NULL when unknown); *knobs -> the knob
 * text after ':' ("" when none). */
static const gpu_engine *force_engine(const char *force, const char **knobs)
{
    const char *eq = strchr(force, '=');
    if (!eq)
        return NULL;
    const char *colon = strchr(eq + 1, ':');
    size_t n = colon ? (size_t)(colon - (eq + 1)) : strlen(eq + 1);
    *knobs = colon ? colon + 1 : "";
    char name[128];
    if (n >= sizeof name)
        return NULL;
    memcpy(name, eq + 1, n);
    name[n] = '\0';
    return gpu_engine_find(name);
}

xdnn_status gpu_select_engines(gplan *pl, const gpu_device *dev, const char *const *force, int nforce,
                               int verbose, FILE *log, xdnn_diags_t *d)
{
    for (int i = 0; i < nforce; i++) {
        const char *eq = strchr(force[i], '='), *knobs = "";
        const gpu_engine *eng = force_engine(force[i], &knobs);
        if (!eq || eq == force[i] || !eng) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(),
                       "--engine '%s': expected OP=ENGINE, PARTITION=ENGINE or PARTITION=ENGINE:KNOBS with ENGINE "
                       "one of the GPU engines (xdnn engines lists them)", force[i]);
            return XDNN_ERR_USAGE;
        }
        char why[256] = "";
        const gpu_knobs *kn = gpu_engine_knobs(eng);
        if (*knobs && !kn) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "--engine '%s': engine %s has no knobs, so knob text '%s' "
                       "cannot apply", force[i], eng->name, knobs);
            return XDNN_ERR_USAGE;
        }
        if (*knobs && !kn->valid(knobs, why, sizeof why)) {
            diag_error(d, XDNN_ERR_USAGE, xloc_none(), "--engine '%s': engine %s does not know knob text '%s': %s",
                       force[i], eng->name, knobs, why);
            return XDNN_ERR_USAGE;
        }
    }
    xdnn_status result = XDNN_OK;
    for (int pi = 0; pi < pl->nparts; pi++) {
        gpart *p = &pl->parts[pi];
        const gpu_engine *forced = NULL;
        const char *forced_knobs = "";
        for (int i = 0; i < nforce; i++) {
            const char *eq = strchr(force[i], '='), *knobs = "";
            if (force_matches(pl, p, force[i], (size_t)(eq - force[i]))) {
                forced = force_engine(force[i], &knobs);
                forced_knobs = knobs;
            }
        }
        if (!forced && p->preset) {
            forced = p->preset;
            forced_knobs = p->preset_knobs ? p->preset_knobs : "";
        }
        /* a copy: the force strings need not outlive the plan */
        p->knobs = arena_strdup(pl->g->ar, forced_knobs);
        if (verbose && log)
            fprintf(log, "partition %d [%s] %s\n", p->id, gpart_kind_name(p->kind), p->name);
        const gpu_engine *best = NULL;
        double best_cost = 0;
        char reasons[2048] = "";
        p->cands = arena_alloc(pl->g->ar, (size_t)gpu_nengines * sizeof *p->cands);
        p->ncands = 0;
        op_class cls = gpu_part_class(pl, p);
        for (int e = 0; e < gpu_nengines; e++) {
            const gpu_engine *eng = gpu_engine_rows[e].engine;
            if (eng != forced && !gpu_engine_serves(e, cls))
                continue;
            char why[512] = "";
            bool ok = eng->supports(pl, p, dev, why, sizeof why);
            double cost = ok ? eng->cost(pl, p, dev) : 0;
            p->cands[p->ncands++] = (gcand){eng, ok, cost, arena_strdup(pl->g->ar, ok ? "" : why)};
            if (verbose && log) {
                if (ok)
                    fprintf(log, "  candidate %-18s cost %.1f us%s\n", eng->name, cost, eng == forced ? " (forced)" : "");
                else
                    fprintf(log, "  rejected  %-18s %s\n", eng->name, why);
            }
            if (!ok) {
                size_t n = strlen(reasons);
                snprintf(reasons + n, sizeof reasons - n, "%s%s: %s", n ? "; " : "", eng->name, why);
                if (eng == forced) {
                    diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(),
                               "forced engine %s cannot run partition %s: %s", eng->name, p->name, why);
                    return XDNN_ERR_UNSUPPORTED;
                }
                continue;
            }
            if (forced ? eng == forced : (!best || cost < best_cost)) {
                best = eng;
                best_cost = cost;
            }
        }
        if (!best) {
            const gnode *n = &pl->g->n[p->nodes[0]];
            diag_error(d, XDNN_ERR_UNSUPPORTED, xloc_none(), "no GPU engine can run partition %s (op %s): %s", p->name,
                       p->anchor >= 0 ? pl->g->n[p->anchor].op : n->op, reasons);
            result = XDNN_ERR_UNSUPPORTED;
            continue;
        }
        p->engine = best;
        p->ws_bytes = best->workspace(pl, p, dev);
        if (verbose && log)
            fprintf(log, "  chosen    %s%s%s\n", best->name, *p->knobs ? ":" : "", p->knobs);
    }
    if (result == XDNN_OK) /* conv + batchnorm pairs on the engines chosen */
        gpu_genstats_pair(pl, dev, verbose ? log : NULL);
    return result;
}

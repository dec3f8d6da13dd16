/* op_test_util.c — hand-made nodes with bound attributes, runs, inference
 * checks and deterministic test data for op unit tests (see op_test_util.h). */
#include "op_test_util.h"
#include "test_util.h"

#include "data/data.h"
#include "lang/parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* rattrs[0..nattrs) are the values; after them each attribute owns
 * OPTEST_MAX_LIST values of list storage for the setters. */
static value *list_storage(xnode *n, const op_desc *d, int i) { return n->rattrs + d->nattrs + i * OPTEST_MAX_LIST; }

void optest_node(arena *a, xnode *n, const op_desc *d)
{
    memset(n, 0, sizeof *n);
    n->name = d->name;
    n->op = -1;
    for (int i = 0; i < OP_COUNT; i++)
        if (op_table[i] == d)
            n->op = i;
    n->rattrs = arena_alloc(a, sizeof(value) * (size_t)(d->nattrs * (1 + OPTEST_MAX_LIST) + 1));
    xdnn_diags_t *diags = xdnn_diags_create();
    for (int i = 0; i < d->nattrs; i++) {
        const attr_spec *s = &d->attrs[i];
        n->rattrs[i] = (value){.kind = VAL_NONE};
        if (!s->dflt)
            continue;
        expr *e = expr_parse_text(a, s->dflt, xloc_none(), diags);
        eval_env env = {.ar = a, .diags = diags};
        if (!e || !expr_eval(e, &env, &n->rattrs[i])) {
            fprintf(stderr, "optest_node: %s: default of '%s' (%s) does not evaluate\n", d->name, s->name, s->dflt);
            xdnn_diags_print(diags, stderr);
            n->rattrs[i] = (value){.kind = VAL_NONE};
        }
    }
    xdnn_diags_destroy(diags);
}

static value *slot(xnode *n, const op_desc *d, const char *name, int *index)
{
    int i = op_attr_index(d, name);
    if (i < 0 || !n->rattrs) {
        fprintf(stderr, "optest: op '%s' has no attribute '%s'\n", d->name, name);
        return NULL;
    }
    if (index)
        *index = i;
    return &n->rattrs[i];
}

bool optest_set_value(xnode *n, const op_desc *d, const char *name, const value *v)
{
    value *s = slot(n, d, name, NULL);
    if (s)
        *s = *v;
    return s != NULL;
}

bool optest_set_int(xnode *n, const op_desc *d, const char *name, int64_t v)
{
    return optest_set_value(n, d, name, &(value){.kind = VAL_INT, .i = v});
}

bool optest_set_float(xnode *n, const op_desc *d, const char *name, double v)
{
    return optest_set_value(n, d, name, &(value){.kind = VAL_FLOAT, .f = v});
}

bool optest_set_bool(xnode *n, const op_desc *d, const char *name, bool v)
{
    return optest_set_value(n, d, name, &(value){.kind = VAL_BOOL, .b = v});
}

bool optest_set_str(xnode *n, const op_desc *d, const char *name, const char *v)
{
    return optest_set_value(n, d, name, &(value){.kind = VAL_STRING, .s = v});
}

bool optest_unset(xnode *n, const op_desc *d, const char *name)
{
    return optest_set_value(n, d, name, &(value){.kind = VAL_NONE});
}

/* The attribute becomes a list of the k values (copied to its list storage). */
static bool set_list(xnode *n, const op_desc *d, const char *name, int k, const value *vals)
{
    int i;
    value *s = slot(n, d, name, &i);
    if (!s || k < 0 || k > XDNN_MAX_RANK)
        return false;
    value *items = list_storage(n, d, i);
    for (int j = 0; j < k; j++)
        items[j] = vals[j];
    *s = (value){.kind = VAL_LIST, .items = items, .n = k};
    return true;
}

bool optest_set_ints(xnode *n, const op_desc *d, const char *name, int k, const int64_t *vals)
{
    value items[XDNN_MAX_RANK];
    for (int j = 0; j < k && j < XDNN_MAX_RANK; j++)
        items[j] = (value){.kind = VAL_INT, .i = vals[j]};
    return set_list(n, d, name, k, items);
}

bool optest_set_floats(xnode *n, const op_desc *d, const char *name, int k, const double *vals)
{
    value items[XDNN_MAX_RANK];
    for (int j = 0; j < k && j < XDNN_MAX_RANK; j++)
        items[j] = (value){.kind = VAL_FLOAT, .f = vals[j]};
    return set_list(n, d, name, k, items);
}

bool optest_set_pads(xnode *n, const op_desc *d, const char *name, int k, const int64_t *lo_hi)
{
    int i;
    value *s = slot(n, d, name, &i);
    if (!s || k < 0 || k > XDNN_MAX_RANK)
        return false;
    value *outer = list_storage(n, d, i), *inner = outer + k;
    for (int j = 0; j < k; j++) {
        inner[2 * j] = (value){.kind = VAL_INT, .i = lo_hi[2 * j]};
        inner[2 * j + 1] = (value){.kind = VAL_INT, .i = lo_hi[2 * j + 1]};
        outer[j] = (value){.kind = VAL_LIST, .items = &inner[2 * j], .n = 2};
    }
    *s = (value){.kind = VAL_LIST, .items = outer, .n = k};
    return true;
}

tinfo optest_tinfo(xdnn_dtype dt, int rank, const int64_t *dims)
{
    tinfo t = {.dtype = dt, .rank = rank};
    for (int i = 0; i < rank; i++)
        t.dims[i] = dims[i];
    return t;
}

ref_tensor optest_ref_alloc(int rank, const int64_t *dims)
{
    ref_tensor t = {.rank = rank, .dtype = XDNN_F64};
    for (int i = 0; i < rank; i++)
        t.dims[i] = dims[i];
    t.numel = shape_numel(rank, dims);
    t.data = malloc(sizeof(double) * (size_t)(t.numel ? t.numel : 1));
    if (!t.data) {
        fprintf(stderr, "optest_ref_alloc: out of memory\n");
        abort();
    }
    for (int64_t i = 0; i < t.numel; i++)
        t.data[i] = NAN;
    return t;
}

void optest_ref_free(ref_tensor *t)
{
    free(t->data);
    t->data = NULL;
}

xdnn_status optest_infer(const op_desc *d, const xnode *n, int nin, const tinfo *const *in, int nout, tinfo *out,
                         xdnn_diags_t *diags)
{
    op_infer_ctx c = {.desc = d, .node = n, .nin = nin, .nresults = nout, .diags = diags};
    for (int i = 0; i < nin && i < OP_MAX_PORTS; i++)
        c.in[i] = in[i];
    xdnn_status st = d->infer(&c);
    for (int i = 0; i < nout && i < OP_MAX_RESULTS; i++)
        out[i] = c.out[i];
    return st;
}

xdnn_status optest_run(const op_desc *d, const xnode *n, int nin, const ref_tensor *const *in, int nout,
                       ref_tensor *out, xdnn_diags_t *diags)
{
    return optest_run_typed(d, n, nin, in, NULL, nout, out, diags);
}

xdnn_status optest_run_typed(const op_desc *d, const xnode *n, int nin, const ref_tensor *const *in,
                             const xdnn_dtype *dts, int nout, ref_tensor *out, xdnn_diags_t *diags)
{
    tinfo ti[OP_MAX_PORTS], to[OP_MAX_RESULTS];
    const tinfo *tp[OP_MAX_PORTS] = {0};
    for (int i = 0; i < nin && i < OP_MAX_PORTS; i++) {
        if (!in[i])
            continue;
        ti[i] = optest_tinfo(dts ? dts[i] : XDNN_F32, in[i]->rank, in[i]->dims);
        tp[i] = &ti[i];
    }
    for (int i = 0; i < nout; i++)
        out[i] = (ref_tensor){0};
    xdnn_status st = optest_infer(d, n, nin, tp, nout, to, diags);
    if (st != XDNN_OK)
        return st;
    op_ref_ctx c = {.desc = d, .node = n, .nin = nin, .nresults = nout, .diags = diags};
    for (int i = 0; i < nin && i < OP_MAX_PORTS; i++)
        c.in[i] = in[i];
    for (int i = 0; i < nout && i < OP_MAX_RESULTS; i++) {
        out[i] = optest_ref_alloc(to[i].rank, to[i].dims);
        out[i].dtype = to[i].dtype;
        c.out[i] = &out[i];
    }
    return d->reference(&c);
}

const char *optest_first_error(const xdnn_diags_t *diags)
{
    for (size_t i = 0; i < xdnn_diags_count(diags); i++) {
        const xdnn_diag *g = xdnn_diags_get(diags, i);
        if (g->severity == XDNN_SEV_ERROR)
            return g->message;
    }
    return "";
}

xdnn_status optest_infer_msg(const op_desc *d, const xnode *n, int nin, const tinfo *const *in, int nout, tinfo *out,
                             char *msg, size_t cap)
{
    xdnn_diags_t *diags = xdnn_diags_create();
    xdnn_status st = optest_infer(d, n, nin, in, nout, out, diags);
    snprintf(msg, cap, "%s", optest_first_error(diags));
    xdnn_diags_destroy(diags);
    return st;
}

const char *optest_infer_error(const op_desc *d, const xnode *n, int nin, const tinfo *const *in, int nout)
{
    static char msg[512];
    tinfo out[OP_MAX_RESULTS];
    xdnn_status st = optest_infer_msg(d, n, nin, in, nout, out, msg, sizeof msg);
    CHECK(st == XDNN_OK || st == XDNN_ERR_SEMANTIC, "%s: infer returned status %d: %s", d->name, (int)st, msg);
    if (st == XDNN_OK)
        snprintf(msg, sizeof msg, "(no error)");
    return msg;
}

void optest_expect_infer_error(const op_desc *d, const xnode *n, int nin, const tinfo *const *in, int nout,
                               const char *want)
{
    char msg[512];
    tinfo out[OP_MAX_RESULTS];
    xdnn_status st = optest_infer_msg(d, n, nin, in, nout, out, msg, sizeof msg);
    CHECK(st == XDNN_ERR_SEMANTIC, "%s: status %d, want a semantic error for: %s", d->name, (int)st, want);
    CHECK_STR(msg, want, "%s", d->name);
}

const op_desc *optest_op_named(const char *name)
{
    int i = op_lookup(name);
    CHECK(i >= 0, "op '%s' is not registered", name);
    return i >= 0 ? op_get(i) : NULL;
}

double optest_flops(const op_desc *d, xnode *n, int nin, const tinfo *in, int nout, const tinfo *out)
{
    xtensor t[OP_MAX_PORTS + OP_MAX_RESULTS] = {0};
    xport ports[OP_MAX_PORTS];
    int results[OP_MAX_RESULTS];
    for (int i = 0; i < nin + nout; i++) {
        const tinfo *ti = i < nin ? &in[i] : &out[i - nin];
        if (ti->rank < 0)
            continue; /* an absent port */
        t[i].rdtype = ti->dtype;
        t[i].rrank = ti->rank;
        for (int k = 0; k < ti->rank; k++)
            t[i].rdims[k] = ti->dims[k];
        shape_strides(ti->rank, ti->dims, t[i].rstrides);
        t[i].rnumel = shape_numel(ti->rank, ti->dims);
        t[i].rdefined = true;
    }
    for (int i = 0; i < nin; i++)
        ports[i] = (xport){.tensor = in[i].rank < 0 ? -1 : i};
    for (int i = 0; i < nout; i++)
        results[i] = nin + i;
    xgraph g = {.tensors = t, .ntensors = (size_t)(nin + nout)};
    n->inputs = ports;
    n->ninputs = nin;
    n->results = results;
    n->nresults = nout;
    double f = d->flops(&g, n);
    n->inputs = NULL; /* the ports were local */
    n->ninputs = 0;
    n->results = NULL;
    n->nresults = 0;
    return f;
}

double optest_rand(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (double)((*state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

ref_tensor optest_ref_of(int rank, const int64_t *dims, const double *vals, uint64_t *rng)
{
    ref_tensor t = optest_ref_alloc(rank, dims);
    for (int64_t i = 0; i < t.numel; i++)
        t.data[i] = vals ? vals[i] : rng ? optest_rand(rng) : (double)NAN;
    return t;
}

ref_tensor optest_ref_ints(int64_t n, const int64_t *vals)
{
    ref_tensor t = optest_ref_alloc(1, &n);
    for (int64_t i = 0; i < n; i++)
        t.data[i] = (double)vals[i];
    return t;
}

void optest_fill_lcg(ref_tensor *t, uint64_t seed, double lo, double hi)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < t->numel; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        t->data[i] = lo + (hi - lo) * (double)(s >> 11) / 9007199254740992.0;
    }
}

bool optest_sdpa_keep(uint64_t seed, int64_t row, int64_t Skv, int64_t j, double p)
{
    uint64_t idx = (uint64_t)(row * ((Skv + 7) / 8) + j / 8);
    const uint32_t ctr[4] = {(uint32_t)idx, (uint32_t)(idx >> 32), 0x73647061u, 0};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t w[4];
    philox4x32_10(ctr, key, w);
    uint32_t u16 = (w[(j % 8) / 2] >> (16 * (j % 2))) & 0xffffu;
    return u16 >= (uint32_t)floor(p * 65536 + 0.5);
}

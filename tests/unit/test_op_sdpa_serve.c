/* test_op_sdpa_serve.c — the serving forms of sdpa (src/ops/sdpa_serve.c):
 * a paged K/V cache and ragged THD sequences must give exactly (bit for bit
 * in double) what the dense sdpa gives on the same keys with seq_len_q/kv;
 * the pages are scattered over a pool full of other values in a shuffled
 * order, so a wrong page, slot or head index changes the result.  Then the
 * shape checks' messages, a bad page index and bad offsets. */
#include "op_test_util.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const op_desc op_sdpa_desc;

enum { NP = 9 }; /* the forward's ports */

typedef struct serve_case {
    const char *name;
    int64_t B, Hq, Hk, Sq, Skv, D, Dv, page_size; /* page_size 0: keys not paged */
    bool ragged_q, ragged_kv, causal, bottom_right;
    int64_t lq[4], lkv[4]; /* per sequence; 0 in lq with !ragged_q: Sq */
} serve_case;

static xdnn_status run(const xnode *n, const ref_tensor *const in[NP], ref_tensor *o, ref_tensor *stats, char *msg,
                       size_t cap)
{
    xdnn_diags_t *diags = xdnn_diags_create();
    op_ref_ctx c = {.desc = &op_sdpa_desc, .node = n, .nin = NP, .nresults = 2, .diags = diags};
    for (int i = 0; i < NP; i++)
        c.in[i] = in[i];
    c.out[0] = o;
    c.out[1] = stats;
    xdnn_status st = op_sdpa_desc.reference(&c);
    snprintf(msg, cap, "%s", xdnn_diags_count(diags) ? xdnn_diags_get(diags, 0)->message : "");
    xdnn_diags_destroy(diags);
    return st;
}

static void check_case(const serve_case *cs, uint64_t seed)
{
    arena *a = arena_create();
    xnode n;
    optest_node(a, &n, &op_sdpa_desc);
    optest_set_bool(&n, &op_sdpa_desc, "causal", cs->causal);
    if (cs->bottom_right)
        optest_set_str(&n, &op_sdpa_desc, "align", "bottom_right");
    const int64_t B = cs->B, Hq = cs->Hq, Hk = cs->Hk, Sq = cs->Sq, Skv = cs->Skv, D = cs->D, Dv = cs->Dv;

    /* the dense case: [B, H, S, D] with seq_len_q / seq_len_kv */
    ref_tensor q = optest_ref_alloc(4, (int64_t[]){B, Hq, Sq, D});
    ref_tensor k = optest_ref_alloc(4, (int64_t[]){B, Hk, Skv, D});
    ref_tensor v = optest_ref_alloc(4, (int64_t[]){B, Hk, Skv, Dv});
    optest_fill_lcg(&q, seed + 1, -1.5, 1.5);
    optest_fill_lcg(&k, seed + 2, -1.5, 1.5);
    optest_fill_lcg(&v, seed + 3, -1, 1);
    int64_t lq[4], lkv[4];
    for (int64_t b = 0; b < B; b++)
        lq[b] = cs->lq[b] ? cs->lq[b] : Sq, lkv[b] = cs->lkv[b];
    ref_tensor len_q = optest_ref_ints(B, lq), len_kv = optest_ref_ints(B, lkv);
    const ref_tensor *din[NP] = {&q, &k, &v, NULL, cs->ragged_q ? &len_q : NULL, &len_kv};
    ref_tensor o = optest_ref_alloc(4, (int64_t[]){B, Hq, Sq, Dv}), st = optest_ref_alloc(4, (int64_t[]){B, Hq, Sq, 1});
    char msg[512];
    CHECK(run(&n, din, &o, &st, msg, sizeof msg) == XDNN_OK, "%s: dense run: %s", cs->name, msg);

    /* the serving inputs holding the same values */
    const ref_tensor *sin[NP] = {&q, &k, &v};
    ref_tensor pq = {0}, pk = {0}, pv = {0}, pt = {0}, offq = {0}, offkv = {0};
    int64_t off_q[5] = {0}, off_kv[5] = {0};
    for (int64_t b = 0; b < B; b++)
        off_q[b + 1] = off_q[b] + lq[b], off_kv[b + 1] = off_kv[b] + lkv[b];
    const int64_t Tq = off_q[B], Tkv = off_kv[B];
    if (cs->ragged_q) {
        pq = optest_ref_alloc(3, (int64_t[]){Tq, Hq, D});
        optest_fill_lcg(&pq, seed + 7, -9, 9);
        for (int64_t b = 0; b < B; b++)
            for (int64_t i = 0; i < lq[b]; i++)
                for (int64_t h = 0; h < Hq; h++)
                    memcpy(pq.data + ((off_q[b] + i) * Hq + h) * D, q.data + ((b * Hq + h) * Sq + i) * D,
                           (size_t)D * sizeof(double));
        offq = optest_ref_ints(B + 1, off_q);
        sin[0] = &pq;
        sin[7] = &offq;
    } else {
        sin[4] = NULL;
    }
    if (cs->page_size) {
        const int64_t ps = cs->page_size, mp = (Skv + ps - 1) / ps, P = B * mp + 3;
        pk = optest_ref_alloc(4, (int64_t[]){P, Hk, ps, D});
        pv = optest_ref_alloc(4, (int64_t[]){P, Hk, ps, Dv});
        optest_fill_lcg(&pk, seed + 8, -9, 9); /* values in no sequence: a wrong page shows */
        optest_fill_lcg(&pv, seed + 9, -9, 9);
        pt = optest_ref_alloc(2, (int64_t[]){B, mp});
        int64_t *perm = malloc((size_t)P * sizeof *perm);
        for (int64_t i = 0; i < P; i++)
            perm[i] = i;
        uint64_t rng = seed;
        for (int64_t i = P - 1; i > 0; i--) { /* Fisher-Yates: pages in a shuffled order */
            int64_t j = (int64_t)((optest_rand(&rng) + 1) / 2 * (double)(i + 1)) % (i + 1), t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        for (int64_t b = 0; b < B; b++)
            for (int64_t p = 0; p < mp; p++) {
                const int64_t page = perm[b * mp + p];
                pt.data[b * mp + p] = (double)page;
                for (int64_t h = 0; h < Hk; h++)
                    for (int64_t s = 0; s < ps && p * ps + s < lkv[b]; s++) {
                        const int64_t j = p * ps + s;
                        memcpy(pk.data + ((page * Hk + h) * ps + s) * D, k.data + ((b * Hk + h) * Skv + j) * D,
                               (size_t)D * sizeof(double));
                        memcpy(pv.data + ((page * Hk + h) * ps + s) * Dv, v.data + ((b * Hk + h) * Skv + j) * Dv,
                               (size_t)Dv * sizeof(double));
                    }
                if (p * ps >= lkv[b]) /* a page the sequence does not reach: any value */
                    pt.data[b * mp + p] = -1;
            }
        free(perm);
        sin[1] = &pk, sin[2] = &pv, sin[5] = &len_kv, sin[6] = &pt;
    } else if (cs->ragged_kv) {
        pk = optest_ref_alloc(3, (int64_t[]){Tkv, Hk, D});
        pv = optest_ref_alloc(3, (int64_t[]){Tkv, Hk, Dv});
        optest_fill_lcg(&pk, seed + 8, -9, 9);
        optest_fill_lcg(&pv, seed + 9, -9, 9);
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < lkv[b]; j++)
                for (int64_t h = 0; h < Hk; h++) {
                    memcpy(pk.data + ((off_kv[b] + j) * Hk + h) * D, k.data + ((b * Hk + h) * Skv + j) * D,
                           (size_t)D * sizeof(double));
                    memcpy(pv.data + ((off_kv[b] + j) * Hk + h) * Dv, v.data + ((b * Hk + h) * Skv + j) * Dv,
                           (size_t)Dv * sizeof(double));
                }
        offkv = optest_ref_ints(B + 1, off_kv);
        sin[1] = &pk, sin[2] = &pv, sin[5] = NULL, sin[8] = &offkv;
    } else {
        sin[5] = &len_kv;
    }
    ref_tensor so, sst;
    if (cs->ragged_q) {
        so = optest_ref_alloc(3, (int64_t[]){Tq, Hq, Dv});
        sst = optest_ref_alloc(3, (int64_t[]){Tq, Hq, 1});
    } else {
        so = optest_ref_alloc(4, (int64_t[]){B, Hq, Sq, Dv});
        sst = optest_ref_alloc(4, (int64_t[]){B, Hq, Sq, 1});
    }
    for (int64_t x = 0; x < so.numel; x++)
        so.data[x] = NAN;
    for (int64_t x = 0; x < sst.numel; x++)
        sst.data[x] = NAN;
    CHECK(run(&n, sin, &so, &sst, msg, sizeof msg) == XDNN_OK, "%s: serving run: %s", cs->name, msg);

    /* bit-exact: the same double sums in the same order */
    int64_t bad = 0, compared = 0, nonzero = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < (cs->ragged_q ? lq[b] : Sq); i++) {
                const int64_t dr = (b * Hq + h) * Sq + i, sr = cs->ragged_q ? (off_q[b] + i) * Hq + h : dr;
                for (int64_t d = 0; d < Dv; d++) {
                    compared++;
                    nonzero += o.data[dr * Dv + d] != 0;
                    bad += !(so.data[sr * Dv + d] == o.data[dr * Dv + d]);
                }
                bad += !(sst.data[sr] == st.data[dr]);
            }
    CHECK(bad == 0 && compared > 0 && nonzero > 0, "%s: %lld of %lld values differ from the dense sdpa (%lld nonzero)",
          cs->name, (long long)bad, (long long)compared, (long long)nonzero);

    optest_ref_free(&q), optest_ref_free(&k), optest_ref_free(&v), optest_ref_free(&o), optest_ref_free(&st);
    optest_ref_free(&len_q), optest_ref_free(&len_kv), optest_ref_free(&pq), optest_ref_free(&pk);
    optest_ref_free(&pv), optest_ref_free(&pt), optest_ref_free(&offq), optest_ref_free(&offkv);
    optest_ref_free(&so), optest_ref_free(&sst);
    arena_destroy(a);
}

static void test_equivalence(void)
{
    static const serve_case cases[] = {
        {"paged decode GQA ps=4", 3, 8, 2, 1, 16, 8, 8, 4, false, false, false, false, {0}, {13, 1, 16}},
        {"paged decode MQA ps=1", 2, 4, 1, 1, 7, 6, 5, 1, false, false, false, false, {0}, {7, 2}},
        {"paged chunked prefill causal bottom_right ps=8", 2, 4, 2, 5, 29, 8, 8, 8, false, false, true, true, {0},
         {29, 11}},
        {"paged ragged q causal bottom_right ps=16", 3, 2, 2, 6, 40, 4, 4, 16, true, false, true, true, {6, 1, 3},
         {40, 9, 17}},
        {"paged seq_len_kv 0", 2, 2, 1, 1, 8, 4, 4, 4, false, false, false, false, {0}, {0, 5}},
        {"ragged q and kv causal top_left", 3, 4, 2, 7, 11, 8, 8, 0, true, true, true, false, {7, 1, 5}, {11, 1, 7}},
        {"ragged q and kv causal bottom_right", 4, 2, 1, 5, 13, 4, 6, 0, true, true, true, true, {5, 2, 1, 3},
         {13, 2, 7, 3}},
        {"ragged kv only", 2, 2, 2, 3, 9, 4, 4, 0, false, true, false, false, {0}, {9, 4}},
        {"ragged q only, dense k/v with seq_len_kv", 2, 2, 1, 4, 6, 4, 4, 0, true, false, true, true, {4, 2},
         {6, 3}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], 100 + 17 * i);
}

static void test_infer(void)
{
    arena *a = arena_create();
    xnode n;
    optest_node(a, &n, &op_sdpa_desc);
    tinfo q = optest_tinfo(XDNN_F16, 4, (int64_t[]){3, 8, 1, 64});
    tinfo kp = optest_tinfo(XDNN_F16, 4, (int64_t[]){12, 2, 16, 64});
    tinfo pt = optest_tinfo(XDNN_I32, 2, (int64_t[]){3, 4});
    tinfo lens = optest_tinfo(XDNN_I32, 1, (int64_t[]){3});
    tinfo out[2];
    char msg[512];
    CHECK(optest_infer_msg(&op_sdpa_desc, &n, 7, (const tinfo *[]){&q, &kp, &kp, NULL, NULL, &lens, &pt}, 2, out, msg,
                           sizeof msg) == XDNN_OK &&
              out[0].rank == 4 && out[0].dims[0] == 3 && out[0].dims[1] == 8 && out[0].dims[2] == 1 &&
              out[0].dims[3] == 64 && out[1].dims[3] == 1,
          "paged decode: %s", msg);
    optest_expect_infer_error(&op_sdpa_desc, &n, 7, (const tinfo *[]){&q, &kp, &kp, NULL, NULL, NULL, &pt}, 1,
                              "sdpa: page_table needs seq_len_kv (the number of keys of each sequence)");
    tinfo pt_bad = optest_tinfo(XDNN_I32, 2, (int64_t[]){2, 4});
    optest_expect_infer_error(&op_sdpa_desc, &n, 7, (const tinfo *[]){&q, &kp, &kp, NULL, NULL, &lens, &pt_bad}, 1,
                              "sdpa: page_table must be [B, max_pages] with B=3, got [2, 4]");
    tinfo pt_f = optest_tinfo(XDNN_F32, 2, (int64_t[]){3, 4});
    optest_expect_infer_error(&op_sdpa_desc, &n, 7, (const tinfo *[]){&q, &kp, &kp, NULL, NULL, &lens, &pt_f}, 1,
                              "sdpa: page_table must be i32 or i64, got f32");
    tinfo k3 = optest_tinfo(XDNN_F16, 3, (int64_t[]){12, 2, 64});
    optest_expect_infer_error(&op_sdpa_desc, &n, 7, (const tinfo *[]){&q, &k3, &k3, NULL, NULL, &lens, &pt}, 1,
                              "sdpa: k must have rank 4 [num_pages, Hk, page_size, D] (page pools, @bshd: "
                              "[num_pages, page_size, Hk, D]), got [12, 2, 64]");
    /* ragged */
    tinfo qt = optest_tinfo(XDNN_BF16, 3, (int64_t[]){40, 8, 64});
    tinfo kt = optest_tinfo(XDNN_BF16, 3, (int64_t[]){90, 2, 64});
    tinfo vt = optest_tinfo(XDNN_BF16, 3, (int64_t[]){90, 2, 32});
    tinfo off = optest_tinfo(XDNN_I32, 1, (int64_t[]){4});
    CHECK(optest_infer_msg(&op_sdpa_desc, &n, 9, (const tinfo *[]){&qt, &kt, &vt, NULL, NULL, NULL, NULL, &off, &off},
                           2, out, msg, sizeof msg) == XDNN_OK &&
              out[0].rank == 3 && out[0].dims[0] == 40 && out[0].dims[1] == 8 && out[0].dims[2] == 32 &&
              out[1].rank == 3 && out[1].dims[2] == 1,
          "ragged: %s", msg);
    optest_expect_infer_error(&op_sdpa_desc, &n, 8, (const tinfo *[]){&q, &kt, &vt, NULL, NULL, NULL, NULL, &off}, 1,
                              "sdpa: q must be [T, H, D] (THD-packed) with seq_offsets_q, got [3, 8, 1, 64]");
    tinfo off5 = optest_tinfo(XDNN_I32, 1, (int64_t[]){5});
    optest_expect_infer_error(&op_sdpa_desc, &n, 9,
                              (const tinfo *[]){&qt, &kt, &vt, NULL, NULL, NULL, NULL, &off, &off5}, 1,
                              "sdpa: seq_offsets_kv has 5 entries, the batch of 3 sequences needs B+1 = 4");
    optest_expect_infer_error(&op_sdpa_desc, &n, 9, (const tinfo *[]){&qt, &kp, &kp, NULL, NULL, &lens, &pt, &off, &off},
                              1, "sdpa: page_table and seq_offsets_kv exclude each other (keys are paged or packed, "
                                 "not both)");
    optest_set_float(&n, &op_sdpa_desc, "dropout", 0.1);
    optest_expect_infer_error(&op_sdpa_desc, &n, 7, (const tinfo *[]){&q, &kp, &kp, NULL, NULL, &lens, &pt}, 1,
                              "sdpa: attribute 'dropout' must be 0 with page_table, got 0.1");
    arena_destroy(a);
}

/* A page index outside the pool, in a page a sequence reads, is an error. */
static void test_bad_page(void)
{
    arena *a = arena_create();
    xnode n;
    optest_node(a, &n, &op_sdpa_desc);
    ref_tensor q = optest_ref_alloc(4, (int64_t[]){2, 2, 1, 4}), k = optest_ref_alloc(4, (int64_t[]){3, 1, 4, 4});
    optest_fill_lcg(&q, 1, -1, 1);
    optest_fill_lcg(&k, 2, -1, 1);
    ref_tensor pt = optest_ref_ints(4, (int64_t[]){0, 1, 2, 7}), lens = optest_ref_ints(2, (int64_t[]){8, 5});
    pt.rank = 2, pt.dims[0] = 2, pt.dims[1] = 2;
    ref_tensor o = optest_ref_alloc(4, (int64_t[]){2, 2, 1, 4}), st = optest_ref_alloc(4, (int64_t[]){2, 2, 1, 1});
    char msg[512];
    const ref_tensor *in[NP] = {&q, &k, &k, NULL, NULL, &lens, &pt};
    xdnn_status s = run(&n, in, &o, &st, msg, sizeof msg);
    CHECK(s == XDNN_ERR_SEMANTIC &&
              strcmp(msg, "sdpa: page_table[1, 1] = 7 is not a page in [0, 3) (sequence 1 has 5 keys)") == 0,
          "bad page: status %d \"%s\"", (int)s, msg);
    lens.data[1] = 4; /* the bad entry is now past the sequence's last page: not read */
    CHECK(run(&n, in, &o, &st, msg, sizeof msg) == XDNN_OK, "unread bad page rejected: %s", msg);
    /* ragged q of 3 tokens whose offsets stop short of T */
    ref_tensor qt = optest_ref_alloc(3, (int64_t[]){3, 2, 4}), offq = optest_ref_ints(3, (int64_t[]){0, 1, 2});
    ref_tensor ot = optest_ref_alloc(3, (int64_t[]){3, 2, 4}), stt = optest_ref_alloc(3, (int64_t[]){3, 2, 1});
    optest_fill_lcg(&qt, 3, -1, 1);
    const ref_tensor *rin[NP] = {&qt, &k, &k, NULL, NULL, &lens, &pt, &offq};
    s = run(&n, rin, &ot, &stt, msg, sizeof msg);
    CHECK(s == XDNN_ERR_SEMANTIC &&
              strcmp(msg, "sdpa: seq_offsets_q[2] = 2: offsets must be non-decreasing integers from 0 to T = 3") == 0,
          "short offsets: status %d \"%s\"", (int)s, msg);
    optest_ref_free(&qt), optest_ref_free(&offq), optest_ref_free(&ot), optest_ref_free(&stt);
    optest_ref_free(&q), optest_ref_free(&k), optest_ref_free(&pt), optest_ref_free(&lens);
    optest_ref_free(&o), optest_ref_free(&st);
    arena_destroy(a);
}

int main(void)
{
    test_equivalence();
    test_infer();
    test_bad_page();
    return test_summary("test_op_sdpa_serve");
}

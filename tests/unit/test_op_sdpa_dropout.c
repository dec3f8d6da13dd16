/* test_op_sdpa_dropout.c — pins the attention dropout mask (src/ops/sdpa.h):
 * one Philox-4x32-10 call per row and group of 8 keys, counter
 * ((b*Hq + h)*Sq + i) * ceil(Skv/8) + j/8, element j takes the 16-bit half
 * j % 2 of word (j % 8) / 2, keep iff u16 >= round(p * 65536).  The GPU
 * engines reproduce it bit for bit, so a change here is a format change.
 *
 *  - known answers: u16 values of a few (b, h, i, j) computed by an
 *    independent Python Philox (checked against the Random123 known answers
 *    of test_data.c) and by the hand-written Philox below;
 *  - sdpa_dropout_factor against that hand-written recipe on every element
 *    of odd shapes (Skv 13, 77: the last group runs past the keys);
 *  - thresholds: rounding, and the clamps of tiny p and p near 1;
 *  - the keep rate of ~1e6 elements within 4 sigma of 1 - p (p 0.5, 0.1,
 *    0.01), and within 7.7e-6 of 1 - p in expectation (the quantization). */
#include "test_util.h"

#include "ops/sdpa.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* Philox-4x32-10 written out from Salmon et al. (SC'11), not the library's. */
static void ref_philox(uint32_t c[4], uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; r++) {
        uint64_t a = (uint64_t)0xD2511F53u * c[0], b = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n[4] = {(uint32_t)(b >> 32) ^ c[1] ^ k0, (uint32_t)b, (uint32_t)(a >> 32) ^ c[3] ^ k1, (uint32_t)a};
        for (int w = 0; w < 4; w++)
            c[w] = n[w];
        k0 += 0x9E3779B9u; /* the key schedule: bumped after every round (the last bump is unused) */
        k1 += 0xBB67AE85u;
    }
}

static uint32_t ref_u16(uint64_t seed, int64_t Hq, int64_t Sq, int64_t Skv, int64_t b, int64_t h, int64_t i,
                        int64_t j)
{
    uint64_t idx = (uint64_t)(((b * Hq + h) * Sq + i) * ((Skv + 7) / 8) + j / 8);
    uint32_t c[4] = {(uint32_t)idx, (uint32_t)(idx >> 32), 0x73647061u, 0};
    ref_philox(c, (uint32_t)seed, (uint32_t)(seed >> 32));
    uint32_t word = c[(j % 8) / 2];
    return j % 2 ? word >> 16 : word & 0xffffu;
}

static void test_known_answers(void)
{
    static const struct {
        int b, h, i, j;
        uint32_t u16;
    } kat[] = {{0, 0, 0, 0, 36936}, {0, 0, 0, 1, 39466}, {0, 0, 0, 7, 46903}, {0, 0, 0, 8, 44495},
               {0, 0, 0, 12, 13858}, {1, 2, 4, 5, 46359}, {1, 1, 3, 9, 13176}, {0, 2, 1, 6, 46305}};
    const uint64_t seed = 0x0123456789ABCDEFull;
    const sdpa_dims n = {.B = 2, .Hq = 3, .Hk = 1, .Sq = 5, .Skv = 13, .D = 4, .Dv = 4};
    for (size_t k = 0; k < sizeof kat / sizeof kat[0]; k++) {
        CHECK_EQ(ref_u16(seed, n.Hq, n.Sq, n.Skv, kat[k].b, kat[k].h, kat[k].i, kat[k].j), kat[k].u16, "ref %zu", k);
        CHECK_EQ(sdpa_dropout_u16(seed, &n, kat[k].b, kat[k].h, kat[k].i, kat[k].j), kat[k].u16, "lib %zu", k);
    }
    /* u16 = 13176 at (1, 1, 3, 9): kept at p = 0.2 (t 13107), dropped at p = 0.25 (t 16384) */
    sdpa_cfg cfg = {.n = n, .seed = seed, .dropout = 0.2};
    CHECK_NEAR(sdpa_dropout_factor(&cfg, 1, 1, 3, 9), 1.25, 1e-15);
    cfg.dropout = 0.25;
    CHECK_EQ(sdpa_dropout_factor(&cfg, 1, 1, 3, 9) == 0.0, 1);
    cfg.dropout = 0;
    CHECK_EQ(sdpa_dropout_factor(&cfg, 1, 1, 3, 9) == 1.0, 1);
}

static void test_every_element(void)
{
    const struct {
        int64_t B, Hq, Sq, Skv;
        double p;
        uint64_t seed;
    } cases[] = {{2, 3, 5, 13, 0.3, 7}, {1, 4, 3, 77, 0.5, 0xdeadbeefcafeull}, {3, 1, 1, 8, 0.01, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sdpa_cfg cfg = {.n = {.B = cases[c].B, .Hq = cases[c].Hq, .Hk = 1, .Sq = cases[c].Sq, .Skv = cases[c].Skv},
                        .dropout = cases[c].p, .seed = cases[c].seed};
        uint32_t t = (uint32_t)floor(cases[c].p * 65536 + 0.5);
        long bad = 0;
        for (int64_t b = 0; b < cfg.n.B; b++)
            for (int64_t h = 0; h < cfg.n.Hq; h++)
                for (int64_t i = 0; i < cfg.n.Sq; i++)
                    for (int64_t j = 0; j < cfg.n.Skv; j++) {
                        bool keep = ref_u16(cfg.seed, cfg.n.Hq, cfg.n.Sq, cfg.n.Skv, b, h, i, j) >= t;
                        double want = keep ? 1.0 / (1.0 - cfg.dropout) : 0.0;
                        bad += sdpa_dropout_factor(&cfg, b, h, i, j) != want;
                    }
        CHECK_EQ(bad, 0, "case %zu", c);
    }
}

static void test_thresholds(void)
{
    CHECK_EQ(sdpa_dropout_threshold(0.0), 0);
    CHECK_EQ(sdpa_dropout_threshold(0.1), 6554);  /* 6553.6 */
    CHECK_EQ(sdpa_dropout_threshold(0.2), 13107); /* 13107.2 */
    CHECK_EQ(sdpa_dropout_threshold(0.5), 32768);
    CHECK_EQ(sdpa_dropout_threshold(0.01), 655);  /* 655.36 */
    CHECK_EQ(sdpa_dropout_threshold(1e-7), 0);    /* every element kept (and scaled by 1/(1-p)) */
    CHECK_EQ(sdpa_dropout_threshold(0.9999999), 65536); /* every element dropped */
    for (double p = 0; p < 1; p += 0.0371)
        CHECK(fabs(sdpa_dropout_threshold(p) / 65536.0 - p) <= 0.5 / 65536, "p %g", p);
}

static void test_keep_rate(void)
{
    const double ps[] = {0.5, 0.1, 0.01};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        sdpa_cfg cfg = {.n = {.B = 2, .Hq = 4, .Hk = 2, .Sq = 1000, .Skv = 125}, .dropout = ps[k], .seed = 42 + k};
        long kept = 0, total = 0;
        for (int64_t b = 0; b < cfg.n.B; b++)
            for (int64_t h = 0; h < cfg.n.Hq; h++)
                for (int64_t i = 0; i < cfg.n.Sq; i++)
                    for (int64_t j = 0; j < cfg.n.Skv; j++, total++)
                        kept += sdpa_dropout_factor(&cfg, b, h, i, j) != 0;
        double q = 1 - ps[k], sigma = sqrt(q * (1 - q) / (double)total);
        CHECK(fabs((double)kept / (double)total - q) < 4 * sigma, "p %g: kept %ld of %ld (4 sigma %g)", ps[k], kept,
              total, 4 * sigma);
        CHECK(fabs(1 - sdpa_dropout_threshold(ps[k]) / 65536.0 - q) < 7.7e-6, "p %g", ps[k]);
    }
}

int main(void)
{
    test_known_answers();
    test_every_element();
    test_thresholds();
    test_keep_rate();
    return test_summary("test_op_sdpa_dropout");
}

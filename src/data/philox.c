/* philox.c — the counter-based random generator behind every random
 * initializer.  The GPU kernels reproduce this recipe bit for bit, so it is
 * written out in full here and must not change without changing them too.
 *
 * Philox-4x32-10 (Salmon et al., SC'11; Random123):
 *   constants  M0 = 0xD2511F53, M1 = 0xCD9E8D57 (multipliers),
 *              W0 = 0x9E3779B9, W1 = 0xBB67AE85 (key schedule).
 *   one round  (hi0, lo0) = M0 * c0 (64-bit product), (hi1, lo1) = M1 * c2,
 *              c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0).
 *   10 rounds; the key is bumped (k0 += W0, k1 += W1, mod 2^32) between rounds
 *   (before rounds 2..10).  Output = the counter after round 10.
 *
 * Seeds.  A tensor's seed is fnv1a64 over the 8 little-endian bytes of the
 * graph seed followed by the bytes of the tensor name (no terminator):
 *   h = 0xcbf29ce484222325; for each byte b: h ^= b; h *= 0x100000001b3.
 * An explicit seed=s in an initializer is used as the seed directly.
 *
 * Element i (logical row-major index) of stream s under seed S:
 *   key = (S & 0xffffffff, S >> 32)
 *   ctr = (i & 0xffffffff, i >> 32, s & 0xffffffff, s >> 32)   (s < 2^32: last word 0)
 *   out = philox4x32_10(ctr, key)
 *   uniform01 = (out[0] >> 8) * 2^-24            in [0, 1), exact in f32
 *   normal    = sqrt(-2 ln u1) * cos(2 pi u2)    in double, with
 *               u1 = ((out[0] >> 8) + 1) * 2^-24 in (0, 1] (never log(0)),
 *               u2 = (out[1] >> 8) * 2^-24       in [0, 1).
 * uniform(lo, hi) = lo + (hi - lo) * uniform01; randn(mean, std) = mean + std
 * * normal; both in double, then rounded once to the tensor's dtype.
 *
 * Exactness: the uniform values are bit-exact anywhere.  The normal values
 * depend on log/cos/sqrt in double; glibc and CUDA's double log/cos differ by
 * at most an ulp or two of a double, which disappears when the result is
 * rounded to f32 or narrower except in the rare case that lands on a rounding
 * boundary.  Comparisons of randn data should therefore use a tolerance of one
 * ulp of the tensor dtype, or use uniform data for bit-exact checks.
 */
#include "data.h"

#include <math.h>

enum {
    PHILOX_M0 = 0xD2511F53u,
    PHILOX_M1 = 0xCD9E8D57u,
};
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

uint64_t rng_tensor_seed(uint64_t graph_seed, const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 8; i++) {
        h ^= (graph_seed >> (8 * i)) & 0xFF;
        h *= 0x100000001b3ull;
    }
    for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void rng_block(uint64_t seed, uint64_t stream, uint64_t index, uint32_t out[4])
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32), (uint32_t)stream,
                             (uint32_t)(stream >> 32)};
    philox4x32_10(ctr, key, out);
}

#define TWO_POW_M24 (1.0 / 16777216.0)

double rng_uniform01(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint32_t out[4];
    rng_block(seed, stream, index, out);
    return (double)(out[0] >> 8) * TWO_POW_M24;
}

double rng_normal(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint32_t out[4];
    rng_block(seed, stream, index, out);
    double u1 = (double)((out[0] >> 8) + 1) * TWO_POW_M24; /* (0, 1] */
    double u2 = (double)(out[1] >> 8) * TWO_POW_M24;       /* [0, 1) */
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

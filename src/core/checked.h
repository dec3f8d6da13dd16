/* checked.h — int64 arithmetic that reports overflow instead of wrapping.
 *
 * Shapes and attributes come from users, so a product of dims, a window
 * extent or a padded size can exceed int64; signed overflow is undefined
 * behaviour in C, and a wrapped size runs a 4x4 input into a 6x6 output.
 * Every such computation in shape inference goes through these: each returns
 * false (and leaves *r unspecified) when the exact result does not fit.
 */
#ifndef XDNN_CHECKED_H
#define XDNN_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

static inline bool ck_add(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }
static inline bool ck_sub(int64_t a, int64_t b, int64_t *r) { return !__builtin_sub_overflow(a, b, r); }
static inline bool ck_mul(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }

/* a * (b - 1) + 1: the extent of a window of b taps spaced a apart (b >= 1). */
static inline bool ck_extent(int64_t a, int64_t b, int64_t *r)
{
    return ck_mul(a, b - 1, r) && ck_add(*r, 1, r);
}

#endif

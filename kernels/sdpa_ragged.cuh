// sdpa_ragged.cuh — where the rows of ragged (THD-packed) sequences go on the Hopper attention kernels' grids
// and workspaces (sdpa_wgmma_sm90a.cu, sdpa_bwd_wgmma_sm90a.cu; offsets as kern_sdpa.h defines them): block
// slots per sequence, a slot's sequence, a token's sequence.  The host never reads the offsets: every bound here
// holds for any packing of T tokens into B sequences.
#ifndef XDNN_KERNELS_SDPA_RAGGED_CUH
#define XDNN_KERNELS_SDPA_RAGGED_CUH

#include "sdpa_common.cuh"

namespace {
// Ragged (THD) sequences on a grid of row blocks of bm (kern_sdpa.h): sequence b owns the block slots
// [slot_base(b), slot_base(b + 1)), slot_base(b) = off[b] / bm + b.  Its tokens [a, e) need ceil((e - a) / bm)
// blocks, at most e / bm - a / bm + 1: the slots hold them, and all B sequences fit in T / bm + B slots, so a
// grid (or a workspace) of that many blocks covers any packing without knowing the lengths on the host, and
// wastes at most one block per sequence.  Offsets are clamped as ragged_span clamps them.
__device__ __forceinline__ int slot_base(const xk_tensor &off, int b, int T, int bm)
{
    const int64_t i = (int64_t)b * off.st[0];
    int64_t a = off.dtype == XK_I64 ? static_cast<const long long *>(off.p)[i] : static_cast<const int32_t *>(off.p)[i];
    a = a < 0 ? 0 : a > T ? T : a;
    return (int)(a / bm) + b;
}
// The sequence of slot s (the last b with slot_base(b) <= s: a binary search over the offsets) and the first
// row of the block inside it (negative or past its length: a slot no rows fall in).
__device__ __forceinline__ void slot_seq(const xk_tensor &off, int B, int T, int bm, int s, int *b, int *m0)
{
    int lo = 0, hi = B - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (slot_base(off, mid, T, bm) <= s)
            lo = mid;
        else
            hi = mid - 1;
    }
    *b = lo;
    *m0 = (s - slot_base(off, lo, T, bm)) * bm;
}
// The sequence holding token tok (the last b whose start is <= tok) and the token's row in it; -1 when no
// sequence holds it (offsets that do not cover [0, T): the engines clamp them, sdpa.h calls them an error).
__device__ __forceinline__ int token_row(const xk_tensor &off, int B, int T, int tok, int *b)
{
    int lo = 0, hi = B - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        int a, n;
        ragged_span(off, mid, T, &a, &n);
        if (a <= tok)
            lo = mid;
        else
            hi = mid - 1;
    }
    int a, n;
    ragged_span(off, lo, T, &a, &n);
    *b = lo;
    return B > 0 && tok >= a && tok < a + n ? tok - a : -1;
}

} // namespace

#endif

// sdpa.cu — the attention row kernels (host side: src/gpu/eng_sdpa.c,
// semantics: src/ops/sdpa.h — mask rule, GQA, bias broadcast, dropout stream;
// shared helpers: sdpa_common.cuh; tensor-core kernels: sdpa_mma.cu,
// sdpa_tf32.cu, sdpa_bwd_mma.cu).
//
//  sdpa_fwd_rows  one warp per query row, f32 math, online softmax over the
//                 visible key range; any D, Dv <= 256 and any float dtypes.
//  sdpa_bwd_rows  two passes, no atomics: (1) one warp per query row: Delta =
//                 do.o and dq; (2) one warp per key row: dk, dv summed over
//                 every query head of its kv group and every visible row.
//                 P is recomputed from the forward's stats (logsumexp).
// Dropout: the CPU reference's mask (src/ops/sdpa.h: 16 bits of the Philox
// call of row (b, h, i) and key group j / 8), one call per element here
// (drop_factor); the tensor-core kernels share each call among lanes.
#include "sdpa_common.cuh"

namespace {

// ---------------------------------------------------------------- row kernels

// Forward, one warp per (b, h, i); lane owns columns lane + 32 c.
template <int NC>
__global__ void __launch_bounds__(128) sdpa_fwd_rows(xk_sdpa p)
{
    int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= (int64_t)p.B * p.Hq * p.Sq)
        return;
    int i = (int)(row % p.Sq), h = (int)((row / p.Sq) % p.Hq), b = (int)(row / ((int64_t)p.Sq * p.Hq));
    int hk = h / (p.Hq / p.Hk);
    int lq = seq_len(p.len_q, b, p.Sq), lkv = seq_len(p.len_kv, b, p.Skv);
    float q[NC], acc[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        q[c] = d < p.D ? ld_any(p.q.p, p.q.dtype, off4(p.q, b, h, i, d)) : 0.0f;
        acc[c] = 0.0f;
    }
    float m = -CUDART_INF_F, l = 0.0f;
    int lo, hi;
    key_range(p, lq, lkv, i, &lo, &hi);
    for (int j = lo; j < hi; j++) {
        float dot = 0.0f;
#pragma unroll
        for (int c = 0; c < NC; c++) {
            int d = lane + 32 * c;
            if (d < p.D)
                dot += q[c] * ld_any(p.k.p, p.k.dtype, off4(p.k, b, hk, j, d));
        }
        float s = warp_sum(dot) * p.scale + bias_at(p, b, h, i, j);
        if (s == -CUDART_INF_F)
            continue;
        float mn = fmaxf(m, s);
        float corr = expf(m - mn), e = expf(s - mn);
        l = l * corr + e;
        float pe = e * drop_factor(p, b, h, i, j);
#pragma unroll
        for (int c = 0; c < NC; c++) {
            int d = lane + 32 * c;
            float v = d < p.Dv ? ld_any(p.v.p, p.v.dtype, off4(p.v, b, hk, j, d)) : 0.0f;
            acc[c] = acc[c] * corr + pe * v;
        }
        m = mn;
    }
    // empty: every score -inf (the reference's test); a +inf or NaN score leaves l NaN, and o, stats NaN with it
    bool empty = m == -CUDART_INF_F;
    float inv = empty ? 0.0f : 1.0f / l;
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        if (d < p.Dv)
            st_any(p.o.p, p.o.dtype, off4(p.o, b, h, i, d), empty ? 0.0f : acc[c] * inv);
    }
    if (lane == 0 && p.stats.p)
        st_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, i, 0), empty ? -CUDART_INF_F : m + logf(l));
}

// Backward pass 1: Delta_i = do_i . o_i and dq_i, one warp per (b, h, i).
template <int NC>
__global__ void __launch_bounds__(128) sdpa_bwd_dq_rows(xk_sdpa p)
{
    int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= (int64_t)p.B * p.Hq * p.Sq)
        return;
    int i = (int)(row % p.Sq), h = (int)((row / p.Sq) % p.Hq), b = (int)(row / ((int64_t)p.Sq * p.Hq));
    int hk = h / (p.Hq / p.Hk);
    int lq = seq_len(p.len_q, b, p.Sq), lkv = seq_len(p.len_kv, b, p.Skv);
    float q[NC], dO[NC], dq[NC], part = 0.0f;
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        q[c] = d < p.D ? ld_any(p.q.p, p.q.dtype, off4(p.q, b, h, i, d)) : 0.0f;
        dO[c] = d < p.Dv ? ld_any(p.dout.p, p.dout.dtype, off4(p.dout, b, h, i, d)) : 0.0f;
        if (d < p.Dv)
            part += dO[c] * ld_any(p.o.p, p.o.dtype, off4(p.o, b, h, i, d));
        dq[c] = 0.0f;
    }
    float delta = warp_sum(part);
    if (lane == 0)
        p.delta[row] = delta;
    float lse = ld_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, i, 0));
    int lo, hi;
    key_range(p, lq, lkv, i, &lo, &hi);
    for (int j = lo; j < hi; j++) {
        float dot = 0.0f, dpp = 0.0f;
#pragma unroll
        for (int c = 0; c < NC; c++) {
            int d = lane + 32 * c;
            if (d < p.D)
                dot += q[c] * ld_any(p.k.p, p.k.dtype, off4(p.k, b, hk, j, d));
            if (d < p.Dv)
                dpp += dO[c] * ld_any(p.v.p, p.v.dtype, off4(p.v, b, hk, j, d));
        }
        float s = warp_sum(dot) * p.scale + bias_at(p, b, h, i, j);
        float dp = warp_sum(dpp);
        if (s == -CUDART_INF_F)
            continue;
        float pr = expf(s - lse), f = drop_factor(p, b, h, i, j);
        float ds = pr * (f * dp - delta) * p.scale;
#pragma unroll
        for (int c = 0; c < NC; c++) {
            int d = lane + 32 * c;
            if (d < p.D)
                dq[c] += ds * ld_any(p.k.p, p.k.dtype, off4(p.k, b, hk, j, d));
        }
    }
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        if (d < p.D)
            st_any(p.dq.p, p.dq.dtype, off4(p.dq, b, h, i, d), dq[c]);
    }
}

// Backward pass 2: dk_j and dv_j of one kv head, one warp per (b, hk, j),
// summed over the query heads of the group and their visible rows.
template <int NC>
__global__ void __launch_bounds__(128) sdpa_bwd_dkdv_rows(xk_sdpa p)
{
    int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= (int64_t)p.B * p.Hk * p.Skv)
        return;
    int j = (int)(row % p.Skv), hk = (int)((row / p.Skv) % p.Hk), b = (int)(row / ((int64_t)p.Skv * p.Hk));
    int group = p.Hq / p.Hk;
    int lq = seq_len(p.len_q, b, p.Sq), lkv = seq_len(p.len_kv, b, p.Skv);
    float k[NC], v[NC], dk[NC], dv[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        k[c] = d < p.D ? ld_any(p.k.p, p.k.dtype, off4(p.k, b, hk, j, d)) : 0.0f;
        v[c] = d < p.Dv ? ld_any(p.v.p, p.v.dtype, off4(p.v, b, hk, j, d)) : 0.0f;
        dk[c] = dv[c] = 0.0f;
    }
    int lo, hi;
    row_range(p, lq, lkv, j, &lo, &hi);
    for (int h = hk * group; h < (hk + 1) * group; h++) {
        for (int i = lo; i < hi; i++) {
            float dot = 0.0f, dpp = 0.0f;
#pragma unroll
            for (int c = 0; c < NC; c++) {
                int d = lane + 32 * c;
                if (d < p.D)
                    dot += k[c] * ld_any(p.q.p, p.q.dtype, off4(p.q, b, h, i, d));
                if (d < p.Dv)
                    dpp += v[c] * ld_any(p.dout.p, p.dout.dtype, off4(p.dout, b, h, i, d));
            }
            float s = warp_sum(dot) * p.scale + bias_at(p, b, h, i, j);
            float dp = warp_sum(dpp);
            if (s == -CUDART_INF_F)
                continue;
            int64_t r = ((int64_t)b * p.Hq + h) * p.Sq + i;
            float lse = ld_any(p.stats.p, p.stats.dtype, off4(p.stats, b, h, i, 0));
            float pr = expf(s - lse), f = drop_factor(p, b, h, i, j);
            float ds = pr * (f * dp - p.delta[r]) * p.scale, pf = pr * f;
#pragma unroll
            for (int c = 0; c < NC; c++) {
                int d = lane + 32 * c;
                if (d < p.D)
                    dk[c] += ds * ld_any(p.q.p, p.q.dtype, off4(p.q, b, h, i, d));
                if (d < p.Dv)
                    dv[c] += pf * ld_any(p.dout.p, p.dout.dtype, off4(p.dout, b, h, i, d));
            }
        }
    }
#pragma unroll
    for (int c = 0; c < NC; c++) {
        int d = lane + 32 * c;
        if (d < p.D)
            st_any(p.dk.p, p.dk.dtype, off4(p.dk, b, hk, j, d), dk[c]);
        if (d < p.Dv)
            st_any(p.dv.p, p.dv.dtype, off4(p.dv, b, hk, j, d), dv[c]);
    }
}

int rows_nc(int D, int Dv)
{
    int w = D > Dv ? D : Dv;
    return w <= 64 ? 2 : w <= 128 ? 4 : 8;
}

unsigned rows_grid(int64_t rows) { return (unsigned)((rows * 32 + 127) / 128); }

} // namespace

extern "C" int xk_sdpa_fwd_rows(const xk_sdpa *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    int64_t rows = (int64_t)p->B * p->Hq * p->Sq;
    if (rows == 0)
        return 0;
    switch (rows_nc(p->D, p->Dv)) {
    case 2: sdpa_fwd_rows<2><<<rows_grid(rows), 128, 0, s>>>(*p); break;
    case 4: sdpa_fwd_rows<4><<<rows_grid(rows), 128, 0, s>>>(*p); break;
    default: sdpa_fwd_rows<8><<<rows_grid(rows), 128, 0, s>>>(*p); break;
    }
    return (int)cudaGetLastError();
}

extern "C" int xk_sdpa_bwd_rows(const xk_sdpa *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    int64_t qrows = (int64_t)p->B * p->Hq * p->Sq, krows = (int64_t)p->B * p->Hk * p->Skv;
    int nc = rows_nc(p->D, p->Dv);
    if (qrows > 0) {
        switch (nc) {
        case 2: sdpa_bwd_dq_rows<2><<<rows_grid(qrows), 128, 0, s>>>(*p); break;
        case 4: sdpa_bwd_dq_rows<4><<<rows_grid(qrows), 128, 0, s>>>(*p); break;
        default: sdpa_bwd_dq_rows<8><<<rows_grid(qrows), 128, 0, s>>>(*p); break;
        }
    }
    if (krows > 0) {
        switch (nc) {
        case 2: sdpa_bwd_dkdv_rows<2><<<rows_grid(krows), 128, 0, s>>>(*p); break;
        case 4: sdpa_bwd_dkdv_rows<4><<<rows_grid(krows), 128, 0, s>>>(*p); break;
        default: sdpa_bwd_dkdv_rows<8><<<rows_grid(krows), 128, 0, s>>>(*p); break;
        }
    }
    return (int)cudaGetLastError();
}

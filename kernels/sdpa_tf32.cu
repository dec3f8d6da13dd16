// sdpa_tf32.cu — the tensor-core attention forward for f32 graphs that allow
// tf32 (host side: src/gpu/eng_sdpa.c, semantics: src/ops/sdpa.h, helpers:
// sdpa_common.cuh).
//
//  sdpa_fwd_tf32<DP>  the structure of sdpa_fwd_mma (4 warps x 16 query
//      rows, two cp.async stages of K and V, online softmax in the exp2
//      domain, masks only on boundary tiles) with f32 tiles in shared memory
//      and mma.sync m16n8k8 tf32: q, k, v and P are rounded to tf32 (10-bit
//      mantissa, cvt.rna), products accumulate in f32.  Expected accuracy:
//      ~1e-3 relative (METHOD.md's tf32 row), not f32's 1e-5.
//      P V needs P as an A fragment; the C layout of S holds keys 2t4, 2t4+1
//      where A wants t4, t4+4, so the k order inside each 8-key step is
//      permuted (k = t4 <-> key 2t4, k = t4 + 4 <-> key 2t4 + 1) and V's B
//      fragment reads the same permuted rows: no shuffles.
//      DP: the head dims padded (zero-filled) to a bucket 32..256; BN = 32 keys per
//      tile; rows padded by 4 floats so every fragment read hits 32 banks.
#include "sdpa_common.cuh"

namespace {

template <int DP> struct tf32_cfg {
    static constexpr int BN = 32;
    static constexpr int LD = DP + 4;
    static constexpr int SMEM = (kBM + 4 * BN) * LD * 4;
};

template <int DP>
__global__ void __launch_bounds__(128) sdpa_fwd_tf32(xk_sdpa p, int vec_q, int vec_k, int vec_v)
{
    using C = tf32_cfg<DP>;
    constexpr int BN = C::BN, LD = C::LD, NT = BN / 8;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    float *Qs = reinterpret_cast<float *>(smem_raw);
#define XK_KS(st) (Qs + (kBM + (st) * BN) * LD)
#define XK_VS(st) (Qs + (kBM + (2 + (st)) * BN) * LD)
    const int bh = blockIdx.y, b = bh / p.Hq, h = bh % p.Hq, hk = h / (p.Hq / p.Hk);
    const int m0 = blockIdx.x * kBM;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const int lq = seq_len(p.len_q, b, p.Sq), lkv = seq_len(p.len_kv, b, p.Skv);
    const float scale2 = p.scale * kLog2e;

    int jlo, jhi;
    block_keys(p, m0, lq, lkv, BN, &jlo, &jhi);
    load_tile<float, kBM, DP>(Qs, LD, p.q, b, h, m0, p.Sq, p.D, vec_q != 0);
    if (jlo < jhi) {
        load_tile<float, BN, DP>(XK_KS(0), LD, p.k, b, hk, jlo, p.Skv, p.D, vec_k != 0);
        load_tile<float, BN, DP>(XK_VS(0), LD, p.v, b, hk, jlo, p.Skv, p.Dv, vec_v != 0);
    }
    cp_async_commit();
    cp_async_wait();
    __syncthreads();
    // Q is rounded to tf32 once, in place (each thread converts what it reads).
    const int r0 = warp * 16 + g, row0 = m0 + r0;
    uint32_t *Qb = reinterpret_cast<uint32_t *>(Qs);
#pragma unroll
    for (int kk = 0; kk < DP / 8; kk++) {
        const int c = kk * 8 + t4;
        Qb[r0 * LD + c] = to_tf32(Qs[r0 * LD + c]);
        Qb[(r0 + 8) * LD + c] = to_tf32(Qs[(r0 + 8) * LD + c]);
        Qb[r0 * LD + c + 4] = to_tf32(Qs[r0 * LD + c + 4]);
        Qb[(r0 + 8) * LD + c + 4] = to_tf32(Qs[(r0 + 8) * LD + c + 4]);
    }
    __syncwarp();

    float o[DP / 8][4];
#pragma unroll
    for (int dt = 0; dt < DP / 8; dt++)
        o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
    float mrow[2] = {-CUDART_INF_F, -CUDART_INF_F}, lrow[2] = {0.0f, 0.0f};

    for (int n0 = jlo, it = 0; n0 < jhi; n0 += BN, it++) {
        const int cur = it & 1;
        if (n0 + BN < jhi) {
            load_tile<float, BN, DP>(XK_KS(cur ^ 1), LD, p.k, b, hk, n0 + BN, p.Skv, p.D, vec_k != 0);
            load_tile<float, BN, DP>(XK_VS(cur ^ 1), LD, p.v, b, hk, n0 + BN, p.Skv, p.Dv, vec_v != 0);
        }
        cp_async_commit();
        const float *Kc = XK_KS(cur), *Vc = XK_VS(cur);

        float s[NT][4];
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
            s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < DP / 8; kk++) {
            const int c = kk * 8 + t4;
            uint32_t a[4] = {Qb[r0 * LD + c], Qb[(r0 + 8) * LD + c], Qb[r0 * LD + c + 4], Qb[(r0 + 8) * LD + c + 4]};
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const float *kr = &Kc[(nt * 8 + g) * LD + c];
                uint32_t bf[2] = {to_tf32(kr[0]), to_tf32(kr[4])};
                mma_tf32(s[nt], a, bf);
            }
        }
        float corr[2];
        softmax_step<NT>(p, s, b, h, m0, row0, n0, lq, lkv, scale2, mrow, lrow, corr);
#pragma unroll
        for (int dt = 0; dt < DP / 8; dt++) {
            o[dt][0] *= corr[0];
            o[dt][1] *= corr[0];
            o[dt][2] *= corr[1];
            o[dt][3] *= corr[1];
        }
        uint32_t pa[NT][4]; // permuted k order: {row g key 2t4, row g+8 key 2t4, row g key 2t4+1, row g+8 key 2t4+1}
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            pa[nt][0] = to_tf32(s[nt][0]);
            pa[nt][1] = to_tf32(s[nt][2]);
            pa[nt][2] = to_tf32(s[nt][1]);
            pa[nt][3] = to_tf32(s[nt][3]);
        }
#pragma unroll
        for (int dt = 0; dt < DP / 8; dt++) {
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const float *vr = &Vc[(nt * 8 + 2 * t4) * LD + dt * 8 + g];
                uint32_t bf[2] = {to_tf32(vr[0]), to_tf32(vr[LD])};
                mma_tf32(o[dt], pa[nt], bf);
            }
        }
        cp_async_wait();
        __syncthreads();
    }
    finish_rows<DP>(p, o, mrow, lrow, b, h, row0, rows_of(p, b)); // dense: rows 0..Sq
#undef XK_KS
#undef XK_VS
}

template <int DP> cudaError_t launch_tf32(const xk_sdpa &p, dim3 grid, cudaStream_t s, int vq, int vk, int vv)
{
    static bool opted = false;
    const int bytes = tf32_cfg<DP>::SMEM;
    if (!opted) {
        cudaError_t e = cudaFuncSetAttribute(sdpa_fwd_tf32<DP>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e != cudaSuccess)
            return e;
        opted = true;
    }
    sdpa_fwd_tf32<DP><<<grid, 128, bytes, s>>>(p, vq, vk, vv);
    return cudaGetLastError();
}

} // namespace

extern "C" int xk_sdpa_fwd_tf32_smem(int D, int Dv)
{
    return (kBM + 4 * 32) * (dp_bucket(D > Dv ? D : Dv) + 4) * 4; // tf32_cfg<DP>::SMEM
}

extern "C" int xk_sdpa_fwd_tf32(const xk_sdpa *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if ((int64_t)p->B * p->Hq * p->Sq == 0)
        return 0;
    if (p->D < 1 || p->Dv < 1 || p->D > 256 || p->Dv > 256)
        return (int)cudaErrorInvalidValue;
    dim3 grid((unsigned)((p->Sq + kBM - 1) / kBM), (unsigned)(p->B * p->Hq));
    int vq = vec_ok(p->q, p->D, 4), vk = vec_ok(p->k, p->D, 4), vv = vec_ok(p->v, p->Dv, 4);
    cudaError_t e;
#define XK_CASE(n) \
    case n: e = launch_tf32<n>(*p, grid, s, vq, vk, vv); break;
    switch (dp_bucket(p->D > p->Dv ? p->D : p->Dv)) {
        XK_SDPA_BUCKETS(XK_CASE)
    default: e = cudaErrorInvalidValue; break;
    }
#undef XK_CASE
    return (int)e;
}

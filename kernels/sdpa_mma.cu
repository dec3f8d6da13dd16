// sdpa_mma.cu — the tensor-core attention forward (f16/bf16), flash-attention-2
// style (host side: src/gpu/eng_sdpa.c, semantics: src/ops/sdpa.h, helpers:
// sdpa_common.cuh).
//
//  sdpa_fwd_mma<T, DP, SPLIT>  a block of 4 warps owns 64 query rows and
//      streams BN-key tiles of K and V through two cp.async stages; S = Q K^T
//      and O += P V on mma.sync m16n8k16 (f32 accumulate, V fragments by
//      ldmatrix.trans), online softmax in registers (exp2 domain), per-element
//      masks only on tiles that cross a boundary.
//      v2 (2026-11-23): any D, Dv <= 256.  Both head dims are padded up to the
//      bucket DP (32, 48, 64, 80, 96, 128, 160, 192, 256) in shared memory with zeros;
//      the padding is multiplied like data (a run-time skip of those k-steps
//      and n-tiles broke the unrolled loops and cost 15% at D = 128), o is
//      stored only for d < Dv.  DP <= 128: Q
//      fragments live in registers, BN = 64; DP > 128: Q fragments are re-read
//      from shared memory and BN = 32 so o (DP/2 registers) still fits.
//      SPLIT (o in f32): P enters the tensor cores as hi + lo halves.
//      v3 (2026-11-24): ragged THD sequences (kern_sdpa.h): each block finds
//      its sequence's rows (rows_of) and exits when its 64 rows start past
//      the sequence's end; loads and stores address rows qrow + i, krow + j.
#include "sdpa_common.cuh"

namespace {

template <int DP> struct fwd_cfg {
    static constexpr int BN = DP <= 128 ? 64 : 32;
    static constexpr bool QREG = DP <= 128;
    static constexpr int LD = DP + 8; // 16-bit elements; +8: fragment reads hit 32 banks
    static constexpr int SMEM = (kBM + 4 * BN) * LD * 2;
};

template <typename T, int DP, bool SPLIT>
__global__ void __launch_bounds__(128) sdpa_fwd_mma(xk_sdpa p, int vec_q, int vec_k, int vec_v)
{
    using C = fwd_cfg<DP>;
    constexpr int BN = C::BN, LD = C::LD, NT = BN / 8;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *Qs = reinterpret_cast<T *>(smem_raw);
    // stage st: K at Qs + (kBM + st * BN) * LD, V at Qs + (kBM + (2 + st) * BN) * LD
#define XK_KS(st) (Qs + (kBM + (st) * BN) * LD)
#define XK_VS(st) (Qs + (kBM + (2 + (st)) * BN) * LD)
    const int bh = blockIdx.y, b = bh / p.Hq, h = bh % p.Hq, hk = h / (p.Hq / p.Hk);
    const int m0 = blockIdx.x * kBM;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const seq_rows sr = rows_of(p, b);
    if (m0 >= sr.nq) // a ragged sequence shorter than the grid's bound T: no rows here
        return;
    const int lq = sr.lq, lkv = sr.lkv, qend = sr.qrow + sr.nq, kend = sr.krow + sr.nkv;
    const float scale2 = p.scale * kLog2e;

    int jlo, jhi;
    block_keys(p, m0, lq, lkv, BN, &jlo, &jhi);

    load_tile<T, kBM, DP>(Qs, LD, p.q, b, h, sr.qrow + m0, qend, p.D, vec_q != 0);
    if (jlo < jhi) {
        load_tile<T, BN, DP>(XK_KS(0), LD, p.k, b, hk, sr.krow + jlo, kend, p.D, vec_k != 0);
        load_tile<T, BN, DP>(XK_VS(0), LD, p.v, b, hk, sr.krow + jlo, kend, p.Dv, vec_v != 0);
    }
    cp_async_commit();
    cp_async_wait();
    __syncthreads();
    const int r0 = warp * 16 + g;
    uint32_t qf[C::QREG ? DP / 16 : 1][4];
    if (C::QREG) {
#pragma unroll
        for (int kk = 0; kk < DP / 16; kk++)
            lds_a(qf[C::QREG ? kk : 0], Qs, LD, r0, kk * 16 + t4 * 2);
    }
    const int row0 = m0 + r0; // and row0 + 8

    float o[DP / 8][4];
#pragma unroll
    for (int dt = 0; dt < DP / 8; dt++)
        o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
    float mrow[2] = {-CUDART_INF_F, -CUDART_INF_F}, lrow[2] = {0.0f, 0.0f};

    for (int n0 = jlo, it = 0; n0 < jhi; n0 += BN, it++) {
        const int cur = it & 1;
        if (n0 + BN < jhi) { // prefetch the next tile into the other stage
            load_tile<T, BN, DP>(XK_KS(cur ^ 1), LD, p.k, b, hk, sr.krow + n0 + BN, kend, p.D, vec_k != 0);
            load_tile<T, BN, DP>(XK_VS(cur ^ 1), LD, p.v, b, hk, sr.krow + n0 + BN, kend, p.Dv, vec_v != 0);
        }
        cp_async_commit();
        const T *Kc = XK_KS(cur), *Vc = XK_VS(cur);

        float s[NT][4];
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
            s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < DP / 16; kk++) {
            uint32_t qa[4];
            if (!C::QREG)
                lds_a(qa, Qs, LD, r0, kk * 16 + t4 * 2);
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                uint32_t bf[2];
                const T *kr = &Kc[(nt * 8 + g) * LD + kk * 16 + t4 * 2];
                bf[0] = *reinterpret_cast<const uint32_t *>(kr);
                bf[1] = *reinterpret_cast<const uint32_t *>(kr + 8);
                mma_t<T>::run(s[nt], C::QREG ? qf[C::QREG ? kk : 0] : qa, bf);
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
        uint32_t pa[NT / 2][4], pl[SPLIT ? NT / 2 : 1][4];
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            pa[nt >> 1][(nt & 1) * 2 + 0] = mma_t<T>::pack(s[nt][0], s[nt][1]);
            pa[nt >> 1][(nt & 1) * 2 + 1] = mma_t<T>::pack(s[nt][2], s[nt][3]);
            if (SPLIT) {
                float r[4];
#pragma unroll
                for (int e = 0; e < 4; e++)
                    r[e] = s[nt][e] - mma_t<T>::to_float(mma_t<T>::from(s[nt][e]));
                pl[SPLIT ? nt >> 1 : 0][(nt & 1) * 2 + 0] = mma_t<T>::pack(r[0], r[1]);
                pl[SPLIT ? nt >> 1 : 0][(nt & 1) * 2 + 1] = mma_t<T>::pack(r[2], r[3]);
            }
        }
        // O += P V
#pragma unroll
        for (int dt = 0; dt < DP / 8; dt++) {
#pragma unroll
            for (int jj = 0; jj < NT / 2; jj++) {
                uint32_t bf[2];
                ldsm_t2(bf, Vc, LD, jj * 16, dt * 8, lane);
                mma_t<T>::run(o[dt], pa[jj], bf);
                if (SPLIT)
                    mma_t<T>::run(o[dt], pl[SPLIT ? jj : 0], bf);
            }
        }
        cp_async_wait();  // this thread's copies of the next tile landed
        __syncthreads();  // everyone's landed, and nobody still reads this stage
    }
    finish_rows<DP>(p, o, mrow, lrow, b, h, row0, sr);
#undef XK_KS
#undef XK_VS
}

// Launch with the dynamic shared memory it needs (opted in once).
template <typename T, int DP, bool SPLIT>
cudaError_t launch_mma(const xk_sdpa &p, dim3 grid, cudaStream_t s, int vq, int vk, int vv)
{
    static bool opted = false;
    const int bytes = fwd_cfg<DP>::SMEM;
    if (!opted) {
        cudaError_t e =
            cudaFuncSetAttribute(sdpa_fwd_mma<T, DP, SPLIT>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e != cudaSuccess)
            return e;
        opted = true;
    }
    sdpa_fwd_mma<T, DP, SPLIT><<<grid, 128, bytes, s>>>(p, vq, vk, vv);
    return cudaGetLastError();
}

template <typename T, int DP>
cudaError_t launch_dp(const xk_sdpa &p, dim3 grid, cudaStream_t s, bool split, int vq, int vk, int vv)
{
    return split ? launch_mma<T, DP, true>(p, grid, s, vq, vk, vv) : launch_mma<T, DP, false>(p, grid, s, vq, vk, vv);
}

template <typename T> cudaError_t launch_t(const xk_sdpa &p, dim3 grid, cudaStream_t s, bool split, int vq, int vk, int vv)
{
#define XK_CASE(n) \
    case n: return launch_dp<T, n>(p, grid, s, split, vq, vk, vv);
    switch (dp_bucket(p.D > p.Dv ? p.D : p.Dv)) {
        XK_SDPA_BUCKETS(XK_CASE)
    default: return cudaErrorInvalidValue;
    }
#undef XK_CASE
}

} // namespace

extern "C" int xk_sdpa_fwd_mma_smem(int D, int Dv)
{
#define XK_CASE(n) \
    case n: return fwd_cfg<n>::SMEM;
    switch (dp_bucket(D > Dv ? D : Dv)) {
        XK_SDPA_BUCKETS(XK_CASE)
    default: return 1 << 30;
    }
#undef XK_CASE
}

extern "C" int xk_sdpa_fwd_mma(const xk_sdpa *p, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if ((int64_t)p->B * p->Hq * p->Sq == 0)
        return 0;
    if (p->D < 1 || p->Dv < 1 || p->D > 256 || p->Dv > 256)
        return (int)cudaErrorInvalidValue;
    dim3 grid((unsigned)((p->Sq + kBM - 1) / kBM), (unsigned)(p->B * p->Hq));
    int vq = vec_ok(p->q, p->D, 2), vk = vec_ok(p->k, p->D, 2), vv = vec_ok(p->v, p->Dv, 2);
    const bool split = p->o.dtype == XK_F32;
    cudaError_t e = p->q.dtype == XK_BF16 ? launch_t<__nv_bfloat16>(*p, grid, s, split, vq, vk, vv)
                                          : launch_t<__half>(*p, grid, s, split, vq, vk, vv);
    return (int)e;
}

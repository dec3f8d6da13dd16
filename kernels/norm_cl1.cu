// norm_cl1.cu — batchnorm training forward and backward over channels-last
// x in ONE persistent launch (issue 12), for the tensors that (mostly) fit on
// chip: norm_cl.cu's reduce, finalize and apply read x twice (the backward x
// and dy twice) in three launches; here
//   pass 1   every block (channel block, split of the rows: exactly the
//            resident count, one 512-thread block per SM, cooperative launch)
//            loads its rows once, keeps the first R of them in shared memory
//            ([row][tx] 16-byte vectors: each thread reads back only what it
//            wrote) and accumulates per thread (shifted sums of x; backward
//            sum dy, sum dy xhat from the saved mean / inv), then a fixed
//            halving tree over the block's thread rows and one partial per
//            channel in part[split][C][4] (norm_cl.cu's layout);
//   barrier  (grid-wide: cooperative groups);
//   merge    one warp per channel combines the splits in a fixed order
//            (cl_combine_splits, shared with norm_cl.cu's finalize: the same
//            bits run to run) and stores mean / inv, running statistics, or
//            sum g, sum g xhat and dscale / dbias (cl_fin_channel);
//   barrier;
//   apply    the rows past R first, top down (read last in pass 1, the
//            likeliest still in L2; session 13, ng_job.cl_l2, x of 32-256 MB:
//            pass 1 loads the held rows evict-first, their lines dead at
//            once, and the apply loads what it reads and stores evict-first,
//            so that its used lines go before the ones it has still to read),
//            then the held rows from shared memory: y = act((x - mean)
//            inv scale + bias), or with a fused residual r act(round(that) +
//            r), or dx = inv scale dy - inv^2 sum(g xhat) / M (x - mean) -
//            inv sum(g) / M.
// Traffic: x read once (+ the rows past R a second time), y written once; the
// backward reads x and dy once.  The host (plan_cl1, src/gpu/eng_norm.c)
// takes this path when a block re-reads at most a set share of its rows; the
// launcher answers -1 (nothing launched: the caller runs norm_cl.cu's three)
// when the grid would not be resident at once.
#include "norm_cl_common.cuh"

#include <cooperative_groups.h>

namespace {

namespace cg = cooperative_groups;

// L2 eviction priority of a load or store (ng_job.cl_l2, session 13): a row
// read for the last time, or an output, is evict-first, so that the lines
// the apply has used (or written) go before the ones of x / dy it has still
// to read.  Hopper / Ampere (createpolicy and .L2::cache_hint, sm_80); before
// them a plain load or store.  Volatile: made where it is used, in the row
// loops, not held in two registers across them (in norm_cl.cu's apply, at
// its 80-register bound, a held policy spilled ~130 bytes).
__device__ __forceinline__ uint64_t cl_policy(bool first)
{
    uint64_t p = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (first)
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    else
        asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(p));
#else
    (void)first;
#endif
    return p;
}

// cl_ld, and a store of a 16-, 4- or 2-byte vector, with the L2 policy pol
template <typename T, int V>
__device__ __forceinline__ vec_t<T, V> cl_ldp(const void *p, int64_t off, uint64_t pol)
{
    const vec_t<T, V> *a = reinterpret_cast<const vec_t<T, V> *>(static_cast<const T *>(p) + off);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr int S = (int)sizeof(vec_t<T, V>);
    static_assert(S == 16 || S == 4 || S == 2, "16-, 4- or 2-byte vectors");
    union {
        vec_t<T, V> v;
        unsigned u[S >= 4 ? S / 4 : 1];
        unsigned short h;
    } r;
    if (S == 16)
        asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(r.u[0]), "=r"(r.u[S == 16 ? 1 : 0]), "=r"(r.u[S == 16 ? 2 : 0]), "=r"(r.u[S == 16 ? 3 : 0])
                     : "l"(a), "l"(pol));
    else if (S == 4)
        asm volatile("ld.global.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(r.u[0]) : "l"(a), "l"(pol));
    else
        asm volatile("ld.global.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(r.h) : "l"(a), "l"(pol));
    return r.v;
#else
    (void)pol;
    return *a;
#endif
}

template <typename T, int V>
__device__ __forceinline__ void cl_stp(void *p, int64_t off, const vec_t<T, V> &v, uint64_t pol)
{
    vec_t<T, V> *a = reinterpret_cast<vec_t<T, V> *>(static_cast<T *>(p) + off);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr int S = (int)sizeof(vec_t<T, V>);
    union {
        vec_t<T, V> v;
        unsigned u[S >= 4 ? S / 4 : 1];
        unsigned short h;
    } r;
    r.v = v;
    if (S == 16)
        asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(a), "r"(r.u[0]),
                     "r"(r.u[S == 16 ? 1 : 0]), "r"(r.u[S == 16 ? 2 : 0]), "r"(r.u[S == 16 ? 3 : 0]), "l"(pol)
                     : "memory");
    else if (S == 4)
        asm volatile("st.global.L2::cache_hint.u32 [%0], %1, %2;" ::"l"(a), "r"(r.u[0]), "l"(pol) : "memory");
    else
        asm volatile("st.global.L2::cache_hint.u16 [%0], %1, %2;" ::"l"(a), "h"(r.h), "l"(pol) : "memory");
#else
    (void)pol;
    *a = v;
#endif
}

template <typename T, int V>
__device__ __forceinline__ void cl_storep(void *p, int64_t off, const float (&v)[V], uint64_t pol)
{
    vec_t<T, V> q;
#pragma unroll
    for (int k = 0; k < V; k++)
        q.v[k] = from_f<T>(v[k]);
    cl_stp<T, V>(p, off, q, pol);
}

// threads per block (one block per SM: it holds ~all of the SM's shared
// memory); 16-byte vectors in flight per stream and thread in pass 1 and in
// the apply of the rows past R: 8 forward, 4 + 4 backward (64 KiB an SM)
enum { C1_THREADS = NG_CL1_THREADS };
template <bool BWD>
struct c1_cfg {
    static constexpr int U = BWD ? 4 : 8;
};

// shared memory ahead of the held rows: the tree's two sums per channel
// ([k][slot], conflict-free) and a count per slot, for half the threads
constexpr size_t c1_fixed_bytes(int V)
{
    return (size_t)C1_THREADS / 2 * (2 * V + 1) * sizeof(float);
}

// rows r, r + TY, ... (U of them, those below nrow) of x and, TWO, of a second stream: U loads in flight,
// with the L2 policy pol
template <typename T, int V, int U, bool TWO>
__device__ __forceinline__ void c1_ld_rows(const T *xp, int64_t sx, const T *dp, int64_t sd, int64_t r, int TY,
                                           int64_t nrow, vec_t<T, V> (&x)[U], vec_t<T, V> (&d)[U], uint64_t pol)
{
#pragma unroll
    for (int u = 0; u < U; u++) {
        int64_t rr = r + (int64_t)u * TY;
        if (rr < nrow) {
            x[u] = cl_ldp<T, V>(xp, rr * sx, pol);
            if (TWO)
                d[u] = cl_ldp<T, V>(dp, rr * sd, pol);
        }
    }
}

template <typename T, int V, bool BWD, int ACT, bool RD>
__device__ __forceinline__ void c1_out(const ng_job &j, const vec_t<T, V> &x, const vec_t<T, V> &d, const float (&k0)[V],
                                       const float (&k1)[V], const float (&k2)[V], const float (&k3)[V], T *o,
                                       uint64_t pout)
{
    float v[V];
#pragma unroll
    for (int k = 0; k < V; k++) {
        float xv = cl_f<T, true>(x.v[k]), dv = RD ? cl_f<T, true>(d.v[k]) : 0.f;
        if (BWD)
            v[k] = k1[k] * dv + (k2[k] * (xv - k0[k]) + k3[k]);
        else if (RD) // the residual r in d
            v[k] = act_f(round_dt((xv - k0[k]) * k1[k] + k2[k], j.res_dt) + dv, ACT, j.act_dt);
        else
            v[k] = act_f((xv - k0[k]) * k1[k] + k2[k], ACT, j.act_dt);
    }
    cl_storep<T, V>(o, 0, v, pout);
}

// The apply of the thread's rows r = ty, ty + TY, ... below nrow: past R from
// global memory (U in flight; the groups top down when ng_job.cl_l2), then the
// held ones from shared memory.  RD:
// a second stream (the backward's dy, held too; the forward's residual r,
// always read from global memory).
template <typename T, int V, bool BWD, int ACT, bool RD>
__device__ __forceinline__ void c1_apply(const ng_job &j, int64_t q0, int64_t nrow, int64_t R, int ty, int TY,
                                         int tx, int TX, int64_t c0, const vec_t<T, V> *xs, const vec_t<T, V> *ds,
                                         const float (&k0)[V], const float (&k1)[V], const float (&k2)[V],
                                         const float (&k3)[V])
{
    constexpr int U = RD && !BWD ? c1_cfg<BWD>::U / 2 : c1_cfg<BWD>::U; // x and r: half each
    const int ko = BWD ? NG_DX : NG_Y, kd = NG_DY; // the residual r sits in NG_DY's slot (eng_norm.c)
    const int64_t sx = j.inner.stride[NG_X][0], so = j.inner.stride[ko][0], sd = RD ? j.inner.stride[kd][0] : 0;
    const T *xp = static_cast<const T *>(j.t.p[NG_X]) + q0 * sx + c0;
    const T *dp = RD ? static_cast<const T *>(j.t.p[kd]) + q0 * sd + c0 : nullptr;
    T *op = static_cast<T *>(j.t.p[ko]) + q0 * so + c0;
    const int64_t first = R <= ty ? ty : ty + (R - ty + TY - 1) / TY * TY;
    int ng = first < nrow ? (int)(((nrow - first + TY - 1) / TY + U - 1) / U) : 0; // groups of U rows
    int64_t rg = first, step = (int64_t)U * TY; // the group's first row
    if (j.cl_l2 && ng > 0) // top down
        rg += (ng - 1) * step, step = -step;
    for (; ng > 0; ng--, rg += step) {
        vec_t<T, V> x[U], d[U];
        c1_ld_rows<T, V, U, RD>(xp, sx, dp, sd, rg, TY, nrow, x, d, cl_policy(j.cl_l2 != 0));
#pragma unroll
        for (int u = 0; u < U; u++) {
            int64_t rr = rg + (int64_t)u * TY;
            if (rr < nrow)
                c1_out<T, V, BWD, ACT, RD>(j, x[u], d[u], k0, k1, k2, k3, op + rr * so, cl_policy(j.cl_l2 != 0));
        }
    }
    const int64_t held = R < nrow ? R : nrow;
#pragma unroll 4
    for (int64_t r = ty; r < held; r += TY) {
        vec_t<T, V> x = xs[r * TX + tx], d;
        if (BWD)
            d = ds[r * TX + tx];
        else if (RD)
            d = cl_ldp<T, V>(dp, r * sd, cl_policy(j.cl_l2 != 0));
        c1_out<T, V, BWD, ACT, RD>(j, x, d, k0, k1, k2, k3, op + r * so, cl_policy(j.cl_l2 != 0));
    }
}

// R: the rows of its split a block holds in shared memory (the launcher's).
template <typename T, int V, bool BWD, int ACT>
__global__ void __launch_bounds__(C1_THREADS, 1) k_cl1(const ng_job j, int64_t R)
{
    constexpr int U = c1_cfg<BWD>::U, MODE = BWD ? NGR_BWD : NGR_WELFORD, H = C1_THREADS / 2;
    using vec = vec_t<T, V>;
    extern __shared__ float4 c1_smem[];
    float *s_a = reinterpret_cast<float *>(c1_smem), *s_b = s_a + H * V, *s_n = s_b + H * V;
    vec *xs = reinterpret_cast<vec *>(s_n + H); // c1_fixed_bytes: a multiple of 1 KiB
    const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
    vec *ds = xs + R * TX;
    const int64_t C = j.O, c0 = ((int64_t)blockIdx.x * TX + tx) * V;
    const bool live = c0 < C; // V > 1 only when V divides C: the whole vector is in range
    int64_t q0, q1;
    cl_rows(j, blockIdx.y, q0, q1);
    const int64_t nrow = q1 > q0 ? q1 - q0 : 0;
    const int64_t sx = j.inner.stride[NG_X][0], sd = BWD ? j.inner.stride[NG_DY][0] : 0;

    // ---- pass 1: load once, hold the first R rows, per-thread sums
    float a[V], b[V], sh[V], m[V], iv[V];
#pragma unroll
    for (int k = 0; k < V; k++)
        a[k] = b[k] = sh[k] = m[k] = 0.f, iv[k] = 1.f;
    if (live) {
        const T *xp = static_cast<const T *>(j.t.p[NG_X]) + q0 * sx + c0;
        const T *dp = BWD ? static_cast<const T *>(j.t.p[NG_DY]) + q0 * sd + c0 : nullptr;
        if (BWD) {
#pragma unroll
            for (int k = 0; k < V; k++) {
                m[k] = cl_chan(j, NG_MEAN, c0 + k, 0.f);
                iv[k] = cl_chan(j, NG_INV, c0 + k, 1.f);
            }
        } else if (ty < nrow) {
            cl_load<T, V>(xp, ty * sx, sh); // the shift: the thread's first value
        }
        // the held rows' lines are dead once loaded: evict-first (ng_job.cl_l2), the rest normal
        for (int64_t r = ty; r < nrow; r += (int64_t)U * TY) {
            vec x[U], d[U];
            c1_ld_rows<T, V, U, BWD>(xp, sx, dp, sd, r, TY, nrow, x, d,
                                     cl_policy(j.cl_l2 && r + (int64_t)(U - 1) * TY < R));
#pragma unroll
            for (int u = 0; u < U; u++) {
                int64_t rr = r + (int64_t)u * TY;
                if (rr >= nrow)
                    break;
                if (rr < R) {
                    xs[rr * TX + tx] = x[u];
                    if (BWD)
                        ds[rr * TX + tx] = d[u];
                }
#pragma unroll
                for (int k = 0; k < V; k++)
                    cl_accum<BWD>(cl_f<T, true>(x[u].v[k]), BWD ? cl_f<T, true>(d[u].v[k]) : 0.f, m[k], iv[k], sh[k],
                                  a[k], b[k]);
            }
        }
    }
    // per thread: (count, mean, M2) of its rows, or the two sums; then the
    // block's thread rows merged by a fixed halving tree (ty + h into ty)
    float n = ty < nrow ? (float)((nrow - ty + TY - 1) / TY) : 0.f;
    if (!BWD) {
#pragma unroll
        for (int k = 0; k < V; k++) {
            float s1 = a[k];
            a[k] = n > 0.f ? sh[k] + s1 / n : 0.f;
            b[k] = n > 0.f ? fmaxf(b[k] - s1 * s1 / n, 0.f) : 0.f;
        }
    }
    for (int h = TY / 2; h >= 1; h >>= 1) {
        if (ty >= h && ty < 2 * h) {
            const int slot = (ty - h) * TX + tx;
#pragma unroll
            for (int k = 0; k < V; k++)
                s_a[k * H + slot] = a[k], s_b[k * H + slot] = b[k];
            s_n[slot] = n;
        }
        __syncthreads();
        if (ty < h) {
            const int slot = ty * TX + tx;
            const float n2 = s_n[slot];
#pragma unroll
            for (int k = 0; k < V; k++) {
                acc4 p = {{n, a[k], b[k], 0.f}}, q = {{n2, s_a[k * H + slot], s_b[k * H + slot], 0.f}};
                if (BWD) {
                    a[k] += q.v[1], b[k] += q.v[2];
                } else {
                    acc_merge<NGR_WELFORD>(p, q);
                    a[k] = p.v[1], b[k] = p.v[2];
                }
            }
            n += n2;
        }
        __syncthreads();
    }
    if (ty == 0 && live) {
#pragma unroll
        for (int k = 0; k < V; k++) {
            float4 w = BWD ? make_float4(0.f, 0.f, a[k], b[k]) : make_float4(n, a[k], b[k], 0.f);
            *reinterpret_cast<float4 *>(j.part + ((int64_t)blockIdx.y * C + c0 + k) * 4) = w;
        }
    }
    cg::grid_group grid = cg::this_grid();
    grid.sync();

    // ---- merge: a warp per channel over the splits, in a fixed order
    {
        const int t = ty * TX + tx, lane = t & 31;
        const int64_t nw = (int64_t)gridDim.x * gridDim.y * (C1_THREADS / 32);
        for (int64_t c = ((int64_t)blockIdx.y * gridDim.x + blockIdx.x) * (C1_THREADS / 32) + (t >> 5); c < C;
             c += nw) {
            acc4 s = cl_combine_splits<MODE>(j, c, lane, 32, j.nsplit);
            if (lane == 0)
                cl_fin_channel<MODE>(j, c, s);
        }
    }
    grid.sync();

    // ---- apply: per-channel constants (written by other blocks: through L2)
    if (!live)
        return;
    float k0[V], k1[V], k2[V], k3[V];
    const float fD = j.D;
#pragma unroll
    for (int k = 0; k < V; k++) {
        const int64_t c = c0 + k;
        const float s = cl_chan(j, NG_SC, c, 1.f);
        k3[k] = 0.f;
        if (BWD) { // dx = k1 dy + k2 (x - k0) + k3
            k0[k] = m[k];
            k1[k] = iv[k] * s;
            k2[k] = -iv[k] * iv[k] * __ldcg(j.b + c) / fD;
            k3[k] = -iv[k] * __ldcg(j.a + c) / fD;
        } else { // y = (x - k0) k1 + k2
            k0[k] = __ldcg(j.mean + c);
            k1[k] = __ldcg(j.inv + c) * s;
            k2[k] = cl_chan(j, NG_BI, c, 0.f);
        }
    }
    if (BWD)
        c1_apply<T, V, true, ACT, true>(j, q0, nrow, R, ty, TY, tx, TX, c0, xs, ds, k0, k1, k2, k3);
    else if (j.t.p[NG_DY])
        c1_apply<T, V, false, ACT, true>(j, q0, nrow, R, ty, TY, tx, TX, c0, xs, ds, k0, k1, k2, k3);
    else
        c1_apply<T, V, false, ACT, false>(j, q0, nrow, R, ty, TY, tx, TX, c0, xs, ds, k0, k1, k2, k3);
}

int c1_device_attr(cudaDeviceAttr a)
{
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess)
        return 0;
    return v;
}

// One launch of k_cl1<T, V, BWD, ACT>, or -1 when its grid cannot be resident at once.
template <typename T, int V, bool BWD, int ACT>
int c1_go(const ng_job *j, cudaStream_t s)
{
    void (*k)(ng_job, int64_t) = k_cl1<T, V, BWD, ACT>;
    const int sms = c1_device_attr(cudaDevAttrMultiProcessorCount);
    const size_t optin = (size_t)c1_device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    const cl_geo g = cl_geometry(j->O, V, C1_THREADS);
    if (sms <= 0 || (int)g.cblocks > sms)
        return -1;
    ng_job jj = *j;
    jj.nsplit = sms / (int)g.cblocks;
    jj.chunk = (j->Q + jj.nsplit - 1) / jj.nsplit;
    // the rows a block holds: what the shared memory takes, at most its split (and the test cap)
    const size_t fixed = c1_fixed_bytes(V), rowb = (size_t)g.tx * sizeof(vec_t<T, V>) * (BWD ? 2 : 1);
    int64_t R = optin > fixed ? (int64_t)((optin - fixed) / rowb) : 0;
    if (R > jj.chunk)
        R = jj.chunk;
    if (j->cl1_rows >= 0 && R > j->cl1_rows)
        R = j->cl1_rows;
    const size_t dyn = fixed + (size_t)R * rowb;
    static bool attr_set = false; // per instantiation: the opt-in once
    if (!attr_set) {
        if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)optin) != cudaSuccess) {
            cudaGetLastError();
            return -1;
        }
        attr_set = true;
    }
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, C1_THREADS, dyn) != cudaSuccess ||
        (int64_t)per_sm * sms < (int64_t)g.cblocks * jj.nsplit) {
        cudaGetLastError();
        return -1;
    }
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeCooperative;
    attr.val.cooperative = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(g.cblocks, (unsigned)jj.nsplit);
    cfg.blockDim = dim3((unsigned)g.tx, (unsigned)g.ty);
    cfg.dynamicSmemBytes = dyn;
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    cudaLaunchKernelEx(&cfg, k, jj, R);
    return (int)cudaGetLastError();
}

template <typename T>
int c1_typed(const ng_job *j, int apply_mode, cudaStream_t s)
{
    static const int fwd[] = {NG_X, NG_Y, NG_DY}, bwd[] = {NG_X, NG_DY, NG_DX};
    const bool back = apply_mode == NGA_BWD;
    const bool wide = cl_width<T>(j, back ? bwd : fwd, back ? 3 : j->t.p[NG_DY] ? 3 : 2) > 1;
    constexpr int VW = 16 / (int)sizeof(T);
    if (back)
        return wide ? c1_go<T, VW, true, NGACT_NONE>(j, s) : c1_go<T, 1, true, NGACT_NONE>(j, s);
    if (j->act == NGACT_RELU)
        return wide ? c1_go<T, VW, false, NGACT_RELU>(j, s) : c1_go<T, 1, false, NGACT_RELU>(j, s);
    if (j->act == NGACT_NONE)
        return wide ? c1_go<T, VW, false, NGACT_NONE>(j, s) : c1_go<T, 1, false, NGACT_NONE>(j, s);
    return -1; // other activations: norm_cl.cu's launches
}

} // namespace

extern "C" int ng_launch_cl1(const ng_job *j, int apply_mode, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (j->O <= 0 || j->Q <= 0 || j->join) /* a fused join makes dy in the three launches' reduce only */
        return -1;
    switch (j->t.dt[NG_X]) {
    case DT_F16: return c1_typed<__half>(j, apply_mode, s);
    case DT_BF16: return c1_typed<__nv_bfloat16>(j, apply_mode, s);
    default: return c1_typed<float>(j, apply_mode, s);
    }
}

// norm_cl_common.cuh — what the channels-last batchnorm kernels share
// (kernels/norm_cl.cu: reduce, finalize, apply as three launches;
// kernels/norm_cl1.cu: the same in one persistent launch): 16-byte channel
// vectors and their loads / stores, the block geometry over C, the rows of a
// split, the per-channel parameters, the combination of the splits'
// partials and what a finalize stores for a channel.
#ifndef XDNN_NORM_CL_COMMON_CUH
#define XDNN_NORM_CL_COMMON_CUH

#include "norm_common.cuh"

namespace {

template <typename T, int V>
struct __align__(sizeof(T) * V) vec_t {
    T v[V];
};

// Block shape for C channels in vectors of V: TX a power of two up to 32
// covering the vectors of one row, TY the rest of the block (256 threads).
struct cl_geo {
    int tx, ty;
    unsigned cblocks;
};

cl_geo cl_geometry(int64_t C, int V, int threads = NG_CL_THREADS)
{
    int64_t cv = (C + V - 1) / V;
    int tx = 1;
    while (tx < cv && tx < 32)
        tx <<= 1;
    cl_geo g = {tx, threads / tx, (unsigned)((cv + tx - 1) / tx)};
    return g;
}

__device__ __forceinline__ void cl_rows(const ng_job &j, int split, int64_t &q0, int64_t &q1)
{
    q0 = (int64_t)split * j.chunk;
    q1 = q0 + j.chunk < j.Q ? q0 + j.chunk : j.Q;
}

// loads stay packed (4 registers per 16 bytes) until each element is used
template <typename T, int V>
__device__ __forceinline__ vec_t<T, V> cl_ld(const void *p, int64_t off)
{
    return *reinterpret_cast<const vec_t<T, V> *>(static_cast<const T *>(p) + off);
}

template <typename T, int V>
__device__ __forceinline__ void cl_load(const void *p, int64_t off, float (&v)[V])
{
    vec_t<T, V> q = cl_ld<T, V>(p, off);
#pragma unroll
    for (int k = 0; k < V; k++)
        v[k] = to_f<T>(q.v[k]);
}

// v1 (LATE): a loaded element converted where it is used: for bf16 the
// compiler otherwise widens every loaded vector to f32 as soon as it lands
// (a shift), doubling the registers the vectors in flight hold (v1's
// 8-vector bf16 apply spilled ~150 bytes); the volatile asm keeps the
// conversions in program order between the volatile shared loads
template <typename T, bool LATE>
__device__ __forceinline__ float cl_f(T v)
{
    return to_f<T>(v);
}
template <>
__device__ __forceinline__ float cl_f<__nv_bfloat16, true>(__nv_bfloat16 v)
{
    float f;
    asm volatile("{ .reg .b32 t; mov.b32 t, {0, %1}; mov.b32 %0, t; }" : "=f"(f) : "h"(__bfloat16_as_ushort(v)));
    return f;
}

// programmatic dependent launch (sm_90; no-ops on a plain launch)
__device__ __forceinline__ void cl_let_next_start()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::);
#endif
}
__device__ __forceinline__ void cl_wait_prev()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// a float4 of per-channel constants from shared memory, volatile so that the
// compiler reloads it at each use instead of hoisting it out of the row loop
// into registers (which is what v1 keeps them in shared memory to avoid)
__device__ __forceinline__ float4 cl_lds4(const float4 *p)
{
    float4 v;
    unsigned a = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a));
    return v;
}

template <typename T, int V>
__device__ __forceinline__ void cl_store(void *p, int64_t off, const float (&v)[V])
{
    vec_t<T, V> q;
#pragma unroll
    for (int k = 0; k < V; k++)
        q.v[k] = from_f<T>(v[k]);
    *reinterpret_cast<vec_t<T, V> *>(static_cast<T *>(p) + off) = q;
}

// A per-channel tensor (scale, bias, saved statistics) at channel c through
// its channel stride; dflt when absent.
__device__ __forceinline__ float cl_chan(const ng_job &j, int k, int64_t c, float dflt)
{
    return j.t.p[k] ? ldf(j.t.p[k], c * j.outer.stride[k][0], j.t.dt[k]) : dflt;
}

// One element into a thread's two sums: backward sum dy and sum dy xhat
// (xhat = (x - m) iv), forward x - shift and its square.
template <bool BWD>
__device__ __forceinline__ void cl_accum(float xv, float dv, float m, float iv, float shift, float &a, float &b)
{
    if (BWD) {
        a += dv;
        b += dv * ((xv - m) * iv);
    } else {
        float d = xv - shift;
        a += d;
        b += d * d;
    }
}

// Combine the splits' partials part[s][c] (s = first, first + step, ...
// below nsplit, four loads in flight) in that order, then a fixed xor tree
// over the warp: every lane ends with the channel's total (deterministic).
// The partials may come from other blocks of the same grid (norm_cl1.cu):
// loaded through L2 (ld.cg), never from a stale L1 line.
template <int MODE>
__device__ __forceinline__ acc4 cl_combine_splits(const ng_job &j, int64_t c, int first, int step, int nsplit)
{
    acc4 a = {{0.f, 0.f, 0.f, 0.f}};
#pragma unroll 4
    for (int s = first; s < nsplit; s += step) {
        float4 p = __ldcg(reinterpret_cast<const float4 *>(j.part + ((int64_t)s * j.O + c) * 4));
        acc4 b = {{p.x, p.y, p.z, p.w}};
        acc_merge<MODE>(a, b);
    }
    for (int m = 1; m < 32; m <<= 1)
        acc_shfl<MODE>(a, m);
    return a;
}

// What the finalize stores for channel c from its combined partials a (one
// thread): fin_store's mean / inv (+ running statistics), or for the
// backward sum g, sum g xhat (g = dy * scale, one scale per channel) and
// dscale / dbias.
template <int MODE>
__device__ __forceinline__ void cl_fin_channel(const ng_job &j, int64_t c, acc4 a)
{
    constexpr unsigned M = OPBIT(NG_ROW) | OPBIT(NG_MEAN) | OPBIT(NG_INV) | OPBIT(NG_RM) | OPBIT(NG_RV) |
                           OPBIT(NG_RMO) | OPBIT(NG_RVO) | OPBIT(NG_DSC) | OPBIT(NG_DBI);
    int64_t off[NG_NOPS];
    decomp<M, int64_t>(j.outer, c, off);
    if (MODE == NGR_BWD) {
        float sc = cl_chan(j, NG_SC, c, 1.f);
        a.v[0] = sc * a.v[2];
        a.v[1] = sc * a.v[3];
    }
    fin_store<MODE>(j, off, a);
}

// V: 16 bytes of channels when C, every row stride and every base pointer
// allow it, else 1.
template <typename T>
int cl_width(const ng_job *j, const int *ops, int nops)
{
    const int V = 16 / (int)sizeof(T);
    bool ok = j->O % V == 0;
    for (int q = 0; q < nops && ok; q++)
        ok = j->inner.stride[ops[q]][0] % V == 0 && (uintptr_t)j->t.p[ops[q]] % 16 == 0;
    return ok ? V : 1;
}

// a launch of k(j), as a programmatic dependent launch when pdl (Hopper up)
void cl_go(void (*k)(ng_job), dim3 grid, dim3 block, cudaStream_t s, bool pdl, const ng_job &j)
{
    int dev = 0, cc = 0;
    if (pdl && cudaGetDevice(&dev) == cudaSuccess)
        cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, dev);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = pdl && cc >= 9 ? 1 : 0;
    cudaLaunchKernelEx(&cfg, k, j);
}

} // namespace

#endif

/* conv_dw_wgrad.cu — depthwise (groups == C == K) weight gradient,
 * channels-last, f16 / bf16 / f32 (the conv_dw engine on a conv_wgrad).
 *
 *   dw[c, t, r, s] = sum over (n, o, p, q) of dy[n, o, p, q, c] *
 *                    x[n, o*sd - pd + t*dd, p*sh - ph + r*dh, q*sw - pw + s*dw, c]
 *
 * taps multiply-adds per element read: bound by memory, like the forward.
 *   block   (CVB, 128/CVB) threads: x walks channel vectors of V = 4 channels
 *           (8-byte loads of halves, 16-byte of floats; V = 1 when C or a
 *           stride is not a multiple of 4), y walks output strips;
 *   grid    (tap groups, strip chunks, channel slices): the tap groups of one
 *           chunk are launched side by side, so they share dy and x in L2;
 *   v1 (generic, S_ = 0): one tap per tap group, one output per strip: any
 *           window, stride, dilation, 1-3-D;
 *   v2 (S_ = 3, 5, 7 compile-time, dilation 1 along W, stride SW_ = 1 or 2
 *           along W): a strip of QT outputs along W (8 at stride 1, 4 at 2);
 *           its dy vectors are loaded once, and per tap row the x window of
 *           (QT-1)*SW_ + S_ columns, reused by the strip's QT x S_ products;
 *           RB tap rows per thread (all 3 of a 3x3 window: dy is then read
 *           once; one row of the larger windows, whose sums would not fit
 *           in registers), acc[RB][S_][V] in f32.
 * Partials: every block sums its threads' accumulators in shared memory in a
 * fixed order and writes its row ws[chunk][tap][c] (coalesced along c: a
 * [tap][c][chunk] layout made every store its own 32-byte sector, ~20 MB
 * of writes on a 58 MB problem); kdww_reduce sums the chunks of 32
 * consecutive (tap, c) per block, 32 chunk lanes each in order, then the
 * lanes in order through shared memory, and stores dw in its type and
 * strides.  Deterministic, no atomics.
 * Chunks: one wave of blocks (the kernel's occupancy times the SMs, over
 * the tap groups and channel slices), capped by the workspace the engine
 * sized from the problem alone (kconv_dw_wgrad_ws_bytes: at most 8 blocks
 * per SM). */
#include "kern_common.cuh"

namespace {

constexpr int NT = 128; /* threads per block; at most 128 registers (4 blocks per SM, no spills) */

struct dwwg {
    int N, C, cv;
    int D[3], O[3];                    /* x and dy spatial sizes */
    int win[3], st[3], dil[3], pad[3];
    int64_t sx[5], sy[5], sw[5];
    int dt_w;
    int nq, qt;                        /* strips along W, outputs per strip */
    int tg, rb;                        /* tap groups (grid x), tap rows per group (v2) */
    int64_t strips;                    /* N * O0 * O1 * nq */
    int chunks, chunks_ws, spt;        /* chunks launched, chunks in the ws layout, strips per thread */
    int S;                             /* v2 window width (0: v1) */
};

__device__ __forceinline__ float tof(float v) { return v; }
__device__ __forceinline__ float tof(__half v) { return __half2float(v); }
__device__ __forceinline__ float tof(__nv_bfloat16 v) { return __bfloat162float(v); }

/* V elements at p (8 bytes of halves or 16 of floats when V = 4). */
template <typename T, int V> __device__ __forceinline__ void ldv(const T *p, float *f)
{
    if constexpr (V == 1) {
        f[0] = tof(p[0]);
    } else if constexpr (sizeof(T) == 2) {
        const uint2 u = __ldg(reinterpret_cast<const uint2 *>(p));
        const T *h = reinterpret_cast<const T *>(&u);
#pragma unroll
        for (int i = 0; i < 4; i++)
            f[i] = tof(h[i]);
    } else {
        const float4 u = __ldg(reinterpret_cast<const float4 *>(p));
        f[0] = u.x, f[1] = u.y, f[2] = u.z, f[3] = u.w;
    }
}

/* ldv, or zeros where the position falls in the padding or past the edge. */
template <typename T, int V> __device__ __forceinline__ void ldv_in(bool in, const T *p, float *f)
{
    if (in)
        return ldv<T, V>(p, f);
#pragma unroll
    for (int i = 0; i < V; i++)
        f[i] = 0.f;
}

template <typename T, int V, int S_, int SW_, int RB>
__global__ void __launch_bounds__(NT, 4) kdww_kernel(const dwwg g, const T *__restrict__ x, const T *__restrict__ dy,
                                                     float *__restrict__ ws)
{
    constexpr int QT = S_ == 0 ? 1 : SW_ == 1 ? 8 : 4;
    constexpr int NS = S_ == 0 ? 1 : S_;
    constexpr int SPAN = S_ == 0 ? 1 : (QT - 1) * SW_ + S_;
    constexpr int E = RB * NS * V; /* sums per thread */
    extern __shared__ float red[]; /* [ty][E][tx] */
    const int CVB = blockDim.x, RY = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int cv = blockIdx.z * CVB + tx, tg = blockIdx.x;
    float acc[RB][NS][V];
#pragma unroll
    for (int a = 0; a < RB; a++)
#pragma unroll
        for (int b = 0; b < NS; b++)
#pragma unroll
            for (int i = 0; i < V; i++)
                acc[a][b][i] = 0.f;
    /* v1: the group's one tap */
    const int taps12 = g.win[1] * g.win[2];
    const int v1t0 = tg / taps12, v1t1 = (tg / g.win[2]) % g.win[1], v1t2 = tg % g.win[2];
    if (cv < g.cv) {
        const int c0 = cv * V;
        for (int k = 0; k < g.spt; k++) {
            /* neighbouring ty take neighbouring strips: their x windows overlap in L1 */
            const int64_t strip = ((int64_t)blockIdx.y * g.spt + k) * RY + ty;
            if (strip >= g.strips)
                break;
            const int qs = (int)(strip % g.nq);
            int64_t rest = strip / g.nq;
            const int p = (int)(rest % g.O[1]);
            rest /= g.O[1];
            const int o = (int)(rest % g.O[0]), n = (int)(rest / g.O[0]);
            const int q0 = qs * QT;
            const T *dyp = dy + n * g.sy[0] + o * g.sy[2] + p * g.sy[3] + c0;
            const T *xn = x + n * g.sx[0] + c0;
            if constexpr (S_ == 0) {
                const int i0 = o * g.st[0] - g.pad[0] + v1t0 * g.dil[0];
                const int i1 = p * g.st[1] - g.pad[1] + v1t1 * g.dil[1];
                const int i2 = q0 * g.st[2] - g.pad[2] + v1t2 * g.dil[2];
                if ((unsigned)i0 < (unsigned)g.D[0] && (unsigned)i1 < (unsigned)g.D[1] &&
                    (unsigned)i2 < (unsigned)g.D[2]) {
                    float dv[V], xv[V];
                    ldv<T, V>(dyp + q0 * g.sy[4], dv);
                    ldv<T, V>(xn + i0 * g.sx[2] + i1 * g.sx[3] + i2 * g.sx[4], xv);
#pragma unroll
                    for (int i = 0; i < V; i++)
                        acc[0][0][i] = fmaf(dv[i], xv[i], acc[0][0][i]);
                }
            } else {
                float dv[QT][V];
#pragma unroll
                for (int j = 0; j < QT; j++)
                    ldv_in<T, V>(q0 + j < g.O[2], dyp + (q0 + j) * g.sy[4], dv[j]);
                const int iw0 = q0 * SW_ - g.pad[2];
#pragma unroll
                for (int rb = 0; rb < RB; rb++) {
                    const int tr = tg * RB + rb, t0 = tr / g.win[1], t1 = tr % g.win[1];
                    const int i0 = o * g.st[0] - g.pad[0] + t0 * g.dil[0];
                    const int i1 = p * g.st[1] - g.pad[1] + t1 * g.dil[1];
                    if ((unsigned)i0 >= (unsigned)g.D[0] || (unsigned)i1 >= (unsigned)g.D[1])
                        continue;
                    const T *rowp = xn + i0 * g.sx[2] + i1 * g.sx[3];
                    float xw[SPAN][V];
#pragma unroll
                    for (int c = 0; c < SPAN; c++)
                        ldv_in<T, V>((unsigned)(iw0 + c) < (unsigned)g.D[2], rowp + (iw0 + c) * g.sx[4], xw[c]);
#pragma unroll
                    for (int j = 0; j < QT; j++)
#pragma unroll
                        for (int s = 0; s < S_; s++)
#pragma unroll
                            for (int i = 0; i < V; i++)
                                acc[rb][s][i] = fmaf(dv[j][i], xw[j * SW_ + s][i], acc[rb][s][i]);
                }
            }
        }
    }
    /* the block's sums over ty, in ty order */
#pragma unroll
    for (int a = 0; a < RB; a++)
#pragma unroll
        for (int b = 0; b < NS; b++)
#pragma unroll
            for (int i = 0; i < V; i++)
                red[(ty * E + (a * NS + b) * V + i) * CVB + tx] = acc[a][b][i];
    __syncthreads();
    for (int idx = ty * CVB + tx; idx < E * CVB; idx += CVB * RY) {
        const int e = idx / CVB, t = idx % CVB;
        const int c = (blockIdx.z * CVB + t) * V + e % V;
        if (c >= g.C || blockIdx.z * CVB + t >= g.cv)
            continue;
        float v = 0.f;
        for (int y = 0; y < RY; y++)
            v += red[(y * E + e) * CVB + t];
        const int rb = e / V / NS, s = e / V % NS;
        const int tap = S_ == 0 ? tg : (tg * RB + rb) * S_ + s; /* [T][R][S] order */
        ws[((int64_t)blockIdx.y * g.win[0] * g.win[1] * g.win[2] + tap) * g.C + c] = v;
    }
}

/* dw[c, tap] = the sum over the chunks of ws[chunk][tap][c]: block (32, 32),
 * x = 32 consecutive columns (tap * C + c), y = chunk lanes summing the
 * chunks y, y + 32, ... in order, then the 32 lane sums in order. */
__global__ void __launch_bounds__(1024) kdww_reduce(const dwwg g, const float *__restrict__ ws, void *__restrict__ dw)
{
    __shared__ float part[32][33];
    const int taps = g.win[0] * g.win[1] * g.win[2];
    const int64_t cols = (int64_t)taps * g.C, col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    float v = 0.f;
    if (col < cols) {
#pragma unroll 4
        for (int k = threadIdx.y; k < g.chunks; k += 32)
            v += ws[(int64_t)k * cols + col];
    }
    part[threadIdx.y][threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.y != 0 || col >= cols)
        return;
    float t = 0.f;
    for (int y = 0; y < 32; y++)
        t += part[y][threadIdx.x];
    const int tap = (int)(col / g.C), c = (int)(col % g.C);
    const int t0 = tap / (g.win[1] * g.win[2]), t1 = (tap / g.win[2]) % g.win[1], t2 = tap % g.win[2];
    kst(dw, g.dt_w, c * g.sw[0] + t0 * g.sw[2] + t1 * g.sw[3] + t2 * g.sw[4], t);
}

/* The plan from the problem alone (the workspace is sized from it). */
void plan(const kconv_params *p, int sms, dwwg &g)
{
    g.N = (int)p->N;
    g.C = (int)p->C;
    g.dt_w = p->dt_w;
    for (int d = 0; d < KCONV_SP; d++) {
        g.D[d] = (int)p->in[d];
        g.O[d] = (int)p->out[d];
        g.win[d] = (int)p->win[d];
        g.st[d] = (int)p->stride[d];
        g.dil[d] = (int)p->dil[d];
        g.pad[d] = (int)p->pad[d];
    }
    for (int i = 0; i < 5; i++) {
        g.sx[i] = p->sx[i];
        g.sy[i] = p->sy[i];
        g.sw[i] = p->sw[i];
    }
    const int S = g.win[2], taps = g.win[0] * g.win[1] * S, tr = g.win[0] * g.win[1];
    const bool v2 = g.dil[2] == 1 && (S == 3 || S == 5 || S == 7) && (g.st[2] == 1 || g.st[2] == 2);
    g.S = v2 ? S : 0;
    g.qt = !v2 ? 1 : g.st[2] == 1 ? 8 : 4;
    g.rb = v2 && S == 3 && tr == 3 ? 3 : 1;
    g.tg = v2 ? tr / g.rb : taps;
    g.nq = (g.O[2] + g.qt - 1) / g.qt;
    g.strips = (int64_t)g.N * g.O[0] * g.O[1] * g.nq;
    /* the workspace's cap: 8 blocks per SM over the tap groups, every chunk at least 8 strips long */
    int64_t ch = (8 * (int64_t)(sms > 0 ? sms : 132) + g.tg - 1) / g.tg, most = g.strips / 8;
    if (ch > most)
        ch = most;
    if (ch > 4096)
        ch = 4096;
    g.chunks_ws = ch < 1 ? 1 : (int)ch;
}

template <typename T, int V, int S_, int SW_, int RB>
int launch(dwwg g, const void *x, const void *dy, float *ws, void *dw, int sms, cudaStream_t s)
{
    constexpr int E = RB * (S_ == 0 ? 1 : S_) * V;
    g.cv = g.C / V;
    /* channel vectors in equal slices of at most 32 */
    const int slices = (g.cv + 31) / 32, cvb = (g.cv + slices - 1) / slices, ry = NT / cvb;
    const size_t smem = (size_t)E * cvb * ry * sizeof(float);
    /* one wave: as many chunks as the SMs hold blocks, over the tap groups and slices */
    static int occ = 0; /* per instantiation, the same for every launch */
    if (!occ && cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kdww_kernel<T, V, S_, SW_, RB>, NT,
                                                              (size_t)E * NT * sizeof(float)) != cudaSuccess)
        return (int)cudaGetLastError();
    int64_t want = (int64_t)(occ > 0 ? occ : 1) * (sms > 0 ? sms : 132) / ((int64_t)g.tg * slices);
    want = want < 1 ? 1 : want > g.chunks_ws ? g.chunks_ws : want;
    g.spt = (int)((g.strips + want * ry - 1) / (want * ry));
    g.chunks = (int)((g.strips + (int64_t)g.spt * ry - 1) / ((int64_t)g.spt * ry));
    dim3 grid((unsigned)g.tg, (unsigned)g.chunks, (unsigned)slices);
    kdww_kernel<T, V, S_, SW_, RB><<<grid, dim3(cvb, ry), smem, s>>>(g, static_cast<const T *>(x),
                                                                      static_cast<const T *>(dy), ws);
    const int64_t cols = (int64_t)g.win[0] * g.win[1] * g.win[2] * g.C;
    kdww_reduce<<<(unsigned)((cols + 31) / 32), dim3(32, 32), 0, s>>>(g, ws, dw);
    return (int)cudaGetLastError();
}

template <typename T, int V>
int launch_v(const dwwg &g, const void *x, const void *dy, float *ws, void *dw, int sms, cudaStream_t s)
{
    if (g.S == 3 && g.rb == 3) return g.st[2] == 1 ? launch<T, V, 3, 1, 3>(g, x, dy, ws, dw, sms, s)
                                                   : launch<T, V, 3, 2, 3>(g, x, dy, ws, dw, sms, s);
    if (g.S == 3) return g.st[2] == 1 ? launch<T, V, 3, 1, 1>(g, x, dy, ws, dw, sms, s) : launch<T, V, 3, 2, 1>(g, x, dy, ws, dw, sms, s);
    if (g.S == 5) return g.st[2] == 1 ? launch<T, V, 5, 1, 1>(g, x, dy, ws, dw, sms, s) : launch<T, V, 5, 2, 1>(g, x, dy, ws, dw, sms, s);
    if (g.S == 7) return g.st[2] == 1 ? launch<T, V, 7, 1, 1>(g, x, dy, ws, dw, sms, s) : launch<T, V, 7, 2, 1>(g, x, dy, ws, dw, sms, s);
    return launch<T, V, 0, 0, 1>(g, x, dy, ws, dw, sms, s);
}

template <typename T>
int launch_t(const dwwg &g, const void *x, const void *dy, float *ws, void *dw, int sms, cudaStream_t s)
{
    const unsigned align = 4 * sizeof(T);
    bool vec = g.C % 4 == 0 && (uintptr_t)x % align == 0 && (uintptr_t)dy % align == 0;
    for (int i = 0; i < 5; i++)
        vec = vec && (i == 1 || (g.sx[i] % 4 == 0 && g.sy[i] % 4 == 0));
    return vec ? launch_v<T, 4>(g, x, dy, ws, dw, sms, s) : launch_v<T, 1>(g, x, dy, ws, dw, sms, s);
}

} /* namespace */

extern "C" size_t kconv_dw_wgrad_ws_bytes(const kconv_params *p, int sm_count)
{
    dwwg g;
    plan(p, sm_count, g);
    const size_t bytes = (size_t)(p->win[0] * p->win[1] * p->win[2]) * (size_t)p->C * (size_t)g.chunks_ws * 4;
    return (bytes + 255) / 256 * 256;
}

extern "C" int kconv_dw_wgrad(const kconv_params *p, const void *x, void *dw, const void *dy, float *ws,
                              size_t ws_bytes, int sm_count, void *stream)
{
    dwwg g;
    plan(p, sm_count, g);
    /* a workspace sized for another SM count (a plan loaded elsewhere): fewer chunks, never past its end */
    const size_t row = (size_t)(p->win[0] * p->win[1] * p->win[2]) * (size_t)p->C * 4;
    if (ws_bytes < row)
        return (int)cudaErrorInvalidValue;
    if ((size_t)g.chunks_ws * row > ws_bytes)
        g.chunks_ws = (int)(ws_bytes / row);
    cudaStream_t s = (cudaStream_t)stream;
    switch (p->dt_x) {
    case KDT_F16: return launch_t<__half>(g, x, dy, ws, dw, sm_count, s);
    case KDT_BF16: return launch_t<__nv_bfloat16>(g, x, dy, ws, dw, sm_count, s);
    default: return launch_t<float>(g, x, dy, ws, dw, sm_count, s);
    }
}

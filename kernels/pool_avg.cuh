/* pool_avg.cuh — v5 of pool.cu: average pooling of 3x3 stride-2 windows (ResNet's pooling; kp_is_3x3s2, int32
 * offsets, channels in whole 16-byte chunks), forward and backward.  Included by pool.cu after the helpers and the
 * walks it reuses (kp_ix, kp_fast, kp_split_chunk, kp_taps3, kpool_roll3x3s2, kpw_blocks).
 * XDNN_POOL_AVG_WALK=0 keeps v3 for both directions (KpRollAvg; kpool_bwd_vec's 2 x 2 gather).
 *  forward: kpool_roll3x3s2 (v3's walk: 2 output rows a thread, each input row's 3 taps reduced once, the shared
 *     row carried) with the policy KpRollAvgLean: the taps outside x arrive as zeros from kp_roll_load and are
 *     summed without a test; the divisor is kp_taps3's two int32 counts and one reciprocal a window.  v3 (64
 *     registers, 4 blocks of 256 per SM: 66 % of copy) ran kp_divisor's 64-bit loops over 3 dims and 8 IEEE
 *     divisions per 16-byte output chunk, about as many instructions as its sums.
 *  backward: kpool_avg_bwd_walk, a thread per 2 x 2 block of input pixels (padded rows 2b + 1, 2b + 2, columns
 *     2q + 1, 2q + 2: v4's blocks, kpw_blocks) and 16 bytes of channels, walking down S blocks.  The windows over
 *     the block are (b, q), (b, q + 1) for its upper row and those and (b + 1, q), (b + 1, q + 1) for its lower row
 *     (columns alike), so each step reads window row b + 1's two dy chunks, scales them by their divisors' f32
 *     reciprocals and writes the block's 4 dx chunks from them and window row b's, carried from the step before:
 *     dy read (S + 1) / S times from L2 (the chunk shared with the neighbouring block column an L1 hit of the
 *     neighbouring warp), dx written once with 16-byte stores, x never read; 56 registers, 4 blocks of 256 per SM
 *     (at 5, 48 registers spilled 16 bytes; with the walk unrolled the loads ran ahead but spilled at 64).  v3's
 *     gather read 2.25 dy chunks per pixel and divided per tap (51 % of copy).
 * Rounding: sums in f32 over the reference's windows (reference: double); a share is dy * (1 / divisor), within an
 * ulp of f32 of dy / divisor. */

/* Forward policy of kpool_roll3x3s2 (the walk's interface: row reduces an input row's 3 taps, take merges the
 * window's rows in order, store writes y). */
template <typename T> struct KpRollAvgLean {
    /* blocks of 256 per SM: 48 registers (6: 40, spilling 80 bytes; XDNN_POOL_ROLL_ROWS=4 spills 20 at 5) */
    enum { V = 16 / sizeof(T), kMinBlocks = 5 };
    struct acc { float v[V]; };
    static __device__ __forceinline__ bool row(const T *xr, bool row_ok, const int (&cols)[3], const bool (&ok)[3],
                                               int sxw, acc &a)
    {
        union chunk { uint4 q; T e[V]; } t[3];
        uint4 raw[3];
        const bool any = kp_roll_load<T>(xr, row_ok, cols, ok, sxw, raw); /* zeros outside x */
#pragma unroll
        for (int q = 0; q < 3; q++)
            t[q].q = raw[q];
#pragma unroll
        for (int k = 0; k < V; k++)
            a.v[k] = kp_f<T>(t[0].e[k]) + kp_f<T>(t[1].e[k]) + kp_f<T>(t[2].e[k]);
        return any;
    }
    /* a row outside x is all zeros: every row is added, `have` is kept for the walk's interface only */
    static __device__ __forceinline__ void take(acc &a, bool &have, const acc &r, bool h, int first)
    {
#pragma unroll
        for (int k = 0; k < V; k++)
            a.v[k] = first ? a.v[k] + r.v[k] : r.v[k];
        have |= h;
    }
    /* the divisor of window (oh, ow) (kp_divisor); one without a counted tap has no tap in x either: its sum is 0 */
    static __device__ __forceinline__ void store(const kpool_params &p, T *y, uint8_t *w8, int y_off, int op, int c,
                                                 int oh, int ow, const acc &a, bool have)
    {
        const int d = kp_taps3(p, 1, oh) * kp_taps3(p, 2, ow);
        const float inv = d > 0 ? 1.f / (float)d : 0.f;
        union { uint4 q; T e[V]; } out;
#pragma unroll
        for (int k = 0; k < V; k++) /* + 0: a window of -0 taps gives +0, as the reference's sum from 0 */
            out.e[k] = kp_t<T>(a.v[k] * inv + 0.f);
        *reinterpret_cast<uint4 *>(y + y_off) = out.q;
    }
};

/* Window row o's shares over a block column q of the backward: w_l = dy(o, q) / divisor, w_r the same of (o, q + 1);
 * 0 for a window outside dy or without a counted tap (its dy is not read: a NaN there reaches no pixel, as in the
 * reference).  Kept as s0 = w_l (the block's left column's share) and s1 = w_l + w_r (its right column's). */
template <typename T> struct kpa_shares {
    enum { V = 16 / sizeof(T) };
    float s0[V], s1[V];
    /* dyr: dy(o, q); tw_l, tw_r: the column taps of windows q, q + 1 (kp_taps3), 0 outside dy */
    __device__ __forceinline__ kpa_shares(const kpool_params &p, const T *__restrict__ dyr, int o, int OH, int syw,
                                          int tw_l, int tw_r)
    {
        const int th = o >= 0 && o < OH ? kp_taps3(p, 1, o) : 0, dl = th * tw_l, dr = th * tw_r;
        union chunk { uint4 q; T e[V]; } l, r;
        const uint4 zero = make_uint4(0, 0, 0, 0);
        l.q = dl > 0 ? *reinterpret_cast<const uint4 *>(dyr) : zero;
        r.q = dr > 0 ? *reinterpret_cast<const uint4 *>(dyr + syw) : zero;
        const float il = dl > 0 ? 1.f / (float)dl : 0.f, ir = dr > 0 ? 1.f / (float)dr : 0.f;
#pragma unroll
        for (int k = 0; k < V; k++) {
            s0[k] = kp_f<T>(l.e[k]) * il;
            s1[k] = s0[k] + kp_f<T>(r.e[k]) * ir;
        }
    }
};

/* One dx chunk: a (+ b with kTwo), stored when the pixel is inside x. */
template <typename T, bool kTwo, int V>
static __device__ __forceinline__ void kpa_store(T *dst, const float (&a)[V], const float (&b)[V], bool ok)
{
    union { uint4 q; T e[V]; } out;
#pragma unroll
    for (int k = 0; k < V; k++)
        out.e[k] = kp_t<T>((kTwo ? a[k] + b[k] : a[k]) + 0.f); /* -0 shares give +0, as the reference's 0 + ... */
    if (ok)
        *reinterpret_cast<uint4 *>(dst) = out.q;
}

template <typename T>
__global__ void __launch_bounds__(KP_THREADS, 4)
    kpool_avg_bwd_walk(kpool_params p, const kp_fast f, int S, const T *__restrict__ dy, T *__restrict__ dx)
{
    const kp_ix<int32_t, true> g(p);
    constexpr int V = 16 / sizeof(T);
    const kpw_walk w(g, V, S);
    const int H = w.H, W = w.W, OH = w.OH, OW = w.OW, ph = w.ph, pw = w.pw;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < w.total; t += (int64_t)gridDim.x * blockDim.x) {
        int32_t c;
        int q, b0, b_end;
        const int32_t n = w.item(t, f, V, S, c, q, b0, b_end);
        const int j = 2 * q + 1 - pw; /* input column of the block's left pixels */
        const bool ok_l = j >= 0 && j < W, ok_r = j + 1 >= 0 && j + 1 < W;
        const int tw_l = q >= 0 && q < OW ? kp_taps3(p, 2, q) : 0;
        const int tw_r = q + 1 >= 0 && q + 1 < OW ? kp_taps3(p, 2, q + 1) : 0;
        const T *dyb = dy + n * g.sy[0] + c + q * g.sy[4];
        T *dxb = dx + n * g.sdx[0] + c + j * g.sdx[4];
        kpa_shares<T> cur(p, dyb + b0 * g.sy[3], b0, OH, g.sy[4], tw_l, tw_r); /* window row b */
#pragma unroll 1
        for (int b = b0; b < b_end; b++) {
            const kpa_shares<T> nxt(p, dyb + (b + 1) * g.sy[3], b + 1, OH, g.sy[4], tw_l, tw_r);
            const int i = 2 * b + 1 - ph; /* input row of the block's upper pixels */
            const bool up = i >= 0 && i < H, down = i + 1 >= 0 && i + 1 < H;
            T *d0 = dxb + i * g.sdx[3], *d1 = d0 + g.sdx[3];
            kpa_store<T, false>(d0, cur.s0, cur.s0, up && ok_l);
            kpa_store<T, false>(d0 + g.sdx[4], cur.s1, cur.s1, up && ok_r);
            kpa_store<T, true>(d1, cur.s0, nxt.s0, down && ok_l);
            kpa_store<T, true>(d1 + g.sdx[4], cur.s1, nxt.s1, down && ok_r);
            cur = nxt;
        }
    }
}

/* v5's switch, read once: 0 keeps v3 for both directions; 4 or 8: blocks walked per thread of the backward (A/B:
 * fewer threads against dy rows read twice), 2 otherwise (H100, three runs: 2 blocks 0.051-0.054 ms on both
 * ResNet rows, 4 blocks 0.054-0.057, 8 blocks 0.057-0.059; bench/RESULTS-norm.md, session 16). */
static int kp_avg_walk_blocks(void)
{
    static const char *const e = getenv("XDNN_POOL_AVG_WALK");
    if (!e)
        return 2;
    const int v = atoi(e);
    return strcmp(e, "0") == 0 ? 0 : v == 4 || v == 8 ? v : 2;
}

/* Does v5 take the call?  avgpool, 3x3 stride-2 windows in int32, x and y (dy) of one dtype in whole chunks and,
 * backward, dx too (kp_vec_ok without the buffers: their alignment is the launchers' callers' to check). */
static bool kp_avg_walk_ok(const kpool_params *p, bool bwd)
{
    const int64_t V = p->dt_x == KDT_F32 ? 4 : 8;
    kpool_params q = *p;
    memcpy(q.sy, p->sdx, sizeof q.sy);
    q.dt_y = p->dt_dx;
    return kp_avg_walk_blocks() > 0 && !p->is_max && kp_is_3x3s2(p) && kp_fits_i32(p) &&
           kp_vec_ok(p, NULL, NULL, V) && (!bwd || kp_vec_ok(&q, NULL, NULL, V));
}

template <typename T> static void kp_avg_fwd_launch(const kpool_params *p, const T *x, T *y, cudaStream_t s)
{
    kp_roll_launch<T, KpRollAvgLean<T> >(p, x, y, NULL, s);
}

template <typename T> static void kp_avg_bwd_launch(const kpool_params *p, const T *dy, T *dx, cudaStream_t s)
{
    const int S = kp_avg_walk_blocks();
    kp_fast f;
    const unsigned grid = kpw_grid(p, S, 16 / sizeof(T), &f);
    kpool_avg_bwd_walk<T><<<grid, KP_THREADS, 0, s>>>(*p, f, S, dy, dx);
}

extern "C" int kpool_fwd_avg_walk(const kpool_params *p) { return kp_avg_walk_ok(p, false); }

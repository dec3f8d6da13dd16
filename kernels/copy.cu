// copy.cu — the generic strided copy (reshape, permute, broadcast, slice,
// concat/split pieces, pad in every mode), see src/gpu/kern_copy.h.
// Grid-stride loop over the iteration space; 32-bit index math when it fits.
// Transposing copies (the output's contiguous dim strided in the input, another
// dim contiguous there: NCHW <-> NHWC, 2-D transposes) go through a shared-memory
// tile (k_transpose, cp_tiled_axis): the element loop read 2-byte units at a
// stride of the plane and ran at 18 % of copy; XDNN_COPY_TILED=0 keeps it.
// v2 (session 15, k_transpose_piped): the loads of a block's next tile are in
// flight while it stores the current one, on a grid of exactly the resident
// blocks; k_transpose held one tile between two barriers (68-80 % of copy)
// and its 132 x 8 blocks ran a second, thin wave where 40 registers let 6 a
// SM; it also takes 8-byte units (i64, f64: the element loop before).
// XDNN_COPY_TILED_V2=0 keeps k_transpose, =2 tiles twice as deep.
// v3 (session 16, k_transpose_async): v2 still had no loads in flight
// between its two barriers (79 % of copy on bf16 NCHW <-> NHWC, 85 % on f32
// 8192^2); cp.async puts a block's next two tiles straight into a third and
// second shared buffer (no registers held), one barrier a tile, 16-byte
// shared reads (xor-swizzled chunks) and SP-unit stores; taken when the lines
// split into whole 16-byte chunks, else v2.  XDNN_COPY_TILED_V2=1 is v2.
// The affine pieces of one concat / split run in one launch (k_copy_pieces,
// cp_launch_group); XDNN_COPY_ONE_LAUNCH=0 launches them one by one.
#include "gpu/kern_copy.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

namespace {

enum { DT_F32 = 0, DT_F16 = 1, DT_BF16 = 2 };

template <int ES>
struct unit;
template <> struct unit<1> { typedef unsigned char t; };
template <> struct unit<2> { typedef unsigned short t; };
template <> struct unit<4> { typedef unsigned int t; };
template <> struct unit<8> { typedef uint2 t; };
template <> struct unit<16> { typedef uint4 t; };

// Input offset of iteration index i (and the output offset); false = fill.
template <typename IT>
__device__ __forceinline__ bool offsets(const cp_job &j, IT i, int64_t &io, int64_t &oo)
{
    io = j.ibase;
    oo = j.obase;
    bool inside = true;
    if (j.kind == CPK_RESHAPE) {
        IT f = i;
        for (int d = j.n - 1; d >= 0; d--) {
            IT s = (IT)j.size[d], q = f / s;
            oo += (int64_t)(f - q * s) * j.ost[d];
            f = q;
        }
        f = i;
        for (int d = j.in_n - 1; d >= 0; d--) {
            IT s = (IT)j.in_size[d], q = f / s;
            io += (int64_t)(f - q * s) * j.in_st[d];
            f = q;
        }
        return true;
    }
    for (int d = j.n - 1; d >= 0; d--) {
        IT s = (IT)j.size[d], q = i / s;
        int64_t r = (int64_t)(i - q * s);
        i = q;
        oo += r * j.ost[d];
        if (j.kind == CPK_PAD) {
            int64_t L = j.ilen[d], v = r - j.before[d];
            if (v < 0 || v >= L) {
                switch (j.pad_mode) {
                case CPP_REFLECT: v = v < 0 ? -v : 2 * (L - 1) - v; break;
                case CPP_REPLICATE: v = v < 0 ? 0 : L - 1; break;
                case CPP_CIRCULAR: v = ((v % L) + L) % L; break;
                default: inside = false; v = 0; break;
                }
            }
            io += v * j.ist[d];
        } else {
            io += r * j.ist[d];
        }
    }
    return inside;
}

template <int ES, typename IT>
__global__ void k_copy(const cp_job j)
{
    typedef typename unit<ES>::t U;
    const U *src = static_cast<const U *>(j.src);
    U *dst = static_cast<U *>(j.dst);
    U fill;
    memcpy(&fill, j.fill, sizeof(U) < 16 ? sizeof(U) : 16);
    for (IT i = (IT)blockIdx.x * blockDim.x + threadIdx.x; i < (IT)j.numel; i += (IT)gridDim.x * blockDim.x) {
        int64_t io, oo;
        bool in = offsets<IT>(j, i, io, oo);
        dst[oo] = in ? src[io] : fill;
    }
}

__device__ __forceinline__ float load_f(const void *p, int64_t i, int dt)
{
    switch (dt) {
    case DT_F16: return __half2float(static_cast<const __half *>(p)[i]);
    case DT_BF16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    default: return static_cast<const float *>(p)[i];
    }
}

template <typename IT>
__global__ void k_copy_cast(const cp_job j)
{
    for (IT i = (IT)blockIdx.x * blockDim.x + threadIdx.x; i < (IT)j.numel; i += (IT)gridDim.x * blockDim.x) {
        int64_t io, oo;
        bool in = offsets<IT>(j, i, io, oo);
        switch (j.odt) {
        case DT_F16: {
            __half v;
            if (in)
                v = __float2half_rn(load_f(j.src, io, j.idt));
            else
                memcpy(&v, j.fill, 2);
            static_cast<__half *>(j.dst)[oo] = v;
            break;
        }
        case DT_BF16: {
            __nv_bfloat16 v;
            if (in)
                v = __float2bfloat16_rn(load_f(j.src, io, j.idt));
            else
                memcpy(&v, j.fill, 2);
            static_cast<__nv_bfloat16 *>(j.dst)[oo] = v;
            break;
        }
        default: {
            float v;
            if (in)
                v = load_f(j.src, io, j.idt);
            else
                memcpy(&v, j.fill, 4);
            static_cast<float *>(j.dst)[oo] = v;
            break;
        }
        }
    }
}

// The tiled transpose: a TT x TT tile of units (TT * ES = 128 bytes: whole
// lines on both sides), read along dim a (input stride 1) and written along the
// output's last dim (output stride 1) through shared memory; one block per tile
// of one "batch" index (every other dim), grid-stride over the tiles.  P units
// per global access: 2-byte units move in pairs when every offset is even
// (cp_pairs_ok): one 2-byte access per thread held the bf16 NCHW <-> NHWC copies
// at 51 % of copy (session 12's first call; f32 80 %).
template <int ES, int P>
__global__ void __launch_bounds__(256) k_transpose(const cp_job j, int a, int64_t tiles_a, int64_t tiles_d,
                                                   int64_t ntiles)
{
    typedef typename unit<ES>::t U;
    typedef typename unit<ES * P>::t W;
    constexpr int TT = 128 / ES, TX = TT / P, RY = 256 / TX;
    __shared__ __align__(16) U tile[TT][TT + P]; // the pitch keeps P-unit alignment and spreads the banks
    const U *src = static_cast<const U *>(j.src);
    U *dst = static_cast<U *>(j.dst);
    const int last = j.n - 1, tx = threadIdx.x % TX, ty = threadIdx.x / TX;
    const int64_t sa = j.size[a], sd = j.size[last], ist_d = j.ist[last], ost_a = j.ost[a];
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        int64_t b = t / tiles_a;
        const int64_t a0 = (t - b * tiles_a) * TT;
        const int64_t d0 = (b % tiles_d) * TT;
        b /= tiles_d;
        int64_t io = j.ibase, oo = j.obase; // the batch index over every other dim
        for (int d = last - 1; d >= 0; d--) {
            if (d == a)
                continue;
            const int64_t q = b / j.size[d], r = b - q * j.size[d];
            io += r * j.ist[d];
            oo += r * j.ost[d];
            b = q;
        }
        for (int r = ty; r < TT; r += RY)
            if (a0 + P * tx < sa && d0 + r < sd)
                *reinterpret_cast<W *>(&tile[r][P * tx]) =
                    *reinterpret_cast<const W *>(src + io + (a0 + P * tx) + (d0 + r) * ist_d);
        __syncthreads();
        for (int r = ty; r < TT; r += RY)
            if (a0 + r < sa && d0 + P * tx < sd) {
                union { W w; U e[P]; } v;
#pragma unroll
                for (int k = 0; k < P; k++)
                    v.e[k] = tile[P * tx + k][r];
                *reinterpret_cast<W *>(dst + oo + (a0 + r) * ost_a + (d0 + P * tx)) = v.w;
            }
        __syncthreads();
    }
}

// A tile of k_transpose_piped: its first input and output units, its extents
// along a and d (smaller than the tile's at the edges).
struct tp_place {
    int64_t io, oo;
    int na, nd;
};

// Tile t's place, for v2 and v3 (tiles a fastest, then d, then the batch dims from the last down; 32-bit index
// math: launch_piped and launch_async take jobs of fewer than 2^31 tiles, every batch extent below that).
template <int TA, int TD>
__device__ __forceinline__ tp_place tp_place_of(const cp_job &j, int a, int last, uint32_t t, uint32_t tiles_a,
                                                uint32_t tiles_d, int64_t ist_d, int64_t ost_a)
{
    tp_place p;
    uint32_t b = t / tiles_a, q = b / tiles_d;
    const int64_t a0 = (int64_t)(t - b * tiles_a) * TA, d0 = (int64_t)(b - q * tiles_d) * TD;
    p.io = j.ibase + a0 + d0 * ist_d;
    p.oo = j.obase + a0 * ost_a + d0;
    for (int d = last - 1; d >= 0; d--) { // the batch index over every other dim
        if (d == a)
            continue;
        const uint32_t s = (uint32_t)j.size[d], bq = q / s;
        const int64_t r = (int64_t)(q - bq * s);
        p.io += r * j.ist[d];
        p.oo += r * j.ost[d];
        q = bq;
    }
    const int64_t ra = j.size[a] - a0, rd = j.size[last] - d0;
    p.na = (int)(ra < TA ? ra : TA);
    p.nd = (int)(rd < TD ? rd : TD);
    return p;
}

// The global loads a thread of k_transpose_piped<es, p, k> holds in flight (NL below), and the blocks per SM its
// registers must allow, from the registers those loads fill: without the bound ptxas took 48-55 registers (4-5
// blocks); at these it spills nothing, and 8 blocks hold 64 KB of loads in flight a SM.
__host__ __device__ constexpr int tp_loads(int es, int p, int k)
{
    return k * (128 / es) * (128 / es) / (p * 256);
}
__host__ __device__ constexpr int tp_load_regs(int es, int p, int k)
{
    return tp_loads(es, p, k) * (es * p > 4 ? es * p / 4 : 1);
}
__host__ __device__ constexpr int tp_min_blocks(int load_regs)
{
    return load_regs <= 8 ? 8 : load_regs <= 16 ? 6 : 5;
}

// The transpose with the next tile's loads in flight: a TA x TD tile (TA * ES
// = 128 bytes along a: whole input lines; TD = K * TA rows along the output's
// last dim) through shared memory, as k_transpose, but each thread loads its
// part of the block's next tile into registers before it stores the current
// one from shared memory, so DRAM reads go on across the store phase and the
// barriers.  The grid is the blocks resident at once (launch_piped); each walks
// tiles a grid apart, the next tile's place computed while its loads fly.
// Tile order as k_transpose (a fastest, then d, then the batch dims).
template <int ES, int P, int K>
__global__ void __launch_bounds__(256, tp_min_blocks(tp_load_regs(ES, P, K)))
    k_transpose_piped(const cp_job j, int a, uint32_t tiles_a, uint32_t tiles_d, uint32_t ntiles)
{
    typedef typename unit<ES>::t U;
    typedef typename unit<ES * P>::t W;
    constexpr int TA = 128 / ES, TD = K * TA;
    constexpr int LX = TA / P, LY = 256 / LX, NL = TD / LY; // loads: LX threads along a line, NL lines each
    constexpr int SX = TD / P, SY = 256 / SX, NS = TA / SY; // stores: SX threads along an output row, NS rows each
    static_assert(LY * LX == 256 && NL * LY == TD && SY * SX == 256 && NS * SY == TA && NL == tp_loads(ES, P, K),
                  "tile / block shape");
    __shared__ __align__(16) U tile[TD][TA + P]; // the pitch keeps P-unit alignment and spreads the banks
    const U *src = static_cast<const U *>(j.src);
    U *dst = static_cast<U *>(j.dst);
    const int last = j.n - 1;
    const int lx = threadIdx.x % LX, ly = threadIdx.x / LX, sx = threadIdx.x % SX, sy = threadIdx.x / SX;
    const int64_t ist_d = j.ist[last], ost_a = j.ost[a];

    auto place_of = [&](uint32_t t) { return tp_place_of<TA, TD>(j, a, last, t, tiles_a, tiles_d, ist_d, ost_a); };
    // Row to row by pointer steps kept opaque to the compiler: it would hoist each row's 64-bit offset out of the
    // tile loop (up to 253 registers).
    const int64_t lstep = LY * ist_d, sstep = SY * ost_a;
    W v[NL]; // this thread's part of the tile in flight
    auto load = [&](const tp_place &p) {
        const U *q = src + p.io + P * lx + ly * ist_d;
#pragma unroll
        for (int i = 0; i < NL; i++) {
            v[i] = W();
            if (P * lx < p.na && ly + i * LY < p.nd)
                v[i] = *reinterpret_cast<const W *>(q);
            q += lstep;
            asm("" : "+l"(q));
        }
    };

    uint32_t t = blockIdx.x; // launch_piped: gridDim.x <= ntiles
    tp_place cur = place_of(t), nxt = cur;
    load(cur);
    t += gridDim.x;
    if (t < ntiles)
        nxt = place_of(t);
    for (;;) {
        __syncthreads(); // the previous tile's reads of shared memory are done
#pragma unroll
        for (int i = 0; i < NL; i++)
            *reinterpret_cast<W *>(&tile[ly + i * LY][P * lx]) = v[i];
        __syncthreads();
        const bool more = t < ntiles; // uniform over the block
        if (more)
            load(nxt);
        U *q = dst + cur.oo + sy * ost_a + P * sx;
#pragma unroll
        for (int i = 0; i < NS; i++) {
            const int c = sy + i * SY;
            if (c < cur.na && P * sx < cur.nd) {
                union { W w; U e[P]; } o;
#pragma unroll
                for (int k = 0; k < P; k++)
                    o.e[k] = tile[P * sx + k][c];
                *reinterpret_cast<W *>(q) = o.w;
            }
            q += sstep;
            asm("" : "+l"(q));
        }
        if (!more)
            break;
        cur = nxt;
        t += gridDim.x;
        if (t < ntiles)
            nxt = place_of(t);
    }
}

// cp.async (sm_80+): 16 bytes global -> shared without registers, .cg (L2 only: each line is read once).
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem)
{
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// v3, the transpose through cp.async: a TA x TD tile (TA * ES = 128 bytes
// along a: whole input lines as 8 chunks of 16 bytes; TD = 32 * SP rows along
// the output's last dim) goes straight from global into one of 3 shared
// buffers, so each block has its next two tiles' loads in flight while it
// stores the current one, with one barrier a tile and no registers held for
// them (v2 held one tile in registers: none in flight between its two
// barriers).  A thread stores a block of LP (one chunk) x SP units: SP rows'
// chunks read as 16 bytes each, transposed in registers, written as LP runs
// of SP units (SP * ES bytes).  Chunk k of row r lies at k ^ (r / SP % 8):
// the 8 rows a quarter warp reads are in 8 different chunks, a row's 8
// chunks still fill one row (no bank conflicts either way, no padding).
// Taken when 16-byte chunks tile the input lines (cp_async_sp); the grid,
// the tile order and the 32-bit tile index math are v2's.
// Blocks an SM: 4 at 48 KB of buffers (SP = 4: <= 64 registers), 6 at 24 KB (SP = 2: 40); ptxas spills none.
template <int ES, int SP>
__global__ void __launch_bounds__(256, SP == 4 ? 4 : 6)
    k_transpose_async(const cp_job j, int a, uint32_t tiles_a, uint32_t tiles_d, uint32_t ntiles)
{
    typedef typename unit<ES>::t U;
    typedef typename unit<ES * SP>::t W;
    constexpr int LP = 16 / ES, TA = 128 / ES, TD = 32 * SP, S = 3;
    __shared__ __align__(128) uint4 buf[S][TD][8];
    const U *src = static_cast<const U *>(j.src);
    U *dst = static_cast<U *>(j.dst);
    const int last = j.n - 1;
    const int lk = threadIdx.x % 8, lr = threadIdx.x / 8;  // loads: chunk lk of rows lr + 32 i, i < SP
    const int sd = threadIdx.x % 32, sk = threadIdx.x / 32; // stores: rows SP * sd + r, chunk sk (a warp a chunk)
    const int lphys = lk ^ (lr / SP % 8), sphys = sk ^ (sd % 8); // a thread's loads, rows 32 apart, share a swizzle
    const int64_t ist_d = j.ist[last], ost_a = j.ost[a];

    auto place_of = [&](uint32_t t) { return tp_place_of<TA, TD>(j, a, last, t, tiles_a, tiles_d, ist_d, ost_a); };
    const int64_t lstep = 32 * ist_d;
    // One commit group a tile, empty past the last one (the wait below counts groups).
    auto issue = [&](uint32_t t, uint4 (*stage)[8]) {
        if (t < ntiles) {
            const tp_place p = place_of(t);
            const U *q = src + p.io + LP * lk + lr * ist_d;
            if (LP * lk < p.na) // the chunks are whole: size[a] % LP == 0
#pragma unroll
                for (int i = 0; i < SP; i++) {
                    if (lr + 32 * i < p.nd)
                        cp_async16(&stage[lr + 32 * i][lphys], q);
                    q += lstep;
                    asm("" : "+l"(q)); // v2's reason: no hoisted 64-bit row offsets
                }
        }
        cp_async_commit();
    };

    const uint32_t g = gridDim.x; // launch_async: g <= ntiles
    issue(blockIdx.x, buf[0]);
    issue(blockIdx.x + g, buf[1]);
    int s = 0;
    for (uint32_t t = blockIdx.x; t < ntiles; t += g) {
        cp_async_wait<1>(); // this thread's chunks of tile t are in (tile t + g's may still fly)
        __syncthreads();    // everyone's are; and everyone is done reading the buffer refilled next
        issue(t + 2 * g, buf[s == 0 ? 2 : s - 1]);
        const tp_place p = place_of(t);
        if (LP * sk < p.na && SP * sd < p.nd) { // whole blocks: size[last] % SP == 0 (cp_async_sp)
            union { uint4 v; U e[LP]; } in[SP];
#pragma unroll
            for (int r = 0; r < SP; r++)
                in[r].v = buf[s][SP * sd + r][sphys];
            U *q = dst + p.oo + LP * sk * ost_a + SP * sd;
#pragma unroll
            for (int c = 0; c < LP; c++) {
                union { W w; U e[SP]; } o;
#pragma unroll
                for (int r = 0; r < SP; r++)
                    o.e[r] = in[r].e[c];
                *reinterpret_cast<W *>(q) = o.w;
                q += ost_a;
                asm("" : "+l"(q));
            }
        }
        s = s == S - 1 ? 0 : s + 1;
    }
}

// Pairs of 2-byte units: both extents and every offset and stride even (4-byte aligned accesses on both sides).
bool cp_pairs_ok(const cp_job *j, int a)
{
    const int last = j->n - 1;
    if (j->esize != 2 || j->size[a] % 2 || j->size[last] % 2 || j->ibase % 2 || j->obase % 2 ||
        j->ist[last] % 2 || j->ost[a] % 2)
        return false;
    for (int d = 0; d < last; d++)
        if (d != a && (j->ist[d] % 2 || j->ost[d] % 2))
            return false;
    return true;
}

template <int ES, int P>
void launch_transpose(const cp_job *j, int a, cudaStream_t s)
{
    constexpr int TT = 128 / ES;
    const int64_t tiles_a = (j->size[a] + TT - 1) / TT, tiles_d = (j->size[j->n - 1] + TT - 1) / TT;
    const int64_t ntiles = j->numel / (j->size[a] * j->size[j->n - 1]) * tiles_a * tiles_d;
    const int64_t cap = 132 * 8;
    k_transpose<ES, P><<<(unsigned)(ntiles < cap ? ntiles : cap), 256, 0, s>>>(*j, a, tiles_a, tiles_d, ntiles);
}

// XDNN_COPY_TILED_V2 (A/B switch, read once): 0 = k_transpose; 1 = k_transpose_piped (session 15's); 2 = it with
// tiles twice as deep; 3 (the default) = k_transpose_async where it takes the job, else as 1
int tiled_v2_mode()
{
    static const int m = [] {
        const char *e = getenv("XDNN_COPY_TILED_V2");
        return !e ? 3 : strcmp(e, "0") == 0 ? 0 : strcmp(e, "1") == 0 ? 1 : strcmp(e, "2") == 0 ? 2 : 3;
    }();
    return m;
}

// Does k_transpose_piped take units of esize bytes (and is it on)?
bool piped_takes(int esize)
{
    return tiled_v2_mode() != 0 && (esize == 2 || esize == 4 || esize == 8);
}

// The units k_transpose_async<es, SP> stores at once along the output's last dim (4, or 2; SP * es <= 16), from
// the job's strides alone; 0 when it does not take the job: the input's lines must split into whole 16-byte
// chunks (the extent along a, the first unit and every input stride but a's multiples of 16 bytes) and the
// output's into whole runs of SP units, or it is off (XDNN_COPY_TILED_V2 other than 3).
int async_sp(const cp_job *j, int a)
{
    const int es = j->esize, last = j->n - 1;
    if (tiled_v2_mode() != 3 || (es != 1 && es != 2 && es != 4 && es != 8))
        return 0;
    const int lp = 16 / es;
    bool in = j->size[a] % lp == 0 && j->ibase % lp == 0;
    for (int d = 0; d <= last; d++)
        in = in && (d == a || j->ist[d] % lp == 0);
    for (int sp = es == 8 ? 2 : 4; in && sp >= 2; sp /= 2) {
        bool out = j->size[last] % sp == 0 && j->obase % sp == 0;
        for (int d = 0; d < last; d++)
            out = out && j->ost[d] % sp == 0;
        if (out)
            return sp;
    }
    return 0;
}

// The blocks of `kernel` (256 threads) resident at once on the current device, asked once per device and kept in
// the kernel's own `cache`.
int resident_blocks(std::atomic<int> (&cache)[16], const void *kernel)
{
    int dev = 0, blocks = 0;
    cudaGetDevice(&dev);
    if (dev >= 0 && dev < 16)
        blocks = cache[dev].load(std::memory_order_relaxed);
    if (blocks <= 0) {
        int sms = 0, per_sm = 0;
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0);
        blocks = sms * per_sm > 0 ? sms * per_sm : 132;
        if (dev >= 0 && dev < 16)
            cache[dev].store(blocks, std::memory_order_relaxed);
    }
    return blocks;
}

// The tiles of a job tiled TA x TD (over every batch index); more than 0x7fffffff: the kernels decline it.
int64_t tile_count(const cp_job *j, int a, int ta, int td, int64_t *tiles_a, int64_t *tiles_d)
{
    *tiles_a = (j->size[a] + ta - 1) / ta;
    *tiles_d = (j->size[j->n - 1] + td - 1) / td;
    return j->numel / (j->size[a] * j->size[j->n - 1]) * *tiles_a * *tiles_d;
}

// k_transpose_piped<ES, P, K> on a grid of the blocks resident at once; false (nothing launched) for a job of
// 2^31 tiles or more.
template <int ES, int P, int K>
bool launch_piped(const cp_job *j, int a, cudaStream_t s)
{
    constexpr int TA = 128 / ES, TD = K * TA;
    int64_t tiles_a, tiles_d;
    const int64_t ntiles = tile_count(j, a, TA, TD, &tiles_a, &tiles_d);
    if (ntiles > 0x7fffffffLL)
        return false;
    static std::atomic<int> resident[16];
    const int blocks = resident_blocks(resident, (const void *)k_transpose_piped<ES, P, K>);
    k_transpose_piped<ES, P, K><<<(unsigned)(ntiles < blocks ? ntiles : blocks), 256, 0, s>>>(
        *j, a, (uint32_t)tiles_a, (uint32_t)tiles_d, (uint32_t)ntiles);
    return true;
}

// k_transpose_async<ES, SP>, as launch_piped; false also for pointers off the chunks' alignment (tensors are
// 16-byte aligned: async_sp, at plan time, sees only the strides).
template <int ES, int SP>
bool launch_async(const cp_job *j, int a, cudaStream_t s)
{
    constexpr int TA = 128 / ES, TD = 32 * SP;
    int64_t tiles_a, tiles_d;
    const int64_t ntiles = tile_count(j, a, TA, TD, &tiles_a, &tiles_d);
    if (ntiles > 0x7fffffffLL || (uintptr_t)j->src % 16 || (uintptr_t)j->dst % (SP * ES))
        return false;
    static std::atomic<int> resident[16];
    const int blocks = resident_blocks(resident, (const void *)k_transpose_async<ES, SP>);
    k_transpose_async<ES, SP><<<(unsigned)(ntiles < blocks ? ntiles : blocks), 256, 0, s>>>(
        *j, a, (uint32_t)tiles_a, (uint32_t)tiles_d, (uint32_t)ntiles);
    return true;
}

bool launch_async_sp(const cp_job *j, int a, int sp, cudaStream_t s)
{
    switch (j->esize * 10 + sp) {
    case 12: return launch_async<1, 2>(j, a, s);
    case 14: return launch_async<1, 4>(j, a, s);
    case 22: return launch_async<2, 2>(j, a, s);
    case 24: return launch_async<2, 4>(j, a, s);
    case 42: return launch_async<4, 2>(j, a, s);
    case 44: return launch_async<4, 4>(j, a, s);
    case 82: return launch_async<8, 2>(j, a, s);
    default: return false;
    }
}

// The pipelined transpose: k_transpose_async where async_sp takes the job, else k_transpose_piped for 2-, 4- and
// 8-byte units: 8 KB tiles (64 x 64 2-byte units, 32 x 64 4-byte ones, 16 x 64 8-byte ones), 16 KB with
// XDNN_COPY_TILED_V2=2; false when neither takes the job (1-byte units keep k_transpose in v2: a thread would
// hold 64 of them in flight, a register each).
bool launch_transpose_piped(const cp_job *j, int a, bool pairs, cudaStream_t s)
{
    const int sp = async_sp(j, a);
    if (sp && launch_async_sp(j, a, sp, s))
        return true;
    if (!piped_takes(j->esize))
        return false;
    const bool deep = tiled_v2_mode() == 2;
    if (j->esize == 2 && pairs)
        return deep ? launch_piped<2, 2, 2>(j, a, s) : launch_piped<2, 2, 1>(j, a, s);
    if (j->esize == 2)
        return deep ? launch_piped<2, 1, 2>(j, a, s) : launch_piped<2, 1, 1>(j, a, s);
    if (j->esize == 4)
        return deep ? launch_piped<4, 1, 4>(j, a, s) : launch_piped<4, 1, 2>(j, a, s);
    return deep ? launch_piped<8, 1, 8>(j, a, s) : launch_piped<8, 1, 4>(j, a, s);
}

// The pieces of a concat / split in one launch (cp_launch_group): one flat
// index over the pieces one after another, each thread's piece found by
// walking the table forward as its index grows (grid-stride: the grid works on
// one window of the flat space, so the walk moves rarely).  Two launches held
// concat bf16 2 x [8192, 4096] at 85 % of copy (session 12): the first
// launch's tail and the second's ramp.  __grid_constant__: the table is read
// in place from the parameter space at a dynamic index (no per-thread copy).
template <int ES, typename IT>
__global__ void k_copy_pieces(const __grid_constant__ cp_group g)
{
    typedef typename unit<ES>::t U;
    int k = 0;
    for (IT i = (IT)blockIdx.x * blockDim.x + threadIdx.x; i < (IT)g.total; i += (IT)gridDim.x * blockDim.x) {
        while (k + 1 < g.np && i >= (IT)g.p[k + 1].start)
            k++;
        const cp_piece &p = g.p[k];
        IT f = i - (IT)p.start;
        int64_t io = p.ibase, oo = p.obase;
        for (int d = p.n - 1; d > 0; d--) {
            const IT s = (IT)p.size[d], q = f / s;
            const int64_t r = (int64_t)(f - q * s);
            io += r * p.ist[d];
            oo += r * p.ost[d];
            f = q;
        }
        io += (int64_t)f * p.ist[0];
        oo += (int64_t)f * p.ost[0];
        static_cast<U *>(p.dst)[oo] = static_cast<const U *>(p.src)[io];
    }
}

template <int ES>
void launch_pieces(const cp_group *g, int blocks, cudaStream_t s)
{
    if (g->total > 0x7fffffffLL)
        k_copy_pieces<ES, uint64_t><<<blocks, 256, 0, s>>>(*g);
    else
        k_copy_pieces<ES, uint32_t><<<blocks, 256, 0, s>>>(*g);
}

template <typename IT>
void launch(const cp_job *j, int blocks, cudaStream_t s)
{
    if (j->idt != j->odt) {
        k_copy_cast<IT><<<blocks, 256, 0, s>>>(*j);
        return;
    }
    switch (j->esize) {
    case 1: k_copy<1, IT><<<blocks, 256, 0, s>>>(*j); break;
    case 2: k_copy<2, IT><<<blocks, 256, 0, s>>>(*j); break;
    case 4: k_copy<4, IT><<<blocks, 256, 0, s>>>(*j); break;
    case 8: k_copy<8, IT><<<blocks, 256, 0, s>>>(*j); break;
    default: k_copy<16, IT><<<blocks, 256, 0, s>>>(*j); break;
    }
}

} // namespace

extern "C" int cp_tiled_axis(const cp_job *j)
{
    static const char *const e = getenv("XDNN_COPY_TILED"); // A/B switch, read once
    // 8-byte units (i64, f64) only on k_transpose_piped; k_transpose left them to the element loop
    if ((e && strcmp(e, "0") == 0) || j->kind != CPK_AFFINE || j->idt != j->odt || j->n < 2 ||
        (j->esize != 1 && j->esize != 2 && j->esize != 4 && !(j->esize == 8 && piped_takes(8))))
        return -1;
    const int last = j->n - 1;
    if (j->ost[last] != 1 || j->ist[last] == 1 || j->size[last] < 16)
        return -1;
    for (int a = 0; a < last; a++)
        if (j->ist[a] == 1 && j->size[a] >= 16)
            return a;
    return -1;
}

extern "C" bool cp_tiled_piped(const cp_job *j)
{
    return piped_takes(j->esize) && cp_tiled_axis(j) >= 0;
}

extern "C" bool cp_tiled_async(const cp_job *j)
{
    const int a = cp_tiled_axis(j);
    return a >= 0 && async_sp(j, a) > 0;
}

extern "C" bool cp_group_ok(const cp_job *jobs, int n)
{
    const char *e = getenv("XDNN_COPY_ONE_LAUNCH"); // A/B switch (at plan time): 0 launches each piece
    if ((e && strcmp(e, "0") == 0) || n < 2 || n > CP_GROUP_MAX)
        return false;
    for (int i = 0; i < n; i++) {
        const cp_job *j = &jobs[i];
        if (j->kind != CPK_AFFINE || j->idt != j->odt || j->esize != jobs[0].esize || j->n < 1 ||
            j->n > CP_GROUP_DIMS || cp_tiled_axis(j) >= 0)
            return false;
    }
    return true;
}

extern "C" int cp_launch_group(const cp_job *jobs, int n, void *stream)
{
    cp_group g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < n; i++) {
        const cp_job *j = &jobs[i];
        if (j->numel <= 0)
            continue;
        cp_piece *p = &g.p[g.np++];
        p->n = j->n;
        for (int d = 0; d < j->n; d++)
            p->size[d] = j->size[d], p->ost[d] = j->ost[d], p->ist[d] = j->ist[d];
        p->ibase = j->ibase, p->obase = j->obase;
        p->start = g.total;
        p->src = j->src, p->dst = j->dst;
        g.total += j->numel;
    }
    if (g.total <= 0)
        return 0;
    int64_t b = (g.total + 255) / 256, cap = 132 * 16;
    int blocks = (int)(b < 1 ? 1 : b > cap ? cap : b);
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (jobs[0].esize) {
    case 1: launch_pieces<1>(&g, blocks, s); break;
    case 2: launch_pieces<2>(&g, blocks, s); break;
    case 4: launch_pieces<4>(&g, blocks, s); break;
    case 8: launch_pieces<8>(&g, blocks, s); break;
    default: launch_pieces<16>(&g, blocks, s); break;
    }
    return (int)cudaGetLastError();
}

extern "C" int cp_launch(const cp_job *j, void *stream)
{
    if (j->numel <= 0)
        return 0;
    const int a = cp_tiled_axis(j);
    if (a >= 0) {
        cudaStream_t ts = static_cast<cudaStream_t>(stream);
        static const char *const pe = getenv("XDNN_COPY_TILED_PAIRS"); // A/B: 0 moves 2-byte units one by one
        const bool pairs = !(pe && strcmp(pe, "0") == 0) && cp_pairs_ok(j, a);
        if (launch_transpose_piped(j, a, pairs, ts))
            return (int)cudaGetLastError();
        if (j->esize == 1)
            launch_transpose<1, 1>(j, a, ts);
        else if (j->esize == 2 && pairs)
            launch_transpose<2, 2>(j, a, ts);
        else if (j->esize == 2)
            launch_transpose<2, 1>(j, a, ts);
        else if (j->esize == 4)
            launch_transpose<4, 1>(j, a, ts);
        if (j->esize <= 4) // 8-byte units that the piped kernel declined (2^31 tiles) go to the element loop
            return (int)cudaGetLastError();
    }
    int64_t b = (j->numel + 255) / 256, cap = 132 * 16;
    int blocks = (int)(b < 1 ? 1 : b > cap ? cap : b);
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    // offsets can exceed the iteration count (strides), but the index itself
    // is what the IT type carries
    if (j->numel > 0x7fffffffLL)
        launch<uint64_t>(j, blocks, s);
    else
        launch<uint32_t>(j, blocks, s);
    return (int)cudaGetLastError();
}

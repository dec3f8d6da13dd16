/* emu.cpp — reduce v2 on the CPU (sweep.sh): the generated CUDA source (KFILE) compiled as C++ and run with
 * 256 std::threads a block: std::barrier for __syncthreads, a warp exchange for __shfl_xor_sync, f16 / bf16
 * conversions in software, blocks one after another, then the fold; checked against a double reference. */
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <thread>
#include <vector>
#include <random>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __shared__ static
struct d3 { unsigned x, y, z; };
static thread_local d3 threadIdx, blockIdx;
static d3 blockDim, gridDim;
static std::barrier<> *g_bar;
static std::barrier<> *g_wbar[8];
static float g_shfl[256];
static void __syncthreads() { g_bar->arrive_and_wait(); }
static float __shfl_xor_sync(unsigned, float v, int o)
{
    int t = threadIdx.x, w = t >> 5;
    g_shfl[t] = v; g_wbar[w]->arrive_and_wait();
    float r = g_shfl[(t & ~31) | ((t & 31) ^ o)]; g_wbar[w]->arrive_and_wait();
    return r;
}
static unsigned g_shflu[256];
static unsigned __shfl_xor_sync(unsigned, unsigned v, int o)
{
    int t = threadIdx.x, w = t >> 5;
    g_shflu[t] = v; g_wbar[w]->arrive_and_wait();
    unsigned r = g_shflu[(t & ~31) | ((t & 31) ^ o)]; g_wbar[w]->arrive_and_wait();
    return r;
}
static float xd_h2f(unsigned short h) { _Float16 f; memcpy(&f, &h, 2); return (float)f; }
static unsigned short xd_f2h(float v) { _Float16 f = (_Float16)v; unsigned short h; memcpy(&h, &f, 2); return h; }
static float xd_b2f(unsigned short h) { unsigned u = (unsigned)h << 16; float f; memcpy(&f, &u, 4); return f; }
static unsigned short xd_f2b(float f) { unsigned u; memcpy(&u, &f, 4); if (std::isnan(f)) return 0x7fc0; u += 0x7fff + ((u >> 16) & 1); return (unsigned short)(u >> 16); }
// packed kernels (XDNN_REDUCE_PACKED): max.NaN / min.NaN on two f16 or bf16 a word, as PTX defines them:
// NaN in -> canonical NaN out, +0 above -0 (g_pk_f16, g_pk_min set from the meta line)
static bool g_pk_f16, g_pk_min;
static unsigned short pk_half(unsigned short a, unsigned short b)
{
    float x = g_pk_f16 ? xd_h2f(a) : xd_b2f(a), y = g_pk_f16 ? xd_h2f(b) : xd_b2f(b);
    if (std::isnan(x) || std::isnan(y)) return 0x7fff;
    if (x == y) return ((a & 0x8000) != 0) == g_pk_min ? a : b; // equal: only +-0 differ in bits
    return (g_pk_min ? x < y : x > y) ? a : b;
}
static unsigned xd_pk(unsigned a, unsigned b) { return pk_half(a & 0xffff, b & 0xffff) | (unsigned)pk_half(a >> 16, b >> 16) << 16; }
struct alignas(16) xd_v16 { unsigned int w[4]; };
struct alignas(8) xd_v8 { unsigned int w[2]; };
struct alignas(4) xd_v4 { unsigned int w; };
struct alignas(2) xd_v2 { unsigned short w; };
#define INFINITY_ __builtin_inff()
#define XD_RED(NAME, OP, ID) \
static float NAME(float v, float *sh) { \
  for (int o = 16; o > 0; o >>= 1) { float w = __shfl_xor_sync(0xffffffffu, v, o); v = OP; } \
  int wid = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = (blockDim.x + 31) >> 5; \
  __syncthreads(); if (lane == 0) sh[wid] = v; __syncthreads(); \
  v = lane < nw ? sh[lane] : (ID); \
  for (int o = 16; o > 0; o >>= 1) { float w = __shfl_xor_sync(0xffffffffu, v, o); v = OP; } \
  return v; }
// the f32 path's max.NaN / min.NaN (codegen.c's xd_max_nan / xd_min_nan): NaN in -> NaN out, +0 above -0
static float xd_max_nan(float a, float b)
{
    if (std::isnan(a) || std::isnan(b)) return NAN;
    return a > b || (a == b && !std::signbit(a)) ? a : b;
}
static float xd_min_nan(float a, float b)
{
    if (std::isnan(a) || std::isnan(b)) return NAN;
    return a < b || (a == b && std::signbit(a)) ? a : b;
}
XD_RED(xd_block_sum, v + w, 0.0f)
XD_RED(xd_block_max, xd_max_nan(v, w), -INFINITY)
XD_RED(xd_block_min, xd_min_nan(v, w), INFINITY)
XD_RED(xd_block_prod, v * w, 1.0f)
#include KFILE
#ifndef YT
#define YT float
#endif
#ifndef XT
#define XT float
#endif
int main(int argc, char **argv)
{
    int form, fold, xdt, ydt, red, f32; long long work, work2, outer, rlen, cols; unsigned gy; size_t wsb;
    FILE *f = fopen(argv[1], "r");
    if (fscanf(f, "%d %lld %u %d %lld %zu %lld %lld %lld %d %d %d %d", &form, &work, &gy, &fold, &work2, &wsb, &outer, &rlen, &cols, &xdt, &ydt, &red, &f32) != 13) return 2;
    long long nx = outer * rlen * cols, ny = outer * cols;
    std::vector<XT> x(nx + 64); std::vector<YT> y(ny + 64); std::vector<float> ws(wsb / 4 + 64, NAN);
    std::vector<double> xv(nx);
    g_pk_f16 = xdt == 1; g_pk_min = red == 3;
    // EMU_SPECIALS=1 (16-bit max/min/amax): by output, NaN at one place, +-Inf, all-negative with -0 (and +0)
    const bool specials = getenv("EMU_SPECIALS") && xdt != 0 && red >= 2 && red <= 4;
    std::mt19937 rng(7);
    for (long long i = 0; i < nx; i++) {
        float v = (float)((int)(rng() % 17) - 8) / 4.0f + 0.125f; // never zero
        if (red == 5) v = 1.0f + (float)(rng() % 3) / 64.0f;   // prod: near one
        if (specials) {
            long long c = i % cols, r = i / cols % rlen, o = i / cols / rlen, cls = (o * cols + c) % 6;
            if (cls == 1 || cls == 2) v = -fabsf(v);                          // all negative
            if ((cls == 1 || cls == 2) && r % 5 == 3) v = -0.0f;
            if (cls == 2 && r % 7 == 4) v = 0.0f;
            if (cls == 3 && r == (o + c) % rlen) v = NAN;                    // one NaN, its place varies
            if (cls == 4 && r % 3 == 1) v = (r & 4) ? INFINITY : -INFINITY;
            if (cls == 5) v = -INFINITY;
            if (red == 3) v = -v;                                             // min: the mirror
        }
        if (xdt == 0) { memcpy(&x[i], &v, 4); xv[i] = v; }
        else if (xdt == 1) { unsigned short h = xd_f2h(v); memcpy(&x[i], &h, 2); xv[i] = xd_h2f(h); }
        else { unsigned short h = xd_f2b(v); memcpy(&x[i], &h, 2); xv[i] = xd_b2f(h); }
    }
    // poison y
    memset(y.data(), 0xff, y.size() * sizeof(YT));
    std::barrier<> bar(256); g_bar = &bar;
    for (int w = 0; w < 8; w++) g_wbar[w] = new std::barrier<>(32);
    auto run = [&](int which, long long gx, unsigned gyy) {
        blockDim = {256, 1, 1};
        long long gxe = gx;
        if (form == 2 || which == 1) { long long cap = 132 * (which == 1 ? 16 : 32); if (gxe > cap) gxe = cap; }
        gridDim = {(unsigned)gxe, gyy, 1};
        std::vector<std::thread> th;
        for (int t = 0; t < 256; t++) th.emplace_back([&, t] {
            threadIdx = {(unsigned)t, 0, 0};
            for (unsigned by = 0; by < gyy; by++)
                for (long long bx = 0; bx < gxe; bx++) {
                    blockIdx = {(unsigned)bx, by, 0};
#if FORM == 1
                    if (which == 0) k(y.data(), x.data(), ws.data());
#ifdef HAS_FIN
                    else k_fin(y.data(), ws.data());
#endif
#else
                    k(y.data(), x.data());
#endif
                    g_bar->arrive_and_wait();
                }
        });
        for (auto &t : th) t.join();
    };
    if (form == 1) { run(0, work, gy); if (fold) run(1, (work2 + 255) / 256, 1); }
    else run(0, work, 1);
    int bad = 0; double maxerr = 0;
    for (long long o = 0; o < outer; o++)
        for (long long c = 0; c < cols; c++) {
            double a = red == 2 || red == 4 ? -INFINITY : red == 3 ? INFINITY : red == 5 ? 1 : 0;
            if (red == 4) a = 0;
            for (long long r = 0; r < rlen; r++) {
                double v = xv[(o * rlen + r) * cols + c];
                if (specials && (std::isnan(a) || std::isnan(v))) { a = NAN; continue; } // the reference's rule
                switch (red) { case 2: a = fmax(a, v); break; case 3: a = fmin(a, v); break; case 4: a = fmax(a, fabs(v)); break;
                case 5: a *= v; break; case 6: a += fabs(v); break; case 7: a += v * v; break; default: a += v; }
            }
            if (red == 1) a /= rlen;
            if (red == 7) a = sqrt(a);
            double got;
            YT yv = y[o * cols + c];
            if (ydt == 0) { float g; memcpy(&g, &yv, 4); got = g; }
            else { unsigned short h; memcpy(&h, &yv, 2); got = ydt == 1 ? xd_h2f(h) : xd_b2f(h); }
            double tol = (ydt == 0 ? 1e-5 : ydt == 1 ? 1e-3 : 8e-3) * (fabs(a) + 1) + 1e-6 * rlen;
            double err = fabs(got - a);
            if (specials) { err = std::isnan(a) && std::isnan(got) ? 0 : got == a ? 0 : INFINITY; tol = 0; } // exact
            if (!(err <= tol)) { if (bad++ < 5) printf("  mismatch o=%lld c=%lld got %g want %g\n", o, c, got, a); }
            if (err > maxerr) maxerr = err;
        }
    // guard band: nothing past the output written (y was poisoned with 0xff bytes)
    for (size_t i = ny * sizeof(YT); i < y.size() * sizeof(YT); i++)
        if (((unsigned char *)y.data())[i] != 0xff) { if (bad++ < 5) printf("  guard byte %zu written\n", i); break; }
    printf("%s outer=%lld rlen=%lld cols=%lld max_err=%g bad=%d\n", bad ? "FAIL" : "ok", outer, rlen, cols, maxerr, bad);
    return bad != 0;
}

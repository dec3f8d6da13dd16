// rnn.cu — kernels of the rnn_cublas engine (src/gpu/eng_rnn.c): a strided
// copy between any float dtypes (inputs packed to f32, results unpacked to
// their own dtype and strides) and the fused per-step gate kernel (one thread
// per (n, k); cell equations in src/ops/rnn.h; PyTorch gate orders).
#include "gpu/kern_rnn.h"
#include "gpu/kern_sdpa.h" // XK_* dtype codes

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace {

__device__ __forceinline__ float ld_val(const void *p, int dt, int64_t i)
{
    switch (dt) {
    case XK_F16: return __half2float(static_cast<const __half *>(p)[i]);
    case XK_BF16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    case XK_F64: return (float)static_cast<const double *>(p)[i];
    default: return static_cast<const float *>(p)[i];
    }
}

__device__ __forceinline__ void st_val(void *p, int dt, int64_t i, float v)
{
    switch (dt) {
    case XK_F16: static_cast<__half *>(p)[i] = __float2half_rn(v); break;
    case XK_BF16: static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v); break;
    case XK_F64: static_cast<double *>(p)[i] = (double)v; break;
    default: static_cast<float *>(p)[i] = v; break;
    }
}

__global__ void copy_kernel(xk_copy c, int64_t total)
{
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = e, so = 0, d_o = 0;
        for (int a = c.rank - 1; a >= 0; a--) {
            int64_t ix = r % c.dims[a];
            r /= c.dims[a];
            so += ix * c.sst[a];
            d_o += ix * c.dst_st[a];
        }
        st_val(c.dst, c.ddt, d_o, ld_val(c.src, c.sdt, so));
    }
}

__device__ __forceinline__ float sigm(float v) { return 1.0f / (1.0f + expf(-v)); }

enum { CELL_TANH = 0, CELL_RELU = 1, CELL_LSTM = 2, CELL_GRU = 3 };

__global__ void gates_kernel(xk_gates g)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= g.N * g.H)
        return;
    const int n = idx / g.H, k = idx % g.H, H = g.H;
    const int G = g.cell == CELL_LSTM ? 4 : g.cell == CELL_GRU ? 3 : 1;
    const float *a = g.ain + (int64_t)n * g.ain_ld;
    const float *b = g.hh + (int64_t)n * G * H;
    float ai[4], bh[4];
    for (int q = 0; q < G; q++) {
        ai[q] = a[q * H + k] + (g.b_ih ? g.b_ih[q * H + k] : 0.0f);
        bh[q] = b[q * H + k] + (g.b_hh ? g.b_hh[q * H + k] : 0.0f);
    }
    float h;
    switch (g.cell) {
    case CELL_TANH: h = tanhf(ai[0] + bh[0]); break;
    case CELL_RELU: h = fmaxf(ai[0] + bh[0], 0.0f); break;
    case CELL_LSTM: {
        float i_ = sigm(ai[0] + bh[0]), f_ = sigm(ai[1] + bh[1]), g_ = tanhf(ai[2] + bh[2]), o_ = sigm(ai[3] + bh[3]);
        float c = f_ * g.c[idx] + i_ * g_;
        g.c[idx] = c;
        h = o_ * tanhf(c);
        break;
    }
    default: { // GRU: b_hn stays inside r * (W_hn h + b_hn)
        float r = sigm(ai[0] + bh[0]), z = sigm(ai[1] + bh[1]);
        float nv = tanhf(ai[2] + r * bh[2]);
        h = (1.0f - z) * nv + z * g.h[idx];
        break;
    }
    }
    g.h[idx] = h;
    g.ys[(int64_t)n * g.ys_ld + k] = h;
}

} // namespace

extern "C" int xk_copy_strided(const xk_copy *c, void *stream)
{
    int64_t total = 1;
    for (int a = 0; a < c->rank; a++)
        total *= c->dims[a];
    if (total <= 0)
        return 0;
    int64_t blocks = (total + 255) / 256;
    copy_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, static_cast<cudaStream_t>(stream)>>>(*c, total);
    return (int)cudaGetLastError();
}

extern "C" int xk_rnn_gates(const xk_gates *g, void *stream)
{
    int total = g->N * g->H;
    if (total <= 0)
        return 0;
    gates_kernel<<<(total + 127) / 128, 128, 0, static_cast<cudaStream_t>(stream)>>>(*g);
    return (int)cudaGetLastError();
}

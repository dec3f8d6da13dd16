// rnn_bwd.cu — kernels of the rnn_bwd_direct engine (src/gpu/eng_rnn_bwd.c):
// backpropagation through time for rnn (tanh/relu), lstm and gru in f32.
// Simple on purpose: one thread per output element, plain dot products, every
// sum in a fixed order (results are deterministic, no atomics).  The forward
// recompute records every state and gate; the backward follows
// src/ops/rnn_bwd.c step for step.
#include "gpu/kern_rnn_bwd.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

enum { CELL_TANH = 0, CELL_RELU = 1, CELL_LSTM = 2, CELL_GRU = 3 };

__device__ __forceinline__ float sigm(float v) { return 1.0f / (1.0f + expf(-v)); }

__device__ __forceinline__ int time_of(const xk_rnnb &p, int s) { return p.d ? p.T - 1 - s : s; }

__global__ void fwd_step_kernel(xk_rnnb p)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= p.N * p.H)
        return;
    const int n = idx / p.H, k = idx % p.H, H = p.H, GH = p.G * p.H, s = p.s, t = time_of(p, s);
    const float *xr = p.xin + ((int64_t)t * p.N + n) * p.xin_ld;
    const float *hp = p.h + ((int64_t)s * p.N + n) * H;
    float a[4], b[4];
    for (int q = 0; q < p.G; q++) {
        const int row = q * H + k;
        float ai = p.bi ? p.bi[row] : 0.0f, ah = p.bh ? p.bh[row] : 0.0f;
        const float *wr = p.wi + (int64_t)row * p.Iw, *hr = p.wh + (int64_t)row * H;
        for (int j = 0; j < p.width; j++)
            ai += wr[j] * xr[j];
        for (int j = 0; j < H; j++)
            ah += hr[j] * hp[j];
        a[q] = ai;
        b[q] = ah;
    }
    const int64_t here = ((int64_t)s * p.N + n) * H + k, next = here + (int64_t)p.N * H;
    float *gt = p.gates ? p.gates + ((int64_t)s * p.N + n) * GH : nullptr;
    float h;
    switch (p.cell) {
    case CELL_TANH: h = tanhf(a[0] + b[0]); break;
    case CELL_RELU: h = fmaxf(a[0] + b[0], 0.0f); break;
    case CELL_LSTM: {
        float i_ = sigm(a[0] + b[0]), f_ = sigm(a[1] + b[1]), g_ = tanhf(a[2] + b[2]), o_ = sigm(a[3] + b[3]);
        float c = f_ * p.c[here] + i_ * g_;
        p.c[next] = c;
        h = o_ * tanhf(c);
        gt[k] = i_, gt[H + k] = f_, gt[2 * H + k] = g_, gt[3 * H + k] = o_;
        break;
    }
    default: { // GRU: b_hn stays inside r * (W_hn h + b_hn)
        float r = sigm(a[0] + b[0]), z = sigm(a[1] + b[1]);
        float nv = tanhf(a[2] + r * b[2]);
        h = (1.0f - z) * nv + z * hp[k];
        gt[k] = r, gt[H + k] = z, gt[2 * H + k] = nv;
        p.hn[here] = b[2];
        break;
    }
    }
    p.h[next] = h;
    p.ys[((int64_t)t * p.N + n) * p.ys_ld + k] = h;
}

__global__ void cell_bwd_kernel(xk_rnnb p)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= p.N * p.H)
        return;
    const int n = idx / p.H, k = idx % p.H, H = p.H, GH = p.G * p.H, s = p.s, t = time_of(p, s);
    const int64_t here = ((int64_t)s * p.N + n) * H + k, next = here + (int64_t)p.N * H;
    const float dh = p.dh[idx] + p.dcur[((int64_t)t * p.N + n) * p.dcur_ld + k];
    const float *gt = p.gates ? p.gates + ((int64_t)s * p.N + n) * GH : nullptr;
    float *dai = p.da_i + ((int64_t)s * p.N + n) * GH, *dah = p.da_h + ((int64_t)s * p.N + n) * GH;
    float direct = 0.0f;
    switch (p.cell) {
    case CELL_TANH: {
        float hn = p.h[next];
        dai[k] = dah[k] = dh * (1.0f - hn * hn);
        break;
    }
    case CELL_RELU:
        dai[k] = dah[k] = p.h[next] > 0.0f ? dh : 0.0f;
        break;
    case CELL_LSTM: {
        float cprev = p.c[here], cnew = p.c[next];
        float ig = gt[k], fg = gt[H + k], gg = gt[2 * H + k], og = gt[3 * H + k];
        float tc = tanhf(cnew);
        float dc = p.dc[idx] + dh * og * (1.0f - tc * tc);
        p.dc[idx] = dc * fg;
        dai[k] = dc * gg * ig * (1.0f - ig);
        dai[H + k] = dc * cprev * fg * (1.0f - fg);
        dai[2 * H + k] = dc * ig * (1.0f - gg * gg);
        dai[3 * H + k] = dh * tc * og * (1.0f - og);
        for (int q = 0; q < 4; q++)
            dah[q * H + k] = dai[q * H + k];
        break;
    }
    default: {
        float r = gt[k], z = gt[H + k], nv = gt[2 * H + k], hn = p.hn[here], hprev = p.h[here];
        float dn = dh * (1.0f - z) * (1.0f - nv * nv);
        float dz = dh * (hprev - nv) * z * (1.0f - z);
        float dr = dn * hn * r * (1.0f - r);
        direct = dh * z;
        dai[k] = dah[k] = dr;
        dai[H + k] = dah[H + k] = dz;
        dai[2 * H + k] = dn;
        dah[2 * H + k] = dn * r;
        break;
    }
    }
    p.direct[idx] = direct;
}

__global__ void dh_kernel(xk_rnnb p)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= p.N * p.H)
        return;
    const int n = idx / p.H, k = idx % p.H, H = p.H, GH = p.G * p.H;
    const float *dah = p.da_h + ((int64_t)p.s * p.N + n) * GH;
    float acc = p.direct[idx];
    for (int gi = 0; gi < GH; gi++)
        acc += p.wh[(int64_t)gi * H + k] * dah[gi];
    p.dh[idx] = acc;
}

__global__ void dx_kernel(xk_rnnb p, int64_t total)
{
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        const int k = (int)(e % p.width);
        const int64_t tn = e / p.width;
        const int t = (int)(tn / p.N), n = (int)(tn % p.N), s = time_of(p, t), GH = p.G * p.H;
        const float *dai = p.da_i + ((int64_t)s * p.N + n) * GH;
        float acc = 0.0f;
        for (int gi = 0; gi < GH; gi++)
            acc += p.wi[(int64_t)gi * p.Iw + k] * dai[gi];
        p.dprev[e] += acc;
    }
}

// Columns of one gate row gi: [0, width) dW_ih, [width, width+H) dW_hh, then db_ih, db_hh.
__global__ void wgrad_kernel(xk_rnnb p, int64_t total)
{
    const int cols = p.width + p.H + 2, GH = p.G * p.H;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        const int gi = (int)(e / cols), col = (int)(e % cols);
        float acc = 0.0f;
        for (int s = 0; s < p.T; s++) {
            const int t = time_of(p, s);
            for (int n = 0; n < p.N; n++) {
                const int64_t row = (int64_t)s * p.N + n;
                if (col < p.width)
                    acc += p.da_i[row * GH + gi] * p.xin[((int64_t)t * p.N + n) * p.xin_ld + col];
                else if (col < p.width + p.H)
                    acc += p.da_h[row * GH + gi] * p.h[row * p.H + (col - p.width)];
                else if (col == p.width + p.H)
                    acc += p.da_i[row * GH + gi];
                else
                    acc += p.da_h[row * GH + gi];
            }
        }
        if (col < p.width)
            p.dwi[(int64_t)gi * p.Iw + col] = acc;
        else if (col < p.width + p.H)
            p.dwh[(int64_t)gi * p.H + (col - p.width)] = acc;
        else if (col == p.width + p.H)
            p.dbi[gi] = acc;
        else
            p.dbh[gi] = acc;
    }
}

unsigned grid_of(int64_t total, int block)
{
    int64_t b = (total + block - 1) / block;
    return (unsigned)(b < 65536 ? b : 65536);
}

} // namespace

extern "C" int xk_rnnb_fwd_step(const xk_rnnb *p, void *stream)
{
    int total = p->N * p->H;
    if (total <= 0)
        return 0;
    fwd_step_kernel<<<grid_of(total, 128), 128, 0, static_cast<cudaStream_t>(stream)>>>(*p);
    return (int)cudaGetLastError();
}

extern "C" int xk_rnnb_cell_bwd(const xk_rnnb *p, void *stream)
{
    int total = p->N * p->H;
    if (total <= 0)
        return 0;
    cell_bwd_kernel<<<grid_of(total, 128), 128, 0, static_cast<cudaStream_t>(stream)>>>(*p);
    return (int)cudaGetLastError();
}

extern "C" int xk_rnnb_dh(const xk_rnnb *p, void *stream)
{
    int total = p->N * p->H;
    if (total <= 0)
        return 0;
    dh_kernel<<<grid_of(total, 128), 128, 0, static_cast<cudaStream_t>(stream)>>>(*p);
    return (int)cudaGetLastError();
}

extern "C" int xk_rnnb_dx(const xk_rnnb *p, void *stream)
{
    int64_t total = (int64_t)p->T * p->N * p->width;
    if (total <= 0)
        return 0;
    dx_kernel<<<grid_of(total, 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(*p, total);
    return (int)cudaGetLastError();
}

extern "C" int xk_rnnb_wgrad(const xk_rnnb *p, void *stream)
{
    int64_t total = (int64_t)p->G * p->H * (p->width + p->H + 2);
    if (total <= 0)
        return 0;
    wgrad_kernel<<<grid_of(total, 128), 128, 0, static_cast<cudaStream_t>(stream)>>>(*p, total);
    return (int)cudaGetLastError();
}

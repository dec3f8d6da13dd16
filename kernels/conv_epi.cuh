/* conv_epi.cuh — the fused epilogue of the forward conv kernels
 * (conv_igemm.cu, conv_direct.cu, conv_dw.cu): kconv_epi's steps applied to
 * one f32 accumulator at y coordinate (n, k, o, p, q).  The branch on each
 * step's op is uniform across a launch.  The formulas are those of
 * src/ops/pointwise_modes.def, evaluated in f32. */
#ifndef XDNN_CONV_EPI_CUH
#define XDNN_CONV_EPI_CUH

#include "kern_common.cuh"

static __device__ __forceinline__ float kepi_act(int op, float a, float p0, float p1, float p2)
{
    switch (op) {
    case KEPI_RELU: return a != a ? a : fminf(p1, a > p0 ? a : p2 != 0.f ? p0 + p2 * (a - p0) : p0);
    case KEPI_GELU_ERF: return 0.5f * a * (1.f + erff(a * 0.7071067811865476f));
    case KEPI_GELU_TANH: return 0.5f * a * (1.f + tanhf(0.7978845608028654f * (a + 0.044715f * a * a * a)));
    case KEPI_SWISH: return a / (1.f + expf(-p0 * a));
    case KEPI_SIGMOID: return 1.f / (1.f + expf(-a));
    case KEPI_TANH: return tanhf(a);
    default: return a;
    }
}

/* v after every step; coordinates in y's 5-slot view (o, p, q: depth,
 * height, width, unit slots 0). */
static __device__ __forceinline__ float kepi_apply(const kconv_epi &e, float v, int64_t n, int64_t k, int64_t o,
                                                   int64_t p, int64_t q)
{
    for (int i = 0; i < e.n; i++) {
        const kepi_step &s = e.s[i];
        if (s.op <= KEPI_MUL_T) {
            const float t = kld(s.t, s.dt, n * s.st[0] + k * s.st[1] + o * s.st[2] + p * s.st[3] + q * s.st[4]);
            v = s.op == KEPI_ADD_T ? v + t : s.op == KEPI_SUB_T ? v - t : s.op == KEPI_RSUB_T ? t - v : v * t;
        } else if (s.op == KEPI_ADD_S) {
            v += s.p0;
        } else if (s.op == KEPI_MUL_S) {
            v *= s.p0;
        } else {
            v = kepi_act(s.op, v, s.p0, s.p1, s.p2);
        }
    }
    return v;
}

#endif

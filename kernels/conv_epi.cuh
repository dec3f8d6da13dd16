/* conv_epi.cuh — the fused epilogue of the forward conv kernels
 * (conv_igemm.cu, conv_direct.cu, conv_dw.cu, conv_igemm_wgmma_sm90a.cu) and
 * of their dgrad (a relu_bwd mask): kconv_epi's steps applied to one f32
 * accumulator at y coordinate (n, k, o, p, q).  The branch on each
 * step's op is uniform across a launch.  The formulas are those of
 * src/ops/pointwise_modes.def, evaluated in f32. */
#ifndef XDNN_CONV_EPI_CUH
#define XDNN_CONV_EPI_CUH

#include "kern_common.cuh"

/* relu_bwd(v, t) as pointwise_modes.def writes it: a NaN t takes the slope
 * branch (v * p2: 0, or NaN where v is Inf or NaN, as the reference). */
static __device__ __forceinline__ float kepi_relu_bwd(float v, float t, float p0, float p1, float p2)
{
    return t > p0 ? (t < p1 ? v : 0.f) : v * p2;
}

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

/* Every step over a thread's tile of values v[r][c] at y coordinates
 * (n, k, o, p, q) = (rc[r][0], kc[c], rc[r][1], rc[r][2], rc[r][3]); rows
 * with rv false and columns with cv false are left alone (past M or K).
 * The step loop is outside and the tile loops inside, fully unrolled: a
 * step's NR*NC operand loads are issued together instead of one dependent
 * load per element (a per-element step loop serialised them on L2 latency:
 * +50% on a 0.07 ms conv), and the op branch is taken once per step. */
template <int NR, int NC>
static __device__ __forceinline__ void kepi_tile(const kconv_epi &e, float (&v)[NR][NC], const int (&rc)[NR][4],
                                                 const int (&kc)[NC], const bool (&rv)[NR], const bool (&cv)[NC])
{
    for (int i = 0; i < e.n; i++) {
        const kepi_step &s = e.s[i];
        const int op = s.op;
        if (op <= KEPI_RELU_BWD) {
            float t[NR][NC];
#pragma unroll
            for (int r = 0; r < NR; r++) {
                const int64_t row = rc[r][0] * s.st[0] + rc[r][1] * s.st[2] + rc[r][2] * s.st[3] + rc[r][3] * s.st[4];
#pragma unroll
                for (int c = 0; c < NC; c++)
                    t[r][c] = rv[r] && cv[c] ? kld(s.t, s.dt, row + kc[c] * s.st[1]) : 0.f;
            }
#pragma unroll
            for (int r = 0; r < NR; r++)
#pragma unroll
                for (int c = 0; c < NC; c++)
                    v[r][c] = op == KEPI_RELU_BWD ? kepi_relu_bwd(v[r][c], t[r][c], s.p0, s.p1, s.p2)
                            : op == KEPI_ADD_T ? v[r][c] + t[r][c]
                            : op == KEPI_SUB_T ? v[r][c] - t[r][c]
                            : op == KEPI_RSUB_T ? t[r][c] - v[r][c] : v[r][c] * t[r][c];
            continue;
        }
        const float p0 = s.p0, p1 = s.p1, p2 = s.p2;
#define KEPI_EACH(expr)                                                                                              \
    _Pragma("unroll") for (int r = 0; r < NR; r++) _Pragma("unroll") for (int c = 0; c < NC; c++)                   \
    {                                                                                                                \
        const float a = v[r][c];                                                                                     \
        v[r][c] = (expr);                                                                                            \
    }
        switch (op) {
        case KEPI_ADD_S: KEPI_EACH(a + p0) break;
        case KEPI_MUL_S: KEPI_EACH(a * p0) break;
        case KEPI_RELU: KEPI_EACH(kepi_act(KEPI_RELU, a, p0, p1, p2)) break;
        case KEPI_GELU_ERF: KEPI_EACH(kepi_act(KEPI_GELU_ERF, a, p0, p1, p2)) break;
        case KEPI_GELU_TANH: KEPI_EACH(kepi_act(KEPI_GELU_TANH, a, p0, p1, p2)) break;
        case KEPI_SWISH: KEPI_EACH(kepi_act(KEPI_SWISH, a, p0, p1, p2)) break;
        case KEPI_SIGMOID: KEPI_EACH(kepi_act(KEPI_SIGMOID, a, p0, p1, p2)) break;
        case KEPI_TANH: KEPI_EACH(kepi_act(KEPI_TANH, a, p0, p1, p2)) break;
        default: break;
        }
#undef KEPI_EACH
    }
}

/* v after every step, one element (the direct kernel: one output at a
 * time); coordinates in y's 5-slot view (o, p, q: depth, height, width,
 * unit slots 0). */
static __device__ __forceinline__ float kepi_apply(const kconv_epi &e, float v, int64_t n, int64_t k, int64_t o,
                                                   int64_t p, int64_t q)
{
    for (int i = 0; i < e.n; i++) {
        const kepi_step &s = e.s[i];
        if (s.op <= KEPI_RELU_BWD) {
            const float t = kld(s.t, s.dt, n * s.st[0] + k * s.st[1] + o * s.st[2] + p * s.st[3] + q * s.st[4]);
            v = s.op == KEPI_RELU_BWD ? kepi_relu_bwd(v, t, s.p0, s.p1, s.p2)
              : s.op == KEPI_ADD_T ? v + t : s.op == KEPI_SUB_T ? v - t : s.op == KEPI_RSUB_T ? t - v : v * t;
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

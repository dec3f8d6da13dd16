/* conv_pack.c — the channel-padded channels-last copies of a forward conv's
 * x and w (conv_pack.h). */
#include "gpu/conv_pack.h"

#include <string.h>

bool gpu_conv_pack_plan(const kconv_params *k, int64_t vec, gconv_packed *pk)
{
    memset(pk, 0, sizeof *pk);
    pk->k = *k;
    const int64_t Cp = (k->C + vec - 1) / vec * vec;
    const int64_t sp = k->in[0] * k->in[1] * k->in[2], taps = k->win[0] * k->win[1] * k->win[2];
    const int64_t sx[5] = {sp * Cp, 1, k->in[1] * k->in[2] * Cp, k->in[2] * Cp, Cp};
    const int64_t sw[5] = {taps * Cp, 1, k->win[1] * k->win[2] * Cp, k->win[2] * Cp, Cp};
    pk->k.C = Cp;
    memcpy(pk->k.sx, sx, sizeof sx);
    memcpy(pk->k.sw, sw, sizeof sw);
    if (k->N * sp * Cp >= ((int64_t)1 << 31) || k->K * taps * Cp >= ((int64_t)1 << 31))
        return false;
    const size_t esz = k->dt_x == KDT_F32 ? 4 : 2;
    pk->xbytes = ((size_t)(k->N * sp * Cp) * esz + 255) / 256 * 256;
    pk->wbytes = ((size_t)(k->K * taps * Cp) * esz + 255) / 256 * 256;
    pk->on = true;
    return true;
}

/* Measured (H100, session 7, bench/RESULTS-conv.md): with C padded to one
 * 16-byte chunk per tap (Cp * element size <= 16: the C = 3 stem) the
 * kernels load one chunk per tap and run the padded GEMM at ~65 TFLOP/s
 * (stem N = 32: conv_igemm_wgmma 0.31 ms, conv_igemm 0.34; N = 256: 2.32),
 * about 4x below the unpacked rate the engines' gemm_us assumes. */
double gpu_conv_pack_cost_us(const kconv_params *k, const gconv_packed *pk, double gemm_us)
{
    const double chunk_per_tap = pk->k.C * (k->dt_x == KDT_F32 ? 4 : 2) <= 16 ? 4.0 : 1.0;
    return chunk_per_tap * gemm_us * (double)pk->k.C / (double)k->C + 4.0 +
           2.0 * (double)(pk->xbytes + pk->wbytes) / 2.5e6;
}

int gpu_conv_pack_run(const kconv_params *k, const gconv_packed *pk, const void *x, const void *w, char *ws,
                      void *stream)
{
    const int64_t xd[5] = {k->N, k->C, k->in[0], k->in[1], k->in[2]};
    const int64_t wd[5] = {k->K, k->C, k->win[0], k->win[1], k->win[2]};
    int e = kconv_pack_cl(xd, k->sx, k->dt_x, x, ws, pk->k.C, stream);
    if (e == 0)
        e = kconv_pack_cl(wd, k->sw, k->dt_w, w, ws + pk->xbytes, pk->k.C, stream);
    return e;
}

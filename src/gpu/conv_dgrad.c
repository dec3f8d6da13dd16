/* conv_dgrad.c — a conv_dgrad as stride-phase forward convs on an
 * implicit-GEMM kernel: plan and launches (conv_dgrad.h). */
#include "gpu/conv_dgrad.h"

#include <string.h>

bool gpu_conv_dgrad_plan(const gconv_problem *cp, int sm_count, gconv_split_fn split, gconv_dgrad *dg, char *why,
                         size_t len)
{
    memset(dg, 0, sizeof *dg);
    dg->nph = gpu_conv_dgrad_phases(cp, dg->ph, GCONV_MAX_PHASES, why, len);
    if (dg->nph < 0)
        return false;
    const kconv_params *k = &cp->kp;
    /* each tap lands in exactly one phase: K*C*taps elements in all, packed in dy's type */
    const size_t wt = (size_t)(k->K * k->C * k->win[0] * k->win[1] * k->win[2]) * (k->dt_y == KDT_F32 ? 4 : 2);
    size_t part = 0;
    for (int i = 0; i < dg->nph; i++) {
        const gconv_phase *q = &dg->ph[i];
        dg->splits[i] = q->none || q->empty ? 1 : split(&q->f, sm_count);
        const size_t b = gpu_conv_igemm_split_ws_bytes(&q->f, dg->splits[i]);
        part = b > part ? b : part;
    }
    dg->split_off = (wt + 255) / 256 * 256;
    dg->ws_total = part ? dg->split_off + part : dg->split_off;
    return true;
}

void gpu_conv_dgrad_unsplit(gconv_dgrad *dg)
{
    for (int i = 0; i < dg->nph; i++)
        dg->splits[i] = 1;
}

static bool same_lattice(const kconv_params *a, const kconv_params *b)
{
    return a->N == b->N && a->out[0] == b->out[0] && a->out[1] == b->out[1] && a->out[2] == b->out[2];
}

void gpu_conv_dgrad_fold(gconv_dgrad *dg, int64_t align, int max_zero)
{
    if (max_zero > GCONV_MAX_ZERO)
        max_zero = GCONV_MAX_ZERO;
    for (int i = 0; i < dg->nph; i++) {
        const gconv_phase *q = &dg->ph[i];
        if (q->none || q->empty || dg->splits[i] > 1) /* split-K stores through the reduction kernel */
            continue;
        for (int j = 0; j < dg->nph && dg->nzero[i] < max_zero; j++) {
            const gconv_phase *e = &dg->ph[j];
            const int64_t off = e->dx_off - q->dx_off;
            /* every phase's dx strides are s * dx's: the same lattice is the same positions shifted by off */
            if (!e->empty || e->none || dg->folded[j] || off % align || !same_lattice(&e->f, &q->f))
                continue;
            dg->folded[j] = true;
            dg->zoff[i][dg->nzero[i]++] = off;
        }
    }
}

int gpu_conv_dgrad_launches(const gconv_dgrad *dg)
{
    int n = 0;
    for (int i = 0; i < dg->nph; i++)
        n += dg->ph[i].none || dg->folded[i] ? 0 : dg->ph[i].empty ? 1 : 2;
    return n;
}

int gpu_conv_dgrad_empty(const gconv_dgrad *dg)
{
    int n = 0;
    for (int i = 0; i < dg->nph; i++)
        n += dg->ph[i].empty && !dg->ph[i].none;
    return n;
}

void gpu_conv_dgrad_phase_epi(const kconv_epi *epi, const gconv_phase *q, kconv_epi *out)
{
    *out = *epi;
    for (int j = 0; j < out->n; j++) {
        kepi_step *s = &out->s[j];
        if (s->op > KEPI_RELU_BWD || !s->t) /* no tensor operand */
            continue;
        s->t = (const char *)s->t + (size_t)q->dx_off * (s->dt == KDT_F32 ? 4 : 2);
        for (int d = 0; d < 5; d++)
            s->st[d] = q->f.sy[d];
    }
}

/* Phase i's launches before its GEMM: the zero fill of an empty phase no GEMM's store writes (*gemm false), or
 * (pack) the pack of its flipped weights (*gemm true); nothing for a phase without positions or a folded one. */
static int phase_prep(const kconv_params *k, const gconv_dgrad *dg, int i, const void *w, void *dx, char *ws,
                      bool pack, bool *gemm, void *stream)
{
    const gconv_phase *q = &dg->ph[i];
    const size_t esz_w = k->dt_y == KDT_F32 ? 4 : 2, esz_x = k->dt_x == KDT_F32 ? 4 : 2;
    *gemm = false;
    if (q->none || dg->folded[i])
        return 0;
    if (q->empty)
        return kconv_zero_lattice(&q->f, (char *)dx + (size_t)q->dx_off * esz_x, stream);
    *gemm = true;
    if (!pack)
        return 0;
    return kconv_pack_phase(k, w, ws + (size_t)q->wt_off * esz_w, q->f.dt_w, q->r0, q->rstep, q->taps, stream);
}

int gpu_conv_dgrad_run_one(const gconv_problem *cp, const gconv_dgrad *dg, const void *dy, const void *w, void *dx,
                           const kconv_epi *epi, char *ws, gconv_phases_gemm all, const void *ctx, void *stream)
{
    int e = 0, g = -1, n = 0; /* g: a GEMM phase, whose dx strides every phase shares */
    int64_t off[8], r0[8][KCONV_SP], rstep[8][KCONV_SP], taps[8][KCONV_SP];
    for (int i = 0; i < dg->nph && e == 0; i++) {
        bool gemm;
        e = phase_prep(&cp->kp, dg, i, w, dx, ws, false, &gemm, stream);
        if (!gemm)
            continue;
        g = i;
        if (n < 8) {
            const gconv_phase *q = &dg->ph[i];
            off[n] = q->wt_off;
            memcpy(r0[n], q->r0, sizeof r0[n]);
            memcpy(rstep[n], q->rstep, sizeof rstep[n]);
            memcpy(taps[n], q->taps, sizeof taps[n]);
        }
        n++;
    }
    if (e || g < 0)
        return e;
    /* the weights of every GEMM phase in one launch where it holds them (8 at most), else one by one */
    if (n > 8 || kconv_pack_phases(&cp->kp, w, ws, dg->ph[g].f.dt_w, n, off, (const int64_t(*)[KCONV_SP])r0,
                                   (const int64_t(*)[KCONV_SP])rstep, (const int64_t(*)[KCONV_SP])taps, stream) != 0)
        for (int i = 0; i < dg->nph && e == 0; i++) {
            bool gemm;
            e = !dg->ph[i].empty ? phase_prep(&cp->kp, dg, i, w, dx, ws, true, &gemm, stream) : 0;
        }
    if (e)
        return e;
    kconv_epi pe;
    if (epi && epi->n) { /* the phases' strides, dx's offsets (the kernel adds each phase's) */
        gpu_conv_dgrad_phase_epi(epi, &dg->ph[g], &pe);
        for (int j = 0; j < pe.n; j++)
            pe.s[j].t = epi->s[j].t;
    }
    return all(ctx, dg, dy, ws, dx, epi && epi->n ? &pe : NULL, stream);
}

int gpu_conv_dgrad_run(const gconv_problem *cp, const gconv_dgrad *dg, const void *dy, const void *w, void *dx,
                       const kconv_epi *epi, char *ws, gconv_phase_gemm gemm, const void *ctx, void *stream)
{
    const kconv_params *k = &cp->kp;
    const size_t esz_w = k->dt_y == KDT_F32 ? 4 : 2, esz_x = k->dt_x == KDT_F32 ? 4 : 2;
    float *part = (float *)(void *)(ws + dg->split_off);
    int e = 0;
    for (int i = 0; i < dg->nph && e == 0; i++) {
        const gconv_phase *q = &dg->ph[i];
        bool run;
        e = phase_prep(k, dg, i, w, dx, ws, true, &run, stream);
        if (e || !run)
            continue;
        kconv_epi pe;
        if (epi && epi->n)
            gpu_conv_dgrad_phase_epi(epi, q, &pe);
        e = gemm(ctx, dg, i, dy, ws + (size_t)q->wt_off * esz_w, (char *)dx + (size_t)q->dx_off * esz_x,
                 epi && epi->n ? &pe : NULL, part, stream);
    }
    return e;
}

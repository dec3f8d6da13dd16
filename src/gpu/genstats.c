/* genstats.c — pairing a forward conv with the training batchnorm that reads
 * its y, so that the conv's store writes the batchnorm's statistics partials
 * (see genstats.h).  Decided after the engine selection, from the engines
 * chosen: both engines must agree (conv_wgmma.h and eng_norm.h say what each
 * needs); anything else keeps the batchnorm's own reduce. */
#include "gpu/genstats.h"

#include "gpu/conv_wgmma.h"
#include "gpu/eng_norm.h"
#include "gpu/engine.h"

#include <stdlib.h>
#include <string.h>

extern const gpu_engine gpu_engine_conv_igemm_wgmma, gpu_engine_norm_welford;

/* Off until it measures faster on the ResNet-50 step (bench/RESULTS-norm.md, session 8): XDNN_GENSTATS=1
 * turns it on, XDNN_NO_GENSTATS=1 off (that one wins). */
enum { GENSTATS_DEFAULT = 0 };

static bool env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

bool gpu_genstats_enabled(void)
{
    return !env_set("XDNN_NO_GENSTATS") && (GENSTATS_DEFAULT || env_set("XDNN_GENSTATS"));
}

void gpu_genstats_unpair(gplan *pl, gpart *p)
{
    if (p->genstats != GS_NONE && p->gen_peer >= 0 && p->gen_peer < pl->nparts)
        pl->parts[p->gen_peer].genstats = GS_NONE;
    p->genstats = GS_NONE;
}

int gpu_genstats_pair(gplan *pl, const gpu_device *dev, FILE *log)
{
    int pairs = 0;
    for (int i = 0; i < pl->nparts; i++)
        pl->parts[i].genstats = GS_NONE;
    /* a dynamic plan keeps its engines across resizes: the M tiles would change under it */
    if (!gpu_genstats_enabled() || pl->g->sizes_as_args)
        return 0;
    for (int i = 0; i < pl->nparts; i++) {
        gpart *bn = &pl->parts[i];
        char why[256];
        int x = -1;
        int64_t C = 0, M = 0;
        if (bn->engine != &gpu_engine_norm_welford || bn->once ||
            !gpu_norm_genstats_ok(pl, bn, dev, &x, &C, &M, why, sizeof why))
            continue;
        const int prod = pl->g->t[x].producer;
        if (prod < 0)
            continue;
        gpart *cv = &pl->parts[pl->part_of[prod]];
        if (cv->engine != &gpu_engine_conv_igemm_wgmma || cv->genstats != GS_NONE || cv->once || cv->id >= bn->id ||
            !gpu_conv_wgmma_genstats_ok(pl, cv, dev, x, C, M, why, sizeof why))
            continue;
        cv->genstats = GS_WRITE, cv->gen_peer = bn->id;
        bn->genstats = GS_READ, bn->gen_peer = cv->id;
        cv->ws_bytes = cv->engine->workspace(pl, cv, dev);
        bn->ws_bytes = bn->engine->workspace(pl, bn, dev);
        pairs++;
        if (log)
            fprintf(log, "genstats: partition %d %s stores the statistics of %s for partition %d %s\n", cv->id,
                    cv->name, pl->g->t[x].name, bn->id, bn->name);
    }
    return pairs;
}

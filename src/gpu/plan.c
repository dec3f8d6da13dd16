/* plan.c — the device workspace layout: one buffer for every materialized
 * intermediate and every partition's engine scratch, offsets chosen by
 * liveness (greedy first fit, largest first), so execution makes no cudaMalloc.
 * The results of once partitions (plan-time constants, constfold.c) live
 * through the whole plan, stacked after everything else (from const_base),
 * so that a plan can keep them in memory of its own while the caller's
 * workspace holds the rest.
 * Inputs, weights and outputs have their own buffers and are never aliased. */
#include "gpu/partition.h"

#include <stdint.h>
#include <stdlib.h>

enum { WS_ALIGN = 256 };

typedef struct ws_item {
    size_t bytes;
    int first, last;   /* partitions during which it is live, inclusive */
    size_t *offset;    /* where to write the result */
    size_t off;
} ws_item;

static int by_size_desc(const void *a, const void *b)
{
    const ws_item *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : x->first - y->first;
}

static size_t align_up(size_t v) { return (v + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN; }

void gpu_plan_workspace(gplan *p)
{
    ggraph *g = p->g;
    p->offset = arena_alloc(g->ar, ((size_t)g->nt + 1) * sizeof *p->offset);
    for (int t = 0; t < g->nt; t++)
        p->offset[t] = SIZE_MAX;
    ws_item *items = arena_alloc(g->ar, ((size_t)g->nt + (size_t)p->nparts + 1) * sizeof *items);
    int *consts = arena_alloc(g->ar, ((size_t)g->nt + 1) * sizeof *consts);
    int n = 0, nconsts = 0;
    for (int t = 0; t < g->nt; t++) {
        const gtensor *x = &g->t[t];
        if (!p->materialized[t] || x->is_input || x->is_output || x->is_scalar || x->producer < 0 || x->view_of >= 0)
            continue;
        int first = p->part_of[x->producer], last = first;
        bool once = p->parts[first].once;
        for (int v = 0; v < g->nt; v++) /* a concat's pieces written in place (views.c): from their writers on */
            if (g->t[v].view_of == t && g->t[v].producer >= 0) {
                int w = p->part_of[g->t[v].producer];
                first = w < first ? w : first;
                once |= p->parts[w].once;
            }
        if (once) { /* computed once, read by every later execute: placed last */
            consts[nconsts++] = t;
            continue;
        }
        for (int k = 0; k < g->nn; k++) /* its readers, and its views' readers */
            for (int j = 0; j < g->n[k].nin; j++)
                if (gg_storage(g, g->n[k].in[j]) == t && p->part_of[k] > last)
                    last = p->part_of[k];
        items[n++] = (ws_item){align_up(gg_span_bytes(x)), first, last, &p->offset[t], 0};
    }
    for (int i = 0; i < p->nparts; i++)
        if (p->parts[i].ws_bytes)
            /* a genstats batchnorm's workspace receives its statistics from the conv's store: live from there,
             * and to the plan's end, so that a rerun of partitions from the batchnorm on
             * (xdnn_plan_execute_partitions) finds them where a full execute left them (ResNet-50 N=256:
             * +225 MB on 10.8 GB) */
            items[n++] = (ws_item){align_up(p->parts[i].ws_bytes), p->parts[i].genstats == GS_READ ?
                                   p->parts[i].gen_peer : i, p->parts[i].genstats == GS_READ ? p->nparts - 1 : i,
                                   &p->parts[i].ws_offset, 0};
    qsort(items, (size_t)n, sizeof *items, by_size_desc);

    size_t total = 0;
    for (int i = 0; i < n; i++) {
        /* Lowest offset clear of every placed item whose lifetime overlaps:
         * try 0 and the end of each such item. */
        size_t best = SIZE_MAX;
        for (int c = -1; c < i; c++) {
            size_t cand = c < 0 ? 0 : items[c].off + items[c].bytes;
            if (c >= 0 && (items[c].last < items[i].first || items[c].first > items[i].last))
                continue;
            bool clear = true;
            for (int j = 0; j < i && clear; j++) {
                bool live = !(items[j].last < items[i].first || items[j].first > items[i].last);
                if (live && cand < items[j].off + items[j].bytes && items[j].off < cand + items[i].bytes)
                    clear = false;
            }
            if (clear && cand < best)
                best = cand;
        }
        items[i].off = best;
        *items[i].offset = best;
        if (best + items[i].bytes > total)
            total = best + items[i].bytes;
    }
    p->const_base = total;
    for (int i = 0; i < nconsts; i++) {
        p->offset[consts[i]] = total;
        total += align_up(gg_span_bytes(&g->t[consts[i]]));
    }
    p->ws_total = total;
}

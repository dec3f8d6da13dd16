/* plan_select.c — choose the engine of every partition: the tune cache when
 * it has the partition's signature, timing every candidate under --tune, else
 * the backend's heuristics.
 *
 * CPU: a partition is one node and the only engine is the CPU reference, so
 * tuning times that one candidate and says so; its entry still records the
 * measured time, which `xdnn cache list` shows.
 * GPU: partitions and candidates come from the backend (plan_gpu_hooks.h);
 * the winner is forced with "PART=ENGINE[:knobs]" like `run --engine`. */
#include "plan/plan.h"

#include "gpu/gpu.h"
#include "ops/op.h"
#include "plan/tune.h"

#include <stdlib.h>
#include <string.h>

void plan_parts_free(plan_part *parts, int n)
{
    for (int i = 0; parts && i < n; i++) {
        free(parts[i].name);
        free(parts[i].ops);
        free(parts[i].sig);
        for (int k = 0; k < parts[i].ncands; k++)
            free(parts[i].cands[k].reason);
        free(parts[i].cands);
    }
    free(parts);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void plan_time_stats(double *ms, int n, double *median, double *min, double *max, double *p90)
{
    if (n <= 0) {
        *median = *min = *max = *p90 = 0;
        return;
    }
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    *min = ms[0];
    *max = ms[n - 1];
    *median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    /* nearest rank: the smallest time that at least 90% of the runs do not exceed */
    int k = (int)((9 * n + 9) / 10) - 1;
    *p90 = ms[k < 0 ? 0 : k];
}

char **plan_force_strings(const plan_part *parts, int n)
{
    char **f = calloc((size_t)(n ? n : 1), sizeof *f);
    for (int i = 0; f && i < n; i++) {
        size_t len = strlen(parts[i].name) + strlen(parts[i].engine) + strlen(parts[i].knobs) + 3;
        if ((f[i] = malloc(len)) != NULL)
            snprintf(f[i], len, "%s=%s%s%s", parts[i].name, parts[i].engine, parts[i].knobs[0] ? ":" : "",
                     parts[i].knobs);
    }
    return f;
}

void plan_force_free(char **force, int n)
{
    for (int i = 0; force && i < n; i++)
        free(force[i]);
    free(force);
}

/* ---------------------------------------------------------------- CPU */

static xdnn_status time_cpu_nodes(run_state *st, const select_opts *o, double *median_ms, xdnn_diags_t *d)
{
    size_t nn = st->g->nnodes;
    int iters = o->iters > 0 ? o->iters : 1;
    double *t = calloc(nn * (size_t)iters + 1, sizeof *t);
    if (!t)
        return XDNN_ERR_NOMEM;
    xdnn_status s = XDNN_OK;
    for (int w = 0; w < o->warmup && s == XDNN_OK; w++)
        s = exec_cpu_run(st, d);
    for (int it = 0; it < iters && s == XDNN_OK; it++) {
        s = exec_cpu_run(st, d);
        for (size_t i = 0; i < nn; i++)
            t[i * (size_t)iters + (size_t)it] = st->node_ms[i];
    }
    for (size_t i = 0; i < nn && s == XDNN_OK; i++) {
        double mn, mx, p90;
        plan_time_stats(t + i * (size_t)iters, iters, &median_ms[i], &mn, &mx, &p90);
    }
    free(t);
    return s;
}

static xdnn_status select_cpu(run_state *st, const select_opts *o, plan_part *parts, xdnn_diags_t *d)
{
    xgraph *g = st->g;
    size_t nn = g->nnodes;
    arena *a = arena_create();
    for (size_t i = 0; i < nn; i++) {
        plan_part *p = &parts[i];
        p->name = strdup(g->nodes[i].name);
        p->ops = strdup(op_get(g->nodes[i].op)->name);
        p->sig = strdup(tune_node_signature(g, &g->nodes[i], a));
        snprintf(p->engine, sizeof p->engine, "cpu_reference");
        p->candidates = 1;
        p->tuned_ms = -1;
    }
    arena_destroy(a);
    for (size_t i = 0; i < nn; i++)
        if (!parts[i].name || !parts[i].ops || !parts[i].sig)
            return XDNN_ERR_NOMEM;
    if (!o->tune) {
        for (size_t i = 0; i < nn; i++) {
            tune_entry e;
            if (!tune_cache_lookup(o->fp, parts[i].sig, &e))
                continue;
            if (strcmp(e.engine, "cpu_reference") == 0) { /* anything else is not ours to trust */
                parts[i].from_cache = true;
                parts[i].tuned_ms = e.ms;
            }
            tune_entry_free(&e);
        }
        return XDNN_OK;
    }
    double *med = calloc(nn + 1, sizeof *med);
    tune_entry *entries = calloc(nn + 1, sizeof *entries);
    xdnn_status s = med && entries ? time_cpu_nodes(st, o, med, d) : XDNN_ERR_NOMEM;
    char when[32];
    tune_now(when, sizeof when);
    for (size_t i = 0; i < nn && s == XDNN_OK; i++) {
        parts[i].tuned_ms = med[i];
        tune_entry *e = &entries[i];
        e->sig = parts[i].sig; /* borrowed; not freed below */
        snprintf(e->engine, sizeof e->engine, "cpu_reference");
        e->ms = med[i];
        e->candidates = 1;
        snprintf(e->when, sizeof e->when, "%s", when);
        if (o->log)
            fprintf(o->log, "tune %s (%s): 1 candidate (the CPU has one engine per op): cpu_reference %.4f ms, kept\n",
                    parts[i].name, parts[i].ops, med[i]);
    }
    if (s == XDNN_OK)
        s = tune_cache_store(o->fp, entries, (int)nn, d);
    free(entries);
    free(med);
    return s;
}

/* ---------------------------------------------------------------- GPU */

static int find_part(plan_part *parts, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(parts[i].name, name) == 0)
            return i;
    return -1;
}

static char *ops_of_partition(const xgraph *g, const char *partition)
{
    size_t cap = strlen(partition) * 4 + 16, len = 0;
    char *s = calloc(cap, 1);
    const char *p = partition;
    while (s && *p) {
        size_t n = strcspn(p, "+");
        const char *op = "?";
        for (size_t i = 0; i < g->nnodes; i++)
            if (strlen(g->nodes[i].name) == n && strncmp(g->nodes[i].name, p, n) == 0)
                op = op_get(g->nodes[i].op)->name;
        len += (size_t)snprintf(s + len, cap - len, "%s%s", len ? "+" : "", op);
        if (len >= cap)
            break;
        p += n;
        if (*p == '+')
            p++;
    }
    return s;
}

/* The candidate records of a measured partition: one per engine the
 * enumeration asked, supported ones with their best measured time (over
 * their knob variants), the others with their reason; the engine that ran
 * is the chosen one.  The cost model was not asked (cost_us 0). */
static xdnn_status record_measured(plan_part *f, const plan_gpu_choice *c, int nc)
{
    f->cands = calloc((size_t)nc + 1, sizeof *f->cands);
    if (!f->cands)
        return XDNN_ERR_NOMEM;
    for (int i = 0; i < nc; i++) {
        if (strcmp(c[i].partition, f->name) != 0)
            continue;
        plan_candidate *r = NULL;
        for (int k = 0; k < f->ncands && !r; k++)
            if (strcmp(f->cands[k].engine, c[i].engine) == 0)
                r = &f->cands[k];
        if (!r) {
            r = &f->cands[f->ncands++];
            snprintf(r->engine, sizeof r->engine, "%s", c[i].engine);
            r->ms = -1;
            r->chosen = strcmp(c[i].engine, f->engine) == 0;
            if (!(r->reason = strdup(c[i].supported ? "" : c[i].why)))
                return XDNN_ERR_NOMEM;
        }
        if (c[i].supported && !r->supported) { /* a knob variant that runs: the engine does */
            r->supported = true;
            r->reason[0] = '\0';
        }
        if (c[i].supported && c[i].ms >= 0 && (r->ms < 0 || c[i].ms < r->ms))
            r->ms = c[i].ms;
    }
    return XDNN_OK;
}

/* Time candidates (tune) or read the cache, then run once with the chosen
 * forces so the parts name the engines that really ran. */
static xdnn_status select_gpu(run_state *st, const select_opts *o, plan_part **out, int *nout, xdnn_diags_t *d)
{
    plan_gpu_choice *c = NULL;
    int nc = 0;
    /* without --tune, a backend that cannot enumerate just means heuristics */
    xdnn_diags_t *quiet = o->tune ? d : xdnn_diags_create();
    xdnn_status s = plan_gpu_candidates(st, o->tune, o->warmup, o->iters, &c, &nc, quiet);
    if (!o->tune)
        xdnn_diags_destroy(quiet);
    if (s != XDNN_OK && o->tune) {
        free(c);
        return s;
    }
    if (s != XDNN_OK) {
        nc = 0;
        s = XDNN_OK;
    }
    plan_part *parts = calloc((size_t)nc + 1, sizeof *parts);
    int np = 0;
    arena *a = arena_create();
    for (int i = 0; i < nc && parts; i++) {
        int k = find_part(parts, np, c[i].partition);
        if (k < 0) {
            k = np++;
            parts[k].name = strdup(c[i].partition);
            parts[k].ops = ops_of_partition(st->g, c[i].partition);
            parts[k].sig = strdup(tune_partition_signature(st->g, c[i].partition, a));
            parts[k].tuned_ms = -1;
        }
        if (!c[i].supported)
            continue;
        parts[k].candidates++;
        if (o->tune && c[i].ms >= 0 && (parts[k].tuned_ms < 0 || c[i].ms < parts[k].tuned_ms)) {
            parts[k].tuned_ms = c[i].ms;
            snprintf(parts[k].engine, sizeof parts[k].engine, "%s", c[i].engine);
            snprintf(parts[k].knobs, sizeof parts[k].knobs, "%s", c[i].knobs);
        }
    }
    arena_destroy(a);
    if (!parts) {
        free(c);
        return XDNN_ERR_NOMEM;
    }
    char when[32];
    tune_now(when, sizeof when);
    for (int k = 0; k < np; k++) {
        plan_part *p = &parts[k];
        if (o->tune) {
            tune_entry e = {.sig = p->sig, .ms = p->tuned_ms, .candidates = p->candidates};
            snprintf(e.engine, sizeof e.engine, "%s", p->engine);
            snprintf(e.knobs, sizeof e.knobs, "%s", p->knobs);
            snprintf(e.when, sizeof e.when, "%s", when);
            e.ranking = calloc((size_t)p->candidates + 1, sizeof *e.ranking);
            for (int i = 0; i < nc && e.ranking; i++)
                if (c[i].supported && strcmp(c[i].partition, p->name) == 0 && e.nranking < p->candidates) {
                    tune_rank *r = &e.ranking[e.nranking++];
                    snprintf(r->engine, sizeof r->engine, "%s", c[i].engine);
                    snprintf(r->knobs, sizeof r->knobs, "%s", c[i].knobs);
                    r->ms = c[i].ms;
                }
            for (int x = 0; x < e.nranking; x++) /* fastest first */
                for (int y = x + 1; y < e.nranking; y++)
                    if (e.ranking[y].ms < e.ranking[x].ms) {
                        tune_rank t = e.ranking[x];
                        e.ranking[x] = e.ranking[y];
                        e.ranking[y] = t;
                    }
            if (o->log) {
                fprintf(o->log, "tune %s (%s): %d candidate%s\n", p->name, p->ops, p->candidates,
                        p->candidates == 1 ? "" : "s");
                for (int x = 0; x < e.nranking; x++)
                    fprintf(o->log, "  %2d. %s%s%s %.4f ms%s\n", x + 1, e.ranking[x].engine,
                            e.ranking[x].knobs[0] ? ":" : "", e.ranking[x].knobs, e.ranking[x].ms, x ? "" : "  (kept)");
            }
            if (p->engine[0] && s == XDNN_OK)
                s = tune_cache_store(o->fp, &e, 1, d);
            free(e.ranking);
        } else {
            tune_entry e;
            if (tune_cache_lookup(o->fp, p->sig, &e)) {
                snprintf(p->engine, sizeof p->engine, "%s", e.engine);
                snprintf(p->knobs, sizeof p->knobs, "%s", e.knobs);
                p->tuned_ms = e.ms;
                p->from_cache = true;
                tune_entry_free(&e);
            }
        }
    }
    /* forces only for the partitions with a choice; the backend picks the rest */
    char **force = calloc((size_t)np + 1, sizeof *force);
    int nforce = 0;
    for (int k = 0; k < np && force; k++)
        if (parts[k].engine[0]) {
            char **one = plan_force_strings(&parts[k], 1);
            force[nforce++] = one ? one[0] : NULL;
            free(one);
        }
    gpu_report rep = {0};
    gpu_run_opts go = {.warmup = 0, .iters = 1, .force = (const char *const *)force, .nforce = nforce, .log = o->log};
    if (s == XDNN_OK)
        s = gpu_run(st, &go, &rep, d);
    plan_force_free(force, nforce);
    /* the report is the truth: the engine that ran each partition */
    plan_part *final = s == XDNN_OK ? calloc((size_t)rep.nparts + 1, sizeof *final) : NULL;
    for (int i = 0; final && i < rep.nparts; i++) {
        plan_part *f = &final[i];
        int k = find_part(parts, np, rep.parts[i].name);
        f->name = strdup(rep.parts[i].name);
        f->ops = ops_of_partition(st->g, rep.parts[i].name);
        f->sig = k >= 0 ? strdup(parts[k].sig) : strdup("");
        snprintf(f->engine, sizeof f->engine, "%s", rep.parts[i].engine);
        if (k >= 0 && strcmp(parts[k].engine, rep.parts[i].engine) == 0) {
            snprintf(f->knobs, sizeof f->knobs, "%s", parts[k].knobs);
            f->tuned_ms = parts[k].tuned_ms;
            f->from_cache = parts[k].from_cache;
        } else {
            f->tuned_ms = -1;
        }
        f->candidates = k >= 0 ? parts[k].candidates : 0;
        if (!f->name || !f->ops || !f->sig)
            s = XDNN_ERR_NOMEM;
        else if (o->tune && s == XDNN_OK)
            s = record_measured(f, c, nc);
    }
    if (s == XDNN_OK && !final)
        s = XDNN_ERR_NOMEM;
    if (s == XDNN_OK) {
        *out = final;
        *nout = rep.nparts;
    } else {
        plan_parts_free(final, final ? rep.nparts : 0);
    }
    gpu_report_free(&rep);
    plan_parts_free(parts, np);
    free(c);
    return s;
}

xdnn_status plan_select(run_state *st, const select_opts *o, plan_part **parts, int *nparts, xdnn_diags_t *d)
{
    *parts = NULL;
    *nparts = 0;
    if (o->use_gpu)
        return select_gpu(st, o, parts, nparts, d);
    plan_part *p = calloc(st->g->nnodes + 1, sizeof *p);
    if (!p)
        return XDNN_ERR_NOMEM;
    xdnn_status s = select_cpu(st, o, p, d);
    if (s != XDNN_OK) {
        plan_parts_free(p, (int)st->g->nnodes);
        return s;
    }
    *parts = p;
    *nparts = (int)st->g->nnodes;
    return XDNN_OK;
}

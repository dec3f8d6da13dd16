/* bench_case.c — one case of `xdnn bench`: its key and repro line, loading,
 * engine selection (and --tune), timing on the CPU reference (wall clock) or
 * the GPU (CUDA events), --check against the reference, and the cost estimate
 * that orders and shards cases (bench_workers.c, --shard). */
#include "bench.h"

#include "core/exec.h"
#include "core/fileio.h"
#include "gpu/gpu.h"
#include "ops/op.h"
#include "plan/plan.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- keys and repro lines */

static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t at = strlen(buf);
    if (at + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
}

/* A shell word: quoted when it has anything but [A-Za-z0-9_./:=,+@%-]. */
static void append_word(char *buf, size_t len, const char *w)
{
    bool plain = *w != 0;
    for (const char *c = w; *c && plain; c++)
        plain = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+@%-", *c) != NULL;
    if (plain) {
        append(buf, len, " %s", w);
        return;
    }
    append(buf, len, " '");
    for (const char *c = w; *c; c++)
        append(buf, len, *c == '\'' ? "'\\''" : "%c", *c);
    append(buf, len, "'");
}

void bench_key(const bench_case *c, const xgraph *g, char *buf, size_t len)
{
    const bench_spec *sp = c->spec;
    const char *dt = g && g->rio_set ? xdnn_dtype_name(g->rio) : c->dtype ? c->dtype : "-";
    if (!sp->path) {
        snprintf(buf, len, "%s %s%s%s:%s", sp->problem, sp->desc, sp->layout ? "@" : "", sp->layout ? sp->layout : "",
                 dt);
        return;
    }
    snprintf(buf, len, "%s[", g ? g->name : sp->path);
    int n = 0;
    const xdnn_module_t *m = g ? g->module : NULL;
    for (int pass = 0; g && pass < 2; pass++) {
        const xparam *ps = pass ? g->params : m->params;
        size_t np = pass ? g->nparams : m->nparams;
        for (size_t i = 0; i < np; i++)
            if (!ps[i].derived && ps[i].bound)
                append(buf, len, "%s%s=%s", n++ ? "," : "", ps[i].name, value_to_text(m->ar, &ps[i].rvalue));
    }
    if (!g) /* the graph did not load: the point is all we know */
        for (int i = 0; i < c->npoints; i++)
            append(buf, len, "%s%s=%s", n++ ? "," : "", c->points[i].name, c->points[i].value_text);
    append(buf, len, "]:%s", dt);
}

static void repro_line(const bench_case *c, const bench_opts *o, bool use_gpu, const bench_result *r, char *buf,
                       size_t len)
{
    const bench_spec *sp = c->spec;
    bool as_run = sp->path && !c->dtype;
    snprintf(buf, len, "xdnn %s", as_run ? "run" : "bench");
    if (sp->path) {
        append_word(buf, len, sp->path);
    } else {
        append_word(buf, len, sp->problem);
        append_word(buf, len, sp->desc);
    }
    if (sp->graph)
        append(buf, len, " --graph"), append_word(buf, len, sp->graph);
    for (int i = 0; i < sp->nincludes; i++)
        append(buf, len, " -I"), append_word(buf, len, sp->includes[i]);
    for (int i = 0; i < c->npoints; i++) {
        char kv[512];
        snprintf(kv, sizeof kv, "%s=%s", c->points[i].name, c->points[i].value_text);
        append(buf, len, " --set"), append_word(buf, len, kv);
    }
    if (c->dtype)
        append(buf, len, " --dtype %s", c->dtype);
    if (sp->layout)
        append(buf, len, " --layout %s", sp->layout);
    append(buf, len, " --device %s", use_gpu ? "gpu" : "cpu");
    if (use_gpu)
        for (int i = 0; i < r->nparts; i++) {
            char kv[400];
            snprintf(kv, sizeof kv, "%s=%s%s%s", r->parts[i].name, r->parts[i].engine, r->parts[i].knobs[0] ? ":" : "",
                     r->parts[i].knobs);
            if (as_run)
                append(buf, len, " --engine"), append_word(buf, len, kv);
        }
    if (!as_run) {
        append(buf, len, " --iters %d", r->iters > 0 ? r->iters : 1);
        if (o->warmup >= 0)
            append(buf, len, " --warmup %d", o->warmup);
    }
}

/* ---------------------------------------------------------------- running one case */

/* The row's timestamp: when its case finished. */
static void stamp(bench_result *r)
{
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(r->when, sizeof r->when, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void graph_costs(const xgraph *g, double *flops, double *bytes)
{
    *flops = *bytes = 0;
    for (size_t i = 0; i < g->nnodes; i++) {
        const xnode *n = &g->nodes[i];
        const op_desc *desc = op_get(n->op);
        if (desc->flops)
            *flops += desc->flops(g, n);
        else if (n->nresults > 0 && n->results[0] >= 0) /* elementwise: one op per output element */
            *flops += (double)g->tensors[n->results[0]].rnumel;
    }
    for (size_t i = 0; i < g->ntensors; i++) {
        const xtensor *t = &g->tensors[i];
        if (t->kind != TK_VIRTUAL || t->is_output)
            *bytes += (double)t->rnumel * (double)xdnn_dtype_size(t->rdtype);
    }
}

static void first_error(xdnn_diags_t *d, char *buf, size_t len)
{
    buf[0] = 0;
    for (size_t i = 0; i < xdnn_diags_count(d); i++) {
        const xdnn_diag *x = xdnn_diags_get(d, i);
        if (x->severity == XDNN_SEV_ERROR) {
            snprintf(buf, len, "%s", x->message);
            return;
        }
    }
}

/* Time on the CPU: warmup, then at least `iters` runs and `min_time_s` seconds. */
static xdnn_status time_cpu(run_state *st, const bench_opts *o, bench_result *r, xdnn_diags_t *d)
{
    int warmup = o->warmup >= 0 ? o->warmup : 1;
    int iters = o->iters_set ? o->iters : (o->min_time_s > 0 ? 1 : 5);
    xdnn_status s = XDNN_OK;
    for (int i = 0; i < warmup && s == XDNN_OK; i++)
        s = exec_cpu_run(st, d);
    int cap = iters > 64 ? iters : 64, n = 0;
    double *t = malloc((size_t)cap * sizeof *t), start = now_ms();
    while (s == XDNN_OK && t && (n < iters || (o->min_time_s > 0 && now_ms() - start < o->min_time_s * 1e3))) {
        if (n == cap) {
            double *nt = n < 1000000 ? realloc(t, (size_t)cap * 2 * sizeof *t) : NULL;
            if (!nt)
                break;
            t = nt;
            cap *= 2;
        }
        double t0 = now_ms();
        s = exec_cpu_run(st, d);
        t[n++] = now_ms() - t0;
    }
    if (!t)
        s = XDNN_ERR_NOMEM;
    if (s == XDNN_OK) {
        r->iters = n;
        plan_time_stats(t, n, &r->median_ms, &r->min_ms, &r->max_ms, &r->p90_ms);
    }
    free(t);
    return s;
}

static xdnn_status check_reference(run_state *gpu, xdnn_diags_t *d, bool *ok)
{
    run_state ref;
    xdnn_status s = run_state_init(&ref, gpu->g, gpu->base_dir);
    if (s == XDNN_OK)
        s = run_state_copy_inputs(&ref, gpu);
    if (s == XDNN_OK)
        s = exec_cpu_run(&ref, d);
    *ok = true;
    for (size_t i = 0; i < gpu->g->noutputs && s == XDNN_OK; i++) {
        int t = gpu->g->outputs[i];
        const xtensor *x = &gpu->g->tensors[t];
        double rtol, atol;
        compare_default_tolerance(x->rdtype, x->producer >= 0 ? gpu->g->nodes[x->producer].op : -1, &rtol, &atol);
        compare_result cr;
        compare_tensors(&gpu->tensors[t], &ref.tensors[t], rtol, atol, &cr);
        if (!cr.ok) {
            *ok = false;
            diag_error(d, XDNN_ERR_CHECK, xloc_none(), "--check: output '%s' differs from the CPU reference: %lld of %lld "
                       "elements, max abs error %g", x->name, (long long)cr.mismatches, (long long)cr.count, cr.max_abs);
        }
    }
    run_state_free(&ref);
    return s;
}

static xdnn_status time_gpu(run_state *st, const bench_opts *o, bench_result *r, xdnn_diags_t *d)
{
    char **force = NULL;
    int nforce = 0;
    if (strcmp(o->engine, "auto") != 0 || r->nparts) {
        plan_part *pp = calloc((size_t)r->nparts + 1, sizeof *pp);
        for (int i = 0; pp && i < r->nparts; i++) {
            pp[i].name = r->parts[i].name;
            snprintf(pp[i].engine, sizeof pp[i].engine, "%s", r->parts[i].engine);
            snprintf(pp[i].knobs, sizeof pp[i].knobs, "%s", r->parts[i].knobs);
        }
        force = pp ? plan_force_strings(pp, r->nparts) : NULL;
        nforce = force ? r->nparts : 0;
        free(pp); /* names borrowed from r */
    }
    gpu_report rep = {0};
    gpu_run_opts go = {.warmup = o->warmup >= 0 ? o->warmup : 3, .iters = o->iters_set ? o->iters : 20,
                       .force = (const char *const *)force, .nforce = nforce, .log = stderr};
    xdnn_status s = gpu_run(st, &go, &rep, d);
    plan_force_free(force, nforce);
    if (s == XDNN_OK) {
        r->iters = go.iters;
        r->median_ms = r->min_ms = r->max_ms = 0;
        r->p90_ms = 0; /* summed over partitions, as the median */
        free(r->parts);
        r->parts = calloc((size_t)rep.nparts + 1, sizeof *r->parts);
        r->nparts = r->parts ? rep.nparts : 0;
        for (int i = 0; i < r->nparts; i++) {
            snprintf(r->parts[i].name, sizeof r->parts[i].name, "%s", rep.parts[i].name);
            snprintf(r->parts[i].engine, sizeof r->parts[i].engine, "%s", rep.parts[i].engine);
            r->median_ms += rep.parts[i].ms_median;
            r->min_ms += rep.parts[i].ms_min;
            r->max_ms += rep.parts[i].ms_max;
            r->p90_ms += rep.parts[i].ms_p90;
        }
    }
    gpu_report_free(&rep);
    if (s == XDNN_OK && o->check) {
        bool ok;
        s = check_reference(st, d, &ok);
        snprintf(r->check, sizeof r->check, "%s", ok ? "ok" : "mismatch");
    }
    return s;
}

/* Start a case's row: load the case, and fill what names it (key, graph,
 * dtype, device).  *m to be destroyed by the caller. */
static xdnn_status begin_row(const bench_case *c, bool use_gpu, const char *fp, bench_result *r, xdnn_module_t **m,
                             xgraph **g, xdnn_diags_t *d)
{
    memset(r, 0, sizeof *r);
    r->p90_ms = -1;
    snprintf(r->fingerprint, sizeof r->fingerprint, "%s", fp);
    snprintf(r->device, sizeof r->device, "%s", use_gpu ? "gpu" : "cpu");
    xdnn_status s = bench_load_case(c, m, g, d);
    bench_key(c, s == XDNN_OK ? *g : NULL, r->key, sizeof r->key);
    if (*g)
        snprintf(r->graph, sizeof r->graph, "%s", (*g)->name);
    snprintf(r->dtype, sizeof r->dtype, "%s",
             s == XDNN_OK && (*g)->rio_set ? xdnn_dtype_name((*g)->rio) : c->dtype ? c->dtype : "-");
    return s;
}

void bench_lost_case(const bench_case *c, const bench_opts *o, bool use_gpu, const char *fp, const char *why,
                     bench_result *r)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m;
    xgraph *g;
    begin_row(c, use_gpu, fp, r, &m, &g, d);
    r->code = XDNN_ERR_INTERNAL;
    snprintf(r->status, sizeof r->status, "failed");
    snprintf(r->error, sizeof r->error, "%s", why);
    repro_line(c, o, use_gpu, r, r->repro, sizeof r->repro);
    stamp(r);
    xdnn_diags_destroy(d);
    xdnn_module_destroy(m);
}

void bench_run_case(const bench_case *c, const bench_opts *o, bool use_gpu, const char *fp, bench_result *r)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m;
    xgraph *g;
    xdnn_status s = begin_row(c, use_gpu, fp, r, &m, &g, d);
    run_state st;
    bool have_st = false;
    const char *base = NULL;
    if (s == XDNN_OK) {
        base = c->spec->path ? path_dirname(m->ar, c->spec->path) : ".";
        s = run_state_init(&st, g, base);
        have_st = s == XDNN_OK;
    }
    if (s == XDNN_OK)
        s = exec_load_inputs(&st, NULL, 0, d);
    if (s == XDNN_OK)
        s = run_state_alloc_results(&st, d);
    plan_part *parts = NULL;
    int nparts = 0;
    if (s == XDNN_OK && (!use_gpu || o->tune || strcmp(o->engine, "auto") == 0)) {
        select_opts so = {.use_gpu = use_gpu, .tune = o->tune, .warmup = o->warmup >= 0 ? o->warmup : 1,
                          .iters = o->iters_set ? o->iters : 5, .log = o->tune ? stderr : NULL, .fp = fp};
        s = plan_select(&st, &so, &parts, &nparts, d);
    }
    if (s == XDNN_OK) {
        r->parts = calloc((size_t)nparts + 1, sizeof *r->parts);
        r->nparts = r->parts ? nparts : 0;
        for (int i = 0; i < r->nparts; i++) {
            snprintf(r->parts[i].name, sizeof r->parts[i].name, "%s", parts[i].name);
            snprintf(r->parts[i].ops, sizeof r->parts[i].ops, "%s", parts[i].ops);
            snprintf(r->parts[i].engine, sizeof r->parts[i].engine, "%s", parts[i].engine);
            snprintf(r->parts[i].knobs, sizeof r->parts[i].knobs, "%s", parts[i].knobs);
            r->parts[i].from_cache = parts[i].from_cache;
        }
        if (use_gpu && strcmp(o->engine, "auto") != 0 && strcmp(o->engine, "all") != 0)
            for (int i = 0; i < r->nparts; i++) { /* --engine NAME: force it everywhere, with its own knobs */
                snprintf(r->parts[i].engine, sizeof r->parts[i].engine, "%s", o->engine);
                r->parts[i].knobs[0] = '\0';
            }
    }
    plan_parts_free(parts, nparts);
    if (s == XDNN_OK)
        s = use_gpu ? time_gpu(&st, o, r, d) : time_cpu(&st, o, r, d);
    if (s == XDNN_OK)
        graph_costs(g, &r->flops, &r->bytes);
    r->code = s != XDNN_OK ? s : strcmp(r->check, "mismatch") == 0 ? XDNN_ERR_CHECK : XDNN_OK;
    snprintf(r->status, sizeof r->status, "%s",
             r->code == XDNN_OK ? "passed" : r->code == XDNN_ERR_UNSUPPORTED ? "skipped" : "failed");
    if (r->code != XDNN_OK) {
        first_error(d, r->error, sizeof r->error);
        if (!r->error[0])
            snprintf(r->error, sizeof r->error, "%s", xdnn_status_name(r->code));
        fprintf(stderr, "xdnn bench: case %s:\n", r->key);
        xdnn_diags_print(d, stderr);
    }
    repro_line(c, o, use_gpu, r, r->repro, sizeof r->repro);
    stamp(r);
    if (r->code == XDNN_OK && r->median_ms > 0 && (r->max_ms - r->min_ms) / r->median_ms > 0.20)
        fprintf(stderr, "warning: %s: spread (max-min)/median = %.0f%% > 20%%: timings are noisy (more "
                        "--iters or --min-time, a quieter machine)\n",
                r->key, 100 * (r->max_ms - r->min_ms) / r->median_ms);
    if (have_st)
        run_state_free(&st);
    xdnn_diags_destroy(d);
    xdnn_module_destroy(m);
}

/* A case's estimated cost, about milliseconds: a fixed part per case (load,
 * plan, compile, warm-up) plus its flops and bytes at rough device rates, for
 * every warm-up and timed run.  Only the order matters: it balances the
 * workers (largest first) and the --shard subsets; a case that does not load
 * costs the fixed part (it fails fast). */
double bench_case_cost(const bench_case *c, const bench_opts *o, bool use_gpu)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m;
    xgraph *g;
    double flops = 0, bytes = 0;
    if (bench_load_case(c, &m, &g, d) == XDNN_OK)
        graph_costs(g, &flops, &bytes);
    xdnn_diags_destroy(d);
    xdnn_module_destroy(m);
    double runs = (o->warmup >= 0 ? o->warmup : use_gpu ? 3 : 1) + (o->iters_set ? o->iters : use_gpu ? 20 : 5);
    if (use_gpu) /* ~50 TFLOP/s, ~1.5 TB/s, ~20 ms of planning and NVRTC */
        return 20 + runs * (flops / 50e9 + bytes / 1.5e9);
    return 1 + runs * (flops / 1e6 + bytes / 2e6); /* the reference: ~1 GFLOP/s, ~2 GB/s */
}

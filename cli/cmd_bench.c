/* cmd_bench.c — `xdnn bench`: expand graph sweeps, problem shorthands or a
 * batch file into cases, time each on the CPU reference (wall clock) or the
 * GPU, and print a table, CSV or JSON lines with a repro line per case and a
 * closing "N passed, N failed, N skipped".
 *
 * Statuses: passed (ran; --check agreed), failed (load, bind or run error, or
 * a --check mismatch), skipped (the device cannot run the case: status
 * unsupported).  The exit status is that of the first failed case (0 when
 * none failed); usage errors stop before anything runs. */
#include "bench.h"

#include "core/exec.h"
#include "core/fileio.h"
#include "gpu/gpu.h"
#include "ops/op.h"
#include "plan/plan.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char bench_help[] =
    "usage: xdnn bench [options] GRAPH\n"
    "       xdnn bench [options] PROBLEM DESCRIPTOR\n"
    "       xdnn bench [options] --batch FILE\n"
    "\n"
    "Time every case of a sweep and print one row per case.\n"
    "\n"
    "Cases:\n"
    "  --set P=LIST       values of param P: 1,8,32 or START:STOP[:STEP] (inclusive)\n"
    "                     or mixes; several --set multiply; a param's own `sweep`\n"
    "                     list is the default\n"
    "  --dtype LIST       rewrite the graph's io dtype (f16,bf16,...): the io context\n"
    "                     and every declared dtype equal to the old io dtype\n"
    "  --graph NAME, -I DIR   as in `xdnn run`\n"
    "  --layout L         problems: nchw|nhwc (conv, pool), bhsd|bshd (sdpa)\n"
    "  --batch FILE       one case per line (GRAPH or PROBLEM DESC, then --set,\n"
    "                     --dtype, --graph, -I, --layout); '#' comments; include FILE\n"
    "  --dump-graph       print each case's (generated) graph instead of running it\n"
    "Problems (descriptor [DIR:]KEYS, letter+number pairs):\n"
    "  conv [fwd|dgrad|wgrad:]n c h w k r s p(ad) u(stride) l(dilation) g(roups)\n"
    "  matmul b m n k     sdpa [fwd|bwd:]b h s t d c(ausal)\n"
    "  layernorm n c      softmax n c      pool [max|avg:]n c h w r(window) u p\n"
    "Running:\n"
    "  --device auto|cpu|gpu  where to run (auto: the GPU if there is one)\n"
    "  --engine auto|all|NAME auto: tune cache, else heuristics; all: every engine;\n"
    "                     NAME: force it (on the CPU the only engine is cpu_reference)\n"
    "  --tune             time every engine per partition, keep the fastest, store\n"
    "                     it in the tune cache ($XDNN_CACHE_DIR, ~/.cache/xdnn)\n"
    "  --warmup N         untimed runs first (default 1 CPU, 3 GPU)\n"
    "  --iters N          timed runs (default 5 CPU, 20 GPU)\n"
    "  --min-time S       keep timing until S seconds passed (and --iters runs)\n"
    "  --check            GPU: compare every output with the CPU reference\n"
    "Output:\n"
    "  --format table|csv|jsonl   (jsonl is what `xdnn compare` reads)\n"
    "  -o FILE            write the rows to FILE (atomically); the summary to stdout\n"
    "  --no-progress      no progress line on stderr (shown only on a terminal)\n"
    "\n"
    "A case's spread (max-min)/median above 20% prints a warning.  Exit status: 0\n"
    "when no case failed, else the status of the first failure (3 shape, 6 check\n"
    "mismatch, 7 device, ...); 1 for usage errors.\n";

static int parse_int_opt(const char *name, const char *arg, int lo, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (!*arg || *end || v < lo || v > 1000000)
        return cli_usage_error("bench", "--%s needs an integer in [%d, 1000000], got '%s'", name, lo, arg);
    *out = (int)v;
    return -1;
}

static int parse_opts(int argc, char **argv, bench_opts *o, bench_spec *sp, const char **batch)
{
    static const struct option opts[] = {
        {"set", required_argument, NULL, OPT_SET},
        {"graph", required_argument, NULL, OPT_GRAPH},
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"layout", required_argument, NULL, OPT_LAYOUT},
        {"device", required_argument, NULL, OPT_DEVICE},
        {"engine", required_argument, NULL, OPT_ENGINE},
        {"warmup", required_argument, NULL, OPT_WARMUP},
        {"iters", required_argument, NULL, OPT_ITERS},
        {"min-time", required_argument, NULL, OPT_MIN_TIME},
        {"check", no_argument, NULL, OPT_CHECK},
        {"tune", no_argument, NULL, OPT_TUNE},
        {"dump-graph", no_argument, NULL, OPT_DUMP_GRAPH},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"output", required_argument, NULL, 'o'},
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    memset(sp, 0, sizeof *sp);
    o->engine = "auto";
    o->warmup = -1;
    *batch = NULL;
    int c, r;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":I:o:", opts, NULL)) != -1) {
        switch (c) {
        case OPT_HELP: fputs(bench_help, stdout); return XDNN_OK;
        case OPT_DEVICE:
            if (strcmp(optarg, "auto") == 0)
                o->device = BENCH_DEV_AUTO;
            else if (strcmp(optarg, "cpu") == 0)
                o->device = BENCH_DEV_CPU;
            else if (strcmp(optarg, "gpu") == 0)
                o->device = BENCH_DEV_GPU;
            else
                return cli_usage_error("bench", "--device must be auto, cpu or gpu, got '%s'", optarg);
            break;
        case OPT_ENGINE: o->engine = optarg; break;
        case OPT_WARMUP:
            if ((r = parse_int_opt("warmup", optarg, 0, &o->warmup)) >= 0)
                return r;
            break;
        case OPT_ITERS:
            if ((r = parse_int_opt("iters", optarg, 1, &o->iters)) >= 0)
                return r;
            o->iters_set = true;
            break;
        case OPT_MIN_TIME: {
            char *end;
            o->min_time_s = strtod(optarg, &end);
            if (!*optarg || *end || !(o->min_time_s > 0) || o->min_time_s > 3600)
                return cli_usage_error("bench", "--min-time needs seconds in (0, 3600], got '%s'", optarg);
            break;
        }
        case OPT_CHECK: o->check = true; break;
        case OPT_TUNE: o->tune = true; break;
        case OPT_DUMP_GRAPH: o->dump_graph = true; break;
        case OPT_BATCH: *batch = optarg; break;
        case OPT_NO_PROGRESS: o->no_progress = true; break;
        case 'o': o->out_path = optarg; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "table") == 0)
                o->format = BENCH_TABLE;
            else if (strcmp(optarg, "csv") == 0)
                o->format = BENCH_CSV;
            else if (strcmp(optarg, "jsonl") == 0)
                o->format = BENCH_JSONL;
            else
                return cli_usage_error("bench", "--format must be table, csv or jsonl, got '%s'", optarg);
            break;
        case ':': return cli_usage_error("bench", "option '%s' needs a value", argv[optind - 1]);
        case '?': return cli_usage_error("bench", "unknown option '%s'", argv[optind - 1]);
        default:
            if ((r = bench_spec_option(sp, c, optarg, "bench")) < 0)
                return XDNN_ERR_USAGE;
            if (r == 0)
                return cli_usage_error("bench", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (*batch) {
        if (optind != argc)
            return cli_usage_error("bench", "--batch takes its cases from the file; unexpected '%s'", argv[optind]);
        if (sp->layout)
            return cli_usage_error("bench", "--layout applies to problem lines; put it on those lines of the batch file");
    } else if ((r = bench_spec_positional(sp, argv + optind, argc - optind, "bench")) >= 0) {
        return r;
    }
    if (o->dump_graph && (o->tune || o->check || o->iters_set || o->min_time_s > 0 || o->warmup >= 0 || o->out_path))
        return cli_usage_error("bench", "--dump-graph prints graphs and runs nothing: --tune, --check, --iters, "
                                        "--warmup, --min-time and -o do not apply");
    if (o->tune && strcmp(o->engine, "auto") != 0)
        return cli_usage_error("bench", "--tune chooses the engines itself; it cannot be combined with --engine %s",
                               o->engine);
    return -1;
}

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

static void run_case(const bench_case *c, const bench_opts *o, bool use_gpu, const char *fp, bench_result *r)
{
    memset(r, 0, sizeof *r);
    r->p90_ms = -1;
    snprintf(r->device, sizeof r->device, "%s", use_gpu ? "gpu" : "cpu");
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m;
    xgraph *g;
    xdnn_status s = bench_load_case(c, &m, &g, d);
    bench_key(c, s == XDNN_OK ? g : NULL, r->key, sizeof r->key);
    if (g)
        snprintf(r->graph, sizeof r->graph, "%s", g->name);
    snprintf(r->dtype, sizeof r->dtype, "%s", s == XDNN_OK && g->rio_set ? xdnn_dtype_name(g->rio) : c->dtype ? c->dtype : "-");
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
    if (have_st)
        run_state_free(&st);
    xdnn_diags_destroy(d);
    xdnn_module_destroy(m);
}

/* ---------------------------------------------------------------- the command */

static int dump_graphs(bench_spec *specs, int nspecs)
{
    for (int i = 0; i < nspecs; i++) {
        const bench_spec *sp = &specs[i];
        for (int k = 0; k < (sp->ndtypes ? sp->ndtypes : 1); k++) {
            if (!sp->path && !sp->ndtypes) {
                char err[512];
                char *text = bench_problem_text(sp->problem, sp->desc, sp->layout, err, sizeof err);
                if (!text)
                    return cli_usage_error("bench", "%s %s: %s", sp->problem, sp->desc, err);
                fputs(text, stdout);
                free(text);
                continue;
            }
            xdnn_diags_t *d = xdnn_diags_create();
            xdnn_module_t *m;
            xgraph *g;
            xdnn_status s = bench_load_module(sp, &m, &g, d);
            xdnn_dtype t;
            if (s == XDNN_OK && sp->ndtypes && xdnn_dtype_from_name(sp->dtypes[k], &t))
                s = bench_rewrite_dtype(g, t, d);
            char *text = s == XDNN_OK ? xdnn_module_to_dnn(m) : NULL;
            if (text)
                fputs(text, stdout);
            free(text);
            xdnn_diags_print(d, stderr);
            xdnn_diags_destroy(d);
            xdnn_module_destroy(m);
            if (s != XDNN_OK)
                return s;
        }
    }
    return XDNN_OK;
}

static int check_engine_option(const bench_opts *o, bool use_gpu)
{
    if (use_gpu || strcmp(o->engine, "auto") == 0 || strcmp(o->engine, "all") == 0 ||
        strcmp(o->engine, "cpu_reference") == 0)
        return -1;
    return cli_usage_error("bench", "--engine %s: on the CPU the only engine is cpu_reference (GPU engines need "
                                    "--device gpu; 'xdnn engines' lists them)", o->engine);
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o;
    bench_spec base;
    const char *batch;
    int r = parse_opts(argc, argv, &o, &base, &batch);
    if (r >= 0) {
        bench_spec_free(&base);
        return r;
    }
    bench_spec *specs = &base;
    int nspecs = 1, ntotal = 1;
    if (batch) {
        xdnn_status s = bench_read_batch(batch, &base, &specs, &nspecs, &ntotal);
        bench_spec_free(&base);
        if (s != XDNN_OK) {
            for (int i = 0; i < ntotal; i++)
                bench_spec_free(&specs[i]);
            free(specs);
            return s;
        }
    }
    bool use_gpu = false;
    char why[512], fp[FINGERPRINT_MAX];
    int status = XDNN_OK;
    if (o.dump_graph) {
        status = dump_graphs(specs, nspecs);
        goto done;
    }
    if (o.device != BENCH_DEV_CPU) {
        use_gpu = gpu_available(why, sizeof why);
        if (!use_gpu && o.device == BENCH_DEV_GPU) {
            fprintf(stderr, "xdnn bench: no usable GPU: %s\n", why);
            status = XDNN_ERR_DEVICE;
            goto done;
        }
        if (!use_gpu)
            fprintf(stderr, "note: no GPU (%s); timing the CPU reference\n", why);
    }
    if (!use_gpu && o.check) {
        status = cli_usage_error("bench", "--check compares the GPU with the CPU reference; it needs --device gpu");
        goto done;
    }
    if ((r = check_engine_option(&o, use_gpu)) >= 0) {
        status = r;
        goto done;
    }
    if (fingerprint_device(use_gpu, fp, sizeof fp) != XDNN_OK) {
        fprintf(stderr, "xdnn bench: cannot identify the GPU: %s\n", fp);
        status = XDNN_ERR_DEVICE;
        goto done;
    }
    /* expand every spec first: usage errors stop before anything runs */
    bench_case **cases = calloc((size_t)nspecs, sizeof *cases);
    int *ncases = calloc((size_t)nspecs, sizeof *ncases), total = 0;
    for (int i = 0; cases && ncases && i < nspecs && status == XDNN_OK; i++) {
        status = bench_expand(&specs[i], &cases[i], &ncases[i]);
        total += ncases[i];
    }
    if (!cases || !ncases)
        status = XDNN_ERR_NOMEM;
    FILE *out = stdout;
    char *buf = NULL;
    size_t buflen = 0;
    if (status == XDNN_OK && o.out_path && !(out = open_memstream(&buf, &buflen)))
        status = XDNN_ERR_NOMEM;
    int passed = 0, failed = 0, skipped = 0, done_n = 0, first_fail = XDNN_OK;
    bool progress = !o.no_progress && isatty(STDERR_FILENO);
    if (status == XDNN_OK)
        bench_output_begin(out, &o);
    for (int i = 0; status == XDNN_OK && i < nspecs; i++)
        for (int k = 0; status == XDNN_OK && k < ncases[i]; k++) {
            if (progress)
                fprintf(stderr, "\r[%d/%d] %s\033[K", ++done_n, total, specs[i].path ? specs[i].path : specs[i].problem);
            bench_result res;
            run_case(&cases[i][k], &o, use_gpu, fp, &res);
            if (progress)
                fprintf(stderr, "\r\033[K");
            if (strcmp(res.status, "passed") == 0 && res.median_ms > 0 &&
                (res.max_ms - res.min_ms) / res.median_ms > 0.20)
                fprintf(stderr, "warning: %s: spread (max-min)/median = %.0f%% > 20%%: timings are noisy (more "
                                "--iters or --min-time, a quieter machine)\n",
                        res.key, 100 * (res.max_ms - res.min_ms) / res.median_ms);
            bench_output_case(out, &o, &res);
            fflush(out);
            /* Rows that cannot reach stdout make the rest of the sweep pointless:
             * stop; main() reports the write error and exits 5. */
            if (out == stdout && ferror(out) && status == XDNN_OK)
                status = XDNN_ERR_IO;
            if (res.code == XDNN_OK)
                passed++;
            else if (res.code == XDNN_ERR_UNSUPPORTED)
                skipped++;
            else {
                failed++;
                if (first_fail == XDNN_OK)
                    first_fail = res.code;
            }
            free(res.parts);
        }
    if (status == XDNN_OK) {
        if (o.out_path) {
            fclose(out);
            out = stdout;
            xdnn_diags_t *d = xdnn_diags_create();
            status = file_write_atomic(o.out_path, buf, buflen, d);
            xdnn_diags_print(d, stderr);
            xdnn_diags_destroy(d);
        }
        bench_summary(o.format == BENCH_TABLE || o.out_path ? stdout : stderr, passed, failed, skipped);
        if (status == XDNN_OK)
            status = first_fail;
    } else if (o.out_path && out != stdout) {
        fclose(out);
    }
    free(buf);
    for (int i = 0; cases && i < nspecs; i++)
        bench_cases_free(cases[i], ncases ? ncases[i] : 0);
    free(cases);
    free(ncases);
done:
    for (int i = 0; i < ntotal; i++)
        if (batch || i > 0)
            bench_spec_free(&specs[i]);
    if (batch)
        free(specs);
    else
        bench_spec_free(&base);
    return status;
}

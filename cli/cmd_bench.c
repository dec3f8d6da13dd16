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
    "  matmul b m n k     sdpa [fwd|bwd:]b h s t d c(ausal) k(v heads) v(alue dim)\n"
    "                     a(lign 1: bottom_right) p(dropout %)\n"
    "  layernorm n c      softmax n c      pool [max|avg:]n c h w r(window) u p\n"
    "  benchdnn's too: conv mb32ic64ih56oc64kh3ph1, matmul 2x64x128:2x128x256\n"
    "Running:\n"
    "  --device auto|cpu|gpu|N  where to run (auto: the GPU if there is one;\n"
    "                     N: GPU N only, CUDA's numbering)\n"
    "  --engine auto|all|NAME auto: tune cache, else heuristics; all: every engine;\n"
    "                     NAME: force it (on the CPU the only engine is cpu_reference)\n"
    "  --tune             time every engine per partition, keep the fastest, store\n"
    "                     it in the tune cache ($XDNN_CACHE_DIR, ~/.cache/xdnn)\n"
    "  --warmup N         untimed runs first (default 1 CPU, 3 GPU)\n"
    "  --iters N          timed runs (default 5 CPU, 20 GPU)\n"
    "  --min-time S       keep timing until S seconds passed (and --iters runs)\n"
    "  --check            GPU: compare every output with the CPU reference\n"
    "  --cold-l2          GPU: flush the L2 cache before each timed run\n"
    "Several processes (rows merged in input order, as one run prints them):\n"
    "  --devices all|LIST one worker process per GPU (LIST: 0,1,...); the costliest\n"
    "                     cases go first; --tune results all reach the tune cache\n"
    "  --workers N        N worker processes on the CPU (with --device cpu)\n"
    "  --timeout S        a worker spending more than S seconds on one case is\n"
    "                     killed, that case failed, the rest kept (default 3600)\n"
    "  --shard I/N        only subset I of N (balanced by estimated cost, the same\n"
    "                     split in every process): for job arrays; 'xdnn merge'\n"
    "                     joins their jsonl files\n"
    "Output:\n"
    "  --format table|csv|jsonl   (jsonl is what `xdnn compare` reads)\n"
    "  --perf-template T  rows as benchdnn's template T (def, csv or %-codes:\n"
    "                     %prb% %impl% %-time% %0Gflops% ...; xdnn-bench(1))\n"
    "  -o FILE            write the rows to FILE (atomically); the summary to stdout\n"
    "  --no-progress      no progress line on stderr (shown only on a terminal):\n"
    "                     [3/10] CASE  ETA 1m05s\n"
    "  --progress         the progress line even when stderr is not a terminal\n"
    "\n"
    "A case's spread (max-min)/median above 20% prints a warning.  Exit status: 0\n"
    "when no case failed, else the status of the first failure (3 shape, 6 check\n"
    "mismatch, 7 device, 9 a case lost with its crashed or hung worker, ...);\n"
    "1 for usage errors.\n";

static int parse_int_opt(const char *name, const char *arg, int lo, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (!*arg || *end || v < lo || v > 1000000)
        return cli_usage_error("bench", "--%s needs an integer in [%d, 1000000], got '%s'", name, lo, arg);
    *out = (int)v;
    return -1;
}

/* --devices all|0,1,...: GPU ordinals, each once. */
static int parse_devices(const char *arg, bench_opts *o)
{
    o->ndevices = 0;
    o->all_devices = strcmp(arg, "all") == 0;
    if (o->all_devices)
        return -1;
    const char *p = arg;
    for (;;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 9999 || (*end && *end != ','))
            return cli_usage_error("bench", "--devices needs 'all' or GPU numbers such as 0,1,3, got '%s'", arg);
        for (int i = 0; i < o->ndevices; i++)
            if (o->devices[i] == v)
                return cli_usage_error("bench", "--devices names GPU %ld twice", v);
        if (o->ndevices == BENCH_MAX_WORKERS)
            return cli_usage_error("bench", "--devices: at most %d GPUs", BENCH_MAX_WORKERS);
        o->devices[o->ndevices++] = (int)v;
        if (!*end)
            return -1;
        p = end + 1;
    }
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
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"perf-template", required_argument, NULL, OPT_PERF_TEMPLATE},
        {"cold-l2", no_argument, NULL, OPT_COLD_L2},
        {"devices", required_argument, NULL, OPT_DEVICES},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"shard", required_argument, NULL, OPT_SHARD},
        {"worker", no_argument, NULL, OPT_WORKER},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    memset(sp, 0, sizeof *sp);
    o->engine = "auto";
    o->warmup = -1;
    o->timeout_s = 3600;
    bool timeout_set = false, device_set = false, format_set = false;
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
            else if ((r = cli_device_ordinal(optarg)) >= 0) {
                o->device = BENCH_DEV_GPU;
                if ((r = cli_select_device("bench", r)) >= 0)
                    return r;
            } else
                return cli_usage_error("bench", "--device must be auto, cpu, gpu or a GPU number, got '%s'", optarg);
            device_set = true;
            break;
        case OPT_DEVICES:
            if ((r = parse_devices(optarg, o)) >= 0)
                return r;
            break;
        case OPT_WORKERS:
            if ((r = parse_int_opt("workers", optarg, 1, &o->nworkers)) >= 0)
                return r;
            if (o->nworkers > BENCH_MAX_WORKERS)
                return cli_usage_error("bench", "--workers: at most %d, got %d", BENCH_MAX_WORKERS, o->nworkers);
            break;
        case OPT_TIMEOUT: {
            char *end;
            o->timeout_s = strtod(optarg, &end);
            if (!*optarg || *end || !(o->timeout_s >= 0) || o->timeout_s > 1e6)
                return cli_usage_error("bench", "--timeout needs seconds in [0, 1e6] (0: none), got '%s'", optarg);
            timeout_set = true;
            break;
        }
        case OPT_SHARD:
            if (!bench_parse_shard(optarg, &o->shard_i, &o->shard_n))
                return XDNN_ERR_USAGE;
            break;
        case OPT_WORKER: o->worker = true; break;
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
        case OPT_PROGRESS: o->progress = true; break;
        case OPT_COLD_L2: o->cold_l2 = true; break;
        case OPT_PERF_TEMPLATE: {
            char why[512];
            if (!(o->perf_template = bench_perf_template(optarg, why, sizeof why)))
                return cli_usage_error("bench", "%s", why);
            break;
        }
        case 'o': o->out_path = optarg; break;
        case OPT_FORMAT:
            format_set = true;
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
    if (o->perf_template && format_set)
        return cli_usage_error("bench", "--perf-template is a row format of its own: it does not go with --format");
    if (o->perf_template)
        o->format = BENCH_TEMPLATE;
    if (o->dump_graph && (o->tune || o->check || o->iters_set || o->min_time_s > 0 || o->warmup >= 0 || o->out_path))
        return cli_usage_error("bench", "--dump-graph prints graphs and runs nothing: --tune, --check, --iters, "
                                        "--warmup, --min-time and -o do not apply");
    bool gpus = o->ndevices || o->all_devices;
    if (o->dump_graph && (gpus || o->nworkers || o->shard_n))
        return cli_usage_error("bench", "--dump-graph runs nothing: --devices, --workers and --shard do not apply");
    if (gpus && (device_set || o->nworkers))
        return cli_usage_error("bench", "--devices picks the GPUs itself: it does not go with --device or --workers");
    if (o->nworkers && o->device != BENCH_DEV_CPU && !o->worker)
        return cli_usage_error("bench", "--workers N runs processes on the CPU: it needs --device cpu (GPUs: --devices)");
    if (timeout_set && !gpus && !o->nworkers)
        return cli_usage_error("bench", "--timeout applies to worker processes: it needs --devices or --workers");
    if (o->tune && strcmp(o->engine, "auto") != 0)
        return cli_usage_error("bench", "--tune chooses the engines itself; it cannot be combined with --engine %s",
                               o->engine);
    return -1;
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
            xdnn_graph_t *g;
            xdnn_status s = bench_load_module(sp, &m, &g, d);
            xdnn_dtype t;
            if (s == XDNN_OK && sp->ndtypes && xdnn_dtype_from_name(sp->dtypes[k], &t))
                s = xdnn_graph_set_io_dtype(g, t, d);
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

/* Where the cases run: *use_gpu and the device's fingerprint; with
 * --devices, the GPUs counted and checked.  -1, or the exit status. */
static int choose_device(bench_opts *o, bool *use_gpu, char *fp, size_t fplen)
{
    char why[512];
    *use_gpu = false;
    if (o->worker && (o->ndevices || o->all_devices)) {
        *use_gpu = true; /* the parent narrowed CUDA_VISIBLE_DEVICES to this worker's GPU */
    } else if (o->ndevices || o->all_devices) {
        int count = xdnn_device_count(why, sizeof why);
        if (count <= 0) {
            fprintf(stderr, "xdnn bench: --devices: no usable GPU: %s\n", why);
            return XDNN_ERR_DEVICE;
        }
        for (int i = 0; o->all_devices && i < count && i < BENCH_MAX_WORKERS; i++)
            o->devices[o->ndevices++] = i;
        for (int i = 0; i < o->ndevices; i++)
            if (o->devices[i] >= count) {
                fprintf(stderr, "xdnn bench: --devices: GPU %d: this machine has %d CUDA device%s (0..%d)\n",
                        o->devices[i], count, count == 1 ? "" : "s", count - 1);
                return XDNN_ERR_DEVICE;
            }
        o->nworkers = o->ndevices;
        *use_gpu = true;
        snprintf(fp, fplen, "gpu"); /* each worker reports its own */
        return -1;
    } else if (o->device != BENCH_DEV_CPU) {
        *use_gpu = xdnn_backend_available(XDNN_BACKEND_CUDA, why, sizeof why);
        if (!*use_gpu && o->device == BENCH_DEV_GPU) {
            cli_device_note(why, sizeof why);
            fprintf(stderr, "xdnn bench: no usable GPU: %s\n", why);
            return XDNN_ERR_DEVICE;
        }
        if (!*use_gpu)
            fprintf(stderr, "note: no GPU (%s); timing the CPU reference\n", why);
    }
    if (xdnn_device_fingerprint(*use_gpu ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU, fp, fplen) != XDNN_OK) {
        fprintf(stderr, "xdnn bench: cannot identify the GPU: %s\n", fp);
        return XDNN_ERR_DEVICE;
    }
    return -1;
}

/* Every case of every spec, in input order (pointers into the per-spec arrays). */
typedef struct sweep {
    bench_case **per_spec;
    int *nper, nspecs;
    const bench_case **all;
    int n;
} sweep;

static xdnn_status sweep_expand(const bench_spec *specs, int nspecs, sweep *w)
{
    memset(w, 0, sizeof *w);
    w->per_spec = calloc((size_t)nspecs, sizeof *w->per_spec);
    w->nper = calloc((size_t)nspecs, sizeof *w->nper);
    w->nspecs = nspecs;
    if (!w->per_spec || !w->nper)
        return XDNN_ERR_NOMEM;
    xdnn_status s = XDNN_OK;
    for (int i = 0; i < nspecs && s == XDNN_OK; i++) {
        s = bench_expand(&specs[i], &w->per_spec[i], &w->nper[i]);
        w->n += w->nper[i];
    }
    if (s == XDNN_OK && !(w->all = malloc((size_t)(w->n + 1) * sizeof *w->all)))
        s = XDNN_ERR_NOMEM;
    for (int i = 0, k = 0; s == XDNN_OK && i < nspecs; i++)
        for (int j = 0; j < w->nper[i]; j++)
            w->all[k++] = &w->per_spec[i][j];
    return s;
}

static void sweep_free(sweep *w)
{
    for (int i = 0; w->per_spec && i < w->nspecs; i++)
        bench_cases_free(w->per_spec[i], w->nper ? w->nper[i] : 0);
    free(w->per_spec);
    free(w->nper);
    free(w->all);
}

/* FNV-1a 64 of a case's identity: shards and suite digests are made of it,
 * so it must stay the same function from one xdnn to the next. */
#define CASE_HASH_INIT UINT64_C(0xcbf29ce484222325)

/* Hash word s with its terminating NUL ("ab","c" differs from "a","bc"). */
static uint64_t hash_word(uint64_t h, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s;; p++) {
        h = (h ^ *p) * UINT64_C(0x100000001b3);
        if (!*p)
            return h;
    }
}

/* What names a case without loading it: its file or problem, graph, layout,
 * dtype and point. */
static uint64_t case_ident(uint64_t h, const bench_case *c)
{
    const char *words[] = {c->spec->path, c->spec->problem, c->spec->desc, c->spec->graph, c->spec->layout, c->dtype};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        h = hash_word(h, words[i] ? words[i] : "");
    for (int i = 0; i < c->npoints; i++) {
        h = hash_word(h, c->points[i].name);
        h = hash_word(h, c->points[i].value_text);
    }
    return (h ^ '\n') * UINT64_C(0x100000001b3);
}

/* The case list, in order: shard rows carry it, so `xdnn merge` refuses
 * shards of different sweeps. */
static unsigned long long suite_digest(const sweep *w)
{
    uint64_t h = CASE_HASH_INIT;
    for (int k = 0; k < w->n; k++)
        h = case_ident(h, w->all[k]);
    return h;
}

/* The cases to run: all, or --shard's subset (in input order); *nsel of them. */
static int *select_cases(const bench_opts *o, const sweep *w, int *nsel)
{
    int *sel = malloc((size_t)(w->n + 1) * sizeof *sel);
    bool *keep = calloc((size_t)w->n + 1, sizeof *keep);
    double *cost = o->shard_n ? malloc((size_t)(w->n + 1) * sizeof *cost) : NULL;
    unsigned long long *ident = o->shard_n ? malloc((size_t)(w->n + 1) * sizeof *ident) : NULL;
    *nsel = 0;
    if (sel && keep && ((cost && ident) || !o->shard_n)) {
        /* the split uses the GPU cost model on every machine: a shard that
         * falls back to the CPU must not split the list differently */
        for (int k = 0; cost && k < w->n; k++) {
            cost[k] = bench_case_cost(w->all[k], o, true);
            ident[k] = case_ident(CASE_HASH_INIT, w->all[k]);
        }
        if (o->shard_n)
            bench_shard_select(cost, ident, w->n, o->shard_i, o->shard_n, keep);
        for (int k = 0; k < w->n; k++)
            if (!o->shard_n || keep[k])
                sel[(*nsel)++] = k;
    } else {
        free(sel);
        sel = NULL;
    }
    free(keep);
    free(cost);
    free(ident);
    return sel;
}

typedef struct tally {
    int passed, failed, skipped, first_fail;
} tally;

static void tally_row(tally *t, const bench_result *r)
{
    if (r->code == XDNN_OK)
        t->passed++;
    else if (r->code == XDNN_ERR_UNSUPPORTED)
        t->skipped++;
    else {
        t->failed++;
        if (t->first_fail == XDNN_OK)
            t->first_fail = r->code;
    }
}

/* Run the selected cases (here, or in workers) and print their rows in input
 * order to `out`. */
static int run_cases(const bench_opts *o, char **args, int nargs, const sweep *w, const int *sel, int nsel,
                     bool use_gpu, const char *fp, FILE *out, tally *t)
{
    bench_output_begin(out, o);
    if (o->nworkers) {
        bench_result *res = calloc((size_t)nsel + 1, sizeof *res);
        double *cost = malloc((size_t)(nsel + 1) * sizeof *cost);
        xdnn_status s = res && cost ? XDNN_OK : XDNN_ERR_NOMEM;
        for (int k = 0; s == XDNN_OK && k < nsel; k++)
            cost[k] = bench_case_cost(w->all[sel[k]], o, use_gpu);
        if (s == XDNN_OK)
            s = bench_workers_run(o, args, nargs, w->all, sel, cost, nsel, res);
        for (int k = 0; s == XDNN_OK && k < nsel; k++) {
            bench_output_case(out, o, &res[k]);
            tally_row(t, &res[k]);
        }
        for (int k = 0; res && k < nsel; k++)
            free(res[k].parts);
        free(res), free(cost);
        return s;
    }
    bool progress = bench_progress_on(o);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int k = 0; k < nsel; k++) {
        const bench_case *c = w->all[sel[k]];
        if (progress) {
            char label[256];
            bench_case_label(c, label, sizeof label);
            clock_gettime(CLOCK_MONOTONIC, &now);
            bench_progress(k + 1, k, nsel, label, (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9);
        }
        bench_result res;
        bench_run_case(c, o, use_gpu, fp, &res);
        res.index = sel[k];
        if (progress)
            fprintf(stderr, "\r\033[K");
        bench_output_case(out, o, &res);
        fflush(out);
        tally_row(t, &res);
        free(res.parts);
        /* Rows that cannot reach stdout make the rest of the sweep pointless:
         * stop; main() reports the write error and exits 5. */
        if (out == stdout && ferror(out))
            return XDNN_ERR_IO;
    }
    return XDNN_OK;
}

xdnn_status bench_write_file(const char *path, const char *buf, size_t len)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_status s = xdnn_file_write_atomic(path, buf, len, d);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    return s;
}

static char **copy_args(int argc, char **argv)
{
    char **a = calloc((size_t)argc + 1, sizeof *a);
    for (int i = 0; a && i < argc; i++)
        if (!(a[i] = strdup(argv[i]))) {
            while (i--)
                free(a[i]);
            free(a);
            return NULL;
        }
    return a;
}

static void free_args(char **a, int n)
{
    for (int i = 0; a && i < n; i++)
        free(a[i]);
    free(a);
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o;
    bench_spec base;
    const char *batch;
    /* the workers get the arguments as given (options parsing splits some in place) */
    char **args = copy_args(argc, argv); /* "bench" and its arguments */
    if (!args)
        return XDNN_ERR_NOMEM;
    int r = parse_opts(argc, argv, &o, &base, &batch);
    if (r >= 0) {
        bench_spec_free(&base);
        free_args(args, argc);
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
            free_args(args, argc);
            return s;
        }
    }
    bool use_gpu = false;
    char fp[XDNN_FINGERPRINT_MAX];
    int status = XDNN_OK;
    sweep w = {0};
    int *sel = NULL, nsel = 0;
    if (o.dump_graph) {
        status = dump_graphs(specs, nspecs);
        goto done;
    }
    if ((r = choose_device(&o, &use_gpu, fp, sizeof fp)) >= 0) {
        status = r;
        goto done;
    }
    if (!use_gpu && o.check) {
        status = cli_usage_error("bench", "--check compares the GPU with the CPU reference; it needs --device gpu");
        goto done;
    }
    if (!use_gpu && o.cold_l2) { /* a CPU run is one timed pass per node, with no cache state to choose */
        status = cli_usage_error("bench", "--cold-l2 flushes the GPU's L2 cache between timed runs; it needs a GPU "
                                          "(--device gpu)");
        goto done;
    }
    if ((r = check_engine_option(&o, use_gpu)) >= 0) {
        status = r;
        goto done;
    }
    /* expand every spec first: usage errors stop before anything runs */
    if ((status = sweep_expand(specs, nspecs, &w)) != XDNN_OK)
        goto done;
    o.ncases = w.n;
    o.suite = suite_digest(&w);
    if (o.worker) {
        status = bench_worker_serve(&o, w.all, w.n, use_gpu, fp);
        goto done;
    }
    if (!(sel = select_cases(&o, &w, &nsel))) {
        status = XDNN_ERR_NOMEM;
        goto done;
    }
    FILE *out = stdout;
    char *buf = NULL;
    size_t buflen = 0;
    if (o.out_path && !(out = open_memstream(&buf, &buflen))) {
        status = XDNN_ERR_NOMEM;
        goto done;
    }
    tally t = {0};
    status = run_cases(&o, args, argc, &w, sel, nsel, use_gpu, fp, out, &t);
    if (o.out_path)
        fclose(out);
    if (status == XDNN_OK) {
        if (o.out_path)
            status = bench_write_file(o.out_path, buf, buflen);
        bench_summary(o.format == BENCH_TABLE || o.out_path ? stdout : stderr, t.passed, t.failed, t.skipped);
        if (status == XDNN_OK)
            status = t.first_fail;
    }
    free(buf);
done:
    free(sel);
    sweep_free(&w);
    for (int i = 0; i < ntotal; i++)
        if (batch || i > 0)
            bench_spec_free(&specs[i]);
    if (batch)
        free(specs);
    else
        bench_spec_free(&base);
    free_args(args, argc);
    return status;
}

/* bench.h — what the files of `xdnn bench` share: the options, one "spec"
 * (a graph file or a problem shorthand with its --set lists and dtypes, from
 * the command line or one --batch line), one expanded case and its result. */
#ifndef XDNN_CLI_BENCH_H
#define XDNN_CLI_BENCH_H

#include "cli.h"

#include <stdio.h>

struct cJSON;

enum { BENCH_MAX_VALUES = 256, BENCH_MAX_CASES = 100000, BENCH_MAX_DTYPES = 8, BENCH_MAX_WORKERS = 64 };

typedef enum { BENCH_TABLE, BENCH_CSV, BENCH_JSONL, BENCH_TEMPLATE } bench_format;
typedef enum { BENCH_DEV_AUTO, BENCH_DEV_CPU, BENCH_DEV_GPU } bench_device;

/* One --set P=LIST: values as text, ranges already expanded. */
typedef struct bench_set {
    const char *name;
    char **values;          /* malloc'ed strings */
    int nvalues;
} bench_set;

/* What to run: a graph file, or a problem shorthand ("conv", "n2c4h8k4r3p1"). */
typedef struct bench_spec {
    const char *path;       /* graph file (NULL for a problem) */
    const char *problem;    /* problem kind, e.g. "conv" */
    const char *desc;       /* its descriptor, e.g. "dgrad:n2c4h8k4r3p1" */
    const char *graph;      /* --graph NAME */
    const char *includes[CLI_MAX_LIST + 1];
    int nincludes;
    bench_set sets[CLI_MAX_LIST];
    int nsets;
    const char *dtypes[BENCH_MAX_DTYPES];   /* --dtype list; none = as declared */
    int ndtypes;
    const char *layout;     /* problems only */
    const char *where;      /* "batch.txt:3" for diagnostics, or NULL */
    char *owned[2];         /* batch: the line's text and its location (freed with the spec) */
} bench_spec;

/* Option ids of bench/plan/compare/cache (above cli.h's range). */
enum {
    OPT_DTYPE = 2000, OPT_LAYOUT, OPT_MIN_TIME, OPT_TUNE, OPT_DUMP_GRAPH, OPT_BATCH, OPT_NO_PROGRESS,
    OPT_THRESHOLD, OPT_INFO, OPT_REPLAN, OPT_VERBOSE, OPT_DEVICES, OPT_WORKERS, OPT_SHARD, OPT_TIMEOUT,
    OPT_WORKER, OPT_ALLOW_MIXED, OPT_ALLOW_PARTIAL, OPT_PROGRESS, OPT_PERF_TEMPLATE, OPT_COLD_L2
};

typedef struct bench_opts {
    bench_device device;
    const char *engine;     /* auto | all | NAME */
    int warmup, iters;
    bool iters_set;
    double min_time_s;      /* 0 = not given */
    bool check, tune, dump_graph, no_progress;
    bool progress;          /* --progress: the progress line even when stderr is not a terminal */
    const char *perf_template; /* --perf-template: benchdnn's %-codes (BENCH_TEMPLATE rows) */
    bool cold_l2;           /* --cold-l2: GPU runs start with the L2 flushed (run_gpu.c) */
    bench_format format;
    const char *out_path;   /* -o */
    /* several processes (bench_workers.c): one per GPU of --devices, or
     * --workers N on the CPU; 0 = every case in this process */
    int nworkers;
    int devices[BENCH_MAX_WORKERS];  /* GPU ordinals, one worker each (none: CPU workers) */
    int ndevices;
    bool all_devices;       /* --devices all: filled once the GPUs are counted */
    double timeout_s;       /* per case, with workers; 0 = none */
    bool worker;            /* --worker (internal): run the cases the parent sends */
    /* --shard I/N: the cases of subset I (1-based) of N; shard_n 0 = all */
    int shard_i, shard_n;
    int ncases;             /* every case of the sweep, before --shard */
    unsigned long long suite; /* digest of the case list (shard rows carry it) */
} bench_opts;

/* One point of a spec: param values and a dtype. */
typedef struct bench_case {
    const bench_spec *spec;
    xdnn_binding points[CLI_MAX_LIST]; /* name -> value text */
    int npoints;
    const char *dtype;      /* NULL = as declared */
} bench_case;

typedef struct bench_part_result {
    char name[160], ops[96], engine[64], knobs[128];
    bool from_cache;
} bench_part_result;

typedef struct bench_result {
    int index;              /* the case's place in the sweep (input order) */
    char key[1024];
    char graph[128];
    char dtype[16];
    char device[16];
    char status[16];        /* passed | failed | skipped */
    char error[512];        /* why, for failed/skipped */
    char check[16];         /* "", "ok", "mismatch" */
    char repro[2048];
    bench_part_result *parts;
    int nparts;
    int iters;
    double median_ms, min_ms, max_ms, p90_ms; /* p90 < 0: not measured */
    double mean_ms, stddev_ms, p95_ms, p99_ms; /* < 0: not measured (rows of older files) */
    double flops, bytes;
    xdnn_status code;       /* failure class */
    char fingerprint[512];  /* the device that ran it (a tune-cache key) */
    char when[32];          /* when it finished, UTC, ISO 8601 ("2026-11-23T22:40:11Z") */
} bench_result;

/* ---- bench_sweep.c */
/* Parse "1,8,32", "28:112:28" (inclusive, step > 0) or mixes; false after a message. */
bool bench_parse_set(const char *cmd, char *arg, bench_set *out);
void bench_set_free(bench_set *s);
/* The cases of a spec: --set lists replace params' sweep lists, lists multiply
 * (file order, the last param fastest), then dtypes.  Loads the graph once to
 * read its params.  *cases malloc'ed.  Usage errors are printed. */
xdnn_status bench_expand(const bench_spec *sp, bench_case **cases, int *ncases);
/* Free the cases of bench_expand (their point names and values are owned). */
void bench_cases_free(bench_case *cases, int n);
/* Load a spec's module (graph file, or a problem's generated text) and select its graph. */
xdnn_status bench_load_module(const bench_spec *sp, xdnn_module_t **m, xdnn_graph_t **g, xdnn_diags_t *d);
/* Load a case's module and graph, rewrite its io dtype (xdnn_graph_set_io_dtype)
 * and bind its point. */
xdnn_status bench_load_case(const bench_case *c, xdnn_module_t **m, xdnn_graph_t **g, xdnn_diags_t *d);

/* ---- bench_problem.c */
bool bench_is_problem(const char *word);
/* The generated .dnn text of a problem (malloc'ed) or NULL after a message. */
char *bench_problem_text(const char *problem, const char *desc, const char *layout, char *err, size_t errlen);

/* ---- bench_batch.c */
/* Read a batch file (lines of specs; '#' comments; `include FILE`); each line
 * starts from a copy of `base` (the command line's per-case options).
 * *specs holds *nspecs cases, then entries that only own the files' text:
 * free all *ntotal with bench_spec_free, then the array (also after errors). */
xdnn_status bench_read_batch(const char *path, const bench_spec *base, bench_spec **specs, int *nspecs, int *ntotal);
/* Parse spec arguments (GRAPH | PROBLEM DESC, and per-case options) of one
 * batch line or of the command line's leftovers into sp. */
int bench_spec_option(bench_spec *sp, int opt, char *arg, const char *cmd);
/* Set the spec's positional arguments (GRAPH, or PROBLEM DESC); usage error otherwise. */
int bench_spec_positional(bench_spec *sp, char **args, int nargs, const char *cmd);
void bench_spec_free(bench_spec *sp);

/* ---- bench_output.c */
void bench_output_begin(FILE *f, const bench_opts *o);
void bench_output_case(FILE *f, const bench_opts *o, const bench_result *r);
void bench_summary(FILE *f, int passed, int failed, int skipped);
/* A row as JSON (the jsonl format; `xdnn merge` and the workers read it back). */
struct cJSON *bench_result_json(const bench_result *r, const bench_opts *o);
/* Read a row back (a worker's, with its "code"); false with *why when malformed.
 * r->parts malloc'ed. */
bool bench_result_from_json(const struct cJSON *j, bench_result *r, char *why, size_t len);

/* ---- cmd_bench.c helpers used by the others */
/* Write `path` atomically (no partial file on failure); errors printed. */
xdnn_status bench_write_file(const char *path, const char *buf, size_t len);

/* ---- bench_case.c */
void bench_key(const bench_case *c, const xdnn_graph_t *g, char *buf, size_t len);
/* Load, select (or --tune), time and --check one case into *r (r->parts malloc'ed). */
/* The progress line on stderr, over the last one: "[3/10] CASE  ETA 1m05s"
 * (shown: the case's number; CASE the case now running, or just finished
 * when workers run several; the ETA from the mean time of the `done` ones). */
void bench_progress(int shown, int done, int total, const char *label, double elapsed_s);
/* A case's name before its graph is loaded: "mlp_gelu.dnn[T=8,D=4]:f16", "conv n1c2h4k2r3". */
void bench_case_label(const bench_case *c, char *buf, size_t len);
/* --perf-template: the template itself, or benchdnn's named ones ("def",
 * "csv"); NULL with a message in err when a %-code is unknown. */
const char *bench_perf_template(const char *arg, char *err, size_t len);
/* Whether to show it: --progress, else a terminal unless --no-progress. */
bool bench_progress_on(const bench_opts *o);
void bench_run_case(const bench_case *c, const bench_opts *o, bool use_gpu, const char *fp, bench_result *r);
/* The row of a case that did not finish (its worker died or timed out): failed, `why`. */
void bench_lost_case(const bench_case *c, const bench_opts *o, bool use_gpu, const char *fp, const char *why,
                     bench_result *r);
/* Estimated cost (about ms) from the case's own flops and bytes: orders and shards cases. */
double bench_case_cost(const bench_case *c, const bench_opts *o, bool use_gpu);

/* ---- bench_shard.c */
/* Parse --shard I/N; false after a usage message. */
bool bench_parse_shard(const char *arg, int *i, int *n);
/* The cases of shard i (1-based) of n: costs balanced greedily, largest first,
 * ties broken by ident (a hash of each case's identity) then index, so the
 * split depends only on the set of cases.  keep[k] set for the chosen ones. */
void bench_shard_select(const double *cost, const unsigned long long *ident, int ncases, int i, int n, bool *keep);
/* Indices 0..n-1 ordered by cost, largest first (ties: tie[] if given, then
 * input order); malloc'ed. */
int *bench_cost_order(const double *cost, const unsigned long long *tie, int n);

/* ---- bench_workers.c */
/* Run cases[sel[k]] (k < nsel) in o->nworkers worker processes, re-executing
 * this binary with argv (the command's own arguments) and --worker; fill
 * res[k] (in sel's order).  A worker that dies or passes o->timeout_s on a
 * case fails that case with the reason and is replaced; the other rows stay. */
xdnn_status bench_workers_run(const bench_opts *o, char *const *argv, int argc, const bench_case *const *cases,
                              const int *sel, const double *cost, int nsel, bench_result *res);
/* The worker's side (--worker): announce the case count, then run each case
 * index the parent sends and return its row.  Its exit status. */
int bench_worker_serve(const bench_opts *o, const bench_case *const *cases, int ncases, bool use_gpu, const char *fp);

#endif

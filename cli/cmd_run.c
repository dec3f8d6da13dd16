/* cmd_run.c — `xdnn run`: bind a graph, make its inputs, run it on the CPU
 * reference or the GPU, print outputs and timings, save files, and compare
 * (graph `check`s, --expect goldens, --check GPU against the reference). */
#include "cli.h"
#include "run_gpu.h"
#include "run_output.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char run_help[] =
    "usage: xdnn run [options] GRAPH\n"
    "\n"
    "Run GRAPH on random (seeded) or file-loaded inputs and print every output:\n"
    "dtype, shape, layout, min/max/mean/std, NaN/Inf counts, a checksum and the\n"
    "first values; then the time of each op (CPU) or partition (GPU).\n"
    "\n"
    "  --device auto|cpu|gpu|N  where to run (auto: the GPU if there is one, else\n"
    "                         the CPU reference, with a note; N: GPU N only)\n"
    "  --set P=V              override param P (repeatable)\n"
    "  --graph NAME           pick a graph when the file has several\n"
    "  -I DIR                 add DIR to the include search path\n"
    "  --sandbox              untrusted graph: includes and load() only under its\n"
    "                         folder and the -I folders (see xdnn(1))\n"
    "  --input NAME=FILE      load input or weight NAME from FILE (.npy,\n"
    "                         FILE.safetensors[#key], FILE.npz[#key], or raw\n"
    "                         bytes) (repeatable)\n"
    "  --seed N               override the graph seed (all default initializers)\n"
    "  --save DIR             write every output as DIR/NAME.npy (bf16, fp8 widened to\n"
    "                         f32), or all in one FILE.safetensors in their own dtypes\n"
    "  --save-inputs DIR      the same for every input and weight used\n"
    "  --keep A,B             also report (and save) these intermediate tensors\n"
    "  --print-full           print every value, not the first 8\n"
    "  --format text|json     output format (json: one object on stdout)\n"
    "  --expect DIR           compare each output with DIR/NAME.npy\n"
    "  --check                GPU only: also run the CPU reference and compare\n"
    "  --check=norm[:RTOL]    the same, compared by relative norm (--norm)\n"
    "  --norm[=RTOL]          --check and --expect pass an output when\n"
    "                         ||got - ref|| / ||ref|| <= RTOL (default: its dtype's\n"
    "                         rtol), not element by element: for training graphs\n"
    "  --iters N, --warmup N  GPU timing loop (default 20 and 3)\n"
    "  --cuda-graph           GPU: replay the plan as one CUDA graph\n"
    "  --cold-l2              GPU: flush the L2 cache before each timed run\n"
    "  --engine X=ENGINE      GPU: force an engine for partition or op X\n"
    "  -v                     GPU: print partitions and engine candidates\n"
    "  --max-memory SIZE      refuse early when the CPU reference needs more host\n"
    "                         memory than SIZE (64G, 512M; default: MemAvailable)\n"
    "\n"
    "Exit status: 0 ok, 1 usage, 2 syntax, 3 semantic/shape, 4 unsupported,\n"
    "5 file I/O, 6 a check failed, 7 device error.\n";

typedef enum { DEV_AUTO, DEV_CPU, DEV_GPU } device_choice;

/* A training step binds hundreds of weights (ResNet-50: 265). */
#define RUN_MAX_INPUTS 4096

typedef struct run_opts {
    graph_opts g;
    device_choice device;
    xdnn_input_file inputs[RUN_MAX_INPUTS];
    int ninputs;
    bool seed_set;
    uint64_t seed;
    const char *save_dir, *save_inputs_dir, *expect_dir;
    char *keep;
    bool print_full, json, check, cuda_graph, cold_l2;
    bool norm;         /* --norm, --check=norm: --check and --expect compare by relative norm */
    double norm_rtol;  /* 0: each output's default rtol */
    int iters, warmup, verbose;
    bool timing_set; /* --iters or --warmup given */
    uint64_t max_memory; /* bytes; 0 = MemAvailable */
    const char *engines[CLI_MAX_LIST];
    int nengines;
} run_opts;

enum { OPT_RUN_NORM = 3000, OPT_RUN_COLD_L2 }; /* run's own, above cli.h's and bench.h's ids */

/* The RTOL of --norm=RTOL or --check=norm:RTOL (NULL: each output's default). */
static bool parse_norm(const char *text, run_opts *o)
{
    o->norm = true;
    o->norm_rtol = 0;
    if (!text)
        return true;
    char *end;
    errno = 0;
    o->norm_rtol = strtod(text, &end);
    if (errno || end == text || *end || !(o->norm_rtol > 0) || !isfinite(o->norm_rtol)) {
        cli_usage_error("run", "the relative-norm tolerance must be a positive number, got '%s'", text);
        return false;
    }
    return true;
}

static int parse_run_opts(int argc, char **argv, run_opts *o)
{
    static const struct option opts[] = {
        {"set", required_argument, NULL, OPT_SET},
        {"graph", required_argument, NULL, OPT_GRAPH},
        {"sandbox", no_argument, NULL, OPT_SANDBOX},
        {"device", required_argument, NULL, OPT_DEVICE},
        {"input", required_argument, NULL, OPT_INPUT},
        {"seed", required_argument, NULL, OPT_SEED},
        {"save", required_argument, NULL, OPT_SAVE},
        {"save-inputs", required_argument, NULL, OPT_SAVE_INPUTS},
        {"keep", required_argument, NULL, OPT_KEEP},
        {"print-full", no_argument, NULL, OPT_PRINT_FULL},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"expect", required_argument, NULL, OPT_EXPECT},
        {"check", optional_argument, NULL, OPT_CHECK},
        {"norm", optional_argument, NULL, OPT_RUN_NORM},
        {"cold-l2", no_argument, NULL, OPT_RUN_COLD_L2},
        {"iters", required_argument, NULL, OPT_ITERS},
        {"warmup", required_argument, NULL, OPT_WARMUP},
        {"cuda-graph", no_argument, NULL, OPT_CUDA_GRAPH},
        {"engine", required_argument, NULL, OPT_ENGINE},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->iters = 20;
    o->warmup = 3;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "I:v", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case OPT_HELP: fputs(run_help, stdout); return XDNN_OK;
        case OPT_DEVICE:
            if (strcmp(optarg, "auto") == 0)
                o->device = DEV_AUTO;
            else if (strcmp(optarg, "cpu") == 0)
                o->device = DEV_CPU;
            else if (strcmp(optarg, "gpu") == 0)
                o->device = DEV_GPU;
            else if (cli_device_ordinal(optarg) >= 0) { /* GPU N: this process sees only it */
                o->device = DEV_GPU;
                int r = cli_select_device("run", cli_device_ordinal(optarg));
                if (r >= 0)
                    return r;
            } else
                return cli_usage_error("run", "--device must be auto, cpu, gpu or a GPU number, got '%s'", optarg);
            break;
        case OPT_INPUT: {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1])
                return cli_usage_error("run", "--input needs NAME=FILE, got '%s'", optarg);
            if (o->ninputs == RUN_MAX_INPUTS)
                return cli_usage_error("run", "too many --input options (at most %d)", RUN_MAX_INPUTS);
            *eq = 0;
            o->inputs[o->ninputs++] = (xdnn_input_file){optarg, eq + 1};
            break;
        }
        case OPT_SEED:
            errno = 0;
            o->seed = strtoull(optarg, &end, 0);
            if (errno || *end || !*optarg || optarg[0] == '-')
                return cli_usage_error("run", "--seed needs a non-negative integer, got '%s'", optarg);
            o->seed_set = true;
            break;
        case OPT_SAVE: o->save_dir = optarg; break;
        case OPT_SAVE_INPUTS: o->save_inputs_dir = optarg; break;
        case OPT_KEEP: o->keep = optarg; break;
        case OPT_PRINT_FULL: o->print_full = true; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
                return cli_usage_error("run", "--format must be text or json, got '%s'", optarg);
            o->json = strcmp(optarg, "json") == 0;
            break;
        case OPT_EXPECT: o->expect_dir = optarg; break;
        case OPT_CHECK:
            o->check = true;
            if (optarg && strcmp(optarg, "norm") != 0 && strncmp(optarg, "norm:", 5) != 0)
                return cli_usage_error("run", "--check takes no value or norm[:RTOL], got '%s'", optarg);
            if (optarg && !parse_norm(optarg[4] ? optarg + 5 : NULL, o))
                return XDNN_ERR_USAGE;
            break;
        case OPT_RUN_NORM:
            if (!parse_norm(optarg, o))
                return XDNN_ERR_USAGE;
            break;
        case OPT_ITERS:
        case OPT_WARMUP: {
            long v = strtol(optarg, &end, 10);
            if (*end || !*optarg || v < (c == OPT_ITERS ? 1 : 0) || v > 1000000)
                return cli_usage_error("run", "--%s needs an integer in [%d, 1000000], got '%s'",
                                       c == OPT_ITERS ? "iters" : "warmup", c == OPT_ITERS ? 1 : 0, optarg);
            *(c == OPT_ITERS ? &o->iters : &o->warmup) = (int)v;
            o->timing_set = true;
            break;
        }
        case OPT_CUDA_GRAPH: o->cuda_graph = true; break;
        case OPT_RUN_COLD_L2: o->cold_l2 = true; break;
        case OPT_ENGINE:
            if (!strchr(optarg, '='))
                return cli_usage_error("run", "--engine needs PART=ENGINE or OP=ENGINE, got '%s'", optarg);
            if (o->nengines == CLI_MAX_LIST)
                return cli_usage_error("run", "too many --engine options (at most %d)", CLI_MAX_LIST);
            o->engines[o->nengines++] = optarg;
            break;
        case 'v': o->verbose++; break;
        case OPT_MAX_MEMORY:
            if (!cli_parse_bytes(optarg, &o->max_memory) || !o->max_memory)
                return cli_usage_error("run", "--max-memory needs a size such as 64G, 512M or 4096, got '%s'", optarg);
            break;
        default: {
            int r = graph_opts_take(&o->g, c, optarg);
            if (r < 0)
                return XDNN_ERR_USAGE;
            if (r == 0)
                return cli_option_error("run", argv);
        }
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("run", optind == argc ? "missing GRAPH file" : "expected one GRAPH file");
    o->g.path = argv[optind];
    if (o->norm && !o->check && !o->expect_dir)
        return cli_usage_error("run", "--norm sets how --check and --expect compare; give one of them");
    return -1;
}

/* GPU-only options on a CPU run are errors, never silently ignored. */
static int reject_gpu_only(const run_opts *o)
{
    if (o->check)
        return cli_usage_error("run", "--check compares the GPU with the CPU reference; it needs --device gpu");
    if (o->cuda_graph)
        return cli_usage_error("run", "--cuda-graph needs --device gpu");
    if (o->cold_l2)
        return cli_usage_error("run", "--cold-l2 flushes the GPU's L2 cache between timed runs; it needs --device gpu "
                                      "(the CPU reference is not timed per run)");
    if (o->nengines)
        return cli_usage_error("run", "--engine needs --device gpu");
    if (o->timing_set)
        return cli_usage_error("run", "--iters and --warmup set the GPU timing loop; they need --device gpu "
                                      "(xdnn bench times the CPU reference)");
    if (o->verbose)
        return cli_usage_error("run", "-v prints GPU partitions and engine candidates; it needs --device gpu "
                                      "(xdnn plan --explain --device cpu shows the CPU plan)");
    return -1;
}

static xdnn_status ensure_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST)
        return XDNN_OK;
    fprintf(stderr, "xdnn run: cannot create directory '%s': %s\n", dir, strerror(errno));
    return XDNN_ERR_IO;
}

/* File name for a tensor: '/' in fragment-local names becomes '__'. */
static char *tensor_file(const char *dir, const char *name)
{
    size_t n = strlen(dir) + 2 * strlen(name) + 8;
    char *p = malloc(n), *q;
    if (!p)
        return NULL;
    q = p + snprintf(p, n, "%s/", dir);
    for (const char *s = name; *s; s++) {
        if (*s == '/') {
            *q++ = '_';
            *q++ = '_';
        } else {
            *q++ = *s;
        }
    }
    strcpy(q, ".npy");
    return p;
}

/* DIR/NAME.npy per tensor (bf16 and fp8 widened exactly to f32: every NumPy
 * reads it), or, when `dir` names a .safetensors file, one file holding every
 * tensor in its own dtype, bit for bit. */
static xdnn_status save_tensors(const xdnn_graph_t *g, const xdnn_run_t *r, const int *list, int n, const char *dir,
                                xdnn_diags_t *d)
{
    size_t len = strlen(dir);
    if (len > 12 && strcmp(dir + len - 12, ".safetensors") == 0)
        return xdnn_run_save_safetensors(r, list, (size_t)n, dir, d);
    xdnn_status s = ensure_dir(dir);
    for (int i = 0; i < n && s == XDNN_OK; i++) {
        xdnn_tensor_info t;
        xdnn_graph_tensor(g, (size_t)list[i], &t);
        char *path = tensor_file(dir, t.name);
        s = path ? xdnn_run_save_npy(r, (size_t)list[i], path, d) : XDNN_ERR_NOMEM;
        free(path);
    }
    return s;
}

/* The tensors to report: outputs in `output` order, then --keep ones. */
static int report_list(const run_opts *o, const xdnn_graph_t *g, int *list, int cap)
{
    int n = 0;
    for (size_t i = 0; i < xdnn_graph_output_count(g) && n < cap; i++)
        list[n++] = xdnn_graph_output(g, i);
    if (!o->keep)
        return n;
    char *copy = strdup(o->keep), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && n < cap; tok = strtok_r(NULL, ",", &save)) {
        int t = xdnn_graph_find_tensor(g, tok);
        xdnn_tensor_info ti;
        if (t < 0 || xdnn_graph_tensor(g, (size_t)t, &ti) != XDNN_OK || ti.kind != XDNN_TENSOR_VIRTUAL) {
            fprintf(stderr, "xdnn run: --keep %s: graph '%s' has no intermediate tensor '%s'\n", tok,
                    xdnn_graph_name(g), tok);
            free(copy);
            return -1;
        }
        list[n++] = t;
    }
    free(copy);
    return n;
}

/* One comparison's record: into the JSON checks, or printed; false when it failed. */
static bool report_compare(const char *what, const xdnn_graph_t *g, int tensor, const xdnn_compare_result *r,
                           bool norm, cJSON *jchecks, FILE *out)
{
    xdnn_tensor_info t;
    xdnn_graph_tensor(g, (size_t)tensor, &t);
    if (jchecks)
        cJSON_AddItemToArray(jchecks, compare_json(what, t.name, r, t.rank, norm));
    else
        print_compare_text(out, what, t.name, r, t.rank, norm);
    return r->ok;
}

/* --norm: the verdict becomes ||got - ref|| / ||ref|| <= rtol over the finite
 * elements (bf16 gradients of a training step meet a norm bound, not an
 * element-wise one: METHOD.md), and NaN or infinities must still sit at the
 * same places: compare.c gives those mismatches a NaN abs_err and ranks them
 * first among the worst.  rtol 0: the output's default rtol (per dtype and
 * producing op, the relative-norm guides of METHOD.md). */
static void norm_verdict(xdnn_compare_result *cr, double rtol)
{
    bool nonfinite_differ = cr->nworst > 0 && isnan(cr->worst[0].abs_err);
    cr->rtol = rtol > 0 ? rtol : cr->rtol;
    cr->atol = 0;
    cr->ok = cr->count > 0 && !nonfinite_differ && cr->rel_norm <= cr->rtol;
}

/* `check` statements of the graph: compare an output with a reference initializer. */
static xdnn_status run_graph_checks(const xdnn_graph_t *g, xdnn_run_t *r, cJSON *jchecks, FILE *out,
                                    xdnn_diags_t *d)
{
    xdnn_status worst = XDNN_OK;
    for (size_t k = 0; k < xdnn_graph_check_count(g); k++) {
        int tensor;
        xdnn_compare_result cr;
        xdnn_status s = xdnn_run_graph_check(r, k, &tensor, &cr, d);
        if (s != XDNN_OK)
            return s;
        if (!report_compare("check", g, tensor, &cr, false, jchecks, out))
            worst = XDNN_ERR_CHECK;
    }
    return worst;
}

static xdnn_status run_expect(const xdnn_graph_t *g, const xdnn_run_t *r, const run_opts *o, const int *list,
                              int n, cJSON *jchecks, FILE *out, xdnn_diags_t *d)
{
    const char *dir = o->expect_dir;
    xdnn_status worst = XDNN_OK;
    for (int i = 0; i < n; i++) {
        xdnn_tensor_info t;
        xdnn_graph_tensor(g, (size_t)list[i], &t);
        char *path = tensor_file(dir, t.name);
        double rtol, atol;
        xdnn_graph_default_tolerance(g, (size_t)list[i], &rtol, &atol);
        xdnn_compare_result cr;
        xdnn_status s = path ? xdnn_run_compare_npy(r, (size_t)list[i], path, rtol, atol, &cr, d) : XDNN_ERR_NOMEM;
        free(path);
        if (s != XDNN_OK)
            return s;
        if (o->norm)
            norm_verdict(&cr, o->norm_rtol);
        if (!report_compare("expect", g, list[i], &cr, o->norm, jchecks, out))
            worst = XDNN_ERR_CHECK;
    }
    return worst;
}

/* --check: the CPU reference on the same inputs, compared output by output. */
static xdnn_status check_against_reference(xdnn_graph_t *g, const xdnn_run_t *gpu, const char *base_dir,
                                           const run_opts *o, const int *list, int n, cJSON *jchecks, FILE *out,
                                           xdnn_diags_t *d)
{
    xdnn_run_t *ref = NULL;
    xdnn_status s = xdnn_run_create(g, base_dir, &ref);
    if (s == XDNN_OK)
        s = xdnn_run_copy_inputs(ref, gpu);
    if (s == XDNN_OK)
        s = xdnn_run_reference(ref, d);
    xdnn_status worst = XDNN_OK;
    for (int i = 0; i < n && s == XDNN_OK; i++) {
        double rtol, atol;
        xdnn_graph_default_tolerance(g, (size_t)list[i], &rtol, &atol);
        xdnn_compare_result cr;
        s = xdnn_run_compare(gpu, (size_t)list[i], ref, rtol, atol, &cr);
        if (s == XDNN_OK && o->norm)
            norm_verdict(&cr, o->norm_rtol);
        if (s == XDNN_OK && !report_compare("reference", g, list[i], &cr, o->norm, jchecks, out))
            worst = XDNN_ERR_CHECK;
    }
    xdnn_run_destroy(ref);
    return s != XDNN_OK ? s : worst;
}

int cmd_run(int argc, char **argv)
{
    run_opts o;
    int r = parse_run_opts(argc, argv, &o);
    if (r >= 0)
        return r;
    char why[512];
    bool use_gpu = false;
    if (o.device != DEV_CPU) {
        use_gpu = xdnn_backend_available(XDNN_BACKEND_CUDA, why, sizeof why);
        if (!use_gpu && o.device == DEV_GPU) {
            cli_device_note(why, sizeof why);
            fprintf(stderr, "xdnn run: no usable GPU: %s\n", why);
            return XDNN_ERR_DEVICE;
        }
        if (!use_gpu)
            fprintf(stderr, "note: no GPU (%s); running on the CPU reference\n", why);
    }
    if (!use_gpu && (r = reject_gpu_only(&o)) >= 0)
        return r;

    xdnn_module_t *m = NULL;
    xdnn_plan_t *plan = NULL; /* `xdnn run g.xplan` (cmd_plan.c): the plan owns g */
    xdnn_graph_t *g;
    xdnn_status s = plan_path_is_plan(o.g.path) ? plan_load_for_run(&o.g, o.json ? stderr : stdout, &plan, &g)
                                                : cli_load_bound(&o.g, &m, &g, true);
    if (s == XDNN_OK && plan && (use_gpu ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU) != xdnn_plan_backend(plan)) {
        fprintf(stderr, "xdnn run: %s is a plan for the %s backend; run it with --device %s\n", o.g.path,
                xdnn_backend_name(xdnn_plan_backend(plan)), use_gpu ? "cpu" : "gpu");
        s = XDNN_ERR_UNSUPPORTED;
    }
    /* the CPU reference allocates everything up front: refuse what cannot fit
     * now, not after minutes of work or an OOM kill half way */
    if (s == XDNN_OK && (!use_gpu || o.check) && (r = cli_check_reference_memory("run", g, o.max_memory)) >= 0)
        s = (xdnn_status)r;
    if (s != XDNN_OK) {
        xdnn_plan_destroy(plan);
        xdnn_module_destroy(m);
        return s;
    }
    if (o.seed_set)
        xdnn_graph_set_seed(g, o.seed);
    /* every output (a training step has hundreds: a fixed cap silently dropped the rest
     * from the report, --save, --expect and --check), then up to 2 * CLI_MAX_LIST --keep names */
    int cap = (int)xdnn_graph_output_count(g) + 2 * CLI_MAX_LIST;
    int *list = malloc((size_t)cap * sizeof *list);
    int nlist = list ? report_list(&o, g, list, cap) : -1;
    if (nlist < 0) {
        free(list);
        xdnn_plan_destroy(plan);
        xdnn_module_destroy(m);
        return list ? XDNN_ERR_USAGE : XDNN_ERR_NOMEM;
    }
    for (int i = 0; i < nlist; i++)
        xdnn_graph_keep_tensor(g, (size_t)list[i]);

    xdnn_diags_t *d = xdnn_diags_create();
    char *base = cli_dirname(o.g.path);
    xdnn_run_t *run = NULL;
    run_gpu_report rep = {0};
    cJSON *root = o.json ? cJSON_CreateObject() : NULL, *jchecks = NULL;
    s = xdnn_run_create(g, base, &run);
    if (s == XDNN_OK)
        s = xdnn_run_load_inputs(run, o.inputs, (size_t)o.ninputs, d);
    if (s == XDNN_OK && o.save_inputs_dir) {
        int ins[1024], nin = 0;
        for (size_t i = 0; i < xdnn_graph_tensor_count(g) && nin < 1024; i++) {
            xdnn_tensor_info t;
            xdnn_graph_tensor(g, i, &t); /* the kind is set even for a tensor bind never reached */
            if (t.kind != XDNN_TENSOR_VIRTUAL)
                ins[nin++] = (int)i;
        }
        s = save_tensors(g, run, ins, nin, o.save_inputs_dir, d);
    }
    if (s == XDNN_OK)
        s = xdnn_run_alloc_results(run, d);
    if (s == XDNN_OK && use_gpu) {
        /* a loaded plan runs as it is, unless this run changes what it was made
         * for (an engine, the seed, a tensor to keep): then it is planned again */
        bool as_loaded = plan && !o.nengines && !o.seed_set && !o.keep;
        run_gpu_opts go = {.warmup = o.warmup, .iters = o.iters, .cuda_graph = o.cuda_graph, .cold_l2 = o.cold_l2, .force = o.engines,
                           .nforce = (size_t)o.nengines, .verbose = o.verbose, .plan = as_loaded ? plan : NULL};
        s = run_gpu(g, run, &go, &rep, d);
    } else if (s == XDNN_OK) {
        s = xdnn_run_reference(run, d);
    }
    if (s == XDNN_OK) {
        if (root) {
            cJSON_AddStringToObject(root, "graph", xdnn_graph_name(g));
            cJSON_AddStringToObject(root, "device", use_gpu ? "gpu" : "cpu");
            cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
            for (int i = 0; i < nlist; i++)
                cJSON_AddItemToArray(outs, tensor_json(g, run, list[i], o.print_full));
            if (use_gpu)
                cJSON_AddItemToObject(root, "gpu", gpu_report_json(&rep));
            else
                cJSON_AddItemToObject(root, "ops", cpu_times_json(g, run));
            cJSON_AddNumberToObject(root, "total_ms", use_gpu ? rep.total_ms : xdnn_run_total_ms(run));
            jchecks = cJSON_AddArrayToObject(root, "checks");
        } else {
            for (int i = 0; i < nlist; i++)
                print_tensor_text(stdout, g, run, list[i], o.print_full);
            if (use_gpu)
                print_gpu_report_text(stdout, &rep);
            else
                print_cpu_times_text(stdout, g, run);
        }
    }
    if (s == XDNN_OK && o.save_dir)
        s = save_tensors(g, run, list, nlist, o.save_dir, d);
    xdnn_status verdict = XDNN_OK;
    if (s == XDNN_OK && xdnn_graph_check_count(g))
        verdict = run_graph_checks(g, run, jchecks, stdout, d);
    if (s == XDNN_OK && verdict != XDNN_ERR_CHECK && verdict != XDNN_OK)
        s = verdict;
    if (s == XDNN_OK && o.expect_dir) {
        xdnn_status e = run_expect(g, run, &o, list, nlist, jchecks, stdout, d);
        if (e == XDNN_ERR_CHECK)
            verdict = e;
        else if (e != XDNN_OK)
            s = e;
    }
    if (s == XDNN_OK && use_gpu && o.check) {
        xdnn_status e = check_against_reference(g, run, base, &o, list, nlist, jchecks, stdout, d);
        if (e == XDNN_ERR_CHECK)
            verdict = e;
        else if (e != XDNN_OK)
            s = e;
    }
    if (root && s == XDNN_OK) {
        cJSON_AddBoolToObject(root, "ok", verdict == XDNN_OK);
        char *text = cJSON_Print(root);
        if (text)
            puts(text);
        cJSON_free(text);
    }
    cJSON_Delete(root);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    run_gpu_report_free(&rep);
    if (use_gpu)
        xdnn_release_caches(); /* compiled kernels, handles: keep valgrind runs clean */
    xdnn_run_destroy(run);
    free(base);
    free(list);
    xdnn_plan_destroy(plan);
    xdnn_module_destroy(m);
    return s != XDNN_OK ? s : verdict;
}

int cmd_engines(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        puts("usage: xdnn engines [--format text|json]\n\nList every GPU engine: its name, the op classes it "
             "serves and what it does\n(--format json: an array of {name, classes, summary}).");
        return XDNN_OK;
    }
    bool json = argc == 3 && strcmp(argv[1], "--format") == 0 && strcmp(argv[2], "json") == 0;
    if (argc > 1 && !json && !(argc == 3 && strcmp(argv[1], "--format") == 0 && strcmp(argv[2], "text") == 0))
        return cli_usage_error("engines", "takes only --format text|json");
    if (!json) {
        xdnn_engines_print(stdout);
        return XDNN_OK;
    }
    char *text = xdnn_engines_json();
    if (!text)
        return XDNN_ERR_NOMEM;
    puts(text);
    free(text);
    return XDNN_OK;
}

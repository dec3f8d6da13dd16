/* cmd_run.c — `xdnn run`: bind a graph, make its inputs, run it on the CPU
 * reference or the GPU, print outputs and timings, save files, and compare
 * (graph `check`s, --expect goldens, --check GPU against the reference). */
#include "cli.h"

#include "core/exec.h"
#include "data/data.h"
#include "gpu/gpu.h"
#include "ops/op.h"
#include "run_gpu.h"
#include "run_output.h"

#include <errno.h>
#include <getopt.h>
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
    "  --iters N, --warmup N  GPU timing loop (default 20 and 3)\n"
    "  --cuda-graph           GPU: replay the plan as one CUDA graph\n"
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
    input_override inputs[RUN_MAX_INPUTS];
    int ninputs;
    bool seed_set;
    uint64_t seed;
    const char *save_dir, *save_inputs_dir, *expect_dir;
    char *keep;
    bool print_full, json, check, cuda_graph;
    int iters, warmup, verbose;
    bool timing_set; /* --iters or --warmup given */
    uint64_t max_memory; /* bytes; 0 = MemAvailable */
    const char *engines[CLI_MAX_LIST];
    int nengines;
} run_opts;

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
        {"check", no_argument, NULL, OPT_CHECK},
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
            o->inputs[o->ninputs++] = (input_override){optarg, eq + 1};
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
        case OPT_CHECK: o->check = true; break;
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
    return -1;
}

/* GPU-only options on a CPU run are errors, never silently ignored. */
static int reject_gpu_only(const run_opts *o)
{
    if (o->check)
        return cli_usage_error("run", "--check compares the GPU with the CPU reference; it needs --device gpu");
    if (o->cuda_graph)
        return cli_usage_error("run", "--cuda-graph needs --device gpu");
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
static xdnn_status save_tensors(const run_state *st, const int *list, int n, const char *dir, xdnn_diags_t *d)
{
    size_t len = strlen(dir);
    if (len > 12 && strcmp(dir + len - 12, ".safetensors") == 0) {
        const char **names = calloc((size_t)(n ? n : 1), sizeof *names);
        const host_tensor **ts = calloc((size_t)(n ? n : 1), sizeof *ts);
        xdnn_status s = names && ts ? XDNN_OK : XDNN_ERR_NOMEM;
        for (int i = 0; i < n && s == XDNN_OK; i++) {
            names[i] = st->g->tensors[list[i]].name;
            ts[i] = &st->tensors[list[i]];
        }
        if (s == XDNN_OK)
            s = safetensors_write(dir, n, names, ts, d);
        free(names);
        free(ts);
        return s;
    }
    xdnn_status s = ensure_dir(dir);
    for (int i = 0; i < n && s == XDNN_OK; i++) {
        char *path = tensor_file(dir, st->g->tensors[list[i]].name);
        s = path ? npy_write(path, &st->tensors[list[i]], d) : XDNN_ERR_NOMEM;
        free(path);
    }
    return s;
}

/* The tensors to report: outputs in `output` order, then --keep ones. */
static int report_list(const run_opts *o, const xgraph *g, int *list, int cap)
{
    int n = 0;
    for (size_t i = 0; i < g->noutputs && n < cap; i++)
        list[n++] = g->outputs[i];
    if (!o->keep)
        return n;
    char *copy = strdup(o->keep), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && n < cap; tok = strtok_r(NULL, ",", &save)) {
        int t = ir_find_tensor(g, tok);
        if (t < 0 || g->tensors[t].kind != TK_VIRTUAL || !g->tensors[t].rdefined) {
            fprintf(stderr, "xdnn run: --keep %s: graph '%s' has no intermediate tensor '%s'\n", tok, g->name, tok);
            free(copy);
            return -1;
        }
        list[n++] = t;
    }
    free(copy);
    return n;
}

/* `check` statements of the graph: compare an output with a reference initializer. */
static xdnn_status run_graph_checks(run_state *st, cJSON *jchecks, FILE *out, xdnn_diags_t *d)
{
    xgraph *g = st->g;
    xdnn_status worst = XDNN_OK;
    for (size_t i = 0; i < g->nchecks; i++) {
        const xcheck *k = &g->checks[i];
        const xtensor *t = &g->tensors[k->tensor];
        xtensor ref_decl = *t;
        ref_decl.init = k->ref;
        ref_decl.kind = TK_INPUT;
        host_tensor ref = {0};
        xdnn_status s = host_tensor_alloc(&ref, XDNN_F64, t->rrank, t->rdims, NULL);
        double *vals = s == XDNN_OK ? malloc((size_t)(t->rnumel ? t->rnumel : 1) * sizeof *vals) : NULL;
        if (s == XDNN_OK && !vals)
            s = XDNN_ERR_NOMEM;
        if (s == XDNN_OK)
            s = init_fill(g, &ref_decl, st->base_dir, vals, d);
        if (s == XDNN_OK) {
            tensor_scatter(&ref, vals);
            double rtol, atol;
            compare_default_tolerance(t->rdtype, t->producer >= 0 ? g->nodes[t->producer].op : -1, &rtol, &atol);
            value v;
            if (k->rtol && graph_eval(g, k->rtol, d, &v))
                value_as_float(&v, &rtol);
            if (k->atol && graph_eval(g, k->atol, d, &v))
                value_as_float(&v, &atol);
            compare_result r;
            compare_tensors(&st->tensors[k->tensor], &ref, rtol, atol, &r);
            if (jchecks)
                cJSON_AddItemToArray(jchecks, compare_json("check", t->name, &r, t->rrank));
            else
                print_compare_text(out, "check", t->name, &r, t->rrank, rtol, atol);
            if (!r.ok)
                worst = XDNN_ERR_CHECK;
        }
        free(vals);
        host_tensor_free(&ref);
        if (s != XDNN_OK)
            return s;
    }
    return worst;
}

static xdnn_status run_expect(run_state *st, const char *dir, const int *list, int n, cJSON *jchecks, FILE *out,
                              xdnn_diags_t *d)
{
    xdnn_status worst = XDNN_OK;
    for (int i = 0; i < n; i++) {
        const xtensor *t = &st->g->tensors[list[i]];
        char *path = tensor_file(dir, t->name);
        host_tensor ref = {0};
        xdnn_status s = path ? npy_read(path, &ref, d) : XDNN_ERR_NOMEM;
        if (s == XDNN_OK) {
            bool same = ref.rank == t->rrank;
            for (int k = 0; same && k < t->rrank; k++)
                same = ref.dims[k] == t->rdims[k];
            if (!same) {
                diag_error(d, XDNN_ERR_CHECK, ((xloc){.file = path}), "golden shape differs from output '%s'",
                           t->name);
                s = XDNN_ERR_CHECK;
            }
        }
        if (s == XDNN_OK) {
            double rtol, atol;
            compare_default_tolerance(t->rdtype, t->producer >= 0 ? st->g->nodes[t->producer].op : -1, &rtol,
                                      &atol);
            compare_result r;
            compare_tensors(&st->tensors[list[i]], &ref, rtol, atol, &r);
            if (jchecks)
                cJSON_AddItemToArray(jchecks, compare_json("expect", t->name, &r, t->rrank));
            else
                print_compare_text(out, "expect", t->name, &r, t->rrank, rtol, atol);
            if (!r.ok)
                worst = XDNN_ERR_CHECK;
        }
        host_tensor_free(&ref);
        free(path);
        if (s != XDNN_OK)
            return s;
    }
    return worst;
}

/* --check: the CPU reference on the same inputs, compared output by output. */
static xdnn_status check_against_reference(run_state *gpu, const int *list, int n, cJSON *jchecks, FILE *out,
                                           xdnn_diags_t *d)
{
    run_state ref;
    xdnn_status s = run_state_init(&ref, gpu->g, gpu->base_dir);
    if (s == XDNN_OK)
        s = run_state_copy_inputs(&ref, gpu);
    if (s == XDNN_OK)
        s = exec_cpu_run(&ref, d);
    xdnn_status worst = XDNN_OK;
    for (int i = 0; i < n && s == XDNN_OK; i++) {
        const xtensor *t = &gpu->g->tensors[list[i]];
        double rtol, atol;
        compare_default_tolerance(t->rdtype, t->producer >= 0 ? gpu->g->nodes[t->producer].op : -1, &rtol, &atol);
        compare_result r;
        compare_tensors(&gpu->tensors[list[i]], &ref.tensors[list[i]], rtol, atol, &r);
        if (jchecks)
            cJSON_AddItemToArray(jchecks, compare_json("reference", t->name, &r, t->rrank));
        else
            print_compare_text(out, "reference", t->name, &r, t->rrank, rtol, atol);
        if (!r.ok)
            worst = XDNN_ERR_CHECK;
    }
    run_state_free(&ref);
    return s != XDNN_OK ? s : worst;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    return strndup(path, (size_t)(slash - path) + (slash == path));
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
        use_gpu = gpu_available(why, sizeof why);
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
        g->rseed = o.seed;
    /* every output (a training step has hundreds: a fixed cap silently dropped the rest
     * from the report, --save, --expect and --check), then up to 2 * CLI_MAX_LIST --keep names */
    int cap = (int)g->noutputs + 2 * CLI_MAX_LIST;
    int *list = malloc((size_t)cap * sizeof *list);
    int nlist = list ? report_list(&o, g, list, cap) : -1;
    if (nlist < 0) {
        free(list);
        xdnn_plan_destroy(plan);
        xdnn_module_destroy(m);
        return list ? XDNN_ERR_USAGE : XDNN_ERR_NOMEM;
    }
    for (int i = 0; i < nlist; i++)
        g->tensors[list[i]].keep = true;

    xdnn_diags_t *d = xdnn_diags_create();
    char *base = dir_of(o.g.path);
    run_state st;
    gpu_report rep = {0};
    cJSON *root = o.json ? cJSON_CreateObject() : NULL, *jchecks = NULL;
    s = run_state_init(&st, g, base);
    if (s == XDNN_OK)
        s = exec_load_inputs(&st, o.inputs, o.ninputs, d);
    if (s == XDNN_OK && o.save_inputs_dir) {
        int ins[1024], nin = 0;
        for (size_t i = 0; i < g->ntensors && nin < 1024; i++)
            if (g->tensors[i].kind != TK_VIRTUAL)
                ins[nin++] = (int)i;
        s = save_tensors(&st, ins, nin, o.save_inputs_dir, d);
    }
    if (s == XDNN_OK)
        s = run_state_alloc_results(&st, d);
    if (s == XDNN_OK && use_gpu) {
        /* a loaded plan runs as it is, unless this run changes what it was made
         * for (an engine, the seed, a tensor to keep): then it is planned again */
        bool as_loaded = plan && !o.nengines && !o.seed_set && !o.keep;
        run_gpu_opts go = {.warmup = o.warmup, .iters = o.iters, .cuda_graph = o.cuda_graph, .force = o.engines,
                           .nforce = (size_t)o.nengines, .verbose = o.verbose, .plan = as_loaded ? plan : NULL};
        s = run_gpu(g, &st, &go, &rep, d);
    } else if (s == XDNN_OK) {
        s = exec_cpu_run(&st, d);
    }
    if (s == XDNN_OK) {
        if (root) {
            cJSON_AddStringToObject(root, "graph", g->name);
            cJSON_AddStringToObject(root, "device", use_gpu ? "gpu" : "cpu");
            cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
            for (int i = 0; i < nlist; i++)
                cJSON_AddItemToArray(outs, tensor_json(&st, list[i], o.print_full));
            if (use_gpu)
                cJSON_AddItemToObject(root, "gpu", gpu_report_json(&rep));
            else
                cJSON_AddItemToObject(root, "ops", cpu_times_json(&st));
            cJSON_AddNumberToObject(root, "total_ms", use_gpu ? rep.total_ms : st.total_ms);
            jchecks = cJSON_AddArrayToObject(root, "checks");
        } else {
            for (int i = 0; i < nlist; i++)
                print_tensor_text(stdout, &st, list[i], o.print_full);
            if (use_gpu)
                print_gpu_report_text(stdout, &rep);
            else
                print_cpu_times_text(stdout, &st);
        }
    }
    if (s == XDNN_OK && o.save_dir)
        s = save_tensors(&st, list, nlist, o.save_dir, d);
    xdnn_status verdict = XDNN_OK;
    if (s == XDNN_OK && g->nchecks)
        verdict = run_graph_checks(&st, jchecks, stdout, d);
    if (s == XDNN_OK && verdict != XDNN_ERR_CHECK && verdict != XDNN_OK)
        s = verdict;
    if (s == XDNN_OK && o.expect_dir) {
        xdnn_status e = run_expect(&st, o.expect_dir, list, nlist, jchecks, stdout, d);
        if (e == XDNN_ERR_CHECK)
            verdict = e;
        else if (e != XDNN_OK)
            s = e;
    }
    if (s == XDNN_OK && use_gpu && o.check) {
        xdnn_status e = check_against_reference(&st, list, nlist, jchecks, stdout, d);
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
    gpu_report_free(&rep);
    if (use_gpu)
        gpu_release_caches(); /* compiled kernels, handles: keep valgrind runs clean */
    run_state_free(&st);
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
        gpu_print_engines(stdout);
        return XDNN_OK;
    }
    char *text = gpu_engines_json();
    if (!text)
        return XDNN_ERR_NOMEM;
    puts(text);
    free(text);
    return XDNN_OK;
}

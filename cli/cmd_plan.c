/* cmd_plan.c — `xdnn plan`: make an execution plan (.xplan) of a bound graph,
 * describe one (--info), rebuild one for this device (--replan); and the hook
 * `xdnn run PLAN.xplan` uses to load one. */
#include "bench.h"
#include "plan_explain.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { OPT_CONST_WEIGHTS = 2900, OPT_DYNAMIC };

static const char plan_help[] =
    "usage: xdnn plan [options] GRAPH -o OUT.xplan\n"
    "       xdnn plan --info PLAN.xplan\n"
    "       xdnn plan --replan PLAN.xplan -o OUT.xplan [--tune] [--device D]\n"
    "       xdnn plan --explain [--device-model M] [-v] GRAPH\n"
    "\n"
    "Write everything needed to run GRAPH again without planning, tuning or\n"
    "compiling: the graph specialized to its param values, the engine and knobs of\n"
    "every partition, the workspace layout, compiled GPU modules, the device\n"
    "fingerprint, the xdnn version and a checksum (format: man xdnn-plan 5).\n"
    "`xdnn run OUT.xplan` runs it; a plan from another device or xdnn version is\n"
    "refused (--replan rebuilds it from the graph it carries).\n"
    "\n"
    "  --set P=V, --graph NAME, -I DIR   as in `xdnn run` (one value per param)\n"
    "  --device auto|cpu|gpu|N  the device to plan for (N: GPU N; auto: the GPU if any)\n"
    "  --tune                 time every engine per partition and keep the fastest\n"
    "                         (stored in the tune cache too)\n"
    "  -o FILE                where to write the plan (atomically)\n"
    "  --info                 describe a plan: versions, device, graph, partitions,\n"
    "                         engines, workspace, compiled modules (--format json:\n"
    "                         one object: tensors, partitions with candidates, ...)\n"
    "  --replan               rebuild a plan (any device or version) for this one\n"
    "  --explain              print every partition, the engine chosen, the other\n"
    "                         engines that could run it with their estimated cost\n"
    "                         (-v: also those that declined, and why); writes nothing\n"
    "  --device-model M       plan for a described GPU (h100, h200, a100) instead of\n"
    "                         the one here: works without a GPU (with --explain)\n"
    "  --engine X=ENGINE      force an engine for partition or op X (repeatable)\n"
    "  --const-weights        promise that the graph's weights never change: on the\n"
    "                         GPU, partitions computing from weights only (casts,\n"
    "                         layout copies) run once, in the first execute, not\n"
    "                         every time; a weight changed later is not seen\n"
    "  --dynamic P=LO:HI      integer param P may take any value in LO..HI later\n"
    "                         (repeatable): `xdnn run PLAN --set P=V` runs it at V\n"
    "                         with the plan's engines, without planning again\n"
    "\n"
    "Exit status: 0 ok, 1 usage, 3 graph error, 4 plan refused (other device or\n"
    "version), 5 unreadable, truncated or corrupt plan, 7 device error.\n";

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

bool plan_path_is_plan(const char *path)
{
    size_t n = strlen(path);
    if (n > 6 && strcmp(path + n - 6, ".xplan") == 0)
        return true;
    /* Sniff regular files only: reading a FIFO or stdin here would eat the
     * first bytes the real reader needs (or block on a FIFO with no writer). */
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    FILE *f = fopen(path, "rb");
    char magic[8] = {0};
    bool is = f && fread(magic, 1, 8, f) == 8 && memcmp(magic, "XDNNPLAN", 8) == 0;
    if (f)
        fclose(f);
    return is;
}

/* Read and verify a plan file (not its device; its graph not parsed yet). */
static xdnn_status read_plan(const char *path, xdnn_diags_t *d, xdnn_plan_t **out)
{
    return xdnn_plan_load(path, XDNN_PLAN_INSPECT, d, out);
}

/* The engines of a plan, one line: "y.0=cpu_reference y.1=cpu_reference ...". */
static void print_engines(FILE *f, const xdnn_plan_t *p)
{
    size_t n = xdnn_plan_partition_count(p);
    fprintf(f, "engines loaded (%zu):", n);
    for (size_t i = 0; i < n; i++) {
        xdnn_partition_info pi;
        xdnn_plan_partition(p, i, &pi);
        fprintf(f, " %s=%s%s%s", pi.name, pi.engine, pi.knobs[0] ? ":" : "", pi.knobs);
    }
    fprintf(f, "\n");
}

/* `xdnn run PLAN --set P=V`: the loaded plan resized to its dynamic params'
 * new values (xdnn_plan_resize), which replaces it in *plan. */
static xdnn_status resize_for_run(const graph_opts *o, FILE *info, xdnn_plan_t **plan)
{
    if (!xdnn_plan_dynamic_count(*plan)) {
        fprintf(stderr, "xdnn run: %s is a plan, specialized when it was made: --set applies only to its dynamic params "
                        "and it has none (make another plan with xdnn plan --set ..., or one with --dynamic P=LO:HI)\n",
                o->path);
        return XDNN_ERR_USAGE;
    }
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_plan_t *q = NULL;
    xdnn_status s = xdnn_plan_resize(*plan, o->sets, (size_t)o->nsets, d, &q);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    if (s != XDNN_OK)
        return s;
    xdnn_plan_stats st;
    xdnn_plan_get_stats(q, &st);
    fprintf(info, "plan resize: %.3f ms (%d kernel%s compiled, %d cached)\n", st.build_ms, st.kernels_compiled,
            st.kernels_compiled == 1 ? "" : "s", st.kernels_cached);
    xdnn_plan_destroy(*plan);
    *plan = q;
    return XDNN_OK;
}

xdnn_status plan_load_for_run(const graph_opts *o, FILE *info, xdnn_plan_t **plan, xdnn_graph_t **g)
{
    *plan = NULL;
    *g = NULL;
    if (o->graph || o->nincludes) {
        fprintf(stderr, "xdnn run: %s is a plan, specialized when it was made: --graph and -I do not apply "
                        "(make another plan with xdnn plan ...)\n", o->path);
        return XDNN_ERR_USAGE;
    }
    /* verified, refused when it is another device's or version's, its engines
     * restored as data and its kernels loaded: ready to execute */
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_status s = xdnn_plan_load(o->path, 0, d, plan);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    if (s == XDNN_OK && o->nsets)
        s = resize_for_run(o, info, plan);
    if (s != XDNN_OK) {
        xdnn_plan_destroy(*plan);
        *plan = NULL;
        return s;
    }
    xdnn_plan_stats st;
    xdnn_plan_get_stats(*plan, &st);
    *g = xdnn_plan_graph(*plan);
    fprintf(info, "plan %s: graph %s, device %s\n", o->path, xdnn_graph_name(*g), xdnn_plan_device(*plan));
    print_engines(info, *plan);
    fprintf(info, "plan load: %.3f ms (%d compiled module%s%s)\n", xdnn_plan_load_ms(*plan), st.modules,
            st.modules == 1 ? "" : "s", st.context_ms > 0 ? "; device setup not counted" : "");
    return XDNN_OK;
}

static xdnn_status write_plan(const xdnn_plan_t *p, const char *path, double ms)
{
    xdnn_diags_t *d = xdnn_diags_create();
    void *bytes;
    size_t len;
    xdnn_status s = xdnn_plan_serialize(p, &bytes, &len, d);
    if (s == XDNN_OK) {
        s = xdnn_file_write_atomic(path, bytes, len, d);
        free(bytes);
    }
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    if (s == XDNN_OK && strcmp(path, "-") != 0) {
        int tuned = 0, cached = 0, nparts = (int)xdnn_plan_partition_count(p);
        for (int i = 0; i < nparts; i++) {
            xdnn_partition_info pi;
            xdnn_plan_partition(p, (size_t)i, &pi);
            tuned += pi.tuned_ms >= 0 && !pi.from_cache;
            cached += pi.from_cache;
        }
        printf("plan %s: graph %s, %d partition%s (%d tuned, %d from the tune cache), %zu bytes, planned in %.1f ms\n",
               path, xdnn_plan_graph_name(p), nparts, nparts == 1 ? "" : "s", tuned, cached, len, ms);
        printf("device: %s\n", xdnn_plan_device(p));
    }
    return s;
}

/* `plan --info --format json`: versions, device, whether it runs here, the
 * tensors a caller binds, and the partitions with their candidates. */
static xdnn_status print_info_json(const char *path, xdnn_plan_t *p, bool runs_here)
{
    cJSON *o = cJSON_CreateObject(), *tensors = cJSON_CreateArray(), *parts = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "plan", path);
    cJSON_AddNumberToObject(o, "format", xdnn_plan_format_version(p));
    cJSON_AddStringToObject(o, "xdnn", xdnn_plan_xdnn_version(p));
    cJSON_AddStringToObject(o, "device", xdnn_plan_device(p));
    cJSON_AddStringToObject(o, "backend", strncmp(xdnn_plan_device(p), "gpu", 3) == 0 ? "cuda" : "cpu");
    cJSON_AddStringToObject(o, "graph", xdnn_plan_graph_name(p));
    cJSON_AddBoolToObject(o, "runs_here", runs_here);
    cJSON_AddNumberToObject(o, "workspace_bytes", (double)xdnn_plan_workspace_size(p));
    cJSON_AddBoolToObject(o, "const_weights", xdnn_plan_const_weights(p));
    cJSON *dyn = cJSON_AddArrayToObject(o, "dynamic");
    for (size_t i = 0; i < xdnn_plan_dynamic_count(p); i++) {
        const char *pname;
        int64_t lo, hi;
        xdnn_plan_dynamic(p, i, &pname, &lo, &hi);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "param", pname);
        cJSON_AddNumberToObject(j, "lo", (double)lo);
        cJSON_AddNumberToObject(j, "hi", (double)hi);
        cJSON_AddItemToArray(dyn, j);
    }
    /* what a caller binds: inputs, weights and outputs (when the plan's
     * graph could be read: a foreign plan's may not) */
    const xdnn_graph_t *g = xdnn_plan_graph(p);
    for (size_t i = 0; i < xdnn_graph_tensor_count(g); i++) {
        xdnn_tensor_info t;
        if (xdnn_graph_tensor(g, i, &t) != XDNN_OK || (t.kind == XDNN_TENSOR_VIRTUAL && !t.is_output))
            continue;
        cJSON *j = cJSON_CreateObject(), *dims = cJSON_CreateArray(), *strides = cJSON_CreateArray();
        cJSON_AddStringToObject(j, "name", t.name);
        cJSON_AddStringToObject(j, "kind", t.is_output ? "output" : t.kind == XDNN_TENSOR_INPUT ? "input" : "weight");
        cJSON_AddStringToObject(j, "dtype", xdnn_dtype_name(t.dtype));
        for (int k = 0; k < t.rank; k++) {
            cJSON_AddItemToArray(dims, cJSON_CreateNumber((double)t.dims[k]));
            cJSON_AddItemToArray(strides, cJSON_CreateNumber((double)t.strides[k]));
        }
        cJSON_AddItemToObject(j, "dims", dims);
        cJSON_AddItemToObject(j, "strides", strides);
        cJSON_AddItemToArray(tensors, j);
    }
    for (size_t i = 0; i < xdnn_plan_partition_count(p); i++) {
        xdnn_partition_info pi;
        if (xdnn_plan_partition(p, i, &pi) != XDNN_OK)
            continue;
        cJSON *j = cJSON_CreateObject(), *cands = cJSON_CreateArray();
        cJSON_AddStringToObject(j, "name", pi.name);
        cJSON_AddStringToObject(j, "ops", pi.ops);
        cJSON_AddStringToObject(j, "engine", pi.engine);
        cJSON_AddStringToObject(j, "knobs", pi.knobs);
        if (pi.tuned_ms >= 0)
            cJSON_AddNumberToObject(j, "tuned_ms", pi.tuned_ms);
        cJSON_AddNumberToObject(j, "flops", pi.flops);
        cJSON_AddNumberToObject(j, "bytes", pi.bytes);
        for (size_t c = 0; c < pi.ncandidates; c++) {
            xdnn_candidate_info ci;
            if (xdnn_plan_candidate(p, i, c, &ci) != XDNN_OK)
                continue;
            cJSON *k = cJSON_CreateObject();
            cJSON_AddStringToObject(k, "engine", ci.engine);
            cJSON_AddBoolToObject(k, "supported", ci.supported);
            cJSON_AddBoolToObject(k, "chosen", ci.chosen);
            if (ci.supported)
                cJSON_AddNumberToObject(k, "cost_us", ci.cost_us);
            if (ci.measured_ms >= 0)
                cJSON_AddNumberToObject(k, "measured_ms", ci.measured_ms);
            if (!ci.supported)
                cJSON_AddStringToObject(k, "reason", ci.reason);
            cJSON_AddItemToArray(cands, k);
        }
        cJSON_AddItemToObject(j, "candidates", cands);
        cJSON_AddItemToArray(parts, j);
    }
    cJSON_AddItemToObject(o, "tensors", tensors);
    cJSON_AddItemToObject(o, "partitions", parts);
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text)
        return XDNN_ERR_NOMEM;
    puts(text);
    free(text);
    return XDNN_OK;
}

/* --replan keeps the old plan's dynamic ranges when none are given. */
static xdnn_status replan_dynamic(const xdnn_plan_t *old, xdnn_plan_options *po, const char **dynamic, size_t *n,
                                  char (*text)[96])
{
    if (*n)
        return XDNN_OK;
    for (size_t i = 0; i < xdnn_plan_dynamic_count(old) && i < CLI_MAX_LIST; i++) {
        const char *pname;
        int64_t lo, hi;
        xdnn_plan_dynamic(old, i, &pname, &lo, &hi);
        snprintf(text[i], sizeof text[i], "%s=%lld:%lld", pname, (long long)lo, (long long)hi);
        dynamic[(*n)++] = text[i];
    }
    po->dynamic = dynamic;
    po->ndynamic = *n;
    return XDNN_OK;
}

int cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {
        {"set", required_argument, NULL, OPT_SET},
        {"sandbox", no_argument, NULL, OPT_SANDBOX},
        {"graph", required_argument, NULL, OPT_GRAPH},
        {"device", required_argument, NULL, OPT_DEVICE},
        {"tune", no_argument, NULL, OPT_TUNE},
        {"output", required_argument, NULL, 'o'},
        {"info", no_argument, NULL, OPT_INFO},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"replan", no_argument, NULL, OPT_REPLAN},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"device-model", required_argument, NULL, OPT_DEVICE_MODEL},
        {"engine", required_argument, NULL, OPT_ENGINE},
        {"const-weights", no_argument, NULL, OPT_CONST_WEIGHTS},
        {"dynamic", required_argument, NULL, OPT_DYNAMIC},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    graph_opts go = {0};
    const char *out = NULL, *device = "auto";
    bool tune = false, info = false, replan = false, explain = false, verbose = false, json = false;
    const char *model = NULL, *engines[CLI_MAX_LIST], *dynamic[CLI_MAX_LIST];
    size_t nengines = 0, ndynamic = 0;
    bool const_weights = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":I:o:v", opts, NULL)) != -1) {
        switch (c) {
        case OPT_HELP: fputs(plan_help, stdout); return XDNN_OK;
        case OPT_DEVICE:
            if (cli_device_ordinal(optarg) >= 0) { /* GPU N: this process sees only it */
                int r = cli_select_device("plan", cli_device_ordinal(optarg));
                if (r >= 0)
                    return r;
                device = "gpu";
                break;
            }
            if (strcmp(optarg, "auto") && strcmp(optarg, "cpu") && strcmp(optarg, "gpu"))
                return cli_usage_error("plan", "--device must be auto, cpu, gpu or a GPU number, got '%s'", optarg);
            device = optarg;
            break;
        case OPT_TUNE: tune = true; break;
        case 'o': out = optarg; break;
        case OPT_INFO: info = true; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
                return cli_usage_error("plan", "--format must be text or json, got '%s'", optarg);
            json = strcmp(optarg, "json") == 0;
            break;
        case OPT_REPLAN: replan = true; break;
        case OPT_EXPLAIN: explain = true; break;
        case OPT_DEVICE_MODEL: model = optarg; break;
        case OPT_ENGINE:
            if (nengines == CLI_MAX_LIST)
                return cli_usage_error("plan", "at most %d --engine options", CLI_MAX_LIST);
            engines[nengines++] = optarg;
            break;
        case OPT_CONST_WEIGHTS: const_weights = true; break;
        case OPT_DYNAMIC:
            if (ndynamic == CLI_MAX_LIST)
                return cli_usage_error("plan", "at most %d --dynamic options", CLI_MAX_LIST);
            dynamic[ndynamic++] = optarg;
            break;
        case 'v': verbose = true; break;
        case ':': return cli_usage_error("plan", "option '%s' needs a value", argv[optind - 1]);
        case '?': return cli_usage_error("plan", "unknown option '%s'", argv[optind - 1]);
        default: {
            int r = graph_opts_take(&go, c, optarg);
            if (r < 0)
                return XDNN_ERR_USAGE;
            if (r == 0)
                return cli_usage_error("plan", "unknown option '%s'", argv[optind - 1]);
        }
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("plan", optind == argc ? "missing GRAPH (or PLAN) file" : "expected one file");
    const char *path = argv[optind];
    if (json && !info)
        return cli_usage_error("plan", "--format json describes a plan: it goes with --info");
    if (info && (replan || tune || out || go.nsets || go.graph || go.nincludes || strcmp(device, "auto") ||
                 const_weights || ndynamic))
        return cli_usage_error("plan", "--info only reads a plan: no other option applies");
    if (replan && (go.nsets || go.graph || go.nincludes))
        return cli_usage_error("plan", "--replan keeps the plan's graph and param values: --set, --graph and -I do "
                                       "not apply");
    if ((model || nengines || verbose) && !explain)
        return cli_usage_error("plan", "--device-model, --engine and -v go with --explain");
    if (explain && (info || replan || tune || out || const_weights || ndynamic))
        return cli_usage_error("plan", "--explain plans and prints: --info, --replan, --tune, -o, --const-weights and "
                                       "--dynamic do not apply");
    if (explain && model && strcmp(device, "cpu") == 0)
        return cli_usage_error("plan", "--device-model describes a GPU: it does not go with --device cpu");
    if (explain) {
        go.path = path;
        xdnn_module_t *m = NULL;
        xdnn_graph_t *g = NULL;
        xdnn_status s = cli_load_bound(&go, &m, &g, true);
        explain_opts eo = {.backend = model || !strcmp(device, "gpu") ? XDNN_BACKEND_CUDA
                                      : !strcmp(device, "cpu")        ? XDNN_BACKEND_CPU
                                                                      : XDNN_BACKEND_AUTO,
                           .device_model = model, .force = engines, .nforce = nengines, .verbose = verbose};
        if (s == XDNN_OK)
            s = plan_explain(g, &eo, stdout);
        xdnn_module_destroy(m);
        return s;
    }
    if (info) {
        xdnn_diags_t *d = xdnn_diags_create();
        xdnn_plan_t *p = NULL;
        xdnn_status s = read_plan(path, d, &p);
        if (s == XDNN_OK) {
            /* a foreign plan is still described; its graph is parsed if it can be */
            xdnn_diags_t *quiet = xdnn_diags_create();
            xdnn_plan_read_graph(p, quiet);
            xdnn_diags_destroy(quiet);
            char here[XDNN_FINGERPRINT_MAX];
            bool gpu_plan = strncmp(xdnn_plan_device(p), "gpu", 3) == 0;
            bool identified =
                xdnn_device_fingerprint(gpu_plan ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU, here, sizeof here) == XDNN_OK;
            bool runs = identified && strcmp(here, xdnn_plan_device(p)) == 0 &&
                        strcmp(xdnn_plan_xdnn_version(p), XDNN_VERSION_STRING) == 0;
            if (json) {
                s = print_info_json(path, p, runs);
            } else {
                printf("plan: %s\n", path);
                xdnn_plan_print(p, stdout);
                printf("runs here:    %s\n", runs         ? "yes"
                                              : identified ? "no (another device or xdnn version: use --replan)"
                                                           : "no (no such device here)");
            }
        }
        xdnn_diags_print(d, stderr);
        xdnn_diags_destroy(d);
        xdnn_plan_destroy(p);
        return s;
    }
    if (!out)
        return cli_usage_error("plan", "missing -o OUT.xplan");
    bool use_gpu = false;
    char why[512];
    if (strcmp(device, "cpu") != 0) {
        use_gpu = xdnn_backend_available(XDNN_BACKEND_CUDA, why, sizeof why);
        if (!use_gpu && strcmp(device, "gpu") == 0) {
            cli_device_note(why, sizeof why);
            fprintf(stderr, "xdnn plan: no usable GPU: %s\n", why);
            return XDNN_ERR_DEVICE;
        }
        if (!use_gpu)
            fprintf(stderr, "note: no GPU (%s); planning for the CPU reference\n", why);
    }
    char fp[XDNN_FINGERPRINT_MAX];
    if (xdnn_device_fingerprint(use_gpu ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU, fp, sizeof fp) != XDNN_OK) {
        fprintf(stderr, "xdnn plan: cannot identify the device: %s\n", fp);
        return XDNN_ERR_DEVICE;
    }
    double t0 = now_ms();
    xdnn_module_t *m = NULL;
    xdnn_graph_t *g = NULL;
    xdnn_plan_t *old = NULL;
    xdnn_status s;
    char dyn_text[CLI_MAX_LIST][96];
    xdnn_diags_t *d = xdnn_diags_create();
    if (replan) {
        s = read_plan(path, d, &old);
        if (s == XDNN_OK) {
            fprintf(stderr, "replanning %s (made by xdnn %s for '%s')\n", path, xdnn_plan_xdnn_version(old),
                    xdnn_plan_device(old));
            s = xdnn_plan_read_graph(old, d);
            g = xdnn_plan_graph(old);
        }
        xdnn_diags_print(d, stderr);
        xdnn_diags_destroy(d);
        d = xdnn_diags_create();
    } else {
        go.path = path;
        s = cli_load_bound(&go, &m, &g, true);
    }
    xdnn_plan_t *p = NULL;
    if (s == XDNN_OK) {
        xdnn_plan_options po;
        xdnn_plan_options_init(&po);
        po.backend = use_gpu ? XDNN_BACKEND_CUDA : XDNN_BACKEND_CPU;
        po.heuristic = tune ? XDNN_HEUR_MEASURED : XDNN_HEUR_FAST;
        po.log = tune ? stderr : NULL;
        po.const_weights = const_weights;
        po.dynamic = dynamic;
        po.ndynamic = ndynamic;
        if (replan && old) { /* the old plan's options stay unless given again */
            po.const_weights = const_weights || xdnn_plan_const_weights(old);
            s = replan_dynamic(old, &po, dynamic, &ndynamic, dyn_text);
        }
        if (s == XDNN_OK)
            s = xdnn_plan_build(g, &po, d, &p);
    }
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    if (s == XDNN_OK)
        s = write_plan(p, out, now_ms() - t0);
    xdnn_plan_destroy(p);
    xdnn_plan_destroy(old);
    xdnn_module_destroy(m);
    return s;
}

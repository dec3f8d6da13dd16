/* cmd_check.c — `xdnn check` (typed graph), `xdnn dot` (Graphviz) and
 * `xdnn ops` (the op catalogue): commands that load and show. */
#include "cli.h"


#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const struct option graph_long_opts[] = {
    {"set", required_argument, NULL, OPT_SET},
    {"graph", required_argument, NULL, OPT_GRAPH},
    {"sandbox", no_argument, NULL, OPT_SANDBOX},
    {"help", no_argument, NULL, OPT_HELP},
    {"partitions", no_argument, NULL, OPT_PARTITIONS},
    {"format", required_argument, NULL, OPT_FORMAT},
    {NULL, 0, NULL, 0},
};

static const char check_help[] =
    "usage: xdnn check [--format text|json] [--set P=V]... [--graph NAME] [-I DIR]... GRAPH\n"
    "\n"
    "Parse GRAPH (.dnn or .json), bind its params, run shape and dtype inference\n"
    "and validate every node.  Prints the typed graph: each tensor's kind, dtype,\n"
    "shape, layout and strides, and each node with its attributes (defaults filled),\n"
    "then the host memory a CPU reference run needs.\n"
    "\n"
    "  --format json one JSON object: graph, context, params, tensors, nodes, memory\n"
    "  --set P=V     override param P (repeatable)\n"
    "  --graph NAME  pick a graph when the file has several\n"
    "  -I DIR        add DIR to the include search path\n"
    "  --sandbox     untrusted graph: includes and load() only under its folder and -I\n"
    "Exit status: 0 ok, 1 usage, 2 syntax, 3 semantic/shape, 5 file I/O.\n";

static const char dot_help[] =
    "usage: xdnn dot [--partitions] [--set P=V]... [--graph NAME] [-I DIR]... GRAPH\n"
    "\n"
    "Print the bound graph as Graphviz DOT: inputs and outputs as ellipses, ops as\n"
    "boxes, edges labelled with dtype and shape.  Render with: xdnn dot g.dnn | dot -Tsvg > g.svg\n"
    "\n"
    "  --partitions  draw the GPU backend's partitions as clusters; tensors kept in\n"
    "                device memory are nodes, register-resident ones dashed edges\n"
    "                (needs a CUDA build, not a GPU)\n";

static const char ops_help[] =
    "usage: xdnn ops [--format text|json] [NAME]\n"
    "\n"
    "List every op of the catalogue with its ports, results and attributes (type,\n"
    "default, allowed values); with NAME, only ops whose name contains NAME.\n";

/* Parse the shared graph options; returns -1 to continue, else an exit code. */
static int parse_graph_cmd(const char *cmd, const char *help, int argc, char **argv, graph_opts *o,
                           bool *partitions, bool *json)
{
    memset(o, 0, sizeof *o);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "I:", graph_long_opts, NULL)) != -1) {
        if (c == OPT_HELP) {
            fputs(help, stdout);
            return XDNN_OK;
        }
        if (c == OPT_PARTITIONS && partitions) {
            *partitions = true;
            continue;
        }
        if (c == OPT_FORMAT && json) {
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
                return cli_usage_error(cmd, "--format must be text or json, got '%s'", optarg);
            *json = strcmp(optarg, "json") == 0;
            continue;
        }
        int r = graph_opts_take(o, c, optarg);
        if (r < 0)
            return XDNN_ERR_USAGE;
        if (r == 0)
            return cli_option_error(cmd, argv);
    }
    if (optind != argc - 1)
        return cli_usage_error(cmd, optind == argc ? "missing GRAPH file" : "expected one GRAPH file, got %d",
                               argc - optind);
    o->path = argv[optind];
    return -1;
}

int cmd_check(int argc, char **argv)
{
    graph_opts o;
    bool json = false;
    int r = parse_graph_cmd("check", check_help, argc, argv, &o, NULL, &json);
    if (r >= 0)
        return r;
    xdnn_module_t *m;
    xdnn_graph_t *g;
    xdnn_status s = cli_load_bound(&o, &m, &g, true);
    if (s == XDNN_OK && json) {
        char *text = xdnn_graph_typed_json(g);
        if (text)
            puts(text);
        else
            s = XDNN_ERR_NOMEM;
        free(text);
    } else if (s == XDNN_OK) {
        xdnn_graph_print_typed(g, stdout);
        uint64_t tensors, scratch;
        char a[32], b[32];
        if (xdnn_graph_reference_memory(g, &tensors, &scratch) == XDNN_OK)
            printf("memory: the CPU reference needs %s of tensors + %s of scratch\n",
                   cli_format_bytes(a, sizeof a, tensors), cli_format_bytes(b, sizeof b, scratch));
    }
    xdnn_module_destroy(m);
    return s;
}

int cmd_dot(int argc, char **argv)
{
    graph_opts o;
    bool partitions = false;
    int r = parse_graph_cmd("dot", dot_help, argc, argv, &o, &partitions, NULL);
    if (r >= 0)
        return r;
    xdnn_module_t *m;
    xdnn_graph_t *g;
    xdnn_status s = cli_load_bound(&o, &m, &g, true);
    if (s == XDNN_OK && partitions) {
        xdnn_diags_t *d = xdnn_diags_create();
        s = xdnn_graph_print_partitions_dot(g, stdout, d);
        xdnn_diags_print(d, stderr);
        xdnn_diags_destroy(d);
    } else if (s == XDNN_OK) {
        xdnn_graph_print_dot(g, stdout);
    }
    xdnn_module_destroy(m);
    return s;
}

/* The catalogue as JSON, keeping the ops whose name contains `filter`. */
static int ops_json(const char *filter)
{
    char *text = xdnn_ops_json();
    cJSON *all = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!all)
        return XDNN_ERR_NOMEM;
    for (cJSON *op = all->child, *next; op; op = next) {
        next = op->next;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(op, "name");
        if (filter && !strstr(cJSON_GetStringValue(name), filter))
            cJSON_Delete(cJSON_DetachItemViaPointer(all, op));
    }
    int n = cJSON_GetArraySize(all);
    char *out = n ? cJSON_Print(all) : NULL;
    cJSON_Delete(all);
    if (out)
        puts(out);
    free(out);
    if (!n) {
        fprintf(stderr, "xdnn ops: no op matches '%s'\n", filter);
        return XDNN_ERR_USAGE;
    }
    return out ? XDNN_OK : XDNN_ERR_NOMEM;
}

int cmd_ops(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
        case OPT_HELP: fputs(ops_help, stdout); return XDNN_OK;
        case OPT_FORMAT:
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
                return cli_usage_error("ops", "--format must be text or json, got '%s'", optarg);
            json = strcmp(optarg, "json") == 0;
            break;
        default: return cli_option_error("ops", argv);
        }
    }
    if (argc - optind > 1)
        return cli_usage_error("ops", "expected at most one NAME");
    const char *filter = optind < argc ? argv[optind] : NULL;
    if (json)
        return ops_json(filter);
    if (!filter) {
        xdnn_ops_print(stdout);
        return XDNN_OK;
    }
    /* Filter by printing to memory and keeping the matching entries. */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return XDNN_ERR_NOMEM;
    xdnn_ops_print(mem);
    fclose(mem);
    bool keep = false, any = false;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] != ' ') {
            char *paren = strchr(line, '(');
            size_t n = paren ? (size_t)(paren - line) : strlen(line);
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(n < 127 ? n : 127), line);
            keep = strstr(name, filter) != NULL;
            any |= keep;
        }
        if (keep)
            puts(line);
    }
    free(buf);
    if (!any) {
        fprintf(stderr, "xdnn ops: no op matches '%s'\n", filter);
        return XDNN_ERR_USAGE;
    }
    return XDNN_OK;
}

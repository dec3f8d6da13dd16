/* cmd_convert.c — `xdnn convert`: .dnn <-> JSON, with optional param
 * specialization.  The output is written atomically. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char convert_help[] =
    "usage: xdnn convert GRAPH -o OUT [--to json|dnn] [--specialize P=V]... [-I DIR]...\n"
    "\n"
    "Convert a graph between the .dnn text form and the JSON form.  The output form\n"
    "follows OUT's extension (.json or .dnn), or --to (needed when OUT is '-').\n"
    "Includes are resolved and fragments expanded in the output; params stay\n"
    "symbolic.  --specialize P=V replaces param P's value by V (repeatable).\n"
    "text -> JSON -> text -> JSON is a fixed point.\n";

static bool ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

int cmd_convert(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"to", required_argument, NULL, OPT_FORMAT},
        {"specialize", required_argument, NULL, OPT_SPECIALIZE},
        {"sandbox", no_argument, NULL, OPT_SANDBOX},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    graph_opts o = {0};
    const char *out = NULL, *to = NULL;
    xdnn_binding specs[CLI_MAX_LIST];
    int nspecs = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:I:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case OPT_FORMAT: to = optarg; break;
        case OPT_HELP: fputs(convert_help, stdout); return XDNN_OK;
        case OPT_SPECIALIZE: {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1] || nspecs == CLI_MAX_LIST)
                return cli_usage_error("convert", "--specialize needs NAME=VALUE, got '%s'", optarg);
            *eq = 0;
            specs[nspecs++] = (xdnn_binding){optarg, eq + 1};
            break;
        }
        default:
            switch (graph_opts_take(&o, c, optarg)) {
            case -1: return XDNN_ERR_USAGE;
            case 0: return cli_option_error("convert", argv);
            }
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("convert", "expected one GRAPH file");
    if (!out)
        return cli_usage_error("convert", "missing -o OUT");
    if (to && strcmp(to, "json") != 0 && strcmp(to, "dnn") != 0)
        return cli_usage_error("convert", "--to must be json or dnn, got '%s'", to);
    if (!to)
        to = ends_with(out, ".json") ? "json" : ends_with(out, ".dnn") ? "dnn" : NULL;
    if (!to)
        return cli_usage_error("convert", "cannot tell the output form of '%s'; use --to json|dnn", out);
    o.path = argv[optind];
    xdnn_module_t *m;
    xdnn_graph_t *g;
    xdnn_status s = cli_load_bound(&o, &m, &g, false);
    if (s == XDNN_OK) {
        xdnn_diags_t *d = xdnn_diags_create();
        for (int i = 0; i < nspecs && s == XDNN_OK; i++)
            s = xdnn_module_specialize(m, specs[i].name, specs[i].value_text, d);
        if (s == XDNN_OK)
            s = strcmp(to, "json") == 0 ? xdnn_module_write_json(m, out, d) : xdnn_module_write_dnn(m, out, d);
        xdnn_diags_print(d, stderr);
        xdnn_diags_destroy(d);
    }
    xdnn_module_destroy(m);
    return s;
}

/* cli_common.c — graph loading and option handling shared by the subcommands. */
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "xdnn %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see 'xdnn %s --help')\n", cmd);
    va_end(ap);
    return XDNN_ERR_USAGE;
}

int cli_option_error(const char *cmd, char *const *argv)
{
    /* opterr is 0 (main.c), so this is the one message: getopt sets optopt to
     * the option that lacks its value, and to 0 for an unknown one */
    if (optopt)
        return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
    return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

int graph_opts_take(graph_opts *o, int opt, char *arg)
{
    switch (opt) {
    case OPT_SET: {
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg || !eq[1]) {
            fprintf(stderr, "xdnn: --set needs NAME=VALUE, got '%s'\n", arg);
            return -1;
        }
        if (strpbrk(eq + 1, ",:")) { /* bench's sweep syntax: T=32,64 or T=32:256 */
            fprintf(stderr, "xdnn: --set %s: a list or range of values is a sweep, which 'xdnn bench' runs; "
                            "this command takes one value per param\n", arg);
            return -1;
        }
        if (o->nsets == CLI_MAX_LIST) {
            fprintf(stderr, "xdnn: too many --set options (at most %d)\n", CLI_MAX_LIST);
            return -1;
        }
        /* argv strings live as long as the process: split in place. */
        arg[eq - arg] = 0;
        o->sets[o->nsets++] = (xdnn_binding){arg, eq + 1};
        return 1;
    }
    case OPT_GRAPH:
        o->graph = arg;
        return 1;
    case OPT_SANDBOX:
        o->sandbox = true;
        return 1;
    case 'I':
        if (o->nincludes == CLI_MAX_LIST) {
            fprintf(stderr, "xdnn: too many -I options\n");
            return -1;
        }
        o->includes[o->nincludes++] = arg;
        return 1;
    }
    return 0;
}

xdnn_status cli_load_bound(const graph_opts *o, xdnn_module_t **m, xdnn_graph_t **g, bool bind)
{
    xdnn_diags_t *d = xdnn_diags_create();
    *m = NULL;
    *g = NULL;
    xdnn_status s = o->sandbox ? xdnn_module_load_confined(o->path, o->includes, d, m)
                               : xdnn_module_load(o->path, o->includes, d, m);
    if (s == XDNN_OK) {
        *g = xdnn_module_find_graph(*m, o->graph);
        if (!*g) {
            if (o->graph)
                fprintf(stderr, "xdnn: %s: no graph named '%s'\n", o->path, o->graph);
            else
                fprintf(stderr, "xdnn: %s: the file defines no graph\n", o->path);
            s = XDNN_ERR_USAGE;
        }
    }
    if (s == XDNN_OK && bind)
        s = xdnn_graph_bind(*g, o->sets, (size_t)o->nsets, d);
    else if (s == XDNN_OK && o->nsets)
        s = xdnn_graph_bind(*g, o->sets, (size_t)o->nsets, d);
    xdnn_diags_print(d, stderr);
    if (s == XDNN_OK && xdnn_diags_error_count(d))
        s = xdnn_diags_status(d);
    xdnn_diags_destroy(d);
    return s;
}

char *cli_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    return strndup(path, (size_t)(slash - path) + (slash == path));
}

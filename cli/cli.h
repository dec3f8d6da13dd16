/* cli.h — what the xdnn subcommands share: loading and binding a graph from
 * the command line, --set parsing, and the exit-code convention (an exit code
 * is the xdnn_status of the first error; see man/xdnn.1, EXIT STATUS). */
#ifndef XDNN_CLI_H
#define XDNN_CLI_H

#include "xdnn.h"

#include <stdio.h>

enum { CLI_MAX_LIST = 64 };

/* Options every graph-taking subcommand understands. */
typedef struct graph_opts {
    const char *path;
    const char *graph;                       /* --graph NAME */
    xdnn_binding sets[CLI_MAX_LIST];         /* --set P=v */
    int nsets;
    const char *includes[CLI_MAX_LIST + 1];  /* -I DIR, NULL-terminated */
    int nincludes;
    bool sandbox;                            /* --sandbox: xdnn_module_load_confined */
} graph_opts;

/* Handle --set/--graph/-I/--sandbox; returns 1 if `opt` was one of them, 0 if not,
 * -1 on a malformed value (message printed). */
int graph_opts_take(graph_opts *o, int opt, char *arg);

/* Load, select and bind.  On failure prints diagnostics and returns the status;
 * *m must be destroyed by the caller in every case. */
xdnn_status cli_load_bound(const graph_opts *o, xdnn_module_t **m, xdnn_graph_t **g, bool bind);

/* The folder of a file's path ("." when it has none, "/" for the root):
 * where its relative load() paths start.  malloc'ed; NULL when out of memory. */
char *cli_dirname(const char *path);

/* Print a usage error ("xdnn run: ...") and return XDNN_ERR_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cli_memory.c: sizes ("64G", "1.5GiB", "4096"), printed sizes ("3.2 GiB"),
 * MemAvailable, and the early refusal of a CPU reference run that cannot fit
 * in max_memory bytes (0: what is available): an exit code, or -1 to go on. */
bool cli_parse_bytes(const char *s, uint64_t *out);
const char *cli_format_bytes(char *buf, size_t len, uint64_t bytes);
bool cli_mem_available(uint64_t *bytes);
int cli_check_reference_memory(const char *cmd, const xdnn_graph_t *g, uint64_t max_memory);
/* The usage error for what getopt_long just refused (its '?' or ':'): an
 * unknown option, or one without its value.  Exit code XDNN_ERR_USAGE. */
int cli_option_error(const char *cmd, char *const *argv);

/* --device N (cli_device.c): N when arg is a GPU ordinal, else -1. */
int cli_device_ordinal(const char *arg);
/* The CUDA_VISIBLE_DEVICES value that shows only GPU n of this process's
 * view (an existing list is indexed); false with *why when there is no GPU n. */
bool cli_visible_device(int n, char *buf, size_t len, char *why, size_t wlen);
/* Narrow this process to GPU n, before any CUDA call: -1, or the exit code
 * after a usage message. */
int cli_select_device(const char *cmd, int n);
/* Append to a "no usable GPU" reason that --device N may name a missing GPU. */
void cli_device_note(char *why, size_t len);

/* Long-option ids shared between subcommands (above the ASCII range). */
enum {
    OPT_SET = 1000, OPT_GRAPH, OPT_HELP, OPT_SPECIALIZE, OPT_FORMAT, OPT_DEVICE, OPT_INPUT, OPT_SEED,
    OPT_SAVE, OPT_SAVE_INPUTS, OPT_KEEP, OPT_PRINT_FULL, OPT_CHECK, OPT_EXPECT, OPT_ITERS, OPT_WARMUP,
    OPT_CUDA_GRAPH, OPT_ENGINE, OPT_OUTPUT, OPT_PARTITIONS, OPT_EXPLAIN, OPT_DEVICE_MODEL, OPT_MAX_MEMORY, OPT_SANDBOX
};

int cmd_check(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_dot(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_engines(int argc, char **argv);
/* bench, compare, plan and cache (owner: bench) */
int cmd_bench(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_merge(int argc, char **argv);
/* `xdnn run PLAN.xplan`: true when path names a plan file (by its .xplan
 * extension or its XDNNPLAN magic). */
bool plan_path_is_plan(const char *path);
/* Load a plan for `xdnn run` instead of cli_load_bound (xdnn_plan_load:
 * verified, another device's or version's plan refused, engines restored as
 * data), print the engines loaded and the load time on `info`.  *g is the
 * plan's bound graph; the caller destroys *plan (which owns it). */
xdnn_status plan_load_for_run(const graph_opts *o, FILE *info, xdnn_plan_t **plan, xdnn_graph_t **g);

#endif

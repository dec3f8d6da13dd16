/* main.c — the xdnn command: dispatch to a subcommand. */
#include "cli.h"


#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"check", cmd_check, "parse, infer and validate a graph; print every tensor's dtype, shape, strides"},
    {"run", cmd_run, "run a graph on the CPU reference or the GPU; print outputs, engines, timings"},
    {"convert", cmd_convert, "convert between .dnn and JSON (optionally specialized)"},
    {"dot", cmd_dot, "print the graph as Graphviz DOT"},
    {"ops", cmd_ops, "list the op catalogue: ports, results, attributes and defaults"},
    {"engines", cmd_engines, "list the GPU engines and what they support"},
    {"bench", cmd_bench, "time sweeps, problem shorthands or batch files; table, CSV or JSON lines"},
    {"compare", cmd_compare, "compare two bench --format jsonl runs; exit 6 on a regression"},
    {"merge", cmd_merge, "join bench --format jsonl files (the shards of a sweep) into one"},
    {"plan", cmd_plan, "write an execution plan (.xplan) of a graph; --info describes one"},
    {"cache", cmd_cache, "list or clear the autotune cache"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: xdnn <command> [options] [graph.dnn|graph.json]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'xdnn help <command>' (or 'xdnn <command> --help') describes a command; 'man xdnn' has the\n"
               "exit codes.\n");
}

/* Every byte a command printed must have reached stdout: a full disk, a closed
 * descriptor or /dev/full turn a successful exit into XDNN_ERR_IO.  Checked once
 * here, after the command returns, so no command can forget it; stdio keeps the
 * error flag from a failed write in the middle of a large output, and the final
 * flush catches one in the last buffer.  An exit code already set by the
 * command stays (it names the first error). */
static int finish_stdout(int rc)
{
    errno = 0;
    bool flush_failed = fflush(stdout) != 0;
    int err = errno;
    if (!flush_failed && !ferror(stdout))
        return rc;
    if (flush_failed && err)
        fprintf(stderr, "xdnn: error writing to stdout: %s\n", strerror(err));
    else
        fprintf(stderr, "xdnn: error writing to stdout (output was lost)\n");
    return rc == XDNN_OK ? XDNN_ERR_IO : rc;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return XDNN_ERR_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 && argc > 2) { /* `xdnn help run` = `xdnn run --help` */
        for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
            if (strcmp(argv[2], commands[i].name) == 0) {
                char opt[] = "--help";
                char *help[] = {argv[2], opt, NULL};
                return commands[i].run(2, help);
            }
        fprintf(stderr, "xdnn help: unknown command '%s'\n", argv[2]);
        usage(stderr);
        return XDNN_ERR_USAGE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return XDNN_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("xdnn %s\n", XDNN_VERSION_STRING);
        return XDNN_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "xdnn: unknown command '%s'\n", cmd);
    usage(stderr);
    return XDNN_ERR_USAGE;
}

int main(int argc, char **argv)
{
    xdnn_remove_temps_on_signals(); /* ^C during --save leaves no *.tmpXXXXXX behind */
    opterr = 0; /* getopt prints nothing: each command says what is wrong, once (cli_option_error) */
    return finish_stdout(dispatch(argc, argv));
}

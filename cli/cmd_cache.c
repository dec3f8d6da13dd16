/* cmd_cache.c — `xdnn cache list|clear`: the autotune cache in
 * $XDNN_CACHE_DIR (default ~/.cache/xdnn), through xdnn_tune_cache_list/clear. */
#include "bench.h"

#include <string.h>

static const char cache_help[] =
    "usage: xdnn cache list [-v] [--format text|json]\n"
    "       xdnn cache clear\n"
    "\n"
    "The autotune cache: for each device (fingerprint) and xdnn version, the\n"
    "fastest engine and knobs of every partition `--tune` has timed.  It lives in\n"
    "$XDNN_CACHE_DIR (default ~/.cache/xdnn), one tune-*.jsonl file per device and\n"
    "version.\n"
    "\n"
    "  list     print every entry: op, engine, time, candidates, date (-v: the\n"
    "           full partition signature too; --format json: one object with\n"
    "           every file and entry)\n"
    "  clear    remove every cache file (other files in the directory are kept)\n";

int cmd_cache(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(cache_help, stdout);
        return XDNN_OK;
    }
    if (argc < 2)
        return cli_usage_error("cache", "missing subcommand: list or clear");
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_status s;
    if (strcmp(argv[1], "list") == 0) {
        bool verbose = false, json = false;
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "-v") == 0) {
                verbose = true;
            } else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc &&
                       (strcmp(argv[i + 1], "json") == 0 || strcmp(argv[i + 1], "text") == 0)) {
                json = strcmp(argv[++i], "json") == 0;
            } else {
                xdnn_diags_destroy(d);
                return cli_usage_error("cache", "list: unknown argument '%s' (-v, --format text|json)", argv[i]);
            }
        }
        s = xdnn_tune_cache_list(stdout, verbose, json, d);
    } else if (strcmp(argv[1], "clear") == 0) {
        if (argc > 2) {
            xdnn_diags_destroy(d);
            return cli_usage_error("cache", "clear takes no arguments, got '%s'", argv[2]);
        }
        int files, entries;
        char dir[4096];
        bool on = xdnn_cache_dir(dir, sizeof dir);
        s = xdnn_tune_cache_clear(&files, &entries, d);
        printf("removed %d entr%s in %d file%s from %s\n", entries, entries == 1 ? "y" : "ies", files,
               files == 1 ? "" : "s", on ? dir : "(the cache is off)");
    } else {
        xdnn_diags_destroy(d);
        return cli_usage_error("cache", "unknown subcommand '%s' (list or clear)", argv[1]);
    }
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    return s;
}

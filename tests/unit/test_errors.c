/* test_errors.c — golden tests of the exact diagnostics for bad inputs.
 *
 * Every tests/errors/NN-name.dnn is loaded with xdnn_module_load (and, when
 * that succeeds, its default graph is bound, so shape errors are covered);
 * the text xdnn_diags_print writes must equal tests/errors/NN-name.expected
 * byte for byte, and the load or bind must fail.  Run from the repository
 * root (make test-unit does).  XDNN_UPDATE_GOLDEN=1 rewrites the .expected
 * files: review every message before committing them.
 */
#include "xdnn.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MIN_CASES = 40 };

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = 0;
    fclose(f);
    return buf;
}

/* Load (and bind) one case; return the printed diagnostics (malloc'ed). */
static char *run_case(const char *path, xdnn_status *status)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_module_t *m = NULL;
    xdnn_status s = xdnn_module_load(path, NULL, d, &m);
    if (s == XDNN_OK) {
        xdnn_graph_t *g = xdnn_module_find_graph(m, NULL);
        if (g)
            s = xdnn_graph_bind(g, NULL, 0, d);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    xdnn_diags_print(d, mem);
    fclose(mem);
    xdnn_module_destroy(m);
    xdnn_diags_destroy(d);
    *status = s;
    return text;
}

/* Print the first differing line of two texts. */
static void show_difference(const char *want, const char *got)
{
    int line = 1;
    const char *w = want, *g = got;
    while (*w && *g) {
        const char *we = strchr(w, '\n'), *ge = strchr(g, '\n');
        size_t wl = we ? (size_t)(we - w) : strlen(w), gl = ge ? (size_t)(ge - g) : strlen(g);
        if (wl != gl || memcmp(w, g, wl) != 0)
            break;
        w += wl + (we ? 1 : 0);
        g += gl + (ge ? 1 : 0);
        line++;
    }
    fprintf(stderr, "  first difference at line %d\n  want: %.*s\n  got:  %.*s\n", line,
            (int)(strchr(w, '\n') ? strchr(w, '\n') - w : (long)strlen(w)), w,
            (int)(strchr(g, '\n') ? strchr(g, '\n') - g : (long)strlen(g)), g);
    fprintf(stderr, "---- full output ----\n%s---------------------\n", got);
}

int main(void)
{
    unsetenv("XDNN_PATH"); /* includes must resolve the same way everywhere */
    bool update = getenv("XDNN_UPDATE_GOLDEN") != NULL;
    glob_t gl;
    if (glob("tests/errors/*.dnn", 0, NULL, &gl) != 0) {
        fprintf(stderr, "test_errors: no tests/errors/*.dnn (run from the repository root)\n");
        return 1;
    }
    int failed = 0;
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        const char *path = gl.gl_pathv[i];
        char expected_path[4096];
        snprintf(expected_path, sizeof expected_path, "%.*s.expected", (int)(strlen(path) - 4), path);
        xdnn_status st;
        char *got = run_case(path, &st);
        if (st == XDNN_OK) {
            fprintf(stderr, "FAIL %s: loaded and bound without an error\n", path);
            failed++;
        }
        if (!got || !*got) {
            fprintf(stderr, "FAIL %s: no diagnostics printed\n", path);
            failed++;
        }
        if (update) {
            FILE *f = fopen(expected_path, "wb");
            if (!f || fputs(got ? got : "", f) < 0) {
                fprintf(stderr, "FAIL %s: cannot write\n", expected_path);
                failed++;
            }
            if (f)
                fclose(f);
        } else {
            char *want = read_text(expected_path);
            if (!want) {
                fprintf(stderr, "FAIL %s: missing %s\n", path, expected_path);
                failed++;
            } else if (strcmp(want, got ? got : "") != 0) {
                fprintf(stderr, "FAIL %s: diagnostics differ from %s\n", path, expected_path);
                show_difference(want, got ? got : "");
                failed++;
            }
            free(want);
        }
        free(got);
    }
    size_t n = gl.gl_pathc;
    globfree(&gl);
    if (n < MIN_CASES) {
        fprintf(stderr, "FAIL: only %zu error cases (want at least %d)\n", n, MIN_CASES);
        failed++;
    }
    printf("test_errors: %zu cases, %d failures\n", n, failed);
    return failed ? 1 : 0;
}

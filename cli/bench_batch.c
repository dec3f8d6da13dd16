/* bench_batch.c — per-case options shared by the command line and batch
 * files, and batch files themselves.
 *
 * A batch file has one case spec per line: a graph file (relative paths are
 * relative to the batch file) or a problem shorthand, then per-case options
 * (--set, --dtype, --graph, -I, --layout).  '#' starts a comment; blank lines
 * are skipped; `include FILE` reads another batch file (relative to this one;
 * cycles and depth > 16 are errors).  Options given on the command line apply
 * to every line; a line's --set for the same param replaces it. */
#include "bench.h"


#include <stdlib.h>
#include <string.h>

void bench_spec_free(bench_spec *sp)
{
    for (int i = 0; i < sp->nsets; i++)
        bench_set_free(&sp->sets[i]);
    free(sp->owned[0]);
    free(sp->owned[1]);
    sp->nsets = 0;
    sp->owned[0] = sp->owned[1] = NULL;
}

int bench_spec_option(bench_spec *sp, int opt, char *arg, const char *cmd)
{
    switch (opt) {
    case OPT_SET: {
        bench_set set;
        if (!bench_parse_set(cmd, arg, &set))
            return -1;
        for (int i = 0; i < sp->nsets; i++)
            if (strcmp(sp->sets[i].name, set.name) == 0) { /* a later --set of the same param wins */
                bench_set_free(&sp->sets[i]);
                sp->sets[i] = set;
                return 1;
            }
        if (sp->nsets == CLI_MAX_LIST) {
            bench_set_free(&set);
            cli_usage_error(cmd, "too many --set options (at most %d)", CLI_MAX_LIST);
            return -1;
        }
        sp->sets[sp->nsets++] = set;
        return 1;
    }
    case OPT_DTYPE: {
        sp->ndtypes = 0;
        char *save = NULL;
        for (char *t = strtok_r(arg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            xdnn_dtype dt;
            if (!xdnn_dtype_from_name(t, &dt)) {
                cli_usage_error(cmd, "--dtype: unknown dtype '%s'", t);
                return -1;
            }
            if (sp->ndtypes == BENCH_MAX_DTYPES) {
                cli_usage_error(cmd, "--dtype: at most %d dtypes", BENCH_MAX_DTYPES);
                return -1;
            }
            sp->dtypes[sp->ndtypes++] = t;
        }
        if (!sp->ndtypes) {
            cli_usage_error(cmd, "--dtype needs a list such as f16,bf16");
            return -1;
        }
        return 1;
    }
    case OPT_GRAPH: sp->graph = arg; return 1;
    case OPT_LAYOUT: sp->layout = arg; return 1;
    case 'I':
        if (sp->nincludes == CLI_MAX_LIST) {
            cli_usage_error(cmd, "too many -I options");
            return -1;
        }
        sp->includes[sp->nincludes++] = arg;
        sp->includes[sp->nincludes] = NULL;
        return 1;
    }
    return 0;
}

int bench_spec_positional(bench_spec *sp, char **args, int nargs, const char *cmd)
{
    if (nargs == 0) {
        cli_usage_error(cmd, "missing GRAPH file, PROBLEM DESCRIPTOR or --batch FILE");
        return XDNN_ERR_USAGE;
    }
    if (bench_is_problem(args[0])) {
        if (nargs != 2) {
            cli_usage_error(cmd, "problem '%s' needs one descriptor, e.g. %s", args[0],
                            strcmp(args[0], "conv") == 0 ? "n32c64h56k64r3p1" : "see 'xdnn bench --help'");
            return XDNN_ERR_USAGE;
        }
        sp->problem = args[0];
        sp->desc = args[1];
    } else {
        if (nargs != 1) {
            cli_usage_error(cmd, "expected one GRAPH file, got %d arguments ('%s' is no problem kind: conv, matmul, "
                                 "sdpa, layernorm, softmax, pool)",
                            nargs, args[0]);
            return XDNN_ERR_USAGE;
        }
        sp->path = args[0];
    }
    if (sp->path && sp->layout) {
        cli_usage_error(cmd, "--layout applies to problem shorthands, not to graph files (the graph declares its layouts)");
        return XDNN_ERR_USAGE;
    }
    if (sp->problem && (sp->nsets || sp->graph || sp->nincludes)) {
        cli_usage_error(cmd, "--set, --graph and -I apply to graph files, not to problem shorthands");
        return XDNN_ERR_USAGE;
    }
    return -1;
}

/* Split a line into tokens in place ('...' and "..." quote; no escapes). */
static int tokenize(char *s, char **tok, int cap)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '#')
            break;
        if (n == cap)
            return -1;
        char q = (*s == '\'' || *s == '"') ? *s++ : 0;
        tok[n++] = s;
        while (*s && (q ? *s != q : (*s != ' ' && *s != '\t')))
            s++;
        if (q && !*s)
            return -2;
        if (*s)
            *s++ = 0;
    }
    return n;
}

typedef struct batch_state {
    bench_spec *specs;
    int n, cap;
    const char *stack[17];
    int depth;
} batch_state;

static const struct {
    const char *name;
    int id;
} line_opts[] = {{"--set", OPT_SET}, {"--dtype", OPT_DTYPE}, {"--graph", OPT_GRAPH}, {"-I", 'I'}, {"--layout", OPT_LAYOUT}};

static xdnn_status parse_line(batch_state *b, const bench_spec *base, const char *dir, char *line, const char *where)
{
    char *tok[256];
    int nt = tokenize(line, tok, 256);
    if (nt < 0) {
        fprintf(stderr, "xdnn bench: %s: %s\n", where, nt == -1 ? "too many words" : "unterminated quote");
        return XDNN_ERR_USAGE;
    }
    if (nt == 0)
        return XDNN_OK;
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        bench_spec *ns = realloc(b->specs, (size_t)cap * sizeof *ns);
        if (!ns)
            return XDNN_ERR_NOMEM;
        b->specs = ns;
        b->cap = cap;
    }
    bench_spec *sp = &b->specs[b->n++];
    *sp = *base;
    sp->nsets = 0;
    sp->owned[0] = sp->owned[1] = NULL;
    /* copy the command line's --set lists: each spec owns its own */
    for (int i = 0; i < base->nsets; i++) {
        bench_set *d = &sp->sets[sp->nsets++];
        *d = (bench_set){base->sets[i].name, calloc(BENCH_MAX_VALUES, sizeof(char *)), base->sets[i].nvalues};
        for (int k = 0; d->values && k < d->nvalues; k++)
            d->values[k] = strdup(base->sets[i].values[k]);
    }
    sp->where = where;
    char *pos[4];
    int npos = 0;
    for (int i = 0; i < nt; i++) {
        char *t = tok[i], *arg = NULL;
        int id = 0;
        for (size_t k = 0; k < sizeof line_opts / sizeof *line_opts; k++) {
            size_t l = strlen(line_opts[k].name);
            if (strncmp(t, line_opts[k].name, l) == 0 && (t[l] == 0 || t[l] == '=')) {
                id = line_opts[k].id;
                arg = t[l] == '=' ? t + l + 1 : (i + 1 < nt ? tok[++i] : NULL);
            }
        }
        if (!id && t[0] == '-') {
            fprintf(stderr, "xdnn bench: %s: option '%s' is not allowed in a batch line (allowed: --set, --dtype, "
                            "--graph, -I, --layout)\n", where, t);
            return XDNN_ERR_USAGE;
        }
        if (id && !arg) {
            fprintf(stderr, "xdnn bench: %s: %s needs a value\n", where, t);
            return XDNN_ERR_USAGE;
        }
        if (id) {
            if (bench_spec_option(sp, id, arg, "bench") < 0) {
                fprintf(stderr, "xdnn bench: (in %s)\n", where);
                return XDNN_ERR_USAGE;
            }
            continue;
        }
        if (npos == 4) {
            fprintf(stderr, "xdnn bench: %s: too many words\n", where);
            return XDNN_ERR_USAGE;
        }
        pos[npos++] = t;
    }
    if (bench_spec_positional(sp, pos, npos, "bench") >= 0) {
        fprintf(stderr, "xdnn bench: (in %s)\n", where);
        return XDNN_ERR_USAGE;
    }
    if (sp->path && sp->path[0] != '/') {
        size_t n = strlen(dir) + strlen(sp->path) + 2;
        sp->owned[1] = malloc(n);
        if (!sp->owned[1])
            return XDNN_ERR_NOMEM;
        snprintf(sp->owned[1], n, "%s/%s", dir, sp->path);
        sp->path = sp->owned[1];
    }
    return XDNN_OK;
}

static xdnn_status read_file(batch_state *b, const char *path, const bench_spec *base, char ***keep, int *nkeep)
{
    /* cycles are found on canonical paths (sub/../main.txt is main.txt) */
    char *canon = realpath(path, NULL);
    bool cycle = false;
    for (int i = 0; canon && i < b->depth && !cycle; i++) {
        char *other = realpath(b->stack[i], NULL);
        cycle = other && strcmp(other, canon) == 0;
        free(other);
    }
    free(canon);
    for (int i = 0; i < b->depth; i++)
        if (cycle || strcmp(b->stack[i], path) == 0) {
            fprintf(stderr, "xdnn bench: batch file '%s' includes itself (through %s)\n", path, b->stack[b->depth - 1]);
            return XDNN_ERR_USAGE;
        }
    if (b->depth == 16) {
        fprintf(stderr, "xdnn bench: batch includes nest deeper than 16 at '%s'\n", path);
        return XDNN_ERR_USAGE;
    }
    xdnn_diags_t *d = xdnn_diags_create();
    char *text;
    size_t len;
    xdnn_status s = xdnn_file_read(path, &text, &len, d);
    xdnn_diags_print(d, stderr);
    xdnn_diags_destroy(d);
    if (s != XDNN_OK)
        return s;
    /* the text and the location strings live as long as the specs */
    char **nk = realloc(*keep, (size_t)(*nkeep + 2) * sizeof *nk);
    if (!nk) {
        free(text);
        return XDNN_ERR_NOMEM;
    }
    *keep = nk;
    (*keep)[(*nkeep)++] = text;
    char *dir = strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *slash = 0;
    else if (dir)
        strcpy(dir, ".");
    (*keep)[(*nkeep)++] = dir;
    b->stack[b->depth++] = path;
    int lineno = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line && s == XDNN_OK; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        line[strcspn(line, "\r")] = 0;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
            char *tok[2];
            int nt = tokenize(p + 7, tok, 2);
            if (nt != 1) {
                fprintf(stderr, "xdnn bench: %s:%d: include needs one file name\n", path, lineno);
                s = XDNN_ERR_USAGE;
                break;
            }
            size_t n = strlen(dir) + strlen(tok[0]) + 2;
            char *inc = malloc(n);
            if (!inc) {
                s = XDNN_ERR_NOMEM;
                break;
            }
            if (tok[0][0] == '/')
                snprintf(inc, n, "%s", tok[0]);
            else
                snprintf(inc, n, "%s/%s", dir, tok[0]);
            nk = realloc(*keep, (size_t)(*nkeep + 1) * sizeof *nk);
            if (!nk) {
                free(inc);
                s = XDNN_ERR_NOMEM;
                break;
            }
            *keep = nk;
            (*keep)[(*nkeep)++] = inc;
            s = read_file(b, inc, base, keep, nkeep);
            continue;
        }
        char where[1100];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        char *w = strdup(where);
        int before = b->n;
        s = w ? parse_line(b, base, dir, p, w) : XDNN_ERR_NOMEM;
        if (b->n > before)
            b->specs[b->n - 1].owned[0] = w;
        else
            free(w);
    }
    b->depth--;
    return s;
}

xdnn_status bench_read_batch(const char *path, const bench_spec *base, bench_spec **specs, int *nspecs, int *ntotal)
{
    batch_state b = {0};
    char **keep = NULL;
    int nkeep = 0;
    xdnn_status s = read_file(&b, path, base, &keep, &nkeep);
    if (s == XDNN_OK && b.n == 0) {
        fprintf(stderr, "xdnn bench: batch file '%s' has no cases\n", path);
        s = XDNN_ERR_USAGE;
    }
    /* one extra spec owns the file texts (freed by bench_spec_free through owned[]) */
    bench_spec *ns = realloc(b.specs, (size_t)(b.n + nkeep + 1) * sizeof *ns);
    if (!ns) {
        for (int i = 0; i < nkeep; i++)
            free(keep[i]);
        nkeep = 0;
        s = XDNN_ERR_NOMEM;
    } else {
        b.specs = ns;
        for (int i = 0; i < nkeep; i++)
            b.specs[b.n + i] = (bench_spec){.owned = {keep[i], NULL}};
    }
    free(keep);
    *specs = b.specs;
    *nspecs = b.n;
    *ntotal = b.n + nkeep;
    return s;
}

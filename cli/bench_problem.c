/* bench_problem.c — problem shorthands: `xdnn bench conv n32c64h56k64r3p1`
 * expands to a small generated .dnn graph (printed by --dump-graph) that is
 * parsed like any other.
 *
 * A descriptor is [DIR:]KEYS where KEYS are letter+integer pairs:
 *   conv    fwd|dgrad|wgrad   n c h w(=h) k r s(=r) p(pad 0) u(stride 1) l(dilation 1) g(groups 1)
 *   matmul                    b(batch 1) m n k
 *   sdpa    fwd|bwd           b h s(query len) t(key len = s) d c(causal 0|1) k(kv heads = h: GQA/MQA)
 *                             v(value dim = d) a(align 0 top_left | 1 bottom_right) p(dropout percent 0)
 *   layernorm                 n(rows) c(normalized size)
 *   softmax                   n(rows) c(axis size)
 *   pool    max|avg           n c h w(=h) r(window) u(stride = r) p(pad 0)
 * Generated graphs are f32 (io=f32, so --dtype can rewrite them) with seed 1.
 * --layout: nchw|nhwc for conv and pool, bhsd|bshd for sdpa.
 *
 * benchdnn's descriptors are read too, translated to the keys above
 * (benchdnn_conv, benchdnn_matmul): conv `mb32ic64ih56oc64kh3ph1` (2-D;
 * benchdnn's dilation counts the gaps, d0 = xdnn's l1) and matmul
 * `[B x]MxK:[B x]KxN` (`2x64x128:2x128x256`). */
#include "bench.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct key_spec {
    char key;
    long long dflt;    /* -1: required; -2: defaults to another key (alias) */
    char alias;
} key_spec;

typedef struct problem_kind {
    const char *name;
    const char *dirs;  /* "fwd|dgrad|wgrad" or "" */
    const char *keys;  /* letters it takes */
    const char *layouts;
} problem_kind;

static const problem_kind kinds[] = {
    {"conv", "fwd|dgrad|wgrad", "nchwkrspulg", "nchw|nhwc"},
    {"matmul", "", "bmnk", ""},
    {"sdpa", "fwd|bwd", "bhstdckvap", "bhsd|bshd"},
    {"layernorm", "", "nc", ""},
    {"softmax", "", "nc", ""},
    {"pool", "max|avg", "nchwrup", "nchw|nhwc"},
};

static const problem_kind *find_kind(const char *word)
{
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (strcmp(kinds[i].name, word) == 0)
            return &kinds[i];
    return NULL;
}

bool bench_is_problem(const char *word) { return find_kind(word) != NULL; }

/* Parse KEYS into vals['a'..'z'] (-1 = not given). */
static bool parse_keys(const problem_kind *k, const char *s, long long *vals, char *err, size_t errlen)
{
    for (int i = 0; i < 26; i++)
        vals[i] = -1;
    while (*s) {
        char key = *s++;
        if (key < 'a' || key > 'z' || !strchr(k->keys, key)) {
            snprintf(err, errlen, "unknown key '%c' (a %s descriptor takes %s)", key, k->name, k->keys);
            return false;
        }
        if (*s < '0' || *s > '9') {
            snprintf(err, errlen, "key '%c' needs a number", key);
            return false;
        }
        long long v = 0;
        while (*s >= '0' && *s <= '9') {
            v = v * 10 + (*s++ - '0');
            if (v > 1000000000) {
                snprintf(err, errlen, "key '%c' is too large", key);
                return false;
            }
        }
        if (vals[key - 'a'] >= 0) {
            snprintf(err, errlen, "key '%c' given twice", key);
            return false;
        }
        vals[key - 'a'] = v;
    }
    return true;
}

#define V(c) vals[(c) - 'a']

/* benchdnn's conv keys: a name of one or two letters, then a number ("mb32"),
 * `_` separators and a trailing n"name" ignored. */
static bool benchdnn_conv(const char *s, long long *vals, char *err, size_t errlen)
{
    static const struct { const char *name; char key; } map[] = {
        {"mb", 'n'}, {"ic", 'c'}, {"ih", 'h'}, {"iw", 'w'}, {"oc", 'k'}, {"kh", 'r'}, {"kw", 's'}, {"g", 'g'},
        {"sh", 'u'}, {"sw", 'U'}, {"ph", 'p'}, {"pw", 'P'}, {"dh", 'l'}, {"dw", 'L'}, {"oh", 'o'}, {"ow", 'O'},
    };
    long long got[128];
    for (int i = 0; i < 128; i++)
        got[i] = -1;
    while (*s) {
        if (*s == '_') {
            s++;
            continue;
        }
        if (*s == 'n' && s[1] == '"') /* the problem's name: a label only */
            break;
        size_t len = 0;
        while (s[len] >= 'a' && s[len] <= 'z')
            len++;
        int m = -1;
        for (int i = 0; i < (int)(sizeof map / sizeof *map) && m < 0; i++)
            if (strlen(map[i].name) == len && strncmp(map[i].name, s, len) == 0)
                m = i;
        if (m < 0) {
            static const char *const depth[] = {"id", "od", "kd", "sd", "pd", "dd"};
            bool d3 = false;
            for (size_t i = 0; i < sizeof depth / sizeof *depth; i++)
                d3 |= len == 2 && strncmp(s, depth[i], 2) == 0;
            snprintf(err, errlen, "%s benchdnn key '%.*s' (a 2-D conv takes mb ic ih iw oc oh ow kh kw sh sw ph pw "
                                  "dh dw g)",
                     d3 ? "3-D convolutions are not supported:" : "unknown", (int)(len ? len : 1), s);
            return false;
        }
        s += len;
        if (*s < '0' || *s > '9') {
            snprintf(err, errlen, "benchdnn key '%s' needs a number", map[m].name);
            return false;
        }
        long long v = 0;
        while (*s >= '0' && *s <= '9')
            if ((v = v * 10 + (*s++ - '0')) > 1000000000) {
                snprintf(err, errlen, "benchdnn key '%s' is too large", map[m].name);
                return false;
            }
        if (got[(int)map[m].key] >= 0) {
            snprintf(err, errlen, "benchdnn key '%s' given twice", map[m].name);
            return false;
        }
        got[(int)map[m].key] = v;
    }
    /* benchdnn's defaults: mb 2, iw = ih, kw = kh, strides 1, pads and dilations 0 */
    const char pairs[][3] = {{'u', 'U', 1}, {'p', 'P', 0}, {'l', 'L', 0}};
    for (int i = 0; i < 3; i++) {
        char a = pairs[i][0], b = pairs[i][1];
        if (got[(int)a] >= 0 && got[(int)b] >= 0 && got[(int)a] != got[(int)b]) {
            snprintf(err, errlen, "xdnn's conv problems take one %s for both axes, got %lld and %lld",
                     a == 'u' ? "stride (sh = sw)" : a == 'p' ? "pad (ph = pw)" : "dilation (dh = dw)", got[(int)a],
                     got[(int)b]);
            return false;
        }
        long long v = got[(int)a] >= 0 ? got[(int)a] : got[(int)b] >= 0 ? got[(int)b] : pairs[i][2];
        V(a) = a == 'l' ? v + 1 : v;
    }
    V('n') = got['n'] >= 0 ? got['n'] : 2;
    V('c') = got['c'], V('h') = got['h'], V('w') = got['w'], V('k') = got['k'], V('r') = got['r'], V('s') = got['s'];
    V('g') = got['g'];
    V('o') = got['o'], V('q') = got['O']; /* output sizes, checked once the conv is generated */
    return true;
}

/* benchdnn's matmul: `MxK:KxN` or `BxMxK:BxKxN` (one batch dim, equal on both sides). */
static bool benchdnn_matmul(const char *s, long long *vals, char *err, size_t errlen)
{
    long long d[2][3];
    int n[2] = {0, 0}, side = 0;
    for (const char *p = s; side < 2;) {
        char *end;
        if (*p < '0' || *p > '9' || n[side] == 3)
            goto bad;
        long long v = strtoll(p, &end, 10);
        if (v < 1 || v > 1000000000)
            goto bad;
        d[side][n[side]++] = v;
        p = end;
        if (*p == 'x')
            p++;
        else if (*p == ':' && side == 0)
            p++, side = 1;
        else if (*p == 0 && side == 1)
            side = 2;
        else
            goto bad;
    }
    if (n[0] != n[1]) {
        snprintf(err, errlen, "benchdnn matmul '%s': both sides need the same rank", s);
        return false;
    }
    int r = n[0];
    if (r < 2)
        goto bad;
    if (r == 3 && d[0][0] != d[1][0]) {
        snprintf(err, errlen, "benchdnn matmul '%s': the batch dims must be equal (%lld, %lld)", s, d[0][0], d[1][0]);
        return false;
    }
    if (d[0][r - 1] != d[1][r - 2]) {
        snprintf(err, errlen, "benchdnn matmul '%s': K differs (%lld on the left, %lld on the right)", s,
                 d[0][r - 1], d[1][r - 2]);
        return false;
    }
    V('b') = r == 3 ? d[0][0] : 1, V('m') = d[0][r - 2], V('k') = d[0][r - 1], V('n') = d[1][r - 1];
    return true;
bad:
    snprintf(err, errlen, "benchdnn matmul descriptor must be MxK:KxN or BxMxK:BxKxN, got '%s'", s);
    return false;
}

/* benchdnn's conv spells two-letter keys (mb, ic...), xdnn's one letter. */
static bool is_benchdnn_conv(const char *s)
{
    for (; *s; s++)
        if (*s >= 'a' && *s <= 'z' && s[1] >= 'a' && s[1] <= 'z' && s[1] != '"')
            return true;
    return false;
}

static bool need(long long *vals, const char *keys, const char *kind, char *err, size_t errlen)
{
    for (const char *k = keys; *k; k++)
        if (V(*k) < 0 || (V(*k) == 0 && *k != 'p' && *k != 'c')) {
            snprintf(err, errlen, "%s needs key '%c' (>= 1)", kind, *k);
            return false;
        }
    return true;
}

static void dflt(long long *vals, char key, long long v)
{
    if (V(key) < 0)
        V(key) = v;
}

typedef struct sb {
    char *s;
    size_t n, cap;
} sb;

static void sbf(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sbf(sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (b->n + (size_t)n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap : 512) * 2 + (size_t)n;
        char *ns = realloc(b->s, cap);
        if (!ns)
            return;
        b->s = ns;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

static bool gen_conv(sb *b, const char *dir, long long *vals, const char *lay, char *err, size_t errlen)
{
    if (!need(vals, "nchkr", "conv", err, errlen))
        return false;
    long long want_oh = V('o'), want_ow = V('q'); /* benchdnn's oh, ow when given: checked below */
    dflt(vals, 'w', V('h')), dflt(vals, 's', V('r')), dflt(vals, 'p', 0), dflt(vals, 'u', 1), dflt(vals, 'l', 1),
        dflt(vals, 'g', 1);
    long long N = V('n'), C = V('c'), H = V('h'), W = V('w'), K = V('k'), R = V('r'), S = V('s'), P = V('p'),
              U = V('u'), L = V('l'), G = V('g');
    if (U < 1 || L < 1 || G < 1 || C % G || K % G) {
        snprintf(err, errlen, "conv needs u, l, g >= 1 and c, k divisible by g");
        return false;
    }
    long long OH = (H + 2 * P - L * (R - 1) - 1) / U + 1, OW = (W + 2 * P - L * (S - 1) - 1) / U + 1;
    if (OH < 1 || OW < 1) {
        snprintf(err, errlen, "conv output would be empty (%lldx%lld)", OH, OW);
        return false;
    }
    if ((want_oh >= 0 && want_oh != OH) || (want_ow >= 0 && want_ow != OW)) {
        snprintf(err, errlen, "benchdnn oh/ow %lldx%lld do not match the input, kernel, stride and pad (%lldx%lld)",
                 want_oh >= 0 ? want_oh : OH, want_ow >= 0 ? want_ow : OW, OH, OW);
        return false;
    }
    char at[160];
    snprintf(at, sizeof at, "stride=%lld, pad=%lld, dilation=%lld, groups=%lld", U, P, L, G);
    sbf(b, "graph conv_%s(io=f32, compute=f32, intermediate=f32, seed=1) {\n", dir);
    if (strcmp(dir, "fwd") == 0) {
        sbf(b, "  input  x: f32[%lld, %lld, %lld, %lld] @%s;\n", N, C, H, W, lay);
        sbf(b, "  weight w: f32[%lld, %lld, %lld, %lld] @%s = randn(std=0.1);\n", K, C / G, R, S, lay);
        sbf(b, "  y = conv(x, w, %s);\n  output y: f32 @%s;\n}\n", at, lay);
    } else if (strcmp(dir, "dgrad") == 0) {
        sbf(b, "  input  dy: f32[%lld, %lld, %lld, %lld] @%s;\n", N, K, OH, OW, lay);
        sbf(b, "  weight w: f32[%lld, %lld, %lld, %lld] @%s = randn(std=0.1);\n", K, C / G, R, S, lay);
        sbf(b, "  dx = conv_dgrad(dy, w, x_dims=[%lld, %lld, %lld, %lld], %s);\n  output dx: f32 @%s;\n}\n", N, C, H, W,
            at, lay);
    } else {
        sbf(b, "  input  dy: f32[%lld, %lld, %lld, %lld] @%s;\n", N, K, OH, OW, lay);
        sbf(b, "  input  x: f32[%lld, %lld, %lld, %lld] @%s;\n", N, C, H, W, lay);
        sbf(b, "  dw = conv_wgrad(dy, x, w_dims=[%lld, %lld, %lld, %lld], %s);\n  output dw: f32 @%s;\n}\n", K, C / G,
            R, S, at, lay);
    }
    return true;
}

static bool gen_sdpa(sb *b, const char *dir, long long *vals, const char *lay, char *err, size_t errlen)
{
    if (!need(vals, "bhsd", "sdpa", err, errlen))
        return false;
    dflt(vals, 't', V('s')), dflt(vals, 'c', 0), dflt(vals, 'k', V('h')), dflt(vals, 'v', V('d')), dflt(vals, 'a', 0),
        dflt(vals, 'p', 0);
    long long B = V('b'), H = V('h'), S = V('s'), T = V('t'), D = V('d'), HK = V('k'), DV = V('v');
    if (HK < 1 || DV < 1 || H % HK) {
        snprintf(err, errlen, "sdpa needs k (kv heads) >= 1 dividing h (%lld) and v (value dim) >= 1", H);
        return false;
    }
    if (V('a') > 1 || V('p') > 99) {
        snprintf(err, errlen, "sdpa takes a0 (top_left) or a1 (bottom_right) and a dropout percent p0..p99");
        return false;
    }
    /* the mask and dropout attributes, shared by the forward and the backward */
    char at[160];
    snprintf(at, sizeof at, "causal=%s%s", V('c') ? "true" : "false", V('a') ? ", align=\"bottom_right\"" : "");
    if (V('p'))
        snprintf(at + strlen(at), sizeof at - strlen(at), ", dropout=%g, seed=1", (double)V('p') / 100);
    sbf(b, "graph sdpa_%s(io=f32, compute=f32, intermediate=f32, seed=1) {\n", dir);
    sbf(b, "  input q: f32[%lld, %lld, %lld, %lld] @%s;\n", B, H, S, D, lay);
    sbf(b, "  input k: f32[%lld, %lld, %lld, %lld] @%s;\n", B, HK, T, D, lay);
    sbf(b, "  input v: f32[%lld, %lld, %lld, %lld] @%s;\n", B, HK, T, DV, lay);
    if (strcmp(dir, "fwd") == 0) {
        sbf(b, "  o = sdpa(q, k, v, %s);\n  output o: f32 @%s;\n}\n", at, lay);
    } else {
        sbf(b, "  input do: f32[%lld, %lld, %lld, %lld] @%s;\n", B, H, S, DV, lay);
        sbf(b, "  o, stats = sdpa(q, k, v, %s);\n", at);
        sbf(b, "  dq, dk, dv = sdpa_bwd(q, k, v, o, do, stats, %s);\n  output dq, dk, dv;\n}\n", at);
    }
    return true;
}

char *bench_problem_text(const char *problem, const char *desc, const char *layout, char *err, size_t errlen)
{
    const problem_kind *k = find_kind(problem);
    if (!k) {
        snprintf(err, errlen, "unknown problem kind (known: conv, matmul, sdpa, layernorm, softmax, pool)");
        return NULL;
    }
    /* direction prefix (benchdnn's matmul uses ':' between its operands) */
    char dir[16] = "";
    bool bdnn_matmul = strcmp(k->name, "matmul") == 0 && strchr(desc, 'x');
    const char *colon = bdnn_matmul ? NULL : strchr(desc, ':'), *quote = strchr(desc, '"');
    if (colon && quote && quote < colon) /* inside benchdnn's n"name" */
        colon = NULL;
    if (colon) {
        snprintf(dir, sizeof dir, "%.*s", (int)(colon - desc), desc);
        desc = colon + 1;
    }
    if (!*k->dirs && dir[0]) {
        snprintf(err, errlen, "%s takes no direction prefix, got '%s:'", k->name, dir);
        return NULL;
    }
    if (*k->dirs) {
        if (!dir[0])
            snprintf(dir, sizeof dir, "%.*s", (int)strcspn(k->dirs, "|"), k->dirs);
        char opts[64];
        snprintf(opts, sizeof opts, "|%s|", k->dirs);
        char want[20];
        snprintf(want, sizeof want, "|%s|", dir);
        if (!strstr(opts, want)) {
            snprintf(err, errlen, "%s direction must be one of %s, got '%s'", k->name, k->dirs, dir);
            return NULL;
        }
    }
    char lay[16];
    if (layout) {
        char opts[64], want[20];
        snprintf(opts, sizeof opts, "|%s|", k->layouts);
        snprintf(want, sizeof want, "|%s|", layout);
        if (!*k->layouts || !strstr(opts, want)) {
            if (*k->layouts)
                snprintf(err, errlen, "--layout for %s must be one of %s, got '%s'", k->name, k->layouts, layout);
            else
                snprintf(err, errlen, "--layout applies to conv, pool and sdpa problems, not to %s", k->name);
            return NULL;
        }
        snprintf(lay, sizeof lay, "%s", layout);
    } else {
        snprintf(lay, sizeof lay, "%.*s", (int)strcspn(k->layouts, "|"), k->layouts);
    }
    long long vals[26];
    for (int i = 0; i < 26; i++)
        vals[i] = -1;
    if (bdnn_matmul ? !benchdnn_matmul(desc, vals, err, errlen)
        : strcmp(k->name, "conv") == 0 && is_benchdnn_conv(desc) ? !benchdnn_conv(desc, vals, err, errlen)
                                                                   : !parse_keys(k, desc, vals, err, errlen))
        return NULL;
    sb b = {0};
    sbf(&b, "dnn 1;\n# generated by xdnn bench: %s %s%s%s%s%s\n", k->name, dir, dir[0] ? ":" : "", desc,
        layout ? " --layout " : "", layout ? layout : "");
    bool ok = true;
    if (strcmp(k->name, "conv") == 0) {
        ok = gen_conv(&b, dir, vals, lay, err, errlen);
    } else if (strcmp(k->name, "sdpa") == 0) {
        ok = gen_sdpa(&b, dir, vals, lay, err, errlen);
    } else if (strcmp(k->name, "matmul") == 0) {
        if ((ok = need(vals, "mnk", "matmul", err, errlen))) {
            dflt(vals, 'b', 1);
            char batch[32] = "";
            if (V('b') > 1)
                snprintf(batch, sizeof batch, "%lld, ", V('b'));
            sbf(&b, "graph matmul(io=f32, compute=f32, intermediate=f32, seed=1) {\n");
            sbf(&b, "  input a: f32[%s%lld, %lld];\n  input b: f32[%s%lld, %lld];\n", batch, V('m'), V('k'), batch,
                V('k'), V('n'));
            sbf(&b, "  c = matmul(a, b);\n  output c: f32;\n}\n");
        }
    } else if (strcmp(k->name, "layernorm") == 0 || strcmp(k->name, "softmax") == 0) {
        if ((ok = need(vals, "nc", k->name, err, errlen))) {
            sbf(&b, "graph %s(io=f32, compute=f32, intermediate=f32, seed=1) {\n", k->name);
            sbf(&b, "  input x: f32[%lld, %lld];\n", V('n'), V('c'));
            if (k->name[0] == 'l')
                sbf(&b, "  weight scale: f32[%lld] = ones();\n  weight bias: f32[%lld] = zeros();\n"
                        "  y = layernorm(x, scale, bias);\n",
                    V('c'), V('c'));
            else
                sbf(&b, "  y = softmax(x);\n");
            sbf(&b, "  output y: f32;\n}\n");
        }
    } else { /* pool */
        if ((ok = need(vals, "nchr", "pool", err, errlen))) {
            dflt(vals, 'w', V('h')), dflt(vals, 'u', V('r')), dflt(vals, 'p', 0);
            sbf(&b, "graph %spool(io=f32, compute=f32, intermediate=f32, seed=1) {\n", dir);
            sbf(&b, "  input x: f32[%lld, %lld, %lld, %lld] @%s;\n", V('n'), V('c'), V('h'), V('w'), lay);
            sbf(&b, "  y = %spool(x, window=%lld, stride=%lld, pad=%lld);\n  output y: f32 @%s;\n}\n", dir, V('r'),
                V('u'), V('p'), lay);
        }
    }
    if (!ok || !b.s) {
        free(b.s);
        if (ok)
            snprintf(err, errlen, "out of memory");
        return NULL;
    }
    return b.s;
}

/* json_util.c — helpers shared by the JSON reader/writer and the canonical
 * .dnn writer (see json_internal.h). */
#include "json_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- sbuf */

static bool sb_reserve(sbuf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->n + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

void sb_putn(sbuf *b, const char *s, size_t n)
{
    if (!sb_reserve(b, n))
        return;
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }
void sb_putc(sbuf *b, char c) { sb_putn(b, &c, 1); }

void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0 || !sb_reserve(b, (size_t)k))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

char *sb_finish(sbuf *b)
{
    if (b->oom) {
        free(b->s);
        b->s = NULL;
        return NULL;
    }
    if (!b->s)
        sb_reserve(b, 0);
    if (b->oom)
        return NULL;
    b->s[b->n] = 0;
    return b->s;
}

/* ---------------------------------------------------------------- locations */

char *loc_to_text(arena *a, xloc loc)
{
    if (!loc.file || loc.line <= 0)
        return NULL;
    return arena_sprintf(a, "%s:%d:%d", loc.file, loc.line, loc.col > 0 ? loc.col : 1);
}

/* ---------------------------------------------------------------- ports */

const char *port_name(const op_desc *d, int i, char *buf, size_t len)
{
    if (d->variadic && d->nports > 0 && i >= d->nports - 1) {
        snprintf(buf, len, "%s%d", d->ports[d->nports - 1], i - (d->nports - 1));
        return buf;
    }
    return i < d->nports ? d->ports[i] : "?";
}

const char *result_name(const op_desc *d, int k)
{
    /* variadic results (split) list all OP_MAX_RESULTS names: y0, y1, ... */
    return k >= 0 && k < d->nresults && d->results[k] ? d->results[k] : "?";
}

/* ---------------------------------------------------------------- numbers */

/* Strict JSON number grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
 * restricted to floats (a fraction or an exponent must be present). */
static bool is_json_float(const char *s)
{
    const char *p = s;
    bool frac = false, ex = false;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
        frac = true;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
        ex = true;
    }
    return *p == 0 && (frac || ex);
}

bool float_literal_text(double f, const char *text, char *buf, size_t len)
{
    if (!isfinite(f))
        return false;
    if (text && strlen(text) < len && is_json_float(text) && strtod(text, NULL) == f &&
        !signbit(strtod(text, NULL)) == !signbit(f)) {
        strcpy(buf, text);
        return true;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, f);
        if (strtod(buf, NULL) == f)
            break;
    }
    if (!strpbrk(buf, ".eE"))
        strncat(buf, ".0", len - strlen(buf) - 1);
    return true;
}

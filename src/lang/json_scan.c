/* json_scan.c — where each cJSON item sits in the text.
 *
 * cJSON keeps no positions, but the JSON reader must point at the offending
 * value (line:col) and needs the exact lexeme of each number (to tell 1 from
 * 1.0 and to read 64-bit ints exactly).  After cJSON accepted the text we
 * walk it once more, in step with the tree (cJSON keeps members and items in
 * text order, duplicates included), and record each item's key and value
 * spans in a pointer-keyed hash table.  The walk mirrors cJSON's own
 * tokenizer (whitespace = bytes <= 32, a UTF-8 BOM skipped, numbers = the
 * strtod prefix of a run of [0-9+-.eE]); if text and tree ever disagree it
 * stops, and positions after that point are simply unknown.
 */
#include "json_read.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SCAN_FAIL = -1 };

typedef struct scanner {
    const char *t;
    long len;
    jposmap *pm;
} scanner;

static size_t hash_ptr(const void *p, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static void record(jposmap *pm, const cJSON *item, long key_off, long val_off, long val_len)
{
    if (!pm->cap)
        return;
    size_t i = hash_ptr(item, pm->cap);
    while (pm->keys[i] && pm->keys[i] != item)
        i = (i + 1) & (pm->cap - 1);
    pm->keys[i] = item;
    pm->spans[i] = (jspan){key_off, val_off, val_len};
}

const jspan *jpos_get(const jposmap *pm, const cJSON *item)
{
    if (!pm->cap || !item)
        return NULL;
    size_t i = hash_ptr(item, pm->cap);
    while (pm->keys[i]) {
        if (pm->keys[i] == item)
            return &pm->spans[i];
        i = (i + 1) & (pm->cap - 1);
    }
    return NULL;
}

static size_t count_items(const cJSON *j)
{
    size_t n = 1;
    for (const cJSON *c = j->child; c; c = c->next)
        n += count_items(c);
    return n;
}

static long skip_ws(const scanner *s, long i)
{
    while (i >= 0 && i < s->len && (unsigned char)s->t[i] <= 32)
        i++;
    return i;
}

/* i at the opening quote; returns the offset after the closing quote. */
static long skip_string(const scanner *s, long i)
{
    if (i < 0 || i >= s->len || s->t[i] != '"')
        return SCAN_FAIL;
    for (i++; i < s->len && s->t[i] != '"'; i++)
        if (s->t[i] == '\\')
            i++;
    return i < s->len ? i + 1 : SCAN_FAIL;
}

/* The strtod prefix of the run of number characters at i, as cJSON reads it: of any length (a 64-character
 * cap cut a longer lexeme, lost every later position and with them the lexemes of later numbers). */
static long number_len(const scanner *s, long i)
{
    long n = 0;
    while (i + n < s->len && s->t[i + n] && strchr("0123456789+-eE.", s->t[i + n]))
        n++;
    char small[64], *buf = n < (long)sizeof small ? small : malloc((size_t)n + 1);
    if (!buf)
        return SCAN_FAIL;
    memcpy(buf, s->t + i, (size_t)n);
    buf[n] = 0;
    char *end = NULL;
    strtod(buf, &end);
    long len = end > buf ? (long)(end - buf) : SCAN_FAIL;
    if (buf != small)
        free(buf);
    return len;
}

static long scan_value(scanner *s, long i, const cJSON *item, long key_off)
{
    i = skip_ws(s, i);
    if (!item || i < 0 || i >= s->len)
        return SCAN_FAIL;
    long start = i;
    char c = s->t[i];
    if (c == '{' || c == '[') {
        bool obj = c == '{';
        const cJSON *child = item->child;
        i = skip_ws(s, i + 1);
        if (i < s->len && s->t[i] == (obj ? '}' : ']')) {
            i++;
        } else {
            for (;;) {
                long k = -1;
                if (obj) {
                    k = skip_ws(s, i);
                    i = skip_ws(s, skip_string(s, k));
                    if (i < 0 || i >= s->len || s->t[i] != ':')
                        return SCAN_FAIL;
                    i++;
                }
                i = skip_ws(s, scan_value(s, i, child, k));
                if (i < 0 || i >= s->len)
                    return SCAN_FAIL;
                child = child->next;
                if (s->t[i] == ',') {
                    i++;
                    continue;
                }
                if (s->t[i] != (obj ? '}' : ']'))
                    return SCAN_FAIL;
                i++;
                break;
            }
        }
    } else if (c == '"') {
        i = skip_string(s, i);
    } else if (c == 't' || c == 'n') {
        i += 4;
    } else if (c == 'f') {
        i += 5;
    } else {
        long n = number_len(s, i);
        i = n < 0 ? SCAN_FAIL : i + n;
    }
    if (i < 0)
        return SCAN_FAIL;
    record(s->pm, item, key_off, start, i - start);
    return i;
}

bool jpos_build(jposmap *pm, const char *text, size_t len, const cJSON *root)
{
    *pm = (jposmap){0};
    size_t n = count_items(root), cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    pm->keys = calloc(cap, sizeof *pm->keys);
    pm->spans = calloc(cap, sizeof *pm->spans);
    if (!pm->keys || !pm->spans) {
        jpos_free(pm);
        return false;
    }
    pm->cap = cap;
    scanner s = {text, (long)len, pm};
    long i = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    scan_value(&s, i, root, -1);
    return true;
}

void jpos_free(jposmap *pm)
{
    free(pm->keys);
    free(pm->spans);
    *pm = (jposmap){0};
}

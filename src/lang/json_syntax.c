/* json_syntax.c — a strict JSON syntax check (RFC 8259) run before cJSON.
 *
 * cJSON accepts a few things JSON does not (01, 1., -.5, raw control
 * characters in strings) and on an error points one byte past the culprit
 * in some cases, without saying what was wrong.  This recursive-descent pass
 * over the bytes finds the first error exactly and names it, so the reader
 * can report "file:line:col: JSON syntax error: expected ',' or '}' ...".
 * It builds nothing; cJSON builds the tree once the text is known good.
 */
#include "json_read.h"

#include <stdio.h>
#include <string.h>

enum { JSON_MAX_DEPTH = 1000 }; /* cJSON's CJSON_NESTING_LIMIT */

typedef struct checker {
    const char *t;
    size_t len, pos;
    const char *msg;   /* first error; NULL while fine */
    char buf[96];
} checker;

static bool fail(checker *c, const char *msg)
{
    if (!c->msg)
        c->msg = msg;
    return false;
}

/* "got 'x'" / "got end of input" for the byte at pos. */
static bool fail_got(checker *c, const char *expected)
{
    if (c->pos >= c->len)
        snprintf(c->buf, sizeof c->buf, "%s, got end of input", expected);
    else if ((unsigned char)c->t[c->pos] > 32 && (unsigned char)c->t[c->pos] < 127)
        snprintf(c->buf, sizeof c->buf, "%s, got '%c'", expected, c->t[c->pos]);
    else
        snprintf(c->buf, sizeof c->buf, "%s, got byte 0x%02x", expected, (unsigned char)c->t[c->pos]);
    return fail(c, c->buf);
}

static void skip_ws(checker *c)
{
    while (c->pos < c->len && strchr(" \t\r\n", c->t[c->pos]) && c->t[c->pos])
        c->pos++;
}

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
static bool is_hex(char ch) { return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'); }

static bool check_string(checker *c)
{
    size_t start = c->pos++;
    while (c->pos < c->len) {
        unsigned char ch = (unsigned char)c->t[c->pos];
        if (ch == '"') {
            c->pos++;
            return true;
        }
        if (ch < 0x20)
            return fail(c, ch == '\n' ? "unterminated string (a JSON string ends on its line; write \\n)"
                                      : "control character in a string (escape it as \\u00XX)");
        if (ch == '\\') {
            char e = c->pos + 1 < c->len ? c->t[c->pos + 1] : 0;
            if (e == 'u') {
                for (int k = 2; k < 6; k++)
                    if (c->pos + (size_t)k >= c->len || !is_hex(c->t[c->pos + (size_t)k]))
                        return fail(c, "invalid \\u escape in a string (needs 4 hex digits)");
                /* cJSON would decode it and every C string after it would end
                 * there: a name, a message or a path silently cut short */
                if (memcmp(c->t + c->pos + 2, "0000", 4) == 0)
                    return fail(c, "\\u0000 in a string: names, strings and paths cannot hold a NUL character");
                c->pos += 6;
                continue;
            }
            if (!e || !strchr("\"\\/bfnrt", e))
                return fail(c, "invalid escape in a string (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
            c->pos += 2;
            continue;
        }
        c->pos++;
    }
    c->pos = start;
    return fail(c, "unterminated string");
}

static bool check_number(checker *c)
{
    size_t start = c->pos;
    if (c->t[c->pos] == '-')
        c->pos++;
    if (c->pos < c->len && c->t[c->pos] == '0') {
        c->pos++;
    } else if (c->pos < c->len && is_digit(c->t[c->pos])) {
        while (c->pos < c->len && is_digit(c->t[c->pos]))
            c->pos++;
    } else {
        c->pos = start;
        return fail(c, "invalid number");
    }
    if (c->pos < c->len && c->t[c->pos] == '.') {
        c->pos++;
        if (c->pos >= c->len || !is_digit(c->t[c->pos])) {
            c->pos = start;
            return fail(c, "invalid number (a digit must follow '.')");
        }
        while (c->pos < c->len && is_digit(c->t[c->pos]))
            c->pos++;
    }
    if (c->pos < c->len && (c->t[c->pos] == 'e' || c->t[c->pos] == 'E')) {
        c->pos++;
        if (c->pos < c->len && (c->t[c->pos] == '+' || c->t[c->pos] == '-'))
            c->pos++;
        if (c->pos >= c->len || !is_digit(c->t[c->pos])) {
            c->pos = start;
            return fail(c, "invalid number (digits must follow the exponent)");
        }
        while (c->pos < c->len && is_digit(c->t[c->pos]))
            c->pos++;
    }
    if (c->pos < c->len && (is_digit(c->t[c->pos]) || c->t[c->pos] == '.')) {
        c->pos = start;
        return fail(c, "invalid number (no leading zeros)");
    }
    return true;
}

static bool check_value(checker *c, int depth);

static bool check_container(checker *c, int depth)
{
    bool obj = c->t[c->pos] == '{';
    char close = obj ? '}' : ']';
    if (depth >= JSON_MAX_DEPTH)
        return fail(c, "nesting deeper than 1000 levels");
    c->pos++;
    skip_ws(c);
    if (c->pos < c->len && c->t[c->pos] == close) {
        c->pos++;
        return true;
    }
    for (;;) {
        if (obj) {
            skip_ws(c);
            if (c->pos >= c->len || c->t[c->pos] != '"')
                return fail_got(c, "expected a string key");
            if (!check_string(c))
                return false;
            skip_ws(c);
            if (c->pos >= c->len || c->t[c->pos] != ':')
                return fail_got(c, "expected ':' after the key");
            c->pos++;
        }
        if (!check_value(c, depth + 1))
            return false;
        if (c->pos < c->len && c->t[c->pos] == ',') {
            c->pos++;
            continue;
        }
        if (c->pos < c->len && c->t[c->pos] == close) {
            c->pos++;
            return true;
        }
        return fail_got(c, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static bool check_value(checker *c, int depth)
{
    skip_ws(c);
    if (c->pos >= c->len)
        return fail_got(c, "expected a value");
    char ch = c->t[c->pos];
    bool ok;
    if (ch == '{' || ch == '[')
        ok = check_container(c, depth);
    else if (ch == '"')
        ok = check_string(c);
    else if (ch == '-' || is_digit(ch))
        ok = check_number(c);
    else {
        static const char *const words[] = {"true", "false", "null"};
        ok = false;
        for (int i = 0; i < 3 && !ok; i++) {
            size_t n = strlen(words[i]);
            if (c->len - c->pos >= n && memcmp(c->t + c->pos, words[i], n) == 0) {
                c->pos += n;
                ok = true;
            }
        }
        if (!ok)
            return fail_got(c, "expected a value");
    }
    if (ok)
        skip_ws(c);
    return ok;
}

bool json_syntax_check(const char *text, size_t len, size_t *err_off, const char **msg, char *buf, size_t buflen)
{
    checker c = {.t = text, .len = len};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        c.pos = 3; /* a UTF-8 byte order mark, as cJSON allows */
    bool ok = check_value(&c, 0);
    if (ok && c.pos < c.len)
        ok = fail_got(&c, "expected the end of the text after the JSON value");
    if (!ok) {
        *err_off = c.pos;
        snprintf(buf, buflen, "%s", c.msg);
        *msg = buf;
    }
    return ok;
}

/* npy.c — NumPy .npy files: a strict reader (versions 1.0, 2.0, 3.0) and an
 * atomic writer (version 1.0).
 *
 * Layout of a file:
 *   "\x93NUMPY", major, minor (u8 each), HEADER_LEN (u16 LE for 1.x, u32 LE for
 *   2.x/3.x), then HEADER_LEN bytes of a Python dict literal such as
 *     {'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }
 *   padded with spaces and ended by '\n', then the raw element data.
 * The reader parses the dict with a tiny strict parser (single or double
 * quotes, True/False, int tuples with a trailing comma, any whitespace, keys in
 * any order, exactly the keys descr/fortran_order/shape).  It honours
 * HEADER_LEN whatever the alignment (64 bytes since NumPy 1.14, 16 before),
 * caps it at 1 MiB, checks the shape for overflow and requires the data to be
 * exactly numel * itemsize bytes (a truncated or over-long file is an error
 * that prints both counts).  From a stream (a FIFO, stdin) it reads only what
 * the header announces, plus one byte to tell trailing data.
 *
 * Element types read (descr byte order '<', '>', '=' or '|'; big-endian data
 * is byte-swapped; Fortran-order data is transposed to row-major):
 *   f8 -> f64   f4 -> f32   f2 -> f16   i1 -> i8   i4 -> i32   i8 -> i64
 *   b1 -> bool  (any non-zero byte is true)
 *   u1, i2, u2 -> i32 and u4, u8 -> i64: exact widening, because xdnn has no
 *   unsigned or 16-bit integer dtype (u8 values above INT64_MAX are an error).
 * bf16 and fp8 have no NumPy descr.  The reader accepts the conventions seen
 * in practice: 'V2' (how ml_dtypes' bfloat16 arrays are saved by np.save) is
 * read as bf16 bits, 'V1' as fp8_e4m3 bits (both only a guess: the caller
 * gives them the declared dtype, host_tensor_retype), and the non-standard descrs
 * 'bfloat16', 'float8_e4m3fn', 'float8_e5m2' and 'float8_e8m0fnu' (ml_dtypes'
 * names) as their types.  The writer widens bf16, fp8 and e8m0 to f4 exactly.
 *
 * The writer emits version 1.0 (2.0 only if the header would exceed 65535
 * bytes), C order, logical dim order, little-endian, with the header padded so
 * the data starts at a multiple of 64 bytes.  bf16 and fp8 tensors are written
 * as '<f4': every bf16/fp8 value is exact in f32, so nothing is lost and every
 * NumPy can read the file.  For bit-exact typed bf16/fp8 files use
 * safetensors.
 */
#include "data.h"

#include "core/fileio.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NPY_MAX_HEADER = 1 << 20 };

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

typedef struct npy_header {
    file_elem elem;
    bool untyped;         /* 'V1' / 'V2': bytes of no stated type */
    bool swap;
    bool fortran;
    int rank;
    int64_t dims[XDNN_MAX_RANK];
} npy_header;

/* ---------------------------------------------------------------- header dict parser */

typedef struct hparser {
    const char *name; /* file name for errors */
    const char *p, *start, *end;
    xdnn_diags_t *d;
} hparser;

static xdnn_status hp_error(hparser *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static xdnn_status hp_error(hparser *h, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(h->d, XDNN_ERR_IO, ((xloc){.file = h->name}), "npy header, byte %td: %s", h->p - h->start, msg);
    return XDNN_ERR_IO;
}

static void hp_skip_ws(hparser *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

static bool hp_accept(hparser *h, char c)
{
    hp_skip_ws(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return true;
    }
    return false;
}

/* A quoted string without escapes into buf. */
static xdnn_status hp_string(hparser *h, char *buf, size_t cap)
{
    hp_skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return hp_error(h, "expected a quoted string");
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || *h->p == '\n')
            return hp_error(h, "escapes and newlines are not allowed in strings");
        if (n + 1 >= cap)
            return hp_error(h, "string too long");
        buf[n++] = *h->p++;
    }
    if (h->p >= h->end)
        return hp_error(h, "unterminated string");
    h->p++;
    buf[n] = 0;
    return XDNN_OK;
}

static xdnn_status hp_bool(hparser *h, bool *out)
{
    hp_skip_ws(h);
    size_t left = (size_t)(h->end - h->p);
    if (left >= 4 && memcmp(h->p, "True", 4) == 0) {
        h->p += 4;
        *out = true;
        return XDNN_OK;
    }
    if (left >= 5 && memcmp(h->p, "False", 5) == 0) {
        h->p += 5;
        *out = false;
        return XDNN_OK;
    }
    return hp_error(h, "fortran_order must be True or False");
}

/* A shape tuple: (), (5,), (2, 3) or (2, 3,).  Python 2 'L' suffixes allowed. */
static xdnn_status hp_shape(hparser *h, npy_header *hd)
{
    if (!hp_accept(h, '('))
        return hp_error(h, "shape must be a tuple such as (2, 3)");
    hd->rank = 0;
    bool trailing_comma = false;
    for (;;) {
        hp_skip_ws(h);
        if (hp_accept(h, ')'))
            break;
        if (h->p >= h->end)
            return hp_error(h, "unterminated shape tuple");
        if (*h->p == '-')
            return hp_error(h, "negative dimension in shape");
        if (*h->p < '0' || *h->p > '9')
            return hp_error(h, "expected a dimension (a non-negative integer)");
        uint64_t v = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            uint64_t digit = (uint64_t)(*h->p - '0');
            if (v > ((uint64_t)INT64_MAX - digit) / 10)
                return hp_error(h, "dimension too large");
            v = v * 10 + digit;
            h->p++;
        }
        if (h->p < h->end && *h->p == 'L')
            h->p++;
        if (hd->rank == XDNN_MAX_RANK)
            return hp_error(h, "more than 8 dimensions");
        hd->dims[hd->rank++] = (int64_t)v;
        trailing_comma = hp_accept(h, ',');
        if (!trailing_comma) {
            if (!hp_accept(h, ')'))
                return hp_error(h, "expected ',' or ')' in shape");
            break;
        }
    }
    if (hd->rank == 1 && !trailing_comma)
        return hp_error(h, "shape (n) is not a tuple; write (n,)");
    return XDNN_OK;
}

static xdnn_status parse_descr(hparser *h, const char *descr, npy_header *hd)
{
    static const struct {
        const char *name;
        file_elem elem;
    } named[] = {{"bfloat16", FE_BF16}, {"float8_e4m3fn", FE_E4M3}, {"float8_e5m2", FE_E5M2},
               {"float8_e8m0fnu", FE_E8M0}};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (strcmp(descr, named[i].name) == 0) {
            hd->elem = named[i].elem;
            hd->swap = false;
            return XDNN_OK;
        }
    }
    static const struct {
        const char *code;
        file_elem elem;
    } codes[] = {
        {"f8", FE_F64}, {"f4", FE_F32}, {"f2", FE_F16}, {"i1", FE_I8},  {"i2", FE_I16},  {"i4", FE_I32},
        {"i8", FE_I64}, {"u1", FE_U8},  {"u2", FE_U16}, {"u4", FE_U32}, {"u8", FE_U64},  {"b1", FE_BOOL},
        {"V2", FE_BF16}, {"V1", FE_E4M3},
    };
    char order = descr[0];
    if (order == '<' || order == '>' || order == '|' || order == '=') {
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
            if (strcmp(descr + 1, codes[i].code) == 0) {
                hd->elem = codes[i].elem;
                hd->untyped = descr[1] == 'V';
                hd->swap = order == '>' && descr[1] != 'V'; /* void bytes have no order */
                return XDNN_OK;
            }
        }
    }
    if (strchr(descr, 'O'))
        return hp_error(h, "object arrays ('%s') are not supported", descr);
    return hp_error(h,
                    "unsupported dtype '%s' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, V2 = bf16 bits, "
                    "V1 = fp8_e4m3 bits)",
                    descr);
}

static xdnn_status parse_header_dict(hparser *h, npy_header *hd)
{
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    if (!hp_accept(h, '{'))
        return hp_error(h, "header must start with '{'");
    for (;;) {
        if (hp_accept(h, '}'))
            break;
        char key[32];
        xdnn_status st = hp_string(h, key, sizeof key);
        if (st != XDNN_OK)
            return st;
        if (!hp_accept(h, ':'))
            return hp_error(h, "expected ':' after key '%s'", key);
        if (strcmp(key, "descr") == 0) {
            if (seen_descr)
                return hp_error(h, "duplicate key '%s'", key);
            seen_descr = true;
            hp_skip_ws(h);
            if (h->p < h->end && *h->p == '[')
                return hp_error(h, "structured dtypes are not supported");
            char descr[32];
            if ((st = hp_string(h, descr, sizeof descr)) != XDNN_OK || (st = parse_descr(h, descr, hd)) != XDNN_OK)
                return st;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (seen_fortran)
                return hp_error(h, "duplicate key '%s'", key);
            seen_fortran = true;
            if ((st = hp_bool(h, &hd->fortran)) != XDNN_OK)
                return st;
        } else if (strcmp(key, "shape") == 0) {
            if (seen_shape)
                return hp_error(h, "duplicate key '%s'", key);
            seen_shape = true;
            if ((st = hp_shape(h, hd)) != XDNN_OK)
                return st;
        } else {
            return hp_error(h, "unexpected key '%s' (expected descr, fortran_order, shape)", key);
        }
        if (!hp_accept(h, ',')) {
            if (!hp_accept(h, '}'))
                return hp_error(h, "expected ',' or '}'");
            break;
        }
    }
    hp_skip_ws(h);
    if (h->p != h->end)
        return hp_error(h, "unexpected text after the header dict");
    if (!seen_descr || !seen_fortran || !seen_shape)
        return hp_error(h, "header lacks '%s'", !seen_descr ? "descr" : !seen_fortran ? "fortran_order" : "shape");
    return XDNN_OK;
}

/* ---------------------------------------------------------------- reading */

static uint32_t read_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

xdnn_status npy_parse(const char *name, const unsigned char *buf, size_t len, host_tensor *out, xdnn_diags_t *d)
{
    memset(out, 0, sizeof *out);
    xloc at = {.file = name};
    if (len < 10 || memcmp(buf, npy_magic, sizeof npy_magic) != 0) {
        diag_error(d, XDNN_ERR_IO, at, "not a .npy file (no \\x93NUMPY magic)");
        return XDNN_ERR_IO;
    }
    int major = buf[6], minor = buf[7];
    if (major < 1 || major > 3 || minor != 0) {
        diag_error(d, XDNN_ERR_IO, at, "unsupported .npy version %d.%d (supported: 1.0, 2.0, 3.0)", major, minor);
        return XDNN_ERR_IO;
    }
    size_t prefix = major == 1 ? 10 : 12;
    if (len < prefix) {
        diag_error(d, XDNN_ERR_IO, at, "truncated .npy preamble: %zu bytes", len);
        return XDNN_ERR_IO;
    }
    size_t hlen = major == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8 : read_le32(buf + 8);
    if (hlen > NPY_MAX_HEADER) {
        diag_error(d, XDNN_ERR_IO, at, "npy header length %zu exceeds the %d-byte limit", hlen, NPY_MAX_HEADER);
        return XDNN_ERR_IO;
    }
    if (len - prefix < hlen) {
        diag_error(d, XDNN_ERR_IO, at, "truncated .npy header: header length is %zu bytes, file has %zu after the preamble",
                   hlen, len - prefix);
        return XDNN_ERR_IO;
    }
    const char *htext = (const char *)buf + prefix;
    for (size_t i = 0; major < 3 && i < hlen; i++) {
        if ((unsigned char)htext[i] >= 0x80) {
            diag_error(d, XDNN_ERR_IO, at, "npy header, byte %zu: non-ASCII byte in a version %d.0 header", i, major);
            return XDNN_ERR_IO;
        }
    }
    npy_header hd = {0};
    hparser h = {name, htext, htext, htext + hlen, d};
    xdnn_status st = parse_header_dict(&h, &hd);
    if (st != XDNN_OK)
        return st;
    int64_t numel;
    size_t need;
    if (!file_shape_bytes(hd.rank, hd.dims, file_elem_size(hd.elem), &numel, &need)) {
        diag_error(d, XDNN_ERR_IO, at, "shape too large: the element count overflows");
        return XDNN_ERR_IO;
    }
    size_t have = len - prefix - hlen;
    if (have != need) {
        diag_error(d, XDNN_ERR_IO, at, "%s .npy data: expected %zu bytes (%" PRId64 " elements of %zu bytes), file has %zu",
                   have < need ? "truncated" : "trailing bytes after", need, numel, file_elem_size(hd.elem), have);
        return XDNN_ERR_IO;
    }
    st = file_elems_decode(name, hd.elem, hd.swap, hd.fortran, hd.rank, hd.dims, buf + prefix + hlen, out, d);
    out->untyped = st == XDNN_OK && hd.untyped;
    return st;
}

/* How many bytes a .npy file starting with buf[0..len) holds in all, as far
 * as those bytes tell: the preamble, then preamble + header, then the whole
 * file once the header is complete.  0 when they cannot start a valid file
 * (npy_parse then says why). */
static size_t npy_expected_size(const unsigned char *buf, size_t len)
{
    if (len < 12)
        return 12; /* the longest preamble; no valid file is shorter */
    if (memcmp(buf, npy_magic, sizeof npy_magic) != 0 || buf[6] < 1 || buf[6] > 3)
        return 0;
    size_t prefix = buf[6] == 1 ? 10 : 12;
    size_t hlen = buf[6] == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8 : read_le32(buf + 8);
    if (hlen > NPY_MAX_HEADER)
        return 0;
    if (len < prefix + hlen)
        return prefix + hlen;
    xdnn_diags_t *scratch = xdnn_diags_create();
    npy_header hd = {0};
    const char *htext = (const char *)buf + prefix;
    hparser h = {"", htext, htext, htext + hlen, scratch};
    int64_t numel;
    size_t need = 0;
    bool ok = scratch && parse_header_dict(&h, &hd) == XDNN_OK &&
              file_shape_bytes(hd.rank, hd.dims, file_elem_size(hd.elem), &numel, &need) &&
              need < SIZE_MAX - prefix - hlen;
    xdnn_diags_destroy(scratch);
    return ok ? prefix + hlen + need : 0;
}

xdnn_status npy_read(const char *path, host_tensor *out, xdnn_diags_t *d)
{
    memset(out, 0, sizeof *out);
    file_in in;
    xdnn_status st = file_in_open(&in, path, xloc_none(), d);
    if (st != XDNN_OK)
        return st;
    if (in.regular) {
        st = file_in_fill(&in, SIZE_MAX - 1, d); /* it ends; npy_parse prints its exact size */
    } else {
        /* A stream: read what the header says the file holds, plus one byte
         * to tell trailing data, and never more. */
        for (;;) {
            size_t total = npy_expected_size((const unsigned char *)in.data, in.len);
            if (st != XDNN_OK || total == 0 || in.len > total || in.eof || in.len > FILE_STREAM_MAX)
                break;
            st = file_in_fill(&in, total < FILE_STREAM_MAX ? total + 1 : FILE_STREAM_MAX + 1, d);
        }
    }
    if (st == XDNN_OK)
        st = npy_parse(path, (const unsigned char *)in.data, in.len, out, d);
    file_in_close(&in);
    return st;
}

/* ---------------------------------------------------------------- writing */

static const char *npy_descr_for(xdnn_dtype t, xdnn_dtype *file_dtype)
{
    *file_dtype = t;
    switch (t) {
    case XDNN_F64: return "<f8";
    case XDNN_F16: return "<f2";
    case XDNN_I8: return "|i1";
    case XDNN_I32: return "<i4";
    case XDNN_I64: return "<i8";
    case XDNN_BOOL: return "|b1";
    case XDNN_F32:
    case XDNN_BF16:
    case XDNN_FP8_E4M3:
    case XDNN_FP8_E5M2:
    case XDNN_E8M0:
    default: *file_dtype = XDNN_F32; return "<f4"; /* exact widening */
    }
}

xdnn_status npy_write(const char *path, const host_tensor *t, xdnn_diags_t *d)
{
    xdnn_dtype fdt;
    const char *descr = npy_descr_for(t->dtype, &fdt);
    char dict[64 + XDNN_MAX_RANK * 24];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->rank; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%" PRId64, i ? ", " : "", t->dims[i]);
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", t->rank == 1 ? "," : "");
    /* Pad with spaces and a final '\n' so the data starts at a multiple of 64. */
    size_t prefix = 10;
    size_t hlen = ((prefix + (size_t)n + 1 + 63) / 64) * 64 - prefix;
    if (hlen > 65535) {
        prefix = 12;
        hlen = ((prefix + (size_t)n + 1 + 63) / 64) * 64 - prefix;
    }
    size_t esize = xdnn_dtype_size(fdt);
    size_t total = prefix + hlen + (size_t)t->numel * esize;
    unsigned char *buf = malloc(total ? total : 1);
    if (!buf) {
        diag_error(d, XDNN_ERR_NOMEM, ((xloc){.file = path}), "out of memory writing %zu bytes", total);
        return XDNN_ERR_NOMEM;
    }
    memcpy(buf, npy_magic, sizeof npy_magic);
    buf[6] = prefix == 10 ? 1 : 2;
    buf[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++)
        buf[8 + i] = (unsigned char)(hlen >> (8 * i));
    memset(buf + prefix, ' ', hlen);
    memcpy(buf + prefix, dict, (size_t)n);
    buf[prefix + hlen - 1] = '\n';
    /* Elements in logical order; same-type elements are copied byte for byte
     * so NaN payloads survive, bf16/fp8 are widened exactly to f32. */
    unsigned char *dst = buf + prefix + hlen;
    size_t src_size = xdnn_dtype_size(t->dtype);
    int64_t idx[XDNN_MAX_RANK] = {0};
    for (int64_t k = 0; k < t->numel; k++) {
        int64_t off = host_tensor_offset(t, idx);
        const unsigned char *src = (const unsigned char *)t->data + (size_t)off * src_size;
        if (fdt == t->dtype)
            memcpy(dst + (size_t)k * esize, src, esize);
        else
            dtype_store(fdt, dst, k, dtype_load(t->dtype, t->data, off));
        for (int i = t->rank - 1; i >= 0; i--) {
            if (++idx[i] < t->dims[i])
                break;
            idx[i] = 0;
        }
    }
    xdnn_status st = file_write_atomic(path, buf, total, d);
    free(buf);
    return st;
}

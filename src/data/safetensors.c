/* safetensors.c — Hugging Face safetensors files: a validating reader (one
 * named tensor at a time) and an atomic writer for several tensors.
 *
 * Layout of a file:
 *   N (u64 little-endian), then N bytes of UTF-8 JSON
 *     {"name": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [begin, end]},
 *      ..., "__metadata__": {"key": "value"}}
 *   then the data buffer; offsets are relative to its start.  Every tensor is
 *   packed, C order (row-major, logical dims), little-endian.
 *
 * dtypes: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 F8_E8M0 I8 I32 I64 BOOL map to the xdnn
 * dtypes of the same meaning; bf16 and fp8 are stored as their raw bits
 * (bf16 = the top 16 bits of an IEEE f32; F8_E4M3 = OCP e4m3fn, NaN 0x7F/0xFF,
 * no Inf; F8_E5M2 = IEEE-like e5m2 with Inf; F8_E8M0 = the OCP MX scale,
 * 2^(b-127), NaN 0xFF), so those files are bit exact.
 * The reader also widens U8, I16, U16 to i32 and U32, U64 to i64 (exactly;
 * U64 above INT64_MAX is an error).
 *
 * The reader checks, like the reference implementation: the header is at most
 * 100 MB and fits the file; it is a JSON object; names are unique; each entry
 * has a known dtype, a shape of non-negative integers (rank <= 8) and two
 * data_offsets with begin <= end; end - begin == numel * element size; sorted
 * by offset, the tensors tile the data buffer exactly (no overlap, no gap, no
 * byte left over).  "__metadata__" is skipped (it must be an object).  From a
 * stream (a FIFO, stdin) it reads only what the header announces, plus one
 * byte.
 *
 * The writer sorts tensors by name, stores them in that order, and pads the
 * header with spaces so the data buffer starts at a multiple of 8 bytes.
 */
#include "data.h"

#include "core/fileio.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_MAX_HEADER 100000000ull /* bytes, as in safetensors' MAX_HEADER_SIZE */
#define ST_MAX_INT 9007199254740992.0 /* 2^53: larger JSON numbers are not exact */

static const struct {
    const char *name;
    file_elem elem;
} st_dtypes[] = {
    {"F64", FE_F64}, {"F32", FE_F32}, {"F16", FE_F16}, {"BF16", FE_BF16}, {"F8_E4M3", FE_E4M3},
    {"F8_E5M2", FE_E5M2}, {"I8", FE_I8}, {"I16", FE_I16}, {"I32", FE_I32}, {"I64", FE_I64},
    {"U8", FE_U8}, {"U16", FE_U16}, {"U32", FE_U32}, {"U64", FE_U64}, {"BOOL", FE_BOOL},
    {"F8_E8M0", FE_E8M0},
};

static const char *st_dtype_name(xdnn_dtype t)
{
    file_elem e = file_elem_of_dtype(t);
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (st_dtypes[i].elem == e)
            return st_dtypes[i].name;
    return "F32";
}

typedef struct st_entry {
    const char *name;
    file_elem elem;
    int rank;
    int64_t dims[XDNN_MAX_RANK];
    uint64_t begin, end;
} st_entry;

static xdnn_status st_error(xdnn_diags_t *d, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static xdnn_status st_error(xdnn_diags_t *d, const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(d, XDNN_SEV_ERROR, XDNN_ERR_IO, (xloc){.file = file}, NULL, fmt, ap);
    va_end(ap);
    return XDNN_ERR_IO;
}

/* A JSON number that is an exact non-negative integer below 2^53. */
static bool st_uint(const cJSON *j, uint64_t *out)
{
    if (!cJSON_IsNumber(j))
        return false;
    double v = j->valuedouble;
    if (!(v >= 0 && v < ST_MAX_INT) || v != (double)(uint64_t)v)
        return false;
    *out = (uint64_t)v;
    return true;
}

static xdnn_status st_parse_entry(const char *file, const cJSON *j, st_entry *e, uint64_t buffer_bytes,
                                  xdnn_diags_t *d)
{
    e->name = j->string;
    if (!cJSON_IsObject(j))
        return st_error(d, file, "tensor '%s': entry is not a JSON object", e->name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(j, "dtype");
    if (!cJSON_IsString(dt))
        return st_error(d, file, "tensor '%s': missing string \"dtype\"", e->name);
    size_t k = 0, nd = sizeof st_dtypes / sizeof st_dtypes[0];
    while (k < nd && strcmp(dt->valuestring, st_dtypes[k].name) != 0)
        k++;
    if (k == nd)
        return st_error(d, file, "tensor '%s': unsupported dtype \"%s\" (supported: F64 F32 F16 BF16 F8_E4M3 "
                        "F8_E5M2 F8_E8M0 I8 I16 I32 I64 U8 U16 U32 U64 BOOL)", e->name, dt->valuestring);
    e->elem = st_dtypes[k].elem;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
    if (!cJSON_IsArray(shape))
        return st_error(d, file, "tensor '%s': missing array \"shape\"", e->name);
    int rank = cJSON_GetArraySize(shape);
    if (rank > XDNN_MAX_RANK)
        return st_error(d, file, "tensor '%s': rank %d exceeds %d", e->name, rank, XDNN_MAX_RANK);
    e->rank = 0;
    for (const cJSON *x = shape->child; x; x = x->next) {
        uint64_t v;
        if (!st_uint(x, &v))
            return st_error(d, file, "tensor '%s': shape entries must be non-negative integers", e->name);
        e->dims[e->rank++] = (int64_t)v;
    }
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(j, "data_offsets");
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 || !st_uint(offs->child, &e->begin) ||
        !st_uint(offs->child->next, &e->end))
        return st_error(d, file, "tensor '%s': \"data_offsets\" must be [begin, end] (non-negative integers)",
                        e->name);
    if (e->begin > e->end || e->end > buffer_bytes)
        return st_error(d, file, "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] outside the %" PRIu64
                        "-byte data buffer", e->name, e->begin, e->end, buffer_bytes);
    int64_t numel;
    size_t need;
    if (!file_shape_bytes(e->rank, e->dims, file_elem_size(e->elem), &numel, &need))
        return st_error(d, file, "tensor '%s': shape too large", e->name);
    if (e->end - e->begin != need)
        return st_error(d, file, "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
                        " bytes, but %" PRId64 " %s elements need %zu", e->name, e->begin, e->end,
                        e->end - e->begin, numel, dt->valuestring, need);
    return XDNN_OK;
}

static int st_by_name(const void *a, const void *b)
{
    return strcmp(((const st_entry *)a)->name, ((const st_entry *)b)->name);
}

static int st_by_offset(const void *a, const void *b)
{
    const st_entry *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Names of the tensors, for "no tensor 'k'" errors (at most 8 listed). */
static void st_list_names(const st_entry *es, int n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < n && i < 8 && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", es[i].name);
    if (n > 8 && used < cap)
        snprintf(buf + used, cap - used, ", ... (%d in all)", n);
}

xdnn_status safetensors_parse(const char *name, const unsigned char *buf, size_t len, const char *key,
                              host_tensor *out, xdnn_diags_t *d)
{
    memset(out, 0, sizeof *out);
    if (len < 8)
        return st_error(d, name, "not a safetensors file: %zu bytes, too short for the 8-byte header length", len);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | buf[i];
    if (hlen > ST_MAX_HEADER)
        return st_error(d, name, "safetensors header length %" PRIu64 " exceeds the 100 MB limit", hlen);
    if (hlen > len - 8)
        return st_error(d, name, "truncated safetensors header: header length is %" PRIu64 " bytes, file has %zu "
                        "after the length", hlen, len - 8);
    const char *htext = (const char *)buf + 8;
    const char *parse_end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(htext, (size_t)hlen, &parse_end, false);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= htext && at <= htext + hlen ? (size_t)(at - htext) : 0;
        return st_error(d, name, "safetensors header is not valid JSON (near byte %zu of the header)", off);
    }
    xdnn_status st = XDNN_OK;
    st_entry *es = NULL;
    for (const char *p = parse_end; p && p < htext + hlen; p++) {
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            st = st_error(d, name, "unexpected text after the safetensors JSON header (byte %td)", p - htext);
            goto done;
        }
    }
    if (!cJSON_IsObject(root)) {
        st = st_error(d, name, "safetensors header is not a JSON object");
        goto done;
    }
    int n = 0, count = cJSON_GetArraySize(root);
    es = calloc((size_t)(count ? count : 1), sizeof *es);
    if (!es) {
        st = XDNN_ERR_NOMEM;
        goto done;
    }
    uint64_t buffer_bytes = len - 8 - hlen;
    for (const cJSON *j = root->child; j; j = j->next) {
        if (strcmp(j->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(j)) {
                st = st_error(d, name, "\"__metadata__\" must be a JSON object");
                goto done;
            }
            continue;
        }
        if ((st = st_parse_entry(name, j, &es[n], buffer_bytes, d)) != XDNN_OK)
            goto done;
        n++;
    }
    qsort(es, (size_t)n, sizeof *es, st_by_name);
    for (int i = 1; i < n; i++) {
        if (strcmp(es[i - 1].name, es[i].name) == 0) {
            st = st_error(d, name, "tensor '%s' appears twice in the header", es[i].name);
            goto done;
        }
    }
    /* Find the wanted entry now: sorting by offset below reorders es. */
    st_entry want = {0};
    bool found = false;
    if (key) {
        st_entry probe = {.name = key};
        const st_entry *hit = n ? bsearch(&probe, es, (size_t)n, sizeof *es, st_by_name) : NULL;
        if (hit) {
            want = *hit;
            found = true;
        }
    } else if (n == 1) {
        want = es[0];
        found = true;
    }
    if (!found) {
        char names[512];
        st_list_names(es, n, names, sizeof names);
        if (key)
            st = st_error(d, name, "no tensor '%s' in the file (it holds: %s)", key, n ? names : "nothing");
        else
            st = st_error(d, name, "the file holds %d tensors; choose one with key= (%s)", n, n ? names : "none");
        goto done;
    }
    qsort(es, (size_t)n, sizeof *es, st_by_offset);
    uint64_t expect = 0;
    for (int i = 0; i < n; i++) {
        if (es[i].begin != expect) {
            st = st_error(d, name, "tensor '%s': data_offsets begin at %" PRIu64 ", expected %" PRIu64 " (%s)",
                          es[i].name, es[i].begin, expect,
                          es[i].begin < expect ? "overlaps the previous tensor" : "gap in the data buffer");
            goto done;
        }
        expect = es[i].end;
    }
    if (expect != buffer_bytes) {
        st = st_error(d, name, "the tensors cover %" PRIu64 " bytes of the %" PRIu64 "-byte data buffer", expect,
                      buffer_bytes);
        goto done;
    }
    st = file_elems_decode(name, want.elem, false, false, want.rank, want.dims, buf + 8 + hlen + want.begin, out,
                           d);
done:
    free(es);
    cJSON_Delete(root);
    return st;
}

/* How many bytes a safetensors file starting with buf[0..len) holds in all,
 * as far as those bytes tell: the length prefix, the header, then the header
 * plus the data buffer (its size is the largest data_offsets end, since the
 * tensors must tile it).  0 when they cannot start a valid file. */
static size_t st_expected_size(const unsigned char *buf, size_t len)
{
    if (len < 8)
        return 8;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | buf[i];
    if (hlen > ST_MAX_HEADER)
        return 0;
    if (len - 8 < hlen)
        return 8 + (size_t)hlen;
    cJSON *root = cJSON_ParseWithLength((const char *)buf + 8, (size_t)hlen);
    uint64_t data = 0;
    bool ok = cJSON_IsObject(root);
    for (const cJSON *e = ok ? root->child : NULL; e; e = e->next) {
        const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
        uint64_t end;
        if (cJSON_GetArraySize(offs) == 2 && st_uint(cJSON_GetArrayItem(offs, 1), &end) && end > data)
            data = end;
    }
    cJSON_Delete(root);
    return ok && data < SIZE_MAX - 8 - hlen ? 8 + (size_t)hlen + (size_t)data : 0;
}

xdnn_status safetensors_read_bytes(const char *path, char **data, size_t *len, xdnn_diags_t *d)
{
    *data = NULL;
    *len = 0;
    file_in in;
    xdnn_status st = file_in_open(&in, path, xloc_none(), d);
    if (st != XDNN_OK)
        return st;
    if (in.regular) {
        st = file_in_fill(&in, SIZE_MAX - 1, d); /* it ends; the parser prints its exact size */
    } else {
        /* A stream: what the header says the file holds, plus one byte. */
        for (;;) {
            size_t total = st_expected_size((const unsigned char *)in.data, in.len);
            if (st != XDNN_OK || total == 0 || in.len > total || in.eof || in.len > FILE_STREAM_MAX)
                break;
            st = file_in_fill(&in, total < FILE_STREAM_MAX ? total + 1 : FILE_STREAM_MAX + 1, d);
        }
    }
    if (st == XDNN_OK) {
        *data = in.data;
        *len = in.len;
        in.data = NULL;
    }
    file_in_close(&in);
    return st;
}

xdnn_status safetensors_read(const char *path, const char *key, host_tensor *out, xdnn_diags_t *d)
{
    memset(out, 0, sizeof *out);
    char *buf;
    size_t len;
    xdnn_status st = safetensors_read_bytes(path, &buf, &len, d);
    if (st != XDNN_OK)
        return st;
    st = safetensors_parse(path, (const unsigned char *)buf, len, key, out, d);
    free(buf);
    return st;
}

/* ---------------------------------------------------------------- writing */

/* A growable byte buffer; `failed` latches allocation failure. */
typedef struct bytes {
    unsigned char *p;
    size_t n, cap;
    bool failed;
} bytes;

static void b_put(bytes *b, const void *src, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        unsigned char *np = realloc(b->p, cap);
        if (!np) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void b_printf(bytes *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void b_printf(bytes *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    b_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A JSON string literal: quotes, backslashes and control bytes escaped. */
static void b_json_string(bytes *b, const char *s)
{
    b_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            b_put(b, "\\", 1);
            b_put(b, p, 1);
        } else if (*p < 0x20) {
            b_printf(b, "\\u%04x", *p);
        } else {
            b_put(b, p, 1);
        }
    }
    b_put(b, "\"", 1);
}

typedef struct named_index {
    const char *name;
    int index;
} named_index;

static int st_by_index_name(const void *a, const void *b)
{
    return strcmp(((const named_index *)a)->name, ((const named_index *)b)->name);
}

xdnn_status safetensors_write(const char *path, int n, const char *const *names,
                              const host_tensor *const *tensors, xdnn_diags_t *d)
{
    named_index *order = malloc(sizeof *order * (size_t)(n > 0 ? n : 1));
    if (!order)
        return XDNN_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        order[i] = (named_index){names[i], i};
    qsort(order, (size_t)n, sizeof *order, st_by_index_name);
    for (int i = 0; i < n; i++) {
        if ((i && strcmp(order[i - 1].name, order[i].name) == 0) || strcmp(order[i].name, "__metadata__") == 0) {
            st_error(d, path, "safetensors: tensor name '%s' is used twice or reserved", order[i].name);
            free(order);
            return XDNN_ERR_IO;
        }
    }
    bytes hdr = {0}, data = {0};
    b_put(&hdr, "{", 1);
    uint64_t offset = 0;
    for (int i = 0; i < n; i++) {
        const host_tensor *t = tensors[order[i].index];
        size_t esize = xdnn_dtype_size(t->dtype);
        uint64_t end = offset + (uint64_t)t->numel * esize;
        if (i)
            b_put(&hdr, ",", 1);
        b_json_string(&hdr, order[i].name);
        b_printf(&hdr, ":{\"dtype\":\"%s\",\"shape\":[", st_dtype_name(t->dtype));
        for (int k = 0; k < t->rank; k++)
            b_printf(&hdr, "%s%" PRId64, k ? "," : "", t->dims[k]);
        b_printf(&hdr, "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}", offset, end);
        offset = end;
        /* Elements in logical order, bytes copied as stored (bit exact). */
        int64_t idx[XDNN_MAX_RANK] = {0};
        for (int64_t k = 0; k < t->numel; k++) {
            b_put(&data, (const unsigned char *)t->data + (size_t)host_tensor_offset(t, idx) * esize, esize);
            for (int r = t->rank - 1; r >= 0; r--) {
                if (++idx[r] < t->dims[r])
                    break;
                idx[r] = 0;
            }
        }
    }
    b_put(&hdr, "}", 1);
    while (hdr.n % 8)
        b_put(&hdr, " ", 1);
    free(order);
    xdnn_status st = XDNN_OK;
    bytes file = {0};
    unsigned char len8[8];
    for (int i = 0; i < 8; i++)
        len8[i] = (unsigned char)((uint64_t)hdr.n >> (8 * i));
    b_put(&file, len8, 8);
    b_put(&file, hdr.p, hdr.n);
    if (data.n)
        b_put(&file, data.p, data.n);
    if (hdr.failed || data.failed || file.failed) {
        diag_error(d, XDNN_ERR_NOMEM, ((xloc){.file = path}), "out of memory writing safetensors");
        st = XDNN_ERR_NOMEM;
    } else {
        st = file_write_atomic(path, file.p, file.n, d);
    }
    free(hdr.p);
    free(data.p);
    free(file.p);
    return st;
}

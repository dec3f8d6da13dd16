/* raw.c — raw tensor files (packed little-endian elements of a declared dtype,
 * nothing else) and the element decoder the .npy and safetensors readers
 * share: byte swapping, Fortran order, and exact widening of file element
 * types xdnn has no dtype for (u8/i16/u16 -> i32, u32/u64 -> i64).
 *
 * A raw file's size must be exactly numel * dtype size; anything else is an
 * error that prints both byte counts.
 */
#include "data.h"

#include "core/fileio.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    xdnn_dtype dtype;
    unsigned char size;
} file_elems[] = {
    [FE_F64] = {XDNN_F64, 8},       [FE_F32] = {XDNN_F32, 4},       [FE_F16] = {XDNN_F16, 2},
    [FE_BF16] = {XDNN_BF16, 2},     [FE_E4M3] = {XDNN_FP8_E4M3, 1}, [FE_E5M2] = {XDNN_FP8_E5M2, 1},
    [FE_I8] = {XDNN_I8, 1},         [FE_I16] = {XDNN_I32, 2},       [FE_I32] = {XDNN_I32, 4},
    [FE_I64] = {XDNN_I64, 8},       [FE_U8] = {XDNN_I32, 1},        [FE_U16] = {XDNN_I32, 2},
    [FE_U32] = {XDNN_I64, 4},       [FE_U64] = {XDNN_I64, 8},       [FE_BOOL] = {XDNN_BOOL, 1},
    [FE_E8M0] = {XDNN_E8M0, 1},
};
_Static_assert(sizeof file_elems / sizeof file_elems[0] == FE_E8M0 + 1, "one row per file_elem");

xdnn_dtype file_elem_dtype(file_elem e) { return file_elems[e].dtype; }
size_t file_elem_size(file_elem e) { return file_elems[e].size; }

file_elem file_elem_of_dtype(xdnn_dtype t)
{
    switch (t) {
    case XDNN_F64: return FE_F64;
    case XDNN_F16: return FE_F16;
    case XDNN_BF16: return FE_BF16;
    case XDNN_FP8_E4M3: return FE_E4M3;
    case XDNN_FP8_E5M2: return FE_E5M2;
    case XDNN_E8M0: return FE_E8M0;
    case XDNN_I8: return FE_I8;
    case XDNN_I32: return FE_I32;
    case XDNN_I64: return FE_I64;
    case XDNN_BOOL: return FE_BOOL;
    case XDNN_F32:
    default: return FE_F32;
    }
}

bool file_shape_bytes(int rank, const int64_t *dims, size_t elem, int64_t *numel, size_t *bytes)
{
    bool zero = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return false;
        zero |= dims[i] == 0;
    }
    uint64_t n = 1;
    for (int i = 0; i < rank && !zero; i++) {
        if (n > (uint64_t)INT64_MAX / (uint64_t)dims[i])
            return false;
        n *= (uint64_t)dims[i];
    }
    if (zero)
        n = 0;
    if (elem && n > SIZE_MAX / elem)
        return false;
    *numel = (int64_t)n;
    *bytes = (size_t)n * elem;
    return true;
}

/* Store an integer read from a narrower or unsigned file element as the
 * i32 or i64 xdnn reads it into (out_size 4 or 8); the value fits exactly. */
static void store_widened(unsigned char *o, size_t out_size, int64_t v)
{
    if (out_size == 4) {
        int32_t w = (int32_t)v;
        memcpy(o, &w, 4);
    } else {
        memcpy(o, &v, 8);
    }
}

xdnn_status file_elems_decode(const char *name, file_elem e, bool swap, bool fortran, int rank,
                              const int64_t *dims, const unsigned char *data, host_tensor *out,
                              xdnn_diags_t *d)
{
    xdnn_status st = host_tensor_alloc(out, file_elems[e].dtype, rank, dims, NULL);
    if (st != XDNN_OK) {
        diag_error(d, st, ((xloc){.file = name}), "out of memory for %" PRId64 " elements", out->numel);
        return st;
    }
    size_t in_size = file_elems[e].size, out_size = xdnn_dtype_size(out->dtype);
    /* Fortran order: logical (row-major) element k sits at sum idx[i] * fstride[i]. */
    int64_t fstride[XDNN_MAX_RANK], idx[XDNN_MAX_RANK] = {0};
    /* Only a non-empty tensor's prefix products are known to fit in int64. */
    for (int i = 0; i < rank && out->numel > 0; i++)
        fstride[i] = i == 0 ? 1 : fstride[i - 1] * dims[i - 1];
    unsigned char *dst = out->data;
    for (int64_t k = 0; k < out->numel; k++) {
        int64_t src_index = k;
        if (fortran) {
            src_index = 0;
            for (int i = 0; i < rank; i++)
                src_index += idx[i] * fstride[i];
            for (int i = rank - 1; i >= 0; i--) {
                if (++idx[i] < dims[i])
                    break;
                idx[i] = 0;
            }
        }
        unsigned char el[8];
        const unsigned char *src = data + (size_t)src_index * in_size;
        for (size_t b = 0; b < in_size; b++)
            el[b] = swap ? src[in_size - 1 - b] : src[b];
        unsigned char *o = dst + (size_t)k * out_size;
        switch (e) {
        case FE_BOOL: o[0] = el[0] != 0; break;
        case FE_U8: store_widened(o, out_size, el[0]); break;
        case FE_I16: {
            int16_t v;
            memcpy(&v, el, 2);
            store_widened(o, out_size, v);
            break;
        }
        case FE_U16: {
            uint16_t v;
            memcpy(&v, el, 2);
            store_widened(o, out_size, v);
            break;
        }
        case FE_U32: {
            uint32_t v;
            memcpy(&v, el, 4);
            store_widened(o, out_size, v);
            break;
        }
        case FE_U64: {
            uint64_t v;
            memcpy(&v, el, 8);
            if (v > (uint64_t)INT64_MAX) {
                diag_error(d, XDNN_ERR_IO, ((xloc){.file = name}),
                           "u64 element %" PRId64 " is %" PRIu64 ", above the i64 range it is read into", k, v);
                host_tensor_free(out);
                return XDNN_ERR_IO;
            }
            memcpy(o, &v, 8);
            break;
        }
        default: memcpy(o, el, in_size); break; /* same representation */
        }
    }
    return XDNN_OK;
}

xdnn_status raw_read(const char *path, xdnn_dtype dtype, int rank, const int64_t *dims, host_tensor *out,
                     xdnn_diags_t *d)
{
    memset(out, 0, sizeof *out);
    int64_t numel;
    size_t need;
    if (rank < 0 || rank > XDNN_MAX_RANK ||
        !file_shape_bytes(rank, dims, xdnn_dtype_size(dtype), &numel, &need)) {
        diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}), "raw file: invalid or too large shape");
        return XDNN_ERR_IO;
    }
    /* One byte past the size needed tells a longer file, without reading all
     * of it (or forever, from a stream). */
    file_in in;
    xdnn_status st = file_in_open(&in, path, xloc_none(), d);
    if (st == XDNN_OK)
        st = file_in_fill(&in, in.regular || need < FILE_STREAM_MAX ? need + 1 : FILE_STREAM_MAX + 1, d);
    if (st != XDNN_OK) {
        file_in_close(&in);
        return st;
    }
    const unsigned char *buf = (const unsigned char *)in.data;
    size_t len = in.regular && in.size > in.len ? in.size : in.len;
    if (len != need) {
        char shape[XDNN_MAX_RANK * 24 + 4];
        size_t n = 0;
        shape[0] = 0;
        for (int i = 0; i < rank; i++)
            n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%" PRId64, i ? ", " : "", dims[i]);
        diag_error(d, XDNN_ERR_IO, ((xloc){.file = path}),
                   "raw file has %s%zu bytes, but %s[%s] needs exactly %zu bytes", in.regular || in.eof ? "" : "over ",
                   in.regular || in.eof ? len : need, xdnn_dtype_name(dtype), shape, need);
        file_in_close(&in);
        return XDNN_ERR_IO;
    }
    st = file_elems_decode(path, file_elem_of_dtype(dtype), false, false, rank, dims, buf, out, d);
    file_in_close(&in);
    return st;
}

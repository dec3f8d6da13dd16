/* test_data_safetensors.c — safetensors: every dtype written and read back
 * bit for bit, the writer's exact header, hand-made files (metadata, widened
 * types, scalars), and corrupt files that must each give their own error. */
#include "data/data.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];

/* An 8-byte length, the JSON text as given (no padding), then data. */
static size_t make_st(unsigned char *out, const char *json, const void *data, size_t nbytes)
{
    size_t n = strlen(json);
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(out + 8, json, n);
    if (nbytes)
        memcpy(out + 8 + n, data, nbytes);
    return 8 + n + nbytes;
}

static xdnn_status parse(const unsigned char *buf, size_t len, const char *key, host_tensor *t, char *msg,
                         size_t cap)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_status st = safetensors_parse("m.safetensors", buf, len, key, t, d);
    const xdnn_diag *e = xdnn_diags_get(d, 0);
    snprintf(msg, cap, "%s", e ? e->message : "");
    xdnn_diags_destroy(d);
    return st;
}

static void expect_error(const unsigned char *buf, size_t len, const char *key, const char *want, const char *what)
{
    host_tensor t;
    char msg[512];
    xdnn_status st = parse(buf, len, key, &t, msg, sizeof msg);
    CHECK(st == XDNN_ERR_IO, "%s: status %d", what, st);
    CHECK(strstr(msg, want), "%s: message '%s' lacks '%s'", what, msg, want);
    CHECK(t.data == NULL, "%s: nothing allocated", what);
}

/* ---------------------------------------------------------------- round trips */

static void test_round_trip_every_dtype(void)
{
    /* Values that exercise each type: negatives, fractions, a NaN for floats. */
    static const double vals[6] = {-3, -0.25, 0, 1, 2.5, 300};
    int64_t dims[2] = {2, 3}, col[2] = {1, 2}, five = 5;
    for (int dt = 0; dt < XDNN_DTYPE_COUNT; dt++) {
        host_tensor a, b, r;
        host_tensor_alloc(&a, (xdnn_dtype)dt, 2, dims, col); /* transposed storage */
        tensor_scatter(&a, vals);
        if (dtype_is_float((xdnn_dtype)dt))
            dtype_store((xdnn_dtype)dt, a.data, 1, (double)NAN);
        host_tensor_alloc(&b, (xdnn_dtype)dt, 1, &five, NULL);
        tensor_scatter(&b, vals + 1);
        char path[128];
        snprintf(path, sizeof path, "%s/%s.safetensors", tmpdir, xdnn_dtype_name((xdnn_dtype)dt));
        const char *names[2] = {"zeta", "alpha"};
        const host_tensor *ts[2] = {&a, &b};
        xdnn_diags_t *d = xdnn_diags_create();
        CHECK(safetensors_write(path, 2, names, ts, d) == XDNN_OK, "write %s", path);
        CHECK(safetensors_read(path, "zeta", &r, d) == XDNN_OK, "read %s zeta", path);
        CHECK(r.dtype == (xdnn_dtype)dt && r.rank == 2 && r.dims[0] == 2 && r.dims[1] == 3, "%s: type and shape",
              path);
        /* r is row-major, a is column-major: compare logical elements bitwise. */
        size_t es = xdnn_dtype_size((xdnn_dtype)dt);
        for (int i = 0; i < 2 && r.data; i++)
            for (int j = 0; j < 3; j++) {
                int64_t idx[2] = {i, j};
                CHECK(memcmp((char *)r.data + (size_t)(i * 3 + j) * es,
                             (char *)a.data + (size_t)host_tensor_offset(&a, idx) * es, es) == 0,
                      "%s: element (%d, %d) bit exact", path, i, j);
            }
        host_tensor_free(&r);
        CHECK(safetensors_read(path, "alpha", &r, d) == XDNN_OK && r.numel == 5 && r.data &&
                  memcmp(r.data, b.data, 5 * es) == 0,
              "read %s alpha", path);
        host_tensor_free(&r);
        host_tensor_free(&a);
        host_tensor_free(&b);
        CHECK(xdnn_diags_error_count(d) == 0, "%s: no errors", path);
        xdnn_diags_destroy(d);
    }
}

static void test_writer_header(void)
{
    int64_t dims[2] = {2, 2}, one = 1;
    host_tensor a, b;
    host_tensor_alloc(&a, XDNN_BF16, 2, dims, NULL);
    host_tensor_alloc(&b, XDNN_FP8_E5M2, 1, &one, NULL);
    const double v[4] = {1, 2, 3, 4};
    tensor_scatter(&a, v);
    tensor_scatter(&b, v);
    char path[128];
    snprintf(path, sizeof path, "%s/h.safetensors", tmpdir);
    const char *names[2] = {"w\"q", "b"};
    const host_tensor *ts[2] = {&a, &b};
    xdnn_diags_t *d = xdnn_diags_create();
    CHECK(safetensors_write(path, 2, names, ts, d) == XDNN_OK, "write");
    unsigned char buf[512];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    const char *json = "{\"b\":{\"dtype\":\"F8_E5M2\",\"shape\":[1],\"data_offsets\":[0,1]},"
                       "\"w\\\"q\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[1,9]}}";
    size_t jl = strlen(json), hl = (jl + 7) / 8 * 8;
    CHECK(n == 8 + hl + 9, "file size %zu", n);
    CHECK(buf[0] == hl && buf[1] == 0 && buf[7] == 0, "header length %u, a multiple of 8", buf[0]);
    CHECK(memcmp(buf + 8, json, jl) == 0, "header text: %.*s", (int)jl, (char *)buf + 8);
    CHECK(hl == jl || buf[8 + hl - 1] == ' ', "padded with spaces");
    static const unsigned char data[9] = {0x3C, 0x80, 0x3F, 0x00, 0x40, 0x40, 0x40, 0x80, 0x40};
    CHECK(memcmp(buf + 8 + hl, data, 9) == 0, "data: e5m2 1.0 then bf16 1 2 3 4");
    const char *dup[2] = {"x", "x"};
    CHECK(safetensors_write(path, 2, dup, ts, d) == XDNN_ERR_IO, "duplicate names rejected");
    host_tensor_free(&a);
    host_tensor_free(&b);
    xdnn_diags_destroy(d);
}

/* ---------------------------------------------------------------- hand-made files */

static void test_hand_made(void)
{
    unsigned char buf[1024];
    char msg[512];
    host_tensor t;
    size_t n;

    const unsigned char u8[4] = {0, 7, 200, 255};
    n = make_st(buf, "{\"__metadata__\":{\"format\":\"pt\"},\"u\":{\"dtype\":\"U8\",\"shape\":[4],"
                     "\"data_offsets\":[0,4]}}", u8, 4);
    CHECK(parse(buf, n, NULL, &t, msg, sizeof msg) == XDNN_OK, "U8 with metadata: %s", msg);
    double g[4];
    if (t.data) {
        tensor_gather(&t, g);
        CHECK(t.dtype == XDNN_I32 && g[2] == 200 && g[3] == 255, "U8 widened to i32");
    }
    host_tensor_free(&t);

    const int16_t i16[2] = {-300, 300};
    const float sc = 2.5f;
    unsigned char both[8];
    memcpy(both, i16, 4);
    memcpy(both + 4, &sc, 4);
    n = make_st(buf, "{\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[4,8]},"
                     "\"h\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4]}, "
                     "\"z\":{\"dtype\":\"F16\",\"shape\":[0,5],\"data_offsets\":[8,8]}}   ",
                both, 8);
    CHECK(parse(buf, n, "s", &t, msg, sizeof msg) == XDNN_OK && t.rank == 0 && t.numel == 1 &&
              dtype_load(t.dtype, t.data, 0) == 2.5,
          "scalar F32: %s", msg);
    host_tensor_free(&t);
    CHECK(parse(buf, n, "h", &t, msg, sizeof msg) == XDNN_OK && t.dtype == XDNN_I32 &&
              dtype_load(t.dtype, t.data, 0) == -300,
          "I16 widened: %s", msg);
    host_tensor_free(&t);
    CHECK(parse(buf, n, "z", &t, msg, sizeof msg) == XDNN_OK && t.numel == 0 && t.dims[1] == 5, "zero-size: %s",
          msg);
    host_tensor_free(&t);
    expect_error(buf, n, NULL, "the file holds 3 tensors; choose one with key= (h, s, z)", "no key, several");
    expect_error(buf, n, "w", "no tensor 'w' in the file (it holds: h, s, z)", "unknown key");
}

/* ---------------------------------------------------------------- corrupt files */

static void test_corrupt(void)
{
    unsigned char buf[1024] = {0};
    const unsigned char z[64] = {0};
    size_t n;

    expect_error(buf, 5, NULL, "too short for the 8-byte header length", "5 bytes");
    n = make_st(buf, "{}", NULL, 0);
    buf[3] = 0x10; /* 268 MB */
    expect_error(buf, n, NULL, "exceeds the 100 MB limit", "header cap");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4);
    expect_error(buf, 30, NULL, "truncated safetensors header: header length is 54 bytes, file has 22",
                 "truncated header");
    expect_error(buf, n - 1, NULL, "tensor 'a': data_offsets [0, 4] outside the 3-byte data buffer",
                 "truncated data");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", z, 4);
    expect_error(buf, n, NULL, "safetensors header is not valid JSON", "bad JSON");
    n = make_st(buf, "[1, 2]", NULL, 0);
    expect_error(buf, n, NULL, "safetensors header is not a JSON object", "array header");
    n = make_st(buf, "{} x", NULL, 0);
    expect_error(buf, n, NULL, "unexpected text after the safetensors JSON header (byte 3)", "text after JSON");
    n = make_st(buf, "{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4);
    expect_error(buf, n, "a", "tensor 'a': missing string \"dtype\"", "missing dtype");
    n = make_st(buf, "{\"a\":{\"dtype\":\"C64\",\"shape\":[1],\"data_offsets\":[0,8]}}", z, 8);
    expect_error(buf, n, "a", "tensor 'a': unsupported dtype \"C64\"", "unknown dtype");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", z, 4);
    expect_error(buf, n, "a", "shape entries must be non-negative integers", "negative dim");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", z, 4);
    expect_error(buf, n, "a", "shape entries must be non-negative integers", "fractional dim");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", z, 4);
    expect_error(buf, n, "a", "rank 9 exceeds 8", "rank 9");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", z, 4);
    expect_error(buf, n, "a", "\"data_offsets\" must be [begin, end]", "one offset");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"offsets\":[0,4]}}", z, 4);
    expect_error(buf, n, "a", "\"data_offsets\" must be [begin, end]", "README spelling 'offsets'");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", z, 4);
    expect_error(buf, n, "a", "data_offsets [4, 0] outside", "begin > end");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", z, 4);
    expect_error(buf, n, "a", "data_offsets [0, 4] hold 4 bytes, but 2 F32 elements need 8", "size mismatch");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", z, 8);
    expect_error(buf, n, "a", "tensor 'b': data_offsets begin at 4, expected 8 (overlaps the previous tensor)",
                 "overlap");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", z, 12);
    expect_error(buf, n, "a", "tensor 'b': data_offsets begin at 8, expected 4 (gap in the data buffer)", "gap");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", z, 12);
    expect_error(buf, n, "a", "the tensors cover 4 bytes of the 12-byte data buffer", "uncovered bytes");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                     "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", z, 8);
    expect_error(buf, n, "a", "tensor 'a' appears twice in the header", "duplicate name");
    n = make_st(buf, "{\"__metadata__\":[1],\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4);
    expect_error(buf, n, "a", "\"__metadata__\" must be a JSON object", "metadata not an object");
    n = make_st(buf, "{\"a\":[1]}", NULL, 0);
    expect_error(buf, n, "a", "tensor 'a': entry is not a JSON object", "entry not an object");
    n = make_st(buf, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
                     "\"data_offsets\":[0,4]}}", z, 4);
    expect_error(buf, n, "a", "tensor 'a': shape too large", "numel overflow");
    const uint64_t big = 0x8000000000000001ull;
    n = make_st(buf, "{\"a\":{\"dtype\":\"U64\",\"shape\":[1],\"data_offsets\":[0,8]}}", &big, 8);
    expect_error(buf, n, "a", "above the i64 range", "U64 too large");
    xdnn_diags_t *d = xdnn_diags_create();
    host_tensor t;
    char path[128];
    snprintf(path, sizeof path, "%s/missing.safetensors", tmpdir);
    CHECK(safetensors_read(path, "a", &t, d) == XDNN_ERR_IO, "missing file");
    xdnn_diags_destroy(d);
}

int main(void)
{
    if (!test_tmpdir_make(tmpdir, sizeof tmpdir, "xdnn_st"))
        return 1;
    test_round_trip_every_dtype();
    test_writer_header();
    test_hand_made();
    test_corrupt();
    test_tmpdir_remove(tmpdir);
    return test_summary("test_data_safetensors");
}

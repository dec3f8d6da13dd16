/* test_data_npy.c — .npy and raw files: every dtype written and read back,
 * files laid out by hand (big-endian, Fortran order, v2/v3 headers, bf16/fp8
 * conventions, widened unsigned types), two files written by NumPy itself,
 * and corrupt or truncated files that must each give their own error. */
#include "data/data.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];

/* np_be_f4: np.save of >f4 shape (2, 3), fortran_order=False (NumPy 1.24) */
static const unsigned char np_be_f4[152] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3e, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20,
    0x33, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0xc0, 0x20, 0x00, 0x00, 0xbf, 0xc0, 0x00, 0x00, 0xbf, 0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00,
    0x3f, 0xc0, 0x00, 0x00, 0x40, 0x20, 0x00, 0x00,
};
/* np_fortran_i2: np.save of <i2 shape (2, 3), fortran_order=True (NumPy 1.24) */
static const unsigned char np_fortran_i2[140] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x69, 0x32, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x54, 0x72, 0x75, 0x65,
    0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20, 0x33,
    0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0xfd, 0xff, 0x00, 0x00, 0xfe, 0xff, 0x01, 0x00, 0xff, 0xff, 0x02, 0x00,
};

/* ---------------------------------------------------------------- helpers */

/* Assemble a .npy file: preamble for `major`, the header text padded to a
 * multiple of 16 with '\n' last (as old NumPy did), then `data`. */
static size_t make_npy(unsigned char *out, int major, const char *header, const void *data, size_t nbytes)
{
    size_t prefix = major == 1 ? 10 : 12, hl = strlen(header);
    size_t hlen = ((prefix + hl + 1 + 15) / 16) * 16 - prefix;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++)
        out[8 + i] = (unsigned char)(hlen >> (8 * i));
    memset(out + prefix, ' ', hlen);
    memcpy(out + prefix, header, hl);
    out[prefix + hlen - 1] = '\n';
    if (nbytes)
        memcpy(out + prefix + hlen, data, nbytes);
    return prefix + hlen + nbytes;
}

static bool parse_ok(const unsigned char *buf, size_t len, host_tensor *t)
{
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_status st = npy_parse("mem.npy", buf, len, t, d);
    if (st != XDNN_OK && xdnn_diags_count(d))
        fprintf(stderr, "  unexpected error: %s\n", xdnn_diags_get(d, 0)->message);
    xdnn_diags_destroy(d);
    return st == XDNN_OK;
}

static void expect_values(const host_tensor *t, xdnn_dtype dt, int rank, const int64_t *dims, const double *want,
                          const char *what)
{
    CHECK(t->dtype == dt, "%s: dtype %s, want %s", what, xdnn_dtype_name(t->dtype), xdnn_dtype_name(dt));
    CHECK(t->rank == rank, "%s: rank %d", what, t->rank);
    for (int i = 0; i < rank && i < t->rank; i++)
        CHECK(t->dims[i] == dims[i], "%s: dim %d is %lld", what, i, (long long)t->dims[i]);
    double *got = malloc(sizeof *got * (size_t)(t->numel ? t->numel : 1));
    tensor_gather(t, got);
    for (int64_t k = 0; k < t->numel; k++)
        CHECK(got[k] == want[k], "%s: element %lld is %g, want %g", what, (long long)k, got[k], want[k]);
    free(got);
}

/* The file must be rejected with an I/O error whose message contains `want`. */
static void expect_error(const unsigned char *buf, size_t len, const char *want, const char *what)
{
    host_tensor t;
    xdnn_diags_t *d = xdnn_diags_create();
    xdnn_status st = npy_parse("bad.npy", buf, len, &t, d);
    const xdnn_diag *e = xdnn_diags_get(d, 0);
    CHECK(st == XDNN_ERR_IO, "%s: status %d", what, st);
    CHECK(e && strstr(e->message, want), "%s: message '%s' lacks '%s'", what, e ? e->message : "(none)", want);
    CHECK(e && e->file && strcmp(e->file, "bad.npy") == 0, "%s: error names the file", what);
    CHECK(t.data == NULL, "%s: nothing allocated on failure", what);
    xdnn_diags_destroy(d);
}

/* ---------------------------------------------------------------- round trips */

static void test_write_read_every_dtype(void)
{
    static const double signed_vals[6] = {-2, -0.5, 0, 1, 1.5, 100};
    static const double scale_vals[6] = {0.25, 0.5, 1, 2, 4, 1024}; /* e8m0: positive powers of two */
    int64_t dims[2] = {2, 3};
    for (int dt = 0; dt < XDNN_DTYPE_COUNT; dt++) {
        host_tensor t, r;
        const double *vals = dt == XDNN_E8M0 ? scale_vals : signed_vals;
        host_tensor_alloc(&t, (xdnn_dtype)dt, 2, dims, NULL);
        tensor_scatter(&t, vals);
        char path[128];
        snprintf(path, sizeof path, "%s/rt_%s.npy", tmpdir, xdnn_dtype_name((xdnn_dtype)dt));
        xdnn_diags_t *d = xdnn_diags_create();
        CHECK(npy_write(path, &t, d) == XDNN_OK, "write %s", path);
        CHECK(npy_read(path, &r, d) == XDNN_OK, "read %s", path);
        bool narrow = dt == XDNN_BF16 || dt == XDNN_FP8_E4M3 || dt == XDNN_FP8_E5M2 || dt == XDNN_E8M0;
        xdnn_dtype want_dt = narrow ? XDNN_F32 : (xdnn_dtype)dt;
        double want[6];
        for (int k = 0; k < 6; k++)
            want[k] = dtype_round((xdnn_dtype)dt, vals[k]);
        expect_values(&r, want_dt, 2, dims, want, path);
        if (!narrow)
            CHECK(r.data && memcmp(r.data, t.data, t.bytes) == 0, "%s: bytes identical", path);
        host_tensor_free(&t);
        host_tensor_free(&r);
        xdnn_diags_destroy(d);
    }
}

static void test_writer_format(void)
{
    /* A transposed (column-major) f16 tensor: the file holds logical order. */
    int64_t dims[2] = {2, 3}, strides[2] = {1, 2};
    host_tensor t;
    host_tensor_alloc(&t, XDNN_F16, 2, dims, strides);
    const double v[6] = {0, 1, 2, 3, 4, 5};
    tensor_scatter(&t, v);
    char path[128];
    snprintf(path, sizeof path, "%s/w.npy", tmpdir);
    xdnn_diags_t *d = xdnn_diags_create();
    CHECK(npy_write(path, &t, d) == XDNN_OK, "write strided");
    FILE *f = fopen(path, "rb");
    unsigned char buf[256];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    CHECK(n == 128 + 12, "file size %zu = 128-byte preamble + 12 data bytes", n);
    const char *hdr = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }";
    CHECK(n > 10 && buf[6] == 1 && buf[7] == 0 && buf[8] == 118 && buf[9] == 0, "v1.0, HEADER_LEN 118 (as NumPy writes it)");
    CHECK(n > 10 + strlen(hdr) && memcmp(buf + 10, hdr, strlen(hdr)) == 0, "header text");
    CHECK(n >= 128 && buf[127] == '\n' && buf[126] == ' ', "header ends with spaces and a newline");
    static const unsigned char f16_0_to_5[12] = {0x00, 0x00, 0x00, 0x3c, 0x00, 0x40,
                                                 0x00, 0x42, 0x00, 0x44, 0x00, 0x45};
    CHECK(n == 140 && memcmp(buf + 128, f16_0_to_5, 12) == 0, "data in logical order, little-endian");
    host_tensor_free(&t);

    /* rank 0 and rank 1 shapes */
    host_tensor s;
    host_tensor_alloc(&s, XDNN_I32, 0, NULL, NULL);
    const double seven = 7;
    tensor_scatter(&s, &seven);
    CHECK(npy_write(path, &s, d) == XDNN_OK, "write scalar");
    f = fopen(path, "rb");
    n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    CHECK(n == 132 && strstr((char *)buf + 10, "'shape': (), }"), "scalar shape ()");
    host_tensor_free(&s);
    int64_t five = 5;
    host_tensor_alloc(&s, XDNN_BOOL, 1, &five, NULL);
    const double b5[5] = {0, 1, 0, 1, 1};
    tensor_scatter(&s, b5);
    CHECK(npy_write(path, &s, d) == XDNN_OK, "write vector");
    f = fopen(path, "rb");
    n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    buf[n < sizeof buf ? n : sizeof buf - 1] = 0;
    CHECK(strstr((char *)buf + 10, "'descr': '|b1'") && strstr((char *)buf + 10, "'shape': (5,), }"),
          "bool vector header");
    host_tensor_free(&s);
    /* a failed write leaves no file behind */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.npy", tmpdir);
    host_tensor_alloc(&s, XDNN_F32, 1, &five, NULL);
    CHECK(npy_write(bad, &s, d) == XDNN_ERR_IO, "write into a missing folder fails");
    host_tensor_free(&s);
    xdnn_diags_destroy(d);
}

static void test_numpy_files(void)
{
    host_tensor t;
    int64_t dims[2] = {2, 3};
    const double be[6] = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5};
    CHECK(parse_ok(np_be_f4, sizeof np_be_f4, &t), "NumPy big-endian f4");
    expect_values(&t, XDNN_F32, 2, dims, be, "np_be_f4");
    host_tensor_free(&t);
    const double fo[6] = {-3, -2, -1, 0, 1, 2};
    CHECK(parse_ok(np_fortran_i2, sizeof np_fortran_i2, &t), "NumPy Fortran-order i2");
    expect_values(&t, XDNN_I32, 2, dims, fo, "np_fortran_i2 (widened to i32)");
    host_tensor_free(&t);
}

static void test_hand_made(void)
{
    unsigned char buf[512];
    host_tensor t;
    size_t n;
    int64_t d23[2] = {2, 3}, d3[1] = {3};

    /* big-endian f8, i8, f2 */
    const unsigned char be_f8[16] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18};
    n = make_npy(buf, 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", be_f8, 16);
    const double w_f8[2] = {1.0, -M_PI};
    int64_t d2[1] = {2};
    CHECK(parse_ok(buf, n, &t), ">f8");
    expect_values(&t, XDNN_F64, 1, d2, w_f8, ">f8");
    host_tensor_free(&t);
    const unsigned char be_i8[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 1, 0, 0, 0, 0};
    n = make_npy(buf, 1, "{'descr': '>i8', 'fortran_order': False, 'shape': (2,), }", be_i8, 16);
    const double w_i8[2] = {-2, 4294967296.0};
    CHECK(parse_ok(buf, n, &t), ">i8");
    expect_values(&t, XDNN_I64, 1, d2, w_i8, ">i8");
    host_tensor_free(&t);
    const unsigned char be_f2[6] = {0x3c, 0x00, 0xc0, 0x00, 0x7b, 0xff};
    n = make_npy(buf, 1, "{'descr': '>f2', 'fortran_order': False, 'shape': (3,), }", be_f2, 6);
    const double w_f2[3] = {1, -2, 65504};
    CHECK(parse_ok(buf, n, &t), ">f2");
    expect_values(&t, XDNN_F16, 1, d3, w_f2, ">f2");
    host_tensor_free(&t);

    /* Fortran order f4 (column-major data), keys reordered, double quotes */
    const float colmajor[6] = {0, 3, 1, 4, 2, 5};
    n = make_npy(buf, 1, "{\"shape\": (2, 3), \"fortran_order\": True, \"descr\": \"<f4\"}", colmajor, 24);
    const double w_rows[6] = {0, 1, 2, 3, 4, 5};
    CHECK(parse_ok(buf, n, &t), "Fortran order");
    expect_values(&t, XDNN_F32, 2, d23, w_rows, "Fortran order f4");
    host_tensor_free(&t);
    /* Fortran order, rank 3, big-endian i4 */
    unsigned char f3[4 * 24];
    int64_t d234[3] = {2, 3, 4};
    double w3[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) {
                int v = 100 * i + 10 * j + k, pos = i + 2 * j + 6 * k;
                w3[(i * 3 + j) * 4 + k] = v;
                f3[4 * pos] = 0;
                f3[4 * pos + 1] = 0;
                f3[4 * pos + 2] = (unsigned char)(v >> 8);
                f3[4 * pos + 3] = (unsigned char)v;
            }
    n = make_npy(buf, 1, "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3, 4), }", f3, sizeof f3);
    CHECK(parse_ok(buf, n, &t), "Fortran rank 3");
    expect_values(&t, XDNN_I32, 3, d234, w3, "Fortran big-endian i4 rank 3");
    host_tensor_free(&t);

    /* v2.0 and v3.0 headers (u32 HEADER_LEN), v3 with UTF-8 whitespace-free text */
    const float three[3] = {1.5f, -2.5f, 3.5f};
    const double w_three[3] = {1.5, -2.5, 3.5};
    n = make_npy(buf, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", three, 12);
    CHECK(parse_ok(buf, n, &t), "v2.0");
    expect_values(&t, XDNN_F32, 1, d3, w_three, "v2.0");
    host_tensor_free(&t);
    n = make_npy(buf, 3, "{'descr':'<f4','fortran_order':False,'shape':(3,)}", three, 12);
    CHECK(parse_ok(buf, n, &t), "v3.0");
    expect_values(&t, XDNN_F32, 1, d3, w_three, "v3.0");
    host_tensor_free(&t);

    /* scalar, Python 2 long suffix, zero-size */
    const double pi = M_PI;
    n = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &pi, 8);
    CHECK(parse_ok(buf, n, &t) && t.rank == 0 && t.numel == 1, "scalar");
    expect_values(&t, XDNN_F64, 0, NULL, &pi, "scalar");
    host_tensor_free(&t);
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }", three, 12);
    CHECK(parse_ok(buf, n, &t), "3L");
    host_tensor_free(&t);
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", NULL, 0);
    CHECK(parse_ok(buf, n, &t) && t.numel == 0 && t.dims[1] == 3, "zero-size");
    host_tensor_free(&t);

    /* bf16 as <V2 (ml_dtypes), fp8 as |V1, and the non-standard names */
    const uint16_t bf[3] = {0x3F80, 0xC040, 0x7F80};
    const double w_bf[3] = {1, -3, HUGE_VAL};
    n = make_npy(buf, 1, "{'descr': '<V2', 'fortran_order': False, 'shape': (3,), }", bf, 6);
    CHECK(parse_ok(buf, n, &t), "<V2");
    expect_values(&t, XDNN_BF16, 1, d3, w_bf, "<V2 as bf16");
    host_tensor_free(&t);
    n = make_npy(buf, 1, "{'descr': 'bfloat16', 'fortran_order': False, 'shape': (3,), }", bf, 6);
    CHECK(parse_ok(buf, n, &t) && t.dtype == XDNN_BF16, "'bfloat16'");
    host_tensor_free(&t);
    const unsigned char e4[3] = {0x38, 0x7E, 0xB0};
    const double w_e4[3] = {1, 448, -0.5};
    n = make_npy(buf, 1, "{'descr': '|V1', 'fortran_order': False, 'shape': (3,), }", e4, 3);
    CHECK(parse_ok(buf, n, &t), "|V1");
    expect_values(&t, XDNN_FP8_E4M3, 1, d3, w_e4, "|V1 as fp8_e4m3");
    host_tensor_free(&t);
    const unsigned char e5[3] = {0x3C, 0x7B, 0xFC};
    const double w_e5[3] = {1, 57344, -HUGE_VAL};
    n = make_npy(buf, 1, "{'descr': 'float8_e5m2', 'fortran_order': False, 'shape': (3,), }", e5, 3);
    CHECK(parse_ok(buf, n, &t), "float8_e5m2");
    expect_values(&t, XDNN_FP8_E5M2, 1, d3, w_e5, "float8_e5m2");
    host_tensor_free(&t);

    /* unsigned and 16-bit ints widen exactly; bool */
    const unsigned char u1[3] = {0, 200, 255};
    const double w_u1[3] = {0, 200, 255};
    n = make_npy(buf, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", u1, 3);
    CHECK(parse_ok(buf, n, &t), "|u1");
    expect_values(&t, XDNN_I32, 1, d3, w_u1, "|u1 -> i32");
    host_tensor_free(&t);
    const uint16_t u2[3] = {1, 40000, 65535};
    const double w_u2[3] = {1, 40000, 65535};
    n = make_npy(buf, 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }", u2, 6);
    CHECK(parse_ok(buf, n, &t), "<u2");
    expect_values(&t, XDNN_I32, 1, d3, w_u2, "<u2 -> i32");
    host_tensor_free(&t);
    const uint32_t u4[3] = {0, 3000000000u, 4294967295u};
    const double w_u4[3] = {0, 3e9, 4294967295.0};
    n = make_npy(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }", u4, 12);
    CHECK(parse_ok(buf, n, &t), "<u4");
    expect_values(&t, XDNN_I64, 1, d3, w_u4, "<u4 -> i64");
    host_tensor_free(&t);
    const int16_t i2[3] = {-32768, 0, 32767};
    const double w_i2[3] = {-32768, 0, 32767};
    n = make_npy(buf, 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", i2, 6);
    CHECK(parse_ok(buf, n, &t), "<i2");
    expect_values(&t, XDNN_I32, 1, d3, w_i2, "<i2 -> i32");
    host_tensor_free(&t);
    const unsigned char b1[3] = {0, 1, 7};
    const double w_b1[3] = {0, 1, 1};
    n = make_npy(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b1, 3);
    CHECK(parse_ok(buf, n, &t), "|b1");
    expect_values(&t, XDNN_BOOL, 1, d3, w_b1, "|b1");
    CHECK(t.data && ((unsigned char *)t.data)[2] == 1, "bool bytes normalized to 0/1");
    host_tensor_free(&t);
    const int8_t i1[3] = {-128, 5, 127};
    const double w_i1[3] = {-128, 5, 127};
    n = make_npy(buf, 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", i1, 3);
    CHECK(parse_ok(buf, n, &t), "|i1");
    expect_values(&t, XDNN_I8, 1, d3, w_i1, "|i1");
    host_tensor_free(&t);
}

/* ---------------------------------------------------------------- corrupt files */

static void test_corrupt(void)
{
    unsigned char buf[512];
    const float six[6] = {0};
    size_t n;
    const char *good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

    n = make_npy(buf, 1, good, six, 24);
    buf[1] = 'X';
    expect_error(buf, n, "no \\x93NUMPY magic", "bad magic");
    expect_error(buf, 5, "no \\x93NUMPY magic", "5-byte file");
    n = make_npy(buf, 1, good, six, 24);
    buf[6] = 4;
    expect_error(buf, n, "unsupported .npy version 4.0", "version 4.0");
    n = make_npy(buf, 1, good, six, 24);
    buf[7] = 1;
    expect_error(buf, n, "unsupported .npy version 1.1", "version 1.1");
    n = make_npy(buf, 1, good, six, 24);
    expect_error(buf, 40, "truncated .npy header: header length is 70 bytes, file has 30", "truncated header");
    expect_error(buf, n - 5, "truncated .npy data: expected 24 bytes (6 elements of 4 bytes), file has 19",
                 "truncated data");
    n = make_npy(buf, 1, good, six, 24);
    buf[n++] = 0;
    expect_error(buf, n, "trailing bytes after .npy data: expected 24 bytes", "trailing byte");
    n = make_npy(buf, 2, good, six, 24);
    buf[11] = 0x10; /* HEADER_LEN = 256 MiB + ... */
    expect_error(buf, n, "exceeds the 1048576-byte limit", "header length cap");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, }", six, 24);
    expect_error(buf, n, "header lacks 'shape'", "missing shape");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'extra': 1}", six, 24);
    expect_error(buf, n, "unexpected key 'extra'", "unknown key");
    n = make_npy(buf, 1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}", six, 24);
    expect_error(buf, n, "duplicate key 'descr'", "duplicate key");
    n = make_npy(buf, 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", six, 24);
    expect_error(buf, n, "unsupported dtype '<c8'", "complex dtype");
    n = make_npy(buf, 1, "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", six, 24);
    expect_error(buf, n, "object arrays ('|O') are not supported", "object dtype");
    n = make_npy(buf, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", six, 24);
    expect_error(buf, n, "structured dtypes are not supported", "structured dtype");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", six, 24);
    expect_error(buf, n, "negative dimension", "negative dim");
    n = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", six, 24);
    expect_error(buf, n, "shape too large: the element count overflows", "numel overflow");
    n = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", six, 24);
    expect_error(buf, n, "dimension too large", "dim overflow");
    n = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", six, 24);
    expect_error(buf, n, "shape too large", "bytes overflow");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6), }", six, 24);
    expect_error(buf, n, "shape (n) is not a tuple", "shape without comma");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,6), }", six, 24);
    expect_error(buf, n, "more than 8 dimensions", "rank 9");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': 'no', 'shape': (6,), }", six, 24);
    expect_error(buf, n, "fortran_order must be True or False", "fortran_order string");
    n = make_npy(buf, 1, "{'descr': '<f4, 'fortran_order': False, 'shape': (6,), }", six, 24);
    expect_error(buf, n, "byte 17: unsupported dtype '<f4, '", "unbalanced quotes");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,) } x", six, 24);
    expect_error(buf, n, "unexpected text after the header dict", "text after dict");
    n = make_npy(buf, 1, "['descr', '<f4']", six, 24);
    expect_error(buf, n, "header must start with '{'", "not a dict");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), '\xc3\xa9': 1}", six, 24);
    expect_error(buf, n, "non-ASCII byte in a version 1.0 header", "non-ASCII v1");
    const uint64_t big[1] = {0x8000000000000000ull};
    n = make_npy(buf, 1, "{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }", big, 8);
    expect_error(buf, n, "above the i64 range", "u8 too big");
}

/* ---------------------------------------------------------------- raw */

static void test_raw(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/x.bin", tmpdir);
    const uint16_t f16[6] = {0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600};
    FILE *f = fopen(path, "wb");
    fwrite(f16, 2, 6, f);
    fclose(f);
    int64_t dims[2] = {2, 3};
    host_tensor t;
    xdnn_diags_t *d = xdnn_diags_create();
    CHECK(raw_read(path, XDNN_F16, 2, dims, &t, d) == XDNN_OK, "raw f16");
    const double w[6] = {1, 2, 3, 4, 5, 6};
    expect_values(&t, XDNN_F16, 2, dims, w, "raw f16");
    host_tensor_free(&t);
    CHECK(raw_read(path, XDNN_F32, 2, dims, &t, d) == XDNN_ERR_IO, "raw size mismatch");
    const xdnn_diag *e = xdnn_diags_get(d, 0);
    CHECK(e && strstr(e->message, "raw file has 12 bytes, but f32[2, 3] needs exactly 24 bytes"), "raw message: %s",
          e ? e->message : "");
    host_tensor_free(&t);
    int64_t d4[1] = {4};
    CHECK(raw_read(path, XDNN_BF16, 1, d4, &t, d) == XDNN_ERR_IO, "raw too long");
    host_tensor_free(&t);
    snprintf(path, sizeof path, "%s/missing.bin", tmpdir);
    CHECK(raw_read(path, XDNN_BF16, 1, d4, &t, d) == XDNN_ERR_IO, "raw missing file");
    xdnn_diags_destroy(d);
}

int main(void)
{
    if (!test_tmpdir_make(tmpdir, sizeof tmpdir, "xdnn_npy"))
        return 1;
    test_write_read_every_dtype();
    test_writer_format();
    test_numpy_files();
    test_hand_made();
    test_corrupt();
    test_raw();
    test_tmpdir_remove(tmpdir);
    return test_summary("test_data_npy");
}

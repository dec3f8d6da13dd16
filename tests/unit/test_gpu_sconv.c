/* test_gpu_sconv.c — the plan-time decisions of scaled_conv_im2col
 * (src/gpu/eng_scaled_conv.c), no GPU needed: what it takes and refuses (with
 * the exact reasons), and its workspace, which spells out the padded GEMM:
 * cuBLASLt's 32 MiB, then the im2col matrix A [Mp, ldk] (absent when x is A
 * as it is), the repacked weights B [Kp, ldk] (absent when w is B as it is),
 * and the int32 / f32 accumulator [Mp, Kp], each rounded up to 256 bytes.
 * Built with CUDA=1 only. */
#include <stdio.h>

#if XDNN_HAVE_CUDA
#include "gpu_fixture.h"
#include "test_util.h"

#include "gpu/engine.h"

#include <string.h>

static const gpu_device h100 = {.sm_count = 132, .cc_major = 9, .cc_minor = 0};

static size_t up256(size_t v) { return (v + 255) / 256 * 256; }

/* The engine's verdict on the graph's scaled_conv; its workspace in *ws. */
static bool verdict(const char *decls, const char *call, char *why, size_t len, size_t *ws)
{
    char text[2048];
    snprintf(text, sizeof text,
             "dnn 1;\ngraph g(seed=1) {\n%s  weight sx: f32[1] = fill(0.5);\n  weight b: f32[64] = zeros();\n"
             "  y = %s;\n  output y;\n}\n",
             decls, call);
    fixture f;
    if (!fixture_setup(&f, text))
        return false;
    const gpu_engine *e = gpu_engine_find("scaled_conv_im2col");
    const gpart *p = fixture_part_of_op(f.pl, "scaled_conv");
    bool ok = e && p && e->supports(f.pl, p, &h100, why, len);
    *ws = ok ? e->workspace(f.pl, p, &h100) : 0;
    fixture_teardown(&f);
    return ok;
}

static void test_workspace(void)
{
    const size_t lt = 32u << 20;
    char why[512];
    size_t ws;
    /* the stem: N 2, 29x23 -> 15x12 (M 360 -> 368), Kc 147 -> 160, K 64: A, B, acc */
    CHECK(verdict("  input x: i8[2, 3, 29, 23] @nhwc;\n  weight w: i8[64, 3, 7, 7] @nhwc;\n",
                  "scaled_conv(x, w, sx, sx, b, stride=2, pad=3)", why, sizeof why, &ws),
          "the stem is taken: %s", why);
    CHECK_EQ((long long)ws, (long long)(lt + up256(368 * 160) + up256(64 * 160) + up256(368 * 64 * 4)), "stem ws");
    /* 1x1, stride 1, packed NHWC, C 64, M 128, KRSC w with K 64: neither A nor B */
    CHECK(verdict("  input x: i8[2, 64, 8, 8] @nhwc;\n  weight w: i8[64, 64, 1, 1] @nhwc;\n",
                  "scaled_conv(x, w, sx, sx)", why, sizeof why, &ws),
          "1x1 is taken: %s", why);
    CHECK_EQ((long long)ws, (long long)(lt + up256(128 * 64 * 4)), "1x1 ws: x is A, w is B");
    /* the same 1x1 on NCHW x: im2col gathers it; w [K, C, 1, 1] row-major is KRSC already */
    CHECK(verdict("  input x: i8[2, 64, 8, 8];\n  weight w: i8[64, 64, 1, 1];\n", "scaled_conv(x, w, sx, sx)", why,
                  sizeof why, &ws),
          "NCHW 1x1 is taken: %s", why);
    CHECK_EQ((long long)ws, (long long)(lt + up256(128 * 64) + up256(128 * 64 * 4)), "NCHW 1x1 ws: A, no B");
    /* 3x3 NCHW w (not KRSC), K 24 -> 32, 1-D: W 37 pad 1 -> M 74 -> 80, Kc 48 */
    CHECK(verdict("  input x: i8[2, 16, 37];\n  weight w: i8[24, 16, 3];\n  weight sw: f32[24] = fill(0.25);\n",
                  "scaled_conv(x, w, sx, sw, pad=1, dtype=f32)", why, sizeof why, &ws),
          "1-D is taken: %s", why);
    CHECK_EQ((long long)ws, (long long)(lt + up256(80 * 48) + up256(32 * 48) + up256(80 * 32 * 4)), "1-D ws");
}

static void test_refusals(void)
{
    char why[512];
    size_t ws;
    CHECK(!verdict("  input x: i8[2, 16, 9, 9] @nhwc;\n  weight w: i8[16, 8, 3, 3] @nhwc;\n",
                   "scaled_conv(x, w, sx, sx, groups=2)", why, sizeof why, &ws),
          "groups 2 is refused");
    CHECK_STR(why, "scaled_conv: groups=2 (grouped and depthwise int8 convs are not one GEMM; this engine runs "
                   "groups 1 only)", "groups reason");
    CHECK(!verdict("  input x: fp8_e5m2[1, 16, 9, 9] @nhwc;\n  weight w: fp8_e5m2[16, 16, 3, 3] @nhwc;\n",
                   "scaled_conv(x, w, sx, sx)", why, sizeof why, &ws),
          "e5m2 x e5m2 is refused");
    CHECK_STR(why, "scaled_conv: fp8_e5m2 x fp8_e5m2 has no Hopper fp8 kernel (one of x, w must be fp8_e4m3)",
              "e5m2 reason");
    CHECK(!verdict("  input x: i8[1, 16384, 3, 3] @nhwc;\n  weight w: i8[16, 16384, 3, 3] @nhwc;\n",
                   "scaled_conv(x, w, sx, sx, pad=1)", why, sizeof why, &ws),
          "a window of 147456 i8 products is refused");
    CHECK_STR(why, "scaled_conv: i8 sums of C * window = 147456 products could overflow the int32 accumulator "
                   "(must be below 131072)", "overflow reason");
    /* fp8 e4m3 x e5m2 is taken */
    CHECK(verdict("  input x: fp8_e4m3[1, 16, 9, 9] @nhwc;\n  weight w: fp8_e5m2[16, 16, 3, 3] @nhwc;\n",
                  "scaled_conv(x, w, sx, sx, pad=1)", why, sizeof why, &ws),
          "e4m3 x e5m2 is taken: %s", why);
}

int main(void)
{
    test_workspace();
    test_refusals();
    return test_summary("test_gpu_sconv");
}
#else
int main(void)
{
    puts("test_gpu_sconv: built without CUDA, nothing to test");
    return 0;
}
#endif

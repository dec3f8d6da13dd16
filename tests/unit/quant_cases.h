/* quant_cases.h — the written-out quantize table: x / s stored in a dtype,
 * the byte computed by hand (formats in tests/unit/test_quant.c).  Shared by
 * the CPU unit test and the GPU differential tester
 * (tests/gpu/difftest_quant.c), which must produce the same bytes. */
#ifndef XDNN_TEST_QUANT_CASES_H
#define XDNN_TEST_QUANT_CASES_H

#include "xdnn.h"

#include <stdint.h>

/* One per-element quantize: x / s stored in dt, the byte compared. */
typedef struct qcase {
    uint32_t xbits, sbits; /* f32 bits of x and s */
    xdnn_dtype dt;
    uint8_t want;
    const char *why;
} qcase;

#define F1 0x3F800000u /* 1.0f */
static const qcase qcases[] = {
    {0x3F800000u, F1, XDNN_FP8_E4M3, 0x38, "1.0"},
    {0x80000000u, F1, XDNN_FP8_E4M3, 0x80, "-0 keeps its sign"},
    {0x43E00000u, F1, XDNN_FP8_E4M3, 0x7E, "448 = max"},
    {0x447A0000u, F1, XDNN_FP8_E4M3, 0x7E, "1000 saturates"},
    {0xCE6E6B28u, F1, XDNN_FP8_E4M3, 0xFE, "-1e9 saturates"},
    {0x7F800000u, F1, XDNN_FP8_E4M3, 0x7E, "+Inf saturates (no Inf in e4m3)"},
    {0x7FC00000u, F1, XDNN_FP8_E4M3, 0x7F, "NaN"},
    {0xFFC00000u, F1, XDNN_FP8_E4M3, 0xFF, "-NaN"},
    {0x40080000u, 0x40000000u, XDNN_FP8_E4M3, 0x38, "2.125/2 = 1.0625: tie -> even 1.0"},
    {0x3F980000u, F1, XDNN_FP8_E4M3, 0x3A, "1.1875: tie -> even 1.25"},
    {0x3F880001u, F1, XDNN_FP8_E4M3, 0x39, "1.0625 + 2^-23: above the tie"},
    {0x405a234du, 0x404d4e66u, XDNN_FP8_E4M3, 0x39, "f32 quotient is the tie 1.0625, exact is above"},
    {0x405627bfu, 0x4034575eu, XDNN_FP8_E4M3, 0x39, "f32 quotient is the tie 1.1875, exact is below"},
    {0x3A800000u, F1, XDNN_FP8_E4M3, 0x00, "2^-10 = half the smallest subnormal: tie -> 0"},
    {0x3B400000u, F1, XDNN_FP8_E4M3, 0x02, "3 * 2^-10: tie between subnormals 1 and 2 -> 2"},
    {0x3A800001u, F1, XDNN_FP8_E4M3, 0x01, "just above 2^-10 -> smallest subnormal"},
    {0x3C600000u, F1, XDNN_FP8_E4M3, 0x07, "7 * 2^-9: largest subnormal"},
    {0xBB000000u, F1, XDNN_FP8_E4M3, 0x81, "-2^-9"},
    {0x3F800000u, 0x3E000000u, XDNN_FP8_E4M3, 0x50, "1 / 2^-3 = 8"},
    {0x3F800000u, F1, XDNN_FP8_E5M2, 0x3C, "e5m2 1.0"},
    {0x3F900000u, F1, XDNN_FP8_E5M2, 0x3C, "e5m2 1.125: tie -> even 1.0"},
    {0x3FB00000u, F1, XDNN_FP8_E5M2, 0x3E, "e5m2 1.375: tie -> even 1.5"},
    {0x47600000u, F1, XDNN_FP8_E5M2, 0x7B, "e5m2 57344 = max"},
    {0x49742400u, F1, XDNN_FP8_E5M2, 0x7B, "e5m2 1e6 saturates"},
    {0x7F800000u, F1, XDNN_FP8_E5M2, 0x7C, "e5m2 +Inf stays Inf"},
    {0xFF800000u, F1, XDNN_FP8_E5M2, 0xFC, "e5m2 -Inf stays Inf"},
    {0x7FC00000u, F1, XDNN_FP8_E5M2, 0x7E, "e5m2 NaN"},
    {0x37800000u, F1, XDNN_FP8_E5M2, 0x01, "e5m2 2^-16: smallest subnormal"},
    {0x80000000u, F1, XDNN_FP8_E5M2, 0x80, "e5m2 -0"},
    {0x40200000u, F1, XDNN_I8, 0x02, "i8 2.5 -> 2 (even)"},
    {0x40600000u, F1, XDNN_I8, 0x04, "i8 3.5 -> 4 (even)"},
    {0xC0200000u, F1, XDNN_I8, 0xFE, "i8 -2.5 -> -2"},
    {0x43480000u, F1, XDNN_I8, 0x7F, "i8 200 saturates to 127"},
    {0xC47A0000u, F1, XDNN_I8, 0x80, "i8 -1000 saturates to -128"},
    {0x7FC00000u, F1, XDNN_I8, 0x00, "i8 NaN -> 0"},
    {0x40fba2e0u, 0x40494f19u, XDNN_I8, 0x03, "i8: f32 quotient is the tie 2.5, exact is above"},
    {0x40ed4b8bu, 0x400798e2u, XDNN_I8, 0x03, "i8: f32 quotient is the tie 3.5, exact is below"},
};

#undef F1

#endif

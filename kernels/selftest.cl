/*
 * selftest family: the 64-bit integer operations the integer kernels (VIF,
 * ADM) are built from, so a test can hold each dialect to Rust's u64/i64
 * arithmetic (contract: SELFTEST_INT64 in src/backend/selftest.rs; the
 * Vulkan dialect is shaders/selftest_int64.wgsl); and floats widened to
 * doubles and multiplied, held to Rust's exact conversion and product
 * (SELFTEST_WIDEN; shaders/selftest_widen.wgsl); and float products and
 * sums, subnormals included (SELFTEST_FLOAT; shaders/selftest_float.wgsl).
 */
#include "ulp.h"

KERNEL selftest_int64(GLOBAL const ulp_u32 *a, GLOBAL const ulp_i32 *b, GLOBAL ulp_u32 *out, GLOBAL ulp_u32 *zeros,
                      ulp_u32 n, ulp_u32 shift)
{
    const ulp_u32 i = GLOBAL_ID(0);
    if (i >= n)
        return;
    const ulp_u64 x = (ulp_u64)a[i];
    const ulp_u64 square = x * x;
    const ulp_i64 product = (ulp_i64)b[i] * (ulp_i64)x;
    /* An arithmetic shift of a signed value, as libvmaf's C relies on. */
    const ulp_i64 rounded = (product + ((ulp_i64)1 << (shift - 1))) >> shift;
    out[4 * i] = (ulp_u32)square;
    out[4 * i + 1] = (ulp_u32)(square >> 32);
    out[4 * i + 2] = (ulp_u32)(ulp_u64)rounded;
    out[4 * i + 3] = (ulp_u32)((ulp_u64)rounded >> 32);
    zeros[i] = ULP_CLZ64(square);
}

KERNEL selftest_widen(GLOBAL const ulp_u32 *a, GLOBAL const ulp_u32 *b, GLOBAL ulp_u32 *out, ulp_u32 n)
{
    const ulp_u32 i = GLOBAL_ID(0);
    if (i >= n)
        return;
    const double x = (double)ULP_F32_FROM(a[i]);
    const ulp_u64 xb = ULP_F64_BITS(x);
    const ulp_u64 pb = ULP_F64_BITS(x * (double)ULP_F32_FROM(b[i]));
    out[4 * i] = (ulp_u32)xb;
    out[4 * i + 1] = (ulp_u32)(xb >> 32);
    out[4 * i + 2] = (ulp_u32)pb;
    out[4 * i + 3] = (ulp_u32)(pb >> 32);
}

KERNEL selftest_float(GLOBAL const ulp_u32 *a, GLOBAL const ulp_u32 *b, GLOBAL ulp_u32 *out, ulp_u32 n)
{
    const ulp_u32 i = GLOBAL_ID(0);
    if (i >= n)
        return;
    const float x = ULP_F32_FROM(a[i]);
    const float y = ULP_F32_FROM(b[i]);
    out[2 * i] = ULP_F32_BITS(x * y);
    out[2 * i + 1] = ULP_F32_BITS(x + y);
}

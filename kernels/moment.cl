/*
 * moment family: exact 64-bit luma sums for `float_moment` (contract:
 * MOMENT_SUMS in src/features/moment.rs). libvmaf's moment.c
 * `compute_1st_moment` / `compute_2nd_moment` sum v / scaler and its f32
 * square in double; both are exact multiples of the integer sums taken
 * here, so the host recovers libvmaf's values from them exactly while
 * those double sums stay exact (below 2^53 units: every frame up to 12
 * bits, under 2^21 samples at 16; MomentGpu::finish says more).
 */
#include "ulp.h"

#define MOMENT_WG 256

/*
 * Work group gx sums samples [gx * chunk, (gx + 1) * chunk) of both luma
 * planes and writes four (lo, hi) pairs at partials[8 * gx]:
 * sum ref, sum dis, sum ref^2, sum dis^2.
 */
KERNEL moment_sums(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL ulp_u32 *partials,
                   ulp_u32 luma, ulp_u32 bytes_per_sample, ulp_u32 chunk)
{
    LOCAL ulp_u64 scratch[4 * MOMENT_WG];
    const ulp_u32 lid = LOCAL_ID(0);
    const ulp_u32 gx = GROUP_ID(0);
    const ulp_u32 begin = gx * chunk;
    const ulp_u32 end = begin + chunk < luma ? begin + chunk : luma;

    ulp_u64 r1 = 0, d1 = 0, r2 = 0, d2 = 0;
    for (ulp_u32 i = begin + lid; i < end; i += MOMENT_WG) {
        const ulp_u64 a = ulp_sample(ref, i, bytes_per_sample);
        const ulp_u64 b = ulp_sample(dis, i, bytes_per_sample);
        r1 += a;
        d1 += b;
        /* moment.c squares v / scaler in float: each square rounded to f32
         * (exact up to 12 bits, rounded at 16), so the same here. */
        r2 += (ulp_u64)(float)(ulp_u32)(a * a);
        d2 += (ulp_u64)(float)(ulp_u32)(b * b);
    }
    scratch[lid] = r1;
    scratch[MOMENT_WG + lid] = d1;
    scratch[2 * MOMENT_WG + lid] = r2;
    scratch[3 * MOMENT_WG + lid] = d2;
    BARRIER();
    for (ulp_u32 s = MOMENT_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            for (ulp_u32 k = 0; k < 4; k++)
                scratch[k * MOMENT_WG + lid] += scratch[k * MOMENT_WG + lid + s];
        }
        BARRIER();
    }
    if (lid < 4) {
        const ulp_u64 v = scratch[lid * MOMENT_WG];
        partials[8 * gx + 2 * lid] = (ulp_u32)v;
        partials[8 * gx + 2 * lid + 1] = (ulp_u32)(v >> 32);
    }
}

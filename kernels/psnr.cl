/*
 * psnr family: exact 64-bit sums of squared sample differences, shared by
 * `psnr` and `float_psnr` (contract: PSNR_SSE in src/features/psnr.rs).
 * Mirrors the SSE loops of libvmaf's integer_psnr.c `psnr` / `psnr_hbd`
 * (integers, so any summation order gives the same sum). With
 * `round_squares` (float_psnr) each square is first rounded to f32, as
 * libvmaf psnr.c's `compute_psnr` squares the float difference: exact below
 * 2^24, so only 16-bit samples differing by 4096 or more round; the rounded
 * squares are still integers.
 */
#include "ulp.h"

#define PSNR_WG 256

/*
 * Work group (gx, p) sums plane p's samples [gx * chunk, (gx + 1) * chunk),
 * clipped to the plane, and writes the sum as a (lo, hi) pair at
 * partials[2 * (p * groups_x + gx)]. Planes lie back to back: luma first,
 * then `chroma` samples per chroma plane.
 */
KERNEL psnr_sse(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL ulp_u32 *partials,
                ulp_u32 luma, ulp_u32 chroma, ulp_u32 planes, ulp_u32 bytes_per_sample, ulp_u32 chunk,
                ulp_u32 round_squares)
{
    LOCAL ulp_u64 scratch[PSNR_WG];
    const ulp_u32 lid = LOCAL_ID(0);
    const ulp_u32 gx = GROUP_ID(0);
    const ulp_u32 p = GROUP_ID(1);
    if (p >= planes)
        return; /* uniform over the group */

    const ulp_u32 n = p == 0 ? luma : chroma;
    const ulp_u32 base = p == 0 ? 0 : luma + (p - 1) * chroma;
    const ulp_u32 begin = gx * chunk;
    const ulp_u32 end = begin + chunk < n ? begin + chunk : n;

    ulp_u64 acc = 0;
    for (ulp_u32 i = begin + lid; i < end; i += PSNR_WG) {
        const ulp_u32 a = ulp_sample(ref, base + i, bytes_per_sample);
        const ulp_u32 b = ulp_sample(dis, base + i, bytes_per_sample);
        const ulp_u32 e = a > b ? a - b : b - a; /* |e| < 2^16: e * e fits in 32 bits */
        const ulp_u32 sq = e * e;
        /* Below 2^32 - 2^7, so the rounded square is a u32 too. */
        acc += round_squares ? (ulp_u64)(ulp_u32)(float)sq : (ulp_u64)sq;
    }
    scratch[lid] = acc;
    BARRIER();
    for (ulp_u32 s = PSNR_WG / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        BARRIER();
    }
    if (lid == 0) {
        const ulp_u32 at = 2 * (p * NUM_GROUPS(0) + gx);
        partials[at] = (ulp_u32)scratch[0];
        partials[at + 1] = (ulp_u32)(scratch[0] >> 32);
    }
}

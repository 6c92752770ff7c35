/*
 * seqsum family: a sequential floating-point sum reproduced exactly
 * (contract: SEQSUM in src/features/seqsum.rs, whose module doc explains
 * why it is exact; `model` there is this kernel in Rust, step for step).
 *
 * One work group per sequence of f32 terms. The accumulator is a float
 * (precision 24: psnr_hvs.c's `ret`) or a double (53: ciede.c's
 * `de00_sum`); the running sum is kept as a double either way.
 */
#include "ulp.h"

#define SEQSUM_WG 256
#define SEQSUM_SATURATED 0x4000000000000000UL
#define SEQSUM_NO_BINADE (-100000)

/* The binade exponent of a positive finite double. */
FUNC int seqsum_exponent(double v)
{
    return (int)((ULP_F64_BITS(v) >> 52) & 0x7FF) - 1023;
}

/* A term's increment of m in binade e (unit 2^(e - p + 1)): *a and, in
 * *side, -1, 0 or 1 as the remainder is below, at or above half a unit.
 * SATURATED for a negative or non-finite term (src: `increment`). */
FUNC void seqsum_increment(ulp_u32 bits, int e, int p, ulp_u64 *a, int *side)
{
    const int biased = (int)((bits >> 23) & 0xFF);
    *side = -1;
    if ((bits >> 31) != 0 || biased == 0xFF) {
        *a = bits == 0x80000000u ? 0 : SEQSUM_SATURATED;
        return;
    }
    const ulp_u32 man = biased == 0 ? (bits & 0x7FFFFF) : ((bits & 0x7FFFFF) | 0x800000);
    const int q = biased == 0 ? -149 : biased - 150;
    const int d = q - e + p - 1;
    if (man == 0) {
        *a = 0;
        return;
    }
    if (d >= 0) {
        if (d > 38) {
            *a = SEQSUM_SATURATED;
        } else {
            const ulp_u64 v = (ulp_u64)man << d;
            *a = v < SEQSUM_SATURATED ? v : SEQSUM_SATURATED;
        }
        return;
    }
    const int sh = -d;
    if (sh > 25) {
        *a = 0;
        return;
    }
    *a = (ulp_u64)(man >> sh);
    const ulp_u32 rem = man & ((1u << sh) - 1u);
    const ulp_u32 halfway = 1u << (sh - 1);
    *side = rem < halfway ? -1 : (rem == halfway ? 0 : 1);
}

FUNC ulp_u64 seqsum_sat_add(ulp_u64 x, ulp_u64 y)
{
    const ulp_u64 s = x + y;
    return s < SEQSUM_SATURATED ? s : SEQSUM_SATURATED;
}

/* terms: the f32 terms of every sequence, back to back. sums: per sequence
 * (first term, term count). out: per sequence the sum's double bits (lo, hi).
 * Group g sums sequence g, segment by segment, in batches of SEQSUM_WG
 * segments kept in local memory: (1) each work item totals one segment in
 * double, (2) work item 0 turns the running total into each segment's
 * estimated binade, (3) each work item computes its segment's increments
 * in that binade from an even and from an odd m, (4) work item 0 walks the
 * batch with the exact running sum: a segment at once where exact, else
 * term by term with the accumulator's own addition. */
KERNEL seqsum(GLOBAL const float *terms, GLOBAL const ulp_u32 *sums, GLOBAL ulp_u32 *out, ulp_u32 segment,
              ulp_u32 precision)
{
    LOCAL double totals[SEQSUM_WG];
    LOCAL int binades[SEQSUM_WG];
    LOCAL ulp_u64 d0s[SEQSUM_WG];
    LOCAL ulp_u64 d1s[SEQSUM_WG];
    const ulp_u32 g = GROUP_ID(0);
    const ulp_u32 lid = LOCAL_ID(0);
    const ulp_u32 first = sums[2 * g];
    const ulp_u32 count = sums[2 * g + 1];
    const ulp_u32 nseg = (count + segment - 1) / segment;
    const int p = (int)precision;
    const int f32_acc = precision == 24;
    const int min_exponent = f32_acc ? -126 : -1022;
    double estimate = 0.0; /* work item 0's */
    double s = 0.0;        /* work item 0's: the exact running sum */

    for (ulp_u32 base = 0; base < nseg; base += SEQSUM_WG) {
        const ulp_u32 k = base + lid;
        const ulp_u32 begin = first + k * segment;
        const ulp_u32 end = k < nseg ? (k + 1 == nseg ? first + count : begin + segment) : begin;
        /* 1. The segment's total (an estimate: any order would do). */
        if (k < nseg) {
            double total = 0.0;
            for (ulp_u32 i = begin; i < end; i++)
                total += (double)terms[i];
            totals[lid] = total;
        }
        BARRIER();
        /* 2. Each segment's estimated binade at its start. */
        const ulp_u32 batch = nseg - base < SEQSUM_WG ? nseg - base : SEQSUM_WG;
        if (lid == 0) {
            for (ulp_u32 j = 0; j < batch; j++) {
                binades[j] = estimate > 0.0 ? seqsum_exponent(estimate) : SEQSUM_NO_BINADE;
                estimate += totals[j];
            }
        }
        BARRIER();
        /* 3. Increments in that binade, from an even and from an odd m. */
        if (k < nseg) {
            const int e = binades[lid];
            ulp_u64 d0 = 0, d1 = 0, par0 = 0, par1 = 1;
            for (ulp_u32 i = begin; i < end; i++) {
                ulp_u64 a;
                int side;
                seqsum_increment(ULP_F32_BITS(terms[i]), e, p, &a, &side);
                const ulp_u64 inc0 = side < 0 ? a : (side > 0 ? a + 1 : a + ((par0 + a) & 1));
                const ulp_u64 inc1 = side < 0 ? a : (side > 0 ? a + 1 : a + ((par1 + a) & 1));
                d0 = seqsum_sat_add(d0, inc0);
                d1 = seqsum_sat_add(d1, inc1);
                par0 = (par0 + inc0) & 1;
                par1 = (par1 + inc1) & 1;
            }
            d0s[lid] = d0;
            d1s[lid] = d1;
        }
        BARRIER();
        /* 4. The walk. */
        if (lid == 0) {
            for (ulp_u32 j = 0; j < batch; j++) {
                const ulp_u32 kj = base + j;
                int fast = 0;
                if (s > 0.0 && s <= 1.7976931348623157e308) {
                    const int e = seqsum_exponent(s);
                    if (e >= min_exponent && e == binades[j]) {
                        const ulp_u64 one = (ulp_u64)1 << (p - 1);
                        const ulp_u64 m = ((ULP_F64_BITS(s) & 0xFFFFFFFFFFFFFUL) >> (53 - p)) | one;
                        const ulp_u64 m2 = m + ((m & 1) == 0 ? d0s[j] : d1s[j]);
                        if (m2 < (one << 1)) {
                            s = ULP_F64_FROM(((ulp_u64)(e + 1023) << 52) | ((m2 - one) << (53 - p)));
                            fast = 1;
                        }
                    }
                }
                if (!fast) {
                    const ulp_u32 b = first + kj * segment;
                    const ulp_u32 en = kj + 1 == nseg ? first + count : b + segment;
                    if (f32_acc) {
                        float sf = (float)s;
                        for (ulp_u32 i = b; i < en; i++)
                            sf = ADD_RN(sf, terms[i]);
                        s = (double)sf;
                    } else {
                        for (ulp_u32 i = b; i < en; i++)
                            s = s + (double)terms[i];
                    }
                }
            }
        }
        BARRIER(); /* the batch's local arrays may be refilled */
    }
    if (lid == 0) {
        const ulp_u64 bits = ULP_F64_BITS(s);
        out[2 * g] = (ulp_u32)bits;
        out[2 * g + 1] = (ulp_u32)(bits >> 32);
    }
}

/* seqsum_serial: the sum of seqsum's contract by one work item per
 * sequence adding its terms one after another in the accumulator's own
 * precision: libvmaf's loop itself (contract: SEQSUM_SERIAL). What CPU
 * devices run (PoCL), where one core walking the terms beats the parallel
 * phases. A launch adds terms [start, start + span) of every sequence to
 * the running sum in `out` (zero when start is 0). */
KERNEL seqsum_serial(GLOBAL const float *terms, GLOBAL const ulp_u32 *sums, GLOBAL ulp_u32 *out, ulp_u32 start,
                     ulp_u32 span, ulp_u32 precision)
{
    const ulp_u32 g = GROUP_ID(0);
    const ulp_u32 count = sums[2 * g + 1];
    if (start >= count && start > 0)
        return;
    const ulp_u32 first = sums[2 * g] + start;
    const ulp_u32 end = sums[2 * g] + (count < start + span ? count : start + span);
    double s = start == 0 ? 0.0 : ULP_F64_FROM(((ulp_u64)out[2 * g + 1] << 32) | out[2 * g]);
    if (precision == 24) {
        float sf = (float)s;
        for (ulp_u32 i = first; i < end; i++)
            sf = ADD_RN(sf, terms[i]);
        s = (double)sf;
    } else {
        for (ulp_u32 i = first; i < end; i++)
            s = s + (double)terms[i];
    }
    const ulp_u64 bits = ULP_F64_BITS(s);
    out[2 * g] = (ulp_u32)bits;
    out[2 * g + 1] = (ulp_u32)(bits >> 32);
}

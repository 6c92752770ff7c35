/*
 * seqsum family: a sequential floating-point sum reproduced exactly
 * (contract: SEQSUM in src/features/seqsum.rs, whose module doc explains
 * why it is exact; `model` there is this kernel in Rust, step for step).
 *
 * Two kernels, four dispatches: seqsum_segments (one work group per
 * segment: steps 1 and 3) and seqsum (one per sequence: steps 2 and 4),
 * each run as phase 0 then phase 1. The accumulator is a float
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

/* A segment's record in `segs` (SEQSUM_RECORD words): its total's double
 * bits (lo, hi), its estimated binade, a spare word, then Δ0 and Δ1 (lo,
 * hi each). */
#define SEQSUM_RECORD 8

/* Segments of sequences 0..g-1, the first record of sequence g. */
FUNC ulp_u32 seqsum_first_record(GLOBAL const ulp_u32 *sums, ulp_u32 g, ulp_u32 segment)
{
    ulp_u32 k = 0;
    for (ulp_u32 h = 0; h < g; h++)
        k += (sums[2 * h + 1] + segment - 1) / segment;
    return k;
}

/* seqsum_segments (contract: SEQSUM_SEGMENTS): the per-segment steps, one
 * work group per segment of every sequence (group k: record k). Phase 0,
 * step 1: the segment's total in double (the work items' strided partial
 * sums, then a tree: any order would do, it is only an estimate). Phase 1,
 * step 3: the segment's increments in its record's estimated binade from
 * an even and from an odd m: each work item takes a contiguous chunk for
 * both parities at its start, then a tree composes the chunks in order
 * (exact: saturating sums of non-negative increments and parities compose
 * associatively; `seqsum::summary_tree` is this in Rust). */
KERNEL seqsum_segments(GLOBAL const float *terms, GLOBAL const ulp_u32 *sums, GLOBAL ulp_u32 *segs, ulp_u32 segment,
                       ulp_u32 precision, ulp_u32 phase, ulp_u32 sequences)
{
    LOCAL double totals[SEQSUM_WG];
    LOCAL ulp_u64 d[2 * SEQSUM_WG];
    LOCAL ulp_u32 q[2 * SEQSUM_WG];
    const ulp_u32 k = GROUP_ID(0);
    const ulp_u32 lid = LOCAL_ID(0);
    /* The sequence and segment of record k. */
    ulp_u32 rest = k, g = 0, nseg = 0;
    for (; g < sequences; g++) {
        nseg = (sums[2 * g + 1] + segment - 1) / segment;
        if (rest < nseg)
            break;
        rest -= nseg;
    }
    const ulp_u32 begin = sums[2 * g] + rest * segment;
    const ulp_u32 end = rest + 1 == nseg ? sums[2 * g] + sums[2 * g + 1] : begin + segment;
    GLOBAL ulp_u32 *rec = segs + SEQSUM_RECORD * k;
    if (phase == 0) {
        double total = 0.0;
        for (ulp_u32 i = begin + lid; i < end; i += SEQSUM_WG)
            total += (double)terms[i];
        totals[lid] = total;
        BARRIER();
        for (ulp_u32 s = SEQSUM_WG / 2; s > 0; s >>= 1) {
            if (lid < s)
                totals[lid] = totals[lid] + totals[lid + s];
            BARRIER();
        }
        if (lid == 0) {
            const ulp_u64 bits = ULP_F64_BITS(totals[0]);
            rec[0] = (ulp_u32)bits;
            rec[1] = (ulp_u32)(bits >> 32);
        }
        return;
    }
    const int e = (int)rec[2];
    const int p = (int)precision;
    const ulp_u32 chunk = (end - begin + SEQSUM_WG - 1) / SEQSUM_WG;
    const ulp_u32 cb = begin + lid * chunk < end ? begin + lid * chunk : end;
    const ulp_u32 ce = cb + chunk < end ? cb + chunk : end;
    ulp_u64 d0 = 0, d1 = 0, par0 = 0, par1 = 1;
    for (ulp_u32 i = cb; i < ce; i++) {
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
    d[lid] = d0;
    d[SEQSUM_WG + lid] = d1;
    q[lid] = (ulp_u32)par0;
    q[SEQSUM_WG + lid] = (ulp_u32)par1;
    BARRIER();
    for (ulp_u32 s = 1; s < SEQSUM_WG; s <<= 1) {
        /* Chunks A = lid then B = lid + s, for an m of parity p at A's
         * start: Δ = sat(ΔA(p) + ΔB(qA(p))), parity after: qB(qA(p)). */
        if ((lid & (2 * s - 1)) == 0) {
            const ulp_u32 a = lid, b = lid + s;
            const ulp_u32 qa0 = q[a], qa1 = q[SEQSUM_WG + a];
            const ulp_u64 n0 = seqsum_sat_add(d[a], d[qa0 * SEQSUM_WG + b]);
            const ulp_u64 n1 = seqsum_sat_add(d[SEQSUM_WG + a], d[qa1 * SEQSUM_WG + b]);
            const ulp_u32 r0 = q[qa0 * SEQSUM_WG + b], r1 = q[qa1 * SEQSUM_WG + b];
            d[a] = n0;
            d[SEQSUM_WG + a] = n1;
            q[a] = r0;
            q[SEQSUM_WG + a] = r1;
        }
        BARRIER();
    }
    if (lid == 0) {
        rec[4] = (ulp_u32)d[0];
        rec[5] = (ulp_u32)(d[0] >> 32);
        rec[6] = (ulp_u32)d[SEQSUM_WG];
        rec[7] = (ulp_u32)(d[SEQSUM_WG] >> 32);
    }
}

/* s + terms[b] + ... + terms[en - 1], one after another with the
 * accumulator's own addition (a float's when f32_acc, else a double's).
 * Eight loads at a time before their additions, in order: one work item
 * alone walks these terms, and on a GPU its loads' latency, not the
 * additions, would set the pace. */
FUNC double seqsum_add_terms(GLOBAL const float *terms, ulp_u32 b, ulp_u32 en, double s, int f32_acc)
{
    float t[8];
    ulp_u32 i = b;
    if (f32_acc) {
        float sf = (float)s;
        for (; i + 8 <= en; i += 8) {
            for (int j = 0; j < 8; j++)
                t[j] = terms[i + j];
            for (int j = 0; j < 8; j++)
                sf = ADD_RN(sf, t[j]);
        }
        for (; i < en; i++)
            sf = ADD_RN(sf, terms[i]);
        return (double)sf;
    }
    for (; i + 8 <= en; i += 8) {
        for (int j = 0; j < 8; j++)
            t[j] = terms[i + j];
        for (int j = 0; j < 8; j++)
            s = s + (double)t[j];
    }
    for (; i < en; i++)
        s = s + (double)terms[i];
    return s;
}

/* seqsum (contract: SEQSUM): the per-sequence steps, one work group per
 * sequence (group g: sequence g), over its segments' records in batches of
 * SEQSUM_WG copied into local memory by all work items. Phase 0, step 2:
 * work item 0 turns the running total into each segment's estimated binade
 * at its start (written back to the records). Phase 1, step 4: work item 0
 * walks the segments with the exact running sum: a segment at once where
 * exact, else term by term with the accumulator's own addition; the sum
 * goes to `out`. */
KERNEL seqsum(GLOBAL const float *terms, GLOBAL const ulp_u32 *sums, GLOBAL ulp_u32 *segs, GLOBAL ulp_u32 *out,
              ulp_u32 segment, ulp_u32 precision, ulp_u32 phase, ulp_u32 sequences)
{
    LOCAL double totals[SEQSUM_WG];
    LOCAL int binades[SEQSUM_WG];
    LOCAL ulp_u64 d0s[SEQSUM_WG];
    LOCAL ulp_u64 d1s[SEQSUM_WG];
    const ulp_u32 g = GROUP_ID(0);
    const ulp_u32 lid = LOCAL_ID(0);
    (void)sequences;
    const ulp_u32 first = sums[2 * g];
    const ulp_u32 count = sums[2 * g + 1];
    const ulp_u32 nseg = (count + segment - 1) / segment;
    GLOBAL ulp_u32 *recs = segs + SEQSUM_RECORD * seqsum_first_record(sums, g, segment);
    const int p = (int)precision;
    const int f32_acc = precision == 24;
    const int min_exponent = f32_acc ? -126 : -1022;
    double estimate = 0.0; /* work item 0's */
    double s = 0.0;        /* work item 0's: the exact running sum */

    for (ulp_u32 base = 0; base < nseg; base += SEQSUM_WG) {
        const ulp_u32 k = base + lid;
        const ulp_u32 batch = nseg - base < SEQSUM_WG ? nseg - base : SEQSUM_WG;
        GLOBAL ulp_u32 *rec = recs + SEQSUM_RECORD * k;
        if (phase == 0) {
            if (k < nseg)
                totals[lid] = ULP_F64_FROM(((ulp_u64)rec[1] << 32) | rec[0]);
            BARRIER();
            /* 2. Each segment's estimated binade at its start. */
            if (lid == 0) {
                for (ulp_u32 j = 0; j < batch; j++) {
                    binades[j] = estimate > 0.0 ? seqsum_exponent(estimate) : SEQSUM_NO_BINADE;
                    estimate += totals[j];
                }
            }
            BARRIER();
            if (k < nseg)
                rec[2] = (ulp_u32)binades[lid];
        } else {
            if (k < nseg) {
                binades[lid] = (int)rec[2];
                d0s[lid] = ((ulp_u64)rec[5] << 32) | rec[4];
                d1s[lid] = ((ulp_u64)rec[7] << 32) | rec[6];
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
                        s = seqsum_add_terms(terms, b, en, s, f32_acc);
                    }
                }
            }
        }
        BARRIER(); /* the batch's local arrays may be refilled */
    }
    if (phase == 1 && lid == 0) {
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

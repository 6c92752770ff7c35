/*
 * seqsum family: a sequential floating-point sum reproduced exactly
 * (contract: SEQSUM in src/features/seqsum.rs, whose module doc explains
 * why it is exact; `model` there is this kernel in Rust, step for step
 * but for the order in which step 2 adds the totals).
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

/* Terms a segment holds at most (SEGMENT in src/features/seqsum.rs): the
 * size of seqsum's staging of a slow segment in local memory. */
#define SEQSUM_SEGMENT 1024

/* The exact running sum s, where the fast path may take it: its binade e
 * and integer significand m (2^(p-1) <= m < 2^p), and 1; else (zero,
 * negative, non-finite, below the accumulator's normal range) 0. */
FUNC int seqsum_decompose(double s, int p, int min_exponent, int *e, ulp_u64 *m)
{
    if (!(s > 0.0) || !(s <= 1.7976931348623157e308))
        return 0;
    *e = seqsum_exponent(s);
    if (*e < min_exponent)
        return 0;
    *m = ((ULP_F64_BITS(s) & 0xFFFFFFFFFFFFFUL) >> (53 - p)) | ((ulp_u64)1 << (p - 1));
    return 1;
}

/* m * 2^(e - p + 1), exactly (2^(p-1) <= m < 2^p). */
FUNC double seqsum_compose(int e, ulp_u64 m, int p)
{
    return ULP_F64_FROM(((ulp_u64)(e + 1023) << 52) | ((m - ((ulp_u64)1 << (p - 1))) << (53 - p)));
}

/* Phase 1's scan, before the walk (seqsum's local arrays passed in):
 * for every segment j of the batch, the increments of segments j .. r - 1
 * composed (r: the last segment of j's run, the segments around j with
 * its estimated binade), into jump0 (from an even m), jump1 (from an odd
 * m) and span (bits 0-15: the segments covered, counting r; bits 16, 17:
 * the parity after them from either start). Each work item starts from
 * its own segment (an identity where it is its run's last) and, at stride
 * st = 1, 2, 4, ..., appends what work item j + st holds when its own part
 * reaches exactly to j + st and j + st is in the same run: a suffix scan
 * that stops at run ends. Exact: saturating sums of non-negative
 * increments and parities compose associatively (seqsum::summary_tree). */
FUNC void seqsum_scan_runs(ulp_u32 lid, ulp_u32 batch, LOCAL_PTR const int *binades, LOCAL_PTR const ulp_u64 *d0s,
                            LOCAL_PTR const ulp_u64 *d1s, LOCAL_PTR ulp_u64 *jump0, LOCAL_PTR ulp_u64 *jump1,
                            LOCAL_PTR ulp_u32 *span)
{
    ulp_u64 x0 = 0, x1 = 0;
    ulp_u32 q0 = 0, q1 = 1, cover = 1;
    if (lid + 1 < batch && binades[lid + 1] == binades[lid]) {
        x0 = d0s[lid];
        x1 = d1s[lid];
        q0 = (ulp_u32)(x0 & 1);
        q1 = (ulp_u32)((1 + x1) & 1);
    }
    jump0[lid] = x0;
    jump1[lid] = x1;
    span[lid] = cover | (q0 << 16) | (q1 << 17);
    BARRIER();
    for (ulp_u32 st = 1; st < SEQSUM_WG; st <<= 1) {
        const ulp_u32 b = lid + st;
        int grow = 0;
        ulp_u64 y0 = 0, y1 = 0;
        ulp_u32 sb = 0;
        if (cover == st && b < batch && binades[b] == binades[lid]) {
            grow = 1;
            sb = span[b];
            y0 = q0 == 1 ? jump1[b] : jump0[b];
            y1 = q1 == 1 ? jump1[b] : jump0[b];
        }
        BARRIER();
        if (grow) {
            const ulp_u32 r0 = (sb >> (16 + q0)) & 1, r1 = (sb >> (16 + q1)) & 1;
            x0 = seqsum_sat_add(x0, y0);
            x1 = seqsum_sat_add(x1, y1);
            q0 = r0;
            q1 = r1;
            cover += sb & 0xFFFF;
            jump0[lid] = x0;
            jump1[lid] = x1;
            span[lid] = cover | (q0 << 16) | (q1 << 17);
        }
        BARRIER();
    }
}

/* seqsum (contract: SEQSUM): the per-sequence steps, one work group per
 * sequence (group g: sequence g), over its segments' records in batches of
 * SEQSUM_WG copied into local memory by all work items. Phase 0, step 2:
 * each segment's estimated binade at its start, from a scan of the segment
 * totals (Hillis-Steele, in tree order: it is only an estimate), written
 * back to the records. Phase 1, step 4: work item 0 walks the segments
 * with the exact running sum: many segments at once where exact, else term
 * by term with the accumulator's own addition; the sum goes to `out`.
 *
 * Both phases used to be one work item's loop over the ~2,000 segments of
 * a 1080p frame (~180 µs a dispatch in Vulkan on an H200). The walk now
 * keeps the sum as (e, m) while segments are fast, and a run of segments
 * with the sum's binade is one add of its composed increments
 * (seqsum_scan_runs), the run's last segment another. At a slow segment the
 * whole group copies its terms into local memory, one coalesced read, and
 * work item 0 adds them from there. */
KERNEL seqsum(GLOBAL const float *terms, GLOBAL const ulp_u32 *sums, GLOBAL ulp_u32 *segs, GLOBAL ulp_u32 *out,
              ulp_u32 segment, ulp_u32 precision, ulp_u32 phase, ulp_u32 sequences)
{
    LOCAL int binades[SEQSUM_WG];
    LOCAL ulp_u64 d0s[SEQSUM_WG];
    LOCAL ulp_u64 d1s[SEQSUM_WG];
    /* Phase 0: the totals' scan (jump0 as doubles). Phase 1: see
     * seqsum_scan_runs. */
    LOCAL ulp_u64 jump0[SEQSUM_WG];
    LOCAL ulp_u64 jump1[SEQSUM_WG];
    LOCAL ulp_u32 span[SEQSUM_WG];
    LOCAL float chunk[SEQSUM_SEGMENT];
    LOCAL ulp_u32 slow_at;
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
    const ulp_u64 two_p = (ulp_u64)1 << p;
    double carry = 0.0; /* phase 0: the totals of the batches before */
    /* Work item 0's: the exact running sum, as s or, where have_m, as
     * m * 2^(e - p + 1). */
    double s = 0.0;
    int have_m = 0, e = 0;
    ulp_u64 m = 0;

    for (ulp_u32 base = 0; base < nseg; base += SEQSUM_WG) {
        const ulp_u32 k = base + lid;
        const ulp_u32 batch = nseg - base < SEQSUM_WG ? nseg - base : SEQSUM_WG;
        GLOBAL ulp_u32 *rec = recs + SEQSUM_RECORD * k;
        if (phase == 0) {
            /* 2. Each segment's estimated binade at its start. */
            double v = k < nseg ? ULP_F64_FROM(((ulp_u64)rec[1] << 32) | rec[0]) : 0.0;
            jump0[lid] = ULP_F64_BITS(v);
            BARRIER();
            for (ulp_u32 st = 1; st < SEQSUM_WG; st <<= 1) {
                const double left = lid >= st ? ULP_F64_FROM(jump0[lid - st]) : 0.0;
                BARRIER();
                v = v + left;
                jump0[lid] = ULP_F64_BITS(v);
                BARRIER();
            }
            const double before = lid > 0 ? carry + ULP_F64_FROM(jump0[lid - 1]) : carry;
            if (k < nseg)
                rec[2] = (ulp_u32)(before > 0.0 ? seqsum_exponent(before) : SEQSUM_NO_BINADE);
            carry = carry + ULP_F64_FROM(jump0[SEQSUM_WG - 1]);
        } else {
            if (k < nseg) {
                binades[lid] = (int)rec[2];
                d0s[lid] = ((ulp_u64)rec[5] << 32) | rec[4];
                d1s[lid] = ((ulp_u64)rec[7] << 32) | rec[6];
            }
            BARRIER();
            seqsum_scan_runs(lid, batch, binades, d0s, d1s, jump0, jump1, span);
            /* 4. The walk: fast runs and segments up to the next slow
             * segment, which the group stages and work item 0 adds; until
             * the batch ends. */
            ulp_u32 j = 0; /* work item 0's */
            for (;;) {
                if (lid == 0) {
                    while (j < batch && have_m && binades[j] == e) {
                        /* The run from j, but for its last segment, at once. */
                        const ulp_u32 last = j + (span[j] & 0xFFFF) - 1;
                        if (last > j) {
                            const ulp_u64 mj = m + ((m & 1) == 0 ? jump0[j] : jump1[j]);
                            if (mj < two_p) {
                                m = mj;
                                j = last;
                            }
                        }
                        const ulp_u64 m2 = m + ((m & 1) == 0 ? d0s[j] : d1s[j]);
                        if (m2 >= two_p)
                            break;
                        m = m2;
                        j++;
                    }
                    slow_at = j;
                }
                BARRIER();
                const ulp_u32 js = slow_at;
                if (js >= batch)
                    break; /* uniform: every work item read the same */
                const ulp_u32 kj = base + js;
                const ulp_u32 b = first + kj * segment;
                const ulp_u32 n = (kj + 1 == nseg ? first + count : b + segment) - b;
                for (ulp_u32 i = lid; i < n; i += SEQSUM_WG)
                    chunk[i] = terms[b + i];
                BARRIER();
                if (lid == 0) {
                    if (have_m)
                        s = seqsum_compose(e, m, p);
                    /* In order, one addition after another; eight loads
                     * before their additions. */
                    ulp_u32 i = 0;
                    if (f32_acc) {
                        float sf = (float)s;
                        for (; i + 8 <= n; i += 8) {
                            float t[8];
                            for (int q = 0; q < 8; q++)
                                t[q] = chunk[i + q];
                            for (int q = 0; q < 8; q++)
                                sf = ADD_RN(sf, t[q]);
                        }
                        for (; i < n; i++)
                            sf = ADD_RN(sf, chunk[i]);
                        s = (double)sf;
                    } else {
                        for (; i + 8 <= n; i += 8) {
                            float t[8];
                            for (int q = 0; q < 8; q++)
                                t[q] = chunk[i + q];
                            for (int q = 0; q < 8; q++)
                                s = s + (double)t[q];
                        }
                        for (; i < n; i++)
                            s = s + (double)chunk[i];
                    }
                    have_m = seqsum_decompose(s, p, min_exponent, &e, &m);
                    j = js + 1;
                }
                BARRIER(); /* chunk and slow_at are written again */
            }
        }
        BARRIER(); /* the batch's local arrays may be refilled */
    }
    if (phase == 1 && lid == 0) {
        if (have_m)
            s = seqsum_compose(e, m, p);
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

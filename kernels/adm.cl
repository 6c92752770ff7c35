/*
 * adm family: libvmaf's integer ADM (integer_adm.c) in four kernels per
 * scale (contracts: ADM_DWT0, ADM_DWT, ADM_DECOUPLE and ADM_CM in
 * src/features/adm/gpu.rs; the CPU reference is src/features/adm/integer/).
 * Every value is an integer, computed with libvmaf's widths: the 16-bit
 * stores of scale 0 wrap as C's int16_t conversions do (adm_i16), 32-bit
 * sums that may overflow run in unsigned arithmetic (wrapping, where C's
 * signed overflow would be undefined), products that libvmaf widens are
 * 64-bit. The only floating point is the 1-degree angle test, done in
 * float and double exactly as integer_adm.c does it.
 */
#include "ulp.h"

/* adm_cm's work group: one group per band row. */
#define ADM_WG 64

/* dwt2_src_indices_filt: -1 reads 1, n reads n - 1, n + 1 reads n - 2. */
FUNC int adm_mirror(int x, int n)
{
    return x < 0 ? -x : (x >= n ? 2 * n - x - 1 : x);
}

/* The masking threshold's neighbours (ADM_CM_THRESH_S_*): -1 reads 1, n
 * reads n - 1. */
FUNC int adm_nb(int x, int n)
{
    return x < 0 ? 1 : (x >= n ? n - 1 : x);
}

/* A store to int16_t: the low 16 bits, sign-extended. */
FUNC ulp_i32 adm_i16(ulp_i32 x)
{
    return (ulp_i32)((ulp_u32)x << 16) >> 16;
}

/* |x| as int32_t abs() gives it (INT_MIN stays INT_MIN). */
FUNC ulp_i32 adm_abs(ulp_i32 x)
{
    return x < 0 ? (ulp_i32)(0u - (ulp_u32)x) : x;
}

/* The db2 filters in Q15 (dwt2_db2_coeffs_lo / _hi). */
FUNC ulp_i32 adm_lo(int k)
{
    return k == 0 ? 15826 : (k == 1 ? 27411 : (k == 2 ? 7345 : -4240));
}

FUNC ulp_i32 adm_hi(int k)
{
    return k == 0 ? -4240 : (k == 1 ? -7345 : (k == 2 ? 27411 : -15826));
}

/* ---------------------------------------------------------------------
 * adm_dwt0: scale 0 (adm_dwt2_8 / adm_dwt2_16, or their _lo twins). Work
 * item (j, i) of image z (0 reference, 1 distorted) computes output (i, j)
 * of the four bands from the 4x4 mirrored samples around it: the vertical
 * pass at the four columns the horizontal pass reads, each rounded into
 * int16 as libvmaf's tmplo/tmphi, then the horizontal pass.
 * --------------------------------------------------------------------- */
KERNEL adm_dwt0(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL ulp_i32 *bands, ulp_u32 width,
                ulp_u32 height, ulp_u32 bytes_per_sample, ulp_u32 bpc, ulp_u32 out_base, ulp_u32 lo_only)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    const int j = (int)GLOBAL_ID(0), i = (int)GROUP_ID(1), img = (int)GROUP_ID(2);
    if (j >= bw)
        return;
    GLOBAL const ulp_u8 *src = img == 0 ? ref : dis;
    int rows[4], cols[4];
    for (int k = 0; k < 4; k++) {
        rows[k] = adm_mirror(2 * i - 1 + k, h) * w;
        cols[k] = adm_mirror(2 * j - 1 + k, w);
    }
    const ulp_i32 add = (ulp_i32)1 << (bpc - 1);
    /* dwt2_db2_coeffs_lo_sum * add_shift_VP: centres the samples. */
    const ulp_u32 centre = 46342u * (ulp_u32)add;
    ulp_i32 lo[4], hi[4];
    for (int c = 0; c < 4; c++) {
        ulp_u32 acc_lo = 0, acc_hi = 0;
        for (int k = 0; k < 4; k++) {
            const ulp_u32 s = ulp_sample(src, (ulp_u32)(rows[k] + cols[c]), bytes_per_sample);
            acc_lo += (ulp_u32)adm_lo(k) * s;
            acc_hi += (ulp_u32)adm_hi(k) * s;
        }
        lo[c] = adm_i16(((ulp_i32)(acc_lo - centre) + add) >> bpc);
        hi[c] = adm_i16(((ulp_i32)acc_hi + add) >> bpc);
    }
    ulp_i32 a = 32768, v = 32768, hh = 32768, d = 32768;
    for (int k = 0; k < 4; k++) {
        a += adm_lo(k) * lo[k];
        v += adm_hi(k) * lo[k];
        hh += adm_lo(k) * hi[k];
        d += adm_hi(k) * hi[k];
    }
    const ulp_u32 plane = (ulp_u32)(bw * bh);
    const ulp_u32 o = out_base + (ulp_u32)img * 4u * plane + (ulp_u32)(i * bw + j);
    bands[o] = adm_i16(a >> 16);
    if (lo_only)
        return;
    bands[o + plane] = adm_i16(hh >> 16);
    bands[o + 2u * plane] = adm_i16(v >> 16);
    bands[o + 3u * plane] = adm_i16(d >> 16);
}

/* ---------------------------------------------------------------------
 * adm_dwt: scales 1-3 (adm_dwt2_s123_combined). The input is the previous
 * scale's approximation band of image z (at in_base + z * 4 * in_plane),
 * width x height; sums in int64, each pass rounded by the scale's shift.
 * --------------------------------------------------------------------- */
KERNEL adm_dwt(GLOBAL ulp_i32 *bands, ulp_u32 width, ulp_u32 height, ulp_u32 in_base, ulp_u32 in_plane,
               ulp_u32 out_base, ulp_u32 scale)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    const int j = (int)GLOBAL_ID(0), i = (int)GROUP_ID(1), img = (int)GROUP_ID(2);
    if (j >= bw)
        return;
    const ulp_i64 add_vp = scale == 1 ? 0 : 32768;
    const ulp_u32 shift_vp = scale == 1 ? 0 : 16;
    const ulp_i64 add_hp = scale == 2 ? 32768 : 16384;
    const ulp_u32 shift_hp = scale == 2 ? 16 : 15;
    const ulp_u32 src = in_base + (ulp_u32)img * 4u * in_plane;
    int rows[4], cols[4];
    for (int k = 0; k < 4; k++) {
        rows[k] = adm_mirror(2 * i - 1 + k, h) * w;
        cols[k] = adm_mirror(2 * j - 1 + k, w);
    }
    ulp_i32 lo[4], hi[4];
    for (int c = 0; c < 4; c++) {
        ulp_i64 acc_lo = 0, acc_hi = 0;
        for (int k = 0; k < 4; k++) {
            const ulp_i64 s = bands[src + (ulp_u32)(rows[k] + cols[c])];
            acc_lo += (ulp_i64)adm_lo(k) * s;
            acc_hi += (ulp_i64)adm_hi(k) * s;
        }
        lo[c] = (ulp_i32)((acc_lo + add_vp) >> shift_vp);
        hi[c] = (ulp_i32)((acc_hi + add_vp) >> shift_vp);
    }
    ulp_i64 a = add_hp, v = add_hp, hh = add_hp, d = add_hp;
    for (int k = 0; k < 4; k++) {
        a += (ulp_i64)adm_lo(k) * lo[k];
        v += (ulp_i64)adm_hi(k) * lo[k];
        hh += (ulp_i64)adm_lo(k) * hi[k];
        d += (ulp_i64)adm_hi(k) * hi[k];
    }
    const ulp_u32 plane = (ulp_u32)(bw * bh);
    const ulp_u32 o = out_base + (ulp_u32)img * 4u * plane + (ulp_u32)(i * bw + j);
    bands[o] = (ulp_i32)(a >> shift_hp);
    bands[o + plane] = (ulp_i32)(hh >> shift_hp);
    bands[o + 2u * plane] = (ulp_i32)(v >> shift_hp);
    bands[o + 3u * plane] = (ulp_i32)(d >> shift_hp);
}

/* The angle test of adm_decouple/_s123: the int64 products converted to
 * float, divided by 4096 and compared in double. */
FUNC int adm_angle(ulp_i64 dp, ulp_i64 om, ulp_i64 tm, float cos1)
{
    const double d = (double)(float)dp / 4096.0;
    const double o = (double)(float)om / 4096.0;
    const double t = (double)(float)tm / 4096.0;
    return d >= 0.0 && d * d >= (double)cos1 * o * t;
}

/* The enhancement gain: where the angles agree and k > 0, MIN (o > 0) or
 * MAX (o < 0) of rst * limit and t, in double, truncated back. */
FUNC ulp_i32 adm_gain(ulp_i32 rst, ulp_i64 k, ulp_i32 o, ulp_i32 t, int angle, double limit)
{
    if (angle && k > 0 && o != 0) {
        const double x = (double)rst * limit;
        const double tt = (double)t;
        const double v = o > 0 ? (x < tt ? x : tt) : (x > tt ? x : tt);
        return (ulp_i32)v;
    }
    return rst;
}

/* div_lookup[32768 + u]: 2^30 / u, 1 <= u <= 32768. */
FUNC ulp_i64 adm_recip(ulp_u32 u)
{
    return (ulp_i64)(1073741824 / (ulp_i32)u);
}

/* ---------------------------------------------------------------------
 * adm_decouple: one work item per pixel (j, i) of the decouple rectangle
 * (left + x, top + y) of one scale's bands (at `base`: reference a, h, v,
 * d, then distorted a, h, v, d, each plane bw * bh). Decouples the three
 * detail bands (adm_decouple at scale 0, adm_decouple_s123 after), then
 * weights the additive and the restored triples by the CSF (adm_csf /
 * i4_adm_csf) and keeps what the masking reads. Writes ten planes of
 * `work`: r h, v, d; a h, v, d; then for the CSF of a and of r, F (the sum
 * of the three flt) and T (the sum of the centre terms minus F).
 * params[0] is adm_enhn_gain_limit.
 * --------------------------------------------------------------------- */
KERNEL adm_decouple(GLOBAL const ulp_i32 *bands, GLOBAL ulp_i32 *work, GLOBAL const double *params, ulp_u32 bw,
                    ulp_u32 bh, ulp_u32 base, ulp_u32 top, ulp_u32 left, ulp_u32 right, ulp_u32 scale,
                    ulp_u32 rf0, ulp_u32 rf1, ulp_u32 rf2, float cos1)
{
    const ulp_u32 j = left + GLOBAL_ID(0), i = top + GROUP_ID(1);
    if (j >= right)
        return;
    const ulp_u32 plane = bw * bh, k = i * bw + j;
    const double limit = params[0];
    const ulp_u32 rf[3] = {rf0, rf1, rf2};
    ulp_i32 o[3], t[3];
    for (int b = 0; b < 3; b++) {
        o[b] = bands[base + (1u + (ulp_u32)b) * plane + k];
        t[b] = bands[base + (5u + (ulp_u32)b) * plane + k];
    }
    const ulp_i64 dp = (ulp_i64)o[0] * t[0] + (ulp_i64)o[1] * t[1];
    const ulp_i64 om = (ulp_i64)o[0] * o[0] + (ulp_i64)o[1] * o[1];
    const ulp_i64 tm = (ulp_i64)t[0] * t[0] + (ulp_i64)t[1] * t[1];
    const int angle = adm_angle(dp, om, tm, cos1);
    ulp_i32 r[3], a[3];
    for (int b = 0; b < 3; b++) {
        ulp_i64 tmp = 32768;
        if (scale == 0) {
            if (o[b] != 0) {
                const ulp_i64 recip = adm_recip((ulp_u32)adm_abs(o[b])) * (o[b] < 0 ? -1 : 1);
                tmp = (ulp_i32)((recip * t[b] + 16384) >> 15);
            }
            const ulp_i64 kk = tmp < 0 ? 0 : (tmp > 32768 ? 32768 : tmp);
            const ulp_i32 rst = adm_i16((ulp_i32)((kk * o[b] + 16384) >> 15));
            r[b] = adm_i16(adm_gain(rst, kk, o[b], t[b], angle, limit));
            a[b] = adm_i16(t[b] - r[b]);
        } else {
            if (o[b] != 0) {
                const ulp_u32 m = (ulp_u32)adm_abs(o[b]);
                ulp_u32 msb = m, shift = 0;
                if (m >= 32768u) {
                    /* get_best15_from32 */
                    shift = 17u - (ULP_CLZ64((ulp_u64)m) - 32u);
                    msb = (m + (1u << (shift - 1u))) >> shift;
                }
                const ulp_i64 sign = o[b] < 0 ? -1 : 1;
                tmp = ((adm_recip(msb) * t[b]) * sign + ((ulp_i64)1 << (14u + shift))) >> (15u + shift);
            }
            const ulp_i64 kk = tmp < 0 ? 0 : (tmp > 32768 ? 32768 : tmp);
            const ulp_i32 rst = (ulp_i32)((kk * o[b] + 16384) >> 15);
            r[b] = adm_gain(rst, kk, o[b], t[b], angle, limit);
            a[b] = (ulp_i32)((ulp_u32)t[b] - (ulp_u32)r[b]);
        }
    }
    /* The CSF of a (masks r: the numerator) and of r (masks a: AIM). */
    ulp_u32 f[2] = {0, 0}, c[2] = {0, 0};
    for (int side = 0; side < 2; side++) {
        for (int b = 0; b < 3; b++) {
            const ulp_i32 v = side == 0 ? a[b] : r[b];
            ulp_i32 fl, ce;
            if (scale == 0) {
                const ulp_i32 add = b == 2 ? 65535 : 16384;
                const ulp_u32 shift = b == 2 ? 17u : 15u;
                const ulp_i32 csf = adm_i16(((ulp_i32)rf[b] * v + add) >> shift);
                const ulp_i32 m = adm_abs(csf);
                fl = adm_i16((4369 * m + 2048) >> 12);
                ce = adm_i16((8738 * m + 2048) >> 12);
            } else {
                const ulp_i32 csf = (ulp_i32)(((ulp_i64)rf[b] * v + ((ulp_i64)1 << 27)) >> 28);
                /* libvmaf's rounding term is 1u << 31 stored in an int32: -2^31. */
                const ulp_i64 m = adm_abs(csf);
                fl = (ulp_i32)((143165577 * m - ((ulp_i64)1 << 31)) >> 32);
                ce = (ulp_i32)((286331153 * m - ((ulp_i64)1 << 31)) >> 32);
            }
            f[side] += (ulp_u32)fl;
            c[side] += (ulp_u32)ce;
        }
    }
    for (int b = 0; b < 3; b++) {
        work[(ulp_u32)b * plane + k] = r[b];
        work[(3u + (ulp_u32)b) * plane + k] = a[b];
    }
    work[6u * plane + k] = (ulp_i32)f[0];
    work[7u * plane + k] = (ulp_i32)(c[0] - f[0]);
    work[8u * plane + k] = (ulp_i32)f[1];
    work[9u * plane + k] = (ulp_i32)(c[1] - f[1]);
}

/* The masking threshold at (i, j): the 3x3 sum of plane F (mirrored
 * neighbours) plus plane T at the centre; integer sums, any order. */
FUNC ulp_i32 adm_threshold(GLOBAL const ulp_i32 *F, GLOBAL const ulp_i32 *T, const int *rows, int j, int bw)
{
    const int c0 = adm_nb(j - 1, bw), c2 = adm_nb(j + 1, bw);
    ulp_u32 s = (ulp_u32)T[rows[1] + j];
    for (int k = 0; k < 3; k++)
        s += (ulp_u32)F[rows[k] + c0] + (ulp_u32)F[rows[k] + j] + (ulp_u32)F[rows[k] + c2];
    return (ulp_i32)s;
}

/* ADM_CM_ACCUM_ROUND (scale 0): x is the band value times its Q21/Q23
 * factor, the threshold scaled up by `sub`. */
FUNC ulp_i64 adm_cube0(ulp_i32 x, ulp_i32 thr, ulp_u32 sub, ulp_u32 sq_shift, ulp_u32 cub_shift)
{
    ulp_i32 y = (ulp_i32)((ulp_u32)adm_abs(x) - ((ulp_u32)thr << sub));
    y = y < 0 ? 0 : y;
    const ulp_i32 sq = (ulp_i32)(((ulp_i64)y * y + ((ulp_i64)1 << (sq_shift - 1u))) >> sq_shift);
    const ulp_i64 add = cub_shift > 0 ? ((ulp_i64)1 << (cub_shift - 1u)) : 0;
    return ((ulp_i64)sq * y + add) >> cub_shift;
}

/* I4_ADM_CM_ACCUM_ROUND (scales 1-3), x first weighted and rounded to Q16. */
FUNC ulp_i64 adm_cube123(ulp_i32 v, ulp_u32 rf, ulp_i32 thr, ulp_u32 cub_shift)
{
    const ulp_i32 x = (ulp_i32)(((ulp_i64)v * rf + ((ulp_i64)1 << 27)) >> 28);
    ulp_i32 y = (ulp_i32)((ulp_u32)adm_abs(x) - (ulp_u32)thr);
    y = y < 0 ? 0 : y;
    const ulp_i32 sq = (ulp_i32)(((ulp_i64)y * y + ((ulp_i64)1 << 29)) >> 30);
    const ulp_i64 add = cub_shift > 0 ? ((ulp_i64)1 << (cub_shift - 1u)) : 0;
    return ((ulp_i64)sq * y + add) >> cub_shift;
}

/* ---------------------------------------------------------------------
 * adm_cm: one work group of ADM_WG per row `top + g` of one scale's score
 * rectangle. Its work items take columns left + lid, left + lid + ADM_WG,
 * ... < right, each adding the masked cubes of the restored bands (num,
 * thresholds from the CSF of a), of the additive bands (aim, thresholds
 * from the CSF of r) and the reference's cubes (den), nine 64-bit sums;
 * after one barrier work item 0 adds the group's partials (integers: any
 * order) and writes the row's nine sums as (lo, hi) words at
 * rows[2 * (9 * (rows_base + g) + k)].
 * --------------------------------------------------------------------- */
KERNEL adm_cm(GLOBAL const ulp_i32 *bands, GLOBAL const ulp_i32 *work, GLOBAL ulp_u32 *rows, ulp_u32 bw,
              ulp_u32 bh, ulp_u32 base, ulp_u32 top, ulp_u32 left, ulp_u32 right, ulp_u32 scale, ulp_u32 rf0,
              ulp_u32 rf1, ulp_u32 rf2, ulp_u32 cub0, ulp_u32 cub1, ulp_u32 cub2, ulp_u32 den_cub,
              ulp_u32 rows_base)
{
    LOCAL ulp_u64 part[9 * ADM_WG];
    const ulp_u32 lid = LOCAL_ID(0), g = GROUP_ID(0);
    const int i = (int)(top + g), w = (int)bw;
    const ulp_u32 plane = bw * bh;
    const int rws[3] = {adm_nb(i - 1, (int)bh) * w, i * w, adm_nb(i + 1, (int)bh) * w};
    const ulp_u32 rf[3] = {rf0, rf1, rf2};
    const ulp_u32 cub[3] = {cub0, cub1, cub2};
    /* adm_csf_den_s123's square shift per scale; its rounding term is
     * 1 << shift (not half of it). */
    const ulp_u32 sq = scale == 2 ? 30u : 31u;
    const ulp_u64 den_add = den_cub > 0 ? ((ulp_u64)1 << (den_cub - 1u)) : 0;
    ulp_u64 s[9];
    for (int k = 0; k < 9; k++)
        s[k] = 0;
    for (ulp_u32 j = left + lid; j < right; j += ADM_WG) {
        const ulp_u32 at = (ulp_u32)i * bw + j;
        const ulp_i32 thr_a = adm_threshold(work + 6u * plane, work + 7u * plane, rws, (int)j, w);
        const ulp_i32 thr_r = adm_threshold(work + 8u * plane, work + 9u * plane, rws, (int)j, w);
        for (int b = 0; b < 3; b++) {
            const ulp_i32 r = work[(ulp_u32)b * plane + at];
            const ulp_i32 a = work[(3u + (ulp_u32)b) * plane + at];
            const ulp_i32 o = bands[base + (1u + (ulp_u32)b) * plane + at];
            if (scale == 0) {
                const ulp_u32 sub = b == 2 ? 12u : 10u, sqs = b == 2 ? 30u : 29u;
                const ulp_i32 f = (ulp_i32)rf[b];
                s[b] += (ulp_u64)adm_cube0((ulp_i32)((ulp_u32)r * (ulp_u32)f), thr_a, sub, sqs, cub[b]);
                s[3 + b] += (ulp_u64)adm_cube0((ulp_i32)((ulp_u32)a * (ulp_u32)f), thr_r, sub, sqs, cub[b]);
                const ulp_u64 m = (ulp_u64)(ulp_u16)adm_abs(o);
                s[6 + b] += m * m * m;
            } else {
                s[b] += (ulp_u64)adm_cube123(r, rf[b], thr_a, cub[b]);
                s[3 + b] += (ulp_u64)adm_cube123(a, rf[b], thr_r, cub[b]);
                const ulp_u64 m = (ulp_u32)adm_abs(o);
                s[6 + b] += ((((m * m + ((ulp_u64)1 << sq)) >> sq) * m) + den_add) >> den_cub;
            }
        }
    }
    for (int k = 0; k < 9; k++)
        part[(ulp_u32)k * ADM_WG + lid] = s[k];
    BARRIER();
    if (lid == 0) {
        for (ulp_u32 k = 0; k < 9; k++) {
            ulp_u64 total = 0;
            for (ulp_u32 t = 0; t < ADM_WG; t++)
                total += part[k * ADM_WG + t];
            const ulp_u32 at = 2u * (9u * (rows_base + g) + k);
            rows[at] = (ulp_u32)total;
            rows[at + 1u] = (ulp_u32)(total >> 32);
        }
    }
}

/* ---------------------------------------------------------------------
 * adm_cm_rows: adm_cm's CPU-driver shape, the same sums. Work item
 * g < nrows takes row top + g and walks it left to right, adding the nine
 * 64-bit sums (integers: any order): no local memory, no barrier. The
 * thresholds' 3x3 sums slide along the row as three column sums (uint32,
 * wrapping as the C's int does), each step loading one new column.
 * --------------------------------------------------------------------- */
FUNC ulp_u32 adm_colsum(GLOBAL const ulp_i32 *F, const ulp_u32 *rws, ulp_u32 col)
{
    return (ulp_u32)F[rws[0] + col] + (ulp_u32)F[rws[1] + col] + (ulp_u32)F[rws[2] + col];
}

KERNEL adm_cm_rows(GLOBAL const ulp_i32 *bands, GLOBAL const ulp_i32 *work, GLOBAL ulp_u32 *rows, ulp_u32 bw,
                   ulp_u32 bh, ulp_u32 base, ulp_u32 top, ulp_u32 left, ulp_u32 right, ulp_u32 scale, ulp_u32 rf0,
                   ulp_u32 rf1, ulp_u32 rf2, ulp_u32 cub0, ulp_u32 cub1, ulp_u32 cub2, ulp_u32 den_cub,
                   ulp_u32 rows_base, ulp_u32 nrows)
{
    const ulp_u32 g = GLOBAL_ID(0);
    if (g >= nrows)
        return;
    const int i = (int)(top + g), w = (int)bw;
    const ulp_u32 plane = bw * bh;
    const ulp_u32 rws[3] = {(ulp_u32)(adm_nb(i - 1, (int)bh) * w), (ulp_u32)(i * w),
                            (ulp_u32)(adm_nb(i + 1, (int)bh) * w)};
    const ulp_u32 rf[3] = {rf0, rf1, rf2};
    const ulp_u32 cub[3] = {cub0, cub1, cub2};
    const ulp_u32 sq = scale == 2 ? 30u : 31u;
    const ulp_u64 den_add = den_cub > 0 ? ((ulp_u64)1 << (den_cub - 1u)) : 0;
    /* F of the CSF of a (plane 6) and of r (plane 8); T follows each. */
    GLOBAL const ulp_i32 *fa = work + 6u * plane;
    GLOBAL const ulp_i32 *fr = work + 8u * plane;
    const int j0 = (int)left;
    const ulp_u32 l0 = (ulp_u32)adm_nb(j0 - 1, w), r0 = (ulp_u32)adm_nb(j0 + 1, w);
    ulp_u32 ca[3] = {adm_colsum(fa, rws, l0), adm_colsum(fa, rws, (ulp_u32)j0), adm_colsum(fa, rws, r0)};
    ulp_u32 cr[3] = {adm_colsum(fr, rws, l0), adm_colsum(fr, rws, (ulp_u32)j0), adm_colsum(fr, rws, r0)};
    ulp_u64 s[9];
    for (int k = 0; k < 9; k++)
        s[k] = 0;
    for (ulp_u32 j = left; j < right; j++) {
        if (j > left) {
            const ulp_u32 col = (ulp_u32)adm_nb((int)j + 1, w);
            ca[0] = ca[1];
            ca[1] = ca[2];
            ca[2] = adm_colsum(fa, rws, col);
            cr[0] = cr[1];
            cr[1] = cr[2];
            cr[2] = adm_colsum(fr, rws, col);
        }
        const ulp_u32 at = rws[1] + j;
        const ulp_i32 thr_a = (ulp_i32)((ulp_u32)fa[plane + at] + ca[0] + ca[1] + ca[2]);
        const ulp_i32 thr_r = (ulp_i32)((ulp_u32)fr[plane + at] + cr[0] + cr[1] + cr[2]);
        for (int b = 0; b < 3; b++) {
            const ulp_i32 r = work[(ulp_u32)b * plane + at];
            const ulp_i32 a = work[(3u + (ulp_u32)b) * plane + at];
            const ulp_i32 o = bands[base + (1u + (ulp_u32)b) * plane + at];
            if (scale == 0) {
                const ulp_u32 sub = b == 2 ? 12u : 10u, sqs = b == 2 ? 30u : 29u;
                const ulp_i32 f = (ulp_i32)rf[b];
                s[b] += (ulp_u64)adm_cube0((ulp_i32)((ulp_u32)r * (ulp_u32)f), thr_a, sub, sqs, cub[b]);
                s[3 + b] += (ulp_u64)adm_cube0((ulp_i32)((ulp_u32)a * (ulp_u32)f), thr_r, sub, sqs, cub[b]);
                const ulp_u64 m = (ulp_u64)(ulp_u16)adm_abs(o);
                s[6 + b] += m * m * m;
            } else {
                s[b] += (ulp_u64)adm_cube123(r, rf[b], thr_a, cub[b]);
                s[3 + b] += (ulp_u64)adm_cube123(a, rf[b], thr_r, cub[b]);
                const ulp_u64 m = (ulp_u32)adm_abs(o);
                s[6 + b] += ((((m * m + ((ulp_u64)1 << sq)) >> sq) * m) + den_add) >> den_cub;
            }
        }
    }
    for (ulp_u32 k = 0; k < 9; k++) {
        const ulp_u32 at = 2u * (9u * (rows_base + g) + k);
        rows[at] = (ulp_u32)s[k];
        rows[at + 1u] = (ulp_u32)(s[k] >> 32);
    }
}

/* ---------------------------------------------------------------------
 * adm_dwt0_strips, adm_dwt_strips: adm_dwt0's and adm_dwt's CPU-driver
 * shape, the same bits. Work item x of image z walks outputs
 * (i, ADM_STRIP k) .. (i, ADM_STRIP k + 15), i = x / strips and
 * k = x % strips (strips a row), computing each column's vertical pass once: an output's last two columns are the next one's
 * first two.
 * --------------------------------------------------------------------- */
#define ADM_STRIP 16

/* Column col's vertical pass at scale 0 (tmplo, tmphi in int16). */
FUNC void adm_vert0(GLOBAL const ulp_u8 *src, const int *rws, int col, ulp_u32 bytes_per_sample, ulp_u32 bpc,
                    ulp_i32 add, ulp_u32 centre, ulp_i32 *lo, ulp_i32 *hi)
{
    ulp_u32 acc_lo = 0, acc_hi = 0;
    for (int k = 0; k < 4; k++) {
        const ulp_u32 s = ulp_sample(src, (ulp_u32)(rws[k] + col), bytes_per_sample);
        acc_lo += (ulp_u32)adm_lo(k) * s;
        acc_hi += (ulp_u32)adm_hi(k) * s;
    }
    *lo = adm_i16(((ulp_i32)(acc_lo - centre) + add) >> bpc);
    *hi = adm_i16(((ulp_i32)acc_hi + add) >> bpc);
}

/* One strip of row i from column `first` of picture img (both kernels'
 * body). */
FUNC void adm_dwt0_strip(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL ulp_i32 *bands, ulp_u32 width,
                         ulp_u32 height, ulp_u32 bytes_per_sample, ulp_u32 bpc, ulp_u32 out_base, ulp_u32 lo_only,
                         int img, int i, int first)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    const int last = first + ADM_STRIP < bw ? first + ADM_STRIP : bw;
    GLOBAL const ulp_u8 *src = img == 0 ? ref : dis;
    int rws[4];
    for (int k = 0; k < 4; k++)
        rws[k] = adm_mirror(2 * i - 1 + k, h) * w;
    const ulp_i32 add = (ulp_i32)1 << (bpc - 1);
    const ulp_u32 centre = 46342u * (ulp_u32)add;
    ulp_i32 lo[4], hi[4];
    adm_vert0(src, rws, adm_mirror(2 * first - 1, w), bytes_per_sample, bpc, add, centre, &lo[0], &hi[0]);
    adm_vert0(src, rws, adm_mirror(2 * first, w), bytes_per_sample, bpc, add, centre, &lo[1], &hi[1]);
    const ulp_u32 plane = (ulp_u32)(bw * bh);
    for (int j = first; j < last; j++) {
        adm_vert0(src, rws, adm_mirror(2 * j + 1, w), bytes_per_sample, bpc, add, centre, &lo[2], &hi[2]);
        adm_vert0(src, rws, adm_mirror(2 * j + 2, w), bytes_per_sample, bpc, add, centre, &lo[3], &hi[3]);
        ulp_i32 a = 32768, v = 32768, hh = 32768, d = 32768;
        for (int k = 0; k < 4; k++) {
            a += adm_lo(k) * lo[k];
            v += adm_hi(k) * lo[k];
            hh += adm_lo(k) * hi[k];
            d += adm_hi(k) * hi[k];
        }
        const ulp_u32 o = out_base + (ulp_u32)img * 4u * plane + (ulp_u32)(i * bw + j);
        bands[o] = adm_i16(a >> 16);
        if (!lo_only) {
            bands[o + plane] = adm_i16(hh >> 16);
            bands[o + 2u * plane] = adm_i16(v >> 16);
            bands[o + 3u * plane] = adm_i16(d >> 16);
        }
        lo[0] = lo[2];
        hi[0] = hi[2];
        lo[1] = lo[3];
        hi[1] = hi[3];
    }
}

KERNEL adm_dwt0_strips(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL ulp_i32 *bands, ulp_u32 width,
                       ulp_u32 height, ulp_u32 bytes_per_sample, ulp_u32 bpc, ulp_u32 out_base, ulp_u32 lo_only,
                       ulp_u32 edges)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    /* Work item x takes strip x % strips of row x / strips, or with
     * edges the first (x even) or last strip of row x / 2. */
    const int strips = (bw + ADM_STRIP - 1) / ADM_STRIP, x = (int)GLOBAL_ID(0), img = (int)GROUP_ID(2);
    const int per_row = edges ? 2 : strips;
    if (x >= per_row * bh)
        return;
    const int k = edges ? ((x & 1) ? strips - 1 : 0) : x % strips;
    adm_dwt0_strip(ref, dis, bands, width, height, bytes_per_sample, bpc, out_base, lo_only, img, x / per_row,
                   k * ADM_STRIP);
}

/* adm_dwt0_words: adm_dwt0_strips for the inner strips (1 .. strips - 2
 * of each row), where the WGSL dialect reads words; here the same strip
 * body. */
KERNEL adm_dwt0_words(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL ulp_i32 *bands, ulp_u32 width,
                      ulp_u32 height, ulp_u32 bytes_per_sample, ulp_u32 bpc, ulp_u32 out_base, ulp_u32 lo_only,
                      ulp_u32 edges)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    const int strips = (bw + ADM_STRIP - 1) / ADM_STRIP, x = (int)GLOBAL_ID(0), img = (int)GROUP_ID(2);
    const int inner = strips - 2;
    (void)edges;
    if (x >= inner * bh)
        return;
    adm_dwt0_strip(ref, dis, bands, width, height, bytes_per_sample, bpc, out_base, lo_only, img, x / inner,
                   (1 + x % inner) * ADM_STRIP);
}

/* Column col's vertical pass at scales 1-3, rounded by the scale's shift. */
FUNC void adm_vert(GLOBAL const ulp_i32 *src, const int *rws, int col, ulp_i64 add_vp, ulp_u32 shift_vp, ulp_i32 *lo,
                   ulp_i32 *hi)
{
    ulp_i64 acc_lo = 0, acc_hi = 0;
    for (int k = 0; k < 4; k++) {
        const ulp_i64 s = src[rws[k] + col];
        acc_lo += (ulp_i64)adm_lo(k) * s;
        acc_hi += (ulp_i64)adm_hi(k) * s;
    }
    *lo = (ulp_i32)((acc_lo + add_vp) >> shift_vp);
    *hi = (ulp_i32)((acc_hi + add_vp) >> shift_vp);
}

KERNEL adm_dwt_strips(GLOBAL ulp_i32 *bands, ulp_u32 width, ulp_u32 height, ulp_u32 in_base, ulp_u32 in_plane,
                      ulp_u32 out_base, ulp_u32 scale)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    /* Work item x takes strip x % strips of row x / strips. */
    const int strips = (bw + ADM_STRIP - 1) / ADM_STRIP, x = (int)GLOBAL_ID(0), img = (int)GROUP_ID(2);
    if (x >= strips * bh)
        return;
    const int i = x / strips, first = (x % strips) * ADM_STRIP;
    const int last = first + ADM_STRIP < bw ? first + ADM_STRIP : bw;
    const ulp_i64 add_vp = scale == 1 ? 0 : 32768;
    const ulp_u32 shift_vp = scale == 1 ? 0 : 16;
    const ulp_i64 add_hp = scale == 2 ? 32768 : 16384;
    const ulp_u32 shift_hp = scale == 2 ? 16 : 15;
    GLOBAL const ulp_i32 *src = bands + in_base + (ulp_u32)img * 4u * in_plane;
    int rws[4];
    for (int k = 0; k < 4; k++)
        rws[k] = adm_mirror(2 * i - 1 + k, h) * w;
    ulp_i32 lo[4], hi[4];
    adm_vert(src, rws, adm_mirror(2 * first - 1, w), add_vp, shift_vp, &lo[0], &hi[0]);
    adm_vert(src, rws, adm_mirror(2 * first, w), add_vp, shift_vp, &lo[1], &hi[1]);
    const ulp_u32 plane = (ulp_u32)(bw * bh);
    for (int j = first; j < last; j++) {
        adm_vert(src, rws, adm_mirror(2 * j + 1, w), add_vp, shift_vp, &lo[2], &hi[2]);
        adm_vert(src, rws, adm_mirror(2 * j + 2, w), add_vp, shift_vp, &lo[3], &hi[3]);
        ulp_i64 a = add_hp, v = add_hp, hh = add_hp, d = add_hp;
        for (int k = 0; k < 4; k++) {
            a += (ulp_i64)adm_lo(k) * lo[k];
            v += (ulp_i64)adm_hi(k) * lo[k];
            hh += (ulp_i64)adm_lo(k) * hi[k];
            d += (ulp_i64)adm_hi(k) * hi[k];
        }
        const ulp_u32 o = out_base + (ulp_u32)img * 4u * plane + (ulp_u32)(i * bw + j);
        bands[o] = (ulp_i32)(a >> shift_hp);
        bands[o + plane] = (ulp_i32)(hh >> shift_hp);
        bands[o + 2u * plane] = (ulp_i32)(v >> shift_hp);
        bands[o + 3u * plane] = (ulp_i32)(d >> shift_hp);
        lo[0] = lo[2];
        hi[0] = hi[2];
        lo[1] = lo[3];
        hi[1] = hi[3];
    }
}

/*
 * float_adm family: libvmaf's floating-point ADM (adm.c, adm_tools.c) in
 * four kernels per scale (contracts: FLOAT_ADM_DWT0, FLOAT_ADM_DWT,
 * FLOAT_ADM_DECOUPLE and FLOAT_ADM_CM in src/features/adm/gpu.rs; the CPU
 * reference is src/features/adm/float/). Every float operation is the CPU
 * reference's, in its order, rounded on its own (ADD_RN/MUL_RN, no FMA);
 * the products libvmaf's C takes in double (its double literals 1/30 and
 * 1/15, the enhancement gain) are double here too. Each row's sums are
 * sequential in libvmaf, so one work item adds them in pixel order.
 */
#include "ulp.h"

/* float_adm_cm's work group and the pixels it fills local memory with at a
 * time (9 terms each: 9 KiB). */
#define FADM_WG 128
#define FADM_CHUNK 256

FUNC int fadm_mirror(int x, int n)
{
    return x < 0 ? -x : (x >= n ? 2 * n - x - 1 : x);
}

FUNC int fadm_nb(int x, int n)
{
    return x < 0 ? 1 : (x >= n ? n - 1 : x);
}

/* dwt2_db2_coeffs_lo_s / _hi_s. */
FUNC float fadm_lo(int k)
{
    return k == 0 ? 0.482962913144690f : (k == 1 ? 0.836516303737469f : (k == 2 ? 0.224143868041857f : -0.129409522550921f));
}

FUNC float fadm_hi(int k)
{
    return k == 0 ? -0.129409522550921f : (k == 1 ? -0.224143868041857f : (k == 2 ? 0.836516303737469f : -0.482962913144690f));
}

/* accum = 0; accum += f[0] * s[0]; ... in f32. */
FUNC float fadm_filter(int high, const float *s)
{
    float acc = 0.0f;
    for (int k = 0; k < 4; k++)
        acc = ADD_RN(acc, MUL_RN(high ? fadm_hi(k) : fadm_lo(k), s[k]));
    return acc;
}

/* The horizontal pass at one output from the vertical results at its four
 * columns, into the four bands at `o` (a, h, v, d; `plane` apart). */
FUNC void fadm_store(GLOBAL float *bands, ulp_u32 o, ulp_u32 plane, const float *lo, const float *hi, ulp_u32 lo_only)
{
    bands[o] = fadm_filter(0, lo);
    if (lo_only)
        return;
    bands[o + plane] = fadm_filter(0, hi);
    bands[o + 2u * plane] = fadm_filter(1, lo);
    bands[o + 3u * plane] = fadm_filter(1, hi);
}

/* ---------------------------------------------------------------------
 * float_adm_dwt0: scale 0 (adm_dwt2_s, or adm_dwt2_lo_s with lo_only) of
 * both pictures, each sample first converted as picture_copy does with
 * offset -128 (v * inv_scaler - 128; inv_scaler is 1 / a power of two, so
 * the product is the division's exact result). Work item (j, i) of image z
 * writes output (i, j) of the bands at out_base + z * 4 * plane.
 * --------------------------------------------------------------------- */
KERNEL float_adm_dwt0(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL float *bands, ulp_u32 width,
                      ulp_u32 height, ulp_u32 bytes_per_sample, float inv_scaler, ulp_u32 out_base, ulp_u32 lo_only)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    const int j = (int)GLOBAL_ID(0), i = (int)GROUP_ID(1), img = (int)GROUP_ID(2);
    if (j >= bw)
        return;
    GLOBAL const ulp_u8 *src = img == 0 ? ref : dis;
    int rows[4], cols[4];
    for (int k = 0; k < 4; k++) {
        rows[k] = fadm_mirror(2 * i - 1 + k, h) * w;
        cols[k] = fadm_mirror(2 * j - 1 + k, w);
    }
    float lo[4], hi[4];
    for (int c = 0; c < 4; c++) {
        float s[4];
        for (int k = 0; k < 4; k++) {
            const float v = (float)ulp_sample(src, (ulp_u32)(rows[k] + cols[c]), bytes_per_sample);
            s[k] = ADD_RN(bytes_per_sample == 1 ? v : MUL_RN(v, inv_scaler), -128.0f);
        }
        lo[c] = fadm_filter(0, s);
        hi[c] = fadm_filter(1, s);
    }
    const ulp_u32 plane = (ulp_u32)(bw * bh);
    fadm_store(bands, out_base + (ulp_u32)img * 4u * plane + (ulp_u32)(i * bw + j), plane, lo, hi, lo_only);
}

/* ---------------------------------------------------------------------
 * float_adm_dwt: scales 1-3 (adm_dwt2_s) from the previous scale's
 * approximation band of image z at in_base + z * 4 * in_plane.
 * --------------------------------------------------------------------- */
KERNEL float_adm_dwt(GLOBAL float *bands, ulp_u32 width, ulp_u32 height, ulp_u32 in_base, ulp_u32 in_plane,
                     ulp_u32 out_base)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    const int j = (int)GLOBAL_ID(0), i = (int)GROUP_ID(1), img = (int)GROUP_ID(2);
    if (j >= bw)
        return;
    const ulp_u32 src = in_base + (ulp_u32)img * 4u * in_plane;
    int rows[4], cols[4];
    for (int k = 0; k < 4; k++) {
        rows[k] = fadm_mirror(2 * i - 1 + k, h) * w;
        cols[k] = fadm_mirror(2 * j - 1 + k, w);
    }
    float lo[4], hi[4];
    for (int c = 0; c < 4; c++) {
        float s[4];
        for (int k = 0; k < 4; k++)
            s[k] = bands[src + (ulp_u32)(rows[k] + cols[c])];
        lo[c] = fadm_filter(0, s);
        hi[c] = fadm_filter(1, s);
    }
    const ulp_u32 plane = (ulp_u32)(bw * bh);
    fadm_store(bands, out_base + (ulp_u32)img * 4u * plane + (ulp_u32)(i * bw + j), plane, lo, hi, 0);
}

/* The host CPU's rcpss from its table (src/features/adm/float/rcp.rs
 * `Reciprocal::rcp`): entry of the top 12 mantissa bits, the exponent
 * moved by x's; zero and subnormals give infinity, underflow 0. */
FUNC float fadm_rcp(GLOBAL const ulp_u32 *table, float x)
{
    union {
        float f;
        ulp_u32 u;
    } v;
    v.f = x;
    const ulp_u32 b = v.u, sign = b & 0x80000000u, e = (b >> 23) & 0xffu, m = b & 0x7fffffu;
    ulp_u32 bits;
    if (e == 255u) {
        bits = m != 0u ? (b | 0x400000u) : sign;
    } else if (e == 0u) {
        bits = sign | 0x7f800000u;
    } else {
        const ulp_u32 r = table[m >> 11];
        const int re = (int)((r >> 23) & 0xffu) - ((int)e - 127);
        bits = re <= 0 ? sign : (sign | ((ulp_u32)re << 23) | (r & 0x7fffffu));
    }
    v.u = bits;
    return v.f;
}

/* adm_tools.c DIVS(n, d): n * rcp_s(d), rcp_s(d) = xi + xi * (1 - d * xi)
 * with xi = rcpss(d); or n / d where libvmaf divides exactly (exact_div). */
FUNC float fadm_divs(GLOBAL const ulp_u32 *table, ulp_u32 exact_div, float n, float d)
{
    if (exact_div)
        return DIV_RN(n, d);
    const float xi = fadm_rcp(table, d);
    return MUL_RN(n, ADD_RN(xi, MUL_RN(xi, SUB_RN(1.0f, MUL_RN(d, xi)))));
}

/* adm_csf_s's second output: flt = 1/30 (a double) * |csf|. */
FUNC float fadm_flt(float csf)
{
    return (float)(0.0333333351 * (double)fabs(csf));
}

/* ---------------------------------------------------------------------
 * float_adm_decouple: one work item per pixel (top + y, left + x) of one
 * scale's decouple rectangle (bands at `base`: reference a, h, v, d, then
 * distorted, each plane bw * bh). adm_decouple_s, then adm_csf_s of a and
 * of r. Writes 18 planes of `work`: r h, v, d; a h, v, d; csf(a) h, v, d;
 * flt(a) h, v, d; csf(r) h, v, d; flt(r) h, v, d; with csf_only the two
 * csf triples alone (what float_adm_cm_rows reads). params[0] is the gain
 * limit; `table` the rcpss table (unused with exact_div).
 * --------------------------------------------------------------------- */
KERNEL float_adm_decouple(GLOBAL const float *bands, GLOBAL float *work, GLOBAL const ulp_u32 *table,
                          GLOBAL const double *params, ulp_u32 bw, ulp_u32 bh, ulp_u32 base, ulp_u32 top,
                          ulp_u32 left, ulp_u32 right, float rf0, float rf1, float rf2, float cos1, ulp_u32 exact_div,
                          ulp_u32 csf_only)
{
    const ulp_u32 j = left + GLOBAL_ID(0), i = top + GROUP_ID(1);
    if (j >= right)
        return;
    const ulp_u32 plane = bw * bh, k = i * bw + j;
    const double limit = params[0];
    const float rf[3] = {rf0, rf1, rf2};
    float o[3], t[3];
    for (int b = 0; b < 3; b++) {
        o[b] = bands[base + (1u + (ulp_u32)b) * plane + k];
        t[b] = bands[base + (5u + (ulp_u32)b) * plane + k];
    }
    const float ot_dp = ADD_RN(MUL_RN(o[0], t[0]), MUL_RN(o[1], t[1]));
    const float o_mag = ADD_RN(MUL_RN(o[0], o[0]), MUL_RN(o[1], o[1]));
    const float t_mag = ADD_RN(MUL_RN(t[0], t[0]), MUL_RN(t[1], t[1]));
    const int angle = ot_dp >= 0.0f && MUL_RN(ot_dp, ot_dp) >= MUL_RN(MUL_RN(cos1, o_mag), t_mag);
    for (int b = 0; b < 3; b++) {
        float kk = fadm_divs(table, exact_div, t[b], ADD_RN(o[b], 1e-30f));
        kk = kk < 0.0f ? 0.0f : (kk > 1.0f ? 1.0f : kk);
        float rst = MUL_RN(kk, o[b]);
        /* MIN/MAX of a double product and t, back to float; the second
         * test sees the first one's result. */
        if (angle && rst > 0.0f) {
            const double x = (double)rst * limit;
            rst = (float)(x < (double)t[b] ? x : (double)t[b]);
        }
        if (angle && rst < 0.0f) {
            const double x = (double)rst * limit;
            rst = (float)(x > (double)t[b] ? x : (double)t[b]);
        }
        const float a = SUB_RN(t[b], rst);
        /* adm_csf_s: csf = rfactor * src, flt = 1/30 (a double) * |csf|. */
        const float ca = MUL_RN(rf[b], a), cr = MUL_RN(rf[b], rst);
        work[(6u + (ulp_u32)b) * plane + k] = ca;
        work[(12u + (ulp_u32)b) * plane + k] = cr;
        if (!csf_only) {
            work[(ulp_u32)b * plane + k] = rst;
            work[(3u + (ulp_u32)b) * plane + k] = a;
            work[(9u + (ulp_u32)b) * plane + k] = fadm_flt(ca);
            work[(15u + (ulp_u32)b) * plane + k] = fadm_flt(cr);
        }
    }
}

/* ADM_CM_THRESH_S_*: per band the nine neighbours of flt in libvmaf's
 * order (rows above, own, below; left to right), the centre replaced by
 * 1/15 (a double) * |csf| added in double; the bands' sums added. `csf` is
 * the first of the triple's six planes (csf h, v, d, then flt h, v, d). */
FUNC float fadm_threshold(GLOBAL const float *csf, ulp_u32 plane, const int *rows, int j, int bw)
{
    const int cols[3] = {fadm_nb(j - 1, bw), j, fadm_nb(j + 1, bw)};
    float acc = 0.0f;
    for (int b = 0; b < 3; b++) {
        GLOBAL const float *flt = csf + (3u + (ulp_u32)b) * plane;
        float sum = 0.0f;
        sum = ADD_RN(sum, flt[rows[0] + cols[0]]);
        sum = ADD_RN(sum, flt[rows[0] + cols[1]]);
        sum = ADD_RN(sum, flt[rows[0] + cols[2]]);
        sum = ADD_RN(sum, flt[rows[1] + cols[0]]);
        sum = (float)((double)sum + 0.0666666701 * (double)fabs(csf[(ulp_u32)b * plane + (ulp_u32)(rows[1] + j)]));
        sum = ADD_RN(sum, flt[rows[1] + cols[2]]);
        sum = ADD_RN(sum, flt[rows[2] + cols[0]]);
        sum = ADD_RN(sum, flt[rows[2] + cols[1]]);
        sum = ADD_RN(sum, flt[rows[2] + cols[2]]);
        acc = ADD_RN(acc, sum);
    }
    return acc;
}

/* float <-> bits, double <-> bits */
FUNC ulp_u32 fadm_fbits(float x)
{
    union {
        float f;
        ulp_u32 u;
    } v;
    v.f = x;
    return v.u;
}

FUNC float fadm_bitsf(ulp_u32 x)
{
    union {
        float f;
        ulp_u32 u;
    } v;
    v.u = x;
    return v.f;
}

FUNC ulp_u64 fadm_dbits(double x)
{
    union {
        double d;
        ulp_u64 u;
    } v;
    v.d = x;
    return v.u;
}

FUNC double fadm_bitsd(ulp_u64 x)
{
    union {
        double d;
        ulp_u64 u;
    } v;
    v.u = x;
    return v.d;
}

/* powf(x, y) for x >= 0 and finite y > 0: glibc's algorithm, the port in
 * src/features/adm/float/powf.rs (which see; its tables, as bits). Every
 * operation a correctly rounded double one: contraction is off. */
FUNC float fadm_powf(float x, float y)
{
    const ulp_u64 invc[16] = {
        0x3ff661ec79f8f3beul, 0x3ff571ed4aaf883dul, 0x3ff49539f0f010b0ul, 0x3ff3c995b0b80385ul,
        0x3ff30d190c8864a5ul, 0x3ff25e227b0b8ea0ul, 0x3ff1bb4a4a1a343ful, 0x3ff12358f08ae5baul,
        0x3ff0953f419900a7ul, 0x3ff0000000000000ul, 0x3fee608cfd9a47acul, 0x3feca4b31f026aa0ul,
        0x3feb2036576afce6ul, 0x3fe9c2d163a1aa2dul, 0x3fe886e6037841edul, 0x3fe767dcf5534862ul,
    };
    const ulp_u64 logc[16] = {
        0xbfdefec65b963019ul, 0xbfdb0b6832d4fca4ul, 0xbfd7418b0a1fb77bul, 0xbfd39de91a6dcf7bul,
        0xbfd01d9bf3f2b631ul, 0xbfc97c1d1b3b7af0ul, 0xbfc2f9e393af3c9ful, 0xbfb960cbbf788d5cul,
        0xbfaa6f9db6475fceul, 0x0000000000000000ul, 0x3fb338ca9f24f53dul, 0x3fc476a9543891baul,
        0x3fce840b4ac4e4d2ul, 0x3fd40645f0c6651cul, 0x3fd88e9c2c1b9ff8ul, 0x3fdce0a44eb17bccul,
    };
    const ulp_u64 poly[5] = {
        0x3fd27616c9496e0bul, 0xbfd71969a075c67aul, 0x3fdec70a6ca7baddul, 0xbfe7154748bef6c8ul,
        0x3ff71547652ab82bul,
    };
    const ulp_u64 e2[32] = {
        0x3ff0000000000000ul, 0x3fefd9b0d3158574ul, 0x3fefb5586cf9890ful, 0x3fef9301d0125b51ul,
        0x3fef72b83c7d517bul, 0x3fef54873168b9aaul, 0x3fef387a6e756238ul, 0x3fef1e9df51fdee1ul,
        0x3fef06fe0a31b715ul, 0x3feef1a7373aa9cbul, 0x3feedea64c123422ul, 0x3feece086061892dul,
        0x3feebfdad5362a27ul, 0x3feeb42b569d4f82ul, 0x3feeab07dd485429ul, 0x3feea47eb03a5585ul,
        0x3feea09e667f3bcdul, 0x3fee9f75e8ec5f74ul, 0x3feea11473eb0187ul, 0x3feea589994cce13ul,
        0x3feeace5422aa0dbul, 0x3feeb737b0cdc5e5ul, 0x3feec49182a3f090ul, 0x3feed503b23e255dul,
        0x3feee89f995ad3adul, 0x3feeff76f2fb5e47ul, 0x3fef199bdd85529cul, 0x3fef3720dcef9069ul,
        0x3fef5818dcfba487ul, 0x3fef7c97337b9b5ful, 0x3fefa4afa2a490daul, 0x3fefd0765b6e4540ul,
    };
    const ulp_u64 e2poly[3] = {
        0x3fac6af84b912394ul, 0x3fcebfce50fac4f3ul, 0x3fe62e42ff0c52d6ul,
    };
    ulp_u32 ix = fadm_fbits(x);
    if (ix - 0x00800000u >= 0x7f800000u - 0x00800000u) {
        if (ix > 0x7f800000u)
            return x + y;
        if (ix == 0u || ix == 0x7f800000u)
            return x * x;
        ix = (fadm_fbits(x * 8388608.0f) & 0x7fffffffu) - (23u << 23);
    }
    /* log2_inline */
    const ulp_u32 tmp = ix - 0x3f330000u;
    const int i = (int)((tmp >> 19) % 16u);
    const ulp_u32 top = tmp & 0xff800000u;
    const ulp_u32 iz = ix - top;
    const int k = (int)top >> 23;
    const double z = (double)fadm_bitsf(iz);
    const double r = z * fadm_bitsd(invc[i]) - 1.0;
    const double y0 = fadm_bitsd(logc[i]) + (double)k;
    const double r2 = r * r;
    const double ya = fadm_bitsd(poly[0]) * r + fadm_bitsd(poly[1]);
    const double p = fadm_bitsd(poly[2]) * r + fadm_bitsd(poly[3]);
    const double r4 = r2 * r2;
    double q = fadm_bitsd(poly[4]) * r + y0;
    q = p * r2 + q;
    const double ylogx = (double)y * (ya * r4 + q);
    if ((fadm_dbits(ylogx) >> 47 & 0xffffu) >= (fadm_dbits(126.0) >> 47)) {
        if (ylogx > fadm_bitsd(0x405fffffffd1d571ul))
            return fadm_bitsf(0x7f800000u);
        if (ylogx <= -150.0)
            return 0.0f;
    }
    /* exp2_inline */
    const double shift = fadm_bitsd(0x42e8000000000000ul);
    const double kd0 = ylogx + shift;
    const ulp_u64 ki = fadm_dbits(kd0);
    const double kd = kd0 - shift;
    const double rr = ylogx - kd;
    const double s = fadm_bitsd(e2[ki % 32u] + (ki << 47));
    const double zz = fadm_bitsd(e2poly[0]) * rr + fadm_bitsd(e2poly[1]);
    const double rr2 = rr * rr;
    double yy = fadm_bitsd(e2poly[2]) * rr + 1.0;
    yy = zz * rr2 + yy;
    return (float)(yy * s);
}

/* x^p as the sums take it: a product of three for p = 3. */
FUNC float fadm_power(float x, ulp_u32 cubes, float p)
{
    return cubes ? MUL_RN(MUL_RN(x, x), x) : fadm_powf(x, p);
}

/* ---------------------------------------------------------------------
 * float_adm_cm: one work group of FADM_WG per row top + g of one scale's
 * score rectangle. For FADM_CHUNK pixels at a time its work items compute
 * each pixel's nine terms (num: the restored bands' masked p-th powers,
 * thresholds from the CSF of a; aim: the additive bands', thresholds from
 * the CSF of r; den: the reference's CSF-weighted p-th powers) into local
 * memory; after a barrier work item 0 adds them to the row's nine sums in
 * pixel order (libvmaf's sequential f32 sums), and a second barrier keeps
 * the next chunk from overwriting what it has not read. The row's sums go
 * to rows[9 * (rows_base + g) + k]. bypass_cm: thresholds of 0.
 * --------------------------------------------------------------------- */
KERNEL float_adm_cm(GLOBAL const float *bands, GLOBAL const float *work, GLOBAL float *rows, ulp_u32 bw, ulp_u32 bh,
                    ulp_u32 base, ulp_u32 top, ulp_u32 left, ulp_u32 right, float rf0, float rf1, float rf2,
                    ulp_u32 bypass_cm, ulp_u32 cubes, float p, ulp_u32 rows_base)
{
    LOCAL float terms[9 * FADM_CHUNK];
    const ulp_u32 lid = LOCAL_ID(0), g = GROUP_ID(0);
    const int i = (int)(top + g), w = (int)bw;
    const ulp_u32 plane = bw * bh;
    const int rws[3] = {fadm_nb(i - 1, (int)bh) * w, i * w, fadm_nb(i + 1, (int)bh) * w};
    const float rf[3] = {rf0, rf1, rf2};
    float sums[9];
    for (int k = 0; k < 9; k++)
        sums[k] = 0.0f;
    for (ulp_u32 start = left; start < right; start += FADM_CHUNK) {
        const ulp_u32 n = right - start < FADM_CHUNK ? right - start : FADM_CHUNK;
        for (ulp_u32 c = lid; c < n; c += FADM_WG) {
            const int j = (int)(start + c);
            const ulp_u32 at = (ulp_u32)(rws[1] + j);
            const float thr_a = bypass_cm ? 0.0f : fadm_threshold(work + 6u * plane, plane, rws, j, w);
            const float thr_r = bypass_cm ? 0.0f : fadm_threshold(work + 12u * plane, plane, rws, j, w);
            for (int b = 0; b < 3; b++) {
                float x = SUB_RN(fabs(MUL_RN(work[(ulp_u32)b * plane + at], rf[b])), thr_a);
                terms[(ulp_u32)b * FADM_CHUNK + c] = fadm_power(x < 0.0f ? 0.0f : x, cubes, p);
                x = SUB_RN(fabs(MUL_RN(work[(3u + (ulp_u32)b) * plane + at], rf[b])), thr_r);
                terms[(3u + (ulp_u32)b) * FADM_CHUNK + c] = fadm_power(x < 0.0f ? 0.0f : x, cubes, p);
                x = fabs(MUL_RN(rf[b], bands[base + (1u + (ulp_u32)b) * plane + at]));
                terms[(6u + (ulp_u32)b) * FADM_CHUNK + c] = fadm_power(x, cubes, p);
            }
        }
        BARRIER(); /* the chunk's terms are in */
        if (lid == 0) {
            for (ulp_u32 c = 0; c < n; c++)
                for (int k = 0; k < 9; k++)
                    sums[k] = ADD_RN(sums[k], terms[(ulp_u32)k * FADM_CHUNK + c]);
        }
        BARRIER(); /* read: the next chunk may overwrite them */
    }
    if (lid == 0)
        for (ulp_u32 k = 0; k < 9; k++)
            rows[9u * (rows_base + g) + k] = sums[k];
}

/* ---------------------------------------------------------------------
 * float_adm_cm_rows: float_adm_cm's CPU-driver shape, the same sums bit
 * for bit. Work item g < nrows takes row top + g and walks it left to
 * right, adding each pixel's nine terms to its sums in pixel order: no
 * local memory, no barrier. The threshold windows (3x3 of flt of each of
 * the six CSF planes) slide along the row: each step loads one new column.
 * It reads the CSF planes and the reference's bands alone (the decouple
 * writes nothing else with csf_only): flt is recomputed from the CSF with
 * the decouple's operations (fadm_flt), and |r * rf| is |csf(r)| (the
 * product's two orders round alike). Two kernels, one walk:
 * float_adm_cm_rows for p = 3 (products of three), float_adm_cm_rows_powf
 * for any other p; each ignores its `cubes` argument (the WGSL dialect's
 * reason: lavapipe runs both sides of a branch on p).
 * --------------------------------------------------------------------- */
FUNC float fadm_band_sum(const float *win, float csf)
{
    /* win: columns j - 1, j, j + 1, each rows above, own, below. */
    float sum = 0.0f;
    sum = ADD_RN(sum, win[0]);
    sum = ADD_RN(sum, win[3]);
    sum = ADD_RN(sum, win[6]);
    sum = ADD_RN(sum, win[1]);
    sum = (float)((double)sum + 0.0666666701 * (double)fabs(csf));
    sum = ADD_RN(sum, win[7]);
    sum = ADD_RN(sum, win[2]);
    sum = ADD_RN(sum, win[5]);
    sum = ADD_RN(sum, win[8]);
    return sum;
}

FUNC void fadm_cm_rows_walk(GLOBAL const float *bands, GLOBAL const float *work, GLOBAL float *rows, ulp_u32 bw,
                            ulp_u32 bh, ulp_u32 base, ulp_u32 top, ulp_u32 left, ulp_u32 right, float rf0, float rf1,
                            float rf2, ulp_u32 bypass_cm, ulp_u32 cubes, float p, ulp_u32 rows_base, ulp_u32 g)
{
    const int i = (int)(top + g), w = (int)bw;
    const ulp_u32 plane = bw * bh;
    const ulp_u32 rws[3] = {(ulp_u32)(fadm_nb(i - 1, (int)bh) * w), (ulp_u32)(i * w),
                            (ulp_u32)(fadm_nb(i + 1, (int)bh) * w)};
    const float rf[3] = {rf0, rf1, rf2};
    /* win[t][9]: flt of the CSF planes, t = 0..2 planes 6 + b (CSF of a),
     * 3..5 planes 12 + b (CSF of r); column-major 3x3. own[t][c]: the CSF
     * itself on the own row, columns j (c = 0) and j + 1 (c = 1). */
    float win[6][9], own[6][2];
    const ulp_u32 first[6] = {6u, 7u, 8u, 12u, 13u, 14u};
    const int j0 = (int)left;
    const ulp_u32 c0[3] = {(ulp_u32)fadm_nb(j0 - 1, w), (ulp_u32)j0, (ulp_u32)fadm_nb(j0 + 1, w)};
    for (int t = 0; t < 6; t++) {
        for (int c = 0; c < 3; c++) {
            for (int r = 0; r < 3; r++) {
                const float csf = work[first[t] * plane + rws[r] + c0[c]];
                win[t][3 * c + r] = fadm_flt(csf);
                if (r == 1 && c > 0)
                    own[t][c - 1] = csf;
            }
        }
    }
    float sums[9];
    for (int k = 0; k < 9; k++)
        sums[k] = 0.0f;
    for (ulp_u32 j = left; j < right; j++) {
        if (j > left) {
            const ulp_u32 col = (ulp_u32)fadm_nb((int)j + 1, w);
            for (int t = 0; t < 6; t++) {
                for (int k = 0; k < 6; k++)
                    win[t][k] = win[t][k + 3];
                own[t][0] = own[t][1];
                for (int r = 0; r < 3; r++) {
                    const float csf = work[first[t] * plane + rws[r] + col];
                    win[t][6 + r] = fadm_flt(csf);
                    if (r == 1)
                        own[t][1] = csf;
                }
            }
        }
        const ulp_u32 at = rws[1] + j;
        float thr_a = 0.0f, thr_r = 0.0f;
        if (!bypass_cm) {
            for (int b = 0; b < 3; b++) {
                thr_a = ADD_RN(thr_a, fadm_band_sum(win[b], own[b][0]));
                thr_r = ADD_RN(thr_r, fadm_band_sum(win[3 + b], own[3 + b][0]));
            }
        }
        for (int b = 0; b < 3; b++) {
            /* |r * rf| - thr_a: r's CSF is own[3 + b]; a's is own[b]. */
            float x = SUB_RN(fabs(own[3 + b][0]), thr_a);
            sums[b] = ADD_RN(sums[b], fadm_power(x < 0.0f ? 0.0f : x, cubes, p));
            x = SUB_RN(fabs(own[b][0]), thr_r);
            sums[3 + b] = ADD_RN(sums[3 + b], fadm_power(x < 0.0f ? 0.0f : x, cubes, p));
            x = fabs(MUL_RN(rf[b], bands[base + (1u + (ulp_u32)b) * plane + at]));
            sums[6 + b] = ADD_RN(sums[6 + b], fadm_power(x, cubes, p));
        }
    }
    for (ulp_u32 k = 0; k < 9; k++)
        rows[9u * (rows_base + g) + k] = sums[k];
}

KERNEL float_adm_cm_rows(GLOBAL const float *bands, GLOBAL const float *work, GLOBAL float *rows, ulp_u32 bw,
                         ulp_u32 bh, ulp_u32 base, ulp_u32 top, ulp_u32 left, ulp_u32 right, float rf0, float rf1,
                         float rf2, ulp_u32 bypass_cm, ulp_u32 cubes, float p, ulp_u32 rows_base, ulp_u32 nrows)
{
    const ulp_u32 g = GLOBAL_ID(0);
    if (g < nrows)
        fadm_cm_rows_walk(bands, work, rows, bw, bh, base, top, left, right, rf0, rf1, rf2, bypass_cm, 1u, p,
                          rows_base, g);
}

KERNEL float_adm_cm_rows_powf(GLOBAL const float *bands, GLOBAL const float *work, GLOBAL float *rows, ulp_u32 bw,
                              ulp_u32 bh, ulp_u32 base, ulp_u32 top, ulp_u32 left, ulp_u32 right, float rf0,
                              float rf1, float rf2, ulp_u32 bypass_cm, ulp_u32 cubes, float p, ulp_u32 rows_base,
                              ulp_u32 nrows)
{
    const ulp_u32 g = GLOBAL_ID(0);
    if (g < nrows)
        fadm_cm_rows_walk(bands, work, rows, bw, bh, base, top, left, right, rf0, rf1, rf2, bypass_cm, 0u, p,
                          rows_base, g);
}

/* ---------------------------------------------------------------------
 * float_adm_dwt0_strips, float_adm_dwt_strips: float_adm_dwt0's and
 * float_adm_dwt's CPU-driver shape, the same bits. Work item x of image
 * z walks outputs (i, FADM_STRIP k) .. (i, FADM_STRIP k + 15), i = x /
 * strips and k = x % strips (strips a row),
 * computing each column's vertical filters once: an output's last two
 * columns are the next one's first two.
 * --------------------------------------------------------------------- */
#define FADM_STRIP 16

/* Column col's vertical (lo, hi) over the four rows rws of src. */
FUNC void fadm_vert0(GLOBAL const ulp_u8 *src, const int *rws, int col, ulp_u32 bytes_per_sample, float inv_scaler,
                     float *lo, float *hi)
{
    float s[4];
    for (int k = 0; k < 4; k++) {
        const float v = (float)ulp_sample(src, (ulp_u32)(rws[k] + col), bytes_per_sample);
        s[k] = ADD_RN(bytes_per_sample == 1 ? v : MUL_RN(v, inv_scaler), -128.0f);
    }
    *lo = fadm_filter(0, s);
    *hi = fadm_filter(1, s);
}

FUNC void fadm_vert(GLOBAL const float *src, const int *rws, int col, float *lo, float *hi)
{
    float s[4];
    for (int k = 0; k < 4; k++)
        s[k] = src[rws[k] + col];
    *lo = fadm_filter(0, s);
    *hi = fadm_filter(1, s);
}

/* One strip of row i from column `first` of picture img (both kernels'
 * body). */
FUNC void fadm_dwt0_strip(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL float *bands, ulp_u32 width,
                          ulp_u32 height, ulp_u32 bytes_per_sample, float inv_scaler, ulp_u32 out_base,
                          ulp_u32 lo_only, int img, int i, int first)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    const int last = first + FADM_STRIP < bw ? first + FADM_STRIP : bw;
    GLOBAL const ulp_u8 *src = img == 0 ? ref : dis;
    int rws[4];
    for (int k = 0; k < 4; k++)
        rws[k] = fadm_mirror(2 * i - 1 + k, h) * w;
    float lo[4], hi[4];
    fadm_vert0(src, rws, fadm_mirror(2 * first - 1, w), bytes_per_sample, inv_scaler, &lo[0], &hi[0]);
    fadm_vert0(src, rws, fadm_mirror(2 * first, w), bytes_per_sample, inv_scaler, &lo[1], &hi[1]);
    const ulp_u32 plane = (ulp_u32)(bw * bh);
    for (int j = first; j < last; j++) {
        fadm_vert0(src, rws, fadm_mirror(2 * j + 1, w), bytes_per_sample, inv_scaler, &lo[2], &hi[2]);
        fadm_vert0(src, rws, fadm_mirror(2 * j + 2, w), bytes_per_sample, inv_scaler, &lo[3], &hi[3]);
        fadm_store(bands, out_base + (ulp_u32)img * 4u * plane + (ulp_u32)(i * bw + j), plane, lo, hi, lo_only);
        lo[0] = lo[2];
        hi[0] = hi[2];
        lo[1] = lo[3];
        hi[1] = hi[3];
    }
}

KERNEL float_adm_dwt0_strips(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL float *bands, ulp_u32 width,
                             ulp_u32 height, ulp_u32 bytes_per_sample, float inv_scaler, ulp_u32 out_base,
                             ulp_u32 lo_only, ulp_u32 edges)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    /* Work item x takes strip x % strips of row x / strips, or with
     * edges the first (x even) or last strip of row x / 2. */
    const int strips = (bw + FADM_STRIP - 1) / FADM_STRIP, x = (int)GLOBAL_ID(0), img = (int)GROUP_ID(2);
    const int per_row = edges ? 2 : strips;
    if (x >= per_row * bh)
        return;
    const int k = edges ? ((x & 1) ? strips - 1 : 0) : x % strips;
    fadm_dwt0_strip(ref, dis, bands, width, height, bytes_per_sample, inv_scaler, out_base, lo_only, img,
                    x / per_row, k * FADM_STRIP);
}

/* float_adm_dwt0_words: float_adm_dwt0_strips for the inner strips (1 ..
 * strips - 2 of each row), where the WGSL dialect reads words; here the
 * same strip body. */
KERNEL float_adm_dwt0_words(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL float *bands, ulp_u32 width,
                            ulp_u32 height, ulp_u32 bytes_per_sample, float inv_scaler, ulp_u32 out_base,
                            ulp_u32 lo_only, ulp_u32 edges)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    const int strips = (bw + FADM_STRIP - 1) / FADM_STRIP, x = (int)GLOBAL_ID(0), img = (int)GROUP_ID(2);
    const int inner = strips - 2;
    (void)edges;
    if (x >= inner * bh)
        return;
    fadm_dwt0_strip(ref, dis, bands, width, height, bytes_per_sample, inv_scaler, out_base, lo_only, img, x / inner,
                    (1 + x % inner) * FADM_STRIP);
}

KERNEL float_adm_dwt_strips(GLOBAL float *bands, ulp_u32 width, ulp_u32 height, ulp_u32 in_base, ulp_u32 in_plane,
                            ulp_u32 out_base)
{
    const int w = (int)width, h = (int)height;
    const int bw = (w + 1) / 2, bh = (h + 1) / 2;
    /* Work item x takes strip x % strips of row x / strips. */
    const int strips = (bw + FADM_STRIP - 1) / FADM_STRIP, x = (int)GLOBAL_ID(0), img = (int)GROUP_ID(2);
    if (x >= strips * bh)
        return;
    const int i = x / strips, first = (x % strips) * FADM_STRIP;
    const int last = first + FADM_STRIP < bw ? first + FADM_STRIP : bw;
    GLOBAL const float *src = bands + in_base + (ulp_u32)img * 4u * in_plane;
    int rws[4];
    for (int k = 0; k < 4; k++)
        rws[k] = fadm_mirror(2 * i - 1 + k, h) * w;
    float lo[4], hi[4];
    fadm_vert(src, rws, fadm_mirror(2 * first - 1, w), &lo[0], &hi[0]);
    fadm_vert(src, rws, fadm_mirror(2 * first, w), &lo[1], &hi[1]);
    const ulp_u32 plane = (ulp_u32)(bw * bh);
    for (int j = first; j < last; j++) {
        fadm_vert(src, rws, fadm_mirror(2 * j + 1, w), &lo[2], &hi[2]);
        fadm_vert(src, rws, fadm_mirror(2 * j + 2, w), &lo[3], &hi[3]);
        fadm_store(bands, out_base + (ulp_u32)img * 4u * plane + (ulp_u32)(i * bw + j), plane, lo, hi, 0);
        lo[0] = lo[2];
        hi[0] = hi[2];
        lo[1] = lo[3];
        hi[1] = hi[3];
    }
}

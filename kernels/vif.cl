/*
 * vif family: `vif` (contracts: VIF_VERTICAL and VIF_HORIZONTAL in
 * src/features/vif/gpu_integer.rs). libvmaf integer_vif.c's integers, each
 * of the width libvmaf gives it (u32 sums that wrap as C's, u64 where C
 * widens), rounded by the same shifts; the statistic's few double
 * operations are the same IEEE operations in the same order, never fused
 * (--fmad=false, FP_CONTRACT OFF). Integer sums are exact in any order, so
 * the pixels are spread over work items freely; every frame's sums equal
 * the CPU reference's (src/features/vif/integer.rs).
 */
#include "ulp.h"

/* integer_vif.c's border rule: -i reads i, n - 1 + i reads n - 1 - i;
 * clamped after, so a picture smaller than the contract allows reads in
 * bounds (the host refuses such pictures). */
FUNC int vif_mirror(int i, int n)
{
    const int m = i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i);
    return m < 0 ? 0 : (m >= n ? n - 1 : m);
}

/* Sample i of a plane stored as 1 byte (format 0), a little-endian u16
 * (format 1) or a u32 (format 2) per sample. */
FUNC ulp_u32 vif_sample(GLOBAL const ulp_u32 *plane, ulp_u32 i, ulp_u32 format)
{
    if (format == 0)
        return ((GLOBAL const ulp_u8 *)plane)[i];
    if (format == 1)
        return ((GLOBAL const ulp_u16 *)plane)[i];
    return plane[i];
}

/* vif_vertical: the vertical passes of one scale. Work item (x, y) of a
 * w x h picture sums, over taps[tap0 .. tap0 + width) and rows
 * mirror(y - width / 2 + k):
 *   vif_statistic_8 (scale 0, 8-bit): u32 sums of c·r, c·d, c·r·r, c·d·d,
 *     c·r·d, wrapping; writes (Σ c·r + 128) >> 8, (Σ c·d + 128) >> 8 and the
 *     three raw sums;
 *   vif_statistic_16: u32 sums of c·r, c·d, u64 sums of c·r·r, ...; writes
 *     (u16)((Σ + mu_add) >> mu_shift) twice and (u32)((Σ + sq_add) >>
 *     sq_shift) three times;
 * into vsum[k * w * h + y * w + x] for k = mu1, mu2, xx, yy, xy. On even
 * rows y < 2 (h / 2), when sub_width > 0, it also sums the next scale's
 * filter (taps[sub_tap0 .. + sub_width)) over r and d, u32 wrapping, and
 * writes (u16)((Σ + sub_add) >> sub_shift) to vsub[k * w * (h / 2) +
 * (y / 2) * w + x] (subsample_rd_8 / subsample_rd_16's vertical pass).
 * `mode` 8 selects the first, 16 the second. */
KERNEL vif_vertical(GLOBAL const ulp_u32 *ref, GLOBAL const ulp_u32 *dis, GLOBAL const ulp_u32 *taps,
                    GLOBAL ulp_u32 *vsum, GLOBAL ulp_u32 *vsub, ulp_u32 w, ulp_u32 h, ulp_u32 format,
                    ulp_u32 tap0, ulp_u32 width, ulp_u32 mode, ulp_u32 mu_add, ulp_u32 mu_shift, ulp_u32 sq_add,
                    ulp_u32 sq_shift, ulp_u32 sub_tap0, ulp_u32 sub_width, ulp_u32 sub_add, ulp_u32 sub_shift)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1);
    if (x >= w || y >= h)
        return;
    const ulp_u32 plane = w * h;
    const int hw = (int)(width / 2);
    ulp_u32 mu1 = 0, mu2 = 0;
    if (mode == 8) {
        ulp_u32 xx = 0, yy = 0, xy = 0;
        for (ulp_u32 k = 0; k < width; k++) {
            const ulp_u32 row = (ulp_u32)vif_mirror((int)y - hw + (int)k, (int)h);
            const ulp_u32 c = taps[tap0 + k];
            const ulp_u32 a = vif_sample(ref, row * w + x, format), b = vif_sample(dis, row * w + x, format);
            const ulp_u32 ca = c * a, cb = c * b;
            mu1 += ca;
            mu2 += cb;
            xx += ca * a;
            yy += cb * b;
            xy += ca * b;
        }
        vsum[y * w + x] = (mu1 + 128u) >> 8;
        vsum[plane + y * w + x] = (mu2 + 128u) >> 8;
        vsum[2 * plane + y * w + x] = xx;
        vsum[3 * plane + y * w + x] = yy;
        vsum[4 * plane + y * w + x] = xy;
    } else {
        ulp_u64 xx = 0, yy = 0, xy = 0;
        for (ulp_u32 k = 0; k < width; k++) {
            const ulp_u32 row = (ulp_u32)vif_mirror((int)y - hw + (int)k, (int)h);
            const ulp_u32 c = taps[tap0 + k];
            const ulp_u32 a = vif_sample(ref, row * w + x, format), b = vif_sample(dis, row * w + x, format);
            const ulp_u32 ca = c * a, cb = c * b;
            mu1 += ca;
            mu2 += cb;
            xx += (ulp_u64)ca * a;
            yy += (ulp_u64)cb * b;
            xy += (ulp_u64)ca * b;
        }
        vsum[y * w + x] = (ulp_u32)(ulp_u16)((mu1 + mu_add) >> mu_shift);
        vsum[plane + y * w + x] = (ulp_u32)(ulp_u16)((mu2 + mu_add) >> mu_shift);
        vsum[2 * plane + y * w + x] = (ulp_u32)((xx + sq_add) >> sq_shift);
        vsum[3 * plane + y * w + x] = (ulp_u32)((yy + sq_add) >> sq_shift);
        vsum[4 * plane + y * w + x] = (ulp_u32)((xy + sq_add) >> sq_shift);
    }
    if (sub_width > 0 && (y & 1u) == 0 && y / 2 < h / 2) {
        const int sub_half = (int)(sub_width / 2);
        ulp_u32 sr = 0, sd = 0;
        for (ulp_u32 k = 0; k < sub_width; k++) {
            const ulp_u32 row = (ulp_u32)vif_mirror((int)y - sub_half + (int)k, (int)h);
            const ulp_u32 c = taps[sub_tap0 + k];
            sr += c * vif_sample(ref, row * w + x, format);
            sd += c * vif_sample(dis, row * w + x, format);
        }
        const ulp_u32 sub_plane = w * (h / 2);
        vsub[(y / 2) * w + x] = (ulp_u32)(ulp_u16)((sr + sub_add) >> sub_shift);
        vsub[sub_plane + (y / 2) * w + x] = (ulp_u32)(ulp_u16)((sd + sub_add) >> sub_shift);
    }
}

/* integer_vif.c's log2 table entry i, 32768 <= i < 65536, from the packed
 * table (tables.rs log2_table_packed: two 16-bit entries a word). */
FUNC int vif_log2_entry(GLOBAL const ulp_u32 *table, ulp_u32 i)
{
    const ulp_u32 j = i - 32768u;
    return (int)((table[j >> 1] >> ((j & 1u) * 16u)) & 0xffffu);
}

/* integer_vif.h log2_32 / log2_64: 2048 log2(v) from the table, v >= 2^16
 * (2^17 for the 64-bit one), normalised to its 16 leading bits. */
FUNC int vif_log2_32(GLOBAL const ulp_u32 *table, ulp_u32 v)
{
    const int k = 16 - ((int)ULP_CLZ64((ulp_u64)v) - 32); /* 16 - clz32(v) */
    return vif_log2_entry(table, v >> k) + 2048 * k;
}

FUNC int vif_log2_64(GLOBAL const ulp_u32 *table, ulp_u64 v)
{
    const int k = 48 - (int)ULP_CLZ64(v);
    return vif_log2_entry(table, (ulp_u32)(v >> k)) + 2048 * k;
}

/* vif_statistic_*'s share of one pixel from its five filtered sums, added
 * to sums (num_log, den_log, num_non_log, den_non_log): every integer and
 * double operation of integer_vif.c kept. */
FUNC void vif_statistic(ulp_u64 *sums, GLOBAL const ulp_u32 *table, double gain_limit, double eps, ulp_u32 mu1,
                        ulp_u32 mu2, ulp_u64 xx, ulp_u64 yy, ulp_u64 xy)
{
    const int sigma_nsq = 65536 << 1;
    const ulp_u32 mu1_sq = (ulp_u32)(((ulp_u64)mu1 * mu1 + 2147483648u) >> 32);
    const ulp_u32 mu2_sq = (ulp_u32)(((ulp_u64)mu2 * mu2 + 2147483648u) >> 32);
    const ulp_u32 mu1_mu2 = (ulp_u32)(((ulp_u64)mu1 * mu2 + 2147483648u) >> 32);
    const int sigma1_sq = (int)((ulp_u32)((xx + 32768u) >> 16) - mu1_sq);
    int sigma2_sq = (int)((ulp_u32)((yy + 32768u) >> 16) - mu2_sq);
    const int sigma12 = (int)((ulp_u32)((xy + 32768u) >> 16) - mu1_mu2);
    sigma2_sq = sigma2_sq > 0 ? sigma2_sq : 0;
    if (sigma1_sq >= sigma_nsq) {
        sums[1] += (ulp_u64)(ulp_i64)(vif_log2_32(table, (ulp_u32)sigma_nsq + (ulp_u32)sigma1_sq) - 2048 * 17);
        if (sigma12 > 0 && sigma2_sq > 0) {
            double g = (double)sigma12 / ((double)sigma1_sq + eps);
            const double sv = (double)sigma2_sq - g * (double)sigma12;
            /* C truncates to int32; a negative value becomes 0. */
            const ulp_u32 sv_sq = sv > 0.0 ? (ulp_u32)(int)sv : 0u;
            g = g < gain_limit ? g : gain_limit;
            const ulp_u32 numer1 = sv_sq + (ulp_u32)sigma_nsq;
            const ulp_i64 numer1_tmp = (ulp_i64)(g * g * (double)sigma1_sq) + (ulp_i64)numer1;
            sums[0] += (ulp_u64)(ulp_i64)(vif_log2_64(table, (ulp_u64)numer1_tmp) - vif_log2_64(table, numer1));
        }
    } else {
        sums[2] += (ulp_u64)sigma2_sq;
        sums[3] += 1;
    }
}

/* vif_vertical_strip: vif_vertical's arithmetic in the shape for CPU
 * drivers (contract: VIF_VERTICAL_STRIP). Work item (x, g) makes rows y0 ..
 * y0 + 7 (y0 = 8 g, those below h) of column x from a window of eight
 * samples a picture that slides a row per tap (each sample loaded once);
 * the next scale's filter, whose taps are the middle sub_width of this
 * scale's, reads the same rows, so it adds from the same window at rows
 * y0, y0 + 2, y0 + 4, y0 + 6. The sums are integers: the same bits in any
 * order (vif_statistic_8's u32 sums are the u64 sums' low 32 bits). */
FUNC void vif_vertical_column(GLOBAL const ulp_u32 *ref, GLOBAL const ulp_u32 *dis, GLOBAL const ulp_u32 *taps,
                              GLOBAL ulp_u32 *vsum, GLOBAL ulp_u32 *vsub, ulp_u32 w, ulp_u32 h, ulp_u32 format,
                              ulp_u32 tap0, ulp_u32 width, ulp_u32 mode, ulp_u32 mu_add, ulp_u32 mu_shift,
                              ulp_u32 sq_add, ulp_u32 sq_shift, ulp_u32 sub_tap0, ulp_u32 sub_width,
                              ulp_u32 sub_add, ulp_u32 sub_shift, ulp_u32 x, ulp_u32 y0)
{
    const ulp_u32 plane = w * h;
    const int p0 = (int)y0 - (int)(width / 2);
    const ulp_u32 d = width / 2 - sub_width / 2;
    ulp_u32 wa[8], wb[8], mu1[8], mu2[8], sr[4], sd[4];
    ulp_u64 xx[8], yy[8], xy[8];
    for (int r = 0; r < 8; r++) {
        mu1[r] = mu2[r] = 0;
        xx[r] = yy[r] = xy[r] = 0;
    }
    for (int m = 0; m < 4; m++)
        sr[m] = sd[m] = 0;
    for (int r = 0; r < 7; r++) {
        const ulp_u32 i = (ulp_u32)vif_mirror(p0 + r, (int)h) * w + x;
        wa[r] = vif_sample(ref, i, format);
        wb[r] = vif_sample(dis, i, format);
    }
    for (ulp_u32 k = 0; k < width; k++) {
        const ulp_u32 i = (ulp_u32)vif_mirror(p0 + (int)k + 7, (int)h) * w + x;
        wa[7] = vif_sample(ref, i, format);
        wb[7] = vif_sample(dis, i, format);
        const ulp_u32 c = taps[tap0 + k];
        for (int r = 0; r < 8; r++) {
            const ulp_u32 ca = c * wa[r], cb = c * wb[r];
            mu1[r] += ca;
            mu2[r] += cb;
            xx[r] += (ulp_u64)ca * wa[r];
            yy[r] += (ulp_u64)cb * wb[r];
            xy[r] += (ulp_u64)ca * wb[r];
        }
        if (k - d < sub_width) {
            const ulp_u32 cs = taps[sub_tap0 + k - d];
            for (int m = 0; m < 4; m++) {
                sr[m] += cs * wa[2 * m];
                sd[m] += cs * wb[2 * m];
            }
        }
        for (int r = 0; r < 7; r++) {
            wa[r] = wa[r + 1];
            wb[r] = wb[r + 1];
        }
    }
    for (ulp_u32 r = 0; r < 8 && y0 + r < h; r++) {
        const ulp_u32 o = (y0 + r) * w + x;
        if (mode == 8) {
            vsum[o] = (mu1[r] + 128u) >> 8;
            vsum[plane + o] = (mu2[r] + 128u) >> 8;
            vsum[2 * plane + o] = (ulp_u32)xx[r];
            vsum[3 * plane + o] = (ulp_u32)yy[r];
            vsum[4 * plane + o] = (ulp_u32)xy[r];
        } else {
            vsum[o] = (ulp_u32)(ulp_u16)((mu1[r] + mu_add) >> mu_shift);
            vsum[plane + o] = (ulp_u32)(ulp_u16)((mu2[r] + mu_add) >> mu_shift);
            vsum[2 * plane + o] = (ulp_u32)((xx[r] + sq_add) >> sq_shift);
            vsum[3 * plane + o] = (ulp_u32)((yy[r] + sq_add) >> sq_shift);
            vsum[4 * plane + o] = (ulp_u32)((xy[r] + sq_add) >> sq_shift);
        }
    }
    if (sub_width > 0) {
        const ulp_u32 sub_plane = w * (h / 2);
        for (ulp_u32 m = 0; m < 4 && y0 / 2 + m < h / 2; m++) {
            vsub[(y0 / 2 + m) * w + x] = (ulp_u32)(ulp_u16)((sr[m] + sub_add) >> sub_shift);
            vsub[sub_plane + (y0 / 2 + m) * w + x] = (ulp_u32)(ulp_u16)((sd[m] + sub_add) >> sub_shift);
        }
    }
}

KERNEL vif_vertical_strip(GLOBAL const ulp_u32 *ref, GLOBAL const ulp_u32 *dis, GLOBAL const ulp_u32 *taps,
                          GLOBAL ulp_u32 *vsum, GLOBAL ulp_u32 *vsub, ulp_u32 w, ulp_u32 h, ulp_u32 format,
                          ulp_u32 tap0, ulp_u32 width, ulp_u32 mode, ulp_u32 mu_add, ulp_u32 mu_shift,
                          ulp_u32 sq_add, ulp_u32 sq_shift, ulp_u32 sub_tap0, ulp_u32 sub_width, ulp_u32 sub_add,
                          ulp_u32 sub_shift)
{
    const ulp_u32 x = GLOBAL_ID(0), y0 = GLOBAL_ID(1) * 8;
    if (x < w && y0 < h)
        vif_vertical_column(ref, dis, taps, vsum, vsub, w, h, format, tap0, width, mode, mu_add, mu_shift, sq_add,
                            sq_shift, sub_tap0, sub_width, sub_add, sub_shift, x, y0);
}

/* vif_vertical_quads (contract: VIF_VERTICAL_QUADS): vif_vertical_strip's
 * outputs, work item (q, g) making columns 4q .. 4q + 3. The Vulkan
 * dialect reads a row's four byte samples as one word and writes each sum
 * of four columns as one vec4 (what lavapipe pays for is accesses); here
 * each column is vif_vertical_strip's, the same sums. */
KERNEL vif_vertical_quads(GLOBAL const ulp_u32 *ref, GLOBAL const ulp_u32 *dis, GLOBAL const ulp_u32 *taps,
                          GLOBAL ulp_u32 *vsum, GLOBAL ulp_u32 *vsub, ulp_u32 w, ulp_u32 h, ulp_u32 format,
                          ulp_u32 tap0, ulp_u32 width, ulp_u32 mode, ulp_u32 mu_add, ulp_u32 mu_shift,
                          ulp_u32 sq_add, ulp_u32 sq_shift, ulp_u32 sub_tap0, ulp_u32 sub_width, ulp_u32 sub_add,
                          ulp_u32 sub_shift)
{
    const ulp_u32 x0 = GLOBAL_ID(0) * 4, y0 = GLOBAL_ID(1) * 8;
    for (ulp_u32 x = x0; x < x0 + 4 && x < w && y0 < h; x++)
        vif_vertical_column(ref, dis, taps, vsum, vsub, w, h, format, tap0, width, mode, mu_add, mu_shift, sq_add,
                            sq_shift, sub_tap0, sub_width, sub_add, sub_shift, x, y0);
}

#define VIF_WG 256
#define VIF_ROWS 8

/* vif_horizontal: the horizontal pass and statistic of one scale. Work
 * group (gx, gy) covers columns gx * 256 + [0, 256) and rows gy * 8 +
 * [0, 8) of a w x h picture; work item i takes column gx * 256 + i of each
 * of those rows. At pixel (x, y), over taps[tap0 .. + width) and columns
 * mirror(x - width / 2 + k) of row y of vsum's five planes, it sums
 * mu1, mu2 (u32, wrapping) and xx, yy, xy (u64), and adds the pixel's
 * share to the four sums of vif_statistic_* (integer_vif.c, every integer
 * and double operation kept; table: the log2 table's entries 32768 ..
 * 65535, two 16-bit entries a word (tables.rs log2_table_packed);
 * dparams[0]: vif_enhn_gain_limit, dparams[1]: its eps, 65536 * 1e-10). The group's sums — num_log, den_log,
 * num_non_log, den_non_log — go to partials[8 * (gy * groups_x + gx) ..]
 * as four (lo, hi) u32 pairs.
 * When sub_width > 0, at even x < 2 (w / 2) and even y < 2 (h / 2) it also
 * sums taps[sub_tap0 .. + sub_width) over columns mirror(x - sub_width / 2
 * + k) of row y / 2 of vsub's two planes (u32, wrapping) and writes
 * (Σ + 32768) >> 16 truncated to u16 to next_ref / next_dis[(y / 2) *
 * (w / 2) + x / 2] (the horizontal pass of subsample_rd_* and
 * decimate_and_pad). */
KERNEL vif_horizontal(GLOBAL const ulp_u32 *vsum, GLOBAL const ulp_u32 *vsub, GLOBAL const ulp_u32 *taps,
                      GLOBAL const ulp_u32 *table, GLOBAL const double *dparams, GLOBAL ulp_u32 *partials,
                      GLOBAL ulp_u32 *next_ref, GLOBAL ulp_u32 *next_dis, ulp_u32 w, ulp_u32 h, ulp_u32 tap0,
                      ulp_u32 width, ulp_u32 sub_tap0, ulp_u32 sub_width)
{
    LOCAL ulp_u32 part[VIF_WG * 8];
    const ulp_u32 lid = LOCAL_ID(0);
    const ulp_u32 x = GROUP_ID(0) * VIF_WG + lid;
    const ulp_u32 y0 = GROUP_ID(1) * VIF_ROWS;
    const ulp_u32 plane = w * h;
    const int hw = (int)(width / 2);
    const double gain_limit = dparams[0], eps = dparams[1];
    ulp_u64 num_log = 0, den_log = 0, num_non_log = 0, den_non_log = 0;
    for (ulp_u32 y = y0; y < y0 + VIF_ROWS && y < h && x < w; y++) {
        ulp_u32 mu1 = 0, mu2 = 0;
        ulp_u64 xx = 0, yy = 0, xy = 0;
        for (ulp_u32 k = 0; k < width; k++) {
            const ulp_u32 i = y * w + (ulp_u32)vif_mirror((int)x - hw + (int)k, (int)w);
            const ulp_u32 c = taps[tap0 + k];
            mu1 += c * vsum[i];
            mu2 += c * vsum[plane + i];
            xx += (ulp_u64)c * vsum[2 * plane + i];
            yy += (ulp_u64)c * vsum[3 * plane + i];
            xy += (ulp_u64)c * vsum[4 * plane + i];
        }
        ulp_u64 sums[4] = {num_log, den_log, num_non_log, den_non_log};
        vif_statistic(sums, table, gain_limit, eps, mu1, mu2, xx, yy, xy);
        num_log = sums[0];
        den_log = sums[1];
        num_non_log = sums[2];
        den_non_log = sums[3];
        if (sub_width > 0 && ((x | y) & 1u) == 0 && x / 2 < w / 2 && y / 2 < h / 2) {
            const int sub_half = (int)(sub_width / 2);
            const ulp_u32 sub_plane = w * (h / 2);
            ulp_u32 sr = 0, sd = 0;
            for (ulp_u32 k = 0; k < sub_width; k++) {
                const ulp_u32 i = (y / 2) * w + (ulp_u32)vif_mirror((int)x - sub_half + (int)k, (int)w);
                const ulp_u32 c = taps[sub_tap0 + k];
                sr += c * vsub[i];
                sd += c * vsub[sub_plane + i];
            }
            next_ref[(y / 2) * (w / 2) + x / 2] = (ulp_u32)(ulp_u16)((sr + 32768u) >> 16);
            next_dis[(y / 2) * (w / 2) + x / 2] = (ulp_u32)(ulp_u16)((sd + 32768u) >> 16);
        }
    }
    /* The group's sums: every work item's four, then work items 0..3 each
     * add one of them over the group (u64 integers: any order). */
    const ulp_u64 mine[4] = {num_log, den_log, num_non_log, den_non_log};
    for (int q = 0; q < 4; q++) {
        part[(q * VIF_WG + lid) * 2] = (ulp_u32)mine[q];
        part[(q * VIF_WG + lid) * 2 + 1] = (ulp_u32)(mine[q] >> 32);
    }
    BARRIER();
    if (lid < 4) {
        ulp_u64 total = 0;
        for (ulp_u32 i = 0; i < VIF_WG; i++)
            total += (ulp_u64)part[(lid * VIF_WG + i) * 2] | ((ulp_u64)part[(lid * VIF_WG + i) * 2 + 1] << 32);
        const ulp_u32 group = GROUP_ID(1) * NUM_GROUPS(0) + GROUP_ID(0);
        partials[(group * 4 + lid) * 2] = (ulp_u32)total;
        partials[(group * 4 + lid) * 2 + 1] = (ulp_u32)(total >> 32);
    }
}

/* vif_horizontal_strip: vif_horizontal's arithmetic in the shape for CPU
 * drivers (contract: VIF_HORIZONTAL_STRIP). Work item (t, g) makes pixels
 * x0 .. x0 + 7 (x0 = 8 t, those below w) of rows 8 g .. 8 g + 7 (below h)
 * from windows of eight samples a plane that slide a column per tap (each
 * sample loaded once), adds their statistic to its own four sums and
 * writes them to partials[8 * (g * 64 * NUM_GROUPS(0) + t) ..] as (lo, hi)
 * u32 pairs; on even rows it also makes the next scale's pixels x0 / 2 ..
 * x0 / 2 + 3 of row y / 2 as vif_horizontal does. */
KERNEL vif_horizontal_strip(GLOBAL const ulp_u32 *vsum, GLOBAL const ulp_u32 *vsub, GLOBAL const ulp_u32 *taps,
                            GLOBAL const ulp_u32 *table, GLOBAL const double *dparams, GLOBAL ulp_u32 *partials,
                            GLOBAL ulp_u32 *next_ref, GLOBAL ulp_u32 *next_dis, ulp_u32 w, ulp_u32 h,
                            ulp_u32 tap0, ulp_u32 width, ulp_u32 sub_tap0, ulp_u32 sub_width)
{
    const ulp_u32 t = GLOBAL_ID(0), x0 = GLOBAL_ID(0) * 8, y0 = GROUP_ID(1) * VIF_ROWS;
    const ulp_u32 item = GROUP_ID(1) * NUM_GROUPS(0) * LOCAL_SIZE(0) + t;
    const ulp_u32 plane = w * h;
    const double gain_limit = dparams[0], eps = dparams[1];
    ulp_u64 sums[4] = {0, 0, 0, 0};
    const int p0 = (int)x0 - (int)(width / 2);
    for (ulp_u32 y = y0; y < y0 + VIF_ROWS && y < h && x0 < w; y++) {
        const ulp_u32 row = y * w;
        ulp_u32 win[5][8];
        ulp_u32 mu[2][8];
        ulp_u64 sq[3][8];
        for (int r = 0; r < 8; r++) {
            mu[0][r] = mu[1][r] = 0;
            sq[0][r] = sq[1][r] = sq[2][r] = 0;
        }
        for (int q = 0; q < 5; q++)
            for (int r = 0; r < 7; r++)
                win[q][r] = vsum[(ulp_u32)q * plane + row + (ulp_u32)vif_mirror(p0 + r, (int)w)];
        for (ulp_u32 k = 0; k < width; k++) {
            const ulp_u32 i = row + (ulp_u32)vif_mirror(p0 + (int)k + 7, (int)w);
            const ulp_u32 c = taps[tap0 + k];
            for (int q = 0; q < 5; q++)
                win[q][7] = vsum[(ulp_u32)q * plane + i];
            for (int r = 0; r < 8; r++) {
                mu[0][r] += c * win[0][r];
                mu[1][r] += c * win[1][r];
                for (int q = 0; q < 3; q++)
                    sq[q][r] += (ulp_u64)c * win[q + 2][r];
            }
            for (int q = 0; q < 5; q++)
                for (int r = 0; r < 7; r++)
                    win[q][r] = win[q][r + 1];
        }
        for (ulp_u32 r = 0; r < 8 && x0 + r < w; r++)
            vif_statistic(sums, table, gain_limit, eps, mu[0][r], mu[1][r], sq[0][r], sq[1][r], sq[2][r]);
        if (sub_width > 0 && (y & 1u) == 0 && y / 2 < h / 2) {
            const ulp_u32 sub_plane = w * (h / 2);
            const ulp_u32 srow = (y / 2) * w;
            const int s0 = (int)x0 - (int)(sub_width / 2);
            ulp_u32 sw[2][8], sa[2][8];
            for (int q = 0; q < 2; q++) {
                for (int r = 0; r < 8; r++)
                    sa[q][r] = 0;
                for (int r = 0; r < 7; r++)
                    sw[q][r] = vsub[(ulp_u32)q * sub_plane + srow + (ulp_u32)vif_mirror(s0 + r, (int)w)];
            }
            for (ulp_u32 k = 0; k < sub_width; k++) {
                const ulp_u32 j = srow + (ulp_u32)vif_mirror(s0 + (int)k + 7, (int)w);
                const ulp_u32 c = taps[sub_tap0 + k];
                for (int q = 0; q < 2; q++) {
                    sw[q][7] = vsub[(ulp_u32)q * sub_plane + j];
                    for (int r = 0; r < 8; r++)
                        sa[q][r] += c * sw[q][r];
                    for (int r = 0; r < 7; r++)
                        sw[q][r] = sw[q][r + 1];
                }
            }
            for (ulp_u32 m = 0; m < 4 && x0 / 2 + m < w / 2; m++) {
                next_ref[(y / 2) * (w / 2) + x0 / 2 + m] = (ulp_u32)(ulp_u16)((sa[0][2 * m] + 32768u) >> 16);
                next_dis[(y / 2) * (w / 2) + x0 / 2 + m] = (ulp_u32)(ulp_u16)((sa[1][2 * m] + 32768u) >> 16);
            }
        }
    }
    for (int q = 0; q < 4; q++) {
        partials[item * 8 + (ulp_u32)q * 2] = (ulp_u32)sums[q];
        partials[item * 8 + (ulp_u32)q * 2 + 1] = (ulp_u32)(sums[q] >> 32);
    }
}

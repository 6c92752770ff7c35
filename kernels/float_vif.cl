/*
 * float_vif family: `float_vif` (contracts: FLOAT_VIF_PRESCALE,
 * FLOAT_VIF_VERTICAL, FLOAT_VIF_HORIZONTAL and FLOAT_VIF_ROWS in
 * src/features/vif/gpu_float.rs). Every float operation of libvmaf's
 * float_vif.c / vif.c / vif_tools.c in its order and precision, each
 * rounded on its own (ADD_RN/MUL_RN, never fused), the double ones in
 * double, so each pixel's values are the CPU reference's bits
 * (src/features/vif/float.rs); the sums libvmaf makes in order (each row,
 * then the rows) are made in that order too.
 */
#include "ulp.h"

/* f32 division correctly rounded on every device: the quotient in double
 * (IEEE: correctly rounded wherever doubles exist), then rounded to f32.
 * Rounding twice is innocuous for division when the wider format has at
 * least 2 · 24 + 2 bits (53 >= 50), so this is a / b rounded once, what
 * libvmaf's f32 division gives; a device's own f32 division may be
 * approximate (OpenCL without -cl-fp32-correctly-rounded-divide-sqrt). */
#define FVIF_DIV(a, b) ((float)((double)(a) / (double)(b)))

/* vif_tools.c's border rule for the float filters: -i above, 2n - i - 2
 * below; clamped after (the host refuses pictures where it matters). */
FUNC int fvif_mirror(int i, int n)
{
    const int m = i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i);
    return m < 0 ? 0 : (m >= n ? n - 1 : m);
}

FUNC ulp_u32 fvif_bits(float f)
{
    union {
        float f;
        ulp_u32 u;
    } v;
    v.f = f;
    return v.u;
}

FUNC float fvif_float(ulp_u32 u)
{
    union {
        float f;
        ulp_u32 u;
    } v;
    v.u = u;
    return v.f;
}

/* Sample i of a picture as float_vif sees it: picture_copy's
 * `v / scaler - 128` from 1-byte (format 0) or u16 (format 1) samples, or
 * an f32 picture (format 2). `inv` is 1 / scaler: scalers are powers of
 * two, so v * inv is exactly v / scaler (8-bit: 1, a no-op). */
FUNC float fvif_sample(GLOBAL const ulp_u32 *plane, ulp_u32 i, ulp_u32 format, float inv)
{
    if (format == 0)
        return SUB_RN((float)((GLOBAL const ulp_u8 *)plane)[i], 128.0f);
    if (format == 1)
        return SUB_RN(MUL_RN((float)((GLOBAL const ulp_u16 *)plane)[i], inv), 128.0f);
    return fvif_float(plane[i]);
}

/* float_vif_prescale: vif_scale_frame_s. Work item (x, y, p) writes pixel
 * (x, y) of the dw x dh picture p (0: reference, 1: distorted) from the
 * sw-wide source, combining source samples with the per-column and per-row
 * tables (table: cols' indices [dw * tx], cols' weights as f32 bits
 * [dw * tx], rows' indices [dh * ty], rows' weights [dh * ty]) as the
 * method does: 0 nearest (the one sample), 1 bilinear (Σ (wy · wx) · s in
 * row-major order, the first term not added to 0), 2 bicubic (v = 0;
 * v += s · (wx · wy)), 3 lanczos4 (sum += wx · wy; v += s · (wx · wy);
 * v / sum). */
KERNEL float_vif_prescale(GLOBAL const ulp_u32 *src_ref, GLOBAL const ulp_u32 *src_dis, GLOBAL const ulp_u32 *table,
                          GLOBAL ulp_u32 *dst_ref, GLOBAL ulp_u32 *dst_dis, ulp_u32 sw, ulp_u32 dw, ulp_u32 dh,
                          ulp_u32 tx, ulp_u32 ty, ulp_u32 method, ulp_u32 format, float inv)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1), p = GLOBAL_ID(2);
    if (x >= dw || y >= dh)
        return;
    GLOBAL const ulp_u32 *src = p == 0 ? src_ref : src_dis;
    GLOBAL const ulp_u32 *ci = table + x * tx;
    GLOBAL const ulp_u32 *cw = table + dw * tx + x * tx;
    GLOBAL const ulp_u32 *ri = table + 2 * dw * tx + y * ty;
    GLOBAL const ulp_u32 *rw = table + 2 * dw * tx + dh * ty + y * ty;
    float v;
    if (method == 0) {
        v = fvif_sample(src, ri[0] * sw + ci[0], format, inv);
    } else if (method == 1) {
        v = 0.0f;
        for (ulp_u32 j = 0; j < 2; j++)
            for (ulp_u32 i = 0; i < 2; i++) {
                const float t = MUL_RN(MUL_RN(fvif_float(rw[j]), fvif_float(cw[i])),
                                       fvif_sample(src, ri[j] * sw + ci[i], format, inv));
                v = (i | j) == 0 ? t : ADD_RN(v, t);
            }
    } else if (method == 2) {
        v = 0.0f;
        for (ulp_u32 j = 0; j < 4; j++)
            for (ulp_u32 i = 0; i < 4; i++)
                v = ADD_RN(v, MUL_RN(fvif_sample(src, ri[j] * sw + ci[i], format, inv),
                                     MUL_RN(fvif_float(cw[i]), fvif_float(rw[j]))));
    } else {
        float sum = 0.0f;
        v = 0.0f;
        for (ulp_u32 j = 0; j < 9; j++)
            for (ulp_u32 i = 0; i < 9; i++) {
                const float wt = MUL_RN(fvif_float(cw[i]), fvif_float(rw[j]));
                sum = ADD_RN(sum, wt);
                v = ADD_RN(v, MUL_RN(fvif_sample(src, ri[j] * sw + ci[i], format, inv), wt));
            }
        v = FVIF_DIV(v, sum);
    }
    (p == 0 ? dst_ref : dst_dis)[y * dw + x] = fvif_bits(v);
}

/* float_vif_vertical: the vertical passes of one scale. Work item (x, y)
 * of a w x h picture sums, acc = 0 then acc += f[k] · v for each tap k of
 * taps[tap0 .. tap0 + width) in order over rows mirror(y - width / 2 + k),
 * v = r, d, r · r, d · d and r · d (vif_filter1d_s, _sq_s, _xy_s), and
 * writes the five f32 sums to vsum[q * w * h + y * w + x]. On even rows
 * y < 2 (h / 2), when sub_width > 0, it also sums taps[sub_tap0 .. +
 * sub_width) over r and d the same way into vsub[q * w * (h / 2) + (y / 2)
 * * w + x] (the next scale's vif_filter1d_s before vif_dec2_s). */
KERNEL float_vif_vertical(GLOBAL const ulp_u32 *ref, GLOBAL const ulp_u32 *dis, GLOBAL const float *taps,
                          GLOBAL float *vsum, GLOBAL float *vsub, ulp_u32 w, ulp_u32 h, ulp_u32 format, float inv,
                          ulp_u32 tap0, ulp_u32 width, ulp_u32 sub_tap0, ulp_u32 sub_width)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1);
    if (x >= w || y >= h)
        return;
    const ulp_u32 plane = w * h;
    const int hw = (int)(width / 2);
    float mu1 = 0.0f, mu2 = 0.0f, xx = 0.0f, yy = 0.0f, xy = 0.0f;
    for (ulp_u32 k = 0; k < width; k++) {
        const ulp_u32 i = (ulp_u32)fvif_mirror((int)y - hw + (int)k, (int)h) * w + x;
        const float c = taps[tap0 + k];
        const float a = fvif_sample(ref, i, format, inv), b = fvif_sample(dis, i, format, inv);
        mu1 = ADD_RN(mu1, MUL_RN(c, a));
        mu2 = ADD_RN(mu2, MUL_RN(c, b));
        xx = ADD_RN(xx, MUL_RN(c, MUL_RN(a, a)));
        yy = ADD_RN(yy, MUL_RN(c, MUL_RN(b, b)));
        xy = ADD_RN(xy, MUL_RN(c, MUL_RN(a, b)));
    }
    const ulp_u32 o = y * w + x;
    vsum[o] = mu1;
    vsum[plane + o] = mu2;
    vsum[2 * plane + o] = xx;
    vsum[3 * plane + o] = yy;
    vsum[4 * plane + o] = xy;
    if (sub_width > 0 && (y & 1u) == 0 && y / 2 < h / 2) {
        const int sub_half = (int)(sub_width / 2);
        float sr = 0.0f, sd = 0.0f;
        for (ulp_u32 k = 0; k < sub_width; k++) {
            const ulp_u32 i = (ulp_u32)fvif_mirror((int)y - sub_half + (int)k, (int)h) * w + x;
            const float c = taps[sub_tap0 + k];
            sr = ADD_RN(sr, MUL_RN(c, fvif_sample(ref, i, format, inv)));
            sd = ADD_RN(sd, MUL_RN(c, fvif_sample(dis, i, format, inv)));
        }
        vsub[(y / 2) * w + x] = sr;
        vsub[w * (h / 2) + (y / 2) * w + x] = sd;
    }
}

/* float_vif_vertical_strip: float_vif_vertical's contract in the shape for
 * CPU drivers. Work item (x, g) makes rows y0 .. y0 + 7 (y0 = 8 g, those
 * below h) of column x from a window of eight samples a picture that
 * slides one row a tap (each sample loaded once); each output adds its
 * taps from 0 in tap order, v = r, d, r · r, d · d, r · d as the per-pixel
 * kernel does. The next scale's filter, whose taps are the middle
 * sub_width of this scale's, reads the same rows, so its sums at rows y0,
 * y0 + 2, y0 + 4, y0 + 6 add from the same window, in its tap order. */
FUNC void float_vif_vertical_column(GLOBAL const ulp_u32 *ref, GLOBAL const ulp_u32 *dis, GLOBAL const float *taps,
                                    GLOBAL float *vsum, GLOBAL float *vsub, ulp_u32 w, ulp_u32 h, ulp_u32 format,
                                    float inv, ulp_u32 tap0, ulp_u32 width, ulp_u32 sub_tap0, ulp_u32 sub_width,
                                    ulp_u32 x, ulp_u32 y0)
{
    const ulp_u32 plane = w * h;
    const int p0 = (int)y0 - (int)(width / 2);
    const ulp_u32 d = width / 2 - sub_width / 2;
    float wa[8], wb[8], acc[5][8], sr[4], sd[4];
    for (int r = 0; r < 8; r++)
        acc[0][r] = acc[1][r] = acc[2][r] = acc[3][r] = acc[4][r] = 0.0f;
    for (int m = 0; m < 4; m++)
        sr[m] = sd[m] = 0.0f;
    for (int r = 0; r < 7; r++) {
        const ulp_u32 i = (ulp_u32)fvif_mirror(p0 + r, (int)h) * w + x;
        wa[r] = fvif_sample(ref, i, format, inv);
        wb[r] = fvif_sample(dis, i, format, inv);
    }
    for (ulp_u32 k = 0; k < width; k++) {
        const ulp_u32 i = (ulp_u32)fvif_mirror(p0 + (int)k + 7, (int)h) * w + x;
        wa[7] = fvif_sample(ref, i, format, inv);
        wb[7] = fvif_sample(dis, i, format, inv);
        const float c = taps[tap0 + k];
        for (int r = 0; r < 8; r++) {
            const float a = wa[r], b = wb[r];
            acc[0][r] = ADD_RN(acc[0][r], MUL_RN(c, a));
            acc[1][r] = ADD_RN(acc[1][r], MUL_RN(c, b));
            acc[2][r] = ADD_RN(acc[2][r], MUL_RN(c, MUL_RN(a, a)));
            acc[3][r] = ADD_RN(acc[3][r], MUL_RN(c, MUL_RN(b, b)));
            acc[4][r] = ADD_RN(acc[4][r], MUL_RN(c, MUL_RN(a, b)));
        }
        if (k - d < sub_width) {
            const float cs = taps[sub_tap0 + k - d];
            for (int m = 0; m < 4; m++) {
                sr[m] = ADD_RN(sr[m], MUL_RN(cs, wa[2 * m]));
                sd[m] = ADD_RN(sd[m], MUL_RN(cs, wb[2 * m]));
            }
        }
        for (int r = 0; r < 7; r++) {
            wa[r] = wa[r + 1];
            wb[r] = wb[r + 1];
        }
    }
    for (ulp_u32 r = 0; r < 8 && y0 + r < h; r++)
        for (ulp_u32 q = 0; q < 5; q++)
            vsum[q * plane + (y0 + r) * w + x] = acc[q][r];
    if (sub_width > 0) {
        const ulp_u32 sub_plane = w * (h / 2);
        for (ulp_u32 m = 0; m < 4 && y0 / 2 + m < h / 2; m++) {
            vsub[(y0 / 2 + m) * w + x] = sr[m];
            vsub[sub_plane + (y0 / 2 + m) * w + x] = sd[m];
        }
    }
}

KERNEL float_vif_vertical_strip(GLOBAL const ulp_u32 *ref, GLOBAL const ulp_u32 *dis, GLOBAL const float *taps,
                                GLOBAL float *vsum, GLOBAL float *vsub, ulp_u32 w, ulp_u32 h, ulp_u32 format,
                                float inv, ulp_u32 tap0, ulp_u32 width, ulp_u32 sub_tap0, ulp_u32 sub_width)
{
    const ulp_u32 x = GLOBAL_ID(0), y0 = GLOBAL_ID(1) * 8;
    if (x < w && y0 < h)
        float_vif_vertical_column(ref, dis, taps, vsum, vsub, w, h, format, inv, tap0, width, sub_tap0, sub_width, x,
                                  y0);
}

/* float_vif_vertical_quads (contract: FLOAT_VIF_VERTICAL_QUADS):
 * float_vif_vertical_strip's outputs, work item (q, g) making columns 4q ..
 * 4q + 3. The Vulkan dialect reads a row's four byte samples as one word
 * and writes each sum of four columns as one vec4 (what lavapipe pays for
 * is accesses); here each column is float_vif_vertical_strip's. */
KERNEL float_vif_vertical_quads(GLOBAL const ulp_u32 *ref, GLOBAL const ulp_u32 *dis, GLOBAL const float *taps,
                                GLOBAL float *vsum, GLOBAL float *vsub, ulp_u32 w, ulp_u32 h, ulp_u32 format,
                                float inv, ulp_u32 tap0, ulp_u32 width, ulp_u32 sub_tap0, ulp_u32 sub_width)
{
    const ulp_u32 x0 = GLOBAL_ID(0) * 4, y0 = GLOBAL_ID(1) * 8;
    for (ulp_u32 x = x0; x < x0 + 4 && x < w && y0 < h; x++)
        float_vif_vertical_column(ref, dis, taps, vsum, vsub, w, h, format, inv, tap0, width, sub_tap0, sub_width, x,
                                  y0);
}

/* vif_tools.c log2f_approx: the exponent plus a degree-8 polynomial of the
 * mantissa (coefficients poly[0..9], Horner's rule in f32). */
FUNC float fvif_log2(float x, GLOBAL const float *poly)
{
    if (x == 0.0f)
        return fvif_float(0xff800000u); /* -inf */
    if (x < 0.0f)
        return fvif_float(0x7fc00000u); /* NaN */
    const ulp_u32 bits = fvif_bits(x);
    const float remain = fvif_float((bits & 0x007FFFFFu) | 0x3F800000u);
    const float log_base = (float)((int)((bits & 0x7F800000u) >> 23) - 127);
    const float t = SUB_RN(remain, 1.0f);
    float var = 0.0f;
    for (int i = 0; i < 9; i++)
        var = ADD_RN(MUL_RN(var, t), poly[i]);
    return ADD_RN(log_base, var);
}

/* vif_statistic_s's (num_val, den_val) of pixel (x, y) from its five
 * filtered sums f (mu1, mu2, xx, yy, xy), written to stat[y * w + x] and
 * stat[w * h + y * w + x]; every operation in libvmaf's order. */
FUNC void fvif_statistic(const float *f, GLOBAL const float *taps, GLOBAL const double *dparams,
                         GLOBAL float *stat, ulp_u32 w, ulp_u32 h, ulp_u32 x, ulp_u32 y, float gain_limit,
                         float sigma_max_inv)
{
    const ulp_u32 plane = w * h;
    const double sigma_nsq = dparams[0];
    const float eps = 1.0e-10f;
    const float mu1 = f[0], mu2 = f[1];
    float sigma1_sq = SUB_RN(f[2], MUL_RN(mu1, mu1));
    float sigma2_sq = SUB_RN(f[3], MUL_RN(mu2, mu2));
    const float sigma12 = SUB_RN(f[4], MUL_RN(mu1, mu2));
    sigma1_sq = sigma1_sq > 0.0f ? sigma1_sq : 0.0f;
    sigma2_sq = sigma2_sq > 0.0f ? sigma2_sq : 0.0f;
    float g = FVIF_DIV(sigma12, ADD_RN(sigma1_sq, eps));
    float sv_sq = SUB_RN(sigma2_sq, MUL_RN(g, sigma12));
    if (sigma1_sq < eps) {
        g = 0.0f;
        sv_sq = sigma2_sq;
        sigma1_sq = 0.0f;
    }
    if (sigma2_sq < eps) {
        g = 0.0f;
        sv_sq = 0.0f;
    }
    if (g < 0.0f) {
        sv_sq = sigma2_sq;
        g = 0.0f;
    }
    sv_sq = sv_sq > eps ? sv_sq : eps;
    g = g < gain_limit ? g : gain_limit;
    const double num_arg = 1.0 + (double)MUL_RN(MUL_RN(g, g), sigma1_sq) / ((double)sv_sq + sigma_nsq);
    const double den_arg = 1.0 + (double)sigma1_sq / sigma_nsq;
    GLOBAL const float *poly = taps + 256;
    float num_val = fvif_log2((float)num_arg, poly);
    float den_val = fvif_log2((float)den_arg, poly);
    if (sigma12 < 0.0f)
        num_val = 0.0f;
    if ((double)sigma1_sq < sigma_nsq) {
        num_val = SUB_RN(1.0f, MUL_RN(sigma2_sq, sigma_max_inv));
        den_val = 1.0f;
    }
    stat[y * w + x] = num_val;
    stat[plane + y * w + x] = den_val;
}

/* float_vif_horizontal: the horizontal passes and vif_statistic_s's
 * per-pixel values of one scale. Work item (x, y) sums acc = 0, acc +=
 * f[k] · vsum_q[y][mirror(x - width / 2 + k)] in tap order for the five
 * planes, then computes (num_val, den_val) exactly as vif_statistic_s
 * ('matching_matlab'; dparams[0] = vif_sigma_nsq as a double; gain_limit
 * and sigma_max_inv as libvmaf's floats; poly: log2f_approx's 9
 * coefficients) and writes them to stat[y * w + x] and stat[w * h + y * w
 * + x]. When sub_width > 0, at even x < 2 (w / 2) and even y < 2 (h / 2)
 * it also filters row y / 2 of vsub's two planes horizontally (the same
 * order) and writes next_ref / next_dis[(y / 2) * (w / 2) + x / 2]. */
KERNEL float_vif_horizontal(GLOBAL const float *vsum, GLOBAL const float *vsub, GLOBAL const float *taps,
                            GLOBAL const double *dparams, GLOBAL float *stat, GLOBAL float *next_ref,
                            GLOBAL float *next_dis, ulp_u32 w, ulp_u32 h, ulp_u32 tap0, ulp_u32 width,
                            ulp_u32 sub_tap0, ulp_u32 sub_width, float gain_limit, float sigma_max_inv)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1);
    if (x >= w || y >= h)
        return;
    const ulp_u32 plane = w * h;
    const int hw = (int)(width / 2);
    float f[5];
    for (int q = 0; q < 5; q++)
        f[q] = 0.0f;
    for (ulp_u32 k = 0; k < width; k++) {
        const ulp_u32 i = y * w + (ulp_u32)fvif_mirror((int)x - hw + (int)k, (int)w);
        const float c = taps[tap0 + k];
        for (int q = 0; q < 5; q++)
            f[q] = ADD_RN(f[q], MUL_RN(c, vsum[(ulp_u32)q * plane + i]));
    }
    fvif_statistic(f, taps, dparams, stat, w, h, x, y, gain_limit, sigma_max_inv);
    if (sub_width > 0 && ((x | y) & 1u) == 0 && x / 2 < w / 2 && y / 2 < h / 2) {
        const int sub_half = (int)(sub_width / 2);
        const ulp_u32 sub_plane = w * (h / 2);
        float sr = 0.0f, sd = 0.0f;
        for (ulp_u32 k = 0; k < sub_width; k++) {
            const ulp_u32 i = (y / 2) * w + (ulp_u32)fvif_mirror((int)x - sub_half + (int)k, (int)w);
            const float c = taps[sub_tap0 + k];
            sr = ADD_RN(sr, MUL_RN(c, vsub[i]));
            sd = ADD_RN(sd, MUL_RN(c, vsub[sub_plane + i]));
        }
        next_ref[(y / 2) * (w / 2) + x / 2] = sr;
        next_dis[(y / 2) * (w / 2) + x / 2] = sd;
    }
}

/* float_vif_horizontal_strip: float_vif_horizontal's contract in the shape
 * for CPU drivers. Work item (t, y) makes pixels x0 .. x0 + 7 (x0 = 8 t)
 * of row y from a window of eight samples a plane that slides one column
 * a tap (each sample loaded once: 7 + width loads a plane for eight
 * outputs); each output adds its taps from 0 in tap order, as the
 * per-pixel kernel does, and the statistic is the same function. */
KERNEL float_vif_horizontal_strip(GLOBAL const float *vsum, GLOBAL const float *vsub, GLOBAL const float *taps,
                                  GLOBAL const double *dparams, GLOBAL float *stat, GLOBAL float *next_ref,
                                  GLOBAL float *next_dis, ulp_u32 w, ulp_u32 h, ulp_u32 tap0, ulp_u32 width,
                                  ulp_u32 sub_tap0, ulp_u32 sub_width, float gain_limit, float sigma_max_inv)
{
    const ulp_u32 x0 = GLOBAL_ID(0) * 8, y = GLOBAL_ID(1);
    if (x0 >= w || y >= h)
        return;
    const ulp_u32 plane = w * h;
    const ulp_u32 row = y * w;
    const int p0 = (int)x0 - (int)(width / 2);
    float win[5][8], acc[5][8];
    for (int q = 0; q < 5; q++) {
        for (int r = 0; r < 8; r++)
            acc[q][r] = 0.0f;
        for (int r = 0; r < 7; r++)
            win[q][r] = vsum[(ulp_u32)q * plane + row + (ulp_u32)fvif_mirror(p0 + r, (int)w)];
    }
    for (ulp_u32 k = 0; k < width; k++) {
        const ulp_u32 i = row + (ulp_u32)fvif_mirror(p0 + (int)k + 7, (int)w);
        const float c = taps[tap0 + k];
        for (int q = 0; q < 5; q++) {
            win[q][7] = vsum[(ulp_u32)q * plane + i];
            for (int r = 0; r < 8; r++)
                acc[q][r] = ADD_RN(acc[q][r], MUL_RN(c, win[q][r]));
            for (int r = 0; r < 7; r++)
                win[q][r] = win[q][r + 1];
        }
    }
    for (ulp_u32 r = 0; r < 8 && x0 + r < w; r++) {
        const float f[5] = {acc[0][r], acc[1][r], acc[2][r], acc[3][r], acc[4][r]};
        fvif_statistic(f, taps, dparams, stat, w, h, x0 + r, y, gain_limit, sigma_max_inv);
    }
    if (sub_width > 0 && (y & 1u) == 0 && y / 2 < h / 2) {
        const ulp_u32 sub_plane = w * (h / 2);
        const ulp_u32 srow = (y / 2) * w;
        const int s0 = (int)x0 - (int)(sub_width / 2);
        float sw[2][8], sa[2][8];
        for (int q = 0; q < 2; q++) {
            for (int r = 0; r < 8; r++)
                sa[q][r] = 0.0f;
            for (int r = 0; r < 7; r++)
                sw[q][r] = vsub[(ulp_u32)q * sub_plane + srow + (ulp_u32)fvif_mirror(s0 + r, (int)w)];
        }
        for (ulp_u32 k = 0; k < sub_width; k++) {
            const ulp_u32 j = srow + (ulp_u32)fvif_mirror(s0 + (int)k + 7, (int)w);
            const float c = taps[sub_tap0 + k];
            for (int q = 0; q < 2; q++) {
                sw[q][7] = vsub[(ulp_u32)q * sub_plane + j];
                for (int r = 0; r < 8; r++)
                    sa[q][r] = ADD_RN(sa[q][r], MUL_RN(c, sw[q][r]));
                for (int r = 0; r < 7; r++)
                    sw[q][r] = sw[q][r + 1];
            }
        }
        for (ulp_u32 m = 0; m < 4 && x0 / 2 + m < w / 2; m++) {
            next_ref[(y / 2) * (w / 2) + x0 / 2 + m] = sa[0][2 * m];
            next_dis[(y / 2) * (w / 2) + x0 / 2 + m] = sa[1][2 * m];
        }
    }
}

/* float_vif_rows: vif_statistic_s's sums. Work item i < 2 h adds row i / 2
 * of plane i % 2 of stat (num_val, den_val) in column order, in f32 from 0,
 * into rows[i]; the host adds the rows in order. FLOAT_VIF_ROWS_BATCH
 * loads before their adds (which stay in order): with a row per work item
 * a GPU has few of them to hide load latency behind. */
#define FLOAT_VIF_ROWS_BATCH 32
KERNEL float_vif_rows(GLOBAL const float *stat, GLOBAL float *rows, ulp_u32 w, ulp_u32 h)
{
    const ulp_u32 i = GLOBAL_ID(0);
    if (i >= 2 * h)
        return;
    GLOBAL const float *row = stat + (i & 1) * w * h + (i >> 1) * w;
    float s = 0.0f;
    float t[FLOAT_VIF_ROWS_BATCH];
    ulp_u32 x = 0;
    for (; x + FLOAT_VIF_ROWS_BATCH <= w; x += FLOAT_VIF_ROWS_BATCH) {
        for (int k = 0; k < FLOAT_VIF_ROWS_BATCH; k++)
            t[k] = row[x + k];
        for (int k = 0; k < FLOAT_VIF_ROWS_BATCH; k++)
            s = ADD_RN(s, t[k]);
    }
    for (; x < w; x++)
        s = ADD_RN(s, row[x]);
    rows[i] = s;
}

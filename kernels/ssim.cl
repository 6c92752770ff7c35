/*
 * ssim family: `float_ssim` and `float_ms_ssim` (contracts: the SSIM_*
 * KernelSpecs in src/features/ssim/gpu.rs; the GLSL/WGSL twins in
 * shaders/ssim_*). libvmaf's iqa arithmetic in the CPU reference's order
 * (src/features/ssim/): float products (MUL_RN), double sums, and the
 * divisions and square root correctly rounded, each operation rounded on
 * its own (no FMA), so results are bit-identical.
 */
#include "ulp.h"

#if defined(__CUDACC__)
#define SSIM_DADD(a, b) __dadd_rn((a), (b))
#define SSIM_DMUL(a, b) __dmul_rn((a), (b))
#define SSIM_DDIV(a, b) __ddiv_rn((a), (b))
#define SSIM_DSQRT(a) __dsqrt_rn(a)
#define SSIM_FLOAT_BITS(f) __float_as_uint(f)
#define SSIM_BITS_FLOAT(u) __uint_as_float(u)
#define SSIM_FABS(d) fabs(d)
#else
/* OpenCL: double + * / and sqrt are correctly rounded (OpenCL C 1.2,
 * 7.4), and FP_CONTRACT is off (ulp.h). */
#define SSIM_DADD(a, b) ((a) + (b))
#define SSIM_DMUL(a, b) ((a) * (b))
#define SSIM_DDIV(a, b) ((a) / (b))
#define SSIM_DSQRT(a) sqrt(a)
#define SSIM_FLOAT_BITS(f) as_uint(f)
#define SSIM_BITS_FLOAT(u) as_float(u)
#define SSIM_FABS(d) fabs(d)
#endif

/* ---------------------------------------------------------------------
 * ssim_convert: picture_copy.c with offset 0 for both lumas: (float)v, or
 * v / scaler as v * inv_scaler (a power of two: the same bits).
 * --------------------------------------------------------------------- */
KERNEL ssim_convert(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL float *pictures, ulp_u32 width,
                    ulp_u32 height, ulp_u32 bytes_per_sample, float inv_scaler)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1);
    if (x >= width || y >= height)
        return;
    const ulp_u32 i = y * width + x;
    pictures[i] = MUL_RN((float)ulp_sample(ref, i, bytes_per_sample), inv_scaler);
    pictures[width * height + i] = MUL_RN((float)ulp_sample(dis, i, bytes_per_sample), inv_scaler);
}

/* ssim_convert_quads: ssim_convert's outputs in the CPU drivers' shape,
 * item k = y * ceil(width / 4) + x converting samples 4k .. 4k + 3 in
 * raster order (the Vulkan dialect reads them as one or two words). */
KERNEL ssim_convert_quads(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL float *pictures,
                          ulp_u32 width, ulp_u32 height, ulp_u32 bytes_per_sample, float inv_scaler)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1);
    const ulp_u32 n = width * height, i0 = 4u * (y * ((width + 3u) / 4u) + x);
    if (x >= (width + 3u) / 4u || y >= height || i0 >= n)
        return;
    for (ulp_u32 i = i0; i < i0 + 4u && i < n; i++) {
        pictures[i] = MUL_RN((float)ulp_sample(ref, i, bytes_per_sample), inv_scaler);
        pictures[n + i] = MUL_RN((float)ulp_sample(dis, i, bytes_per_sample), inv_scaler);
    }
}

/* KBND_SYMMETRIC (iqa/convolve.c), clamped afterwards. */
FUNC int ssim_mirror(int i, int n)
{
    const int m = i < 0 ? -1 - i : (i >= n ? 2 * n - i - 1 : i);
    return m < 0 ? 0 : (m >= n ? n - 1 : m);
}

/* ---------------------------------------------------------------------
 * ssim_decimate: iqa/decimate.c _iqa_decimate + _iqa_filter_pixel (scale
 * 1) for picture z: the k x k window at (x * factor, y * factor) from
 * -k/2, mirrored, sum += (double)(sample * tap) rows then columns.
 * --------------------------------------------------------------------- */
/* The strip shape of ssim_decimate: column x, rows y0.. of picture z, k =
 * 9, factor 2; win[9 v + u] holds window row v, column u, moving down two
 * rows a step, each sample read once. */
FUNC void ssim_decimate_strip(GLOBAL const float *src, GLOBAL float *dst, GLOBAL const float *taps, ulp_u32 width,
                              ulp_u32 height, ulp_u32 out_width, ulp_u32 out_height, ulp_u32 strip, ulp_u32 x,
                              ulp_u32 y0, ulp_u32 z)
{
    const int w = (int)width, h = (int)height;
    const ulp_u32 base = z * width * height;
    const ulp_u32 y1 = y0 + strip < out_height ? y0 + strip : out_height;
    float t[81], win[81];
    ulp_u32 col[9];
    for (int i = 0; i < 81; i++)
        t[i] = taps[i];
    const int cx = (int)(x * 2u) - 4;
    for (int u = 0; u < 9; u++)
        col[u] = (ulp_u32)ssim_mirror(cx + u, w);
    const int cy0 = (int)(y0 * 2u) - 4;
    for (int v = 0; v < 7; v++) {
        const ulp_u32 row = base + (ulp_u32)ssim_mirror(cy0 + v, h) * width;
        for (int u = 0; u < 9; u++)
            win[9 * (v + 2) + u] = src[row + col[u]];
    }
    for (ulp_u32 y = y0; y < y1; y++) {
        const int cy = (int)(y * 2u) - 4;
        for (int i = 0; i < 63; i++)
            win[i] = win[i + 18];
        for (int v = 7; v < 9; v++) {
            const ulp_u32 row = base + (ulp_u32)ssim_mirror(cy + v, h) * width;
            for (int u = 0; u < 9; u++)
                win[9 * v + u] = src[row + col[u]];
        }
        double sum = 0.0;
        for (int i = 0; i < 81; i++)
            sum = SSIM_DADD(sum, (double)MUL_RN(win[i], t[i]));
        dst[z * out_width * out_height + y * out_width + x] = (float)sum;
    }
}

KERNEL ssim_decimate_strips(GLOBAL const float *src, GLOBAL float *dst, GLOBAL const float *taps, ulp_u32 width,
                            ulp_u32 height, ulp_u32 out_width, ulp_u32 out_height, ulp_u32 factor, ulp_u32 k,
                            ulp_u32 strip)
{
    /* ssim_decimate's CPU-driver shape (9x9 at factor 2 only): outputs y =
     * strip * GLOBAL_ID(1) + j down column x; factor and k are 2 and 9. */
    (void)factor;
    (void)k;
    const ulp_u32 sx = GLOBAL_ID(0), sy = GLOBAL_ID(1) * strip;
    if (sx < out_width && sy < out_height)
        ssim_decimate_strip(src, dst, taps, width, height, out_width, out_height, strip, sx, sy, GLOBAL_ID(2));
}

KERNEL ssim_decimate(GLOBAL const float *src, GLOBAL float *dst, GLOBAL const float *taps, ulp_u32 width,
                     ulp_u32 height, ulp_u32 out_width, ulp_u32 out_height, ulp_u32 factor, ulp_u32 k)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1), z = GLOBAL_ID(2);
    if (x >= out_width || y >= out_height)
        return;
    const int w = (int)width, h = (int)height, kk = (int)k, uc = kk / 2;
    const ulp_u32 base = z * width * height;
    const int cx = (int)(x * factor) - uc, cy = (int)(y * factor) - uc;
    double sum = 0.0;
    if (kk == 9 && cx >= 0 && cy >= 0 && cx + 9 <= w && cy + 9 <= h) {
        /* ms_ssim's 9x9 filter away from the edges, where mirroring is the
         * identity: the same products and adds in the same order, with
         * constant bounds and one row index a window row (the general loop
         * below: 46 µs a dispatch on Vulkan, H100; this: 29). */
        for (int v = 0; v < 9; v++) {
            const ulp_u32 row = base + (ulp_u32)(cy + v) * width + (ulp_u32)cx;
            for (int u = 0; u < 9; u++)
                sum = SSIM_DADD(sum, (double)MUL_RN(src[row + (ulp_u32)u], taps[v * 9 + u]));
        }
        dst[z * out_width * out_height + y * out_width + x] = (float)sum;
        return;
    }
    for (int v = 0; v < kk; v++) {
        const ulp_u32 row = base + (ulp_u32)ssim_mirror(cy + v, h) * width;
        for (int u = 0; u < kk; u++)
            sum = SSIM_DADD(sum, (double)MUL_RN(src[row + (ulp_u32)ssim_mirror(cx + u, w)], taps[v * kk + u]));
    }
    dst[z * out_width * out_height + y * out_width + x] = (float)sum;
}

/* ---------------------------------------------------------------------
 * ssim_horizontal: _iqa_convolve's horizontal pass (IQA_CONVOLVE_1D) over
 * the five pictures r, d, r*r, d*d, r*d (products rounded to float):
 * plane p, row y, column x < width - 10: sum_t (double)(pic[y][x+t] *
 * taps[t]), t = 0..11 in order.
 * --------------------------------------------------------------------- */
KERNEL ssim_horizontal(GLOBAL const float *pictures, GLOBAL const float *taps, GLOBAL float *planes, ulp_u32 width,
                       ulp_u32 height, ulp_u32 strip)
{
    /* Outputs x = strip * GLOBAL_ID(0) + j, j < strip, each input read once
     * into a sliding window (strip 1 on GPUs). */
    const ulp_u32 y = GLOBAL_ID(1), x0 = GLOBAL_ID(0) * strip;
    const ulp_u32 mw = width - 10u;
    if (x0 >= mw || y >= height)
        return;
    const ulp_u32 x1 = x0 + strip < mw ? x0 + strip : mw;
    const ulp_u32 r0 = y * width, d0 = width * height + r0, plane = mw * height;
    float k[11], r[11], d[11];
#pragma unroll
    for (int t = 0; t < 11; t++)
        k[t] = taps[t];
#pragma unroll
    for (int t = 0; t < 10; t++) {
        r[t + 1] = pictures[r0 + x0 + (ulp_u32)t];
        d[t + 1] = pictures[d0 + x0 + (ulp_u32)t];
    }
    for (ulp_u32 x = x0; x < x1; x++) {
#pragma unroll
        for (int t = 0; t < 10; t++) {
            r[t] = r[t + 1];
            d[t] = d[t + 1];
        }
        r[10] = pictures[r0 + x + 10u];
        d[10] = pictures[d0 + x + 10u];
        double s[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
#pragma unroll
        for (int t = 0; t < 11; t++) {
            const float v[5] = {r[t], d[t], MUL_RN(r[t], r[t]), MUL_RN(d[t], d[t]), MUL_RN(r[t], d[t])};
#pragma unroll
            for (int p = 0; p < 5; p++)
                s[p] = SSIM_DADD(s[p], (double)MUL_RN(v[p], k[t]));
        }
        const ulp_u32 o = y * mw + x;
#pragma unroll
        for (int p = 0; p < 5; p++)
            planes[(ulp_u32)p * plane + o] = (float)s[p];
    }
}

/* a / b correctly rounded (ties to even): the dialects' divisions are. */
FUNC double ssim_div(double a, double b)
{
    return SSIM_DDIV(a, b);
}

/* ---------------------------------------------------------------------
 * ssim_vertical / ssim_vertical_strips: _iqa_convolve's vertical pass over
 * the five horizontal planes, then _iqa_ssim's default-path terms of the
 * pixel (core.rs pixel_terms), written for each metric of mask (bit 0:
 * l*c*s, 1: l, 2: c, 3: s), the k-th written at terms[terms_offset + k * n
 * + y * width + x], and partial sums of the terms, their magnitudes and
 * (n - raster index) * magnitude, added in double, the k-th metric's at
 * partials[partials_offset + 3 * (k * count + j)] (ssim_total adds them;
 * sums.rs bounds the order's error).
 * --------------------------------------------------------------------- */

/* The pixel's terms {l*c*s, l, c, s} from its five filtered values. */
FUNC void ssim_pixel_terms(const float *f, float c1, float c2, float c3, double *v)
{
    const float mu1 = f[0], mu2 = f[1];
    float s11 = SUB_RN(f[2], MUL_RN(mu1, mu1));
    float s22 = SUB_RN(f[3], MUL_RN(mu2, mu2));
    s11 = 0.0f > s11 ? 0.0f : s11;
    s22 = 0.0f > s22 ? 0.0f : s22;
    const float s12 = SUB_RN(f[4], MUL_RN(mu1, mu2));
    /* (float)sqrt((double)p) in C: the correctly rounded float root. */
    const float srsc = (float)SSIM_DSQRT((double)MUL_RN(s11, s22));
    const float l_den = ADD_RN(ADD_RN(MUL_RN(mu1, mu1), MUL_RN(mu2, mu2)), c1);
    const double l = ssim_div(SSIM_DADD(SSIM_DMUL(SSIM_DMUL(2.0, (double)mu1), (double)mu2), (double)c1), (double)l_den);
    const float c_den = ADD_RN(ADD_RN(s11, s22), c2);
    const double c = ssim_div(SSIM_DADD(SSIM_DMUL(2.0, (double)srsc), (double)c2), (double)c_den);
    const float clamped = (s12 < 0.0f && srsc <= 0.0f) ? 0.0f : s12;
    /* A float division as a correctly rounded double one, rounded to float:
     * the same value (53 >= 2 * 24 + 2). */
    const double s = (double)(float)ssim_div((double)ADD_RN(clamped, c3), (double)ADD_RN(srsc, c3));
    v[0] = SSIM_DMUL(SSIM_DMUL(l, c), s);
    v[1] = l;
    v[2] = c;
    v[3] = s;
}

/* The vertical pass of plane value window win (11 rows) and the taps. */
FUNC float ssim_vertical_sum(const float *win, const float *k)
{
    double sum = 0.0;
    for (int t = 0; t < 11; t++)
        sum = SSIM_DADD(sum, (double)MUL_RN(win[t], k[t]));
    return (float)sum;
}

#define SSIM_WG_X 64
#define SSIM_WG 256

/* The GPUs' shape: one pixel per work item (x, y) in groups of 64 x 4;
 * each group adds each of its rows' 64 terms with a fixed tree (strides 32
 * .. 1; pixels outside the map add 0) into partial j = y * blocks + bx,
 * blocks = ceil(width / 64), bx the group's column (count = rows * blocks).
 * strip is ssim_vertical_strips' (unused here). */
KERNEL ssim_vertical(GLOBAL const float *planes, GLOBAL const float *taps, GLOBAL double *terms,
                     GLOBAL double *partials, ulp_u32 width, ulp_u32 rows, ulp_u32 mask, ulp_u32 terms_offset,
                     float c1, float c2, float c3, ulp_u32 strip, ulp_u32 partials_offset, ulp_u32 count)
{
    LOCAL double red[3 * SSIM_WG];
    (void)strip;
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1);
    const ulp_u32 lx = LOCAL_ID(0), li = LOCAL_ID(1) * SSIM_WG_X + lx;
    const int active = x < width && y < rows;
    const ulp_u32 n = width * rows, plane = width * (rows + 10u);
    double v[4] = {0.0, 0.0, 0.0, 0.0};
    double weight = 0.0;
    /* No early return: every work item reaches the barriers below. */
    if (active) {
        float k[11], f[5];
        for (int t = 0; t < 11; t++)
            k[t] = taps[t];
        for (int p = 0; p < 5; p++) {
            float win[11];
            for (int t = 0; t < 11; t++)
                win[t] = planes[(ulp_u32)p * plane + (y + (ulp_u32)t) * width + x];
            f[p] = ssim_vertical_sum(win, k);
        }
        ssim_pixel_terms(f, c1, c2, c3, v);
        const ulp_u32 i = y * width + x;
        weight = (double)(n - i);
        ulp_u32 o = terms_offset + i;
        for (int b = 0; b < 4; b++)
            if (mask & (1u << b)) {
                terms[o] = v[b];
                o += n;
            }
    }
    const ulp_u32 blocks = (width + SSIM_WG_X - 1u) / SSIM_WG_X;
    ulp_u32 at = partials_offset + 3u * (y * blocks + GROUP_ID(0));
    for (int b = 0; b < 4; b++) {
        if (!(mask & (1u << b)))
            continue; /* uniform over the group */
        const double a = SSIM_FABS(v[b]);
        red[li] = v[b];
        red[SSIM_WG + li] = a;
        red[2 * SSIM_WG + li] = SSIM_DMUL(weight, a);
        BARRIER();
        for (ulp_u32 stride = SSIM_WG_X / 2; stride > 0u; stride >>= 1) {
            if (lx < stride) {
                red[li] = SSIM_DADD(red[li], red[li + stride]);
                red[SSIM_WG + li] = SSIM_DADD(red[SSIM_WG + li], red[SSIM_WG + li + stride]);
                red[2 * SSIM_WG + li] = SSIM_DADD(red[2 * SSIM_WG + li], red[2 * SSIM_WG + li + stride]);
            }
            BARRIER();
        }
        if (lx == 0u && y < rows) {
            partials[at] = red[li];
            partials[at + 1u] = red[SSIM_WG + li];
            partials[at + 2u] = red[2 * SSIM_WG + li];
        }
        at += 3u * count;
    }
}

/* The CPU drivers' shape: work item (x, i) walks rows y = strip * i + j, j
 * < strip, of column x top to bottom, each plane value read once into a
 * sliding window, and adds its terms top to bottom into partial j = i *
 * width + x (count = ceil(rows / strip) * width). */
KERNEL ssim_vertical_strips(GLOBAL const float *planes, GLOBAL const float *taps, GLOBAL double *terms,
                            GLOBAL double *partials, ulp_u32 width, ulp_u32 rows, ulp_u32 mask, ulp_u32 terms_offset,
                            float c1, float c2, float c3, ulp_u32 strip, ulp_u32 partials_offset, ulp_u32 count)
{
    const ulp_u32 x = GLOBAL_ID(0), y0 = GLOBAL_ID(1) * strip;
    if (x >= width || y0 >= rows)
        return;
    const ulp_u32 y1 = y0 + strip < rows ? y0 + strip : rows;
    const ulp_u32 n = width * rows, plane = width * (rows + 10u);
    float k[11], win[5][11];
    double acc[12];
#pragma unroll
    for (int t = 0; t < 11; t++)
        k[t] = taps[t];
#pragma unroll
    for (int p = 0; p < 5; p++) {
#pragma unroll
        for (int t = 0; t < 10; t++)
            win[p][t + 1] = planes[(ulp_u32)p * plane + (y0 + (ulp_u32)t) * width + x];
    }
#pragma unroll
    for (int b = 0; b < 12; b++)
        acc[b] = 0.0;
    for (ulp_u32 y = y0; y < y1; y++) {
        float f[5];
        double v[4];
#pragma unroll
        for (int p = 0; p < 5; p++) {
#pragma unroll
            for (int t = 0; t < 10; t++)
                win[p][t] = win[p][t + 1];
            win[p][10] = planes[(ulp_u32)p * plane + (y + 10u) * width + x];
            f[p] = ssim_vertical_sum(win[p], k);
        }
        ssim_pixel_terms(f, c1, c2, c3, v);
        const ulp_u32 i = y * width + x;
        const double weight = (double)(n - i);
        ulp_u32 o = terms_offset + i;
#pragma unroll
        for (int b = 0; b < 4; b++)
            if (mask & (1u << b)) {
                const double a = SSIM_FABS(v[b]);
                terms[o] = v[b];
                o += n;
                acc[3 * b] = SSIM_DADD(acc[3 * b], v[b]);
                acc[3 * b + 1] = SSIM_DADD(acc[3 * b + 1], a);
                acc[3 * b + 2] = SSIM_DADD(acc[3 * b + 2], SSIM_DMUL(weight, a));
            }
    }
    ulp_u32 at = partials_offset + 3u * (GLOBAL_ID(1) * width + x);
#pragma unroll
    for (int b = 0; b < 4; b++)
        if (mask & (1u << b)) {
            partials[at] = acc[3 * b];
            partials[at + 1u] = acc[3 * b + 1];
            partials[at + 2u] = acc[3 * b + 2];
            at += 3u * count;
        }
}

/* ---------------------------------------------------------------------
 * ssim_total: work group e adds metric entry e's partials (each work
 * item its partials in order, then a tree), checks that the float mean is the
 * same anywhere within 2 x the host's error bound of the sum, and when it
 * is not (always, with `sequential`), flags the entry; with `inline_exact`
 * it then adds the terms one after the other in raster order as libvmaf
 * does, else the ssim_exact kernels below make that sum. results[5 e ..] =
 * sum, magnitudes, weighted, exact sum, flag. entries: 6 words an entry.
 * --------------------------------------------------------------------- */
#define SSIM_TOTAL_WG 256
#define SSIM_CHUNK 1024
/* Words of an entry of the layout: first term, first partial triple,
 * width, rows, partial triples, first exact-sum record. */
#define SSIM_ENTRY 6u

/* Whether every value in [t - e, t + e] divided by n rounds to one float
 * (strictly between the midpoints around float(t / n)). */
FUNC int ssim_one_float(double t, double e, double n)
{
    const double lo = SSIM_DDIV(t - e, n), hi = SSIM_DDIV(t + e, n);
    const float f = (float)SSIM_DDIV(t, n);
    if (f == 0.0f || isinf(f) || isnan(f))
        return 0;
    const ulp_u32 b = SSIM_FLOAT_BITS(f);
    const double m1 = SSIM_DMUL(SSIM_DADD((double)f, (double)SSIM_BITS_FLOAT(b + 1u)), 0.5);
    const double m2 = SSIM_DMUL(SSIM_DADD((double)f, (double)SSIM_BITS_FLOAT(b - 1u)), 0.5);
    const double mlo = m1 < m2 ? m1 : m2, mhi = m1 < m2 ? m2 : m1;
    return mlo < lo && hi < mhi;
}

KERNEL ssim_total(GLOBAL const double *terms, GLOBAL const double *partials, GLOBAL const ulp_u32 *entries,
                  GLOBAL double *results, ulp_u32 count, ulp_u32 sequential, ulp_u32 inline_exact)
{
    LOCAL double red[3 * SSIM_TOTAL_WG];
    LOCAL double chunk[SSIM_CHUNK];
    LOCAL ulp_u32 exact;
    const ulp_u32 e = GROUP_ID(0), lid = LOCAL_ID(0);
    if (e >= count)
        return; /* uniform over the group */
    const ulp_u32 terms_at = entries[SSIM_ENTRY * e], parts_at = entries[SSIM_ENTRY * e + 1u];
    const ulp_u32 width = entries[SSIM_ENTRY * e + 2u], rows = entries[SSIM_ENTRY * e + 3u];
    const ulp_u32 parts = entries[SSIM_ENTRY * e + 4u];
    double s = 0.0, a = 0.0, w = 0.0;
    for (ulp_u32 r = lid; r < parts; r += SSIM_TOTAL_WG) {
        s = SSIM_DADD(s, partials[parts_at + 3u * r]);
        a = SSIM_DADD(a, partials[parts_at + 3u * r + 1u]);
        w = SSIM_DADD(w, partials[parts_at + 3u * r + 2u]);
    }
    red[lid] = s;
    red[SSIM_TOTAL_WG + lid] = a;
    red[2 * SSIM_TOTAL_WG + lid] = w;
    BARRIER();
    for (ulp_u32 stride = SSIM_TOTAL_WG / 2; stride > 0u; stride >>= 1) {
        if (lid < stride) {
            red[lid] = SSIM_DADD(red[lid], red[lid + stride]);
            red[SSIM_TOTAL_WG + lid] = SSIM_DADD(red[SSIM_TOTAL_WG + lid], red[SSIM_TOTAL_WG + lid + stride]);
            red[2 * SSIM_TOTAL_WG + lid] =
                SSIM_DADD(red[2 * SSIM_TOTAL_WG + lid], red[2 * SSIM_TOTAL_WG + lid + stride]);
        }
        BARRIER();
    }
    if (lid == 0u) {
        const double t = red[0], mag = red[SSIM_TOTAL_WG], weighted = red[2 * SSIM_TOTAL_WG];
        /* 2^-53 times the host's bound (sums.rs), times 2 (ssim_total.comp
         * says why 2 is enough). */
        const double unit = 1.1102230246251565e-16;
        const double bound = SSIM_DMUL(unit, SSIM_DADD(SSIM_DMUL((double)1.01f, weighted),
                                                       SSIM_DMUL(SSIM_DMUL((double)1.01f, (double)(width + rows + 16u)), mag)));
        const double n = SSIM_DMUL((double)width, (double)rows);
        exact = (sequential == 0u && ssim_one_float(t, SSIM_DMUL(2.0, bound), n)) ? 0u : 1u;
        results[5u * e] = t;
        results[5u * e + 1u] = mag;
        results[5u * e + 2u] = weighted;
        results[5u * e + 3u] = 0.0;
        results[5u * e + 4u] = (double)exact;
    }
    BARRIER();
    if (exact != 0u && inline_exact != 0u) {
        const ulp_u32 n = width * rows;
        double sum = 0.0;
        for (ulp_u32 base = 0; base < n; base += SSIM_CHUNK) {
            const ulp_u32 cnt = n - base < SSIM_CHUNK ? n - base : SSIM_CHUNK;
            for (ulp_u32 i = lid; i < cnt; i += SSIM_TOTAL_WG)
                chunk[i] = terms[terms_at + base + i];
            BARRIER();
            if (lid == 0u)
                for (ulp_u32 i = 0; i < cnt; i++)
                    sum = SSIM_DADD(sum, chunk[i]);
            BARRIER();
        }
        if (lid == 0u)
            results[5u * e + 3u] = sum;
    }
}

/* ---------------------------------------------------------------------
 * ssim_exact_segments (two phases) and ssim_exact_walk: for the
 * entries ssim_total flagged (and did not add inline), libvmaf's
 * sequential sum made in parallel: segment totals, each segment's
 * estimated binade and its summary there, then one work item's walk over
 * the segments (contracts and the argument: src/features/ssim/exact.rs,
 * whose `model` is these kernels in Rust). Records: SSIM_RECORD u32
 * words a segment (exact.rs RECORD_WORDS).
 * --------------------------------------------------------------------- */
#define SSIM_SEGMENT 1024u
#define SSIM_EXACT_WG 256u
#define SSIM_PER_ITEM (SSIM_SEGMENT / SSIM_EXACT_WG)
#define SSIM_RECORD 16u
#define SSIM_NO_BINADE (-100000)
#define SSIM_LOW ((ulp_i64)1 << 52)
#define SSIM_HIGH ((ulp_i64)1 << 53)
#define SSIM_LIMIT ((ulp_u64)1 << 40)

FUNC ulp_u64 ssim_word64(GLOBAL const ulp_u32 *w, ulp_u32 at)
{
    return ((ulp_u64)w[at + 1u] << 32) | (ulp_u64)w[at];
}

FUNC void ssim_put64(GLOBAL ulp_u32 *w, ulp_u32 at, ulp_u64 v)
{
    w[at] = (ulp_u32)v;
    w[at + 1u] = (ulp_u32)(v >> 32);
}

/* exact.rs decompose: the binade of a positive, finite, normal sum and its
 * significand m (2^52 <= m < 2^53); binade SSIM_NO_BINADE for any other. */
FUNC int ssim_decompose(double s, ulp_i64 *m)
{
    const ulp_u64 bits = ULP_F64_BITS(s);
    const int biased = (int)((bits >> 52) & 0x7FFu);
    if (!(s > 0.0) || biased == 0 || biased == 0x7FF)
        return SSIM_NO_BINADE;
    *m = (ulp_i64)((bits & (((ulp_u64)1 << 52) - 1u)) | ((ulp_u64)1 << 52));
    return biased - 1023;
}

/* exact.rs compose: m * 2^(e - 52). */
FUNC double ssim_compose(int e, ulp_i64 m)
{
    return ULP_F64_FROM(((ulp_u64)(e + 1023) << 52) | ((ulp_u64)m & (((ulp_u64)1 << 52) - 1u)));
}

/* exact.rs Summary, for an even (index 0) and an odd m at its start. */
typedef struct {
    int bad;
    ulp_i64 d[2], lo[2], hi[2];
} ssim_summary;

FUNC ssim_summary ssim_empty(int bad)
{
    ssim_summary s;
    s.bad = bad;
    for (int p = 0; p < 2; p++) {
        s.d[p] = 0;
        s.lo[p] = SSIM_HIGH;
        s.hi[p] = -SSIM_HIGH;
    }
    return s;
}

/* exact.rs Summary::then: a, then b. */
FUNC ssim_summary ssim_then(ssim_summary a, ssim_summary b)
{
    ssim_summary o;
    o.bad = a.bad | b.bad;
    for (int p = 0; p < 2; p++) {
        const ulp_i64 d = a.d[p];
        const int q = (int)((p + d) & 1);
        o.d[p] = d + b.d[q];
        o.lo[p] = a.lo[p] < d + b.lo[q] ? a.lo[p] : d + b.lo[q];
        o.hi[p] = a.hi[p] > d + b.hi[q] ? a.hi[p] : d + b.hi[q];
    }
    return o;
}

/* exact.rs increment then Summary::of: term t's move of m in binade e. */
FUNC ssim_summary ssim_term(double t, int e)
{
    const ulp_u64 bits = ULP_F64_BITS(t);
    const int biased = (int)((bits >> 52) & 0x7FFu);
    if (biased == 0x7FF)
        return ssim_empty(1);
    const ulp_u64 fraction = bits & (((ulp_u64)1 << 52) - 1u);
    const ulp_u64 man = biased == 0 ? fraction : (fraction | ((ulp_u64)1 << 52));
    const int q = biased == 0 ? -1074 : biased - 1075;
    ssim_summary s = ssim_empty(0);
    if (man == 0u) {
        for (int p = 0; p < 2; p++)
            s.d[p] = s.lo[p] = s.hi[p] = 0;
        return s;
    }
    const int d = q - e + 52;
    ulp_u64 a;
    int side; /* the fraction against one half: -1, 0 (a tie), 1 */
    if (d >= 0) {
        if (d > 10)
            return ssim_empty(1);
        a = man << d;
        side = -1;
    } else if (-d > 53) {
        a = 0;
        side = -1;
    } else {
        const ulp_u32 sh = (ulp_u32)(-d);
        const ulp_u64 rem = man & (((ulp_u64)1 << sh) - 1u), mid = (ulp_u64)1 << (sh - 1u);
        a = man >> sh;
        side = rem < mid ? -1 : (rem == mid ? 0 : 1);
    }
    if (a >= SSIM_LIMIT)
        return ssim_empty(1);
    const ulp_i64 ai = (ulp_i64)a;
    ulp_i64 base;
    if ((bits >> 63) == 0u)
        base = side > 0 ? ai + 1 : ai;
    else
        base = side < 0 ? -ai : -ai - 1;
    for (int p = 0; p < 2; p++) {
        /* A tie: the even one of m + base and m + base + 1. */
        s.d[p] = base + (side == 0 ? ((p + base) & 1) : 0);
        s.lo[p] = s.hi[p] = s.d[p];
    }
    return s;
}

/* Entry e's flag: ssim_total could not decide its mean. */
FUNC int ssim_flagged(GLOBAL const double *results, ulp_u32 e)
{
    return results[5u * e + 4u] != 0.0;
}

/* Adds red[0 .. SSIM_EXACT_WG) into red[0] (a tree: the totals are
 * estimates, any order will do). */
FUNC void ssim_tree(LOCAL_PTR double *red, ulp_u32 lid)
{
    for (ulp_u32 stride = SSIM_EXACT_WG / 2u; stride > 0u; stride >>= 1) {
        if (lid < stride)
            red[lid] += red[lid + stride];
        BARRIER();
    }
}

/* Phase 0: every segment's total (an estimate, any order). Phase 1: its
 * estimated binade (of the totals before it) and its summary there: this
 * work item's 4 terms, then a tree (strides 1, 2, 4, ...). Work group g
 * takes segments g, g + groups, ... of every flagged entry. */
KERNEL ssim_exact_segments(GLOBAL const double *terms, GLOBAL const ulp_u32 *entries, GLOBAL const double *results,
                           GLOBAL ulp_u32 *records, ulp_u32 count, ulp_u32 groups, ulp_u32 phase)
{
    LOCAL double red[SSIM_EXACT_WG];
    LOCAL ssim_summary tree[SSIM_EXACT_WG];
    LOCAL int binade;
    const ulp_u32 lid = LOCAL_ID(0);
    for (ulp_u32 e = 0; e < count; e++) {
        if (!ssim_flagged(results, e))
            continue; /* uniform over the group */
        const ulp_u32 terms_at = entries[SSIM_ENTRY * e], first = entries[SSIM_ENTRY * e + 5u];
        const ulp_u32 n = entries[SSIM_ENTRY * e + 2u] * entries[SSIM_ENTRY * e + 3u];
        const ulp_u32 segs = (n + SSIM_SEGMENT - 1u) / SSIM_SEGMENT;
        for (ulp_u32 j = GROUP_ID(0); j < segs; j += groups) {
            const ulp_u32 w = SSIM_RECORD * (first + j);
            /* Phase 0: the segment's terms; phase 1: the totals before it. */
            double s = 0.0;
            if (phase == 0u) {
                for (ulp_u32 i = j * SSIM_SEGMENT + lid; i < n && i < (j + 1u) * SSIM_SEGMENT; i += SSIM_EXACT_WG)
                    s += terms[terms_at + i];
            } else {
                for (ulp_u32 i = lid; i < j; i += SSIM_EXACT_WG)
                    s += ULP_F64_FROM(ssim_word64(records, SSIM_RECORD * (first + i)));
            }
            red[lid] = s;
            BARRIER();
            ssim_tree(red, lid);
            if (phase == 0u) {
                if (lid == 0u)
                    ssim_put64(records, w, ULP_F64_BITS(red[0]));
                BARRIER();
                continue; /* uniform over the group */
            }
            if (lid == 0u) {
                ulp_i64 m;
                binade = ssim_decompose(red[0], &m);
            }
            BARRIER();
            const int be = binade;
            ssim_summary acc = ssim_empty(be == SSIM_NO_BINADE);
            const ulp_u32 at = j * SSIM_SEGMENT + SSIM_PER_ITEM * lid;
            for (ulp_u32 k = 0; k < SSIM_PER_ITEM; k++)
                if (at + k < n && be != SSIM_NO_BINADE)
                    acc = ssim_then(acc, ssim_term(terms[terms_at + at + k], be));
            tree[lid] = acc;
            BARRIER();
            for (ulp_u32 stride = 1u; stride < SSIM_EXACT_WG; stride <<= 1) {
                if (lid % (2u * stride) == 0u)
                    tree[lid] = ssim_then(tree[lid], tree[lid + stride]);
                BARRIER();
            }
            if (lid == 0u) {
                const ssim_summary r = tree[0];
                records[w + 2u] = (ulp_u32)be;
                records[w + 3u] = (ulp_u32)r.bad;
                for (int p = 0; p < 2; p++) {
                    ssim_put64(records, w + 4u + 2u * (ulp_u32)p, (ulp_u64)r.d[p]);
                    ssim_put64(records, w + 8u + 2u * (ulp_u32)p, (ulp_u64)r.lo[p]);
                    ssim_put64(records, w + 12u + 2u * (ulp_u32)p, (ulp_u64)r.hi[p]);
                }
            }
            BARRIER();
        }
    }
}

KERNEL ssim_exact_walk(GLOBAL const double *terms, GLOBAL const ulp_u32 *entries, GLOBAL double *results,
                       GLOBAL const ulp_u32 *records, ulp_u32 count)
{
    LOCAL ssim_summary batch_sums[SSIM_EXACT_WG];
    LOCAL int binades[SSIM_EXACT_WG];
    LOCAL double chunk[SSIM_SEGMENT];
    LOCAL ulp_u32 slow_at;
    const ulp_u32 e = GROUP_ID(0), lid = LOCAL_ID(0);
    if (e >= count || !ssim_flagged(results, e))
        return; /* uniform over the group */
    const ulp_u32 terms_at = entries[SSIM_ENTRY * e], first = entries[SSIM_ENTRY * e + 5u];
    const ulp_u32 n = entries[SSIM_ENTRY * e + 2u] * entries[SSIM_ENTRY * e + 3u];
    const ulp_u32 segs = (n + SSIM_SEGMENT - 1u) / SSIM_SEGMENT;
    double s = 0.0; /* the first work item's exact running sum */
    for (ulp_u32 base = 0; base < segs; base += SSIM_EXACT_WG) {
        const ulp_u32 batch = segs - base < SSIM_EXACT_WG ? segs - base : SSIM_EXACT_WG;
        if (lid < batch) {
            const ulp_u32 w = SSIM_RECORD * (first + base + lid);
            ssim_summary r;
            binades[lid] = (int)records[w + 2u];
            r.bad = (int)records[w + 3u];
            for (int p = 0; p < 2; p++) {
                r.d[p] = (ulp_i64)ssim_word64(records, w + 4u + 2u * (ulp_u32)p);
                r.lo[p] = (ulp_i64)ssim_word64(records, w + 8u + 2u * (ulp_u32)p);
                r.hi[p] = (ulp_i64)ssim_word64(records, w + 12u + 2u * (ulp_u32)p);
            }
            batch_sums[lid] = r;
        }
        BARRIER();
        ulp_u32 j = 0; /* the first work item's */
        for (;;) {
            if (lid == 0u) {
                /* Whole segments while the sum is in a segment's estimated
                 * binade and its prefixes keep m inside (exact.rs apply). */
                while (j < batch) {
                    ulp_i64 m = 0;
                    const int se = ssim_decompose(s, &m);
                    if (se == SSIM_NO_BINADE || se != binades[j] || batch_sums[j].bad)
                        break;
                    const int p = (int)(m & 1);
                    if (!(m + batch_sums[j].lo[p] > SSIM_LOW && m + batch_sums[j].hi[p] < SSIM_HIGH))
                        break;
                    s = ssim_compose(se, m + batch_sums[j].d[p]);
                    j++;
                }
                slow_at = j;
            }
            BARRIER();
            const ulp_u32 js = slow_at;
            if (js >= batch)
                break; /* uniform over the group */
            /* A slow segment: staged by the group, added in order by the
             * first work item with libvmaf's addition. */
            const ulp_u32 b = (base + js) * SSIM_SEGMENT;
            const ulp_u32 cnt = n - b < SSIM_SEGMENT ? n - b : SSIM_SEGMENT;
            for (ulp_u32 i = lid; i < cnt; i += SSIM_EXACT_WG)
                chunk[i] = terms[terms_at + b + i];
            BARRIER();
            if (lid == 0u) {
                for (ulp_u32 i = 0; i < cnt; i++)
                    s = SSIM_DADD(s, chunk[i]);
                j = js + 1u;
            }
            BARRIER(); /* chunk and slow_at are written again */
        }
        BARRIER(); /* the batch's records are loaded again */
    }
    if (lid == 0u)
        results[5u * e + 3u] = s;
}

/*
 * ssimulacra2 family (contracts: the KernelSpecs in
 * src/features/ssimulacra2/gpu.rs). Every per-pixel operation is the CPU
 * reference's (src/features/ssimulacra2/{color,xyb,pyramid,blur,maps}.rs,
 * which mirror the lusoris fork's ssimulacra2.c) in its order, each f32
 * operation rounded on its own (ADD_RN/SUB_RN/MUL_RN/DIV_RN, no FMA), the
 * map arithmetic in double as the C does. Only the order of the f64 map
 * sums differs: down each column, then across the columns.
 */
#include "ulp.h"

#if defined(__CUDACC__)
#define S2_BITS(x) __float_as_uint(x)
#define S2_FLOAT(u) __uint_as_float(u)
#else
#define S2_BITS(x) as_uint(x)
#define S2_FLOAT(u) as_float(u)
#endif

/* The poles of the recursive Gaussian (the IIR's state per input). */
#define S2_POLES 3
/* The five blurred statistics of a channel: ref, dist, ref * ref,
 * dist * dist, ref * dist. */
#define S2_STATS 5

/* ssimulacra2_math.h vmaf_ss2_cbrtf: the exponent divided by three through
 * the bits, then two Newton steps, all in f32. */
FUNC float s2_cbrtf(float x)
{
    if (x <= 0.0f)
        return 0.0f;
    float y = S2_FLOAT(S2_BITS(x) / 3u + 0x2a5137a0u);
    y = MUL_RN(ADD_RN(MUL_RN(2.0f, y), DIV_RN(x, MUL_RN(y, y))), 0.333333343f);
    y = MUL_RN(ADD_RN(MUL_RN(2.0f, y), DIV_RN(x, MUL_RN(y, y))), 0.333333343f);
    return y;
}

/* linear_rgb_to_xyb at one pixel (opsin matrix, bias, cube root,
 * MakePositiveXYB); m = {m01, m11, m22, cbrt_bias}. */
FUNC void s2_xyb(float r, float g, float b, float m01, float m11, float m22, float cbrt_bias, float *ox, float *oy,
                 float *ob)
{
    const float bias = 0.0037930732552754493f;
    float l = ADD_RN(ADD_RN(ADD_RN(MUL_RN(0.30f, r), MUL_RN(m01, g)), MUL_RN(0.078f, b)), bias);
    float m = ADD_RN(ADD_RN(ADD_RN(MUL_RN(0.23f, r), MUL_RN(m11, g)), MUL_RN(0.078f, b)), bias);
    float s = ADD_RN(ADD_RN(ADD_RN(MUL_RN(0.24342268924547819f, r), MUL_RN(0.20476744424496821f, g)), MUL_RN(m22, b)),
                     bias);
    l = l < 0.0f ? 0.0f : l;
    m = m < 0.0f ? 0.0f : m;
    s = s < 0.0f ? 0.0f : s;
    const float L = SUB_RN(s2_cbrtf(l), cbrt_bias);
    const float M = SUB_RN(s2_cbrtf(m), cbrt_bias);
    const float S = SUB_RN(s2_cbrtf(s), cbrt_bias);
    const float x = MUL_RN(0.5f, SUB_RN(L, M));
    const float y = MUL_RN(0.5f, ADD_RN(L, M));
    *ob = ADD_RN(SUB_RN(S, y), 0.55f);
    *ox = ADD_RN(MUL_RN(x, 14.0f), 0.42f);
    *oy = ADD_RN(y, 0.01f);
}

/* vmaf_ss2_srgb_eotf: the 1024-entry table, interpolated in f32. */
FUNC float s2_eotf(float x, GLOBAL const float *lut)
{
    if (x <= 0.0f)
        return 0.0f;
    if (x >= 1.0f)
        return 1.0f;
    const float idx = MUL_RN(x, 1023.0f);
    const int i = (int)idx;
    const float frac = SUB_RN(idx, (float)i);
    const float a = lut[i];
    return ADD_RN(a, MUL_RN(SUB_RN(lut[i + 1], a), frac));
}

FUNC float s2_clamp01(float v)
{
    return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}

/* read_plane's chroma coordinate: the same, halved, or i * plane / luma. */
FUNC ulp_u32 s2_chroma_index(ulp_u32 i, ulp_u32 plane, ulp_u32 luma)
{
    ulp_u32 s = plane == luma ? i : (plane * 2u == luma ? i >> 1 : (ulp_u32)(((ulp_u64)i * plane) / luma));
    return s < plane ? s : plane - 1u;
}

/* ---------------------------------------------------------------------
 * ssimulacra2_linear_xyb: one work item per pixel of scale 0 (x = global
 * id 0, y = group id 1). picture_to_linear_rgb for both pictures (YUV
 * through the matrix constants, clamped, the EOTF table) into `lin`, and
 * linear_rgb_to_xyb into `xyb`; both hold six planes: the reference's R, G,
 * B (X, Y, B), then the distorted's.
 * --------------------------------------------------------------------- */
KERNEL ssimulacra2_linear_xyb(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL const float *lut,
                              GLOBAL float *lin, GLOBAL float *xyb, ulp_u32 width, ulp_u32 height,
                              ulp_u32 chroma_width, ulp_u32 chroma_height, ulp_u32 bytes_per_sample, float inv_peak,
                              float y_off, float y_scale, float c_scale, float cr_r, float cb_g, float cr_g,
                              float cb_b, float m01, float m11, float m22, float cbrt_bias)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GROUP_ID(1);
    if (x >= width || y >= height)
        return;
    const ulp_u32 plane = width * height, i = y * width + x;
    const ulp_u32 c = s2_chroma_index(y, chroma_height, height) * chroma_width +
                      s2_chroma_index(x, chroma_width, width);
    const ulp_u32 u_at = plane + c, v_at = plane + chroma_width * chroma_height + c;
    for (int k = 0; k < 2; k++) {
        GLOBAL const ulp_u8 *pic = k == 0 ? ref : dis;
        const float Y = MUL_RN((float)ulp_sample(pic, i, bytes_per_sample), inv_peak);
        const float U = MUL_RN((float)ulp_sample(pic, u_at, bytes_per_sample), inv_peak);
        const float V = MUL_RN((float)ulp_sample(pic, v_at, bytes_per_sample), inv_peak);
        const float yn = MUL_RN(SUB_RN(Y, y_off), y_scale);
        const float un = MUL_RN(SUB_RN(U, 0.5f), c_scale);
        const float vn = MUL_RN(SUB_RN(V, 0.5f), c_scale);
        const float r = s2_eotf(s2_clamp01(ADD_RN(yn, MUL_RN(cr_r, vn))), lut);
        const float g = s2_eotf(s2_clamp01(ADD_RN(ADD_RN(yn, MUL_RN(cb_g, un)), MUL_RN(cr_g, vn))), lut);
        const float b = s2_eotf(s2_clamp01(ADD_RN(yn, MUL_RN(cb_b, un))), lut);
        GLOBAL float *l = lin + 3u * plane * (ulp_u32)k;
        GLOBAL float *o = xyb + 3u * plane * (ulp_u32)k;
        l[i] = r;
        l[plane + i] = g;
        l[2u * plane + i] = b;
        float X, Yx, B;
        s2_xyb(r, g, b, m01, m11, m22, cbrt_bias, &X, &Yx, &B);
        o[i] = X;
        o[plane + i] = Yx;
        o[2u * plane + i] = B;
    }
}

/* ---------------------------------------------------------------------
 * ssimulacra2_downsample_xyb: one work item per pixel of the next scale
 * (x = global id 0, y = group id 1). downsample_2x2 of the six linear
 * planes of `lin_in` (in_width x in_height) into `lin_out`
 * ((in_width + 1) / 2 x (in_height + 1) / 2), and linear_rgb_to_xyb of the
 * result into `xyb`.
 * --------------------------------------------------------------------- */
KERNEL ssimulacra2_downsample_xyb(GLOBAL const float *lin_in, GLOBAL float *lin_out, GLOBAL float *xyb,
                                  ulp_u32 in_width, ulp_u32 in_height, float m01, float m11, float m22,
                                  float cbrt_bias)
{
    const ulp_u32 w = (in_width + 1u) / 2u, h = (in_height + 1u) / 2u;
    const ulp_u32 x = GLOBAL_ID(0), y = GROUP_ID(1);
    if (x >= w || y >= h)
        return;
    const ulp_u32 in_plane = in_width * in_height, plane = w * h, i = y * w + x;
    const ulp_u32 x0 = 2u * x, y0 = 2u * y;
    const ulp_u32 x1 = x0 + 1u < in_width ? x0 + 1u : in_width - 1u;
    const ulp_u32 y1 = y0 + 1u < in_height ? y0 + 1u : in_height - 1u;
    for (ulp_u32 k = 0; k < 2u; k++) {
        float rgb[3];
        for (ulp_u32 c = 0; c < 3u; c++) {
            GLOBAL const float *p = lin_in + (3u * k + c) * in_plane;
            float sum = ADD_RN(0.0f, p[y0 * in_width + x0]);
            sum = ADD_RN(sum, p[y0 * in_width + x1]);
            sum = ADD_RN(sum, p[y1 * in_width + x0]);
            sum = ADD_RN(sum, p[y1 * in_width + x1]);
            rgb[c] = MUL_RN(sum, 0.25f);
            lin_out[(3u * k + c) * plane + i] = rgb[c];
        }
        float X, Y, B;
        s2_xyb(rgb[0], rgb[1], rgb[2], m01, m11, m22, cbrt_bias, &X, &Y, &B);
        GLOBAL float *o = xyb + 3u * plane * k;
        o[i] = X;
        o[plane + i] = Y;
        o[2u * plane + i] = B;
    }
}

/* One step of the 3-pole IIR for one input: o_k = n2[k] * sum - d1[k] *
 * prev1_k - prev2_k, the state moved along, (o_0 + o_1) + o_2 returned. */
FUNC float s2_iir_step(float sum, const float *n2, const float *d1, float *p1, float *p2)
{
    float o[S2_POLES];
#pragma unroll
    for (int k = 0; k < S2_POLES; k++) {
        o[k] = SUB_RN(SUB_RN(MUL_RN(n2[k], sum), MUL_RN(d1[k], p1[k])), p2[k]);
        p2[k] = p1[k];
        p1[k] = o[k];
    }
    return ADD_RN(ADD_RN(o[0], o[1]), o[2]);
}

/* ---------------------------------------------------------------------
 * ssimulacra2_blur_rows: one work item per row y and channel c of the
 * current scale (item c * height + y): fast_gaussian_1d along the row of
 * the five statistics' inputs (ref and dist XYB of channel c, and the
 * products ref * ref, dist * dist, ref * dist, each rounded to f32 as
 * multiply_3plane writes them), into `rows` plane c * 5 + k. `xyb` holds
 * six planes (ref X, Y, B, dist X, Y, B) of width x height.
 * --------------------------------------------------------------------- */
KERNEL ssimulacra2_blur_rows(GLOBAL const float *xyb, GLOBAL float *rows, ulp_u32 width, ulp_u32 height,
                             float n2_0, float n2_1, float n2_2, float d1_0, float d1_1, float d1_2, ulp_u32 radius)
{
    const ulp_u32 item = GLOBAL_ID(0);
    if (item >= 3 * height)
        return;
    const ulp_u32 c = item / height, y = item % height;
    const ulp_u32 plane = width * height;
    GLOBAL const float *a = xyb + c * plane + y * width;
    GLOBAL const float *b = xyb + (3u + c) * plane + y * width;
    GLOBAL float *out = rows + 5u * c * plane + y * width;
    const float n2[S2_POLES] = {n2_0, n2_1, n2_2};
    const float d1[S2_POLES] = {d1_0, d1_1, d1_2};
    float p1[S2_STATS][S2_POLES], p2[S2_STATS][S2_POLES];
#pragma unroll
    for (int s = 0; s < S2_STATS; s++)
#pragma unroll
        for (int k = 0; k < S2_POLES; k++)
            p1[s][k] = p2[s][k] = 0.0f;
    const int w = (int)width, big_n = (int)radius;
    for (int n = -big_n + 1; n < w; n++) {
        const int left = n - big_n - 1, right = n + big_n - 1;
        float l[S2_STATS] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, r[S2_STATS] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        if (left >= 0) {
            const float la = a[left], lb = b[left];
            l[0] = la;
            l[1] = lb;
            l[2] = MUL_RN(la, la);
            l[3] = MUL_RN(lb, lb);
            l[4] = MUL_RN(la, lb);
        }
        if (right < w) {
            const float ra = a[right], rb = b[right];
            r[0] = ra;
            r[1] = rb;
            r[2] = MUL_RN(ra, ra);
            r[3] = MUL_RN(rb, rb);
            r[4] = MUL_RN(ra, rb);
        }
#pragma unroll
        for (int s = 0; s < S2_STATS; s++) {
            const float v = s2_iir_step(ADD_RN(l[s], r[s]), n2, d1, p1[s], p2[s]);
            if (n >= 0)
                out[(ulp_u32)s * plane + (ulp_u32)n] = v;
        }
    }
}

/* ssim_map's per-pixel error (f32 moments, then double), at least 0. */
FUNC double s2_ssim_error(float mu1, float mu2, float s11, float s22, float s12)
{
    const float mu11 = MUL_RN(mu1, mu1), mu22 = MUL_RN(mu2, mu2), mu12 = MUL_RN(mu1, mu2);
    const float diff = SUB_RN(mu1, mu2);
    const float num_m = SUB_RN(1.0f, MUL_RN(diff, diff));
    const float num_s = ADD_RN(MUL_RN(2.0f, SUB_RN(s12, mu12)), 0.0009f);
    const float denom_s = ADD_RN(ADD_RN(SUB_RN(s11, mu11), SUB_RN(s22, mu22)), 0.0009f);
    const double d = 1.0 - (double)num_m * (double)num_s / (double)denom_s;
    return d < 0.0 ? 0.0 : d;
}

FUNC double s2_quartic(double x)
{
    const double x2 = x * x;
    return x2 * x2;
}

/* ---------------------------------------------------------------------
 * ssimulacra2_blur_columns_maps: one work item per column x (global id 0)
 * and channel c (group id 1) of the current scale. blur_plane's vertical
 * pass down the column of the five row-blurred planes `rows[c * 5 + k]`,
 * and at each row the SSIM and edge maps of the pixel (ssim_map,
 * edge_diff_map: `xyb` gives the unblurred ref and dist), each summed in
 * double down the column; the six sums (SSIM d, d^4, artifact, ^4, detail
 * lost, ^4) go to sums[base + (c * 6 + j) * stride + x].
 * --------------------------------------------------------------------- */
KERNEL ssimulacra2_blur_columns_maps(GLOBAL const float *xyb, GLOBAL const float *rows, GLOBAL double *sums,
                                     ulp_u32 width, ulp_u32 height, float n2_0, float n2_1, float n2_2, float d1_0,
                                     float d1_1, float d1_2, ulp_u32 radius, ulp_u32 base, ulp_u32 stride)
{
    const ulp_u32 x = GLOBAL_ID(0), c = GROUP_ID(1);
    if (x >= width)
        return;
    const ulp_u32 plane = width * height;
    GLOBAL const float *in = rows + 5u * c * plane + x;
    GLOBAL const float *img1 = xyb + c * plane + x;
    GLOBAL const float *img2 = xyb + (3u + c) * plane + x;
    const float n2[S2_POLES] = {n2_0, n2_1, n2_2};
    const float d1[S2_POLES] = {d1_0, d1_1, d1_2};
    float p1[S2_STATS][S2_POLES], p2[S2_STATS][S2_POLES];
#pragma unroll
    for (int s = 0; s < S2_STATS; s++)
#pragma unroll
        for (int k = 0; k < S2_POLES; k++)
            p1[s][k] = p2[s][k] = 0.0f;
    double acc[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    const int h = (int)height, big_n = (int)radius;
    for (int n = -big_n + 1; n < h; n++) {
        const int left = n - big_n - 1, right = n + big_n - 1;
        float v[S2_STATS];
#pragma unroll
        for (int s = 0; s < S2_STATS; s++) {
            const float lv = left >= 0 ? in[(ulp_u32)s * plane + (ulp_u32)left * width] : 0.0f;
            const float rv = right < h ? in[(ulp_u32)s * plane + (ulp_u32)right * width] : 0.0f;
            v[s] = s2_iir_step(ADD_RN(lv, rv), n2, d1, p1[s], p2[s]);
        }
        if (n >= 0) {
            const double d = s2_ssim_error(v[0], v[1], v[2], v[3], v[4]);
            acc[0] += d;
            acc[1] += s2_quartic(d);
            const double ed1 = fabs((double)img1[(ulp_u32)n * width] - (double)v[0]);
            const double ed2 = fabs((double)img2[(ulp_u32)n * width] - (double)v[1]);
            const double e = (1.0 + ed2) / (1.0 + ed1) - 1.0;
            const double art = e > 0.0 ? e : 0.0;
            const double det = e < 0.0 ? -e : 0.0;
            acc[2] += art;
            acc[3] += s2_quartic(art);
            acc[4] += det;
            acc[5] += s2_quartic(det);
        }
    }
#pragma unroll
    for (int j = 0; j < 6; j++)
        sums[base + (c * 6u + (ulp_u32)j) * stride + x] = acc[j];
}

/* ---------------------------------------------------------------------
 * ssimulacra2_sum_columns: work item t < 108 (one group of 128) adds, in
 * column order, the column sums of term t % 18 (channel * 6 + sum) of
 * scale t / 18, whose width is width0 halved (rounding up) t / 18 times;
 * scales from `scales` on give 0. totals[t] is the plane's sum.
 * --------------------------------------------------------------------- */
KERNEL ssimulacra2_sum_columns(GLOBAL const double *sums, GLOBAL double *totals, ulp_u32 width0, ulp_u32 scales)
{
    const ulp_u32 t = LOCAL_ID(0);
    if (t >= 108u)
        return;
    const ulp_u32 s = t / 18u, term = t % 18u;
    double total = 0.0;
    if (s < scales) {
        ulp_u32 w = width0;
        for (ulp_u32 k = 0; k < s; k++)
            w = (w + 1u) / 2u;
        GLOBAL const double *col = sums + (s * 18u + term) * width0;
        for (ulp_u32 x = 0; x < w; x++)
            total += col[x];
    }
    totals[t] = total;
}

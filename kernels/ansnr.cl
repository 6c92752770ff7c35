/*
 * ansnr family: `float_ansnr` (contracts: ANSNR_FILTER_ROWS and
 * ANSNR_ROW_GROUPS in src/features/ansnr.rs). Float arithmetic in exactly
 * the CPU reference's order (src/features/ansnr.rs `filter2d`,
 * `signal_noise`), every operation rounded on its own (ADD_RN/MUL_RN, no
 * FMA), so results are bit-identical.
 */
#include "ulp.h"

/* ansnr_tools.c's border rule: -i above, 2n - i - 1 below. Clamped after,
 * so a plane narrower than the filter reads in bounds (the CPU reference
 * cannot filter such planes). */
FUNC int ansnr_mirror(int i, int n)
{
    const int m = i < 0 ? -i : (i >= n ? 2 * n - i - 1 : i);
    return m < 0 ? 0 : (m >= n ? n - 1 : m);
}

/* picture_copy.c: a sample as the float extractors see it, minus 128
 * (float_ansnr.c offsets both pictures by -128). */
FUNC float ansnr_pixel(GLOBAL const ulp_u8 *plane, int i, ulp_u32 bytes_per_sample, float scaler)
{
    return SUB_RN(DIV_RN((float)ulp_sample(plane, (ulp_u32)i, bytes_per_sample), scaler), 128.0f);
}

/* ansnr_filter2d_s at one pixel, the arithmetic both kernels share: the
 * reference's 3x3 window through taps 0..9 into `r`, the distorted's 5x5
 * window through taps 9..34 into `d`; each filter row summed in f32, then
 * the rows, every operation rounded on its own. TAP(k) reads tap k and
 * REF(i, j) / DIS(i, j) the windows' samples (row i, column j): the
 * kernels keep them in different places (registers, global memory). */
#define ANSNR_FILTER_PIXEL(r, d, TAP, REF, DIS)                             \
    do {                                                                    \
        r = 0.0f;                                                           \
        _Pragma("unroll") for (int fi_ = 0; fi_ < 3; fi_++) {               \
            float inner_ = 0.0f;                                            \
            _Pragma("unroll") for (int fj_ = 0; fj_ < 3; fj_++)             \
                inner_ = ADD_RN(inner_, MUL_RN(TAP(fi_ * 3 + fj_), REF(fi_, fj_))); \
            r = ADD_RN(r, inner_);                                          \
        }                                                                   \
        d = 0.0f;                                                           \
        _Pragma("unroll") for (int fi_ = 0; fi_ < 5; fi_++) {               \
            float inner_ = 0.0f;                                            \
            _Pragma("unroll") for (int fj_ = 0; fj_ < 5; fj_++)             \
                inner_ = ADD_RN(inner_, MUL_RN(TAP(9 + fi_ * 5 + fj_), DIS(fi_, fj_))); \
            d = ADD_RN(d, inner_);                                          \
        }                                                                   \
    } while (0)

/* One work item per luma row: each pixel of the row, left to right, through
 * the 3x3 reference taps (taps[0..9]) and the 5x5 distorted taps
 * (taps[9..34]); the row's signal and noise energies summed in f32 in pixel
 * order (ansnr_tools.c `ansnr_mse_s`'s inner loop). The host adds the rows
 * in order, as ansnr_mse_s does.
 *
 * The work item slides both filter windows along its row (a: 3x3 of the
 * reference, b: 5x5 of the distorted, as floats), so each step reads only
 * the windows' new column, 8 samples, instead of 34 (what decides the
 * speed on CPU devices such as PoCL). */
KERNEL ansnr_filter_rows(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL const float *taps,
                         GLOBAL float *rows, ulp_u32 width, ulp_u32 height, ulp_u32 bytes_per_sample, float scaler)
{
    const ulp_u32 y = GLOBAL_ID(0);
    if (y >= height)
        return;
    const int w = (int)width, h = (int)height;
    /* The first sample of each picture row the 5x5 window reads (rows
     * y - 2 .. y + 2, mirrored); the 3x3 window reads the middle three. */
    int row[5];
#pragma unroll
    for (int k = 0; k < 5; k++)
        row[k] = ansnr_mirror((int)y - 2 + k, h) * w;
    float t[34];
#pragma unroll
    for (int k = 0; k < 34; k++)
        t[k] = taps[k];
    /* The windows for pixel -1: columns -2 .. 0 and -3 .. 1 (column 0 of
     * each is shifted out before it is used). */
    float a[3][3], b[5][5];
#pragma unroll
    for (int fi = 0; fi < 3; fi++) {
        a[fi][0] = 0.0f;
#pragma unroll
        for (int fj = 1; fj < 3; fj++)
            a[fi][fj] = ansnr_pixel(ref, row[fi + 1] + ansnr_mirror(fj - 2, w), bytes_per_sample, scaler);
    }
#pragma unroll
    for (int fi = 0; fi < 5; fi++) {
        b[fi][0] = 0.0f;
#pragma unroll
        for (int fj = 1; fj < 5; fj++)
            b[fi][fj] = ansnr_pixel(dis, row[fi] + ansnr_mirror(fj - 3, w), bytes_per_sample, scaler);
    }
    float sig = 0.0f, noise = 0.0f;
    for (int x = 0; x < w; x++) {
        /* Slide right: columns x - 1 .. x + 1 and x - 2 .. x + 2. */
        const int ca = ansnr_mirror(x + 1, w), cb = ansnr_mirror(x + 2, w);
#pragma unroll
        for (int fi = 0; fi < 3; fi++) {
            a[fi][0] = a[fi][1];
            a[fi][1] = a[fi][2];
            a[fi][2] = ansnr_pixel(ref, row[fi + 1] + ca, bytes_per_sample, scaler);
        }
#pragma unroll
        for (int fi = 0; fi < 5; fi++) {
#pragma unroll
            for (int fj = 0; fj < 4; fj++)
                b[fi][fj] = b[fi][fj + 1];
            b[fi][4] = ansnr_pixel(dis, row[fi] + cb, bytes_per_sample, scaler);
        }
        float r, d;
#define ROWS_TAP(k) t[k]
#define ROWS_REF(i, j) a[i][j]
#define ROWS_DIS(i, j) b[i][j]
        ANSNR_FILTER_PIXEL(r, d, ROWS_TAP, ROWS_REF, ROWS_DIS);
        const float e = SUB_RN(r, d);
        sig = ADD_RN(sig, MUL_RN(r, r));
        noise = ADD_RN(noise, MUL_RN(e, e));
    }
    rows[2 * y] = sig;
    rows[2 * y + 1] = noise;
}

/* ---------------------------------------------------------------------
 * ansnr_row_groups: the same contract as ansnr_filter_rows, one work group
 * per luma row (contract: ANSNR_ROW_GROUPS in src/features/ansnr.rs), for
 * GPUs. The row is cut into chunks of ANSNR_CHUNK pixels; the group's
 * work items filter a chunk's pixels in parallel, work item i taking pixels
 * i, i + ANSNR_WG, ... (consecutive work items read consecutive samples:
 * coalesced), and put each pixel's two energies in local memory; then work
 * item 0 alone adds them to the row's sums in pixel order. Only the adds
 * are sequential: each product is the same wherever it is computed, so the
 * sums keep the CPU's bits.
 * --------------------------------------------------------------------- */

#define ANSNR_WG 128
#define ANSNR_CHUNK 1024

/* picture_copy's `v / scaler - 128`, with the division done as a multiply
 * by `inv` = 1 / scaler: the contract's scaler is a power of two (every
 * bit depth's is), so 1 / scaler is exact and so is v * inv, the very
 * bits of v / scaler, without a correctly rounded division per sample. */
FUNC float ansnr_scaled(GLOBAL const ulp_u8 *plane, int i, ulp_u32 bytes_per_sample, float inv)
{
    return SUB_RN(MUL_RN((float)ulp_sample(plane, (ulp_u32)i, bytes_per_sample), inv), 128.0f);
}

KERNEL ansnr_row_groups(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL const float *taps,
                        GLOBAL float *rows, ulp_u32 width, ulp_u32 height, ulp_u32 bytes_per_sample, float scaler)
{
    /* Each pixel's r * r and (r - d) * (r - d), for one chunk: 8 KiB. */
    LOCAL float sig_px[ANSNR_CHUNK];
    LOCAL float noise_px[ANSNR_CHUNK];
    const ulp_u32 y = GROUP_ID(0);
    const int lid = (int)LOCAL_ID(0);
    if (y >= height)
        return; /* uniform over the group */
    const int w = (int)width, h = (int)height;
    const float inv = DIV_RN(1.0f, scaler);

    /* The first sample of each picture row the 5x5 window reads (rows
     * y - 2 .. y + 2, mirrored); the 3x3 window reads the middle three. */
    int row[5];
#pragma unroll
    for (int k = 0; k < 5; k++)
        row[k] = ansnr_mirror((int)y - 2 + k, h) * w;

    float sig = 0.0f, noise = 0.0f;
    for (int base = 0; base < w; base += ANSNR_CHUNK) {
        const int n = w - base < ANSNR_CHUNK ? w - base : ANSNR_CHUNK;
        for (int i = lid; i < n; i += ANSNR_WG) {
            const int x = base + i;
            /* Columns x - 2 .. x + 2, mirrored. */
            int col[5];
#pragma unroll
            for (int k = 0; k < 5; k++)
                col[k] = ansnr_mirror(x - 2 + k, w);
            float r, d;
#define GROUPS_TAP(k) taps[k]
#define GROUPS_REF(i, j) ansnr_scaled(ref, row[(i) + 1] + col[(j) + 1], bytes_per_sample, inv)
#define GROUPS_DIS(i, j) ansnr_scaled(dis, row[i] + col[j], bytes_per_sample, inv)
            ANSNR_FILTER_PIXEL(r, d, GROUPS_TAP, GROUPS_REF, GROUPS_DIS);
            const float e = SUB_RN(r, d);
            sig_px[i] = MUL_RN(r, r);
            noise_px[i] = MUL_RN(e, e);
        }
        BARRIER(); /* the chunk is filled */
        if (lid == 0) {
            /* ansnr_mse_s's adds, in pixel order, eight pixels a step. The
             * next step's energies are loaded before this step's adds, so
             * local memory's latency hides behind the two chains of
             * dependent adds, which alone set the pace. */
            int i = 0;
            if (n >= 8) {
                float s[8], q[8];
#pragma unroll
                for (int k = 0; k < 8; k++) {
                    s[k] = sig_px[k];
                    q[k] = noise_px[k];
                }
                for (; i + 16 <= n; i += 8) {
                    float s_next[8], q_next[8];
#pragma unroll
                    for (int k = 0; k < 8; k++) {
                        s_next[k] = sig_px[i + 8 + k];
                        q_next[k] = noise_px[i + 8 + k];
                    }
#pragma unroll
                    for (int k = 0; k < 8; k++) {
                        sig = ADD_RN(sig, s[k]);
                        noise = ADD_RN(noise, q[k]);
                        s[k] = s_next[k];
                        q[k] = q_next[k];
                    }
                }
#pragma unroll
                for (int k = 0; k < 8; k++) {
                    sig = ADD_RN(sig, s[k]);
                    noise = ADD_RN(noise, q[k]);
                }
                i += 8;
            }
            for (; i < n; i++) {
                sig = ADD_RN(sig, sig_px[i]);
                noise = ADD_RN(noise, noise_px[i]);
            }
        }
        BARRIER(); /* the sums have read the chunk: it may be refilled */
    }
    if (lid == 0) {
        rows[2 * y] = sig;
        rows[2 * y + 1] = noise;
    }
}

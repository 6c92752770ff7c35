/*
 * cambi family: `cambi` (contracts: the KernelSpecs in
 * src/features/cambi/gpu.rs; layout of `tables` in its `table` module).
 * Integer arithmetic throughout, except c_value_pixel's one conversion and
 * multiply per contrast step (rounded exactly as the CPU reference's) and
 * the fixed-point split of the pooled c-values (exact).
 */
#include "ulp.h"

#define CAMBI_NOT_COUNTED 0x10000u
#define CAMBI_TABLE_NUM_DIFFS 0
#define CAMBI_TABLE_VLT_LUMA 1
#define CAMBI_TABLE_BAND_BASE 2
#define CAMBI_TABLE_BAND_SIZE 3
#define CAMBI_TABLE_TVI 8
#define CAMBI_TABLE_WEIGHTS 40
#define CAMBI_TABLE_SETS 96
#define CAMBI_SET_WORDS 16
#define CAMBI_SET_W 0
#define CAMBI_SET_H 1
#define CAMBI_SET_OFF 2
#define CAMBI_SET_PAD 3
#define CAMBI_SET_CV_GROUPS_X 4
#define CAMBI_SET_CV_FIRST 5
#define CAMBI_SET_N 7
#define CAMBI_SET_K 8
#define CAMBI_SET_EL_FIRST 9

#define CAMBI_TILE_WG 16
#define CAMBI_CV_WG 64
#define CAMBI_CV_ROWS 16
/* Levels a work item's histogram holds, two 16-bit counts per word. */
#define CAMBI_BINS 128
#define CAMBI_POOL_WG 256
#define CAMBI_POOL_ELEMENTS 4096
#define CAMBI_HIST_BINS 2048

#if defined(__CUDACC__)
#define CAMBI_AS_FLOAT(x) __uint_as_float(x)
#define CAMBI_ATOMIC_ADD(p, v) atomicAdd((p), (v))
#define CAMBI_ATOMIC_OR(p, v) atomicOr((p), (v))
#else
#define CAMBI_AS_FLOAT(x) as_float(x)
#define CAMBI_ATOMIC_ADD(p, v) atomic_add((p), (v))
#define CAMBI_ATOMIC_OR(p, v) atomic_or((p), (v))
#endif

/* A work group's number in a 2-D grid of at most 32768 columns. */
FUNC ulp_u32 cambi_group(void)
{
    return GROUP_ID(0) + GROUP_ID(1) * NUM_GROUPS(0);
}

/* The set (scale of an image) group g belongs to: the last whose first
 * group (field `field` of its record) is not above g. */
FUNC ulp_u32 cambi_set_of(GLOBAL const ulp_u32 *tables, ulp_u32 n_sets, ulp_u32 g, ulp_u32 field)
{
    ulp_u32 s = 0;
    for (ulp_u32 k = 1; k < n_sets; k++)
        if (tables[CAMBI_TABLE_SETS + k * CAMBI_SET_WORDS + field] <= g)
            s = k;
    return s;
}

/* cambi.c `mode3`: the value two of the three share, else the smallest. */
FUNC ulp_u32 cambi_mode3(ulp_u32 a, ulp_u32 b, ulp_u32 c)
{
    if (a == b || a == c)
        return a;
    if (b == c)
        return b;
    ulp_u32 m = a < b ? a : b;
    return m < c ? m : c;
}

/* A sample brought to 10 bits (decimate_generic_*_and_convert_to_10b). */
FUNC ulp_u32 cambi_to_10_bit(ulp_u32 v, ulp_u32 bit_depth)
{
    if (bit_depth <= 10)
        return v << (10 - bit_depth);
    ulp_u32 shift = bit_depth - 10;
    return (v + (1u << (shift - 1))) >> shift;
}

/* The converted sample cambi.c's nearest-neighbour walk puts at (r, c). */
FUNC ulp_u32 cambi_converted(GLOBAL const ulp_u8 *input, GLOBAL const ulp_u32 *tables, ulp_u32 r, ulp_u32 c,
                             ulp_u32 in_w, ulp_u32 bytes_per_sample, ulp_u32 bit_depth, ulp_u32 x_off, ulp_u32 y_off)
{
    ulp_u32 i = tables[y_off + r] * in_w + tables[x_off + c];
    return cambi_to_10_bit(ulp_sample(input, i, bytes_per_sample), bit_depth);
}

/* cambi.c `cambi_preprocessing` (validate_image, decimate_generic_*,
 * anti_dithering_filter). libvmaf's anti-dithering runs in place in raster
 * order, but every sample it reads is right of or below the one it writes,
 * so still unwritten: each output is a function of the converted picture. */
KERNEL cambi_preprocess(GLOBAL const ulp_u8 *input, GLOBAL const ulp_u32 *tables, GLOBAL ulp_u32 *img,
                        GLOBAL ulp_u32 *state, ulp_u32 in_w, ulp_u32 in_h, ulp_u32 out_w, ulp_u32 out_h,
                        ulp_u32 bytes_per_sample, ulp_u32 bit_depth, ulp_u32 dither, ulp_u32 x_off, ulp_u32 y_off,
                        ulp_u32 img_off, ulp_u32 max_value, ulp_u32 validate)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1);
    if (validate && x < in_w && y < in_h && ulp_sample(input, y * in_w + x, bytes_per_sample) > max_value)
        CAMBI_ATOMIC_OR(&state[0], 1u);
    if (x >= out_w || y >= out_h)
        return;
#define CAMBI_AT(r, c) cambi_converted(input, tables, (r), (c), in_w, bytes_per_sample, bit_depth, x_off, y_off)
    ulp_u32 v = CAMBI_AT(y, x);
    if (dither) {
        const int right = x + 1 < out_w, below = y + 1 < out_h;
        if (right && below)
            v = (v + CAMBI_AT(y, x + 1) + CAMBI_AT(y + 1, x) + CAMBI_AT(y + 1, x + 1)) >> 2;
        else if (below)
            v = (v + CAMBI_AT(y + 1, x)) >> 1; /* last column */
        else if (right)
            v = (v + CAMBI_AT(y, x + 1)) >> 1; /* last row */
    }
#undef CAMBI_AT
    img[img_off + y * out_w + x] = v;
}

/* cambi.c `get_spatial_mask`, in two passes: a pixel is in the mask when
 * more than mask_index pixels of the 7x7 square around it (clipped to the
 * picture) have a zero derivative, i.e. equal their right and lower
 * neighbours (the last column and row count as equal). libvmaf sums the
 * squares with a cyclic summed-area table; the counts are integers, so
 * summing each square as 7 column sums gives the same numbers. No local
 * memory and no barrier: CPU drivers (lavapipe) pay microseconds for each.
 *
 * Pass 1: `sums[y * w + x]` = zero derivatives in column x, rows y - 3 ..
 * y + 3. */
KERNEL cambi_mask_columns(GLOBAL const ulp_u32 *img, GLOBAL ulp_u32 *sums, ulp_u32 w, ulp_u32 h, ulp_u32 off)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1);
    if (x >= w || y >= h)
        return;
    GLOBAL const ulp_u32 *plane = img + off;
    const ulp_u32 top = y > 3 ? y - 3 : 0, bottom = y + 4 < h ? y + 4 : h;
    ulp_u32 count = 0;
    ulp_u32 v = plane[top * w + x];
    for (ulp_u32 r = top; r < bottom; r++) {
        const ulp_u32 below = r + 1 < h ? plane[(r + 1) * w + x] : v;
        const int right = x + 1 == w || v == plane[r * w + x + 1];
        count += (right && v == below) ? 1u : 0u;
        v = below;
    }
    sums[y * w + x] = count;
}

/* Pass 2: the mask, from the 7 column sums around each pixel. */
KERNEL cambi_mask(GLOBAL const ulp_u32 *sums, GLOBAL ulp_u32 *mask, ulp_u32 w, ulp_u32 h, ulp_u32 off,
                  ulp_u32 mask_index)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1);
    if (x >= w || y >= h)
        return;
    const ulp_u32 left = x > 3 ? x - 3 : 0, right = x + 4 < w ? x + 4 : w;
    ulp_u32 count = 0;
    for (ulp_u32 c = left; c < right; c++)
        count += sums[y * w + c];
    mask[off + y * w + x] = count > mask_index ? 1u : 0u;
}

/* cambi.c `decimate` then `filter_mode`, one scale. libvmaf decimates in
 * place, every read at or after the write in raster order, and filters in
 * place through a 3-row buffer that holds each row's horizontal modes taken
 * before the row is overwritten; both are therefore functions of the input:
 * rows 0 and h - 1 keep their samples, the others take the mode of the
 * horizontal modes above, at and below, a row's first and last samples
 * being their own horizontal mode. */
KERNEL cambi_mode(GLOBAL const ulp_u32 *src, GLOBAL const ulp_u32 *mask, GLOBAL const ulp_u32 *tables,
                  GLOBAL ulp_u32 *cells, ulp_u32 src_w, ulp_u32 src_off, ulp_u32 step, ulp_u32 mask_w,
                  ulp_u32 mask_off, ulp_u32 mask_shift, ulp_u32 w, ulp_u32 h, ulp_u32 out_off)
{
    const ulp_u32 x = GLOBAL_ID(0), y = GLOBAL_ID(1);
    if (x >= w || y >= h)
        return;
#define CAMBI_X(r, c) (src[src_off + (r) * step * src_w + (c) * step] & 0xFFFFu)
#define CAMBI_H(r) ((x == 0 || x + 1 >= w) ? CAMBI_X(r, x) : cambi_mode3(CAMBI_X(r, x - 1), CAMBI_X(r, x), CAMBI_X(r, x + 1)))
    ulp_u32 v;
    if (y == 0 || y + 1 >= h)
        v = CAMBI_X(y, x);
    else
        v = cambi_mode3(CAMBI_H(y - 1), CAMBI_H(y), CAMBI_H(y + 1));
#undef CAMBI_H
#undef CAMBI_X
    const ulp_u32 m = mask[mask_off + (y << mask_shift) * mask_w + (x << mask_shift)];
    const ulp_u32 level = (v - tables[CAMBI_TABLE_BAND_BASE]) & 0xFFFFu;
    const int counted = m != 0 && level < tables[CAMBI_TABLE_BAND_SIZE];
    cells[out_off + y * w + x] = counted ? v : (v | CAMBI_NOT_COUNTED);
}

/* (float)n rounded to nearest even whatever the device's conversion does
 * (Vulkan leaves integer-to-float rounding to the implementation): n is
 * first rounded to 24 significant bits, which converts exactly. */
FUNC float cambi_u32_to_float(ulp_u32 n)
{
    if (n < (1u << 24))
        return (float)n;
    ulp_u32 sh = 1;
    while ((n >> sh) >= (1u << 24))
        sh++;
    ulp_u32 q = n >> sh;
    const ulp_u32 rest = n & ((1u << sh) - 1u), half_ulp = 1u << (sh - 1u);
    if (rest > half_ulp || (rest == half_ulp && (q & 1u)))
        q++;
    return MUL_RN((float)q, (float)(1u << sh));
}

/* One work item's histogram: count of level `base + b` in bits 16 (b & 1)
 * of word (b >> 1) * CAMBI_CV_WG + lid. */
FUNC void cambi_bins_row(LOCAL_PTR ulp_u32 *bins, ulp_u32 lid, GLOBAL const ulp_u32 *row, int lo, int hi, int base,
                         int add)
{
    for (int c = lo; c < hi; c++) {
        const ulp_u32 b = (ulp_u32)((int)row[c] - base);
        if (b < CAMBI_BINS) {
            const ulp_u32 one = 1u << ((b & 1u) * 16u);
            const ulp_u32 at = (b >> 1) * CAMBI_CV_WG + lid;
            bins[at] = add ? bins[at] + one : bins[at] - one;
        }
    }
}

FUNC ulp_u32 cambi_bin(LOCAL_PTR const ulp_u32 *bins, ulp_u32 lid, int level, int base)
{
    const ulp_u32 b = (ulp_u32)(level - base);
    return (bins[(b >> 1) * CAMBI_CV_WG + lid] >> ((b & 1u) * 16u)) & 0xFFFFu;
}

/* cambi.c `calculate_c_values` + `c_value_pixel`, for every scale of every
 * image at once.
 *
 * libvmaf slides one set of histograms (count per level per column of the
 * pixels counted in the window) down the rows, adding the row that enters
 * and subtracting the one that leaves, then reads each counted pixel's
 * counts at its level and the levels up to num_diffs above and below. Here
 * each work item walks one column down CAMBI_CV_ROWS rows with a histogram
 * of its own window: 128 levels from `base`, rebuilt from the whole window
 * (base = level - 64) when a pixel needs a level outside them, and slid
 * down (the leaving row subtracted, then the entering one added) when it is
 * cheaper than rebuilding. Either way each count is the number of counted
 * pixels of that level in the window, clipped to the picture: the integers
 * libvmaf's histograms hold for that pixel. The float step is libvmaf's:
 * (float)(weight * p0 * p) times the same reciprocal-table float, each
 * rounded once, and the maximum over the steps in step order.
 *
 * No work item reads another's histogram, so there is no barrier. */
KERNEL cambi_cvalues(GLOBAL const ulp_u32 *cells, GLOBAL const ulp_u32 *tables, GLOBAL const float *lut,
                     GLOBAL float *cvals, ulp_u32 n_sets, ulp_u32 groups)
{
    LOCAL ulp_u32 bins[(CAMBI_BINS / 2) * CAMBI_CV_WG];
    const ulp_u32 g = cambi_group(), lid = LOCAL_ID(0);
    if (g >= groups)
        return;
    const ulp_u32 s = cambi_set_of(tables, n_sets, g, CAMBI_SET_CV_FIRST);
    GLOBAL const ulp_u32 *set = tables + CAMBI_TABLE_SETS + s * CAMBI_SET_WORDS;
    const int w = (int)set[CAMBI_SET_W], h = (int)set[CAMBI_SET_H], pad = (int)set[CAMBI_SET_PAD];
    const ulp_u32 off = set[CAMBI_SET_OFF], tile = g - set[CAMBI_SET_CV_FIRST];
    const int j = (int)((tile % set[CAMBI_SET_CV_GROUPS_X]) * CAMBI_CV_WG + lid);
    const int i0 = (int)((tile / set[CAMBI_SET_CV_GROUPS_X]) * CAMBI_CV_ROWS);
    if (j >= w)
        return;
    const int nd = (int)tables[CAMBI_TABLE_NUM_DIFFS], vlt = (int)tables[CAMBI_TABLE_VLT_LUMA];
    const int band_base = (int)tables[CAMBI_TABLE_BAND_BASE];
    GLOBAL const ulp_u32 *plane = cells + off;
    const int lo = j - pad > 0 ? j - pad : 0, hi = j + pad + 1 < w ? j + pad + 1 : w;
    const int i1 = i0 + CAMBI_CV_ROWS < h ? i0 + CAMBI_CV_ROWS : h;
    int base = 0, at = -1; /* the histogram's first level and its row (-1: none) */
    for (int i = i0; i < i1; i++) {
        const ulp_u32 word = plane[i * w + j];
        if (word >= CAMBI_NOT_COUNTED) {
            cvals[off + (ulp_u32)(i * w + j)] = 0.0f;
            continue;
        }
        const int u = (int)word;
        if (at < 0 || u - nd < base || u + nd >= base + CAMBI_BINS || 2 * (i - at) > 2 * pad + 1) {
            base = u - CAMBI_BINS / 2;
            for (ulp_u32 k = 0; k < CAMBI_BINS / 2; k++)
                bins[k * CAMBI_CV_WG + lid] = 0;
            for (int r = i - pad > 0 ? i - pad : 0; r < h && r <= i + pad; r++)
                cambi_bins_row(bins, lid, plane + r * w, lo, hi, base, 1);
        } else {
            for (int r = at + 1; r <= i; r++) {
                if (r - pad - 1 >= 0)
                    cambi_bins_row(bins, lid, plane + (r - pad - 1) * w, lo, hi, base, 0);
                if (r + pad < h)
                    cambi_bins_row(bins, lid, plane + (r + pad) * w, lo, hi, base, 1);
            }
        }
        at = i;
        /* c_value_pixel: `value` is the level in libvmaf's shifted space. */
        const int value = u + nd;
        const ulp_u32 p0 = cambi_bin(bins, lid, u, base);
        float c = 0.0f;
        for (int d = 0; d < nd; d++) {
            if (value <= (int)tables[CAMBI_TABLE_TVI + d] && value + d + 1 > vlt) {
                const ulp_u32 p1 = cambi_bin(bins, lid, u + d + 1, base);
                const ulp_u32 p2 = u - d - 1 >= band_base ? cambi_bin(bins, lid, u - d - 1, base) : 0u;
                const ulp_u32 p = p1 > p2 ? p1 : p2;
                const ulp_u32 n = tables[CAMBI_TABLE_WEIGHTS + d] * p0 * p;
                const float val = MUL_RN(cambi_u32_to_float(n), lut[p + p0]);
                if (val > c)
                    c = val;
            }
        }
        cvals[off + (ulp_u32)(i * w + j)] = c;
    }
}

/* The key bits a radix-select level looks at, and the prefix before them. */
FUNC ulp_u32 cambi_level_shift(ulp_u32 level)
{
    return level == 0 ? 21u : (level == 1 ? 10u : 0u);
}

FUNC ulp_u32 cambi_level_bits(ulp_u32 level)
{
    return level == 2 ? 10u : 11u;
}

/* cambi.c `spatial_pooling`, step 1 of 3: count the non-zero c-values by
 * one digit of their key (the float's bits, which order non-negative
 * floats), among those whose higher digits are the prefix found so far.
 * Counts are integers: the order of the atomic adds does not matter. */
KERNEL cambi_topk_hist(GLOBAL const ulp_u32 *cvals, GLOBAL const ulp_u32 *tables, GLOBAL const ulp_u32 *state,
                       GLOBAL ulp_u32 *hist, ulp_u32 level, ulp_u32 n_sets, ulp_u32 groups)
{
    LOCAL ulp_u32 counts[CAMBI_HIST_BINS];
    const ulp_u32 g = cambi_group(), lid = LOCAL_ID(0);
    if (g >= groups)
        return; /* uniform over the group */
    for (ulp_u32 k = lid; k < CAMBI_HIST_BINS; k += CAMBI_POOL_WG)
        counts[k] = 0;
    BARRIER();
    const ulp_u32 s = cambi_set_of(tables, n_sets, g, CAMBI_SET_EL_FIRST);
    GLOBAL const ulp_u32 *set = tables + CAMBI_TABLE_SETS + s * CAMBI_SET_WORDS;
    GLOBAL const ulp_u32 *st = state + 4 + 4 * s;
    /* Level 0 reads no state; later levels skip sets already decided. */
    if (level == 0 || st[2] == 0) {
        const ulp_u32 prefix = st[0], shift = cambi_level_shift(level);
        const ulp_u32 mask = (1u << cambi_level_bits(level)) - 1u;
        const ulp_u32 start = (g - set[CAMBI_SET_EL_FIRST]) * CAMBI_POOL_ELEMENTS;
        const ulp_u32 n = set[CAMBI_SET_N];
        const ulp_u32 end = start + CAMBI_POOL_ELEMENTS < n ? start + CAMBI_POOL_ELEMENTS : n;
        GLOBAL const ulp_u32 *values = cvals + set[CAMBI_SET_OFF];
        for (ulp_u32 e = start + lid; e < end; e += CAMBI_POOL_WG) {
            const ulp_u32 key = values[e];
            if (key == 0)
                continue;
            if (level > 0 && (key >> (shift + cambi_level_bits(level))) != prefix)
                continue;
            CAMBI_ATOMIC_ADD(&counts[(key >> shift) & mask], 1u);
        }
    }
    BARRIER();
    GLOBAL ulp_u32 *out = hist + (level * n_sets + s) * CAMBI_HIST_BINS;
    for (ulp_u32 k = lid; k < CAMBI_HIST_BINS; k += CAMBI_POOL_WG)
        if (counts[k] != 0)
            CAMBI_ATOMIC_ADD(&out[k], counts[k]);
}

/* cambi.c `spatial_pooling`, step 2 of 3: from the top of the level's
 * histogram, the bin holding the k-th largest value; its digit joins the
 * prefix and the values above it leave the rank. At level 0, k above the
 * number of non-zero values means the k largest are all of those and
 * zeros (mode 1). */
KERNEL cambi_topk_scan(GLOBAL const ulp_u32 *tables, GLOBAL ulp_u32 *state, GLOBAL const ulp_u32 *hist,
                       ulp_u32 level, ulp_u32 n_sets)
{
    LOCAL ulp_u32 parts[CAMBI_POOL_WG];
    const ulp_u32 s = GROUP_ID(0), lid = LOCAL_ID(0);
    GLOBAL const ulp_u32 *counts = hist + (level * n_sets + s) * CAMBI_HIST_BINS;
    const ulp_u32 per = CAMBI_HIST_BINS / CAMBI_POOL_WG;
    ulp_u32 part = 0;
    for (ulp_u32 k = 0; k < per; k++)
        part += counts[lid * per + k];
    parts[lid] = part;
    BARRIER();
    if (lid != 0)
        return;
    GLOBAL ulp_u32 *st = state + 4 + 4 * s;
    ulp_u32 prefix = 0, rank = tables[CAMBI_TABLE_SETS + s * CAMBI_SET_WORDS + CAMBI_SET_K], mode = 0;
    if (level > 0) {
        prefix = st[0];
        rank = st[1];
        mode = st[2];
        if (mode != 0)
            return;
    }
    ulp_u32 total = 0;
    for (ulp_u32 t = 0; t < CAMBI_POOL_WG; t++)
        total += parts[t];
    if (rank > total) {
        mode = 1; /* only at level 0: later levels hold the rank's bin */
    } else {
        ulp_u32 above = 0, t = CAMBI_POOL_WG - 1;
        while (above + parts[t] < rank)
            above += parts[t--];
        ulp_u32 b = t * per + per - 1;
        while (above + counts[b] < rank)
            above += counts[b--];
        rank -= above;
        prefix = (prefix << cambi_level_bits(level)) | b;
    }
    st[0] = prefix;
    st[1] = rank;
    st[2] = mode;
}

/* cambi.c `spatial_pooling`, step 3 of 3 (`average_topk_elements`' sum):
 * the c-values above the k-th largest, each split exactly into its integer
 * part and the high and low 12 bits of its fraction in units of 2^-24
 * (every non-zero c-value is a float in [0.5, 16384), a multiple of 2^-24;
 * see src/features/cambi/pooling.rs `fixed`). The sums are integers, so
 * their order does not matter; the host adds the groups'. */
KERNEL cambi_topk_sum(GLOBAL const ulp_u32 *cvals, GLOBAL const ulp_u32 *tables, GLOBAL const ulp_u32 *state,
                      GLOBAL ulp_u32 *partials, ulp_u32 n_sets, ulp_u32 groups)
{
    LOCAL ulp_u32 sums[4 * CAMBI_POOL_WG];
    const ulp_u32 g = cambi_group(), lid = LOCAL_ID(0);
    if (g >= groups)
        return; /* uniform over the group */
    const ulp_u32 s = cambi_set_of(tables, n_sets, g, CAMBI_SET_EL_FIRST);
    GLOBAL const ulp_u32 *set = tables + CAMBI_TABLE_SETS + s * CAMBI_SET_WORDS;
    GLOBAL const ulp_u32 *st = state + 4 + 4 * s;
    const ulp_u32 threshold = st[2] != 0 ? 0u : st[0];
    const ulp_u32 start = (g - set[CAMBI_SET_EL_FIRST]) * CAMBI_POOL_ELEMENTS;
    const ulp_u32 n = set[CAMBI_SET_N];
    const ulp_u32 end = start + CAMBI_POOL_ELEMENTS < n ? start + CAMBI_POOL_ELEMENTS : n;
    GLOBAL const ulp_u32 *values = cvals + set[CAMBI_SET_OFF];
    ulp_u32 whole = 0, high = 0, low = 0, flags = 0;
    for (ulp_u32 e = start + lid; e < end; e += CAMBI_POOL_WG) {
        const ulp_u32 key = values[e];
        if (key <= threshold)
            continue;
        const float v = CAMBI_AS_FLOAT(key);
        if (!(v >= 0.5f && v < 16384.0f)) {
            flags = 1;
            continue;
        }
        const ulp_u32 ip = (ulp_u32)v;
        const ulp_u32 frac = (ulp_u32)MUL_RN(SUB_RN(v, (float)ip), 16777216.0f);
        whole += ip;
        high += frac >> 12;
        low += frac & 0xFFFu;
    }
    sums[lid] = whole;
    sums[CAMBI_POOL_WG + lid] = high;
    sums[2 * CAMBI_POOL_WG + lid] = low;
    sums[3 * CAMBI_POOL_WG + lid] = flags;
    BARRIER();
    for (ulp_u32 stride = CAMBI_POOL_WG / 2; stride > 0; stride >>= 1) {
        if (lid < stride) {
            sums[lid] += sums[lid + stride];
            sums[CAMBI_POOL_WG + lid] += sums[CAMBI_POOL_WG + lid + stride];
            sums[2 * CAMBI_POOL_WG + lid] += sums[2 * CAMBI_POOL_WG + lid + stride];
            sums[3 * CAMBI_POOL_WG + lid] |= sums[3 * CAMBI_POOL_WG + lid + stride];
        }
        BARRIER();
    }
    if (lid == 0) {
        partials[4 * g] = sums[0];
        partials[4 * g + 1] = sums[CAMBI_POOL_WG];
        partials[4 * g + 2] = sums[2 * CAMBI_POOL_WG];
        partials[4 * g + 3] = sums[3 * CAMBI_POOL_WG];
    }
}

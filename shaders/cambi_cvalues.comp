#version 450
// cambi_cvalues: cambi.c `calculate_c_values` + `c_value_pixel` for every
// scale of every image at once (contract: CAMBI_CVALUES in
// src/features/cambi/gpu.rs; the C dialect in kernels/cambi.cl says the
// same).
//
// libvmaf slides one set of histograms (count per level per column of the
// pixels counted in the window) down the rows, adding the row that enters
// and subtracting the one that leaves, and reads each counted pixel's counts
// at its level and the levels up to num_diffs above and below. Here each
// invocation walks one column down 16 rows with a histogram of its own
// window: 128 levels from `base`, rebuilt from the whole window (base =
// level - 64) when a pixel needs a level outside them, and slid down (the
// leaving row subtracted, then the entering one added) when that is cheaper
// than rebuilding. Either way each count is the number of counted pixels of
// that level in the window, clipped to the picture: the integers libvmaf's
// histograms hold for that pixel. The float step is libvmaf's: (float)(weight
// * p0 * p) -- rounded to nearest even in integer arithmetic first, since
// Vulkan leaves that conversion's rounding open -- times the same
// reciprocal-table float, and the maximum over the steps in step order.
// No invocation reads another's histogram: no barrier.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Cells { uint cells[]; };
layout(std430, set = 0, binding = 1) readonly buffer Tables { uint tables[]; };
layout(std430, set = 0, binding = 2) readonly buffer Lut { float lut[]; };
layout(std430, set = 0, binding = 3) buffer CValues { float cvals[]; };

layout(push_constant) uniform Params {
    uint n_sets;
    uint groups;
} pc;

const uint WG = 64u;
const int ROWS = 16;
const int BINS = 128;
const uint NOT_COUNTED = 65536u;
const uint NUM_DIFFS = 0u;
const uint VLT_LUMA = 1u;
const uint BAND_BASE = 2u;
const uint TVI = 8u;
const uint WEIGHTS = 40u;
const uint SETS = 96u;
const uint SET_WORDS = 16u;
// Fields of a set record (gpu.rs `table`).
const uint SET_W = 0u;
const uint SET_H = 1u;
const uint SET_OFF = 2u;
const uint SET_PAD = 3u;
const uint SET_CV_GROUPS_X = 4u;
const uint SET_CV_FIRST = 5u;

// Level base + b: bits 16 (b & 1) of word (b >> 1) * WG + lid.
shared uint bins[(128 / 2) * 64];

uint set_of(uint g) {
    uint s = 0u;
    for (uint k = 1u; k < pc.n_sets; k++) {
        if (tables[SETS + k * SET_WORDS + SET_CV_FIRST] <= g) {
            s = k;
        }
    }
    return s;
}

void bins_row(uint lid, uint row_start, int lo, int hi, int base, bool add) {
    for (int c = lo; c < hi; c++) {
        uint b = uint(int(cells[row_start + uint(c)]) - base);
        if (b < uint(BINS)) {
            uint one = 1u << ((b & 1u) * 16u);
            uint at = (b >> 1u) * WG + lid;
            bins[at] = add ? bins[at] + one : bins[at] - one;
        }
    }
}

uint bin(uint lid, int level, int base) {
    uint b = uint(level - base);
    return (bins[(b >> 1u) * WG + lid] >> ((b & 1u) * 16u)) & 65535u;
}

// (float)n rounded to nearest even: n is first rounded to 24 significant
// bits, which converts exactly whatever the device's rounding.
float to_float(uint n) {
    if (n < 16777216u) {
        return float(n);
    }
    uint sh = 1u;
    while ((n >> sh) >= 16777216u) {
        sh++;
    }
    uint q = n >> sh;
    uint rest = n & ((1u << sh) - 1u);
    uint half_ulp = 1u << (sh - 1u);
    if (rest > half_ulp || (rest == half_ulp && (q & 1u) == 1u)) {
        q++;
    }
    return float(q) * float(1u << sh);
}

void main() {
    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint lid = gl_LocalInvocationID.x;
    if (g >= pc.groups) {
        return;
    }
    uint s = set_of(g);
    uint rec = SETS + s * SET_WORDS;
    int w = int(tables[rec + SET_W]);
    int h = int(tables[rec + SET_H]);
    uint off = tables[rec + SET_OFF];
    int pad = int(tables[rec + SET_PAD]);
    uint groups_x = tables[rec + SET_CV_GROUPS_X];
    uint tile = g - tables[rec + SET_CV_FIRST];
    int j = int((tile % groups_x) * WG + lid);
    int i0 = int(tile / groups_x) * ROWS;
    if (j >= w) {
        return;
    }
    int nd = int(tables[NUM_DIFFS]);
    int vlt = int(tables[VLT_LUMA]);
    int band_base = int(tables[BAND_BASE]);
    int lo = max(j - pad, 0);
    int hi = min(j + pad + 1, w);
    int i1 = min(i0 + ROWS, h);
    int base = 0;
    int hist_row = -1;
    for (int i = i0; i < i1; i++) {
        uint word = cells[off + uint(i * w + j)];
        if (word >= NOT_COUNTED) {
            cvals[off + uint(i * w + j)] = 0.0;
            continue;
        }
        int u = int(word);
        if (hist_row < 0 || u - nd < base || u + nd >= base + BINS || 2 * (i - hist_row) > 2 * pad + 1) {
            base = u - BINS / 2;
            for (uint k = 0u; k < uint(BINS / 2); k++) {
                bins[k * WG + lid] = 0u;
            }
            for (int r = max(i - pad, 0); r < h && r <= i + pad; r++) {
                bins_row(lid, off + uint(r * w), lo, hi, base, true);
            }
        } else {
            for (int r = hist_row + 1; r <= i; r++) {
                if (r - pad - 1 >= 0) {
                    bins_row(lid, off + uint((r - pad - 1) * w), lo, hi, base, false);
                }
                if (r + pad < h) {
                    bins_row(lid, off + uint((r + pad) * w), lo, hi, base, true);
                }
            }
        }
        hist_row = i;
        // c_value_pixel: `value` is the level in libvmaf's shifted space.
        int value = u + nd;
        uint p0 = bin(lid, u, base);
        float c = 0.0;
        for (int d = 0; d < nd; d++) {
            if (value <= int(tables[TVI + uint(d)]) && value + d + 1 > vlt) {
                uint p1 = bin(lid, u + d + 1, base);
                uint p2 = u - d - 1 >= band_base ? bin(lid, u - d - 1, base) : 0u;
                uint p = p1 > p2 ? p1 : p2;
                uint n = tables[WEIGHTS + uint(d)] * p0 * p;
                float val = to_float(n) * lut[p + p0];
                if (val > c) {
                    c = val;
                }
            }
        }
        cvals[off + uint(i * w + j)] = c;
    }
}

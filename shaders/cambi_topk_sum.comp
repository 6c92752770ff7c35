#version 450
// cambi_topk_sum: cambi.c `spatial_pooling`, step 3 of 3, the sum of
// `average_topk_elements` (contract: CAMBI_TOPK_SUM in
// src/features/cambi/gpu.rs): the c-values above the k-th largest, each
// split exactly into its integer part and the high and low 12 bits of its
// fraction in units of 2^-24 (every non-zero c-value is a float in
// [0.5, 16384), a multiple of 2^-24; see src/features/cambi/pooling.rs
// `fixed`). The sums are integers, so their order does not matter; the host
// adds the groups'.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer CValues { uint cvals[]; };
layout(std430, set = 0, binding = 1) readonly buffer Tables { uint tables[]; };
layout(std430, set = 0, binding = 2) readonly buffer State { uint state[]; };
layout(std430, set = 0, binding = 3) buffer Partials { uint partials[]; };

layout(push_constant) uniform Params {
    uint n_sets;
    uint groups;
} pc;

const uint SETS = 96u;
const uint SET_WORDS = 16u;
// Fields of a set record (gpu.rs `table`).
const uint SET_OFF = 2u;
const uint SET_N = 7u;
const uint SET_EL_FIRST = 9u;
const uint ELEMENTS = 4096u;

shared uint sums[4 * 256];

void main() {
    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint lid = gl_LocalInvocationID.x;
    if (g >= pc.groups) {
        return; // uniform over the group
    }
    uint s = 0u;
    for (uint k = 1u; k < pc.n_sets; k++) {
        if (tables[SETS + k * SET_WORDS + SET_EL_FIRST] <= g) {
            s = k;
        }
    }
    uint rec = SETS + s * SET_WORDS;
    uint st = 4u + 4u * s;
    uint threshold = state[st + 2u] != 0u ? 0u : state[st];
    uint start = (g - tables[rec + SET_EL_FIRST]) * ELEMENTS;
    uint end = min(start + ELEMENTS, tables[rec + SET_N]);
    uint off = tables[rec + SET_OFF];
    uint whole = 0u;
    uint high = 0u;
    uint low = 0u;
    uint flags = 0u;
    for (uint e = start + lid; e < end; e += 256u) {
        uint key = cvals[off + e];
        if (key <= threshold) {
            continue;
        }
        float v = uintBitsToFloat(key);
        if (!(v >= 0.5 && v < 16384.0)) {
            flags = 1u;
            continue;
        }
        uint ip = uint(v);
        uint frac = uint((v - float(ip)) * 16777216.0);
        whole += ip;
        high += frac >> 12u;
        low += frac & 4095u;
    }
    sums[lid] = whole;
    sums[256u + lid] = high;
    sums[512u + lid] = low;
    sums[768u + lid] = flags;
    barrier();
    for (uint stride = 128u; stride > 0u; stride >>= 1u) {
        if (lid < stride) {
            sums[lid] += sums[lid + stride];
            sums[256u + lid] += sums[256u + lid + stride];
            sums[512u + lid] += sums[512u + lid + stride];
            sums[768u + lid] |= sums[768u + lid + stride];
        }
        barrier();
    }
    if (lid == 0u) {
        partials[4u * g] = sums[0];
        partials[4u * g + 1u] = sums[256];
        partials[4u * g + 2u] = sums[512];
        partials[4u * g + 3u] = sums[768];
    }
}

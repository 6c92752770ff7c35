#version 450
// psnr_sse: exact 64-bit sums of squared sample differences, one partial sum
// per work group (contract: PSNR_SSE in src/features/psnr.rs).
//
// Mirrors the sse loops of libvmaf integer_psnr.c `psnr` and `psnr_hbd`:
// e = ref - dis per sample, sse += e * e into a 64-bit integer. The sums are
// integers, so the work-group split cannot change them.
//
// Work group (gx, p) covers samples [gx * chunk, (gx + 1) * chunk) of plane
// p and writes its sum as a (lo, hi) pair at partials[2 * (p * groups_x + gx)].
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
layout(std430, set = 0, binding = 2) buffer Partials { uint partials[]; };

layout(push_constant) uniform Params {
    uint luma_samples;
    uint chroma_samples;
    uint planes;
    uint bytes_per_sample;
    uint chunk;
} pc;

shared uint sum_lo[256];
shared uint sum_hi[256];

// Sample i of the frame, 8 or 16 bits, read through little-endian words.
uint ref_sample(uint i) {
    if (pc.bytes_per_sample == 1u) {
        return (ref_words[i >> 2u] >> ((i & 3u) * 8u)) & 255u;
    }
    return (ref_words[i >> 1u] >> ((i & 1u) * 16u)) & 65535u;
}

uint dis_sample(uint i) {
    if (pc.bytes_per_sample == 1u) {
        return (dis_words[i >> 2u] >> ((i & 3u) * 8u)) & 255u;
    }
    return (dis_words[i >> 1u] >> ((i & 1u) * 16u)) & 65535u;
}

// (lo, hi) + (lo, hi) with the carry: GLSL without int64 still sums exactly.
uvec2 add64(uvec2 a, uvec2 b) {
    uint lo = a.x + b.x;
    uint carry = lo < a.x ? 1u : 0u;
    return uvec2(lo, a.y + b.y + carry);
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint gx = gl_WorkGroupID.x;
    uint plane = gl_WorkGroupID.y;
    uint n = plane == 0u ? pc.luma_samples : pc.chroma_samples;
    uint base = plane == 0u ? 0u : pc.luma_samples + (plane - 1u) * pc.chroma_samples;
    uint start = gx * pc.chunk;
    uint end = min(start + pc.chunk, n);

    uvec2 sum = uvec2(0u, 0u);
    for (uint i = start + lid; i < end; i += 256u) {
        uint r = ref_sample(base + i);
        uint d = dis_sample(base + i);
        uint e = r > d ? r - d : d - r;
        // e < 2^16, so e * e fits in 32 bits.
        sum = add64(sum, uvec2(e * e, 0u));
    }
    sum_lo[lid] = sum.x;
    sum_hi[lid] = sum.y;
    barrier();
    for (uint stride = 128u; stride > 0u; stride >>= 1u) {
        if (lid < stride) {
            uvec2 other = uvec2(sum_lo[lid + stride], sum_hi[lid + stride]);
            uvec2 mine = add64(uvec2(sum_lo[lid], sum_hi[lid]), other);
            sum_lo[lid] = mine.x;
            sum_hi[lid] = mine.y;
        }
        barrier();
    }
    if (lid == 0u) {
        uint at = 2u * (plane * gl_NumWorkGroups.x + gx);
        partials[at] = sum_lo[0];
        partials[at + 1u] = sum_hi[0];
    }
}

#version 450
// moment_sums: exact 64-bit sums over the luma of both frames, one set of
// partial sums per work group (contract: MOMENT_SUMS in src/features/moment.rs).
//
// Mirrors libvmaf moment.c `compute_1st_moment` / `compute_2nd_moment`, which
// sum v and v * v over the float picture; on integer samples those sums are
// integers (v / scaler with a power-of-two scaler), so they are computed here
// exactly and the host divides once.
//
// Work group gx covers samples [gx * chunk, (gx + 1) * chunk) and writes four
// (lo, hi) pairs at partials[8 * gx]: sum ref, sum dis, sum ref^2, sum dis^2.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
layout(std430, set = 0, binding = 2) buffer Partials { uint partials[]; };

layout(push_constant) uniform Params {
    uint luma_samples;
    uint bytes_per_sample;
    uint chunk;
} pc;

// Four 64-bit values per thread, as (lo, hi) words.
shared uint sums[256 * 8];

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

uvec2 add64(uvec2 a, uvec2 b) {
    uint lo = a.x + b.x;
    uint carry = lo < a.x ? 1u : 0u;
    return uvec2(lo, a.y + b.y + carry);
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint start = gl_WorkGroupID.x * pc.chunk;
    uint end = min(start + pc.chunk, pc.luma_samples);

    uvec2 r1 = uvec2(0u, 0u);
    uvec2 d1 = uvec2(0u, 0u);
    uvec2 r2 = uvec2(0u, 0u);
    uvec2 d2 = uvec2(0u, 0u);
    for (uint i = start + lid; i < end; i += 256u) {
        uint r = ref_sample(i);
        uint d = dis_sample(i);
        r1 = add64(r1, uvec2(r, 0u));
        d1 = add64(d1, uvec2(d, 0u));
        // v < 2^16, so v * v fits in 32 bits.
        r2 = add64(r2, uvec2(r * r, 0u));
        d2 = add64(d2, uvec2(d * d, 0u));
    }
    uint at = 8u * lid;
    sums[at] = r1.x;
    sums[at + 1u] = r1.y;
    sums[at + 2u] = d1.x;
    sums[at + 3u] = d1.y;
    sums[at + 4u] = r2.x;
    sums[at + 5u] = r2.y;
    sums[at + 6u] = d2.x;
    sums[at + 7u] = d2.y;
    barrier();
    for (uint stride = 128u; stride > 0u; stride >>= 1u) {
        if (lid < stride) {
            uint other = 8u * (lid + stride);
            for (uint v = 0u; v < 8u; v += 2u) {
                uvec2 s = add64(uvec2(sums[at + v], sums[at + v + 1u]), uvec2(sums[other + v], sums[other + v + 1u]));
                sums[at + v] = s.x;
                sums[at + v + 1u] = s.y;
            }
        }
        barrier();
    }
    if (lid < 8u) {
        partials[8u * gl_WorkGroupID.x + lid] = sums[lid];
    }
}

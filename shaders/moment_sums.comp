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
// Each invocation reads whole 32-bit words (4 or 2 samples); the group's
// sums meet in shared memory behind one barrier.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
layout(std430, set = 0, binding = 2) buffer Partials { uint partials[]; };

layout(push_constant) uniform Params {
    uint luma_samples;
    uint bytes_per_sample;
    uint chunk;
} pc;

// Four 64-bit values per invocation, as (lo, hi) words.
shared uint sums[256 * 8];

uvec2 add64(uvec2 a, uvec2 b) {
    uint lo = a.x + b.x;
    uint carry = lo < a.x ? 1u : 0u;
    return uvec2(lo, a.y + b.y + carry);
}

// The sample at `shift` in a word, or 0 when index i is outside [lo, hi).
uint sample_in(uint word, uint shift, uint mask, uint i, uint lo, uint hi) {
    return (i >= lo && i < hi) ? (word >> shift) & mask : 0u;
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint lo = min(gl_WorkGroupID.x * pc.chunk, pc.luma_samples);
    uint hi = min(gl_WorkGroupID.x * pc.chunk + pc.chunk, pc.luma_samples);

    uvec2 r1 = uvec2(0u, 0u);
    uvec2 d1 = uvec2(0u, 0u);
    uvec2 r2 = uvec2(0u, 0u);
    uvec2 d2 = uvec2(0u, 0u);
    if (pc.bytes_per_sample == 1u) {
        for (uint w = (lo >> 2u) + lid; w < ((hi + 3u) >> 2u); w += 256u) {
            uint rw = ref_words[w];
            uint dw = dis_words[w];
            // Per word at most 4 * 255 and 4 * 255^2: no overflow.
            uint rs = 0u;
            uint ds = 0u;
            uint rq = 0u;
            uint dq = 0u;
            for (uint k = 0u; k < 4u; k++) {
                uint r = sample_in(rw, 8u * k, 255u, 4u * w + k, lo, hi);
                uint d = sample_in(dw, 8u * k, 255u, 4u * w + k, lo, hi);
                rs += r;
                ds += d;
                rq += r * r;
                dq += d * d;
            }
            r1 = add64(r1, uvec2(rs, 0u));
            d1 = add64(d1, uvec2(ds, 0u));
            r2 = add64(r2, uvec2(rq, 0u));
            d2 = add64(d2, uvec2(dq, 0u));
        }
    } else {
        for (uint w = (lo >> 1u) + lid; w < ((hi + 1u) >> 1u); w += 256u) {
            uint rw = ref_words[w];
            uint dw = dis_words[w];
            for (uint k = 0u; k < 2u; k++) {
                uint r = sample_in(rw, 16u * k, 65535u, 2u * w + k, lo, hi);
                uint d = sample_in(dw, 16u * k, 65535u, 2u * w + k, lo, hi);
                r1 = add64(r1, uvec2(r, 0u));
                d1 = add64(d1, uvec2(d, 0u));
                // v < 2^16, so v * v fits in 32 bits. moment.c squares
                // v / scaler in float: the square rounded to f32 (exact up
                // to 12 bits, rounded at 16) — and so do we, to the same bits.
                r2 = add64(r2, uvec2(uint(float(r * r)), 0u));
                d2 = add64(d2, uvec2(uint(float(d * d)), 0u));
            }
        }
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
    if (lid == 0u) {
        for (uint v = 0u; v < 8u; v += 2u) {
            uvec2 total = uvec2(0u, 0u);
            for (uint k = 0u; k < 256u; k++) {
                total = add64(total, uvec2(sums[8u * k + v], sums[8u * k + v + 1u]));
            }
            partials[8u * gl_WorkGroupID.x + v] = total.x;
            partials[8u * gl_WorkGroupID.x + v + 1u] = total.y;
        }
    }
}

#version 450
// psnr_sse: exact 64-bit sums of squared sample differences, one partial sum
// per work group (contract: PSNR_SSE in src/features/psnr.rs).
//
// Mirrors the sse loops of libvmaf integer_psnr.c `psnr` and `psnr_hbd`:
// e = ref - dis per sample, sse += e * e into a 64-bit integer. The sums are
// integers, so neither the work-group split nor the order can change them.
// With `round_squares` (float_psnr) each square is first rounded to f32, as
// libvmaf psnr.c's `compute_psnr` squares the float difference: exact below
// 2^24, so only 16-bit samples differing by 4096 or more round; the rounded
// squares are still integers.
//
// Work group (gx, p) covers samples [gx * chunk, (gx + 1) * chunk) of plane
// p and writes its sum as a (lo, hi) pair at partials[2 * (p * groups_x + gx)].
// Each invocation reads whole 32-bit words (4 or 2 samples) and counts the
// samples of the word that lie in the group's range; the group's sums meet
// in shared memory behind one barrier (barriers are costly on CPU drivers
// such as lavapipe, so there is only one).
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
    uint round_squares;
} pc;

shared uint sum_lo[256];
shared uint sum_hi[256];

// (lo, hi) + (lo, hi) with the carry: GLSL without int64 still sums exactly.
uvec2 add64(uvec2 a, uvec2 b) {
    uint lo = a.x + b.x;
    uint carry = lo < a.x ? 1u : 0u;
    return uvec2(lo, a.y + b.y + carry);
}

// The squared difference of the samples at `shift` (8 or 16 bits wide) in
// two words, or 0 when sample index i is outside [lo, hi).
uint squared_error(uint rw, uint dw, uint shift, uint mask, uint i, uint lo, uint hi) {
    uint r = (rw >> shift) & mask;
    uint d = (dw >> shift) & mask;
    uint e = r > d ? r - d : d - r;
    // e < 2^16, so e * e fits in 32 bits.
    return (i >= lo && i < hi) ? e * e : 0u;
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint gx = gl_WorkGroupID.x;
    uint plane = gl_WorkGroupID.y;
    uint n = plane == 0u ? pc.luma_samples : pc.chroma_samples;
    uint base = plane == 0u ? 0u : pc.luma_samples + (plane - 1u) * pc.chroma_samples;
    // The group's samples, as indices into the whole frame.
    uint lo = base + min(gx * pc.chunk, n);
    uint hi = base + min(gx * pc.chunk + pc.chunk, n);

    uvec2 sum = uvec2(0u, 0u);
    if (pc.bytes_per_sample == 1u) {
        for (uint w = (lo >> 2u) + lid; w < ((hi + 3u) >> 2u); w += 256u) {
            uint rw = ref_words[w];
            uint dw = dis_words[w];
            // Four squares of at most 255^2: no overflow.
            uint word_sum = squared_error(rw, dw, 0u, 255u, 4u * w, lo, hi)
                + squared_error(rw, dw, 8u, 255u, 4u * w + 1u, lo, hi)
                + squared_error(rw, dw, 16u, 255u, 4u * w + 2u, lo, hi)
                + squared_error(rw, dw, 24u, 255u, 4u * w + 3u, lo, hi);
            sum = add64(sum, uvec2(word_sum, 0u));
        }
    } else {
        for (uint w = (lo >> 1u) + lid; w < ((hi + 1u) >> 1u); w += 256u) {
            uint rw = ref_words[w];
            uint dw = dis_words[w];
            uint e0 = squared_error(rw, dw, 0u, 65535u, 2u * w, lo, hi);
            uint e1 = squared_error(rw, dw, 16u, 65535u, 2u * w + 1u, lo, hi);
            // A square below 2^32 - 2^7 rounds to at most that: it stays a uint.
            if (pc.round_squares != 0u) {
                e0 = uint(float(e0));
                e1 = uint(float(e1));
            }
            sum = add64(sum, uvec2(e0, 0u));
            sum = add64(sum, uvec2(e1, 0u));
        }
    }
    sum_lo[lid] = sum.x;
    sum_hi[lid] = sum.y;
    barrier();
    if (lid == 0u) {
        uvec2 total = uvec2(0u, 0u);
        for (uint k = 0u; k < 256u; k++) {
            total = add64(total, uvec2(sum_lo[k], sum_hi[k]));
        }
        uint at = 2u * (plane * gl_NumWorkGroups.x + gx);
        partials[at] = total.x;
        partials[at + 1u] = total.y;
    }
}

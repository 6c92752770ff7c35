#version 450
// ssim_convert_quads: ssim_convert's outputs in the CPU drivers' shape,
// four samples a work item (contract: SSIM_CONVERT_QUADS in
// src/features/ssim/gpu.rs).
//
// Mirrors libvmaf picture_copy.c with offset 0, which float_ssim.c and
// float_ms_ssim.c call before compute_ssim / compute_ms_ssim copy the planes
// into their own float buffers: `(float)v` at 8 bits, `(float)v / scaler`
// above. The host passes 1 / scaler, a power of two, so `v * inv_scaler` is
// exactly `v / scaler`. Invocation (x, y) converts samples 4k .. 4k + 3
// of each plane, k = y * ceil(width / 4) + x, in raster order (the output
// is the plane's order too): one word of 8-bit samples or two of 16-bit
// ones, where a sample a work item would load a word per sample (lavapipe
// loads a storage buffer lane by lane: 43-48 -> 27-35 ms over issue 14's
// anchor).
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
layout(std430, set = 0, binding = 2) buffer Out { float pictures[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint bytes_per_sample;
    float inv_scaler;
} pc;

void main() {
    uint n = pc.width * pc.height;
    uint quads = (pc.width + 3u) / 4u;
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    uint i0 = 4u * (y * quads + x);
    if (x >= quads || y >= pc.height || i0 >= n) {
        return;
    }
    // Words w0 (samples i0 ..) and w1 (the second word of 16-bit samples;
    // w0 again at 8 bits), inside the plane's words.
    uint bits = 8u * pc.bytes_per_sample;
    uint first = i0 * pc.bytes_per_sample / 4u;
    uint second = min(first + pc.bytes_per_sample - 1u, (n * pc.bytes_per_sample - 1u) / 4u);
    uint r0 = ref_words[first];
    uint r1 = ref_words[second];
    uint d0 = dis_words[first];
    uint d1 = dis_words[second];
    uint mask = (1u << bits) - 1u;
    for (uint j = 0u; j < 4u; j++) {
        uint at = j * bits;
        uint shift = at & 31u;
        uint r = ((at < 32u ? r0 : r1) >> shift) & mask;
        uint d = ((at < 32u ? d0 : d1) >> shift) & mask;
        if (i0 + j < n) {
            pictures[i0 + j] = float(r) * pc.inv_scaler;
            pictures[n + i0 + j] = float(d) * pc.inv_scaler;
        }
    }
}

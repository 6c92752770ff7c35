#version 450
// ssim_convert: both lumas as floats (contract: SSIM_CONVERT in
// src/features/ssim/gpu.rs).
//
// Mirrors libvmaf picture_copy.c with offset 0, which float_ssim.c and
// float_ms_ssim.c call before compute_ssim / compute_ms_ssim copy the planes
// into their own float buffers: `(float)v` at 8 bits, `(float)v / scaler`
// above. The host passes 1 / scaler, a power of two, so `v * inv_scaler` is
// exactly `v / scaler`. Invocation (x, y) writes pixel (x, y) of the
// reference plane (out[0 .. w*h)) and of the distorted one (out[w*h ..)).
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

// Sample i of a plane of 8- or 16-bit samples packed in little-endian words.
uint sample_at(uint word, uint i) {
    uint shift = pc.bytes_per_sample == 1u ? 2u : 1u;
    uint bits = 8u * pc.bytes_per_sample;
    return (word >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u);
}

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    if (x >= pc.width || y >= pc.height) {
        return;
    }
    uint i = y * pc.width + x;
    uint shift = pc.bytes_per_sample == 1u ? 2u : 1u;
    pictures[i] = float(sample_at(ref_words[i >> shift], i)) * pc.inv_scaler;
    pictures[pc.width * pc.height + i] = float(sample_at(dis_words[i >> shift], i)) * pc.inv_scaler;
}

#version 450
// ssimulacra2_linear_xyb: scale 0's linear RGB and XYB of both pictures, one
// invocation per pixel (contract: LINEAR_XYB in src/features/ssimulacra2/
// gpu.rs; the C dialect is kernels/ssimulacra2.cl).
//
// Mirrors the lusoris fork's ssimulacra2.c `picture_to_linear_rgb` (samples
// times 1 / peak, the matrix, clamped to [0, 1], the sRGB EOTF through the
// fork's 1024-entry table) and `linear_rgb_to_xyb` (opsin matrix, bias, the
// bit-trick cube root of ssimulacra2_math.h, MakePositiveXYB), every f32
// operation in the C's order. The build marks each float operation
// NoContraction. The cube root's two divisions are done in double and
// rounded to float: the quotient of two floats is never a float midpoint,
// so that is the correctly rounded f32 quotient (C's `/`) even where a
// driver's f32 division is not correctly rounded (SPIR-V allows 2.5 ulp).
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
// The EOTF table as a uniform block of vec4s: lavapipe fetches a uniform
// block with one vector gather where it loads a storage buffer lane by lane.
layout(std140, set = 0, binding = 2) uniform Lut { vec4 lut4[256]; };
layout(std430, set = 0, binding = 3) buffer Linear { float lin[]; };
layout(std430, set = 0, binding = 4) buffer Xyb { float xyb[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint chroma_width;
    uint chroma_height;
    uint bytes_per_sample;
    float inv_peak;
    float y_off;
    float y_scale;
    float c_scale;
    float cr_r;
    float cb_g;
    float cr_g;
    float cb_b;
    float m01;
    float m11;
    float m22;
    float cbrt_bias;
} pc;

// Sample i of a picture of 8- or 16-bit samples packed in little-endian words.
uint sample_at(uint which, uint i) {
    uint shift = pc.bytes_per_sample == 1u ? 2u : 1u;
    uint bits = 8u * pc.bytes_per_sample;
    uint word = which == 0u ? ref_words[i >> shift] : dis_words[i >> shift];
    return (word >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u);
}

// read_plane's chroma coordinate: the same, halved, or i * plane / luma.
uint chroma_index(uint i, uint plane, uint luma) {
    uint s;
    if (plane == luma) {
        s = i;
    } else if (plane * 2u == luma) {
        s = i >> 1u;
    } else {
        // i * plane < 2^30 for the sizes the gate takes (32768 at most).
        s = (i * plane) / luma;
    }
    return min(s, plane - 1u);
}

float div_rn(float a, float b) {
    return float(double(a) / double(b));
}

// vmaf_ss2_cbrtf.
float cbrt_ss2(float x) {
    if (x <= 0.0) {
        return 0.0;
    }
    float y = uintBitsToFloat(floatBitsToUint(x) / 3u + 0x2a5137a0u);
    y = (2.0 * y + div_rn(x, y * y)) * 0.333333343;
    y = (2.0 * y + div_rn(x, y * y)) * 0.333333343;
    return y;
}

// linear_rgb_to_xyb at one pixel.
vec3 to_xyb(float r, float g, float b) {
    const float bias = 0.0037930732552754493;
    float l = 0.30 * r + pc.m01 * g + 0.078 * b + bias;
    float m = 0.23 * r + pc.m11 * g + 0.078 * b + bias;
    float s = 0.24342268924547819 * r + 0.20476744424496821 * g + pc.m22 * b + bias;
    l = l < 0.0 ? 0.0 : l;
    m = m < 0.0 ? 0.0 : m;
    s = s < 0.0 ? 0.0 : s;
    float big_l = cbrt_ss2(l) - pc.cbrt_bias;
    float big_m = cbrt_ss2(m) - pc.cbrt_bias;
    float big_s = cbrt_ss2(s) - pc.cbrt_bias;
    float x = 0.5 * (big_l - big_m);
    float y = 0.5 * (big_l + big_m);
    return vec3(x * 14.0 + 0.42, y + 0.01, (big_s - y) + 0.55);
}

float lut(uint i) {
    return lut4[i >> 2u][i & 3u];
}

// vmaf_ss2_srgb_eotf.
float eotf(float x) {
    if (x <= 0.0) {
        return 0.0;
    }
    if (x >= 1.0) {
        return 1.0;
    }
    float idx = x * 1023.0;
    int i = int(idx);
    float frac = idx - float(i);
    float a = lut(uint(i));
    return a + (lut(uint(i) + 1u) - a) * frac;
}

float clamp01(float v) {
    return v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);
}

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_WorkGroupID.y;
    if (x >= pc.width || y >= pc.height) {
        return;
    }
    uint plane = pc.width * pc.height;
    uint i = y * pc.width + x;
    uint c = chroma_index(y, pc.chroma_height, pc.height) * pc.chroma_width + chroma_index(x, pc.chroma_width, pc.width);
    uint u_at = plane + c;
    uint v_at = plane + pc.chroma_width * pc.chroma_height + c;
    for (uint k = 0u; k < 2u; k++) {
        float Y = float(sample_at(k, i)) * pc.inv_peak;
        float U = float(sample_at(k, u_at)) * pc.inv_peak;
        float V = float(sample_at(k, v_at)) * pc.inv_peak;
        float yn = (Y - pc.y_off) * pc.y_scale;
        float un = (U - 0.5) * pc.c_scale;
        float vn = (V - 0.5) * pc.c_scale;
        float r = eotf(clamp01(yn + pc.cr_r * vn));
        float g = eotf(clamp01(yn + pc.cb_g * un + pc.cr_g * vn));
        float b = eotf(clamp01(yn + pc.cb_b * un));
        uint o = 3u * plane * k;
        lin[o + i] = r;
        lin[o + plane + i] = g;
        lin[o + 2u * plane + i] = b;
        vec3 p = to_xyb(r, g, b);
        xyb[o + i] = p.x;
        xyb[o + plane + i] = p.y;
        xyb[o + 2u * plane + i] = p.z;
    }
}

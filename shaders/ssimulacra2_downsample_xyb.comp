#version 450
// ssimulacra2_downsample_xyb: the next scale's linear RGB and XYB of both
// pictures, one invocation per pixel of the next scale (contract:
// DOWNSAMPLE_XYB in src/features/ssimulacra2/gpu.rs).
//
// Mirrors ssimulacra2.c `downsample_2x2` (per output pixel, in f32, 0 plus
// the four inputs of its 2x2 block in row order, coordinates clamped into
// the plane, times 0.25) and `linear_rgb_to_xyb` as in
// ssimulacra2_linear_xyb.comp (the same functions; the build marks each
// float operation NoContraction).
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer LinearIn { float lin_in[]; };
layout(std430, set = 0, binding = 1) buffer LinearOut { float lin_out[]; };
layout(std430, set = 0, binding = 2) buffer Xyb { float xyb[]; };

layout(push_constant) uniform Params {
    uint in_width;
    uint in_height;
    float m01;
    float m11;
    float m22;
    float cbrt_bias;
} pc;

float div_rn(float a, float b) {
    return float(double(a) / double(b));
}

// vmaf_ss2_cbrtf (see ssimulacra2_linear_xyb.comp).
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

void main() {
    uint w = (pc.in_width + 1u) / 2u;
    uint h = (pc.in_height + 1u) / 2u;
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_WorkGroupID.y;
    if (x >= w || y >= h) {
        return;
    }
    uint in_plane = pc.in_width * pc.in_height;
    uint plane = w * h;
    uint i = y * w + x;
    uint x0 = 2u * x;
    uint y0 = 2u * y;
    uint x1 = min(x0 + 1u, pc.in_width - 1u);
    uint y1 = min(y0 + 1u, pc.in_height - 1u);
    for (uint k = 0u; k < 2u; k++) {
        vec3 rgb;
        for (uint c = 0u; c < 3u; c++) {
            uint p = (3u * k + c) * in_plane;
            float sum = 0.0 + lin_in[p + y0 * pc.in_width + x0];
            sum += lin_in[p + y0 * pc.in_width + x1];
            sum += lin_in[p + y1 * pc.in_width + x0];
            sum += lin_in[p + y1 * pc.in_width + x1];
            rgb[c] = sum * 0.25;
            lin_out[(3u * k + c) * plane + i] = rgb[c];
        }
        vec3 o = to_xyb(rgb.x, rgb.y, rgb.z);
        uint base = 3u * plane * k;
        xyb[base + i] = o.x;
        xyb[base + plane + i] = o.y;
        xyb[base + 2u * plane + i] = o.z;
    }
}

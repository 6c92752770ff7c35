#version 450
// float_vif_vertical: the vertical passes of one float VIF scale (contract:
// FLOAT_VIF_VERTICAL in src/features/vif/gpu_float.rs; the C dialect is
// kernels/float_vif.cl). Each sum starts at 0 and adds tap * value in tap
// order, in f32, as vif_tools.c's vif_filter1d_s, _sq_s and _xy_s do; the
// build marks every float multiply and add NoContraction.
layout(local_size_x = 64, local_size_y = 4, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
layout(std430, set = 0, binding = 2) readonly buffer Taps { float taps[]; };
layout(std430, set = 0, binding = 3) buffer Vsum { float vsum[]; };
layout(std430, set = 0, binding = 4) buffer Vsub { float vsub[]; };

layout(push_constant) uniform Params {
    uint w;
    uint h;
    uint format;
    float inv;
    uint tap0;
    uint width;
    uint sub_tap0;
    uint sub_width;
} pc;

// vif_tools.c's border rule, clamped after (see kernels/float_vif.cl).
uint mirror(int i, int n) {
    int m = i;
    if (i < 0) {
        m = -i;
    } else if (i >= n) {
        m = 2 * n - i - 2;
    }
    return uint(clamp(m, 0, n - 1));
}

// picture_copy's v / scaler - 128 (v * inv: the scaler is a power of two)
// from 1-byte (format 0) or u16 (format 1) samples, or an f32 picture.
float sample_ref(uint i) {
    if (pc.format == 0u) {
        return float((ref_words[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) - 128.0;
    }
    if (pc.format == 1u) {
        return float((ref_words[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu) * pc.inv - 128.0;
    }
    return uintBitsToFloat(ref_words[i]);
}

float sample_dis(uint i) {
    if (pc.format == 0u) {
        return float((dis_words[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) - 128.0;
    }
    if (pc.format == 1u) {
        return float((dis_words[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu) * pc.inv - 128.0;
    }
    return uintBitsToFloat(dis_words[i]);
}

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    if (x >= pc.w || y >= pc.h) {
        return;
    }
    uint plane = pc.w * pc.h;
    int half_width = int(pc.width / 2u);
    float mu1 = 0.0;
    float mu2 = 0.0;
    float xx = 0.0;
    float yy = 0.0;
    float xy = 0.0;
    for (uint k = 0u; k < pc.width; k++) {
        uint i = mirror(int(y) - half_width + int(k), int(pc.h)) * pc.w + x;
        float c = taps[pc.tap0 + k];
        float a = sample_ref(i);
        float b = sample_dis(i);
        mu1 = mu1 + c * a;
        mu2 = mu2 + c * b;
        xx = xx + c * (a * a);
        yy = yy + c * (b * b);
        xy = xy + c * (a * b);
    }
    uint o = y * pc.w + x;
    vsum[o] = mu1;
    vsum[plane + o] = mu2;
    vsum[2u * plane + o] = xx;
    vsum[3u * plane + o] = yy;
    vsum[4u * plane + o] = xy;
    if (pc.sub_width > 0u && (y & 1u) == 0u && y / 2u < pc.h / 2u) {
        int sub_half = int(pc.sub_width / 2u);
        float sr = 0.0;
        float sd = 0.0;
        for (uint k = 0u; k < pc.sub_width; k++) {
            uint i = mirror(int(y) - sub_half + int(k), int(pc.h)) * pc.w + x;
            float c = taps[pc.sub_tap0 + k];
            sr = sr + c * sample_ref(i);
            sd = sd + c * sample_dis(i);
        }
        vsub[(y / 2u) * pc.w + x] = sr;
        vsub[pc.w * (pc.h / 2u) + (y / 2u) * pc.w + x] = sd;
    }
}

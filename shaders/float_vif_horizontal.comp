#version 450
// float_vif_horizontal: the horizontal passes and vif_statistic_s's
// per-pixel (num_val, den_val) of one float VIF scale (contract:
// FLOAT_VIF_HORIZONTAL in src/features/vif/gpu_float.rs; the C dialect is
// kernels/float_vif.cl). Every operation is vif_tools.c's, in its order and
// precision: f32, and double where libvmaf mixes in vif_sigma_nsq; the
// build marks every float multiply and add NoContraction.
layout(local_size_x = 64, local_size_y = 4, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Vsum { float vsum[]; };
layout(std430, set = 0, binding = 1) readonly buffer Vsub { float vsub[]; };
layout(std430, set = 0, binding = 2) readonly buffer Taps { float taps[]; };
layout(std430, set = 0, binding = 3) readonly buffer Dparams { double dparams[]; };
layout(std430, set = 0, binding = 4) buffer Stat { float stat[]; };
layout(std430, set = 0, binding = 5) buffer NextRef { float next_ref[]; };
layout(std430, set = 0, binding = 6) buffer NextDis { float next_dis[]; };

layout(push_constant) uniform Params {
    uint w;
    uint h;
    uint tap0;
    uint width;
    uint sub_tap0;
    uint sub_width;
    float gain_limit;
    float sigma_max_inv;
} pc;

uint mirror(int i, int n) {
    int m = i;
    if (i < 0) {
        m = -i;
    } else if (i >= n) {
        m = 2 * n - i - 2;
    }
    return uint(clamp(m, 0, n - 1));
}

// vif_tools.c log2f_approx, its coefficients as constants.
#include "float_vif_log2.glsl"

// f32 division correctly rounded on every device: in double, then rounded
// to f32 (innocuous double rounding: 53 >= 2 * 24 + 2 bits), where Vulkan
// lets a device's own f32 division be approximate (kernels/float_vif.cl).
float div_rn(float a, float b) {
    return float(double(a) / double(b));
}

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    if (x >= pc.w || y >= pc.h) {
        return;
    }
    uint plane = pc.w * pc.h;
    int half_width = int(pc.width / 2u);
    float f0 = 0.0;
    float f1 = 0.0;
    float f2 = 0.0;
    float f3 = 0.0;
    float f4 = 0.0;
    for (uint k = 0u; k < pc.width; k++) {
        uint i = y * pc.w + mirror(int(x) - half_width + int(k), int(pc.w));
        float c = taps[pc.tap0 + k];
        f0 = f0 + c * vsum[i];
        f1 = f1 + c * vsum[plane + i];
        f2 = f2 + c * vsum[2u * plane + i];
        f3 = f3 + c * vsum[3u * plane + i];
        f4 = f4 + c * vsum[4u * plane + i];
    }
    double sigma_nsq = dparams[0];
    float eps = 1.0e-10;
    float sigma1_sq = f2 - f0 * f0;
    float sigma2_sq = f3 - f1 * f1;
    float sigma12 = f4 - f0 * f1;
    sigma1_sq = sigma1_sq > 0.0 ? sigma1_sq : 0.0;
    sigma2_sq = sigma2_sq > 0.0 ? sigma2_sq : 0.0;
    float g = div_rn(sigma12, sigma1_sq + eps);
    float sv_sq = sigma2_sq - g * sigma12;
    if (sigma1_sq < eps) {
        g = 0.0;
        sv_sq = sigma2_sq;
        sigma1_sq = 0.0;
    }
    if (sigma2_sq < eps) {
        g = 0.0;
        sv_sq = 0.0;
    }
    if (g < 0.0) {
        sv_sq = sigma2_sq;
        g = 0.0;
    }
    sv_sq = sv_sq > eps ? sv_sq : eps;
    g = g < pc.gain_limit ? g : pc.gain_limit;
    double one = double(1.0);
    double num_arg = one + double(g * g * sigma1_sq) / (double(sv_sq) + sigma_nsq);
    double den_arg = one + double(sigma1_sq) / sigma_nsq;
    float num_val = log2_approx(float(num_arg));
    float den_val = log2_approx(float(den_arg));
    if (sigma12 < 0.0) {
        num_val = 0.0;
    }
    if (double(sigma1_sq) < sigma_nsq) {
        num_val = 1.0 - sigma2_sq * pc.sigma_max_inv;
        den_val = 1.0;
    }
    stat[y * pc.w + x] = num_val;
    stat[plane + y * pc.w + x] = den_val;
    if (pc.sub_width > 0u && ((x | y) & 1u) == 0u && x / 2u < pc.w / 2u && y / 2u < pc.h / 2u) {
        int sub_half = int(pc.sub_width / 2u);
        uint sub_plane = pc.w * (pc.h / 2u);
        float sr = 0.0;
        float sd = 0.0;
        for (uint k = 0u; k < pc.sub_width; k++) {
            uint i = (y / 2u) * pc.w + mirror(int(x) - sub_half + int(k), int(pc.w));
            float c = taps[pc.sub_tap0 + k];
            sr = sr + c * vsub[i];
            sd = sd + c * vsub[sub_plane + i];
        }
        next_ref[(y / 2u) * (pc.w / 2u) + x / 2u] = sr;
        next_dis[(y / 2u) * (pc.w / 2u) + x / 2u] = sd;
    }
}

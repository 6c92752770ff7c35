#version 450
// float_vif_horizontal_strip: FLOAT_VIF_HORIZONTAL's contract in the
// shape for CPU drivers (src/features/vif/gpu_float.rs; the C dialect is
// kernels/float_vif.cl). Item (t, y) makes pixels x0 .. x0 + 7 (x0 = 8 t)
// of row y: each sample of the row is loaded once into a window of eight
// registers that slides one column per tap, so eight outputs take 7 + width
// loads a plane where an item per pixel takes 8 width (lavapipe loads a
// storage buffer lane by lane: the loads are its cost). Each output still
// adds its taps from 0 in tap order, in f32; the statistic is the
// per-pixel kernel's, operation for operation; the build marks every
// float multiply and add NoContraction.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

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

#include "float_vif_log2.glsl"

float div_rn(float a, float b) {
    return float(double(a) / double(b));
}

// vif_statistic_s at pixel (x, y) from its five filtered sums (the
// per-pixel kernel's statistic, unchanged).
void statistic(uint x, uint y, double sigma_nsq, float f0, float f1, float f2, float f3, float f4) {
    if (x >= pc.w) {
        return;
    }
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
    stat[pc.w * pc.h + y * pc.w + x] = den_val;
}

void main() {
    uint x0 = gl_GlobalInvocationID.x * 8u;
    uint y = gl_GlobalInvocationID.y;
    if (x0 >= pc.w || y >= pc.h) {
        return;
    }
    uint plane = pc.w * pc.h;
    int w = int(pc.w);
    int p0 = int(x0) - int(pc.width / 2u);
    uint row = y * pc.w;
    // Window lo/hi (columns p0 + k + 0..3 and + 4..7 at tap k) and sums,
    // per plane (mu1, mu2, xx, yy, xy).
    vec4 lo0, lo1, lo2, lo3, lo4, hi0, hi1, hi2, hi3, hi4;
    vec4 a0 = vec4(0.0), a1 = vec4(0.0), a2 = vec4(0.0), a3 = vec4(0.0), a4 = vec4(0.0);
    vec4 b0 = vec4(0.0), b1 = vec4(0.0), b2 = vec4(0.0), b3 = vec4(0.0), b4 = vec4(0.0);
    uint i0 = row + mirror(p0, w), i1 = row + mirror(p0 + 1, w), i2 = row + mirror(p0 + 2, w), i3 = row + mirror(p0 + 3, w);
    uint i4 = row + mirror(p0 + 4, w), i5 = row + mirror(p0 + 5, w), i6 = row + mirror(p0 + 6, w);
    lo0 = vec4(vsum[i0], vsum[i1], vsum[i2], vsum[i3]);
    hi0 = vec4(vsum[i4], vsum[i5], vsum[i6], 0.0);
    lo1 = vec4(vsum[plane + i0], vsum[plane + i1], vsum[plane + i2], vsum[plane + i3]);
    hi1 = vec4(vsum[plane + i4], vsum[plane + i5], vsum[plane + i6], 0.0);
    lo2 = vec4(vsum[2u * plane + i0], vsum[2u * plane + i1], vsum[2u * plane + i2], vsum[2u * plane + i3]);
    hi2 = vec4(vsum[2u * plane + i4], vsum[2u * plane + i5], vsum[2u * plane + i6], 0.0);
    lo3 = vec4(vsum[3u * plane + i0], vsum[3u * plane + i1], vsum[3u * plane + i2], vsum[3u * plane + i3]);
    hi3 = vec4(vsum[3u * plane + i4], vsum[3u * plane + i5], vsum[3u * plane + i6], 0.0);
    lo4 = vec4(vsum[4u * plane + i0], vsum[4u * plane + i1], vsum[4u * plane + i2], vsum[4u * plane + i3]);
    hi4 = vec4(vsum[4u * plane + i4], vsum[4u * plane + i5], vsum[4u * plane + i6], 0.0);
    for (uint k = 0u; k < pc.width; k++) {
        uint i = row + mirror(p0 + int(k) + 7, w);
        hi0.w = vsum[i];
        hi1.w = vsum[plane + i];
        hi2.w = vsum[2u * plane + i];
        hi3.w = vsum[3u * plane + i];
        hi4.w = vsum[4u * plane + i];
        vec4 c = vec4(taps[pc.tap0 + k]);
        a0 = a0 + c * lo0;
        b0 = b0 + c * hi0;
        a1 = a1 + c * lo1;
        b1 = b1 + c * hi1;
        a2 = a2 + c * lo2;
        b2 = b2 + c * hi2;
        a3 = a3 + c * lo3;
        b3 = b3 + c * hi3;
        a4 = a4 + c * lo4;
        b4 = b4 + c * hi4;
        lo0 = vec4(lo0.yzw, hi0.x);
        hi0 = vec4(hi0.yzw, 0.0);
        lo1 = vec4(lo1.yzw, hi1.x);
        hi1 = vec4(hi1.yzw, 0.0);
        lo2 = vec4(lo2.yzw, hi2.x);
        hi2 = vec4(hi2.yzw, 0.0);
        lo3 = vec4(lo3.yzw, hi3.x);
        hi3 = vec4(hi3.yzw, 0.0);
        lo4 = vec4(lo4.yzw, hi4.x);
        hi4 = vec4(hi4.yzw, 0.0);
    }
    double sigma_nsq = dparams[0];
    statistic(x0, y, sigma_nsq, a0.x, a1.x, a2.x, a3.x, a4.x);
    statistic(x0 + 1u, y, sigma_nsq, a0.y, a1.y, a2.y, a3.y, a4.y);
    statistic(x0 + 2u, y, sigma_nsq, a0.z, a1.z, a2.z, a3.z, a4.z);
    statistic(x0 + 3u, y, sigma_nsq, a0.w, a1.w, a2.w, a3.w, a4.w);
    statistic(x0 + 4u, y, sigma_nsq, b0.x, b1.x, b2.x, b3.x, b4.x);
    statistic(x0 + 5u, y, sigma_nsq, b0.y, b1.y, b2.y, b3.y, b4.y);
    statistic(x0 + 6u, y, sigma_nsq, b0.z, b1.z, b2.z, b3.z, b4.z);
    statistic(x0 + 7u, y, sigma_nsq, b0.w, b1.w, b2.w, b3.w, b4.w);
    if (pc.sub_width > 0u && (y & 1u) == 0u && y / 2u < pc.h / 2u) {
        // The next scale's pixels x0 / 2 .. x0 / 2 + 3: the same window
        // over row y / 2 of vsub, its even columns kept.
        uint sub_plane = pc.w * (pc.h / 2u);
        uint srow = (y / 2u) * pc.w;
        int s0 = int(x0) - int(pc.sub_width / 2u);
        uint j0 = srow + mirror(s0, w), j1 = srow + mirror(s0 + 1, w), j2 = srow + mirror(s0 + 2, w);
        uint j3 = srow + mirror(s0 + 3, w), j4 = srow + mirror(s0 + 4, w), j5 = srow + mirror(s0 + 5, w);
        uint j6 = srow + mirror(s0 + 6, w);
        vec4 rlo = vec4(vsub[j0], vsub[j1], vsub[j2], vsub[j3]);
        vec4 rhi = vec4(vsub[j4], vsub[j5], vsub[j6], 0.0);
        vec4 dlo = vec4(vsub[sub_plane + j0], vsub[sub_plane + j1], vsub[sub_plane + j2], vsub[sub_plane + j3]);
        vec4 dhi = vec4(vsub[sub_plane + j4], vsub[sub_plane + j5], vsub[sub_plane + j6], 0.0);
        vec4 ra = vec4(0.0), rb = vec4(0.0), da = vec4(0.0), db = vec4(0.0);
        for (uint k = 0u; k < pc.sub_width; k++) {
            uint j = srow + mirror(s0 + int(k) + 7, w);
            rhi.w = vsub[j];
            dhi.w = vsub[sub_plane + j];
            vec4 c = vec4(taps[pc.sub_tap0 + k]);
            ra = ra + c * rlo;
            rb = rb + c * rhi;
            da = da + c * dlo;
            db = db + c * dhi;
            rlo = vec4(rlo.yzw, rhi.x);
            rhi = vec4(rhi.yzw, 0.0);
            dlo = vec4(dlo.yzw, dhi.x);
            dhi = vec4(dhi.yzw, 0.0);
        }
        uint half_w = pc.w / 2u;
        uint n = (y / 2u) * half_w + x0 / 2u;
        if (x0 / 2u < half_w) {
            next_ref[n] = ra.x;
            next_dis[n] = da.x;
        }
        if (x0 / 2u + 1u < half_w) {
            next_ref[n + 1u] = ra.z;
            next_dis[n + 1u] = da.z;
        }
        if (x0 / 2u + 2u < half_w) {
            next_ref[n + 2u] = rb.x;
            next_dis[n + 2u] = db.x;
        }
        if (x0 / 2u + 3u < half_w) {
            next_ref[n + 3u] = rb.z;
            next_dis[n + 3u] = db.z;
        }
    }
}

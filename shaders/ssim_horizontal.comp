#version 450
// ssim_horizontal: the horizontal pass of libvmaf's Gaussian over the five
// pictures _iqa_ssim filters (contract: SSIM_HORIZONTAL in
// src/features/ssim/gpu.rs).
//
// Mirrors iqa/convolve.c `_iqa_convolve` (IQA_CONVOLVE_1D), horizontal
// loop: for row y and map column x (x < width - 10), `sum += double(img[y][x
// + t] * kernel_h[t])` for t = 0..11 in order, in double, stored as float.
// The five pictures are the reference r, the distorted d, and r * r, d * d,
// r * d, each product rounded to float (ssim_tools.c stores them so before
// filtering). Output plane p (of 5) holds height rows of width - 10.
layout(local_size_x = 64, local_size_y = 4, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Pictures { float pictures[]; };
layout(std430, set = 0, binding = 1) readonly buffer Taps { float taps[]; };
layout(std430, set = 0, binding = 2) buffer Out { float planes[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    // Outputs per invocation: x = strip * gid.x + j, j < strip, left to
    // right, each input read once into a sliding window (the CPU drivers'
    // shape; 1 on GPUs). Every output's operations are the same either way.
    uint strip;
} pc;

void main() {
    uint y = gl_GlobalInvocationID.y;
    uint mw = pc.width - 10u;
    uint x0 = gl_GlobalInvocationID.x * pc.strip;
    if (x0 >= mw || y >= pc.height) {
        return;
    }
    uint x1 = min(x0 + pc.strip, mw);
    float k[11];
    float r[11];
    float d[11];
    for (uint t = 0u; t < 11u; t++) {
        k[t] = taps[t];
    }
    uint r0 = y * pc.width;
    uint d0 = pc.width * pc.height + r0;
    // Slots 1..10 hold columns x0..x0+9; each step shifts and reads one.
    for (uint t = 0u; t < 10u; t++) {
        r[t + 1u] = pictures[r0 + x0 + t];
        d[t + 1u] = pictures[d0 + x0 + t];
    }
    uint plane = mw * pc.height;
    for (uint x = x0; x < x1; x++) {
        for (uint t = 0u; t < 10u; t++) {
            r[t] = r[t + 1u];
            d[t] = d[t + 1u];
        }
        r[10] = pictures[r0 + x + 10u];
        d[10] = pictures[d0 + x + 10u];
        double s0 = double(0.0);
        double s1 = double(0.0);
        double s2 = double(0.0);
        double s3 = double(0.0);
        double s4 = double(0.0);
        for (uint t = 0u; t < 11u; t++) {
            float rr = r[t] * r[t];
            float dd = d[t] * d[t];
            float rd = r[t] * d[t];
            float p0 = r[t] * k[t];
            float p1 = d[t] * k[t];
            float p2 = rr * k[t];
            float p3 = dd * k[t];
            float p4 = rd * k[t];
            s0 += double(p0);
            s1 += double(p1);
            s2 += double(p2);
            s3 += double(p3);
            s4 += double(p4);
        }
        uint o = y * mw + x;
        planes[o] = float(s0);
        planes[plane + o] = float(s1);
        planes[2u * plane + o] = float(s2);
        planes[3u * plane + o] = float(s3);
        planes[4u * plane + o] = float(s4);
    }
}

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
} pc;

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    uint mw = pc.width - 10u;
    if (x >= mw || y >= pc.height) {
        return;
    }
    uint r0 = y * pc.width + x;
    uint d0 = pc.width * pc.height + r0;
    double s0 = double(0.0);
    double s1 = double(0.0);
    double s2 = double(0.0);
    double s3 = double(0.0);
    double s4 = double(0.0);
    for (uint t = 0u; t < 11u; t++) {
        float k = taps[t];
        float r = pictures[r0 + t];
        float d = pictures[d0 + t];
        float rr = r * r;
        float dd = d * d;
        float rd = r * d;
        float p0 = r * k;
        float p1 = d * k;
        float p2 = rr * k;
        float p3 = dd * k;
        float p4 = rd * k;
        s0 += double(p0);
        s1 += double(p1);
        s2 += double(p2);
        s3 += double(p3);
        s4 += double(p4);
    }
    uint plane = mw * pc.height;
    uint o = y * mw + x;
    planes[o] = float(s0);
    planes[plane + o] = float(s1);
    planes[2u * plane + o] = float(s2);
    planes[3u * plane + o] = float(s3);
    planes[4u * plane + o] = float(s4);
}

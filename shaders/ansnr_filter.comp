#version 450
// ansnr_filter: the reference through the 3x3 and the distorted through the
// 5x5 filter of float_ansnr (contract: ANSNR_FILTER in src/features/ansnr.rs).
//
// Mirrors libvmaf ansnr_tools.c `ansnr_filter2d_s` (and float_ansnr.c's
// picture_copy to `v / scaler - 128`): for each filter row the products
// tap * sample are summed in float from left to right, then the row sums
// from top to bottom, with ansnr_tools.c's mirror at the borders. The build
// marks every float multiply and add NoContraction, so no driver may fuse
// them into an FMA the C code does not do.
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
// 9 reference taps, then 25 distorted taps.
layout(std430, set = 0, binding = 2) readonly buffer Taps { float taps[]; };
layout(std430, set = 0, binding = 3) buffer RefFiltered { float ref_filtered[]; };
layout(std430, set = 0, binding = 4) buffer DisFiltered { float dis_filtered[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint bytes_per_sample;
    float scaler;
} pc;

uint ref_sample(uint i) {
    if (pc.bytes_per_sample == 1u) {
        return (ref_words[i >> 2u] >> ((i & 3u) * 8u)) & 255u;
    }
    return (ref_words[i >> 1u] >> ((i & 1u) * 16u)) & 65535u;
}

uint dis_sample(uint i) {
    if (pc.bytes_per_sample == 1u) {
        return (dis_words[i >> 2u] >> ((i & 3u) * 8u)) & 255u;
    }
    return (dis_words[i >> 1u] >> ((i & 1u) * 16u)) & 65535u;
}

// ansnr_tools.c: -i above the top (no edge repeat), 2n - i - 1 below the
// bottom (edge repeat).
uint mirror(int i, int n) {
    if (i < 0) {
        return uint(-i);
    }
    if (i >= n) {
        return uint(2 * n - i - 1);
    }
    return uint(i);
}

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    if (x >= pc.width || y >= pc.height) {
        return;
    }
    int w = int(pc.width);
    int h = int(pc.height);

    // The 3x3 reference filter.
    float accum = 0.0;
    for (int fi = 0; fi < 3; fi++) {
        uint row = mirror(int(y) - 1 + fi, h) * pc.width;
        float inner = 0.0;
        for (int fj = 0; fj < 3; fj++) {
            uint col = mirror(int(x) - 1 + fj, w);
            // picture_copy: exact, the scaler is a power of two.
            float v = float(ref_sample(row + col)) / pc.scaler - 128.0;
            inner += taps[fi * 3 + fj] * v;
        }
        accum += inner;
    }
    ref_filtered[y * pc.width + x] = accum;

    // The 5x5 distorted filter.
    accum = 0.0;
    for (int fi = 0; fi < 5; fi++) {
        uint row = mirror(int(y) - 2 + fi, h) * pc.width;
        float inner = 0.0;
        for (int fj = 0; fj < 5; fj++) {
            uint col = mirror(int(x) - 2 + fj, w);
            float v = float(dis_sample(row + col)) / pc.scaler - 128.0;
            inner += taps[9 + fi * 5 + fj] * v;
        }
        accum += inner;
    }
    dis_filtered[y * pc.width + x] = accum;
}
